//! Where cards are shown: the [`QuestionPort`] trait an embedding host
//! implements, and [`ChannelPort`], the port for Rust hosts and tests that
//! answer from their own task.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::{mpsc, oneshot};

use super::{Card, Reply};

/// The answer a port brings back, or why it could not.
pub type AskFuture = Pin<Box<dyn Future<Output = Result<Reply, String>> + Send>>;

/// Shows cards to a human and brings back their answers.
pub trait QuestionPort: Send + Sync + 'static {
    /// Whether a human can be reached right now. `Err` says why not; the
    /// gate then fails the call at once instead of waiting on nobody.
    fn reachable(&self) -> Result<(), String>;

    /// Shows `card` in `target` (the place the host named when it
    /// connected the port) and resolves with the answer. The gate bounds
    /// the wait; dropping the future withdraws the card.
    fn ask(&self, target: &str, card: &Card) -> AskFuture;

    /// What the port is, for the supervision tree (`terminal`, `mcp
    /// elicitation`, `host channel`).
    fn name(&self) -> String;

    /// Whether each conversation's cards go to a human of its own (one MCP
    /// client per HTTP session): the gate then shows one card at a time per
    /// conversation, not per run, so one unanswered card never holds up
    /// another conversation's.
    fn human_per_conversation(&self) -> bool {
        false
    }
}

/// A card handed to the host through a [`ChannelPort`]; answer it once.
#[derive(Debug)]
pub struct Asked {
    /// Where the card is to be shown.
    pub target: String,
    /// What to show.
    pub card: Card,
    reply: oneshot::Sender<Reply>,
}

impl Asked {
    /// Sends the human's answer back to the waiting call.
    pub fn answer(self, reply: Reply) {
        let _ = self.reply.send(reply);
    }

    /// Chooses options by label.
    pub fn choose(self, labels: &[&str]) {
        self.answer(Reply::Answered { labels: labels.iter().map(|l| l.to_string()).collect(), text: None });
    }

    /// Answers with typed text.
    pub fn type_text(self, text: &str) {
        self.answer(Reply::Answered { labels: Vec::new(), text: Some(text.to_string()) });
    }

    /// The human skipped the card.
    pub fn skip(self) {
        self.answer(Reply::Skipped);
    }

    /// Whether the call that asked has stopped waiting (timed out, cancelled).
    pub fn withdrawn(&self) -> bool {
        self.reply.is_closed()
    }
}

/// A port that hands each card to the host as an [`Asked`] on a channel.
/// Reachable while the host keeps the receiver.
#[derive(Debug, Clone)]
pub struct ChannelPort {
    tx: mpsc::Sender<Asked>,
}

/// How many cards may wait in a [`ChannelPort`]'s channel.
pub const CHANNEL_CAPACITY: usize = 16;

impl ChannelPort {
    /// A port and the receiver the host answers from.
    pub fn new() -> (Self, mpsc::Receiver<Asked>) {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        (Self { tx }, rx)
    }
}

impl QuestionPort for ChannelPort {
    fn reachable(&self) -> Result<(), String> {
        if self.tx.is_closed() {
            return Err("the host's question channel is closed, so no one is there to answer".into());
        }
        Ok(())
    }

    fn ask(&self, target: &str, card: &Card) -> AskFuture {
        let tx = self.tx.clone();
        let (reply, answer) = oneshot::channel();
        let asked = Asked { target: target.to_string(), card: card.clone(), reply };
        Box::pin(async move {
            tx.send(asked)
                .await
                .map_err(|_| "the host's question channel closed before the card was shown".to_string())?;
            answer.await.map_err(|_| "the host dropped the card without answering".to_string())
        })
    }

    fn name(&self) -> String {
        "host channel".into()
    }
}
