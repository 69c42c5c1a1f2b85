//! `ask_user` and permission cards through the channel port a Rust host
//! answers from (the MCP and terminal ports have their own tests).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::Harness;
use serde_json::json;
use tether::{ApprovalPolicy, Resource};
use tether_actors::question::port::{Asked, ChannelPort};
use tokio::sync::mpsc::Receiver;

fn with_human(approval: ApprovalPolicy, timeout: Duration) -> (Harness, Receiver<Asked>) {
    let (port, cards) = ChannelPort::new();
    let h = Harness::with(&[("a.py", "print(1)\n")], |b| {
        b.connect(Resource::Parsers)
            .connect(Resource::Kernels)
            .approval(approval)
            .questions(Arc::new(port), "conversation pane 7")
            .question_timeout(timeout)
    });
    (h, cards)
}

const QUESTION: &str = "Which store should the cache use?";

fn question() -> serde_json::Value {
    json!({"question": QUESTION, "options": [{"label": "sqlite"}, {"label": "postgres"}, {"label": "redis"}], "multi_select": true, "allow_free_text": true})
}

#[tokio::test]
async fn answers_skips_and_timeouts() {
    let (h, mut cards) = with_human(ApprovalPolicy::AutoApprove, Duration::from_secs(1));
    let human = tokio::spawn(async move {
        let card = cards.recv().await.unwrap();
        assert_eq!(card.target, "conversation pane 7");
        assert_eq!(card.card.question, QUESTION);
        card.answer(tether_actors::question::Reply::Answered {
            labels: vec!["redis".into(), "sqlite".into()],
            text: Some("but keep it small".into()),
        });
        cards.recv().await.unwrap().skip();
        // The third card is left unanswered until it is withdrawn.
        let ignored = cards.recv().await.unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(ignored.withdrawn(), "a timed-out card is withdrawn");
        cards
    });
    let r = h.ok("ask_user", question()).await;
    assert_eq!(
        r.text,
        "The operator chose options 3. redis, 1. sqlite\nThe operator answered: but keep it small"
    );
    assert_eq!(r.data.unwrap()["labels"], json!(["redis", "sqlite"]));
    let r = h.ok("ask_user", question()).await;
    assert!(r.text.starts_with("The operator skipped this question."), "{}", r.text);
    let started = Instant::now();
    let err = h.err("ask_user", question()).await;
    assert!(err.contains("no answer within 1 s") && err.contains("do not ask this question again"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let cards = human.await.unwrap();

    let tree = h.rt.tree().await.text();
    assert!(tree.contains("question-gate conversation pane 7 [ready]"), "{tree}");
    assert!(
        tree.contains("answered=1") && tree.contains("skipped=1") && tree.contains("timed_out=1"),
        "{tree}"
    );

    // The host stops listening: the next question fails at once.
    drop(cards);
    let started = Instant::now();
    let err = h.err("ask_user", question()).await;
    assert!(err.contains("no human is connected to answer") && err.contains("channel is closed"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1), "before the 1 s question timeout");
}

#[tokio::test]
async fn bad_questions_are_refused_before_anyone_is_asked() {
    let (h, _cards) = with_human(ApprovalPolicy::AutoApprove, Duration::from_secs(5));
    for (args, expected) in [
        (json!({"question": "  "}), "`question` is empty"),
        (json!({"question": "Q?", "options": [{"label": "a"}, {"label": " a "}]}), "appears twice"),
        (json!({"question": "Q?", "multi_select": true}), "no `options` to select from"),
        (json!({"question": "Q?", "allow_free_text": false}), "nothing to answer with"),
        (json!({"question": "Q?", "options": [{"label": ""}]}), "`options[0].label` is empty"),
        (json!({"question": "Q?", "options": "a, b"}), "argument `options`"),
    ] {
        let err = h.err("ask_user", args).await;
        assert!(err.contains(expected), "{err}");
    }
}

#[tokio::test]
async fn permission_cards_gate_write_and_exec_calls_including_a_cells_own_tool_calls() {
    let (h, mut cards) = with_human(ApprovalPolicy::Ask, Duration::from_secs(30));
    let human = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(card) = cards.recv().await {
            seen.push(card.card.question.clone());
            // Allow the cell, deny the write it asks for from inside.
            if card.card.question.contains("`eval`") {
                card.choose(&["allow"])
            } else {
                card.choose(&["deny"])
            }
        }
        seen
    });
    let r = h.ok("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(r.text.contains("1 match"), "read-level tools never ask");
    let code = "try:\n    tool('write', {'path': 'b.txt', 'content': 'x'})\nexcept ToolError as e:\n    print('refused:', e)";
    let r = h.ok("eval", json!({"code": code, "description": "try to write a file from a cell"})).await;
    assert!(r.text.contains("refused: the operator denied permission to run `write`"), "{}", r.text);
    assert!(!h.path("b.txt").exists());
    let err = h.err("write", json!({"path": "c.txt", "content": "x"})).await;
    assert!(err.contains("denied permission"), "{err}");
    assert!(!h.path("c.txt").exists());
    drop(h);
    let seen = human.await.unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[0].starts_with("tether wants to run `eval` (exec level): try to write a file from a cell"),
        "{seen:?}"
    );
    assert!(seen[1].starts_with("tether wants to run `write` (write level)"), "{seen:?}");
}

#[tokio::test]
async fn with_nobody_to_approve_the_ask_policy_fails_closed() {
    let h = Harness::with(&[], |b| b.connect(Resource::Kernels).approval(ApprovalPolicy::Ask));
    let started = Instant::now();
    let err = h.err("eval", json!({"code": "1", "description": "run a cell with nobody there"})).await;
    assert!(err.contains("no approver is connected") && err.contains("did not run"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "at once, not after a timeout");
    let names: Vec<String> = h.rt.tools(tether::Surface::Full).into_iter().map(|s| s.name).collect();
    assert!(!names.contains(&"ask_user".to_string()), "no port, no ask_user: {names:?}");
}
