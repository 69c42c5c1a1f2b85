//! Embedding tether in a Rust agent host: start a run, show the model the
//! tools of its surface, and route its calls. (The README shows this file.)

use serde_json::json;
use tether::{ApprovalPolicy, Resource, Runtime, Surface};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let workdir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let runtime = Runtime::builder()
        .workdir(&workdir)
        .conversation("conv-42")
        .surface(Surface::Full)
        .connect(Resource::Parsers)
        .approval(ApprovalPolicy::AutoApprove)
        .start()?;

    // What a plan-mode sub-agent would be offered: read-level tools only.
    for spec in runtime.tools(Surface::ReadOnly) {
        println!("{} ({}): {}", spec.name, spec.level.as_str(), spec.description);
    }

    // A model's call, routed through the router actor.
    let result = runtime.call("ast_grep", json!({"pattern": "$A.unwrap()", "language": "rust"})).await;
    println!("{}", result.text);

    // The supervision tree, for logs and dashboards.
    print!("{}", runtime.tree().await.text());
    Ok(())
}
