//! The Eclipse project tether writes for a server that could not import a
//! project's build (`ServerConfig::unmanaged_fallback`: jdtls, with Maven
//! Central out of reach).
//!
//! jdtls serves a folder without a build file as an "invisible project"
//! of inferred source folders, but refuses to where a `pom.xml` or
//! `build.gradle` sits beside `src`: the build is to say. When the build
//! cannot, tether says instead: a project in the server's cache (never
//! in the user's tree) whose folder `_` links the root, with a source
//! folder for each directory the root's `.java` files declare as their
//! package root. Files keep their real paths — the link resolves them —
//! so answers name them as they are. Dependencies the build would have
//! fetched stay missing; uses inside code that needs them are what
//! `omits_unresolved` reports.

use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::project_walk::{self, DEPENDENCIES_AND_BUILDS, Entry, Rules};

/// Directories looked into for `.java` files, at most.
pub const MAX_DIRS: usize = 20_000;
/// Bytes of a file read for its `package` declaration.
const HEAD_BYTES: usize = 64 * 1024;
/// `.java` files of one directory read for its package, at most.
const SAMPLES_PER_DIR: usize = 8;

/// A written project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The project folder (holds `.project` and `.classpath`): the
    /// server's workspace folder.
    pub dir: PathBuf,
    /// The server's own workspace (`-data`), apart from the one whose
    /// import failed.
    pub workspace: PathBuf,
    /// The source folders, relative to the root (`.` for the root itself).
    pub sources: Vec<String>,
}

/// Writes the project for `root` under `cache` (the server's directory
/// for this root), replacing one written before.
pub fn write(cache: &Path, root: &Path) -> io::Result<Project> {
    let base = cache.with_file_name(format!(
        "{}.unmanaged",
        cache.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let dir = base.join("project");
    let workspace = base.join("workspace");
    std::fs::create_dir_all(&dir)?;
    std::fs::create_dir_all(&workspace)?;
    let sources = source_roots(root);
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "root".into());
    crate::fs::atomic_write(&dir.join(".project"), project_xml(&format!("tether-{name}"), root).as_bytes())?;
    crate::fs::atomic_write(&dir.join(".classpath"), classpath_xml(&sources).as_bytes())?;
    let sources = sources.iter().map(|s| if s.is_empty() { ".".to_string() } else { s.clone() }).collect();
    Ok(Project { dir, workspace, sources })
}

/// The package root of each directory holding `.java` files, relative to
/// `root` ("" for the root), judged by the first such file with code in
/// it (an empty or half-written one says nothing); directories whose path
/// does not end in their package are left out (the compiler would place
/// them wrongly).
fn source_roots(root: &Path) -> Vec<String> {
    // Each directory's first `.java` files, by name.
    let mut samples: std::collections::BTreeMap<PathBuf, Vec<PathBuf>> = Default::default();
    let mut dirs = 0;
    let rules = Rules { ignore_files: false, skip: DEPENDENCIES_AND_BUILDS, max_depth: None };
    project_walk::walk(root, rules, |entry| {
        match entry {
            Entry::Dir(_) => {
                dirs += 1;
                if dirs > MAX_DIRS {
                    return ControlFlow::Break(());
                }
            }
            Entry::File(file) if file.extension().is_some_and(|e| e == "java") => {
                let dir = file.parent().unwrap_or(root).to_path_buf();
                let held = samples.entry(dir).or_default();
                if held.len() < SAMPLES_PER_DIR {
                    held.push(file.to_path_buf());
                }
            }
            Entry::File(_) => {}
        }
        ControlFlow::Continue(())
    });
    let mut roots = std::collections::BTreeSet::new();
    for (dir, files) in samples {
        let Some(package) = files.iter().find_map(|f| read_head(f).and_then(|t| package_of(&t))) else {
            continue;
        };
        let Ok(rel) = dir.strip_prefix(root) else { continue };
        let rel = rel.to_string_lossy().into_owned();
        if let Some(source) = strip_package(&rel, package.as_deref().unwrap_or_default()) {
            roots.insert(source);
        }
    }
    roots.into_iter().collect()
}

fn read_head(file: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(file).ok()?.take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The `package` a Java file declares, past comments and annotations:
/// `Some(None)` for the default package (code, and no declaration),
/// `None` when the text holds no code at all.
fn package_of(text: &str) -> Option<Option<String>> {
    let mut in_comment = false;
    for line in text.lines() {
        let mut rest = line.trim();
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(end) => {
                        rest = rest[end + 2..].trim_start();
                        in_comment = false;
                    }
                    None => break,
                }
            } else if let Some(after) = rest.strip_prefix("/*") {
                rest = after;
                in_comment = true;
            } else {
                break;
            }
        }
        if in_comment || rest.is_empty() || rest.starts_with("//") || rest.starts_with('@') {
            continue;
        }
        let Some(declared) = rest.strip_prefix("package ").or_else(|| rest.strip_prefix("package\t")) else {
            return Some(None);
        };
        let declared = declared.split(';').next().unwrap_or_default().trim();
        return Some((!declared.is_empty()).then(|| declared.split_whitespace().collect()));
    }
    None
}

/// `dir` less its trailing package path, if it ends in it.
fn strip_package(dir: &str, package: &str) -> Option<String> {
    if package.is_empty() {
        return Some(dir.to_string());
    }
    let tail = package.replace('.', "/");
    if dir == tail {
        return Some(String::new());
    }
    dir.strip_suffix(&tail)?.strip_suffix('/').map(str::to_string)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

fn project_xml(name: &str, root: &Path) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<projectDescription>\n  <name>{}</name>\n  <comment>Written by tether: the build of this root could not be imported.</comment>\n  <projects></projects>\n  <buildSpec>\n    <buildCommand><name>org.eclipse.jdt.core.javabuilder</name><arguments></arguments></buildCommand>\n  </buildSpec>\n  <natures><nature>org.eclipse.jdt.core.javanature</nature></natures>\n  <linkedResources>\n    <link><name>_</name><type>2</type><location>{}</location></link>\n  </linkedResources>\n</projectDescription>\n",
        escape(name),
        escape(&root.to_string_lossy())
    )
}

/// Source entries under the link, each excluding the source folders
/// nested in it (Eclipse refuses overlapping ones otherwise).
fn classpath_xml(sources: &[String]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<classpath>\n");
    for source in sources {
        let nested: Vec<String> = sources
            .iter()
            .filter(|other| *other != source)
            .filter_map(|other| {
                if source.is_empty() {
                    Some(format!("{other}/"))
                } else {
                    other.strip_prefix(&format!("{source}/")).map(|rest| format!("{rest}/"))
                }
            })
            .collect();
        let path = if source.is_empty() { "_".to_string() } else { format!("_/{source}") };
        let excluding = if nested.is_empty() {
            String::new()
        } else {
            format!(" excluding=\"{}\"", escape(&nested.join("|")))
        };
        xml.push_str(&format!("  <classpathentry kind=\"src\" path=\"{}\"{excluding}/>\n", escape(&path)));
    }
    xml.push_str("  <classpathentry kind=\"con\" path=\"org.eclipse.jdt.launching.JRE_CONTAINER\"/>\n");
    xml.push_str("  <classpathentry kind=\"output\" path=\"bin\"/>\n</classpath>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_read_past_comments_and_annotations() {
        let text = "/*\n * Licence.\n */\n// more\n@Generated\npackage  com.example.shapes ;\n\nclass A {}\n";
        assert_eq!(package_of(text), Some(Some("com.example.shapes".into())));
        assert_eq!(package_of("/* a */ package p;\n"), Some(Some("p".into())));
        assert_eq!(package_of("import java.util.List;\nclass A {}\n"), Some(None), "the default package");
        assert_eq!(package_of("packages.A x;\n"), Some(None));
        assert_eq!(package_of("\n// only a comment\n/* and\n another */\n"), None, "no code says nothing");
        assert_eq!(package_of(""), None);
    }

    #[test]
    fn the_source_root_is_the_directory_less_its_package() {
        assert_eq!(strip_package("src/main/java/com/ex", "com.ex").as_deref(), Some("src/main/java"));
        assert_eq!(strip_package("shapes", "shapes").as_deref(), Some(""));
        assert_eq!(strip_package("src", "").as_deref(), Some("src"));
        assert_eq!(strip_package("src/other", "com.ex"), None);
        assert_eq!(strip_package("src/xcom/ex", "com.ex"), None, "a whole segment, not a suffix");
    }

    #[test]
    fn nested_source_folders_are_excluded_from_the_outer_one() {
        let xml = classpath_xml(&["".into(), "src/main/java".into(), "src/test/java".into()]);
        assert!(xml.contains("path=\"_\" excluding=\"src/main/java/|src/test/java/\""), "{xml}");
        assert!(xml.contains("<classpathentry kind=\"src\" path=\"_/src/main/java\"/>"), "{xml}");
    }

    #[test]
    fn the_project_links_the_root_and_names_its_source_folders() {
        let root = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let write_file = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write_file("pom.xml", "<project/>");
        write_file("src/main/java/com/ex/A.java", "package com.ex;\nclass A {}\n");
        write_file("src/test/java/com/ex/ATest.java", "package com.ex;\nclass ATest {}\n");
        write_file("target/generated/com/ex/G.java", "package com.ex;\n");
        write_file("misplaced/B.java", "package elsewhere;\n");
        // Caught empty: the next file of the directory decides.
        write_file("src/main/java/com/ex/util/A0.java", "");
        write_file("src/main/java/com/ex/util/B.java", "package com.ex.util;\nclass B {}\n");
        let project = write(&cache.path().join("root-1"), root.path()).unwrap();
        assert_eq!(project.sources, vec!["src/main/java", "src/test/java"]);
        assert!(project.dir.starts_with(cache.path()) && project.workspace.starts_with(cache.path()));
        let dot_project = std::fs::read_to_string(project.dir.join(".project")).unwrap();
        assert!(
            dot_project.contains(&format!("<location>{}</location>", root.path().display())),
            "{dot_project}"
        );
        assert!(std::fs::read_dir(root.path()).unwrap().count() == 4, "nothing written in the root");
    }
}
