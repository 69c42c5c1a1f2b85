//! The MCP elicitation port: a card becomes an elicitation form on the
//! client (`elicitation/create`), its answer a [`Reply`]. Reachable only
//! when the connected client declared the elicitation capability; a
//! decline or cancel on the client is a skip.

use std::sync::{Arc, OnceLock};

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use serde_json::{Value, json};
use tether_actors::question::port::{AskFuture, QuestionPort};
use tether_actors::question::{ALLOW, Card, DENY, Reply};

/// The client connection, set when it initializes.
pub type PeerSlot = Arc<OnceLock<Peer<RoleServer>>>;

/// Whether the client `peer` holds declared form elicitation: only then
/// can it show a card.
pub fn can_elicit(peer: &PeerSlot) -> bool {
    peer.get().is_some_and(|p| p.supported_elicitation_modes().contains(&ElicitationMode::Form))
}

/// Shows cards as elicitation forms on the MCP client.
pub struct McpPort {
    peer: PeerSlot,
}

impl McpPort {
    /// A port on whichever client `peer` will hold.
    pub fn new(peer: PeerSlot) -> Self {
        Self { peer }
    }
}

/// The form's field names.
const CHOICE: &str = "choice";
const CHOICES: &str = "choices";
const ANSWER: &str = "answer";
const DECISION: &str = "decision";

/// The form for `card`: one enum field (or a multi-select array) for the
/// options, a string field for free text; a permission card is a single
/// required allow/deny field.
pub fn form_schema(card: &Card) -> Value {
    let labels: Vec<&str> = card.options.iter().map(|o| o.label.as_str()).collect();
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    if card.is_permission() {
        properties.insert(
            DECISION.into(),
            json!({"type": "string", "title": "Permission", "enum": [ALLOW, DENY], "enumNames": ["Allow", "Deny"]}),
        );
        required.push(DECISION);
    } else {
        if !labels.is_empty() {
            let names: Vec<String> = card
                .options
                .iter()
                .enumerate()
                .map(|(i, o)| match &o.description {
                    Some(d) => format!("{}. {} — {d}", i + 1, o.label),
                    None => format!("{}. {}", i + 1, o.label),
                })
                .collect();
            if card.multi_select {
                let any_of: Vec<Value> =
                    labels.iter().zip(&names).map(|(l, n)| json!({"const": l, "title": n})).collect();
                properties.insert(
                    CHOICES.into(),
                    json!({"type": "array", "title": "Choose one or more", "items": {"anyOf": any_of}}),
                );
            } else {
                properties.insert(
                    CHOICE.into(),
                    json!({"type": "string", "title": "Choose one", "enum": labels, "enumNames": names}),
                );
            }
        }
        if card.allow_free_text {
            properties.insert(ANSWER.into(), json!({"type": "string", "title": "Your answer"}));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// The form's content as a reply; labels not on the card are refused.
pub fn reply_from_form(card: &Card, content: Option<&Value>) -> Result<Reply, String> {
    let empty = json!({});
    let content = content.unwrap_or(&empty);
    if card.is_permission() {
        return Ok(match content[DECISION].as_str() {
            Some(ALLOW) => Reply::Answered { labels: vec![ALLOW.into()], text: None },
            Some(DENY) => Reply::Answered { labels: vec![DENY.into()], text: None },
            _ => Reply::Skipped,
        });
    }
    let mut labels: Vec<String> = Vec::new();
    if let Some(one) = content[CHOICE].as_str() {
        labels.push(one.to_string());
    }
    if let Some(many) = content[CHOICES].as_array() {
        labels.extend(many.iter().filter_map(|v| v.as_str()).map(str::to_string));
    }
    if let Some(bad) = labels.iter().find(|l| !card.options.iter().any(|o| &o.label == *l)) {
        return Err(format!("the client answered with `{bad}`, which is not one of the card's options"));
    }
    if labels.len() > 1 && !card.multi_select {
        return Err("the client chose several options on a single-choice card".into());
    }
    let text = content[ANSWER].as_str().map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
    if text.is_some() && !card.allow_free_text {
        return Err("the client sent free text on a card that does not accept it".into());
    }
    if labels.is_empty() && text.is_none() {
        return Ok(Reply::Skipped);
    }
    Ok(Reply::Answered { labels, text })
}

impl QuestionPort for McpPort {
    fn reachable(&self) -> Result<(), String> {
        let Some(peer) = self.peer.get() else {
            return Err("no MCP client has connected yet".into());
        };
        if !can_elicit(&self.peer) {
            let name =
                peer.peer_info().map(|i| i.client_info.name.clone()).unwrap_or_else(|| "the client".into());
            return Err(format!(
                "the MCP client `{name}` did not declare the elicitation capability, so it cannot show a question"
            ));
        }
        Ok(())
    }

    fn ask(&self, _target: &str, card: &Card) -> AskFuture {
        let peer = self.peer.get().cloned();
        let card = card.clone();
        Box::pin(async move {
            let peer = peer.ok_or("no MCP client has connected yet")?;
            let requested_schema: ElicitationSchema = serde_json::from_value(form_schema(&card))
                .map_err(|e| format!("the card could not be turned into a form: {e}"))?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: card.render(),
                requested_schema,
            };
            let result = peer
                .create_elicitation(params)
                .await
                .map_err(|e| format!("the client's elicitation failed: {e}"))?;
            match result.action {
                ElicitationAction::Accept => reply_from_form(&card, result.content.as_ref()),
                // Decline, cancel, and whatever later versions add: a skip.
                _ => Ok(Reply::Skipped),
            }
        })
    }

    fn name(&self) -> String {
        "mcp elicitation".into()
    }
}

/// The port of an HTTP run: each card goes to the client of the session
/// whose conversation asked it, never to another session's.
#[derive(Default)]
pub struct SessionsPort {
    peers: parking_lot::Mutex<std::collections::HashMap<String, PeerSlot>>,
}

impl SessionsPort {
    /// `conversation`'s cards go to the client `peer` holds.
    pub fn register(&self, conversation: &str, peer: PeerSlot) {
        self.peers.lock().insert(conversation.to_string(), peer);
    }

    /// `conversation`'s session ended.
    pub fn unregister(&self, conversation: &str) {
        self.peers.lock().remove(conversation);
    }
}

impl QuestionPort for SessionsPort {
    fn reachable(&self) -> Result<(), String> {
        // Which session asks is known only with the card; `ask` says why
        // one cannot be shown.
        Ok(())
    }

    fn ask(&self, target: &str, card: &Card) -> AskFuture {
        let peer = card.conversation.as_deref().and_then(|c| self.peers.lock().get(c).cloned());
        let Some(peer) = peer else {
            return Box::pin(std::future::ready(Err(
                "no MCP session of this conversation is connected to show the question".to_string(),
            )));
        };
        let port = McpPort::new(peer);
        if let Err(why) = port.reachable() {
            return Box::pin(std::future::ready(Err(why)));
        }
        port.ask(target, card)
    }

    fn name(&self) -> String {
        "mcp elicitation, per session".into()
    }

    fn human_per_conversation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tether_actors::question::{CardKind, Choice};

    fn card(multi: bool) -> Card {
        Card {
            kind: CardKind::Question,
            question: "Which?".into(),
            context: None,
            options: vec![
                Choice { label: "a".into(), description: Some("first".into()) },
                Choice { label: "b".into(), description: None },
            ],
            allow_free_text: true,
            multi_select: multi,
            timeout: Duration::from_secs(5),
            conversation: None,
        }
    }

    #[test]
    fn every_form_is_a_valid_elicitation_schema() {
        for c in [card(false), card(true), Card::permission("eval", "exec", "x", Duration::from_secs(1))] {
            let schema = form_schema(&c);
            serde_json::from_value::<ElicitationSchema>(schema.clone())
                .unwrap_or_else(|e| panic!("{schema}: {e}"));
        }
    }

    #[test]
    fn form_answers_become_replies() {
        let single = card(false);
        assert_eq!(
            reply_from_form(&single, Some(&json!({"choice": "b"}))),
            Ok(Reply::Answered { labels: vec!["b".into()], text: None })
        );
        assert_eq!(reply_from_form(&single, Some(&json!({}))), Ok(Reply::Skipped));
        assert!(reply_from_form(&single, Some(&json!({"choice": "z"}))).unwrap_err().contains("`z`"));
        let multi = card(true);
        assert_eq!(
            reply_from_form(&multi, Some(&json!({"choices": ["b", "a"], "answer": " also c "}))),
            Ok(Reply::Answered { labels: vec!["b".into(), "a".into()], text: Some("also c".into()) })
        );
        let perm = Card::permission("eval", "exec", "x", Duration::from_secs(1));
        assert!(reply_from_form(&perm, Some(&json!({"decision": "allow"}))).unwrap().grants());
        assert!(!reply_from_form(&perm, Some(&json!({"decision": "deny"}))).unwrap().grants());
    }
}
