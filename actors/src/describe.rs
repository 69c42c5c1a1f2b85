//! The supervision tree: every actor answers [`Describe`] with an
//! [`ActorNode`], and the router assembles them into one tree that hosts
//! print (`tether tree`) or read as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// Asks an actor to describe itself and its children.
#[derive(Debug, Clone, Copy, Default)]
pub struct Describe;

impl actix::Message for Describe {
    type Result = ActorNode;
}

/// One actor in the supervision tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActorNode {
    /// What kind of actor (`router`, `ast`, `serial-lane`, `lsp-server`, …).
    pub kind: String,
    /// Which one of its kind (a root, a language, a conversation).
    pub id: String,
    /// Its state in a word or two (`ready`, `starting`, `crashed`, …).
    pub state: String,
    /// The conversation it belongs to; `None` for what the whole run
    /// shares (language servers, parsers, the router).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The OS process it owns, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Milliseconds since it (or its process) started.
    pub uptime_ms: u64,
    /// How many times it was restarted, where restarts apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u32>,
    /// Milliseconds until it is ended regardless (a debug session's TTL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_left_ms: Option<u64>,
    /// Work accepted and not yet answered.
    pub pending: u64,
    /// The last thing that went wrong with it (a crash, a failed start),
    /// in one sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Anything else worth a glance, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub detail: BTreeMap<String, serde_json::Value>,
    /// The actors it supervises.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ActorNode>,
}

/// How long a tree dump waits for one actor; a busy one (starting a
/// server, running an atomic handler) is shown as busy instead of holding
/// the whole dump.
pub const DESCRIBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Asks `actor` to describe itself, at most [`DESCRIBE_TIMEOUT`]; a late
/// or dead actor is described as such.
pub async fn describe_or_busy(actor: &actix::Recipient<Describe>, kind: &str) -> ActorNode {
    match tokio::time::timeout(DESCRIBE_TIMEOUT, actor.send(Describe)).await {
        Ok(Ok(node)) => node,
        Ok(Err(e)) => ActorNode::new(kind, "?", &format!("unreachable: {e}"), 0, 0),
        Err(_) => ActorNode::new(
            kind,
            "?",
            "busy (did not answer within 2 s: starting, reloading or running)",
            0,
            1,
        ),
    }
}

impl ActorNode {
    /// A node with no process, no restarts, no detail and no children.
    pub fn new(kind: &str, id: &str, state: &str, uptime_ms: u64, pending: u64) -> Self {
        Self {
            kind: kind.to_string(),
            id: id.to_string(),
            state: state.to_string(),
            owner: None,
            pid: None,
            uptime_ms,
            restarts: None,
            ttl_left_ms: None,
            pending,
            last_error: None,
            detail: BTreeMap::new(),
            children: Vec::new(),
        }
    }

    /// Adds a detail entry.
    pub fn with_detail(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.detail.insert(key.to_string(), value.into());
        self
    }

    /// Marks the conversation it belongs to.
    pub fn owned_by(mut self, conversation: &str) -> Self {
        self.owner = Some(conversation.to_string());
        self
    }

    /// Pending work here and in every descendant.
    pub fn total_pending(&self) -> u64 {
        self.pending + self.children.iter().map(ActorNode::total_pending).sum::<u64>()
    }

    /// Every node of the tree, this one first, depth first.
    pub fn walk(&self) -> Vec<&ActorNode> {
        let mut out = vec![self];
        for child in &self.children {
            out.extend(child.walk());
        }
        out
    }

    /// The tree as indented text, one actor a line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out, 0);
        out
    }

    fn write_text(&self, out: &mut String, depth: usize) {
        let _ = write!(out, "{}{} {} [{}]", "  ".repeat(depth), self.kind, self.id, self.state);
        if let Some(owner) = &self.owner
            && self.kind != "conversation"
        {
            let _ = write!(out, " owner={owner}");
        }
        if let Some(pid) = self.pid {
            let _ = write!(out, " pid={pid}");
        }
        let _ = write!(out, " up={}", format_uptime(self.uptime_ms));
        if let Some(restarts) = self.restarts {
            let _ = write!(out, " restarts={restarts}");
        }
        if let Some(ttl) = self.ttl_left_ms {
            let _ = write!(out, " ttl_left={}", format_uptime(ttl));
        }
        let _ = write!(out, " pending={}", self.pending);
        for (key, value) in &self.detail {
            // Sizes and durations read as such; the data keeps the numbers.
            match (value, value.as_u64()) {
                (_, Some(n)) if key.ends_with("_bytes") => {
                    let _ = write!(out, " {}={}", key.trim_end_matches("_bytes"), format_size(n));
                }
                (_, Some(n)) if key.ends_with("_ms") => {
                    let _ = write!(out, " {}={}", key.trim_end_matches("_ms"), format_uptime(n));
                }
                (serde_json::Value::String(s), _) => {
                    let _ = write!(out, " {key}={s}");
                }
                (other, _) => {
                    let _ = write!(out, " {key}={other}");
                }
            }
        }
        if let Some(error) = &self.last_error {
            let _ = write!(out, " last_error={error:?}");
        }
        out.push('\n');
        for child in &self.children {
            child.write_text(out, depth + 1);
        }
    }
}

/// A size in the unit that reads best: `312 MiB`, `6.0 GiB`.
pub fn format_size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", bytes.div_ceil(MIB))
    }
}

fn format_uptime(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        _ => format!("{}m{}s", ms / 60_000, (ms / 1000) % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_indents_children() {
        let mut root = ActorNode::new("router", "run", "ready", 1500, 2);
        root.children.push(ActorNode::new("ast", "grammars", "ready", 20, 0).with_detail("staged", 3));
        root.children.push(
            ActorNode::new("lsp-server", "pyright@.", "ready", 20, 0)
                .with_detail("memory_bytes", 300u64 << 20)
                .with_detail("idle_ms", 61_000),
        );
        let text = root.to_text();
        assert_eq!(
            text,
            "router run [ready] up=1.5s pending=2\n  ast grammars [ready] up=20ms pending=0 staged=3\n  lsp-server pyright@. [ready] up=20ms pending=0 idle=1m1s memory=300 MiB\n"
        );
        let json = serde_json::to_value(&root).unwrap();
        assert_eq!(json["children"][0]["detail"]["staged"], 3);
    }
}
