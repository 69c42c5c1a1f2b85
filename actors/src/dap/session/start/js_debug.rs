//! js-debug's parent session. Its DAP server (`dapDebugServer.js`, the
//! adapter VS Code uses) takes the `launch` on the first connection, starts
//! the program, then asks for a child session (`startDebugging`, with the
//! `configuration` naming the target) on a connection of its own: the
//! breakpoints, stops and variables are all the child's.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::super::{INITIALIZED_WAIT, LaunchSpec, REQUEST_TIMEOUT, RUN_WAIT};
use super::{connect_tcp, launch_args};
use crate::wire::dap::{DapClient, DapEvent, START_DEBUGGING};

/// Launches `spec` on `parent` and connects the child session js-debug
/// asks for: its client, its events, and the `launch` arguments it is to
/// be sent.
pub(super) async fn child(
    parent: &DapClient,
    events: &mut UnboundedReceiver<DapEvent>,
    port: u16,
    name: &str,
    spec: &LaunchSpec,
    workdir: &Path,
) -> Result<(DapClient, UnboundedReceiver<DapEvent>, Value), String> {
    let init = json!({
        "clientID": "tether", "clientName": "tether", "adapterID": "pwa-node", "locale": "en",
        "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path",
        "supportsRunInTerminalRequest": false, "supportsStartDebuggingRequest": true,
        "supportsVariableType": true,
    });
    parent
        .request("initialize", init, REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let launch = tokio::spawn(parent.request("launch", launch_args("js-debug", spec, workdir), RUN_WAIT));
    wait_for(events, "initialized", INITIALIZED_WAIT).await?;
    parent
        .request("configurationDone", json!({}), REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("configurationDone failed: {e}"))?;
    let asked = tokio::select! {
        asked = wait_for(events, START_DEBUGGING, RUN_WAIT) => asked?,
        launched = launch => match launched {
            Ok(Err(e)) => return Err(format!("launch failed: {e}")),
            _ => wait_for(events, START_DEBUGGING, RUN_WAIT).await?,
        },
    };
    let configuration = asked["configuration"].clone();
    if !configuration.is_object() {
        return Err(format!("js-debug asked for a child session without a configuration: {asked}"));
    }
    let stream = connect_tcp(port)
        .await
        .map_err(|e| format!("could not connect the child session to {name} on port {port}: {e}"))?;
    let (r, w) = stream.into_split();
    let (child, child_events) = DapClient::connect(&format!("{name} (child)"), r, w);
    Ok((child, child_events, configuration))
}

/// The body of the first `event` on `events`, within `bound`.
async fn wait_for(
    events: &mut UnboundedReceiver<DapEvent>,
    event: &str,
    bound: std::time::Duration,
) -> Result<Value, String> {
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Some(ev)) if ev.event == event => return Ok(ev.body),
            Ok(Some(ev)) if ev.event == "terminated" || ev.event == "tether/closed" => {
                return Err(format!("js-debug ended before `{event}`: {}", ev.body));
            }
            Ok(Some(_)) => {}
            Ok(None) => return Err(format!("js-debug closed the connection before `{event}`")),
            Err(_) => return Err(format!("js-debug sent no `{event}` within {} s", bound.as_secs())),
        }
    }
}
