//! Compiling a pattern: the scaffold ladder (the rungs per language are in
//! [`super::ladder`], reading the fragment on one of them in
//! [`super::reading`]).
//!
//! A fragment like `dispose($X)` means different things depending on where
//! it stands: at the top level of a Dart file it is a valid *function
//! signature*, inside a function body it is a call. Parsing fragments in
//! isolation therefore finds the wrong kind of node and then silently
//! matches nothing. Instead the fragment is tried inside a ladder of minimal
//! contexts — a statement in a function body, an expression, a class member,
//! a top-level declaration — and the first context that parses without any
//! syntax error wins. The pattern is the node that spans exactly the
//! fragment (or the fragment plus a `;` the ladder appended).
//!
//! The last rung is the fragment alone, parsed exactly as a whole file of
//! the language is (what the ast-grep CLI does with every pattern): a
//! construct that only exists there, such as a C preprocessor directive
//! (`#define $NAME $VALUE`, whose node owns the line's end, so it never
//! spans exactly the fragment inside a scaffold), still compiles.
//!
//! Where a language's grammar rejects a metavariable in a place people
//! write one (JSON has no names, so `"version": $V` is no JSON; PHP's
//! `$A = $B;` read with `µA` assigns a constant), the fragment is read
//! again with a stand-in the grammar accepts in its place
//! (`ladder::stand_ins`), and the node spelling the stand-in is
//! the metavariable in the pattern.
//!
//! A fragment no context accepts cleanly is still read the way the ast-grep
//! CLI reads it — the whole file, syntax errors and all, an ERROR node then
//! matching by its children (`for ($$$I) $S` in C++ finds every `for` loop)
//! — but marked *loose*, carrying the error that names the contexts tried:
//! a search says the pattern did not parse (and is an error when it finds
//! nothing), a rewrite refuses it. Never a search that quietly finds nothing.

use std::collections::BTreeSet;

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{Language, Node, NodeMatch, Pattern};

use super::ladder::Scaffold;
use super::ladder::{LOOSE, TOP_LEVEL, ladder};
use super::lang::Lang;
use super::reading::{
    Variant, construct, is_declaration, same_thing_elsewhere, stand_in_variants, try_rung, try_whole_file,
    variants,
};

/// How many literal tokens the prefilter checks per file, longest first.
const PREFILTER_TOKENS: usize = 4;

/// Why a pattern could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternCompileError {
    /// The pattern is empty or only whitespace.
    #[error("the pattern is empty; give a code fragment such as `print($A)`")]
    Empty,
    /// No rung of the ladder parsed the fragment without a syntax error.
    #[error(
        "the pattern `{pattern}` is not parseable {lang} code: tried it as {tried}, and each had a syntax error. Check brackets and quotes, and spell metavariables $NAME (upper case), $$$NAME or $_"
    )]
    Unparseable {
        /// The pattern as given.
        pattern: String,
        /// The language it was parsed as.
        lang: Lang,
        /// The contexts tried, in order.
        tried: String,
    },
    /// The fragment is a lone `$$$` metavariable, which cannot match a single node.
    #[error(
        "the pattern `{0}` is a lone multi-node metavariable; use `$VAR`, or wrap `$$$VAR` in a larger pattern such as `f($$$VAR)`"
    )]
    LoneMulti(String),
}

/// A pattern compiled for one language, ready to match.
pub struct CompiledPattern {
    /// The language it was compiled for.
    pub lang: Lang,
    /// The matcher.
    pub pattern: Pattern,
    /// Other readings of the same declaration, matched too (see
    /// [`CompiledPattern::find_all`]).
    pub also: Vec<Pattern>,
    /// Which rung of the ladder accepted it.
    pub context: &'static str,
    /// Set when no rung parsed it cleanly and it was read loosely, as the
    /// ast-grep CLI reads it: why it is not clean code of the language.
    pub loose: Option<PatternCompileError>,
    /// Literal tokens every match must contain; a file lacking one cannot match.
    pub required_tokens: Vec<RequiredToken>,
    /// The metavariables the pattern binds (without the `$`).
    pub bound_vars: BTreeSet<String>,
}

impl std::fmt::Debug for CompiledPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledPattern")
            .field("lang", &self.lang)
            .field("context", &self.context)
            .field("readings", &(1 + self.also.len()))
            .field("loose", &self.loose.is_some())
            .field("required_tokens", &self.required_tokens)
            .field("bound_vars", &self.bound_vars)
            .finish()
    }
}

/// A literal a matching file must contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequiredToken {
    /// The text.
    pub text: String,
    /// It is an identifier, so it must stand as a whole word: `print` is
    /// not present in a file that only says `pprint` or `print_function`.
    pub whole_word: bool,
}

impl RequiredToken {
    /// Whether `source` contains the token.
    pub fn occurs_in(&self, source: &[u8]) -> bool {
        let needle = self.text.as_bytes();
        let mut hits = memchr::memmem::find_iter(source, needle);
        if !self.whole_word {
            return hits.next().is_some();
        }
        hits.any(|at| {
            let before = at.checked_sub(1).map(|i| source[i]);
            let after = source.get(at + needle.len()).copied();
            !before.is_some_and(is_word_byte) && !after.is_some_and(is_word_byte)
        })
    }
}

/// ASCII letters, digits and `_`: bytes that would make a longer identifier.
/// Anything else (`$` of a Dart interpolation, non-ASCII) counts as a
/// boundary, which can only let more files through, never fewer.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl CompiledPattern {
    /// Every match under `node`, of any reading, in document order (outer
    /// first), each span once.
    pub fn find_all<'t>(&self, node: &Node<'t, StrDoc<Lang>>) -> Vec<NodeMatch<'t, StrDoc<Lang>>> {
        let mut found: Vec<NodeMatch<'t, StrDoc<Lang>>> = node.find_all(&self.pattern).collect();
        if self.also.is_empty() {
            return found;
        }
        for other in &self.also {
            found.extend(node.find_all(other));
        }
        found.sort_by_key(|m| (m.range().start, std::cmp::Reverse(m.range().end)));
        found.dedup_by_key(|m| m.range());
        found
    }

    /// Whether `source` contains every literal token the pattern requires.
    pub fn may_match(&self, source: &[u8]) -> bool {
        self.required_tokens.iter().all(|t| t.occurs_in(source))
    }
}

/// Compiles `source` for `lang` through the scaffold ladder.
pub fn compile(source: &str, lang: Lang) -> Result<CompiledPattern, PatternCompileError> {
    let fragment = source.trim();
    if fragment.is_empty() {
        return Err(PatternCompileError::Empty);
    }
    let expanded = lang.pre_process_pattern(fragment);
    let variants = variants(&expanded, lang);
    // First a clean parse anywhere on the ladder; then one with the
    // language's stand-ins where a metavariable cannot stand as written
    // (`"version": $V` in JSON); only then a parse whose sole errors are
    // metavariables standing where the grammar wants something else
    // (`impl $T for $U { $$$ITEMS }`: an identifier is not an item, but
    // the metavariable stands for items).
    if let Some(compiled) = climb(&variants, lang, false, fragment) {
        return compiled;
    }
    if let Some(pattern) = try_whole_file(fragment, &expanded, lang, false) {
        return finish(pattern, TOP_LEVEL, lang, fragment);
    }
    for stood in stand_in_variants(fragment, lang) {
        if let Some(compiled) = climb(&stood, lang, false, fragment) {
            return compiled;
        }
    }
    if let Some(compiled) = climb(&variants, lang, true, fragment) {
        return compiled;
    }
    if let Some(pattern) = try_whole_file(fragment, &expanded, lang, true) {
        return finish(pattern, TOP_LEVEL, lang, fragment);
    }
    let mut contexts: Vec<&str> = ladder(lang).iter().map(|s| s.context).collect();
    contexts.push(TOP_LEVEL);
    let why =
        PatternCompileError::Unparseable { pattern: fragment.to_string(), lang, tried: contexts.join(", ") };
    // Read as the CLI reads it. `try_new` refuses only a file with nothing
    // in it or several nodes at its top; then the error stands.
    let Ok(pattern) = Pattern::try_new(fragment, lang) else { return Err(why) };
    let mut compiled = finish(pattern, LOOSE, lang, fragment)?;
    compiled.loose = Some(why);
    Ok(compiled)
}

/// The first rung, from the bottom of the ladder, that reads one of the
/// variants; with the later rungs that read it as the same thing elsewhere.
fn climb(
    variants: &[Variant],
    lang: Lang,
    tolerant: bool,
    fragment: &str,
) -> Option<Result<CompiledPattern, PatternCompileError>> {
    for (i, scaffold) in ladder(lang).iter().enumerate() {
        for variant in variants {
            let Some(reading) = try_rung(scaffold, variant, lang, tolerant) else { continue };
            let mut compiled = match finish(reading.pattern, scaffold.context, lang, fragment) {
                Ok(compiled) => compiled,
                Err(e) => return Some(Err(e)),
            };
            if is_declaration(&reading.kind) || reading.kind != construct(&reading.kind) {
                add_other_declarations(&mut compiled, reading.kind, &ladder(lang)[i + 1..], variants, lang);
            }
            return Some(Ok(compiled));
        }
    }
    None
}

pub(super) fn finish(
    pattern: Pattern,
    context: &'static str,
    lang: Lang,
    fragment: &str,
) -> Result<CompiledPattern, PatternCompileError> {
    if let PatternNode::MetaVar { meta_var } = &pattern.node {
        use ast_grep_core::meta_var::MetaVariable;
        if matches!(meta_var, MetaVariable::MultiCapture(_) | MetaVariable::Multiple) {
            return Err(PatternCompileError::LoneMulti(fragment.to_string()));
        }
    }
    let mut tokens = BTreeSet::new();
    collect_named_terminals(&pattern.node, lang, &mut tokens);
    let mut required_tokens: Vec<RequiredToken> =
        tokens.into_iter().map(|(text, whole_word)| RequiredToken { text, whole_word }).collect();
    required_tokens.sort_by_key(|t| std::cmp::Reverse(t.text.len()));
    required_tokens.truncate(PREFILTER_TOKENS);
    let bound_vars = pattern.defined_vars().into_iter().map(str::to_string).collect();
    Ok(CompiledPattern { lang, pattern, also: Vec::new(), context, loose: None, required_tokens, bound_vars })
}

/// A declaration means different node kinds in different places (a Dart
/// function in a body is a `local_function_declaration`, at the top level
/// it is not), and so can a construct that is both a statement and an
/// expression (Zig's `if`): the later rungs that read the fragment as the
/// same thing in another kind are kept too, so the pattern finds it
/// wherever it stands.
pub(super) fn add_other_declarations(
    compiled: &mut CompiledPattern,
    first_kind: String,
    later: &[Scaffold],
    variants: &[Variant],
    lang: Lang,
) {
    let mut kinds = vec![first_kind];
    for scaffold in later {
        let reading = [false, true].into_iter().find_map(|tolerant| {
            variants.iter().find_map(|variant| try_rung(scaffold, variant, lang, tolerant))
        });
        let Some(reading) = reading else { continue };
        if kinds.contains(&reading.kind) || !same_thing_elsewhere(&kinds[0], &reading.kind) {
            continue;
        }
        let other = match finish(reading.pattern, scaffold.context, lang, "") {
            Ok(other) => other,
            Err(_) => continue,
        };
        kinds.push(reading.kind);
        // A file must hold what every reading needs to be skipped, and a
        // rewrite may use only what every reading binds.
        compiled.required_tokens.retain(|t| other.required_tokens.contains(t));
        compiled.bound_vars.retain(|v| other.bound_vars.contains(v));
        compiled.also.push(other.pattern);
    }
}

/// Named leaves must match the target's text exactly (ast-grep compares
/// their text; unnamed tokens only by kind), so each must occur literally in
/// any file that can match. Identifier leaves must occur as whole words;
/// other leaves (string contents, numbers) may sit next to anything — a
/// string's content can follow an escape like `\n`, and Python lexes `1if`.
fn collect_named_terminals(node: &PatternNode, lang: Lang, out: &mut BTreeSet<(String, bool)>) {
    match node {
        PatternNode::Terminal { text, is_named: true, kind_id } if !text.is_empty() => {
            let grammar = lang.grammar();
            let kind = grammar.node_kind_for_id(*kind_id).unwrap_or("");
            let whole_word = kind.ends_with("identifier") && text.bytes().all(is_word_byte);
            out.insert((text.clone(), whole_word));
        }
        PatternNode::Internal { children, .. } => {
            for child in children {
                collect_named_terminals(child, lang, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::ladder::{DECLARATION, EXPRESSION, MEMBER, STATEMENT};
    use super::*;
    use ast_grep_core::tree_sitter::LanguageExt;

    #[test]
    fn dart_call_compiles_as_a_statement_not_a_signature() {
        let p = compile("dispose($X)", Lang::DART).unwrap();
        assert_eq!(p.context, STATEMENT);
        let token = RequiredToken { text: "dispose".to_string(), whole_word: true };
        assert_eq!(p.required_tokens, vec![token]);
        assert!(p.bound_vars.contains("X"));
    }

    #[test]
    fn identifiers_must_stand_as_whole_words_other_tokens_need_not() {
        let p = compile("print($A)", Lang::PYTHON).unwrap();
        assert!(p.may_match(b"x = 1\nprint(x)\n"));
        assert!(p.may_match(b"f\"{print}\""));
        assert!(!p.may_match(b"pprint(x)\nprint_function(y)\nsprint"));
        // Only identifiers are whole words; string pieces sit next to anything.
        let s = compile("f(\"\\nabc\")", Lang::PYTHON).unwrap();
        for token in &s.required_tokens {
            assert_eq!(token.whole_word, token.text == "f", "{s:?}");
        }
        assert!(s.may_match(b"f(\"\\nabc\")"));
    }

    #[test]
    fn python_multiline_fragment_is_indented_into_the_scaffold() {
        let p = compile("def $F($$$ARGS):\n    return $X", Lang::PYTHON).unwrap();
        assert_eq!(p.context, STATEMENT);
        let vars: Vec<_> = p.bound_vars.iter().cloned().collect();
        assert_eq!(vars, ["ARGS", "F", "X"]);
    }

    #[test]
    fn class_members_fall_through_to_the_member_rung() {
        let p = compile("private $NAME: $T;", Lang::TYPESCRIPT);
        // `private` is not a statement or an expression in TypeScript.
        assert_eq!(p.unwrap().context, MEMBER);
    }

    #[test]
    fn go_declarations_reach_the_last_rung() {
        let p = compile("func $F() {}", Lang::GO).unwrap();
        assert_eq!(p.context, DECLARATION);
    }

    /// The texts `pattern` matches in `source`, each trimmed.
    fn matched(pattern: &str, lang: Lang, source: &str) -> Vec<String> {
        let compiled = compile(pattern, lang).unwrap();
        assert!(compiled.loose.is_none(), "`{pattern}` read loosely: {:?}", compiled.loose);
        let root = lang.ast_grep(source);
        let mut found: Vec<String> = std::iter::once(&compiled.pattern)
            .chain(&compiled.also)
            .flat_map(|p| root.root().find_all(p).map(|m| m.text().trim().to_string()).collect::<Vec<_>>())
            .collect();
        found.sort();
        found
    }

    #[test]
    fn metavariables_stand_where_the_grammar_rejects_them_as_written() {
        // JSON: a quoted key beside a metavariable value, at any depth.
        let json =
            "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\",\n  \"deps\": {\"a\": {\"version\": 2}}\n}\n";
        assert_eq!(
            matched("\"version\": $V", Lang::JSON, json),
            ["\"version\": \"1.0.0\"", "\"version\": 2"]
        );
        assert_eq!(matched("$K: $V", Lang::JSON, json).len(), 5);
        assert_eq!(matched("{\"version\": $V}", Lang::JSON, json), ["{\"version\": 2}"]);
        let p = compile("\"version\": $V", Lang::JSON).unwrap();
        assert!(p.bound_vars.contains("V"));
        assert!(p.required_tokens.iter().all(|t| !t.text.contains("__tether")), "{p:?}");

        // PHP: `$A` is a metavariable, `$x` a variable, as written.
        let php = "<?php\n$a = $b;\n$this->x = f(1);\n$n += 1;\nif ($c = g()) { $y = $x; }\n";
        assert_eq!(matched("$A = $B;", Lang::PHP, php), ["$a = $b;", "$this->x = f(1);", "$y = $x;"]);
        assert_eq!(matched("$y = $B;", Lang::PHP, php), ["$y = $x;"]);
        assert_eq!(matched("$A->x = $B;", Lang::PHP, php), ["$this->x = f(1);"]);

        // HCL: a block body of any attributes and blocks, or none.
        let hcl = "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n  acl    = \"private\"\n  tags {\n    a = 1\n  }\n}\n\nresource \"null_resource\" \"n\" {\n}\n\nvariable \"v\" {\n  default = 1\n}\n";
        let resources = matched("resource $T $N { $$$B }", Lang::HCL, hcl);
        assert_eq!(resources.len(), 2, "{resources:?}");
        assert!(resources.iter().all(|r| r.starts_with("resource \"")), "{resources:?}");
        assert_eq!(matched("variable $N {\n  $$$B\n}", Lang::HCL, hcl).len(), 1);
        assert_eq!(matched("resource \"aws_s3_bucket\" $N { $$$ }", Lang::HCL, hcl).len(), 1);
    }

    #[test]
    fn preprocessor_directives_compile_and_match_what_the_cli_matches() {
        let source = "#include <stdio.h>\n#include \"local.h\"\n#define LIMIT 10\n#define EMPTY\nint x;\n";
        for lang in [Lang::C, Lang::CPP] {
            // A `#define` node owns its line's end: only the whole file holds it.
            let define = compile("#define $NAME $VALUE", lang).unwrap();
            assert_eq!(define.context, TOP_LEVEL);
            let include = compile("#include $HEADER", lang).unwrap();
            let root = lang.ast_grep(source);
            let texts = |p: &CompiledPattern| -> Vec<String> {
                root.root().find_all(&p.pattern).map(|m| m.text().trim_end().to_string()).collect()
            };
            assert_eq!(texts(&define), ["#define LIMIT 10"], "{lang:?}");
            assert_eq!(texts(&include), ["#include <stdio.h>", "#include \"local.h\""], "{lang:?}");
        }
    }

    #[test]
    fn the_ladder_still_wins_where_the_top_level_reads_the_fragment_wrongly() {
        // At a Go file's top level `fmt.Errorf($$$A)` is no call at all.
        assert_eq!(compile("fmt.Errorf($$$A)", Lang::GO).unwrap().context, STATEMENT);
        assert_eq!(compile("dispose($X)", Lang::DART).unwrap().context, STATEMENT);
    }

    #[test]
    fn a_multi_metavariable_may_stand_where_the_grammar_wants_items() {
        let p = compile("impl $T for $U { $$$ITEMS }", Lang::RUST).unwrap();
        assert!(p.bound_vars.contains("ITEMS"), "{p:?}");
    }

    #[test]
    fn a_pattern_no_context_parses_is_read_loosely_and_says_why() {
        let p = compile("print((", Lang::PYTHON).unwrap();
        assert_eq!(p.context, LOOSE);
        let err = p.loose.unwrap().to_string();
        for context in [STATEMENT, EXPRESSION, MEMBER, DECLARATION, TOP_LEVEL] {
            assert!(err.contains(context), "{err}");
        }
        assert!(err.contains("not parseable python"), "{err}");
    }

    #[test]
    fn empty_and_lone_multi_patterns_are_refused() {
        assert_eq!(compile("  ", Lang::RUST).unwrap_err(), PatternCompileError::Empty);
        assert!(matches!(compile("$$$A", Lang::JAVASCRIPT), Err(PatternCompileError::LoneMulti(_))));
    }

    #[test]
    fn a_keyword_read_as_a_name_is_no_reading_and_the_cli_reading_stands() {
        // The class-member rung would take `for` as a type name; the loop
        // the fragment spells is only in the whole file, read loosely.
        let p = compile("for ($$$I) $S", Lang::CPP).unwrap();
        assert_eq!(p.context, LOOSE, "{p:?}");
        let source = "int f(int n) {\n  int s = 0;\n  for (int i = 0; i < n; ++i) s += i;\n  for (;;) { break; }\n  return s;\n}\n";
        let root = Lang::CPP.ast_grep(source);
        assert_eq!(root.root().find_all(&p.pattern).count(), 2);
    }
}
