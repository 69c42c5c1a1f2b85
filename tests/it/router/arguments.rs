//! The argument-parsing fuzz: random, deep and huge cases for every
//! registered tool, each checked against what the router must answer.

use super::*;

// --- cases -------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Class {
    /// Every field of the right JSON type, contents random.
    Shaped,
    /// One field of a wrong type, out of range, or not in its enum.
    WrongType,
    /// One required field left out.
    Missing,
    /// One field no tool knows.
    Unknown,
    /// Not an object at the top.
    NotObject,
    /// `null` at the top (counts as `{}`).
    Null,
    /// Several mutations at once.
    Multi,
    /// A random object.
    Junk,
    /// A write/exec tool called from the read-only surface.
    Surface,
    /// A name no tool has.
    Unregistered,
    /// A 1 MiB string somewhere.
    Huge,
    /// 10,000 levels of arrays or objects somewhere.
    Deep,
}

pub(super) enum Expect {
    /// Ok, or an error naming one of the tool's fields.
    Shaped,
    /// An error whose path starts with this field.
    Field(String),
    /// An error saying this field is missing.
    Missing(Vec<String>),
    /// An error quoting this unknown field.
    Unknown(String),
    /// An error saying an object is expected.
    NotObject,
    /// An error naming one of these.
    AnyOf(Vec<String>),
    /// Ok, or an error naming one of these.
    OkOrAnyOf(Vec<String>),
    /// Refused by the surface.
    Surface,
    /// Refused as an unknown tool.
    Unregistered,
}

pub(super) struct Case {
    pub(super) tool: String,
    pub(super) class: Class,
    pub(super) surface: Surface,
    pub(super) args: Value,
    pub(super) expect: Expect,
}

pub(super) fn case(tool: &Tool, class: Class, args: Value, expect: Expect) -> Case {
    Case { tool: tool.name.clone(), class, surface: Surface::Full, args, expect }
}

pub(super) fn random_case(rng: &mut Rng, tools: &[Tool]) -> Case {
    let tool = rng.pick(tools);
    let obj = &tool.obj;
    let mut base = valid_object(rng, obj);
    match rng.below(100) {
        0..30 => case(tool, Class::Shaped, Value::Object(base), Expect::Shaped),
        30..55 if !obj.props.is_empty() => {
            let (name, field) = rng.pick(&obj.props).clone();
            base.insert(name.clone(), wrong(rng, &field));
            case(tool, Class::WrongType, Value::Object(base), Expect::Field(name))
        }
        55..63 if !obj.required.is_empty() => {
            let required: Vec<&String> = obj.required.iter().collect();
            let gone = rng.pick(&required).to_string();
            base.remove(&gone);
            case(tool, Class::Missing, Value::Object(base), Expect::Missing(vec![gone]))
        }
        63..73 => {
            let key = unknown_key(rng, obj);
            base.insert(key.clone(), any_present_value(rng, 2));
            case(tool, Class::Unknown, Value::Object(base), Expect::Unknown(key))
        }
        73..80 => {
            let top = match rng.below(5) {
                0 => Value::Bool(rng.one_in(2)),
                1 => any_number(rng),
                2 => Value::String(fuzz_string(rng)),
                3 => Value::Array((0..rng.below(4)).map(|_| any_value(rng, 2)).collect()),
                _ => Value::Array(vec![Value::Object(base)]),
            };
            case(tool, Class::NotObject, top, Expect::NotObject)
        }
        80..82 => {
            let expect = if obj.required.is_empty() {
                Expect::Shaped
            } else {
                Expect::Missing(obj.required.iter().cloned().collect())
            };
            case(tool, Class::Null, Value::Null, expect)
        }
        82..92 if !obj.props.is_empty() => {
            let mut named = Vec::new();
            for _ in 0..2 + rng.below(3) {
                match rng.below(3) {
                    0 => {
                        let (name, field) = rng.pick(&obj.props).clone();
                        base.insert(name.clone(), wrong(rng, &field));
                        named.push(name);
                    }
                    1 if !obj.required.is_empty() => {
                        let required: Vec<&String> = obj.required.iter().collect();
                        let gone = rng.pick(&required).to_string();
                        base.remove(&gone);
                        named.push(gone);
                    }
                    _ => {
                        let key = unknown_key(rng, obj);
                        base.insert(key.clone(), any_present_value(rng, 1));
                        named.push(key);
                    }
                }
            }
            case(tool, Class::Multi, Value::Object(base), Expect::AnyOf(named))
        }
        92..96 => {
            let junk: Map<String, Value> =
                (0..rng.below(6)).map(|_| (fuzz_string(rng), any_value(rng, 3))).collect();
            let mut named: Vec<String> = junk.keys().cloned().collect();
            named.extend(tool.names.iter().cloned());
            case(tool, Class::Junk, Value::Object(junk), Expect::OkOrAnyOf(named))
        }
        96..99 => {
            let writers: Vec<&Tool> = tools.iter().filter(|t| t.level != Level::Read).collect();
            let tool = rng.pick(&writers);
            let args =
                if rng.one_in(2) { Value::Object(valid_object(rng, &tool.obj)) } else { any_value(rng, 3) };
            Case { surface: Surface::ReadOnly, ..case(tool, Class::Surface, args, Expect::Surface) }
        }
        _ => {
            let mut name = fuzz_string(rng);
            if tools.iter().any(|t| t.name == name) {
                name.push('!');
            }
            Case {
                tool: name,
                class: Class::Unregistered,
                surface: Surface::Full,
                args: any_value(rng, 2),
                expect: Expect::Unregistered,
            }
        }
    }
}

/// Deep values in every place of every tool: at the top, as each field,
/// inside an array field, under an unknown key; plus some at 100,000 levels.
pub(super) fn deep_cases(rng: &mut Rng, tools: &[Tool]) -> Vec<Case> {
    let mut out = Vec::new();
    for tool in tools {
        out.push(case(tool, Class::Deep, deep_array(DEEP), Expect::NotObject));
        for (name, _) in &tool.obj.props {
            for value in [deep_array(DEEP), deep_object(DEEP)] {
                let mut args = valid_object(rng, &tool.obj);
                args.insert(name.clone(), value);
                out.push(case(tool, Class::Deep, Value::Object(args), Expect::Field(name.clone())));
            }
        }
        let key = unknown_key(rng, &tool.obj);
        let mut args = valid_object(rng, &tool.obj);
        args.insert(key.clone(), deep_object(DEEP));
        out.push(case(tool, Class::Deep, Value::Object(args), Expect::AnyOf(vec![key])));
        let mut args = Map::new();
        args.insert("a".into(), deep_object(DEEP * 10));
        out.push(case(tool, Class::Deep, Value::Object(args), Expect::AnyOf(vec!["a".into()])));
    }
    out
}

/// A 1 MiB string in every string field of every tool, as an unknown
/// key, and as the whole arguments.
pub(super) fn huge_cases(rng: &mut Rng, tools: &[Tool]) -> Vec<Case> {
    let mut out = Vec::new();
    for tool in tools {
        for (name, field) in &tool.obj.props {
            if !field.has(|s| matches!(s, Shape::Str)) {
                continue;
            }
            for _ in 0..3 {
                let mut args = valid_object(rng, &tool.obj);
                args.insert(name.clone(), Value::String(huge_string(rng)));
                out.push(case(tool, Class::Huge, Value::Object(args), Expect::Shaped));
            }
        }
        let key = huge_string(rng);
        let mut args = valid_object(rng, &tool.obj);
        args.insert(key.clone(), json!(1));
        out.push(case(tool, Class::Huge, Value::Object(args), Expect::Unknown(key)));
        out.push(case(tool, Class::Huge, Value::String(huge_string(rng)), Expect::NotObject));
    }
    out
}

pub(super) fn mentions_field(text: &str, field: &str) -> bool {
    // A required field given `null` reads as left out (null is absent).
    ["`", "[", "."].iter().any(|end| text.contains(&format!("argument `{field}{end}")))
        || text.contains(&format!("missing field `{field}`"))
}

/// `Ok` if `result` is what `expect` allows; otherwise why not.
pub(super) fn verify(
    expect: &Expect,
    tool: &str,
    names: Option<&BTreeSet<String>>,
    result: &Result<(), ToolResult>,
) -> Result<(), String> {
    let err = match (result, expect) {
        (Ok(()), Expect::Shaped | Expect::OkOrAnyOf(_)) => return Ok(()),
        (Ok(()), _) => return Err("accepted, but it should have been refused".into()),
        (Err(e), _) => e,
    };
    if !err.is_error {
        return Err("refused with a result that is not an error".into());
    }
    let text = err.text.as_str();
    let ok = match expect {
        Expect::Shaped => names.is_some_and(|names| names.iter().any(|n| text.contains(&format!("`{n}")))),
        Expect::Field(f) => mentions_field(text, f),
        Expect::Missing(fields) => fields.iter().any(|f| text.contains(&format!("missing field `{f}`"))),
        Expect::Unknown(k) => text.contains(&format!("unknown field `{k}`")),
        Expect::NotObject => text.contains("must be a JSON object"),
        Expect::AnyOf(names) | Expect::OkOrAnyOf(names) => {
            names.iter().any(|n| text.contains(&format!("`{n}")))
        }
        Expect::Surface => text.contains("read-only surface") && text.contains(&format!("`{tool}`")),
        Expect::Unregistered => text.contains("unknown tool"),
    };
    if ok { Ok(()) } else { Err("the error does not name what is wrong".into()) }
}

/// A bounded rendering of a value for failure messages (never recurses
/// past a few levels, so deep values are safe).
pub(super) fn summary(v: &Value) -> String {
    fn go(v: &Value, depth: usize, out: &mut String) {
        if out.len() > 300 {
            return;
        }
        match v {
            Value::Array(items) if depth > 3 => out.push_str(&format!("[…{}]", items.len())),
            Value::Object(map) if depth > 3 => out.push_str(&format!("{{…{}}}", map.len())),
            Value::Array(items) => {
                out.push('[');
                for item in items.iter().take(4) {
                    go(item, depth + 1, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (k, item) in map.iter().take(6) {
                    out.push_str(&format!("{:?}:", clip(k)));
                    go(item, depth + 1, out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::String(s) => out.push_str(&format!("{:?}", clip(s))),
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    go(v, 0, &mut out);
    out
}

pub(super) fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= 60 { s.to_string() } else { format!("{}…({n} chars)", s.chars().take(60).collect::<String>()) }
}

#[derive(Default)]
pub(super) struct Stats {
    pub(super) cases: usize,
    pub(super) errors: usize,
    pub(super) panics: usize,
    pub(super) by_tool: BTreeMap<String, (usize, usize)>,
    pub(super) by_class: BTreeMap<Class, (usize, usize)>,
    pub(super) failures: Vec<String>,
    pub(super) failed: usize,
}

impl Stats {
    pub(super) fn record(
        &mut self,
        n: usize,
        c: &Case,
        tool: Option<&Tool>,
        result: &Result<(), ToolResult>,
        seed: u64,
    ) {
        self.cases += 1;
        let is_err = result.is_err();
        self.errors += is_err as usize;
        let key = if tool.is_some() { c.tool.clone() } else { "(unregistered)".into() };
        let t = self.by_tool.entry(key).or_default();
        t.0 += 1;
        t.1 += is_err as usize;
        let k = self.by_class.entry(c.class).or_default();
        k.0 += 1;
        k.1 += is_err as usize;
        if let Err(e) = result
            && e.text.contains("the runtime is not running")
        {
            self.panics += 1;
        }
        if let Err(why) = verify(&c.expect, &c.tool, tool.map(|t| &t.names), result) {
            self.failed += 1;
            if self.failures.len() < 20 {
                let text = result.as_ref().err().map(|e| clip(&e.text)).unwrap_or_default();
                self.failures.push(format!(
                    "seed {seed} case {n}: {} {:?} ({:?}): {why}\n  args: {}\n  text: {text}",
                    clip(&c.tool),
                    c.class,
                    c.surface,
                    summary(&c.args)
                ));
            }
        }
    }
}

pub(super) async fn run_cases(rt: &Runtime, tools: &[Tool], cases: Vec<Case>, stats: &mut Stats, seed: u64) {
    let mut described: Vec<(usize, Case)> = Vec::with_capacity(cases.len());
    let first = stats.cases;
    let mut jobs = Vec::with_capacity(cases.len());
    for (i, mut c) in cases.into_iter().enumerate() {
        let args = std::mem::take(&mut c.args);
        jobs.push((c.surface, c.tool.clone(), args));
        described.push((first + i, c));
    }
    // The args are gone into the checks; keep a summary for failure messages.
    let results = futures::future::join_all(jobs.into_iter().map(|(surface, tool, args)| async move {
        let summary = summary(&args);
        (summary, rt.check(surface, &tool, args).await)
    }))
    .await;
    for ((n, mut c), (summary, result)) in described.into_iter().zip(results) {
        c.args = Value::String(summary);
        let tool = tools.iter().find(|t| t.name == c.tool);
        stats.record(n, &c, tool, &result, seed);
    }
}

pub(super) fn fuzz_runtime() -> (Harness, tokio::sync::mpsc::Receiver<tether_actors::question::port::Asked>) {
    let (port, cards) = ChannelPort::new();
    let backend = CommandBackend::with_commands(
        &std::env::temp_dir(),
        BTreeMap::from([(Tier::Fast, vec!["true".to_string()]), (Tier::Good, vec!["true".to_string()])]),
    );
    let h = Harness::with(
        &[("a.py", "print(1)\nold(2)\n"), ("src/lib.rs", "fn main() {}\n"), ("sub/inner.py", "old(3)\n")],
        |b| b.connect_all().questions(Arc::new(port), "test").vibe(Arc::new(backend)),
    );
    (h, cards)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_parsing_fuzz_for_every_tool() {
    let seed = seed();
    let started = Instant::now();
    let (h, _cards) = fuzz_runtime();
    let tools = model(&h.rt);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "apply_patch",
        "ask_user",
        "ast_edit",
        "ast_grep",
        "debug",
        "edit",
        "eval",
        "lsp",
        "lsp_rename",
        "read",
        "resolve",
        "vibe_kill",
        "vibe_list",
        "vibe_send",
        "vibe_spawn",
        "vibe_wait",
        "write",
    ] {
        assert!(names.contains(&expected), "{expected} is registered: {names:?}");
    }
    let mut rng = Rng(seed);
    let mut stats = Stats::default();

    let mut deep = deep_cases(&mut rng, &tools);
    while !deep.is_empty() {
        let chunk: Vec<Case> = deep.drain(..deep.len().min(64)).collect();
        run_cases(&h.rt, &tools, chunk, &mut stats, seed).await;
    }
    let mut huge = huge_cases(&mut rng, &tools);
    while !huge.is_empty() {
        let chunk: Vec<Case> = huge.drain(..huge.len().min(8)).collect();
        run_cases(&h.rt, &tools, chunk, &mut stats, seed).await;
    }
    let mut left = RANDOM_CASES;
    while left > 0 {
        let n = left.min(CHUNK);
        let cases = (0..n).map(|_| random_case(&mut rng, &tools)).collect();
        run_cases(&h.rt, &tools, cases, &mut stats, seed).await;
        left -= n;
    }
    // The router still answers, and a right call still passes.
    let alive = h.rt.check(Surface::Full, "read", json!({"path": "a.py"})).await;
    assert!(alive.is_ok(), "the runtime answers after the fuzz: {alive:?}");

    let elapsed = started.elapsed();
    println!("fuzz: per tool (cases / errors):");
    for (tool, (n, e)) in &stats.by_tool {
        println!("  {tool:<16} {n:>7} / {e:>7}");
    }
    println!("fuzz: per class (cases / errors):");
    for (class, (n, e)) in &stats.by_class {
        println!("  {:<16} {n:>7} / {e:>7}", format!("{class:?}"));
    }
    let naming = if stats.failed == 0 {
        "all naming the field".to_string()
    } else {
        format!("{} NOT naming the field", stats.failed)
    };
    println!(
        "fuzz: {} cases, {} panics, {} errors {naming} ({} tools, seed {seed}, {:.1} s)",
        stats.cases,
        stats.panics,
        stats.errors,
        tools.len(),
        elapsed.as_secs_f64()
    );
    assert_eq!(stats.panics, 0, "the runtime stopped answering during the fuzz (seed {seed})");
    assert!(
        stats.failed == 0,
        "{} of {} cases broke the contract (seed {seed}); the first ones:\n{}",
        stats.failed,
        stats.cases,
        stats.failures.join("\n")
    );
    assert!(stats.cases >= 100_000, "{} cases", stats.cases);
    let shaped_ok = stats.by_class.get(&Class::Shaped).map(|(n, e)| n - e).unwrap_or(0);
    assert!(shaped_ok > 1_000, "right-shaped calls pass often enough to mean something: {shaped_ok}");
}
