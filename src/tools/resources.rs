//! `resources`: the supervision tree as the model sees it — every language
//! server, debug adapter and debuggee, kernel and worker of the run, with
//! the conversation that owns it, its age, TTL left, restarts, pid,
//! pending work and last error. `lsp status` and `debug status` point here
//! for the whole picture.

use std::sync::{Arc, OnceLock};

use actix::Recipient;
use schemars::JsonSchema;
use serde::Deserialize;
use tether_actors::describe::{ActorNode, Describe};

use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// Arguments of `resources`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourcesArgs {
    #[serde(default)]
    pub mine: bool,
}

/// The `resources` tool.
pub struct Resources {
    /// The router, which assembles the tree (set once it has started).
    pub router: Arc<OnceLock<Recipient<Describe>>>,
}

impl ToolHandler for Resources {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "resources".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "Live resources, their health and errors.\n\nThe run's live resources (servers, adapters, kernels, workers): owner, pid, age, restarts, pending work, last error. `mine`: only this conversation's and shared ones.\n\nEach line also says the TTL left. Use it to see what is running and why something failed.".into(),
            input_schema: schema_of::<ResourcesArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: ResourcesArgs = parse("resources", args)?;
        let router = self
            .router
            .get()
            .cloned()
            .ok_or_else(|| ToolError::new("resources: the runtime is still starting; call again"))?;
        let conversation = ctx.conversation.to_string();
        Ok(Box::pin(async move {
            let mut root = match router.send(Describe).await {
                Ok(root) => root,
                Err(e) => return ToolResult::error(format!("resources: the router is not running ({e})")),
            };
            if args.mine {
                keep_only(&mut root, &conversation);
            }
            let text = root.to_text();
            ToolResult::text(text.trim_end()).with_data(&root)
        }))
    }
}

/// Drops every node another conversation owns (and what is below it).
fn keep_only(node: &mut ActorNode, conversation: &str) {
    node.children.retain(|c| c.owner.as_deref().is_none_or(|o| o == conversation));
    for child in &mut node.children {
        keep_only(child, conversation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mine_keeps_shared_and_own_nodes() {
        let mut root = ActorNode::new("router", "run", "ready", 0, 0);
        root.children.push(ActorNode::new("lsp-supervisor", ".", "ready", 0, 0));
        root.children.push(ActorNode::new("conversation", "a", "open", 0, 0).owned_by("a"));
        root.children.push(ActorNode::new("conversation", "b", "open", 0, 0).owned_by("b"));
        let mut pool = ActorNode::new("worker-pool", "commands", "ready", 0, 0);
        pool.children.push(ActorNode::new("worker", "w1", "running", 0, 0).owned_by("b"));
        root.children.push(pool);
        keep_only(&mut root, "a");
        let ids: Vec<&str> = root.walk().iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["run", ".", "a", "commands"]);
    }
}
