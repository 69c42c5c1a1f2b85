//! `tether serve`: one run over MCP stdio, through the official `rmcp` SDK.
//!
//! - `tools/list` is exactly the run's surface; each tool with its schema.
//! - `tools/call` becomes a router call carrying the request's cancellation
//!   token (`notifications/cancelled` fires it); a tool error is a result
//!   with `isError`, never a protocol error. Text, images and `data`
//!   (structured content) travel as MCP content.
//! - A call that runs longer than [`PROGRESS_EVERY`] sends progress
//!   notifications while it runs, when the client gave a progress token.
//! - `tether://tree` is the supervision tree as a resource, as text and JSON.
//! - `ask_user` and permission cards are elicitation forms ([`elicit`]).
//! - A line that is not JSON is answered with JSON-RPC's parse error
//!   ([`stdio`]); rmcp would skip it unanswered.
//! - `--http` serves many sessions at once ([`http`]); a session idle past
//!   `--session-idle` ends (`idle`).
//!
//! The run ends when stdin closes: the runtime is dropped, which stops
//! every actor and kills every child process before the process exits.

pub mod elicit;
pub mod http;
mod idle;
pub mod stdio;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    ErrorCode, Implementation, InitializeRequestParams, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::result::ToolResult;
use crate::runtime::Runtime;
use crate::spec::{Surface, ToolSpec};
use elicit::PeerSlot;

/// The supervision tree's resource address.
pub const TREE_URI: &str = "tether://tree";
/// Where a tool's full reference is: this prefix and the tool's name.
pub const TOOL_URI: &str = "tether://tools/";
/// How often a long call reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What each group of tools is, for the instructions.
const GROUPS: &[(&str, &[&str])] = &[
    ("language servers", &["lsp", "lsp_rename", "lsp_edit"]),
    ("tree-sitter search and staged rewrite", &["ast_grep", "ast_edit", "resolve"]),
    ("debuggers", &["debug"]),
    ("persistent Python/JavaScript kernels", &["eval"]),
    ("the human", &["ask_user"]),
    ("background workers", &["vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"]),
    ("the run's live resources", &["resources"]),
    ("file tools with diagnostics on write", &["read", "write", "edit", "apply_patch"]),
];

/// What the server tells the model about itself: only the tools this run
/// offers on this surface.
pub fn instructions(tools: &[ToolSpec]) -> String {
    let offered = |name: &str| tools.iter().any(|t| t.name == name);
    let mut parts = Vec::new();
    for (what, names) in GROUPS {
        let here: Vec<&str> = names.iter().copied().filter(|n| offered(n)).collect();
        if !here.is_empty() {
            parts.push(format!("{what} ({})", here.join(", ")));
        }
    }
    let others: Vec<&str> = tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| !GROUPS.iter().any(|(_, names)| names.contains(n)))
        .collect();
    if !others.is_empty() {
        parts.push(format!("the host's own tools ({})", others.join(", ")));
    }
    let offer = if parts.is_empty() { "no tools on this surface".to_string() } else { parts.join(", ") };
    // Only the tools offered here that have a `help` op are named.
    let helped: Vec<String> =
        ["lsp", "debug"].into_iter().filter(|n| offered(n)).map(|n| format!("`{n}`")).collect();
    let help = match helped.len() {
        0 => String::new(),
        1 => format!("{} answers `help` with its full reference; ", helped[0]),
        _ => format!("{} answer `help` with their full reference; ", helped.join(" and ")),
    };
    format!(
        "tether: tools bound to live resources of this working directory — {offer}. Paths are relative to the working directory; lines are 1-based. {help}every tool's reference is the resource {TOOL_URI}NAME. The supervision tree is the resource {TREE_URI}."
    )
}

/// The requests of the protocol tether serves: one of these arriving as a
/// "custom" request means its params did not fit (rmcp falls back to a
/// custom request for anything it cannot read), not that it is unknown.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// What is wrong with the params of a request of a known method, in a
/// sentence that names the field.
fn bad_params(method: &str, params: Option<&Value>) -> String {
    if method == "tools/call" {
        let Some(params) = params.and_then(Value::as_object) else {
            return "tools/call: `params` must be an object with `name` (the tool to call) and `arguments` (an object)".into();
        };
        match params.get("name") {
            None => {
                return "tools/call: `name` is missing; give the tool to call, a string (see tools/list)"
                    .into();
            }
            Some(Value::String(_)) => {}
            Some(other) => {
                return format!("tools/call: `name` must be a string (the tool to call), not {other}");
            }
        }
        if let Some(args) = params.get("arguments").filter(|a| !a.is_object() && !a.is_null()) {
            return format!(
                "tools/call: `arguments` must be an object of the tool's arguments by name, not {args}"
            );
        }
    }
    format!("{method}: its params do not fit the method's schema in the MCP specification")
}

/// The MCP server over one runtime: over stdio the run's one client, over
/// HTTP one session ([`http`]) with a conversation of its own.
#[derive(Clone)]
pub struct TetherServer {
    runtime: Arc<Runtime>,
    surface: Surface,
    peer: PeerSlot,
    session: Option<Arc<http::SessionState>>,
}

/// Sessions started in this process, numbering their conversations.
static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl TetherServer {
    /// A server for `runtime`'s tools on `surface`; `peer` receives the
    /// client connection (the elicitation port reads it).
    pub fn new(runtime: Arc<Runtime>, surface: Surface, peer: PeerSlot) -> Self {
        Self { runtime, surface, peer, session: None }
    }

    /// The server of one HTTP session: its conversation opens at
    /// `initialize` and closes when the session ends.
    pub fn for_session(
        runtime: Arc<Runtime>,
        surface: Surface,
        slots: Arc<http::SessionSlots>,
        port: Arc<elicit::SessionsPort>,
    ) -> Self {
        let session = Arc::new(http::SessionState::new(runtime.clone(), slots, port));
        Self { runtime, surface, peer: PeerSlot::default(), session: Some(session) }
    }

    /// The surface this client's calls come from.
    fn surface(&self) -> Surface {
        self.session.as_ref().and_then(|s| s.surface.get().copied()).unwrap_or(self.surface)
    }

    /// The tools this client is offered: the run's on its surface, less
    /// `ask_user` when the client cannot show a question (it declared no
    /// elicitation, or has not initialized yet): every call would fail.
    fn offered(&self) -> Vec<ToolSpec> {
        let mut tools = self.runtime.tools(self.surface());
        if !elicit::can_elicit(&self.peer) {
            tools.retain(|t| t.name != crate::tools::ask_user::NAME);
        }
        tools
    }

    /// Serves on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let service =
            self.serve(stdio::transport()).await.map_err(|e| format!("MCP handshake failed: {e}"))?;
        service.waiting().await.map_err(|e| format!("the MCP session ended with an error: {e}"))?;
        Ok(())
    }
}

/// A tool as MCP lists it.
pub fn mcp_tool(spec: &ToolSpec) -> Tool {
    let spec = spec.for_model();
    let schema = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema))
}

/// A tool result as MCP content: the text first, then the images; `data`
/// as structured content (an object; anything else wrapped as `{"data": …}`).
pub fn mcp_result(result: ToolResult) -> CallToolResult {
    let mut content: Vec<ContentBlock> = vec![ContentBlock::text(result.text)];
    for image in result.images {
        content.push(ContentBlock::image(image.base64, image.mime));
    }
    let mut out =
        if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    out.structured_content = result.data.map(|d| match d {
        Value::Object(_) => d,
        other => serde_json::json!({ "data": other }),
    });
    out
}

impl ServerHandler for TetherServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions(&self.offered()))
    }

    /// The handshake-era versions only: `ask_user` and permission cards
    /// hold the call open while the human answers, through a server-to-
    /// client elicitation request, which protocol 2026-07-28 no longer
    /// allows. Clients that speak both fall back to `initialize`.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let _ = self.peer.set(context.peer.clone());
        if let Some(session) = &self.session {
            if session.conversation.get().is_some() {
                return Err(McpError::invalid_request(
                    "this session is already initialized; start a new session for a new conversation",
                    None,
                ));
            }
            let parts = context.extensions.get::<::http::request::Parts>();
            match parts.map(http::asked_surface).transpose().map(Option::flatten) {
                Ok(Some(surface)) if surface == Surface::Full && self.surface == Surface::ReadOnly => {
                    return Err(McpError::invalid_params(
                        "surface=full: this run serves the read-only surface; a session may narrow it, not widen it",
                        None,
                    ));
                }
                Ok(Some(surface)) => {
                    let _ = session.surface.set(surface);
                }
                Ok(None) => {}
                Err(e) => return Err(McpError::invalid_params(format!("surface: {e}"), None)),
            }
            let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let id = http::conversation_id(&request.client_info.name, &request.client_info.version, n);
            self.runtime.open_conversation(&id).map_err(|e| McpError::internal_error(e, None))?;
            session.port.register(&id, self.peer.clone());
            let _ = session.conversation.set(id);
        }
        self.negotiate_initialize(&request)
    }

    /// rmcp hands over as "custom" any request it could not read — a
    /// `tools/call` without `name`, or with `arguments` that are no object,
    /// among them. For a method of the protocol that is bad params
    /// (-32602), saying what is wrong; only other methods are not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if KNOWN_METHODS.contains(&method) {
            return Err(McpError::invalid_params(bad_params(method, request.params.as_ref()), None));
        }
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("{method} is not a method tether serves"),
            None,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.offered().iter().map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let tool = request.name.to_string();
        if tool == crate::tools::ask_user::NAME && !elicit::can_elicit(&self.peer) {
            return Ok(CallToolResponse::Complete(mcp_result(ToolResult::error(format!(
                "{tool} is not offered to this client: it did not declare MCP's elicitation capability, so no human can answer here; proceed on a stated assumption"
            )))));
        }
        let mut prepared =
            crate::router::Call::new(&tool, args, self.surface()).cancelled_by(context.ct.clone());
        if !elicit::can_elicit(&self.peer) {
            prepared = prepared.unoffered(&[crate::tools::ask_user::NAME]);
        }
        // An HTTP session's calls run in its own conversation, at most
        // `MAX_CALLS_IN_FLIGHT` at once.
        let _permit = match &self.session {
            None => None,
            Some(session) => {
                let Some(conversation) = session.conversation.get() else {
                    return Ok(CallToolResponse::Complete(mcp_result(ToolResult::error(
                        "this session has not initialized; send initialize first",
                    ))));
                };
                prepared = prepared.in_conversation(conversation.as_str());
                match session.in_flight.clone().try_acquire_owned() {
                    Ok(permit) => Some(permit),
                    Err(_) => {
                        return Ok(CallToolResponse::Complete(mcp_result(ToolResult::error(format!(
                            "{tool}: this session already has {} calls running, the most one session may; wait for one to finish",
                            http::MAX_CALLS_IN_FLIGHT
                        )))));
                    }
                }
            }
        };
        let call = self.runtime.send(prepared);
        let result = match context.meta.get_progress_token() {
            None => call.await,
            Some(token) => {
                tokio::pin!(call);
                let started = Instant::now();
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
                loop {
                    tokio::select! {
                        result = &mut call => break result,
                        _ = ticks.tick() => {
                            let secs = started.elapsed().as_secs();
                            let mut note = ProgressNotificationParam::new(token.clone(), secs as f64);
                            note.message = Some(format!("{tool} running for {secs} s"));
                            // A client gone mid-call is noticed by the transport.
                            let _ = context.peer.notify_progress(note).await;
                        }
                    }
                }
            }
        };
        Ok(CallToolResponse::Complete(mcp_result(result)))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut tree = Resource::new(TREE_URI, "supervision tree");
        tree.description = Some(
            "Every live resource of this run (servers, adapters, kernels, workers) with state, pid, age and pending work; as text and as JSON".into(),
        );
        tree.mime_type = Some("text/plain".into());
        let mut listed = vec![tree];
        for spec in self.offered() {
            let mut reference =
                Resource::new(format!("{TOOL_URI}{}", spec.name), format!("{} reference", spec.name));
            reference.description = Some(format!("Every argument of `{}` and all it means", spec.name));
            reference.mime_type = Some("text/plain".into());
            listed.push(reference);
        }
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(name) = request.uri.strip_prefix(TOOL_URI) {
            let tools = self.offered();
            let Some(spec) = tools.iter().find(|t| t.name == name) else {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(McpError::resource_not_found(
                    format!("no tool `{name}` on this surface; references exist for {}", names.join(", ")),
                    None,
                ));
            };
            return Ok(ReadResourceResult::new(vec![ResourceContents::text(
                crate::help::reference(spec),
                request.uri,
            )])
            .into());
        }
        if request.uri != TREE_URI {
            return Err(McpError::resource_not_found(
                format!("no resource `{}`; tether offers {TREE_URI} and {TOOL_URI}NAME", request.uri),
                None,
            ));
        }
        let tree = self.runtime.tree().await;
        let json = serde_json::to_string_pretty(&tree.json()).unwrap_or_default();
        let mut as_json = ResourceContents::text(json, TREE_URI);
        if let ResourceContents::TextResourceContents { mime_type, .. } = &mut as_json {
            *mime_type = Some("application/json".into());
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(tree.text(), TREE_URI), as_json]).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Resource;

    fn server(runtime: Runtime, surface: Surface) -> TetherServer {
        TetherServer::new(Arc::new(runtime), surface, PeerSlot::default())
    }

    #[test]
    fn the_instructions_name_only_what_this_run_offers_on_this_surface() {
        let dir = tempfile::tempdir().unwrap();
        let rt = Runtime::builder()
            .workdir(dir.path())
            .connect(Resource::Parsers)
            .connect(Resource::LanguageServers)
            .start()
            .unwrap();
        let text = server(rt, Surface::ReadOnly).get_info().instructions.unwrap_or_default();
        assert!(text.contains("language servers (lsp)") && text.contains("(ast_grep)"), "{text}");
        for absent in ["vibe", "eval", "debug", "ask_user", "lsp_rename", "resolve"] {
            assert!(!text.contains(absent), "`{absent}` is not offered here: {text}");
        }
        let rt = Runtime::builder().workdir(dir.path()).connect_all().start().unwrap();
        let text = server(rt, Surface::Full).get_info().instructions.unwrap_or_default();
        assert!(text.contains("debuggers (debug)") && text.contains("kernels (eval)"), "{text}");
        assert!(!text.contains("vibe"), "vibe mode is off: {text}");
    }
}
