//! The question gate: the one way a run reaches the human (S9).
//!
//! A [`Card`] is what the human sees — a question with numbered options, or
//! a permission request for a write/exec call. A [`port::QuestionPort`]
//! shows it somewhere (the terminal, an MCP client's elicitation form, a
//! host's own UI through [`port::ChannelPort`]) and brings back a
//! [`Reply`]. The [`gate::QuestionGateActor`] holds the port and the target
//! space, shows one card at a time, and bounds every wait.

pub mod gate;
pub mod port;
pub mod terminal;

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

/// One option on a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// What the human picks, and what comes back.
    pub label: String,
    /// What picking it means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What kind of card it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CardKind {
    /// A question the model asked (`ask_user`).
    Question,
    /// "May tether run this?" before a write- or exec-level call. Its
    /// options are [`ALLOW`] and [`DENY`].
    Permission {
        /// The tool that wants to run.
        tool: String,
    },
}

/// The label that grants a permission card.
pub const ALLOW: &str = "allow";
/// The label that refuses a permission card.
pub const DENY: &str = "deny";

/// What the human is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Card {
    /// Question or permission request.
    #[serde(flatten)]
    pub kind: CardKind,
    /// What is asked.
    pub question: String,
    /// Why it is asked and what depends on the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The choices, in the order they are numbered.
    pub options: Vec<Choice>,
    /// Whether a typed answer is accepted.
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    pub multi_select: bool,
    /// How long the human has; stated on the card.
    #[serde(serialize_with = "secs")]
    pub timeout: Duration,
    /// The conversation it is asked in: a port with a human per
    /// conversation (one MCP client per HTTP session) shows it there.
    #[serde(skip)]
    pub conversation: Option<String>,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

impl Card {
    /// A permission card for `tool`, saying what it is about to do.
    pub fn permission(tool: &str, level: &str, what: &str, timeout: Duration) -> Self {
        Self {
            kind: CardKind::Permission { tool: tool.to_string() },
            question: format!("tether wants to run `{tool}` ({level} level): {what}"),
            context: None,
            options: vec![
                Choice { label: ALLOW.into(), description: Some("run it this once".into()) },
                Choice { label: DENY.into(), description: Some("do not run it; the model is told".into()) },
            ],
            allow_free_text: false,
            multi_select: false,
            timeout,
            conversation: None,
        }
    }

    /// Whether this is a permission card.
    pub fn is_permission(&self) -> bool {
        matches!(self.kind, CardKind::Permission { .. })
    }

    /// The card as text: the question, the context, the numbered options
    /// and the time limit. Every port shows this (an MCP form as its
    /// message, the terminal as the card itself, with [`Card::how_to_answer`]).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.question);
        if let Some(context) = &self.context {
            let _ = writeln!(out, "Context: {context}");
        }
        for (i, choice) in self.options.iter().enumerate() {
            match &choice.description {
                Some(d) => {
                    let _ = writeln!(out, "  {}. {} — {d}", i + 1, choice.label);
                }
                None => {
                    let _ = writeln!(out, "  {}. {}", i + 1, choice.label);
                }
            }
        }
        let _ = write!(out, "Answer within {}.", human_duration(self.timeout));
        out
    }

    /// How to answer by typing: numbers, text, and what an empty line does.
    pub fn how_to_answer(&self) -> String {
        let n = self.options.len();
        let pick = match (n, self.multi_select) {
            (0, _) => None,
            (1, _) => Some("type 1".to_string()),
            (_, false) => Some(format!("type a number 1–{n}")),
            (_, true) => Some(format!("type one or more numbers 1–{n} (e.g. 1,3)")),
        };
        let text = self.allow_free_text.then_some("type your own answer");
        let ways: Vec<String> = pick.into_iter().chain(text.map(str::to_string)).collect();
        if self.is_permission() {
            return format!("{}; an empty answer denies.", ways.join(", or "));
        }
        format!("{}; an empty answer skips the question.", ways.join(", or "))
    }

    /// Reads a typed answer: numbers pick options, an exact label picks it,
    /// anything else is free text when allowed, an empty line skips. `Err`
    /// says what to type instead.
    pub fn parse_typed(&self, line: &str) -> Result<Reply, String> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Reply::Skipped);
        }
        let tokens: Vec<&str> = line.split([',', ' ']).filter(|t| !t.is_empty()).collect();
        let numbers: Option<Vec<usize>> = tokens.iter().map(|t| t.parse::<usize>().ok()).collect();
        if let Some(numbers) = numbers.filter(|_| !self.options.is_empty()) {
            let n = self.options.len();
            if let Some(bad) = numbers.iter().find(|&&i| i == 0 || i > n) {
                return Err(format!("{bad} is not an option; type a number from 1 to {n}"));
            }
            if numbers.len() > 1 && !self.multi_select {
                return Err("choose one option only".into());
            }
            let mut labels: Vec<String> = Vec::new();
            for i in numbers {
                let label = &self.options[i - 1].label;
                if !labels.contains(label) {
                    labels.push(label.clone());
                }
            }
            return Ok(Reply::Answered { labels, text: None });
        }
        if let Some(choice) = self.options.iter().find(|c| c.label.eq_ignore_ascii_case(line)) {
            return Ok(Reply::Answered { labels: vec![choice.label.clone()], text: None });
        }
        if self.allow_free_text {
            return Ok(Reply::Answered { labels: Vec::new(), text: Some(line.to_string()) });
        }
        Err(format!("type a number from 1 to {}", self.options.len()))
    }
}

/// What came back from the human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reply")]
pub enum Reply {
    /// Options chosen (labels, in the order given) and/or typed text.
    Answered {
        /// The chosen options' labels.
        labels: Vec<String>,
        /// The typed answer, when free text was allowed and given.
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// The human chose not to answer.
    Skipped,
}

impl Reply {
    /// Whether a permission card was granted: exactly [`ALLOW`] chosen.
    /// Anything else — deny, skip, a stray text — refuses (fail closed).
    pub fn grants(&self) -> bool {
        matches!(self, Reply::Answered { labels, .. } if labels.len() == 1 && labels[0] == ALLOW)
    }
}

use crate::text::human_duration;

#[cfg(test)]
mod tests {
    use super::*;

    fn card(multi: bool, free: bool) -> Card {
        Card {
            kind: CardKind::Question,
            question: "Which store?".into(),
            context: Some("the cache depends on it".into()),
            options: vec![
                Choice { label: "sqlite".into(), description: Some("one file".into()) },
                Choice { label: "postgres".into(), description: None },
            ],
            allow_free_text: free,
            multi_select: multi,
            timeout: Duration::from_secs(300),
            conversation: None,
        }
    }

    #[test]
    fn renders_numbered_options_and_the_time_limit() {
        let c = card(false, true);
        let text = c.render();
        assert!(text.starts_with("Which store?\nContext: the cache depends on it\n"), "{text}");
        assert!(text.contains("  1. sqlite — one file\n  2. postgres\n"), "{text}");
        assert!(text.ends_with("Answer within 5 min."), "{text}");
        assert_eq!(
            c.how_to_answer(),
            "type a number 1–2, or type your own answer; an empty answer skips the question."
        );
    }

    #[test]
    fn typed_answers() {
        let single = card(false, false);
        assert_eq!(single.parse_typed("  "), Ok(Reply::Skipped));
        assert_eq!(
            single.parse_typed("2"),
            Ok(Reply::Answered { labels: vec!["postgres".into()], text: None })
        );
        assert_eq!(
            single.parse_typed("SQLite"),
            Ok(Reply::Answered { labels: vec!["sqlite".into()], text: None })
        );
        assert!(single.parse_typed("1,2").unwrap_err().contains("one option"));
        assert!(single.parse_typed("3").unwrap_err().contains("1 to 2"));
        assert!(single.parse_typed("redis").unwrap_err().contains("number"));
        let multi = card(true, true);
        assert_eq!(
            multi.parse_typed("2, 1 2"),
            Ok(Reply::Answered { labels: vec!["postgres".into(), "sqlite".into()], text: None })
        );
        assert_eq!(
            multi.parse_typed("redis please"),
            Ok(Reply::Answered { labels: vec![], text: Some("redis please".into()) })
        );
    }

    #[test]
    fn only_an_explicit_allow_grants() {
        let allow = Reply::Answered { labels: vec![ALLOW.into()], text: None };
        assert!(allow.grants());
        assert!(!Reply::Skipped.grants());
        assert!(!Reply::Answered { labels: vec![DENY.into()], text: None }.grants());
        assert!(!Reply::Answered { labels: vec![], text: Some("allow".into()) }.grants());
        let card = Card::permission("eval", "exec", "run a Python cell", Duration::from_secs(60));
        assert!(card.how_to_answer().contains("an empty answer denies"), "{}", card.how_to_answer());
        assert_eq!(card.parse_typed("1").unwrap(), allow);
    }
}
