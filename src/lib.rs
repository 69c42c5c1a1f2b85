//! tether: tools for coding agents bound to live resources — language
//! servers, tree-sitter parsers, debug adapters, interpreters, the human —
//! each resource an actix actor, every call routed by one router actor.
//!
//! # Layout
//!
//! Start at [`runtime`]: `Runtime::builder()…start()` (`runtime::builder`)
//! wires the actors (`runtime::parts`: each resource, its tools, and the
//! tools a run leaves out with what they need) and returns the handle hosts
//! hold (`runtime::api`, `runtime::shutdown`). A call then flows:
//!
//! - [`router`] — the `RouterActor`: registered? on this surface? approved
//!   (with the `ask` policy, a permission card through the question gate)?
//!   arguments parse? then routes, parallel-safe tools concurrently and the
//!   rest through [`router::serial`], one at a time; every call carries a
//!   cancellation token and runs in a `tool_call` tracing span.
//! - [`spec`] — what a tool declares (`ToolSpec`: level, parallel safety,
//!   schema, whether its resource serialises it and answers cancellation),
//!   surfaces and resources; [`approval`] — the approval policy.
//! - [`handler`] — the `ToolHandler` trait every tool implements, the call
//!   context, and the after-write hook; [`args`] — typed argument parsing
//!   with errors that name the field; [`schema`] — input schemas in the
//!   subset every client and model provider takes, and the compact form
//!   the tool list sends; [`help`] — a tool's full reference (its `help`
//!   op, the `tether://tools/NAME` resource).
//! - [`tools`] — one handler per file: `ast_grep`, `ast_edit`, `resolve`,
//!   `lsp`, `lsp_rename`, `lsp_edit`, `eval`, `debug`, `ask_user`, the five `vibe_*`,
//!   `resources` (the supervision tree for the model), and the minimal
//!   host tools `read`, `write`, `edit`, `apply_patch`; `tools::structural`
//!   holds what `ast_grep` and `ast_edit` say of a scan's scope.
//! - [`conversations`] — the conversations of a run, each with its own
//!   kernels and debug session; everything else is the run's. [`views`] —
//!   what each conversation last saw of each file and who wrote what, so
//!   no write lands over work its writer never saw; [`writes`] — the one
//!   commit path every write tool takes (a snapshot checked, all or
//!   nothing, each moved file named with who moved it).
//! - [`result`] — what a call returns (text, data, images).
//! - [`status`] — what is connected and usable here, and why not;
//!   [`install`] — `tether install`, servers from the registries into
//!   tether's tools prefix; [`trust`] — which checkouts may run programs
//!   of their own, recorded outside them.
//! - [`cli`] — `tether tools|call|batch|tree|status|install|trust|serve`; [`serve`] — the
//!   MCP server (rmcp): over stdio, or over streamable HTTP with a
//!   conversation per session ([`serve::http`]), and the elicitation ports.
//!
//! The live resources themselves (actors, grammars, file commits, the
//! watcher that carries changes on disk to the language servers) are in
//! the `tether-actors` crate, which knows nothing of tool names or schemas.

pub mod approval;
pub mod args;
pub mod cli;
pub mod conversations;
pub mod handler;
pub mod help;
pub mod install;
pub mod result;
pub mod router;
pub mod runtime;
pub mod schema;
pub mod serve;
pub mod spec;
pub mod status;
pub mod tools;
pub mod trust;
pub mod views;
pub mod writes;

pub use approval::ApprovalPolicy;
pub use handler::{AfterWrite, CallContext, ToolError, ToolFuture, ToolHandler, WriteBaseline};
pub use result::{Image, ToolResult};
pub use runtime::{Runtime, RuntimeBuilder, Tree};
pub use spec::{Level, Resource, Surface, ToolSpec};
pub use tether_actors::trust::Trust;
