//! Every tool's input schema is one any client takes: inside the subset the
//! main model providers document for tool parameters (written down as
//! `tether::schema::SUBSET`: no `$ref`, `oneOf`/`anyOf`, `const`, type lists
//! or `format`), and compiled without a complaint by Ajv in strict mode —
//! the validator most Node MCP clients use, which refuses unknown formats
//! such as `uint32`. Ajv comes from npm (`npm install -g ajv@8`; the
//! README's test command installs it) and runs under node.

use std::sync::Arc;

use serde_json::{Value, json};
use tether::{Runtime, Surface};
use tether_actors::question::port::ChannelPort;
use tether_actors::workers::command::CommandBackend;

/// Every tool tether has: all resources, a human, vibe mode.
fn every_tool() -> (tempfile::TempDir, Vec<tether::ToolSpec>) {
    let dir = tempfile::tempdir().unwrap();
    let (port, _cards) = ChannelPort::new();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .connect_all()
        .questions(Arc::new(port), "a pane")
        .vibe(Arc::new(CommandBackend::load(dir.path())))
        .start()
        .unwrap();
    // Each tool twice: as declared, and as the tool list sends it.
    let tools = rt.tools(Surface::Full);
    let listed =
        tools.iter().map(|t| tether::ToolSpec { name: format!("{} (listed)", t.name), ..t.for_model() });
    let both = tools.iter().cloned().chain(listed).collect();
    (dir, both)
}

#[test]
fn every_schema_is_inside_the_portable_subset() {
    let (_dir, tools) = every_tool();
    assert!(tools.len() >= 36, "every tool is registered, declared and listed: {}", tools.len());
    let mut problems = Vec::new();
    for tool in &tools {
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        for p in tether::schema::outside_subset(&tool.input_schema) {
            problems.push(format!("{}: {p}", tool.name));
        }
    }
    assert!(problems.is_empty(), "outside the subset:\n{}", problems.join("\n"));
}

#[test]
fn every_schema_compiles_under_ajv_strict_mode() {
    let (dir, tools) = every_tool();
    let schemas: Vec<Value> =
        tools.iter().map(|t| json!({"name": t.name, "schema": t.input_schema})).collect();
    let input = dir.path().join("schemas.json");
    std::fs::write(&input, serde_json::to_string(&schemas).unwrap()).unwrap();
    let script = r#"
const Ajv = require("ajv");
const tools = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
let bad = 0;
for (const { name, schema } of tools) {
  const ajv = new Ajv({ strict: true, allErrors: true });
  try { ajv.compile(schema); } catch (e) { bad++; console.log(`${name}: ${e.message}`); }
}
console.log(`${tools.length - bad}/${tools.length} compiled`);
process.exit(bad ? 1 : 0);
"#;
    let root = std::process::Command::new("npm").args(["root", "-g"]).output().expect("npm runs");
    let node_path = String::from_utf8_lossy(&root.stdout).trim().to_string();
    let found = std::path::Path::new(&node_path).join("ajv/package.json").exists();
    assert!(
        found,
        "Ajv is not installed under {node_path}; install it with `npm install -g ajv@8` (the README's test command does)"
    );
    let out = std::process::Command::new("node")
        .args(["-e", script])
        .arg(&input)
        .env("NODE_PATH", &node_path)
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "Ajv strict refused:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("{0}/{0} compiled", tools.len())), "{text}");
}

#[test]
fn every_line_is_one_based_in_the_schema_a_model_reads() {
    let (_dir, tools) = every_tool();
    let schema = |name: &str| tools.iter().find(|t| t.name == name).unwrap().input_schema.clone();
    for listed in ["lsp (listed)", "lsp_rename (listed)", "debug (listed)"] {
        let props = &schema(listed)["properties"];
        assert_eq!(props["line"]["minimum"], 1, "{listed}: {props}");
    }
    let debug = schema("debug (listed)");
    assert_eq!(debug["properties"]["breakpoints"]["items"]["properties"]["line"]["minimum"], 1);
}

#[test]
fn an_argument_the_answers_name_when_needed_is_left_out_of_the_list_and_kept_in_the_reference() {
    let (_dir, tools) = every_tool();
    let schema = |name: &str| tools.iter().find(|t| t.name == name).unwrap().input_schema.clone();
    for (tool, arg) in
        [("lsp", "offset"), ("lsp", "limit"), ("eval", "idle_timeout_seconds"), ("debug", "vm_service_uri")]
    {
        assert!(schema(tool)["properties"].get(arg).is_some(), "{tool} takes `{arg}`");
        let listed = schema(&format!("{tool} (listed)"));
        assert!(listed["properties"].get(arg).is_none(), "{tool} (listed) leaves out `{arg}`: {listed}");
        let reference = tether::help::reference(tools.iter().find(|t| t.name == tool).unwrap());
        assert!(reference.contains(&format!("`{arg}`")), "{tool}'s reference names `{arg}`");
    }
}
