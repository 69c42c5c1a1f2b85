//! Python's indentation rules, which its grammar leaves to the tokenizer:
//! tree-sitter reads `self.y = 0` followed by `  return None` without an
//! error, where Python refuses to compile the file ("unexpected indent").
//! An edit that would leave such a line is as broken as one that leaves an
//! unclosed bracket, so [`super::syntax::error_lines`] counts these too.
//!
//! The rules, on logical lines (a line continued by brackets, a backslash
//! or a triple-quoted string is one; blank and comment-only lines do not
//! count): a line indented deeper than the one before must follow a line
//! ending in `:`, and a line ending in `:` must be followed by a deeper
//! one; a line indented less must return to a level open before.

/// Where the scan stands inside a string.
#[derive(Clone, Copy)]
struct Quote {
    ch: char,
    triple: bool,
}

/// The 1-based lines breaking Python's indentation rules in `text`.
pub fn errors(text: &str) -> Vec<usize> {
    let mut errors = Vec::new();
    let mut levels: Vec<usize> = vec![0];
    let mut depth = 0usize;
    let mut quote: Option<Quote> = None;
    let mut continued = false;
    // The last logical line ended in `:`, and where.
    let mut opened: Option<usize> = None;
    // The last significant character of the logical line being read.
    let mut last = None;
    for (row, line) in text.lines().enumerate() {
        let starts_logical = depth == 0 && quote.is_none() && !continued;
        if starts_logical {
            let body = line.trim_start_matches([' ', '\t', '\x0c']);
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            let width = width_of(&line[..line.len() - body.len()]);
            let top = *levels.last().unwrap_or(&0);
            if opened.take().is_some() {
                if width > top {
                    levels.push(width);
                } else {
                    errors.push(row + 1);
                }
            } else if width > top {
                errors.push(row + 1);
            } else {
                while levels.last().is_some_and(|l| *l > width) {
                    levels.pop();
                }
                if levels.last() != Some(&width) {
                    errors.push(row + 1);
                    levels.push(width);
                }
            }
            last = None;
        }
        continued = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if let Some(q) = quote {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    c if c == q.ch && !q.triple => quote = None,
                    c if c == q.ch && chars.peek() == Some(&q.ch) => {
                        chars.next();
                        if chars.peek() == Some(&q.ch) {
                            chars.next();
                            quote = None;
                        }
                    }
                    _ => {}
                }
                last = Some(c);
                continue;
            }
            match c {
                '#' => break,
                '\'' | '"' => {
                    let triple = chars.peek() == Some(&c) && {
                        let mut ahead = chars.clone();
                        ahead.next();
                        ahead.peek() == Some(&c)
                    };
                    if triple {
                        chars.next();
                        chars.next();
                    }
                    quote = Some(Quote { ch: c, triple });
                }
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                '\\' if chars.peek().is_none() => {
                    continued = true;
                    continue;
                }
                _ => {}
            }
            if !c.is_whitespace() {
                last = Some(c);
            }
        }
        // A one-quote string does not cross a line (an error the grammar sees).
        if quote.is_some_and(|q| !q.triple) {
            quote = None;
        }
        if depth == 0 && quote.is_none() && !continued && last == Some(':') {
            opened = Some(row);
        }
    }
    if let Some(row) = opened {
        errors.push(row + 1);
    }
    errors
}

/// Indentation's width, a tab reaching the next multiple of 8 (Python's rule).
fn width_of(indent: &str) -> usize {
    indent.chars().fold(0, |w, c| if c == '\t' { (w / 8 + 1) * 8 } else { w + 1 })
}

#[cfg(test)]
mod tests {
    use super::errors;

    #[test]
    fn a_line_indented_under_no_block_or_back_to_no_level_is_an_error() {
        assert_eq!(errors("def f(self):\n    self.y = 0\n      return None\n"), vec![3]);
        assert_eq!(errors("if x:\n        a = 1\n    b = 2\n"), vec![3], "back to a level never opened");
        assert_eq!(errors("def f():\nreturn 1\n"), vec![2], "a block with nothing in it");
        assert_eq!(errors("class A:\n"), vec![1], "the file ends before the block");
    }

    #[test]
    fn brackets_strings_comments_and_continuations_are_one_logical_line() {
        let fine = "def f(a,\n        b):\n    x = {\n  'k': [1,\n 2],\n    }\n    s = \"\"\"\nnot: indented\n      at all\"\"\"\n    # a comment:\n        # anywhere\n    t = a + \\\n            b\n    if t: return 1\n    u = 'a#b:'  # c:\n    return x[1:]\n\n\nclass B: ...\n";
        assert_eq!(errors(fine), Vec::<usize>::new());
        assert_eq!(errors("if x:\n\ty = 1\n        z = 2\n"), Vec::<usize>::new(), "a tab is eight columns");
    }
}
