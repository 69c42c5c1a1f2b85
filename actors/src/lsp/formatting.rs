//! The formatting options a file asks for — `.editorconfig` where it
//! says, else the file's own indentation (tabs or spaces, and how many) —
//! sent with `format`, and answered to a server that asks for them
//! (`workspace/configuration`, section `formattingOptions`: how
//! typescript-language-server sets tsserver's indentation for its code
//! actions, which otherwise write 4 spaces in a 2-space file).

use std::path::Path;

use lsp_types::FormattingOptions;

/// Indentation width assumed when neither `.editorconfig` nor the file
/// says (the default of most servers' formatters).
pub const DEFAULT_INDENT: u32 = 4;

/// The formatting options for `path`: `.editorconfig` (from `root` down
/// to the file's folder, nearer files winning), else the file's own
/// indentation.
pub fn options_for(root: &Path, path: &Path, text: &str) -> FormattingOptions {
    let said = editorconfig(root, path);
    let (file_spaces, file_width) = indentation_of(text);
    let insert_spaces = match said.indent_style.as_deref() {
        Some("tab") => false,
        Some("space") => true,
        _ => file_spaces,
    };
    let tab_size = said.indent_size.or(said.tab_width).unwrap_or(file_width);
    FormattingOptions {
        tab_size,
        insert_spaces,
        trim_trailing_whitespace: said.trim_trailing_whitespace,
        insert_final_newline: said.insert_final_newline,
        ..FormattingOptions::default()
    }
}

/// Whether `text` indents with spaces (rather than tabs), and by how many:
/// the most common step by which one line's indentation exceeds the line
/// before it.
fn indentation_of(text: &str) -> (bool, u32) {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps = std::collections::BTreeMap::<u32, usize>::new();
    let mut previous = 0u32;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with('\t') {
            tabs += 1;
            continue;
        }
        let width = (line.len() - line.trim_start_matches(' ').len()) as u32;
        if width > 0 {
            spaces += 1;
        }
        if width > previous && matches!(width - previous, 2 | 3 | 4 | 8) {
            *steps.entry(width - previous).or_default() += 1;
        }
        previous = width;
    }
    let width =
        steps.into_iter().max_by_key(|(step, n)| (*n, *step)).map_or(DEFAULT_INDENT, |(step, _)| step);
    (tabs <= spaces, width)
}

/// What `.editorconfig` files say of one file.
#[derive(Debug, Default, PartialEq)]
struct EditorConfig {
    indent_style: Option<String>,
    indent_size: Option<u32>,
    tab_width: Option<u32>,
    trim_trailing_whitespace: Option<bool>,
    insert_final_newline: Option<bool>,
}

/// Reads the `.editorconfig` files from `path`'s folder up to `root` (or
/// to one that says `root = true`), applying the farthest first.
fn editorconfig(root: &Path, path: &Path) -> EditorConfig {
    let mut found = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(root) {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(d.join(".editorconfig")) {
            let is_root = text.lines().any(|l| {
                let l = l.trim().to_lowercase().replace(' ', "");
                l == "root=true"
            });
            found.push((d.to_path_buf(), text));
            if is_root {
                break;
            }
        }
        dir = d.parent();
    }
    let mut said = EditorConfig::default();
    for (dir, text) in found.iter().rev() {
        let rel = path.strip_prefix(dir).map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
        apply_sections(&mut said, text, &rel);
    }
    said
}

/// Applies the sections of one `.editorconfig` whose globs match `rel`
/// (the file's path relative to that `.editorconfig`'s folder).
fn apply_sections(said: &mut EditorConfig, text: &str, rel: &str) {
    let mut applies = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            applies = section_matches(section, rel);
            continue;
        }
        if !applies {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim().to_lowercase(), value.trim().to_lowercase());
        let flag = match value.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        match key.as_str() {
            "indent_style" => said.indent_style = Some(value),
            "indent_size" if value == "tab" => said.indent_size = None,
            "indent_size" => said.indent_size = value.parse().ok().or(said.indent_size),
            "tab_width" => said.tab_width = value.parse().ok().or(said.tab_width),
            "trim_trailing_whitespace" => said.trim_trailing_whitespace = flag,
            "insert_final_newline" => said.insert_final_newline = flag,
            _ => {}
        }
    }
}

/// EditorConfig's glob rule: a pattern without `/` matches the file's
/// name in any folder; with one, the path from the `.editorconfig`'s folder.
fn section_matches(section: &str, rel: &str) -> bool {
    let pattern = if section.contains('/') {
        section.trim_start_matches('/').to_string()
    } else {
        format!("**/{section}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(rel))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_own_indentation_is_read() {
        assert_eq!(indentation_of("if a:\n    b\n    if c:\n        d\n"), (true, 4));
        assert_eq!(indentation_of("function f() {\n  a();\n  if (b) {\n    c();\n  }\n}\n"), (true, 2));
        assert_eq!(indentation_of("int f() {\n\treturn 1;\n}\n"), (false, DEFAULT_INDENT));
        assert_eq!(indentation_of("x = 1\n"), (true, DEFAULT_INDENT));
    }

    #[test]
    fn editorconfig_sections_apply_in_order_nearer_files_winning() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("web/src")).unwrap();
        std::fs::write(
            root.join(".editorconfig"),
            "root = true\n[*]\nindent_style = space\nindent_size = 4\n[*.{ts,js}]\nindent_size = 2\n",
        )
        .unwrap();
        std::fs::write(root.join("web/.editorconfig"), "[src/**.ts]\nindent_style = tab\n").unwrap();
        let ts = editorconfig(root, &root.join("web/src/a.ts"));
        assert_eq!((ts.indent_style.as_deref(), ts.indent_size), (Some("tab"), Some(2)));
        let py = editorconfig(root, &root.join("web/src/a.py"));
        assert_eq!((py.indent_style.as_deref(), py.indent_size), (Some("space"), Some(4)));
        let options = options_for(root, &root.join("web/src/a.ts"), "x\n    y\n");
        assert!(!options.insert_spaces && options.tab_size == 2, "{options:?}");
        let options = options_for(root, &root.join("web/b.js"), "x\n\ty\n");
        assert!(
            options.insert_spaces && options.tab_size == 2,
            "the file's tabs lose to what it says: {options:?}"
        );
    }
}
