//! The processes of a js-debug launch that tether follows. js-debug runs
//! every node process it reaches as a target of its own, announced by a
//! `startDebugging` request on the connection of the process that started
//! it (or on the first connection): `node --test DIR` runs each test file
//! in a process of its own, one after the other; `npm run test` is npm's
//! own node process, then the node processes its script starts. Each is
//! connected and configured with the session's breakpoints (by line and by
//! function) and exception filters as it comes; the ops go to the one that stopped last (else the
//! newest), and the run ends when the first connection says so — not when
//! one of its processes does.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Note;
use super::configure::{Target, configure};
use super::state::AdapterState;
use super::{INITIALIZED_WAIT, RUN_WAIT};
use crate::dap::adapters::Adapter;
use crate::dap::client::Start;
use crate::dap::start_failure::Step;
use crate::wire::dap::{DapClient, DapEvent, Delivery};

/// How long a run whose processes have all ended waits for another (the
/// next test file) or for js-debug to say it ended, before it counts as
/// ended: js-debug says so on the first connection, this is the bound.
const NEXT_TARGET_WAIT: Duration = Duration::from_secs(5);

/// Where new targets connect.
#[derive(Clone)]
pub(super) struct Follow {
    /// js-debug's port.
    pub(super) port: u16,
    /// The adapter's name in messages.
    pub(super) name: String,
    /// The adapter (its id and quirks).
    pub(super) adapter: Adapter,
}

/// Pumps `client`'s events into `shared`. With `follow`, the connection is
/// one target of several: a `startDebugging` on it connects the process it
/// announces, and its `terminated` is that process's end, not the run's.
pub(super) fn pump(
    shared: Arc<AdapterState>,
    client: DapClient,
    mut deliveries: UnboundedReceiver<Delivery>,
    follow: Option<Follow>,
) {
    tokio::spawn(async move {
        let mut ended = false;
        while let Some(delivery) = deliveries.recv().await {
            let target_gone = match (delivery, &follow) {
                (Delivery::Event(ev), _) if ev.event == "stopped" => {
                    if follow.is_some() {
                        shared.targets.lock().current = Some(client.clone());
                    }
                    shared.apply(ev);
                    false
                }
                (Delivery::StartDebugging(asked), Some(follow)) => {
                    announced(&shared, follow, asked);
                    false
                }
                // The first target gone before it was configured: the
                // start fails with why, as with one connection.
                (Delivery::Ended(why), Some(_)) if !shared.state.lock().initialized => {
                    shared.ended(why);
                    false
                }
                (Delivery::Ended(_), Some(_)) => true,
                (Delivery::Event(ev), Some(_)) if ev.event == "terminated" => true,
                (delivery, _) => {
                    shared.deliver(delivery);
                    false
                }
            };
            if target_gone && !ended {
                ended = true;
                target_ended(&shared, &client);
            }
        }
    });
}

/// A target announced: counted until it is connected or given up, so the
/// run is not taken for ended meanwhile.
fn announced(shared: &Arc<AdapterState>, follow: &Follow, asked: Value) {
    shared.targets.lock().pending += 1;
    tokio::spawn(connect(shared.clone(), follow.clone(), asked));
}

/// The first connection's events, in a followed run: the program's output
/// (node's own notes left out), its end, and the targets it announces.
pub(super) fn pump_parent(
    shared: Arc<AdapterState>,
    mut deliveries: UnboundedReceiver<Delivery>,
    follow: Option<Follow>,
) {
    tokio::spawn(async move {
        let mut said_terminated = false;
        while let Some(delivery) = deliveries.recv().await {
            let parent_gone = match delivery {
                Delivery::Event(ev) => match ev.event.as_str() {
                    "output" if is_inspector_note(&ev.body) => false,
                    "output" | "exited" => {
                        shared.apply(ev);
                        false
                    }
                    "terminated" => {
                        said_terminated = true;
                        true
                    }
                    _ => false,
                },
                // Its end after its `terminated` is the session's close;
                // without one, the adapter broke off: said as that, not
                // as a program that ended.
                Delivery::Ended(_) if said_terminated => false,
                Delivery::Ended(why) => {
                    shared.parent_ended();
                    shared.ended(why);
                    false
                }
                Delivery::StartDebugging(asked) => {
                    if let Some(follow) = &follow {
                        announced(&shared, follow, asked);
                    }
                    false
                }
            };
            if parent_gone {
                shared.parent_ended();
                if follow.is_some() {
                    shared.apply(DapEvent::new("terminated", json!({})));
                }
            }
        }
    });
}

/// What node prints of the inspector and js-debug of its bootloader:
/// the debugger's doing, not the program's output.
fn is_inspector_note(body: &Value) -> bool {
    let text = body["output"].as_str().unwrap_or_default().trim();
    text == "Debugger attached."
        || text == "Waiting for the debugger to disconnect..."
        || text.starts_with("Error in the js-debug bootloader, please report to https://aka.ms/js-dbg-issue")
        || text.contains("Warning: Using the inspector with --test forces running at a concurrency of 1")
}

/// One target's process ended: ops go to the newest that runs; when none
/// runs or is announced, the run counts as ended unless another comes (or
/// js-debug says it ended) within [`NEXT_TARGET_WAIT`]. A target is
/// counted once, though both its connection's end and a failed
/// configuration report it; returns whether this call counted it.
fn target_ended(shared: &Arc<AdapterState>, client: &DapClient) -> bool {
    let was_current = {
        let mut t = shared.targets.lock();
        let before = t.live.len();
        t.live.retain(|c| !c.same(client));
        if t.live.len() == before {
            return false;
        }
        let was_current = t.current.as_ref().is_some_and(|c| c.same(client));
        if was_current {
            t.current = t.live.last().cloned();
        }
        was_current
    };
    // The stop shown was this process's: it is over with it.
    if was_current {
        shared.state.lock().stop = None;
    }
    tracing::debug!(target: "tether_actors::dap", "a followed process ended");
    end_when_quiet(shared);
    true
}

/// When no process runs or is announced, the run counts as ended unless
/// another comes (or js-debug says it ended) within [`NEXT_TARGET_WAIT`].
fn end_when_quiet(shared: &Arc<AdapterState>) {
    let (quiet, opened) = {
        let t = shared.targets.lock();
        (t.live.is_empty() && t.pending == 0, t.opened)
    };
    if !quiet {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        tokio::time::sleep(NEXT_TARGET_WAIT).await;
        let quiet = {
            let t = shared.targets.lock();
            t.live.is_empty() && t.pending == 0 && t.opened == opened
        };
        if quiet && !shared.state.lock().terminated {
            shared.apply(DapEvent::new("terminated", json!({})));
        }
    });
}

/// Connects the target a `startDebugging` announced and configures it as
/// the session's first was: `initialize`, its `launch` (or `attach`), the
/// breakpoints, function breakpoints and exception filters,
/// `configurationDone`. A target that
/// cannot be connected is said in the adapter's console lines.
async fn connect(shared: Arc<AdapterState>, follow: Follow, asked: Value) {
    let mut joined = None;
    let result = open_target(&shared, &follow, &asked, &mut joined).await;
    if joined.is_none() {
        shared.targets.lock().pending -= 1;
        end_when_quiet(&shared);
    }
    if let Err(e) = result {
        let name = asked["configuration"]["name"].as_str().unwrap_or("a process").to_string();
        shared.state.lock().notes.push(Note::NotFollowed { name, why: e });
        if let Some(client) = joined {
            // Let go of it, so that it runs on rather than waits.
            let bound = crate::dap::client::REQUEST_TIMEOUT.min(Duration::from_secs(2));
            let _ = client.disconnect(false, bound).await;
            target_ended(&shared, &client);
        }
    }
}

/// Connects to the process js-debug announced, starts its session and
/// configures it as the session's first was.
async fn open_target(
    shared: &Arc<AdapterState>,
    follow: &Follow,
    asked: &Value,
    joined: &mut Option<DapClient>,
) -> Result<(), Step> {
    let configuration = asked["configuration"].clone();
    if !configuration.is_object() {
        return Err(Step::ChildWithoutConfiguration { asked: asked.to_string() });
    }
    let how = if asked["request"] == "attach" { Start::Attach } else { Start::Launch };
    let stream = crate::dap::client::connect_tcp(follow.port)
        .await
        .map_err(|e| Step::ChildNotConnected { port: follow.port, error: e.to_string() })?;
    let (r, w) = stream.into_split();
    let n = shared.targets.lock().opened + 1;
    let (client, mut events) = DapClient::connect(&format!("{} (process {n})", follow.name), r, w);
    // Joined before the breakpoints are read: a change meanwhile reaches it.
    let stopped = shared.state.lock().stop.is_some();
    {
        let mut t = shared.targets.lock();
        t.pending -= 1;
        t.join(&client, stopped);
    }
    *joined = Some(client.clone());
    let adapter = follow.adapter;
    let id = adapter.quirks.child_adapter_id.unwrap_or(adapter.id);
    client
        .initialize(id, true)
        .await
        .map_err(|e| Step::Request { request: "initialize", error: e.to_string() })?;
    let launched = client.start_program(how, configuration, RUN_WAIT);
    // Its first events, until `initialized`, are kept for the pump.
    let mut early = Vec::new();
    let deadline = tokio::time::Instant::now() + INITIALIZED_WAIT;
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Delivery::Event(ev))) if ev.event == "initialized" => break,
            Ok(Some(delivery)) => early.push(delivery),
            Ok(None) => return Err(Step::ClosedBefore { event: "initialized" }),
            Err(_) => return Err(Step::NoEvent { event: "initialized", waited: INITIALIZED_WAIT }),
        }
    }
    // The first connection's capabilities: every process is the same adapter's.
    let caps = shared.targets.lock().caps.clone();
    if let Some(caps) = caps {
        // What a followed process could not take is not the session's answer.
        let _ = configure(&client, shared, adapter, &caps, Target::More).await;
    }
    // Pumped from here: a stop after configurationDone is the session's.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for ev in early {
        let _ = tx.send(ev);
    }
    tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            if tx.send(ev).is_err() {
                break;
            }
        }
    });
    pump(shared.clone(), client.clone(), rx, Some(follow.clone()));
    client
        .configuration_done()
        .await
        .map_err(|e| Step::Request { request: "configurationDone", error: e.to_string() })?;
    launched.await.map_err(|e| Step::Request { request: how.command(), error: e.to_string() })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_target_that_ends_twice_is_counted_once() {
        let (ours, theirs) = tokio::io::duplex(1024);
        let (r, w) = tokio::io::split(ours);
        let (client, _events) = DapClient::connect("child", r, w);
        let shared = Arc::new(AdapterState {
            state: Default::default(),
            targets: Default::default(),
            changed: Default::default(),
            op_cancel: Default::default(),
        });
        shared.targets.lock().join(&client, false);
        assert!(target_ended(&shared, &client), "the first report counts");
        assert!(!target_ended(&shared, &client), "the second is the same end");
        let t = shared.targets.lock();
        assert!(t.live.is_empty() && t.current.is_none());
        drop(theirs);
    }
}
