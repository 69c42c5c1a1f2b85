//! `lsp symbols` with a dotted query (`Container.member`) against pyright,
//! which matches a workspace query on a symbol's own name: the member is
//! asked for, kept by the class (or module) it sits in, and shown with it.

use serde_json::json;

use super::tool::{fixture, lsp, lsp_ok, pyright};

#[tokio::test]
async fn a_dotted_query_picks_the_member_of_that_class_and_shows_its_container() {
    pyright();
    // `request` is a method of Session, Session.Adapter and Pool, of
    // pkg/http.py's own Session, and a function of its own.
    let h = fixture("python_members");
    let all = lsp_ok(&h, json!({"action": "symbols", "query": "request"})).await;
    for row in [
        "\nSession.request (method, python) client.py:2:9",
        "\nSession.Adapter.request (method, python) client.py:6:13",
        "\nPool.request (method, python) client.py:11:9",
        "\nrequest (function, python) client.py:15:5",
        "\nSession.request (method, python) pkg/http.py:2:9",
    ] {
        assert!(all.contains(row), "each method with its class: `{row}` missing from {all}");
    }

    let r = lsp(&h, json!({"action": "symbols", "query": "Session.request"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("2 workspace symbol(s) match `Session.request`:\n"), "{}", r.text);
    assert!(r.text.contains("\nSession.request (method, python) client.py:2:9"), "{}", r.text);
    assert!(r.text.contains("\nSession.request (method, python) pkg/http.py:2:9"), "{}", r.text);
    assert!(!r.text.contains("Pool") && !r.text.contains("Adapter"), "{}", r.text);
    let symbols = r.data.unwrap()["symbols"].clone();
    assert!(symbols.as_array().unwrap().iter().all(|s| s["container"] == "Session"), "{symbols}");

    // Nested classes, and the module a file is, are containers too.
    for (query, row) in [
        ("Session.Adapter.request", "Session.Adapter.request (method, python) client.py:6:13"),
        ("Adapter.request", "Session.Adapter.request (method, python) client.py:6:13"),
        ("http.Session.request", "Session.request (method, python) pkg/http.py:2:9"),
        ("client.request", "request (function, python) client.py:15:5"),
    ] {
        let text = lsp_ok(&h, json!({"action": "symbols", "query": query})).await;
        assert_eq!(text, format!("1 workspace symbol(s) match `{query}`:\n{row}"), "{query}");
    }

    // A container that is not there: what the member alone matched, and where.
    let miss = lsp(&h, json!({"action": "symbols", "query": "Sesion.request"})).await;
    assert!(!miss.is_error, "{}", miss.text);
    assert_eq!(
        miss.text,
        "no workspace symbols match `Sesion.request`: nothing `request` matches sits in `Sesion`; `request` alone matches 5: Session (2), Pool (1), Session.Adapter (1), no container (1); write one of those before `.request`"
    );
    let none = lsp_ok(&h, json!({"action": "symbols", "query": "Session.fetch_all"})).await;
    assert!(none.starts_with("no workspace symbols match `Session.fetch_all`: "), "{none}");
}

#[tokio::test]
async fn a_dotted_query_on_a_file_follows_the_nesting_of_its_symbols() {
    pyright();
    let h = fixture("python_members");
    let at = |query: &str| json!({"action": "symbols", "file": "client.py", "query": query});
    let text = lsp_ok(&h, at("Session.request")).await;
    assert_eq!(text, "1 symbol(s) matching `Session.request` in `client.py`:\nSession.request (method) 2:9");
    let text = lsp_ok(&h, at("Adapter.request")).await;
    assert_eq!(
        text,
        "1 symbol(s) matching `Adapter.request` in `client.py`:\nSession.Adapter.request (method) 6:13"
    );
    // A plain query's rows say where each sits, their parents not listed.
    let text = lsp_ok(&h, at("request")).await;
    assert_eq!(
        text,
        "4 symbol(s) matching `request` in `client.py`:\nSession.request (method) 2:9\nSession.Adapter.request (method) 6:13\nPool.request (method) 11:9\nrequest (function) 15:5"
    );
    let text = lsp_ok(&h, at("Sesion.request")).await;
    assert_eq!(
        text,
        "no symbol in `client.py` named like `request` nests in `Sesion`; `request` alone matches 4: Pool (1), Session (1), Session.Adapter (1), no container (1); write one of those before `.request`"
    );
}
