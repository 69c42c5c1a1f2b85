//! What an op answers: a `DebugReply` (the text, its data, and where the
//! op left the program as a typed `RunState`, which the session decides
//! by).

use serde_json::{Value, json};

/// An op's answer.
#[derive(Debug, Clone)]
pub struct DebugReply {
    /// Whether the op failed.
    pub is_error: bool,
    /// What the model reads.
    pub text: String,
    /// Structured form.
    pub data: Value,
    /// Where the op left the program, when it says (`data.state` is
    /// written from it): what the session decides by, never read back
    /// from the JSON.
    pub state: Option<RunState>,
}

/// Where an op left the program.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// Stopped; the frame shown, when the stack could be read.
    Stopped(Option<FrameAt>),
    /// Running.
    Running,
    /// The program exited (with its code, when the adapter said it).
    Exited(Option<i64>),
    /// The session ended without an exit code.
    Terminated,
}

/// The frame a stop is shown at: its id (good while the stop lasts) and
/// where it is, as the reply shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameAt {
    /// The adapter's frame id.
    pub id: u64,
    /// Its file, relative to the working directory when inside it.
    pub path: Option<String>,
    /// Its 1-based line.
    pub line: u64,
}

impl RunState {
    /// Its name in `data.state`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunState::Stopped(_) => "stopped",
            RunState::Running => "running",
            RunState::Exited(_) => "exited",
            RunState::Terminated => "terminated",
        }
    }
}

impl DebugReply {
    pub(super) fn ok(text: impl Into<String>, data: Value) -> Self {
        Self { is_error: false, text: text.into(), data, state: None }
    }
    pub(super) fn err(text: impl Into<String>) -> Self {
        Self { is_error: true, text: text.into(), data: Value::Null, state: None }
    }
    /// An answer that says where the program is: `data.state` written
    /// from `state`, and `state` kept for the session.
    pub(super) fn left(state: RunState, text: impl Into<String>, data: Value) -> Self {
        let mut data = if data.is_object() { data } else { json!({}) };
        data["state"] = json!(state.as_str());
        Self { is_error: false, text: text.into(), data, state: Some(state) }
    }
}
