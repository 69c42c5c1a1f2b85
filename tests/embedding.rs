//! Embedding: a host already inside an actix system shares it; a host
//! outside gets a system of its own. Either way calls and the router's
//! address work.

use serde_json::json;
use tether::router::Call;
use tether::{Runtime, Surface};

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
    dir
}

#[actix::test]
async fn a_host_inside_an_actix_system_shares_it() {
    let dir = workdir();
    let rt = Runtime::builder().workdir(dir.path()).connect_all().start().unwrap();
    assert!(!rt.owns_actor_system(), "the actors joined the host's system");
    let r = rt.call("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(!r.is_error && r.text.contains("a.py:1:1"), "{}", r.text);
    let call = Call::new("read", json!({"path": "a.py"}), Surface::ReadOnly);
    let r = rt.router().send(call).await.unwrap();
    assert_eq!(r.text, "print(1)\n");
}

#[tokio::test]
async fn a_host_outside_actix_gets_its_own_system() {
    let dir = workdir();
    let rt = Runtime::builder().workdir(dir.path()).connect_all().start().unwrap();
    assert!(rt.owns_actor_system());
    let r = rt.call("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(!r.is_error, "{}", r.text);
    // With language servers connected, a file no server can serve says so
    // rather than passing for clean.
    let said = rt.after_write(vec![dir.path().join("a.py")]).await.expect("a report");
    assert!(said.contains("diagnostics unavailable for `a.py`"), "{said}");
    let bare = Runtime::builder().workdir(dir.path()).connect(tether::Resource::Parsers).start().unwrap();
    assert_eq!(bare.after_write(vec![dir.path().join("a.py")]).await, None, "no hook configured");
}

#[test]
fn a_missing_working_directory_is_a_start_error() {
    let err = Runtime::builder().workdir("/no/such/dir").start().err().expect("refused");
    assert!(err.to_string().contains("/no/such/dir"), "{err}");
}
