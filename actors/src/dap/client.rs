//! Reaching a debug adapter on loopback ([`connect_tcp`]), and the
//! requests tether makes of it, one typed method each
//! (helix-dap's shape): DAP's own argument and answer types from
//! `dap_types`, the adapter's `initialize` answer kept as its
//! [`Capabilities`]. The wire under them — framing, the pending map, the
//! adapter's events and reverse requests — is [`crate::wire::dap`].
//!
//! `launch` and `attach` stay JSON: their arguments are each adapter's own
//! (DAP leaves them unspecified), built in `adapters::arguments`.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use dap_types::requests;
use dap_types::{
    Breakpoint, Capabilities, FunctionBreakpoint, InitializeRequestArguments,
    InitializeRequestArgumentsPathFormat, SetExceptionBreakpointsArguments, Source, SourceBreakpoint,
    StackTraceResponse,
};
use serde_json::Value;

use crate::wire::dap::{DapClient, SendError};
use crate::wire::pending::RequestError;

/// Longest one request waits for its answer (a launch waits longer: the
/// session's `RUN_WAIT`).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long an adapter may take to say `initialized`.
pub const INITIALIZED_WAIT: Duration = Duration::from_secs(20);
/// How long a TCP adapter may take to accept tether's connection.
pub const CONNECT_WAIT: Duration = Duration::from_secs(15);

/// Connects to an adapter listening on loopback `port`, trying for at most
/// [`CONNECT_WAIT`] (one just started may not listen yet).
pub async fn connect_tcp(port: u16) -> std::io::Result<tokio::net::TcpStream> {
    connect_tcp_within(port, CONNECT_WAIT).await
}

/// [`connect_tcp`], trying for at most `wait`.
pub async fn connect_tcp_within(port: u16, wait: Duration) -> std::io::Result<tokio::net::TcpStream> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(s) => return Ok(s),
            Err(e) if tokio::time::Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// How a program is started under an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The adapter starts it (`launch`).
    Launch,
    /// The adapter attaches to it, running (`attach`).
    Attach,
}

impl Start {
    /// The DAP command.
    pub fn command(self) -> &'static str {
        match self {
            Start::Launch => "launch",
            Start::Attach => "attach",
        }
    }
}

impl DapClient {
    /// `initialize`: tether's side (lines and columns from 1, paths as
    /// paths, no terminal) as `adapter_id`; with `child_sessions`, the
    /// adapter may ask for each debuggee's session of its own
    /// (`startDebugging`, which the wire answers and hands on). The answer
    /// is what the adapter can do.
    pub async fn initialize(
        &self,
        adapter_id: &str,
        child_sessions: bool,
    ) -> Result<Capabilities, SendError> {
        let arguments = InitializeRequestArguments {
            client_id: Some("tether".into()),
            client_name: Some("tether".into()),
            adapter_id: adapter_id.into(),
            locale: Some("en".into()),
            lines_start_at1: Some(true),
            columns_start_at1: Some(true),
            path_format: Some(InitializeRequestArgumentsPathFormat::Path),
            supports_variable_type: Some(true),
            supports_variable_paging: None,
            supports_run_in_terminal_request: Some(false),
            supports_memory_references: None,
            supports_progress_reporting: None,
            supports_invalidated_event: None,
            supports_memory_event: None,
            supports_args_can_be_interpreted_by_shell: None,
            supports_start_debugging_request: child_sessions.then_some(true),
        };
        self.send::<requests::Initialize>(&arguments, REQUEST_TIMEOUT).await
    }

    /// `launch` or `attach` with the adapter's own `configuration`. On the
    /// wire when this returns; the answer may come only after
    /// `configurationDone` (debugpy), so it is awaited apart, bounded by
    /// `bound`.
    pub fn start_program(
        &self,
        how: Start,
        configuration: Value,
        bound: Duration,
    ) -> impl Future<Output = Result<Value, RequestError>> + Send + 'static {
        self.request(how.command(), configuration, bound)
    }

    /// `setBreakpoints`: `file`'s breakpoints, all of them (an empty list
    /// clears them); the answer's breakpoints are in the order asked.
    pub async fn set_breakpoints(
        &self,
        file: &Path,
        breakpoints: Vec<SourceBreakpoint>,
    ) -> Result<Vec<Breakpoint>, SendError> {
        let arguments = dap_types::SetBreakpointsArguments {
            source: Source {
                name: None,
                path: Some(file.to_string_lossy().into_owned()),
                source_reference: None,
                presentation_hint: None,
                origin: None,
                sources: None,
                adapter_data: None,
                checksums: None,
            },
            breakpoints: Some(breakpoints),
            lines: None,
            source_modified: None,
        };
        Ok(self.send::<requests::SetBreakpoints>(&arguments, REQUEST_TIMEOUT).await?.breakpoints)
    }

    /// `setFunctionBreakpoints`: the program's function breakpoints, all of
    /// them, by name (an empty list clears them). The answer's order is the
    /// adapter's (see `session::functions` for one that reorders).
    pub async fn set_function_breakpoints(&self, names: &[String]) -> Result<Vec<Breakpoint>, SendError> {
        let arguments = dap_types::SetFunctionBreakpointsArguments {
            breakpoints: names
                .iter()
                .map(|name| FunctionBreakpoint { name: name.clone(), condition: None, hit_condition: None })
                .collect(),
        };
        Ok(self.send::<requests::SetFunctionBreakpoints>(&arguments, REQUEST_TIMEOUT).await?.breakpoints)
    }

    /// `setExceptionBreakpoints`: the exception filters in force.
    pub async fn set_exception_breakpoints(
        &self,
        arguments: &SetExceptionBreakpointsArguments,
    ) -> Result<(), SendError> {
        self.send::<requests::SetExceptionBreakpoints>(arguments, REQUEST_TIMEOUT).await.map(drop)
    }

    /// `configurationDone`: the program may run.
    pub async fn configuration_done(&self) -> Result<(), SendError> {
        self.send::<requests::ConfigurationDone>(&dap_types::ConfigurationDoneArguments {}, REQUEST_TIMEOUT)
            .await
    }

    /// `disconnect`, bounded by `bound` (an ending session does not wait
    /// the full request bound): with `terminate_debuggee` false a program
    /// tether attached to, or a followed process let go, runs on — never
    /// suspended (a `dlv --headless --accept-multiclient` server would
    /// halt it).
    pub async fn disconnect(&self, terminate_debuggee: bool, bound: Duration) -> Result<(), SendError> {
        let arguments = dap_types::DisconnectArguments {
            restart: None,
            terminate_debuggee: Some(terminate_debuggee),
            suspend_debuggee: Some(false),
        };
        self.send::<requests::Disconnect>(&arguments, bound).await
    }

    /// `stackTrace` of `thread` from its top, at most `levels` frames.
    /// js-debug marks the frames it skips (node's own) `deemphasize`, a
    /// hint DAP gives sources, not frames: read as `subtle`, the frame
    /// hint for the same thing.
    pub async fn stack_trace(&self, thread: i64, levels: usize) -> Result<StackTraceResponse, SendError> {
        let arguments = serde_json::json!({"threadId": thread, "startFrame": 0, "levels": levels});
        let mut body = self.request("stackTrace", arguments, REQUEST_TIMEOUT).await?;
        for frame in body["stackFrames"].as_array_mut().into_iter().flatten() {
            if frame["presentationHint"] == "deemphasize" {
                frame["presentationHint"] = Value::from("subtle");
            }
        }
        serde_json::from_value(body.clone()).map_err(|e| {
            let (began, _) = crate::text::cut(&body.to_string(), crate::wire::dap::MAX_UNFIT_QUOTED);
            SendError::Unfit { command: "stackTrace", error: e.to_string(), began }
        })
    }
}
