//! What the inspecting ops found, in words: threads, a stack, scopes,
//! children, a value — each with its cap stated and what it left out.

use serde_json::{Value, json};
use tether_actors::dap::session::{
    Evaluated, MAX_CHILDREN, MAX_FRAMES, MAX_THREADS, MAX_VALUE, ScopeAt, ShownVariable, StackFrameAt,
};

/// The first threads, and how many there are.
pub(super) fn threads(listed: &[(u64, String)], total: usize) -> (String, Value) {
    let mut text = listed.iter().map(|(id, name)| format!("{id} {name}")).collect::<Vec<_>>().join("\n");
    if total > listed.len() {
        text.push_str(&format!("\n… {} more threads (listed at most {MAX_THREADS})", total - listed.len()));
    }
    let data = json!({
        "threads": listed.iter().map(|(id, name)| json!({"id": id, "name": name})).collect::<Vec<_>>(),
        "total": total,
    });
    (if text.is_empty() { "no threads".into() } else { text }, data)
}

/// The first frames of a stack, and how many there are.
pub(super) fn stack(frames: &[StackFrameAt], total: usize) -> (String, Value) {
    let mut text = String::new();
    for (i, f) in frames.iter().enumerate() {
        let path = f.shown_path.as_deref().unwrap_or("?");
        text.push_str(&format!("#{i} frame_id={} {} at {path}:{}\n", f.id, f.name, f.line));
    }
    if total > MAX_FRAMES {
        text.push_str(&format!("… {} more frames not shown (cap {MAX_FRAMES})\n", total - MAX_FRAMES));
    }
    let shown: Vec<Value> =
        frames.iter().map(|f| json!({"id": f.id, "name": f.name, "line": f.line, "path": f.path})).collect();
    (text.trim_end().to_string(), json!({"frames": shown, "total": total}))
}

/// A frame's scopes.
pub(super) fn scopes(scopes: &[ScopeAt]) -> (String, Value) {
    let text =
        scopes.iter().map(|s| format!("{} reference={}", s.name, s.reference)).collect::<Vec<_>>().join("\n");
    let data = json!({"scopes": scopes
        .iter()
        .map(|s| json!({"name": s.name, "reference": s.reference, "expensive": s.expensive}))
        .collect::<Vec<_>>()});
    (if text.is_empty() { "no scopes".into() } else { text }, data)
}

/// The first children of a reference, and how many there are.
pub(super) fn variables(listed: &[ShownVariable], total: usize) -> (String, Value) {
    let mut text = String::new();
    for v in listed {
        let ty = v.ty.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
        let expand = if v.reference > 0 { format!(" [reference={}]", v.reference) } else { String::new() };
        text.push_str(&format!("{} = {}{ty}{expand}\n", v.name, v.value));
    }
    if total > listed.len() {
        text.push_str(&format!("… {} more children not shown (cap {MAX_CHILDREN})\n", total - listed.len()));
    }
    let cut_values = listed.iter().filter(|v| v.cut).count();
    if cut_values > 0 {
        text.push_str(&format!("({cut_values} value(s) cut at {MAX_VALUE} characters)\n"));
    }
    let data: Vec<Value> = listed
        .iter()
        .map(|v| json!({"name": v.name, "value": v.value, "type": v.ty, "reference": v.reference, "value_cut": v.cut}))
        .collect();
    let text = if text.is_empty() { "no children".into() } else { text.trim_end().to_string() };
    (text, json!({"variables": data, "total": total}))
}

/// An expression's value.
pub(super) fn evaluated(e: &Evaluated) -> (String, Value) {
    let ty = e.ty.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    let note = if e.cut {
        format!("\n(value cut at {MAX_VALUE} characters; evaluate a slice or a part of it to see more)")
    } else {
        String::new()
    };
    let data = json!({
        "expression": e.expression,
        "result": e.value,
        "type": e.ty,
        "cut": e.cut,
        "reference": e.reference,
    });
    (format!("{} = {}{ty}{note}", e.expression, e.value), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_state_their_caps_and_what_they_left_out() {
        let (text, data) = threads(&[(1, "MainThread".into())], 101);
        assert_eq!(text, "1 MainThread\n… 100 more threads (listed at most 100)");
        assert_eq!(data["total"], 101);
        let frame = StackFrameAt {
            id: 7,
            name: "main".into(),
            path: Some("/w/prog.py".into()),
            shown_path: Some("prog.py".into()),
            line: 4,
        };
        let (text, data) = stack(&[frame], 31);
        assert_eq!(text, "#0 frame_id=7 main at prog.py:4\n… 1 more frames not shown (cap 30)");
        assert_eq!(data["frames"][0]["path"], "/w/prog.py", "the data keeps the adapter's path");
        let child = ShownVariable {
            name: "xs".into(),
            value: "[1, …".into(),
            cut: true,
            ty: Some("list".into()),
            reference: 9,
        };
        let (text, data) = variables(&[child], 1);
        assert_eq!(text, "xs = [1, … (list) [reference=9]\n(1 value(s) cut at 400 characters)");
        assert_eq!(data["variables"][0]["value_cut"], true);
        assert_eq!(variables(&[], 0).0, "no children");
        assert_eq!(scopes(&[]).0, "no scopes");
        let value = Evaluated {
            expression: "n + 1".into(),
            value: "8".into(),
            cut: false,
            ty: Some("int".into()),
            reference: 0,
        };
        let (text, data) = evaluated(&value);
        assert_eq!(text, "n + 1 = 8 (int)");
        assert_eq!(data["result"], "8");
    }
}
