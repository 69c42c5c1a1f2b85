//! The ladder of contexts a pattern fragment is tried in, per language.
//!
//! Each rung wraps the fragment in the smallest code that gives it a place
//! to stand — a statement in a function body, an expression, a member of a
//! class or module, a top-level declaration — in the order the rungs are
//! tried (see [`super::pattern`] for how a reading is chosen). Languages
//! without statements (data and markup) have only the whole file.

use super::lang::Lang;

/// One rung of the ladder: the fragment goes between `prefix` and `suffix`,
/// each of its lines after the first indented by `indent`.
pub(super) struct Scaffold {
    /// What the rung makes of the fragment, for messages ("a statement").
    pub(super) context: &'static str,
    pub(super) prefix: &'static str,
    pub(super) suffix: &'static str,
    pub(super) indent: &'static str,
}

const fn rung(
    context: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    indent: &'static str,
) -> Scaffold {
    Scaffold { context, prefix, suffix, indent }
}

pub(super) const STATEMENT: &str = "a statement";
pub(super) const EXPRESSION: &str = "an expression";
pub(super) const MEMBER: &str = "a class member";
pub(super) const DECLARATION: &str = "a top-level declaration";
pub(super) const TOP_LEVEL: &str = "a whole file";
pub(super) const LOOSE: &str = "a whole file with syntax errors";

/// The ladder for each language, in the order it is tried. Languages
/// without statements (data and markup) have only the whole file.
pub(super) fn ladder(lang: Lang) -> &'static [Scaffold] {
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

/// Code that stands where a metavariable cannot: metavariable number `i`
/// is written `{prefix}{i}{suffix}` (a single one with `single`, a
/// `$$$` one with `multi`), the fragment is read on the ladder, and the
/// node spelling a stand-in is the metavariable again.
pub(super) struct StandIn {
    pub(super) single: (&'static str, &'static str),
    pub(super) multi: (&'static str, &'static str),
}

/// The stand-ins of a language where its grammar rejects a metavariable
/// in places people write one, in the order they are tried; tried only
/// when no rung reads the fragment as written.
///
/// - JSON has no names at all: `"version": $V` is no JSON, a string is a
///   value and a key.
/// - PHP names its variables `$x`: `$A = $B;` with `µA` for `$A` is an
///   assignment to a constant, which PHP has not; a variable is.
/// - HCL: a block's body holds attributes and blocks, never a bare name,
///   so `resource $T $N { $$$B }` needs a block where `$$$B` stands (and
///   a name, where it stands among arguments).
pub(super) fn stand_ins(lang: Lang) -> &'static [StandIn] {
    const JSON: &[StandIn] = &[StandIn { single: ("\"__tether_mv", "\""), multi: ("\"__tether_mv", "\"") }];
    const PHP: &[StandIn] = &[StandIn { single: ("$__tether_mv", ""), multi: ("$__tether_mv", "") }];
    const HCL: &[StandIn] = &[
        StandIn { single: ("__tether_mv", ""), multi: ("__tether_mv", " {\n}") },
        StandIn { single: ("__tether_mv", ""), multi: ("__tether_mv", "") },
    ];
    match lang {
        Lang::JSON => JSON,
        Lang::PHP => PHP,
        Lang::HCL => HCL,
        _ => &[],
    }
}

/// Whether statements (or declarations) in the language end with `;`, so
/// the ladder may append one to a fragment written without it.
pub(super) fn uses_semicolons(lang: Lang) -> bool {
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
