//! One cell's run, moved out of the actor while it lasts: the events
//! between cells, the wait on the interpreter, the bridge calls and the
//! idle and wall clocks, and the words for an interpreter that died.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::KernelLang;
use super::outcome::{
    BridgeAnswer, CellNote, CellOutcome, CellStatus, Display, INTERRUPT_GRACE, MAX_CELL_TIME, MAX_OUTPUT,
    RunCell,
};
use super::protocol::{Event, send};
use crate::process::ExitInfo;

/// Most display items kept per cell.
const MAX_DISPLAYS: usize = 50;
/// Output that arrived between cells is quoted up to this many characters.
const MAX_LATE_OUTPUT: usize = 2_000;

pub(super) fn death_words(lang: KernelLang, info: &ExitInfo) -> String {
    let cause = if info.status == "killed by signal 9" {
        "killed by signal 9 (out of memory, or killed from outside)".to_string()
    } else if info.status == "killed by signal 11" {
        "killed by signal 11 (a segmentation fault)".to_string()
    } else {
        info.status.clone()
    };
    let mut text = format!("the {} interpreter died ({cause})", lang.as_str());
    let lines = crash_lines(&info.stderr_tail);
    if !lines.is_empty() {
        text.push_str(&format!("; last stderr: {}", lines.join(" | ")));
    }
    text
}

/// What of the stderr tail says where it died: a fatal error's own line
/// and the cell's frames when the tail holds a crash report (Python's
/// faulthandler), else its last three lines.
fn crash_lines(tail: &[String]) -> Vec<&str> {
    let telling: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| l.starts_with("Fatal Python error") || l.contains("File \"<cell "))
        .collect();
    if !telling.is_empty() {
        return telling;
    }
    let from = tail.len().saturating_sub(3);
    tail[from..].iter().map(String::as_str).collect()
}

/// What the cell loop needs, moved out of the actor while the cell runs.
pub(super) struct CellRun {
    pub(super) lang: KernelLang,
    pub(super) stdin: mpsc::UnboundedSender<String>,
    pub(super) events: mpsc::UnboundedReceiver<Event>,
    pub(super) id: u64,
    pub(super) msg: RunCell,
    pub(super) notes: Vec<CellNote>,
}

/// What the loop hands back: the outcome, the event receiver (if the
/// process lives on), and whether the process must be dropped.
pub(super) struct CellEnd {
    pub(super) outcome: CellOutcome,
    pub(super) events: Option<mpsc::UnboundedReceiver<Event>>,
    pub(super) kill: bool,
    pub(super) lost: Option<String>,
}

/// When the cell's wait next wakes: the idle deadline (stopped while a
/// bridge call is pending), never past the wall limit; once interrupted,
/// the interrupt's grace.
fn wake_at(idle: Instant, wall: Instant, interrupted_at: Option<Instant>, bridge_pending: bool) -> Instant {
    match (interrupted_at, bridge_pending) {
        (Some(at), false) => at + INTERRUPT_GRACE,
        // The cell may be blocked on the bridge call; its grace starts no
        // sooner than the wall.
        (Some(at), true) => at.max(wall) + INTERRUPT_GRACE,
        (None, false) => idle.min(wall),
        (None, true) => wall,
    }
}

pub(super) async fn run_loop(mut run: CellRun) -> CellEnd {
    let started = Instant::now();
    let mut outcome = CellOutcome {
        status: CellStatus::Ok,
        output: String::new(),
        dropped_bytes: 0,
        tail: String::new(),
        echo: None,
        displays: Vec::new(),
        error: None,
        notes: std::mem::take(&mut run.notes),
        elapsed_ms: 0,
    };
    let cancel = run.msg.cancel.clone();
    if cancel.is_cancelled() {
        outcome.status = CellStatus::Interrupted;
        outcome.notes.push(CellNote::CancelledBeforeStart);
        return CellEnd { outcome, events: Some(run.events), kill: false, lost: None };
    }
    // What came between cells belongs to no cell: output from a thread,
    // timer or child an earlier cell left, a tool call such a thread made.
    // Said apart, never mixed into this cell's output.
    let mut late = String::new();
    while let Ok(ev) = run.events.try_recv() {
        match ev {
            Event::Exited(info) => {
                let why = death_words(run.lang, &info);
                outcome.status = CellStatus::Died;
                outcome.notes.push(CellNote::DiedBeforeRun { why: why.clone() });
                return CellEnd { outcome, events: None, kill: true, lost: Some(why) };
            }
            Event::Line(v) => match v["ev"].as_str() {
                Some("out") => late.push_str(v["text"].as_str().unwrap_or("")),
                Some("tool") => {
                    let text =
                        "the cell that made this tool call had already ended; call it from a running cell";
                    send(
                        &run.stdin,
                        json!({"op": "tool_result", "id": v["id"], "is_error": true, "text": text, "data": null}),
                    );
                }
                _ => {}
            },
        }
    }
    if !late.is_empty() {
        let (shown, _) = crate::text::cut(&late, MAX_LATE_OUTPUT);
        outcome.notes.push(CellNote::StrayOutput { shown: shown.to_string() });
    }
    send(&run.stdin, json!({"op": "run", "id": run.id, "code": run.msg.code}));
    let budget = run.msg.idle_budget;
    let mut cell = Cell {
        run,
        outcome,
        started,
        budget,
        deadline: Instant::now() + budget,
        bridges: JoinSet::new(),
        interrupted_at: None,
        cancelled: false,
        walled: false,
    };
    loop {
        // The idle clock stops while a bridge call is pending.
        let pending = !cell.bridges.is_empty();
        let until = wake_at(cell.deadline, started + MAX_CELL_TIME, cell.interrupted_at, pending);
        let idle_sleep = tokio::time::sleep_until(until.into());
        let step = tokio::select! {
            ev = cell.run.events.recv() => cell.on_event(ev),
            Some(joined) = cell.bridges.join_next(), if pending => cell.on_bridge_answer(joined),
            () = cancel.cancelled(), if cell.interrupted_at.is_none() => cell.on_cancel(),
            () = idle_sleep => cell.on_wake(),
        };
        if let ControlFlow::Break(lost) = step {
            return cell.end(lost);
        }
    }
}

/// A cell running: what its wait keeps between wakes.
struct Cell {
    run: CellRun,
    outcome: CellOutcome,
    started: Instant,
    budget: Duration,
    /// When the idle budget runs out, unless progress moves it.
    deadline: Instant,
    bridges: JoinSet<(u64, BridgeAnswer)>,
    interrupted_at: Option<Instant>,
    /// Whether the interrupt was for the caller's cancel.
    cancelled: bool,
    /// Whether the interrupt was for running past MAX_CELL_TIME.
    walled: bool,
}

/// What a wake leads to: wait on, or end the cell — the process kept
/// (`None`), or lost for the reason given.
type Step = ControlFlow<Option<String>>;

impl Cell {
    /// The cell's end: the process lives on when `lost` is `None`, else it
    /// is dropped and `lost` says why.
    fn end(mut self, lost: Option<String>) -> CellEnd {
        self.outcome.elapsed_ms = self.started.elapsed().as_millis() as u64;
        match lost {
            None => CellEnd { outcome: self.outcome, events: Some(self.run.events), kill: false, lost: None },
            Some(why) => CellEnd { outcome: self.outcome, events: None, kill: true, lost: Some(why) },
        }
    }

    /// The interpreter said something, exited, or closed its output.
    fn on_event(&mut self, ev: Option<Event>) -> Step {
        let Some(ev) = ev else {
            self.outcome.status = CellStatus::Died;
            let why = format!("the {} interpreter closed its output", self.run.lang.as_str());
            self.outcome.notes.push(CellNote::Died { why: why.clone() });
            return ControlFlow::Break(Some(why));
        };
        match ev {
            Event::Exited(info) => {
                let why = death_words(self.run.lang, &info);
                self.outcome.status = CellStatus::Died;
                self.outcome.notes.push(CellNote::Died { why: why.clone() });
                ControlFlow::Break(Some(why))
            }
            Event::Line(v) => {
                self.deadline = Instant::now() + self.budget;
                self.on_line(v)
            }
        }
    }

    /// A line of the driver's protocol, during the cell.
    fn on_line(&mut self, v: Value) -> Step {
        match v["ev"].as_str() {
            Some("out") => self.on_output(v["text"].as_str().unwrap_or("")),
            Some("garbled") => {
                let began = v["text"].as_str().unwrap_or("").to_string();
                self.outcome.notes.push(CellNote::Garbled { began });
            }
            Some("display") if self.outcome.displays.len() < MAX_DISPLAYS => {
                self.outcome.displays.push(Display {
                    text: v["text"].as_str().unwrap_or("").to_string(),
                    html: v["html"].as_str().map(str::to_string),
                    png: v["png"].as_str().map(str::to_string),
                });
            }
            Some("tool") => self.on_tool_call(&v),
            // A `done` of another cell — written by a process a cell
            // forked, which carried the driver on — is not this
            // cell's answer.
            Some("done") if v["id"].as_u64() != Some(self.run.id) => {}
            Some("done") => return self.on_done(&v),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    /// Output, kept up to [`MAX_OUTPUT`] bytes; the rest is counted.
    fn on_output(&mut self, text: &str) {
        let room = MAX_OUTPUT.saturating_sub(self.outcome.output.len());
        if text.len() <= room {
            self.outcome.output.push_str(text);
        } else {
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.outcome.output.push_str(&text[..end]);
            self.outcome.dropped_bytes += (text.len() - end) as u64;
        }
    }

    /// A `tool(name, args)` from the cell: relayed through the bridge,
    /// unless the tool would wait for this very cell.
    fn on_tool_call(&mut self, v: &Value) {
        let id = v["id"].as_u64().unwrap_or(0);
        let name = v["name"].as_str().unwrap_or("").to_string();
        let args = v["args"].clone();
        if self.run.msg.reentrant.contains(&name.as_str()) {
            let answer = BridgeAnswer {
                is_error: true,
                text: format!(
                    "`{name}` cannot be called from inside a cell: it would wait for the very mailbox this cell holds. Call it directly instead"
                ),
                data: None,
            };
            send(
                &self.run.stdin,
                json!({"op": "tool_result", "id": id, "is_error": true, "text": answer.text, "data": null}),
            );
        } else {
            let call = (self.run.msg.bridge)(name, args);
            self.bridges.spawn(async move { (id, call.await) });
        }
    }

    /// The cell's own `done`: its status, echo and error, and notes on why
    /// it was interrupted and on bridge calls it left running.
    fn on_done(&mut self, v: &Value) -> Step {
        let outcome = &mut self.outcome;
        outcome.echo = v["echo"].as_str().map(str::to_string);
        outcome.error = serde_json::from_value(v["error"].clone()).ok();
        outcome.dropped_bytes += v["dropped"].as_u64().unwrap_or(0);
        outcome.tail = v["tail"].as_str().unwrap_or("").to_string();
        if outcome.dropped_bytes > 0 {
            whole_lines(outcome);
        }
        // What the driver says of the cell besides (a rejection nothing
        // handled, in JavaScript).
        let said = v["notes"].as_array().into_iter().flatten().filter_map(Value::as_str);
        outcome.notes.extend(said.map(|note| CellNote::Said(note.to_string())));
        let status = v["status"].as_str().unwrap_or("ok");
        outcome.status = match (status, self.interrupted_at) {
            ("ok", _) => CellStatus::Ok,
            (_, Some(_)) => CellStatus::Interrupted,
            ("interrupted", None) => CellStatus::Interrupted,
            _ => CellStatus::Error,
        };
        if self.cancelled {
            outcome.notes.push(CellNote::CancelledDuringRun);
        } else if self.walled {
            outcome.notes.push(CellNote::Walled { limit: MAX_CELL_TIME });
        } else if self.interrupted_at.is_some() {
            outcome.notes.push(CellNote::Idle { budget: self.budget });
        }
        if !self.bridges.is_empty() {
            // The cell did not wait for them (an un-awaited JS
            // `tool(...)`, a call from a thread): they end with it.
            outcome.notes.push(CellNote::CallsCancelled { count: self.bridges.len() });
        }
        ControlFlow::Break(None)
    }

    /// A bridge call answered: the answer goes back to the cell.
    fn on_bridge_answer(&mut self, joined: Result<(u64, BridgeAnswer), tokio::task::JoinError>) -> Step {
        self.deadline = Instant::now() + self.budget;
        if let Ok((id, answer)) = joined {
            send(
                &self.run.stdin,
                json!({"op": "tool_result", "id": id, "is_error": answer.is_error, "text": answer.text, "data": answer.data}),
            );
        }
        ControlFlow::Continue(())
    }

    /// The caller stopped waiting: the cell is interrupted.
    fn on_cancel(&mut self) -> Step {
        self.cancelled = true;
        self.interrupted_at = Some(Instant::now());
        send(&self.run.stdin, json!({"op": "interrupt", "id": self.run.id}));
        ControlFlow::Continue(())
    }

    /// The idle budget or the wall ran out: the cell is interrupted; if it
    /// already was, the interrupt's grace ran out and the kernel is killed.
    fn on_wake(&mut self) -> Step {
        if self.interrupted_at.is_none() {
            self.interrupted_at = Some(Instant::now());
            self.walled = self.started.elapsed() >= MAX_CELL_TIME;
            send(&self.run.stdin, json!({"op": "interrupt", "id": self.run.id}));
            return ControlFlow::Continue(());
        }
        let why = if self.cancelled {
            format!(
                "the call was cancelled and the cell did not stop within {} s of an interrupt, so the kernel was killed",
                INTERRUPT_GRACE.as_secs()
            )
        } else if self.walled {
            format!(
                "the cell ran for {}, the most a cell may, and did not stop within {} s of an interrupt, so the kernel was killed",
                crate::text::human_duration(MAX_CELL_TIME),
                INTERRUPT_GRACE.as_secs()
            )
        } else {
            format!(
                "the cell made no progress for {} s and did not stop within {} s of an interrupt, so the kernel was killed",
                self.budget.as_secs(),
                INTERRUPT_GRACE.as_secs()
            )
        };
        self.outcome.status = CellStatus::Killed;
        self.outcome.notes.push(CellNote::Killed { why: why.clone() });
        ControlFlow::Break(Some(why))
    }
}

/// Longest partial line cut off the end of a capped output to end it on a
/// whole line (a longer one is cut where the cap fell).
const MAX_PARTIAL_LINE: usize = 8 * 1024;

/// Ends a capped output's head on a whole line and starts its kept tail
/// on one: a cap never shows half a line. What the head gives up is
/// counted with what was not shown.
fn whole_lines(outcome: &mut CellOutcome) {
    let output = &mut outcome.output;
    if let Some(end) = output.rfind('\n').map(|i| i + 1) {
        let partial = output.len() - end;
        if partial > 0 && partial <= MAX_PARTIAL_LINE {
            output.truncate(end);
            outcome.dropped_bytes += partial as u64;
        }
    }
    let tail = &mut outcome.tail;
    if let Some(start) = tail.find('\n').map(|i| i + 1)
        && start < tail.len()
        && start <= MAX_PARTIAL_LINE
    {
        tail.drain(..start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_wakes_at_its_idle_deadline_never_past_the_wall() {
        let now = Instant::now();
        let (idle, wall) = (now + Duration::from_secs(300), now + MAX_CELL_TIME);
        assert_eq!(wake_at(idle, wall, None, false), idle);
        // Output that keeps coming moves the idle deadline, never the wall.
        assert_eq!(wake_at(now + MAX_CELL_TIME * 2, wall, None, false), wall);
        // A pending bridge call stops the idle clock, not the wall.
        assert_eq!(wake_at(idle, wall, None, true), wall);
        assert_eq!(wake_at(idle, wall, Some(now), false), now + INTERRUPT_GRACE);
    }

    #[test]
    fn a_capped_output_shows_whole_lines() {
        let mut outcome = CellOutcome {
            status: CellStatus::Ok,
            output: "line 1\nline 2\nhalf of li".into(),
            dropped_bytes: 100,
            tail: "ne 9\nline 10\n".into(),
            echo: None,
            displays: Vec::new(),
            error: None,
            notes: Vec::new(),
            elapsed_ms: 0,
        };
        whole_lines(&mut outcome);
        assert_eq!((outcome.output.as_str(), outcome.tail.as_str()), ("line 1\nline 2\n", "line 10\n"));
        assert_eq!(outcome.dropped_bytes, 110, "the half line is counted as not shown");
    }
}
