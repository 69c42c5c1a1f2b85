//! The path-confinement fuzz: every path argument of every tool, given
//! paths that climb out, go through links out, or stay inside, in a
//! sandbox with sentinels that would show a leak.

use super::*;

// --- path confinement ------------------------------------------------------

/// A sandbox: `base/l1/l2/work` is the working directory; everything else
/// under `base` is outside it, with sentinels and decoys to catch a leak.
pub(super) struct Sandbox {
    pub(super) base: tempfile::TempDir,
    pub(super) l2: PathBuf,
    pub(super) root: PathBuf,
    pub(super) outside: PathBuf,
}

pub(super) const SENTINEL: &str = "SENTINEL";
pub(super) const DECOY: &str = "DECOY";

pub(super) fn sandbox() -> Sandbox {
    use std::os::unix::fs::symlink;
    let base = tempfile::tempdir().unwrap();
    let canonical = base.path().canonicalize().unwrap();
    let l1 = canonical.join("l1");
    let l2 = l1.join("l2");
    let root = l2.join("work");
    let outside = l2.join("outside");
    let write = |p: PathBuf, text: &str| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(root.join("in.py"), "old(1)\n");
    write(root.join("sub/inner.py"), "old(2)\n");
    write(root.join("sub/deep/x.py"), "old(3)\n");
    write(outside.join("secret.txt"), &format!("{SENTINEL} outside\n"));
    write(outside.join("secret.py"), &format!("old(9)  # {SENTINEL}\n"));
    write(outside.join("dir/inner.py"), &format!("old(8)  # {SENTINEL}\n"));
    // What `link_out/../in.py` or `sub/up/../inner.py` would reach if the
    // kernel resolved them as given instead of tether folding them first.
    write(l2.join("in.py"), &format!("old(7)  # {DECOY}\n"));
    write(l1.join("inner.py"), &format!("old(6)  # {DECOY}\n"));
    write(l1.join("new.txt"), &format!("{DECOY}\n"));
    let link = |target: &Path, name: &str| symlink(target, root.join(name)).unwrap();
    link(&outside, "link_out");
    link(Path::new("../outside"), "link_out_rel");
    link(&outside.join("secret.txt"), "file_out");
    link(Path::new("chain_b"), "chain_a");
    link(Path::new("chain_c"), "chain_b");
    link(&outside, "chain_c");
    link(Path::new("etc_b"), "etc_a");
    link(Path::new("etc_c"), "etc_b");
    link(Path::new("/etc"), "etc_c");
    link(&outside.join("missing.txt"), "dangling_out");
    link(Path::new("/proc/self/root"), "proc_root");
    link(Path::new("../.."), "sub/up");
    link(Path::new("sub"), "link_in");
    link(Path::new("in_chain_b"), "in_chain_a");
    link(Path::new("sub"), "in_chain_b");
    link(Path::new("in.py"), "file_in");
    // Names that are not UTF-8 on disk: a file, and a link out.
    std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"bad\xff.py")), "old(4)\n").unwrap();
    symlink(&outside, root.join(std::ffi::OsStr::from_bytes(b"out\xfe"))).unwrap();
    Sandbox { base, l2, root, outside }
}

/// Everything under `base` except the working directory: path → file
/// content or link target.
pub(super) fn snapshot(base: &Path, skip: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p == skip {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(p.clone(), std::fs::read_link(&p).unwrap().as_os_str().as_bytes().to_vec());
            } else if meta.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Names used around an escape; never `work` (the working directory's own
/// name) and never `..`, so a path that left cannot come back in.
pub(super) const NAMES: &[&str] = &[
    "x",
    "secret.txt",
    "secret.py",
    "dir",
    "inner.py",
    "in.py",
    "new.txt",
    "a b",
    "%2e%2e",
    "..%2f..%2f",
    "..\\..",
    "...",
    ".. ",
    " ..",
    "\u{FFFD}",
    "\u{0301}",
    "e\u{0301}",
    "\u{202E}yp.txt",
    "a\0b",
    "~",
    "$HOME",
    "\u{200B}",
    "%00",
    "\\x2e\\x2e",
    "outside",
    "l2",
    "etc",
    "passwd",
    "sub",
];
/// Links that lead out of the working directory, at its top.
pub(super) const OUT_LINKS: &[&str] = &[
    "link_out",
    "link_out_rel",
    "file_out",
    "chain_a",
    "chain_b",
    "chain_c",
    "dangling_out",
    "etc_a",
    "proc_root",
];
/// Links that lead out, excluding the ones reaching `/etc` or `/`: safe to
/// aim real writes at (a leak would land in the sandbox, and be seen).
pub(super) const SANDBOXED_OUT_LINKS: &[&str] =
    &["link_out", "link_out_rel", "file_out", "chain_a", "chain_b", "chain_c", "dangling_out"];

/// A token that leaves the lexical position unchanged.
pub(super) fn noise(rng: &mut Rng, out: &mut Vec<String>) {
    match rng.below(4) {
        0 => out.push(".".into()),
        1 => out.push(String::new()),
        2 => out.extend([rng.pick(NAMES).to_string(), "..".into()]),
        _ => out.extend([rng.pick(OUT_LINKS).to_string(), "..".into()]),
    }
}

/// Up to `steps` names below the current place, with `..` only above
/// where the walk started, and noise.
pub(super) fn walk_down(rng: &mut Rng, out: &mut Vec<String>, steps: usize, names: &[&str]) {
    let mut depth = 0;
    for _ in 0..steps {
        match rng.below(5) {
            0 => noise(rng, out),
            1 if depth > 0 => {
                out.push("..".into());
                depth -= 1;
            }
            _ => {
                out.push(rng.pick(names).to_string());
                depth += 1;
            }
        }
    }
}

/// Where a path may stand inside the working directory before it escapes:
/// the components and how many levels below the root that is.
pub(super) const PLACES: &[(&str, usize)] =
    &[("", 0), ("sub", 1), ("sub/deep", 2), ("link_in", 1), ("in_chain_a", 1), ("x", 1), ("sub/x/y", 3)];

pub(super) fn place(rng: &mut Rng, out: &mut Vec<String>) -> usize {
    let (p, depth) = *rng.pick(PLACES);
    for part in p.split('/').filter(|s| !s.is_empty()) {
        if rng.one_in(3) {
            noise(rng, out);
        }
        out.push(part.to_string());
    }
    depth
}

/// Joins the parts of a relative path (an empty first part, from noise,
/// would make it absolute).
pub(super) fn relative(mut parts: Vec<String>) -> String {
    if parts.first().is_some_and(|p| p.is_empty()) {
        parts[0] = ".".into();
    }
    parts.join("/")
}

/// A path that climbs out with `..`: at least one level above the root,
/// at most `max_up`.
pub(super) fn climb(rng: &mut Rng, max_up: usize) -> String {
    let mut parts = Vec::new();
    let depth = place(rng, &mut parts);
    let up = 1 + rng.below(max_up);
    for _ in 0..depth + up {
        if rng.one_in(4) {
            parts.push(if rng.one_in(2) { ".".into() } else { String::new() });
        }
        parts.push("..".into());
    }
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    relative(parts)
}

/// A path through a link that leads out.
pub(super) fn through_link(rng: &mut Rng, links: &[&str]) -> String {
    let mut parts = Vec::new();
    if rng.one_in(4) {
        // `up` lives in `sub` (also reached as `link_in`): it leads to the root's parent.
        parts.push(rng.pick(&["sub", "link_in", "in_chain_a", "./sub"]).to_string());
        parts.push("up".into());
    } else {
        if rng.one_in(3) {
            noise(rng, &mut parts);
        }
        parts.push(rng.pick(links).to_string());
    }
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    relative(parts)
}

/// An absolute path that is not in the working directory.
pub(super) fn absolute(rng: &mut Rng, s: &Sandbox, sandboxed: bool) -> String {
    let outside = s.outside.display().to_string();
    let root = s.root.display().to_string();
    let mut parts = vec![match rng.below(if sandboxed { 4 } else { 9 }) {
        0 => outside,
        1 => format!("/proc/self/root{outside}"),
        2 => format!("{root}/.."),
        3 => s.l2.display().to_string(),
        4 => format!("/proc/self/root{root}"),
        5 => "/proc/self/cwd".into(),
        6 => rng
            .pick(&["/etc", "/", "//etc", "/root", "/tmp", "/dev", "/proc/1/root/etc", "/proc/self/fd"])
            .to_string(),
        7 => "/proc/self/root/etc".into(),
        _ => format!("/{}", rng.pick(NAMES)),
    }];
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    parts.join("/")
}

pub(super) fn hostile(rng: &mut Rng, s: &Sandbox, sandboxed: bool) -> String {
    let p = match rng.below(3) {
        0 => climb(rng, if sandboxed { 3 } else { 6 }),
        1 => through_link(rng, if sandboxed { SANDBOXED_OUT_LINKS } else { OUT_LINKS }),
        _ => absolute(rng, s, sandboxed),
    };
    if p == "/dev/null" { "/dev/null/x".into() } else { p }
}

/// Names that stay inside (no link out among them).
pub(super) const INSIDE_NAMES: &[&str] = &[
    "sub",
    "deep",
    "in.py",
    "x",
    "link_in",
    "in_chain_a",
    "file_in",
    "%2e%2e",
    "..%2f",
    "...",
    ".. ",
    " ..",
    "\u{FFFD}",
    "e\u{0301}",
    "\u{0301}",
    "a\0b",
    "~",
    "$HOME",
    "\\..",
    "a b",
    "new",
    "outside",
    "etc",
];

/// A path that stays inside: a walk that never climbs above the root,
/// sometimes spelled from the root's absolute path or re-entering it by
/// name from its parent.
pub(super) fn benign(rng: &mut Rng, s: &Sandbox) -> String {
    let mut parts = Vec::new();
    match rng.below(4) {
        0 => parts.push(s.root.display().to_string()),
        1 => parts.extend(["..".to_string(), "work".to_string()]),
        2 => parts.push(".".into()),
        _ => {}
    }
    let steps = 1 + rng.below(5);
    walk_down(rng, &mut parts, steps, INSIDE_NAMES);
    let p = if parts.first().is_some_and(|p| p.starts_with('/')) { parts.join("/") } else { relative(parts) };
    if p.is_empty() || p.trim().is_empty() { "in.py".into() } else { p }
}

/// How each path argument is passed: (tool, the argument, builder).
pub(super) type Build = fn(&str) -> Value;
pub(super) const PATH_CALLS: &[(&str, &str, Build)] = &[
    ("ast_grep", "path", |p| json!({"pattern": "old($A)", "path": p})),
    ("ast_edit", "path", |p| json!({"pattern": "old($A)", "rewrite": "new($A)", "path": p})),
    ("read", "path", |p| json!({"path": p})),
    ("write", "path", |p| json!({"path": p, "content": "pwned"})),
    ("edit", "path", |p| json!({"path": p, "old_string": "old", "new_string": "new"})),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old(1)\n+new(1)\n")}),
    ),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+pwned\n")}),
    ),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- a/{p}\n+++ /dev/null\n@@ -1 +0,0 @@\n-old(1)\n")}),
    ),
    ("lsp", "file", |p| json!({"action": "diagnostics", "file": p})),
    ("lsp", "file", |p| json!({"action": "hover", "file": p, "line": 1, "symbol": "old"})),
    ("lsp", "file", |p| json!({"action": "symbols", "file": p})),
    ("lsp", "file", |p| json!({"action": "reload", "file": p})),
    ("lsp_rename", "file", |p| json!({"file": p, "line": 1, "symbol": "old", "new_name": "new"})),
    ("lsp_edit", "file", |p| json!({"action": "format", "file": p, "preview": true})),
    ("debug", "file", |p| json!({"op": "breakpoints", "file": p, "lines": [1]})),
    ("debug", "program", |p| json!({"op": "launch", "program": p})),
];

/// Whether `p` survives a patch header unchanged (tabs start a timestamp,
/// trailing blanks are trimmed, line breaks end the header, a leading
/// quote is refused).
pub(super) fn patchable(p: &str) -> bool {
    !p.contains(['\t', '\n', '\r']) && p.trim_end() == p && !p.starts_with('"')
}

pub(super) fn path_runtime(s: &Sandbox) -> Runtime {
    Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(&s.root)
        .conversation("fuzz")
        .connect_all()
        .start()
        .expect("runtime starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_confinement_fuzz_for_every_path_argument() {
    let seed = seed();
    let started = Instant::now();
    let s = sandbox();
    let rt = path_runtime(&s);
    let before = snapshot(s.base.path(), &s.root);

    // Every path argument of every tool is covered here.
    let covered: BTreeSet<(&str, &str)> = PATH_CALLS.iter().map(|(t, a, _)| (*t, *a)).collect();
    for spec in rt.tools(Surface::Full) {
        for (name, prop) in spec.input_schema["properties"].as_object().into_iter().flatten() {
            let description = prop["description"].as_str().unwrap_or("");
            let is_path = ["path", "paths", "file", "files", "program", "patch"].contains(&name.as_str())
                || description.contains("relative to the working directory");
            assert!(
                !is_path || covered.contains(&(spec.name.as_str(), name.as_str())),
                "{}.{name} takes a path and is not fuzzed here",
                spec.name
            );
        }
    }

    let mut rng = Rng(seed ^ 0x5a5a_0bad_f00d_0001);
    let mut hostile_checks = 0usize;
    let mut benign_checks = 0usize;
    let mut benign_refused_otherwise = 0usize;
    let mut failures: Vec<String> = Vec::new();
    let mut fail = |why: String| {
        if failures.len() < 20 {
            failures.push(why);
        }
    };
    for round in 0..50 {
        let hostile_paths: Vec<String> = (0..100).map(|_| hostile(&mut rng, &s, false)).collect();
        let benign_paths: Vec<String> = (0..50).map(|_| benign(&mut rng, &s)).collect();
        let mut jobs = Vec::new();
        for (is_hostile, paths) in [(true, &hostile_paths), (false, &benign_paths)] {
            for p in paths.iter() {
                for (tool, _, build) in PATH_CALLS {
                    if *tool == "apply_patch" && !patchable(p) {
                        continue;
                    }
                    jobs.push((is_hostile, *tool, p.clone(), build(p)));
                }
            }
        }
        let results = futures::future::join_all(
            jobs.iter().map(|(_, tool, _, args)| rt.check(Surface::Full, tool, args.clone())),
        )
        .await;
        for ((is_hostile, tool, p, _), result) in jobs.iter().zip(results) {
            match (is_hostile, result) {
                (true, Ok(())) => {
                    fail(format!("seed {seed} round {round}: {tool} accepted the hostile path {p:?}"))
                }
                (true, Err(e)) if !e.is_error || !confinement_refusal(&e.text) => fail(format!(
                    "seed {seed} round {round}: {tool} refused {p:?} for another reason: {}",
                    clip(&e.text)
                )),
                (true, Err(_)) => hostile_checks += 1,
                (false, Err(e)) if e.text.contains(OUTSIDE) => fail(format!(
                    "seed {seed} round {round}: {tool} refused the inside path {p:?}: {}",
                    clip(&e.text)
                )),
                (false, Err(_)) => {
                    benign_checks += 1;
                    benign_refused_otherwise += 1;
                }
                (false, Ok(())) => benign_checks += 1,
            }
        }
    }

    // Paths that stay inside, existing targets: every tool takes them.
    let root = s.root.display().to_string();
    let inside_files = [
        "in.py".to_string(),
        "./in.py".into(),
        "sub/../in.py".into(),
        "link_in/inner.py".into(),
        "in_chain_a/deep/x.py".into(),
        "file_in".into(),
        format!("{root}/in.py"),
        "../work/in.py".into(),
        "link_out/../in.py".into(),
        "chain_a/../sub/inner.py".into(),
        "sub/up/../inner.py".into(),
        "sub//deep/./x.py".into(),
        "link_in/../in.py".into(),
    ];
    let mut accepted = 0usize;
    for p in &inside_files {
        for (tool, _, build) in PATH_CALLS {
            match rt.check(Surface::Full, tool, build(p)).await {
                Ok(()) => accepted += 1,
                // Deleting through a link is refused for what it is (the
                // link's target would go), inside or not.
                Err(e) if *tool == "apply_patch" && e.text.contains("is a symbolic link") => accepted += 1,
                // A patch that creates an existing file is refused when it runs, not here.
                Err(e) => fail(format!("{tool} refused the inside file {p:?}: {}", clip(&e.text))),
            }
        }
    }

    // For real: hostile paths that stay in the sandbox, through every
    // file-touching tool; nothing outside the working directory is read,
    // written, created or removed.
    let mut real_refused = 0usize;
    let real_tools: &[(&str, Build)] = &[
        ("read", |p| json!({"path": p})),
        ("write", |p| json!({"path": p, "content": "pwned"})),
        ("edit", |p| json!({"path": p, "old_string": "old", "new_string": "pwned"})),
        ("apply_patch", |p| json!({"patch": format!("--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+pwned\n")})),
        (
            "apply_patch",
            |p| json!({"patch": format!("--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old(9)  # SENTINEL\n+pwned\n")}),
        ),
        ("ast_grep", |p| json!({"pattern": "old($A)", "path": p})),
        ("ast_edit", |p| json!({"pattern": "old($A)", "rewrite": "pwned($A)", "path": p})),
    ];
    // Parsers and host tools only: an accepted rewrite would otherwise sync
    // its files to a language server, which is not what is tested here.
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(&s.root)
        .conversation("fuzz")
        .connect(tether::Resource::Parsers)
        .start()
        .expect("runtime starts");
    let mut real_paths: Vec<String> = (0..80).map(|_| hostile(&mut rng, &s, true)).collect();
    real_paths.extend(
        [
            "file_out",
            "link_out/secret.py",
            "chain_a/secret.py",
            "sub/up/outside/secret.py",
            "link_out_rel/dir/inner.py",
        ]
        .map(String::from),
    );
    for p in &real_paths {
        for (tool, build) in real_tools {
            if *tool == "apply_patch" && !patchable(p) {
                continue;
            }
            let r = call(&rt, tool, build(p)).await;
            if !r.is_error || !confinement_refusal(&r.text) {
                fail(format!("{tool} {p:?} for real was not refused: {}", clip(&r.text)));
            } else if r.text.contains(SENTINEL) || r.text.contains(DECOY) {
                fail(format!("{tool} {p:?} leaked outside content: {}", clip(&r.text)));
            } else {
                real_refused += 1;
            }
        }
    }
    // Reading through /etc and / for real (reads only).
    for p in [
        "etc_a/passwd",
        "etc_a/hostname",
        "proc_root/etc/passwd",
        "/proc/self/root/etc/passwd",
        "/etc/passwd",
        "../../../../../../etc/passwd",
    ] {
        let r = call(&rt, "read", json!({"path": p})).await;
        if !r.is_error || !r.text.contains(OUTSIDE) || r.text.contains("root:") {
            fail(format!("read {p:?} was not refused: {}", clip(&r.text)));
        } else {
            real_refused += 1;
        }
    }

    // Inside paths for real: the folded path is the one used, never what
    // a link would have led to.
    for (p, want) in [
        ("link_out/../in.py", "old(1)"),
        ("sub/up/../inner.py", "old(2)"),
        ("link_in/inner.py", "old(2)"),
        ("in_chain_a/deep/x.py", "old(3)"),
        ("../work/in.py", "old(1)"),
    ] {
        let r = call(&rt, "read", json!({"path": p})).await;
        if r.is_error || !r.text.starts_with(want) || r.text.contains(DECOY) {
            fail(format!("read {p:?} should give {want}: {}", clip(&r.text)));
        }
    }
    let r = call(&rt, "write", json!({"path": "link_in/made/new.txt", "content": "inside"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(s.root.join("sub/made/new.txt")).unwrap(), "inside");
    let r = call(&rt, "ast_grep", json!({"pattern": "old($A)", "path": "link_in"})).await;
    assert!(!r.is_error && r.text.contains("old(2)") && !r.text.contains(SENTINEL), "{}", r.text);
    // A whole-workspace rewrite with links out all around: only inside files change.
    let r = call(&rt, "ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)", "language": "python"}))
        .await;
    assert!(!r.is_error && !r.text.contains(SENTINEL) && !r.text.contains(DECOY), "{}", r.text);
    let id = r.data.as_ref().and_then(|d| d["staged"]["edit_id"].as_str()).expect("an edit id").to_string();
    let r = call(&rt, "resolve", json!({"edit_id": id, "action": "accept"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(s.root.join("in.py")).unwrap(), "new(1)\n");
    assert_eq!(std::fs::read_to_string(s.root.join("sub/deep/x.py")).unwrap(), "new(3)\n");

    let after = snapshot(s.base.path(), &s.root);
    let changed: Vec<&PathBuf> =
        before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).collect();
    assert!(changed.is_empty(), "outside the working directory changed: {changed:?}");
    assert!(
        failures.is_empty(),
        "seed {seed}: {} path failures; the first ones:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!(
        "paths: {hostile_checks} hostile checks refused ({} tool/argument forms), {real_refused} hostile calls refused for real, \
         {benign_checks} inside checks never refused as outside ({benign_refused_otherwise} refused for another reason, e.g. missing), \
         {accepted} inside files accepted, 0 bytes changed outside ({:.1} s, seed {seed})",
        PATH_CALLS.len(),
        started.elapsed().as_secs_f64()
    );
}

pub(super) async fn call(rt: &Runtime, tool: &str, args: Value) -> ToolResult {
    let bound = crate::common::call_bound(tool);
    tokio::time::timeout(bound, rt.call(tool, args))
        .await
        .unwrap_or_else(|_| panic!("`{tool}` did not answer within {bound:?}"))
}
