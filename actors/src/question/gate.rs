//! `QuestionGateActor`: holds the port and the target space, shows one
//! card at a time to each human (the run's one human, or with a port that
//! has a human per conversation, each conversation's), and bounds every
//! wait by the card's own timeout, counted from when the card is shown. No
//! human reachable → the ask fails at once; it never waits on nobody.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use tokio_util::sync::CancellationToken;

use super::port::QuestionPort;
use super::{Card, Reply};
use crate::describe::{ActorNode, Describe};
use crate::text::human_duration;

/// Show a card and wait for the answer.
pub struct Ask {
    /// The card.
    pub card: Card,
    /// Cancelled when the caller stops waiting; the card is withdrawn.
    pub cancel: CancellationToken,
}

impl Message for Ask {
    type Result = Result<Reply, AskError>;
}

/// Why a card got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// No human can be reached (no port, a client without elicitation,
    /// no terminal, a closed channel).
    #[error("no human is connected to answer: {0}")]
    NoHuman(String),
    /// The card's time ran out.
    #[error("no answer within {}", human_duration(*.0))]
    TimedOut(std::time::Duration),
    /// The caller cancelled while the card was shown.
    #[error("the call was cancelled while the card was shown")]
    Cancelled,
    /// The port failed while showing the card or reading the answer.
    #[error("the question could not be shown: {0}")]
    Port(String),
}

/// The gate actor.
pub struct QuestionGateActor {
    port: Arc<dyn QuestionPort>,
    target: String,
    started: Instant,
    /// Cards being shown now.
    showing: u64,
    /// One turn per human: the run's, or each conversation's.
    turns: HashMap<Option<String>, Arc<tokio::sync::Mutex<()>>>,
    counts: Counts,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    asked: u64,
    answered: u64,
    skipped: u64,
    timed_out: u64,
    unreachable: u64,
}

impl QuestionGateActor {
    /// A gate showing cards through `port` in `target`.
    pub fn new(port: Arc<dyn QuestionPort>, target: String) -> Self {
        Self {
            port,
            target,
            started: Instant::now(),
            showing: 0,
            turns: HashMap::new(),
            counts: Counts::default(),
        }
    }
}

impl Actor for QuestionGateActor {
    type Context = Context<Self>;
}

impl Handler<Ask> for QuestionGateActor {
    type Result = ResponseActFuture<Self, Result<Reply, AskError>>;

    fn handle(&mut self, msg: Ask, _ctx: &mut Self::Context) -> Self::Result {
        self.counts.asked += 1;
        if let Err(why) = self.port.reachable() {
            self.counts.unreachable += 1;
            return Box::pin(fut::ready(Err(AskError::NoHuman(why))));
        }
        tracing::debug!(target: "tether_actors::question", timeout_s = msg.card.timeout.as_secs(), "question asked");
        let human = if self.port.human_per_conversation() { msg.card.conversation.clone() } else { None };
        let turn = self.turns.entry(human).or_default().clone();
        let port = self.port.clone();
        let target = self.target.clone();
        let Ask { card, cancel } = msg;
        let timeout = card.timeout;
        let wait = async move {
            // The human's turn first (cancellable while queued); the card's
            // time runs from when it is shown.
            let _turn = tokio::select! {
                turn = turn.lock_owned() => turn,
                () = cancel.cancelled() => return Err(AskError::Cancelled),
            };
            let asking = port.ask(&target, &card);
            tokio::select! {
                answer = tokio::time::timeout(timeout, asking) => match answer {
                    Ok(Ok(reply)) => Ok(reply),
                    Ok(Err(why)) => Err(AskError::Port(why)),
                    Err(_) => Err(AskError::TimedOut(timeout)),
                },
                () = cancel.cancelled() => Err(AskError::Cancelled),
            }
        };
        self.showing += 1;
        Box::pin(wait.into_actor(self).map(|result, act, _| {
            act.showing = act.showing.saturating_sub(1);
            let outcome = match &result {
                Ok(Reply::Answered { .. }) => {
                    act.counts.answered += 1;
                    "answered"
                }
                Ok(Reply::Skipped) => {
                    act.counts.skipped += 1;
                    "skipped"
                }
                Err(AskError::TimedOut(_)) => {
                    act.counts.timed_out += 1;
                    "timed out"
                }
                Err(AskError::Cancelled) => "withdrawn",
                Err(_) => "failed",
            };
            tracing::debug!(target: "tether_actors::question", outcome, "question ended");
            result
        }))
    }
}

impl Handler<Describe> for QuestionGateActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let state = match (&self.port.reachable(), self.showing) {
            (_, 1) => "showing a card".to_string(),
            (_, n) if n > 1 => format!("{n} cards asked (one at a time per human)"),
            (Ok(()), _) => "ready".to_string(),
            (Err(why), _) => format!("no human connected: {why}"),
        };
        let c = self.counts;
        MessageResult(
            ActorNode::new(
                "question-gate",
                &self.target,
                &state,
                self.started.elapsed().as_millis() as u64,
                self.showing,
            )
            .with_detail("port", self.port.name())
            .with_detail("asked", c.asked)
            .with_detail("answered", c.answered)
            .with_detail("skipped", c.skipped)
            .with_detail("timed_out", c.timed_out)
            .with_detail("no_human", c.unreachable),
        )
    }
}
