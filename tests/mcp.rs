//! `tether serve` driven by a real external MCP client: the official
//! Python SDK (PyPI `mcp`), running `tests/mcp/client.py`. One scenario per
//! test; the script asserts and exits non-zero with the reason.

mod common;

use std::path::Path;
use std::process::Command;

use common::copy_dir;

/// The `mcp` version the test command installs.
const MCP_SDK: &str = "mcp==2.3.0";

fn require_sdk() {
    let out = Command::new("python3").args(["-c", "import mcp.client, pandas, matplotlib"]).output();
    let why = match &out {
        Ok(o) if o.status.success() => return,
        Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
        Err(e) => e.to_string(),
    };
    panic!(
        "python3 with the MCP SDK is needed ({why}); install with `python3 -m pip install '{MCP_SDK}' pandas matplotlib` (the README's test command does)"
    );
}

fn require_pyright() {
    if Command::new("pyright-langserver").arg("--version").output().is_err() {
        panic!(
            "pyright-langserver is needed; install with `npm install -g pyright` (the README's test command does)"
        );
    }
}

/// Runs one scenario against a copy of the Python LSP fixture.
fn scenario(name: &str) {
    require_sdk();
    require_pyright();
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/python");
    copy_dir(&src, dir.path());
    // A worker command for vibe mode: it ignores its brief and sleeps.
    std::fs::write(dir.path().join("tether.toml"), "[vibe]\nfast = \"sleep 300\"\n").unwrap();
    common::mcp_scenario(name, dir.path());
}

#[test]
fn tools_list_is_the_surface() {
    scenario("tools_on_surfaces");
}

#[test]
fn calls_return_text_images_and_structured_content() {
    scenario("calls_and_content");
}

#[test]
fn cancelling_interrupts_the_cell_and_long_calls_report_progress() {
    scenario("cancel_and_progress");
}

#[test]
fn ask_user_through_elicitation() {
    scenario("ask_user_flows");
}

#[test]
fn permission_cards_allow_and_deny() {
    scenario("permission_prompts");
}

#[test]
fn closing_stdin_stops_every_child() {
    scenario("stdin_close_stops_children");
}
