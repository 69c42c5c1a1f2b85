//! Compiling a pattern: the scaffold ladder.
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
//! A fragment no context accepts cleanly is still read the way the ast-grep
//! CLI reads it — the whole file, syntax errors and all, an ERROR node then
//! matching by its children (`for ($$$I) $S` in C++ finds every `for` loop)
//! — but marked *loose*, carrying the error that names the contexts tried:
//! a search says the pattern did not parse (and is an error when it finds
//! nothing), a rewrite refuses it. Never a search that quietly finds nothing.

use std::collections::BTreeSet;

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};
use ast_grep_core::{Language, Node, NodeMatch, Pattern};

use super::lang::Lang;

/// How many literal tokens the prefilter checks per file, longest first.
const PREFILTER_TOKENS: usize = 4;

/// One rung of the ladder: the fragment goes between `prefix` and `suffix`,
/// each of its lines after the first indented by `indent`.
struct Scaffold {
    context: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    indent: &'static str,
}

const fn rung(
    context: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    indent: &'static str,
) -> Scaffold {
    Scaffold { context, prefix, suffix, indent }
}

const STATEMENT: &str = "a statement";
const EXPRESSION: &str = "an expression";
const MEMBER: &str = "a class member";
const DECLARATION: &str = "a top-level declaration";
const TOP_LEVEL: &str = "a whole file";
const LOOSE: &str = "a whole file with syntax errors";

/// The ladder for each language, in the order it is tried. Languages
/// without statements (data and markup) have only the whole file.
fn ladder(lang: Lang) -> &'static [Scaffold] {
    const DART: &[Scaffold] = &[
        rung(STATEMENT, "void __tetherScaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "var __tetherScaffold = ", ";\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const PYTHON: &[Scaffold] = &[
        rung(STATEMENT, "def __tether_scaffold():\n    ", "\n", "    "),
        rung(EXPRESSION, "__tether_scaffold = (\n", "\n)\n", ""),
        rung(MEMBER, "class __TetherScaffold:\n    ", "\n", "    "),
        rung(DECLARATION, "", "\n", ""),
    ];
    const RUST: &[Scaffold] = &[
        rung(STATEMENT, "fn __tether_scaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "fn __tether_scaffold() { let _ = ", "; }\n", ""),
        rung(MEMBER, "impl __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const C: &[Scaffold] = &[
        rung(STATEMENT, "void __tether_scaffold(void) {\n", "\n}\n", ""),
        rung(EXPRESSION, "void __tether_scaffold(void) { __tether_value = ", "; }\n", ""),
        rung(MEMBER, "struct __tether_scaffold {\n", "\n};\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const CPP: &[Scaffold] = &[
        rung(STATEMENT, "void __tether_scaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "void __tether_scaffold() { __tether_value = ", "; }\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n};\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const JS: &[Scaffold] = &[
        rung(STATEMENT, "function __tetherScaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "__tetherScaffold = (", ");\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const GO: &[Scaffold] = &[
        rung(STATEMENT, "package p\nfunc __tetherScaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "package p\nvar __tetherScaffold = ", "\n", ""),
        rung(MEMBER, "package p\ntype __tetherScaffold struct {\n", "\n}\n", ""),
        rung(DECLARATION, "package p\n", "\n", ""),
    ];
    const JAVA: &[Scaffold] = &[
        rung(STATEMENT, "class __TetherScaffold { void __tetherScaffold() {\n", "\n} }\n", ""),
        rung(EXPRESSION, "class __TetherScaffold { Object __tetherScaffold = ", "; }\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const CSHARP: &[Scaffold] = &[
        rung(STATEMENT, "class __TetherScaffold { void __TetherMethod() {\n", "\n} }\n", ""),
        rung(EXPRESSION, "class __TetherScaffold { object __tetherScaffold = ", "; }\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const KOTLIN: &[Scaffold] = &[
        rung(STATEMENT, "fun __tetherScaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "val __tetherScaffold = ", "\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const SWIFT: &[Scaffold] = &[
        rung(STATEMENT, "func __tetherScaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "let __tetherScaffold = ", "\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const SCALA: &[Scaffold] = &[
        rung(STATEMENT, "object __TetherScaffold {\ndef __tetherScaffold() = {\n", "\n}\n}\n", ""),
        rung(EXPRESSION, "object __TetherScaffold {\nval __tetherScaffold = ", "\n}\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const PHP: &[Scaffold] = &[
        rung(STATEMENT, "function __tether_scaffold() {\n", "\n}\n", ""),
        rung(EXPRESSION, "$__tether_scaffold = ", ";\n", ""),
        rung(MEMBER, "class __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const SOLIDITY: &[Scaffold] = &[
        rung(STATEMENT, "contract __TetherScaffold { function __tetherScaffold() public {\n", "\n} }\n", ""),
        rung(
            EXPRESSION,
            "contract __TetherScaffold { function __tetherScaffold() public { __tetherValue = ",
            "; } }\n",
            "",
        ),
        rung(MEMBER, "contract __TetherScaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const ZIG: &[Scaffold] = &[
        rung(STATEMENT, "fn __tetherScaffold() void {\n", "\n}\n", ""),
        rung(EXPRESSION, "const __tetherScaffold = ", ";\n", ""),
        rung(MEMBER, "const __TetherScaffold = struct {\n", "\n};\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const RUBY: &[Scaffold] = &[
        rung(STATEMENT, "def __tether_scaffold\n", "\nend\n", ""),
        rung(EXPRESSION, "__tether_scaffold = (", ")\n", ""),
        rung(MEMBER, "class TetherScaffold\n", "\nend\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const LUA: &[Scaffold] = &[
        rung(STATEMENT, "function __tether_scaffold()\n", "\nend\n", ""),
        rung(EXPRESSION, "local __tether_scaffold = ", "\n", ""),
        rung(MEMBER, "local __tether_scaffold = {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const BASH: &[Scaffold] =
        &[rung(STATEMENT, "__tether_scaffold() {\n", "\n}\n", ""), rung(DECLARATION, "", "\n", "")];
    const ELIXIR: &[Scaffold] = &[
        rung(STATEMENT, "def __tether_scaffold do\n", "\nend\n", ""),
        rung(MEMBER, "defmodule TetherScaffold do\n", "\nend\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const HASKELL: &[Scaffold] = &[
        rung(EXPRESSION, "tetherScaffold =\n  ", "\n", "  "),
        rung(STATEMENT, "tetherScaffold = do\n  ", "\n", "  "),
        rung(DECLARATION, "", "\n", ""),
    ];
    const HCL: &[Scaffold] = &[
        rung(EXPRESSION, "__tether_scaffold = ", "\n", ""),
        rung(MEMBER, "__tether_scaffold {\n", "\n}\n", ""),
        rung(DECLARATION, "", "\n", ""),
    ];
    const NIX: &[Scaffold] = &[rung(MEMBER, "{\n", "\n}\n", ""), rung(DECLARATION, "", "\n", "")];
    const CSS: &[Scaffold] =
        &[rung(MEMBER, "__tether_scaffold {\n", "\n}\n", ""), rung(DECLARATION, "", "\n", "")];
    const JSON: &[Scaffold] = &[rung(DECLARATION, "", "\n", ""), rung(MEMBER, "{\n", "\n}\n", "")];
    const WHOLE_FILE: &[Scaffold] = &[rung(DECLARATION, "", "\n", "")];
    match lang {
        Lang::DART => DART,
        Lang::PYTHON => PYTHON,
        Lang::RUST => RUST,
        Lang::C => C,
        Lang::CPP => CPP,
        Lang::JAVASCRIPT | Lang::TYPESCRIPT | Lang::TSX => JS,
        Lang::GO => GO,
        Lang::JAVA => JAVA,
        Lang::CSHARP => CSHARP,
        Lang::KOTLIN => KOTLIN,
        Lang::SWIFT => SWIFT,
        Lang::SCALA => SCALA,
        Lang::PHP => PHP,
        Lang::SOLIDITY => SOLIDITY,
        Lang::ZIG => ZIG,
        Lang::RUBY => RUBY,
        Lang::LUA => LUA,
        Lang::BASH => BASH,
        Lang::ELIXIR => ELIXIR,
        Lang::HASKELL => HASKELL,
        Lang::HCL => HCL,
        Lang::NIX => NIX,
        Lang::CSS => CSS,
        Lang::JSON => JSON,
        _ => WHOLE_FILE,
    }
}

/// Whether statements (or declarations) in the language end with `;`, so
/// the ladder may append one to a fragment written without it.
fn uses_semicolons(lang: Lang) -> bool {
    [
        Lang::DART,
        Lang::RUST,
        Lang::C,
        Lang::CPP,
        Lang::JAVASCRIPT,
        Lang::TYPESCRIPT,
        Lang::TSX,
        Lang::JAVA,
        Lang::CSHARP,
        Lang::PHP,
        Lang::SOLIDITY,
        Lang::ZIG,
        Lang::CSS,
        Lang::NIX,
    ]
    .contains(&lang)
}

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
    // First a clean parse anywhere on the ladder; only then a parse whose
    // sole errors are metavariables standing where the grammar wants
    // something else (`impl $T for $U { $$$ITEMS }`: an identifier is not
    // an item, but the metavariable stands for items).
    for tolerant in [false, true] {
        for (i, scaffold) in ladder(lang).iter().enumerate() {
            for variant in &variants {
                if let Some(reading) = try_rung(scaffold, variant, lang, tolerant) {
                    let mut compiled = finish(reading.pattern, scaffold.context, lang, fragment)?;
                    if is_declaration(&reading.kind) || reading.kind != construct(&reading.kind) {
                        add_other_declarations(
                            &mut compiled,
                            reading.kind,
                            &ladder(lang)[i + 1..],
                            &variants,
                            lang,
                        );
                    }
                    return Ok(compiled);
                }
            }
        }
        if let Some(pattern) = try_whole_file(fragment, &expanded, lang, tolerant) {
            return finish(pattern, TOP_LEVEL, lang, fragment);
        }
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

/// Whether a node kind names a declaration, by the grammars' own naming
/// (`local_variable_declaration`, `function_definition`, `method_signature`).
fn is_declaration(kind: &str) -> bool {
    ["declaration", "definition", "signature"].iter().any(|word| kind.contains(word))
}

/// What a kind names apart from being a statement or an expression:
/// Zig's `IfStatement` and `IfExpression` are both an `if`.
fn construct(kind: &str) -> String {
    let flat: String = kind.chars().filter(|c| *c != '_').collect::<String>().to_ascii_lowercase();
    for suffix in ["statement", "expression", "stmt", "expr"] {
        if let Some(stem) = flat.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return stem.to_string();
        }
    }
    flat
}

/// Whether a later rung's reading of kind `other` is the same thing as the
/// first reading's `first` standing elsewhere: another kind of declaration,
/// or the same construct as a statement and as an expression.
fn same_thing_elsewhere(first: &str, other: &str) -> bool {
    first != other
        && ((is_declaration(first) && is_declaration(other)) || construct(first) == construct(other))
}

/// A declaration means different node kinds in different places (a Dart
/// function in a body is a `local_function_declaration`, at the top level
/// it is not), and so can a construct that is both a statement and an
/// expression (Zig's `if`): the later rungs that read the fragment as the
/// same thing in another kind are kept too, so the pattern finds it
/// wherever it stands.
fn add_other_declarations(
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

/// The fragment as the ladder tries it, with the `;` it may add.
struct Variant {
    text: String,
    /// A `;` was added at the end (`foo($A)` as the statement `foo($A);`).
    tail: bool,
    /// A `;` was added after each metavariable that ends a block
    /// (`if ($C) { $$$B }` as `if ($C) { $$$B; }`): where a bare name is
    /// no statement (C#, Dart), the metavariable could not stand for the
    /// block's statements otherwise.
    blocks: bool,
}

/// The variants of an expanded fragment, in the order they are tried.
fn variants(expanded: &str, lang: Lang) -> Vec<Variant> {
    let mut out = vec![Variant { text: expanded.to_string(), tail: false, blocks: false }];
    if !uses_semicolons(lang) {
        return out;
    }
    let needs_tail = !expanded.ends_with(';') && !expanded.ends_with('}');
    if needs_tail {
        out.push(Variant { text: format!("{expanded};"), tail: true, blocks: false });
    }
    let blocked = terminate_block_metavars(expanded, lang);
    if blocked != expanded {
        if needs_tail {
            out.push(Variant { text: format!("{blocked};"), tail: true, blocks: true });
        }
        out.push(Variant { text: blocked, tail: false, blocks: true });
    }
    out
}

/// `text` with a `;` after every metavariable directly followed (past
/// blanks) by a `}`.
fn terminate_block_metavars(text: &str, lang: Lang) -> String {
    let expando = lang.expando_char();
    let mut out = String::with_capacity(text.len() + 4);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        if c != expando {
            continue;
        }
        // The metavariable's name runs to the first character that cannot be in it.
        let mut end = i + c.len_utf8();
        while let Some(&(j, n)) = chars.peek() {
            if n == expando || n.is_ascii_uppercase() || n.is_ascii_digit() || n == '_' {
                out.push(n);
                end = j + n.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        if text[end..].trim_start().starts_with('}') && lang.extract_meta_var(&text[i..end]).is_some() {
            out.push(';');
        }
    }
    out
}

/// One rung's reading of a fragment: the pattern and its node's kind.
struct Reading {
    pattern: Pattern,
    kind: String,
}

/// Parses the fragment inside one scaffold; returns the reading when the
/// whole text parses cleanly and a node spans exactly the fragment. A `;`
/// the fragment was written with belongs to the node when one spans it
/// (`$A = $B;` is the statement, not the assignment inside it); one the
/// ladder `appended` does not, so the node the fragment spells is taken
/// (`foo($A)` is the call, found in any expression). Either way, a node
/// that ends just before or just after the `;` is accepted (statements own
/// theirs, TypeScript fields do not).
fn try_rung(scaffold: &Scaffold, variant: &Variant, lang: Lang, tolerant: bool) -> Option<Reading> {
    let appended = variant.tail;
    let body = indent_lines(&variant.text, scaffold.indent);
    let start = scaffold.prefix.len();
    let end_with_terminator = start + body.len();
    let end = end_with_terminator - usize::from(body.ends_with(';'));
    let wrapped = format!("{}{}{}", scaffold.prefix, body, scaffold.suffix);
    let root = lang.ast_grep(&wrapped);
    let tree_root = root.root().get_inner_node();
    let accepted =
        reads_cleanly(tree_root, &wrapped, lang) || (tolerant && tolerable(tree_root, &wrapped, lang));
    if !accepted {
        return None;
    }
    let spans = |from: usize, to: usize| {
        tree_root.descendant_for_byte_range(from, to).filter(|n| n.start_byte() == from && n.end_byte() == to)
    };
    let own_terminator =
        if appended || end == end_with_terminator { None } else { spans(start, end_with_terminator) };
    let node = match own_terminator {
        Some(node) => node,
        None => {
            let node = tree_root.descendant_for_byte_range(start, end)?;
            if node.start_byte() != start || !(end..=end_with_terminator).contains(&node.end_byte()) {
                return None;
            }
            node
        }
    };
    let kind = node.kind().to_string();
    let node = root.adopt(node);
    let mut pattern = Pattern::from(node);
    if !scaffold.indent.is_empty() {
        // Lines inside a multi-line token (a string, a comment) got the
        // rung's indent too; the token is as the fragment wrote it.
        unindent_terminals(&mut pattern.node, scaffold.indent);
    }
    if let PatternNode::Internal { children, .. } = &mut pattern.node {
        if variant.blocks {
            unwrap_block_metavars(children);
        }
        if appended {
            unwrap_statement_metavar(children);
        }
    }
    Some(Reading { pattern, kind })
}

/// Where the ladder appended the `;` and it completed a statement that is
/// only the fragment's last metavariable (C# `if ($C) $S` read as
/// `if ($C) $S;`), that statement is the metavariable, standing for any
/// statement, as it is when the parser supplies the `;` itself. Where the
/// grammar read the `;` as a statement of its own after the metavariable
/// (an empty statement), it is dropped.
fn unwrap_statement_metavar(children: &mut Vec<PatternNode>) {
    let is_semicolon = |node: &PatternNode| matches!(node, PatternNode::Terminal { text, .. } if text == ";");
    let n = children.len();
    if n >= 2
        && matches!(children[n - 2], PatternNode::MetaVar { .. })
        && matches!(&children[n - 1], PatternNode::Internal { children: only, .. } if only.len() == 1 && is_semicolon(&only[0]))
    {
        children.pop();
        return;
    }
    let Some(last) = children.last_mut() else { return };
    let PatternNode::Internal { children: inner, .. } = last else { return };
    match inner.as_slice() {
        [PatternNode::MetaVar { meta_var }, semicolon] if is_semicolon(semicolon) => {
            *last = PatternNode::MetaVar { meta_var: meta_var.clone() };
        }
        _ => unwrap_statement_metavar(inner),
    }
}

/// Takes `indent` back out after every newline inside a terminal's text.
fn unindent_terminals(node: &mut PatternNode, indent: &str) {
    match node {
        PatternNode::Terminal { text, .. } if text.contains('\n') => {
            *text = text.replace(&format!("\n{indent}"), "\n");
        }
        PatternNode::Internal { children, .. } => {
            for child in children {
                unindent_terminals(child, indent);
            }
        }
        _ => {}
    }
}

/// Undoes [`terminate_block_metavars`] throughout the pattern, bottom up:
/// a statement that is a metavariable and the `;` added after it is the
/// metavariable (and so is a node left holding only it), and a `;` the
/// grammar read as a statement of its own after one is dropped.
fn unwrap_block_metavars(children: &mut Vec<PatternNode>) {
    let is_semicolon = |node: &PatternNode| matches!(node, PatternNode::Terminal { text, .. } if text == ";");
    for child in children.iter_mut() {
        let PatternNode::Internal { children: inner, .. } = child else { continue };
        unwrap_block_metavars(inner);
        let lone = match inner.as_slice() {
            [PatternNode::MetaVar { meta_var }] => Some(meta_var.clone()),
            [PatternNode::MetaVar { meta_var }, semicolon] if is_semicolon(semicolon) => {
                Some(meta_var.clone())
            }
            _ => None,
        };
        if let Some(meta_var) = lone {
            *child = PatternNode::MetaVar { meta_var };
        }
    }
    let mut i = 1;
    while i < children.len() {
        let lone_semicolon = matches!(&children[i], PatternNode::Internal { children: only, .. } if only.len() == 1 && is_semicolon(&only[0]));
        if lone_semicolon && matches!(children[i - 1], PatternNode::MetaVar { .. }) {
            children.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Whether a tree parses without error, but for tokens the parser supplied
/// (MISSING) to complete a node that is one metavariable: in C#
/// `if ($C) $S` the statement `$S` lacks its `;`, and the node whose text
/// is `$S` is read as the metavariable, standing for any statement.
fn reads_cleanly(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if !node.has_error() {
        return true;
    }
    if node.is_error() {
        return false;
    }
    if node.is_missing() {
        return node.parent().is_some_and(|parent| {
            let text = source[parent.byte_range()].trim();
            lang.extract_meta_var(text).is_some()
        });
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).all(|child| reads_cleanly(child, source, lang))
}

/// The fragment as a whole file, the way the ast-grep CLI reads every
/// pattern: `Pattern::try_new` builds the node (descending through single
/// children from the file's root), once the file is known to parse cleanly
/// (`try_new` itself accepts a tree with syntax errors).
fn try_whole_file(fragment: &str, expanded: &str, lang: Lang, tolerant: bool) -> Option<Pattern> {
    let root = lang.ast_grep(expanded);
    let tree_root = root.root().get_inner_node();
    if tree_root.has_error() && !(tolerant && tolerable(tree_root, expanded, lang)) {
        return None;
    }
    Pattern::try_new(fragment, lang).ok()
}

/// Whether a tree with syntax errors still reads the fragment as written:
/// its only errors are metavariables standing where the grammar wants
/// something else, and error recovery turned no keyword into a name (in a
/// C++ class body `for ($$$I) $S;` "parses" as a field whose type is named
/// `for`, which matches no loop at all).
fn tolerable(tree: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    only_metavariable_errors(tree, source, lang) && !keyword_as_name(tree, source, lang)
}

/// Whether a named leaf's text is one of the grammar's keywords.
fn keyword_as_name(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if node.child_count() == 0 {
        let text = &source[node.byte_range()];
        return node.is_named()
            && text.bytes().all(|b| b.is_ascii_alphabetic())
            && lang.grammar().id_for_node_kind(text, false) != 0;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|child| keyword_as_name(child, source, lang))
}

/// Whether every syntax error in the tree is an ERROR node whose whole
/// text is one metavariable (no MISSING nodes, no other ERROR nodes).
fn only_metavariable_errors(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if node.is_missing() {
        return false;
    }
    if node.is_error() {
        let text = source[node.byte_range()].trim();
        return lang.extract_meta_var(text).is_some();
    }
    if !node.has_error() {
        return true;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).all(|child| only_metavariable_errors(child, source, lang))
}

fn finish(
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

fn indent_lines(fragment: &str, indent: &str) -> String {
    if indent.is_empty() {
        return fragment.to_string();
    }
    let mut out = String::with_capacity(fragment.len() + 16);
    for (i, line) in fragment.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
