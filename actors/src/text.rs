//! Text helpers every resource's answers use: cutting a string to a
//! budget (in characters, the unit a model reads, or in bytes, the unit a
//! buffer holds), durations as a person says them, plurals, and where
//! each line of a text went in its next version.

use std::time::Duration;

/// The mark a cut string ends with.
pub const ELLIPSIS: char = '…';

/// `s` whole, or its first `max` characters followed by `…` when it is
/// longer, and whether it was cut. Every model-facing cut counts characters: a byte
/// budget would cut a line of CJK or emoji to a third of its Latin twin.
pub fn cut(s: &str, max: usize) -> (String, bool) {
    match s.char_indices().nth(max) {
        None => (s.to_string(), false),
        Some((end, _)) => (format!("{}{ELLIPSIS}", &s[..end]), true),
    }
}

/// For each line (0-based) of `before`, the line it is in `after` when it
/// was kept unchanged by the change between them (a line diff), or `None`
/// where it was removed or rewritten.
pub fn kept_lines(before: &str, after: &str) -> Vec<Option<usize>> {
    let mut map = vec![None; before.lines().count().max(before.split('\n').count())];
    for op in similar::TextDiff::from_lines(before, after).ops() {
        if let similar::DiffOp::Equal { old_index, new_index, len } = *op {
            for i in 0..len {
                if let Some(slot) = map.get_mut(old_index + i) {
                    *slot = Some(new_index + i);
                }
            }
        }
    }
    map
}

/// A unified diff of `before` → `after` by lines, with `context` lines
/// around each change and no file headers.
pub fn line_diff(before: &str, after: &str, context: usize) -> String {
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(context).to_string()
}

/// Where line `line` (1-based) of `before` stands in `after`: its number
/// there when the line itself is unchanged (lines inserted or removed
/// elsewhere only moved it), `None` when it was changed or removed.
pub fn line_now(before: &str, after: &str, line: u32) -> Option<u32> {
    let at = (line as usize).checked_sub(1)?;
    let diff = similar::TextDiff::from_lines(before, after);
    diff.ops().iter().find_map(|op| match *op {
        similar::DiffOp::Equal { old_index, new_index, len }
            if (old_index..old_index + len).contains(&at) =>
        {
            Some((new_index + at - old_index + 1) as u32)
        }
        _ => None,
    })
}

/// The longest prefix of `s` that is at most `max` bytes and ends on a
/// character boundary: for buffers whose bound is memory, not reading.
pub fn byte_prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `90 s`, `5 min`, `2 h`, `300 ms`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s == 0 {
        format!("{} ms", d.as_millis())
    } else if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// The plural ending of a count: `""` for one, `"s"` otherwise.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_characters_and_byte_prefixes_stay_on_boundaries() {
        assert_eq!(cut("abc", 3), ("abc".to_string(), false));
        assert_eq!(cut("abcd", 3), ("abc…".to_string(), true));
        assert_eq!(cut("日本語です", 2), ("日本…".to_string(), true));
        assert_eq!(byte_prefix("日本", 4), "日");
        assert_eq!(byte_prefix("ab", 4), "ab");
        assert_eq!(human_duration(Duration::from_secs(90)), "90 s");
        assert_eq!(human_duration(Duration::from_secs(300)), "5 min");
        assert_eq!(human_duration(Duration::from_secs(7200)), "2 h");
        assert_eq!(human_duration(Duration::from_millis(300)), "300 ms");
        assert_eq!(plural(1), "");
        assert_eq!(plural(2), "s");
    }

    #[test]
    fn a_line_moved_by_an_insertion_above_is_found_and_a_changed_one_is_not() {
        let before = "a\nb\nc\nd\n";
        let after = "x\ny\na\nb\nC\nd\n";
        assert_eq!(super::line_now(before, after, 2), Some(4));
        assert_eq!(super::line_now(before, after, 3), None, "changed");
        assert_eq!(super::line_now(before, after, 4), Some(6));
        assert_eq!(super::line_now(before, after, 9), None, "past the end");
        assert_eq!(super::line_now(before, after, 0), None);
    }
}
