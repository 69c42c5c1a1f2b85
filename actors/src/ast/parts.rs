//! Declarations written in several parts that are one for an edit: a
//! property (Python's `@property` getter with its `@x.setter` and
//! `@x.deleter`; a TypeScript or JavaScript `get x()` beside its
//! `set x()`) and an overload group (Python's `@overload` stubs and the
//! implementation after them; TypeScript's signatures and the
//! implementation they describe, or an interface's signatures).
//!
//! A language server lists such a name once — pyright one symbol for a
//! property, at its last part — while the grammar reads each part on its
//! own: an edit by that name taking one part leaves the others behind (a
//! new getter beside the old setter, an implementation deleted under its
//! signatures, an insertion splitting a group). Here the parts become one
//! [`Declaration`]: from the first part's doc comment and decorators to the
//! last part's end, its body the getter's or the implementation's, its
//! [`Group`] saying which parts it holds. Only parts that stand next to
//! each other in one container are grouped; others of one name stay apart
//! (and an edit by that name is then ambiguous).

use super::declaration::{Declaration, Group, GroupKind, Part, Role};
use super::lang::Lang;

/// `all` (every declaration of `text`, in order) with each property and
/// overload group made one declaration, at its first part's place.
pub fn grouped(lang: Lang, text: &str, all: Vec<Declaration>) -> Vec<Declaration> {
    let roles: Vec<Option<Role>> = all.iter().map(|d| role(lang, text, d)).collect();
    let mut taken = vec![false; all.len()];
    let mut out = Vec::with_capacity(all.len());
    for i in 0..all.len() {
        if taken[i] {
            continue;
        }
        let run = run_from(&all, &roles, i);
        let run_roles: Vec<Role> = run.iter().filter_map(|&k| roles[k]).collect();
        match kind_of(&run_roles).filter(|_| run_roles.len() == run.len()) {
            Some(kind) => {
                for &k in &run {
                    taken[k] = true;
                }
                out.push(merge(&all, &run, &run_roles, kind));
            }
            None => out.push(all[i].clone()),
        }
    }
    out
}

/// The longest run of parts from `i`: declarations of one name in one
/// container, each the next declaration of that container after the one
/// before (what sits inside a part is skipped), whose roles stay a prefix
/// of a property or an overload group.
fn run_from(all: &[Declaration], roles: &[Option<Role>], i: usize) -> Vec<usize> {
    let mut run = vec![i];
    if roles[i].is_none() {
        return run;
    }
    let first = &all[i];
    loop {
        let at = run[run.len() - 1];
        // The next declaration of the same container, past the last part.
        let next = (at + 1..all.len())
            .find(|&k| all[k].start >= all[at].end && all[k].containers == first.containers);
        let Some(k) = next else { break };
        if all[k].name != first.name || roles[k].is_none() {
            break;
        }
        let with: Vec<Role> = run.iter().chain([&k]).filter_map(|&r| roles[r]).collect();
        if !prefix_of_group(&with) {
            break;
        }
        run.push(k);
        if roles[k] == Some(Role::Implementation) {
            break;
        }
    }
    run
}

/// Whether `roles` can still grow into a group: accessors only, or
/// signatures with at most an implementation at the end.
fn prefix_of_group(roles: &[Role]) -> bool {
    let accessors = roles.iter().all(|r| matches!(r, Role::Getter | Role::Setter | Role::Deleter));
    let Some((last, before)) = roles.split_last() else { return false };
    let overloads = before.iter().all(|r| *r == Role::Signature)
        && matches!(last, Role::Signature | Role::Implementation);
    accessors || overloads
}

/// What `roles` make, if a group: a property has a getter and another
/// accessor; an overload group starts with a signature and has two parts.
fn kind_of(roles: &[Role]) -> Option<GroupKind> {
    if roles.len() < 2 {
        return None;
    }
    if roles.iter().all(|r| matches!(r, Role::Getter | Role::Setter | Role::Deleter))
        && roles.contains(&Role::Getter)
    {
        return Some(GroupKind::Property);
    }
    (roles[0] == Role::Signature && prefix_of_group(roles)).then_some(GroupKind::Overloads)
}

/// The parts `run` (with their `roles`) as one declaration.
fn merge(all: &[Declaration], run: &[usize], roles: &[Role], kind: GroupKind) -> Declaration {
    let (first, last) = (&all[run[0]], &all[run[run.len() - 1]]);
    let parts: Vec<Part> = run
        .iter()
        .zip(roles)
        .map(|(&k, &role)| Part { role, name_at: all[k].name_at, body: all[k].body })
        .collect();
    // The body an edit of "the body" means: the getter's, the implementation's.
    let body_role = match kind {
        GroupKind::Property => Role::Getter,
        GroupKind::Overloads => Role::Implementation,
    };
    let body = parts.iter().find(|p| p.role == body_role).and_then(|p| p.body);
    Declaration {
        name: first.name.clone(),
        kind: first.kind.clone(),
        name_at: first.name_at,
        start: first.start,
        end: last.end,
        doc: first.doc,
        body,
        containers: first.containers.clone(),
        indent: first.indent.clone(),
        gap_before: first.gap_before,
        gap_after: last.gap_after,
        group: Some(Group { kind, parts }),
    }
}

/// What `d` can be in a group, by its grammar kind and what stands before
/// its name (decorators, `get`, `set`); `None`: never a part.
fn role(lang: Lang, text: &str, d: &Declaration) -> Option<Role> {
    let head = &text[d.start..d.name_at];
    if lang == Lang::PYTHON {
        if d.kind != "function_definition" {
            return None;
        }
        // `@functools.wraps(f)` reads as `functools.wraps`.
        let decorators: Vec<&str> = head
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix('@'))
            .map(|l| l.split('(').next().unwrap_or(l).trim())
            .collect();
        let accessor = |a: &str| decorators.iter().any(|x| *x == format!("{}.{a}", d.name));
        return Some(if decorators.contains(&"property") || accessor("getter") {
            Role::Getter
        } else if accessor("setter") {
            Role::Setter
        } else if accessor("deleter") {
            Role::Deleter
        } else if decorators.iter().any(|x| *x == "overload" || x.ends_with(".overload")) {
            Role::Signature
        } else {
            Role::Implementation
        });
    }
    if ![Lang::TYPESCRIPT, Lang::TSX, Lang::JAVASCRIPT].contains(&lang) {
        return None;
    }
    let words = || head.split(|c: char| !c.is_alphanumeric() && c != '_');
    match d.kind.as_str() {
        "function_signature" | "method_signature" | "abstract_method_signature" => Some(Role::Signature),
        "method_definition" if words().any(|w| w == "get") => Some(Role::Getter),
        "method_definition" if words().any(|w| w == "set") => Some(Role::Setter),
        "function_declaration" | "method_definition" => Some(Role::Implementation),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::declaration::{all, row_of};

    fn one<'a>(decls: &'a [Declaration], name: &str) -> &'a Declaration {
        let found: Vec<&Declaration> = decls.iter().filter(|d| d.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        found[0]
    }

    #[test]
    fn a_python_property_is_its_getter_setter_and_deleter_with_the_getters_body() {
        let text = "class R:\n    x = 1\n\n    # The encoding.\n    @property\n    def encoding(self):\n        return self._e\n\n    @encoding.setter\n    def encoding(self, v):\n        self._e = v\n\n    @encoding.deleter\n    def encoding(self):\n        del self._e\n\n    def other(self):\n        pass\n";
        let decls = grouped(Lang::PYTHON, text, all(Lang::PYTHON, text));
        let e = one(&decls, "encoding");
        assert_eq!(&text[e.doc.unwrap()..e.start], "# The encoding.\n    ");
        assert!(text[e.start..e.end].starts_with("@property\n    def encoding(self):"));
        assert!(text[e.start..e.end].ends_with("del self._e"));
        assert_eq!(&text[e.body.unwrap().0..e.body.unwrap().1], "return self._e");
        let group = e.group.as_ref().unwrap();
        assert_eq!(group.kind, GroupKind::Property);
        let rows: Vec<usize> = group.parts.iter().map(|p| row_of(text, p.name_at) + 1).collect();
        assert_eq!(rows, vec![6, 10, 14]);
        assert_eq!(e.gap_after, Some(1));
        assert!(one(&decls, "other").group.is_none());
    }

    #[test]
    fn python_overloads_are_one_with_their_implementation_or_alone_in_a_stub() {
        let text = "from typing import overload\n\nclass S:\n    @overload\n    def get(self, k: int) -> int: ...\n    @overload\n    def get(self, k: str) -> str: ...\n    def get(self, k):\n        return k\n";
        let decls = grouped(Lang::PYTHON, text, all(Lang::PYTHON, text));
        let g = one(&decls, "get");
        assert_eq!(g.group.as_ref().unwrap().kind, GroupKind::Overloads);
        assert_eq!(g.group.as_ref().unwrap().parts.len(), 3);
        assert_eq!(&text[g.body.unwrap().0..g.body.unwrap().1], "return k", "the implementation's");
        let stub = "class S:\n    @typing.overload\n    def get(self, k: int) -> int: ...\n    @typing.overload\n    def get(self, k: str) -> str: ...\n";
        let decls = grouped(Lang::PYTHON, stub, all(Lang::PYTHON, stub));
        let g = one(&decls, "get");
        assert_eq!(g.group.as_ref().unwrap().parts.len(), 2);
        assert_eq!(g.body, None, "a stub's overloads have no implementation");
    }

    #[test]
    fn two_plain_definitions_of_one_name_stay_two() {
        let text = "def f():\n    return 1\n\ndef f():\n    return 2\n";
        let decls = grouped(Lang::PYTHON, text, all(Lang::PYTHON, text));
        assert_eq!(decls.iter().filter(|d| d.name == "f").count(), 2);
        // A setter whose getter is elsewhere is no property here.
        let split = "class A:\n    @property\n    def x(self):\n        return 1\n\n    def y(self):\n        pass\n\n    @x.setter\n    def x(self, v):\n        pass\n";
        let decls = grouped(Lang::PYTHON, split, all(Lang::PYTHON, split));
        assert_eq!(decls.iter().filter(|d| d.name == "x").count(), 2);
    }

    #[test]
    fn typescript_overloads_accessors_and_interface_signatures_are_one_each() {
        let text = "/** Gets. */\nexport function get(a: string): string;\nexport function get(a: number): number;\nexport function get(a: any): any {\n  return a;\n}\n\nclass C {\n  m(a: string): string;\n  m(a: number): number;\n  m(a: any): any { return a; }\n  get v(): number { return 1; }\n  set v(x: number) {}\n}\n\ninterface I {\n  f(a: string): void;\n  f(a: number): void;\n}\n";
        let decls = grouped(Lang::TYPESCRIPT, text, all(Lang::TYPESCRIPT, text));
        let get = one(&decls, "get");
        assert_eq!(&text[get.doc.unwrap()..get.start], "/** Gets. */\n");
        assert!(text[get.start..get.end].starts_with("export function get(a: string): string;"));
        assert!(text[get.start..get.end].ends_with("return a;\n}"));
        assert_eq!(&text[get.body.unwrap().0..get.body.unwrap().1], "{\n  return a;\n}");
        let m = one(&decls, "m");
        assert_eq!(m.group.as_ref().unwrap().kind, GroupKind::Overloads);
        assert!(text[m.start..m.end].ends_with("{ return a; }"));
        let v = one(&decls, "v");
        assert_eq!(v.group.as_ref().unwrap().kind, GroupKind::Property);
        assert_eq!(&text[v.body.unwrap().0..v.body.unwrap().1], "{ return 1; }");
        let f = one(&decls, "f");
        assert_eq!(f.group.as_ref().unwrap().parts.len(), 2);
    }
}
