//! The servers of `tests/it/lsp/languages.rs` on real projects nobody here
//! wrote, from the registry packages `scripts/corpora.sh` unpacks:
//! Capacitor's Android sources (jdtls, without the Android SDK it
//! depends on), PEAR (intelephense), dracut (bash-language-server),
//! tachyons (the CSS server), CLDR's JSON, ansible-core's YAML and git's
//! HTML manual pages. What each answer must get right, checked against
//! the text where the text can tell.

use crate::common::{Harness, copy_dir, corpus};
use serde_json::{Value, json};

/// A git checkout holding a copy of `lang`'s corpus (`inside` it) at `at`.
fn checkout(lang: &str, inside: &str, at: &str) -> Harness {
    let h = Harness::new(&[(".git/HEAD", "ref: refs/heads/main\n")]);
    copy_dir(&corpus(lang, inside), &h.path(at));
    h
}

/// The 1-based line of `file` that starts (trimmed) with `text`: found, not
/// hard-coded, so a corpus of another patch release still reads.
fn line_of(h: &Harness, file: &str, text: &str) -> u32 {
    let body = std::fs::read_to_string(h.path(file)).unwrap();
    let k = body.lines().position(|l| l.trim_start().starts_with(text));
    k.unwrap_or_else(|| panic!("no line of {file} starts with {text:?}")) as u32 + 1
}

async fn lsp(h: &Harness, args: Value) -> tether::ToolResult {
    h.ok("lsp", args).await
}

fn total(r: &tether::ToolResult) -> u64 {
    r.data.as_ref().and_then(|d| d["total"].as_u64()).unwrap_or(0)
}

/// Lines of files under `dir` with `ext` holding `word` as a word, outside
/// comment lines: what a text search counts.
fn word_lines(dir: &std::path::Path, ext: &str, word: &str) -> usize {
    let mut n = 0;
    for entry in ignore::WalkBuilder::new(dir).build().flatten() {
        if entry.path().extension().is_none_or(|e| e != ext) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        n += text
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !(t.starts_with('#') || t.starts_with("//") || t.starts_with("/*") || t.starts_with('*'))
            })
            .filter(|l| {
                l.match_indices(word).any(|(at, _)| {
                    let before = l[..at].chars().next_back();
                    let after = l[at + word.len()..].chars().next();
                    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !ident(before) && !ident(after)
                })
            })
            .count();
    }
    n
}

#[tokio::test]
async fn intelephense_on_pear_finds_every_call_once_indexed() {
    let h = checkout("php", "out/usr/share/php", "src");
    let calls = word_lines(&h.path("src"), "php", "PEAR::isError");
    let r = lsp(
        &h,
        json!({"action": "references", "file": "src/PEAR.php", "line": 296, "symbol": "isError", "limit": 5}),
    )
    .await;
    // The declaration, and every `PEAR::isError(` call: the first answer,
    // not one taken while the server was still indexing.
    assert!(total(&r) as usize > calls, "{} calls in the text: {}", calls, r.text);
    assert!(r.text.contains(" files (showing 1–5"), "{}", r.text);
    let hover =
        lsp(&h, json!({"action": "hover", "file": "src/PEAR.php", "line": 296, "symbol": "isError"})).await;
    assert!(hover.text.contains("Tell whether a value is a PEAR error."), "{}", hover.text);
    let ws = lsp(&h, json!({"action": "symbols", "query": "PEAR_Registry"})).await;
    assert!(
        ws.text.contains("\nPEAR_Registry (class, php) src/PEAR/Registry.php:"),
        "exact name first: {}",
        ws.text
    );
}

#[tokio::test]
async fn bash_language_server_on_dracut_finds_a_function_across_files() {
    let h = checkout("bash", "out/usr/lib/dracut", "dracut");
    let uses = word_lines(&h.path("dracut"), "sh", "dwarn");
    let refs = lsp(
        &h,
        json!({"action": "references", "file": "dracut/dracut-logger.sh", "line": 413, "symbol": "dwarn"}),
    )
    .await;
    assert_eq!(total(&refs) as usize, uses, "every line naming it, as the text has them: {}", refs.text);
    assert!(refs.text.contains(" in 3 files"), "{}", refs.text);
    let ws = lsp(&h, json!({"action": "symbols", "query": "dwarn"})).await;
    assert!(ws.text.contains("\ndwarn (function, bash) dracut/dracut-logger.sh:413:1\n"), "{}", ws.text);
}

#[tokio::test]
async fn jdtls_on_capacitor_without_the_android_sdk_says_what_its_references_leave_out() {
    let h = checkout("java", "out/package/capacitor/src/main/java", "src");
    let def = lsp(&h, json!({"action": "definition", "file": "src/com/getcapacitor/Bridge.java", "line": 76, "symbol": "Bridge"})).await;
    assert!(
        def.text.contains("src/com/getcapacitor/Bridge.java:76:14: public class Bridge {"),
        "{}",
        def.text
    );
    let ws = lsp(&h, json!({"action": "symbols", "query": "PluginCall"})).await;
    assert!(
        ws.text.contains("\nPluginCall (class, java) src/com/getcapacitor/PluginCall.java:13:14"),
        "{}",
        ws.text
    );
    // Every use of PluginCall sits in code that needs the Android SDK,
    // which is not here: jdtls drops those matches unsaid. The answer may
    // not read as complete.
    let refs = lsp(&h, json!({"action": "references", "file": "src/com/getcapacitor/PluginCall.java", "line": 13, "symbol": "PluginCall", "limit": 1000})).await;
    let listed: std::collections::BTreeSet<&str> = refs.data.as_ref().unwrap()["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    let with_word = ignore::WalkBuilder::new(h.path("src"))
        .build()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "java"))
        .filter(|e| word_lines(e.path(), "java", "PluginCall") > 0)
        .count();
    // The premise: jdtls lists fewer files than hold the word. (Should
    // jdtls stop dropping these matches, this fails: the test is then
    // about nothing and wants rewriting.)
    assert!(
        listed.len() < with_word,
        "{with_word} files hold the word, {} listed: {}",
        listed.len(),
        refs.text
    );
    // What the answer then says: the files it leaves out, and why.
    let unlisted = with_word - listed.len();
    assert!(
        refs.text
            .contains(&format!("also appears as a word in {unlisted} file(s) that can see its declaration"))
            && refs.text.contains("jdtls leaves out, unsaid, the uses it cannot fully resolve"),
        "{with_word} files hold the word, {} listed: {}",
        listed.len(),
        refs.text
    );
}

#[tokio::test]
async fn the_css_json_yaml_and_html_servers_outline_real_files() {
    let h = Harness::new(&[]);
    copy_dir(&corpus("css", "out/package/src"), &h.path("css"));
    copy_dir(&corpus("json", "out/package"), &h.path("json"));
    copy_dir(&corpus("yaml", "out/ansible_core-2.16.14/lib/ansible/config"), &h.path("yaml"));
    copy_dir(&corpus("html", "out/usr/share/doc/git-doc"), &h.path("html"));
    let css = lsp(&h, json!({"action": "symbols", "file": "css/_border-colors.css"})).await;
    let rules = std::fs::read_to_string(h.path("css/_border-colors.css"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(".b--"))
        .count();
    let black = line_of(&h, "css/_border-colors.css", ".b--black ");
    assert!(css.text.contains(&format!(".b--black (class) {black}:1")), "{}", css.text);
    assert!(total(&css) as usize >= rules, "{rules} rules: {}", css.text);
    let json = lsp(&h, json!({"action": "symbols", "file": "json/scriptMetadata.json"})).await;
    assert!(
        json.text.contains("scriptMetadata (module) 2:3") && json.text.contains("  Adlm (module) 3:5"),
        "{}",
        json.text
    );
    let yaml = lsp(&h, json!({"action": "symbols", "file": "yaml/base.yml"})).await;
    assert!(yaml.text.contains("ANSIBLE_HOME (module) "), "{}", yaml.text);
    let html = lsp(&h, json!({"action": "symbols", "file": "html/git-show.html"})).await;
    // The page's elements and its embedded stylesheet's rules, capped.
    assert!(html.text.contains("body (class) ") && total(&html) > 1_000, "{}", html.text);
    assert!(html.text.contains("(showing 1–200; 200 a page; pass offset=200 for more"), "{}", html.text);
    let hover = lsp(
        &h,
        json!({"action": "hover", "file": "css/_border-colors.css", "line": 21, "symbol": "border-color"}),
    )
    .await;
    assert!(hover.text.contains("border-color") && !hover.text.contains("data:image"), "{}", hover.text);
}
