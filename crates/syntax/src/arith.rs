//! Arithmetic text, parsed in time linear in its nesting.
//!
//! brush-parser's arithmetic grammar backtracks on nested subscripts: each level
//! of `a[a[a[…]]]` multiplies the parse time (six levels took seconds, ten never
//! ended), so a short input could hang a server. Subscripts nested inside
//! another subscript are parsed (and, at run time, evaluated) on their own, from
//! the innermost out, and replaced by their value: the grammar then only ever
//! sees one level.

/// The byte range of an innermost subscripted reference that sits inside
/// another subscript, name included (`a[b[1]]` → the range of `b[1]`), if any.
pub fn nested_subscript(text: &str) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'[' => open.push(i),
            b']' => {
                let start = open.pop()?;
                // Innermost (nothing opened after it is still open) and nested.
                if !open.is_empty() && !text[start + 1..i].contains('[') {
                    let name = bytes[..start]
                        .iter()
                        .rev()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                        .count();
                    return Some(start - name..i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// True when the text of a `((…))` that is not arithmetic reads as commands:
/// `( ( echo deep ) )` reaches the parser as `((echo deep))`, and bash runs it
/// as nested subshells. Its first word must look like a command name, so that
/// broken arithmetic (`(( 2#9 ))`, `(( x+1=2 ))`) stays an arithmetic error.
pub fn looks_like_commands(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    first
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '/' | '('))
        && first
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '(' | ')'))
        && parse(text).is_err()
}

/// Removes the double quotes inside subscripts (`A["1"]`): bash expands a
/// subscript like a word, so they are quote characters, not text, and the
/// arithmetic grammar does not take them. A single quote stays: an indexed
/// array's subscript is arithmetic, where `'` is an error (`a['1']`); an
/// associative array's key has its quotes removed before this.
pub fn unquote_subscripts(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('"') || !text.contains('[') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '"' if depth > 0 => continue,
            _ => {}
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// Quote removal for arithmetic written in a script (`$((…))`, `((…))`,
/// `for ((…))`, a subscript or a `${x:off:len}` offset), done before its
/// expansions: the text is read as if double-quoted, so a `"` is a quote
/// character and goes (`$(( "1" + 1 ))` is 2, `"1 + 2" * 2` is 5) and `\"`
/// is a literal `"` (an error in the expression, as in bash). A single quote
/// is literal text. What is inside `$(…)`, `${…}` and backquotes is left to
/// their own expansion; a quote in a value (`x='"1"'`) is never removed.
pub fn remove_script_quotes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('"') {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut done) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'"') => {
                out.push_str(&text[done..i]);
                out.push('"');
                i += 2;
                done = i;
            }
            b'\\' => i += 2,
            b'"' => {
                out.push_str(&text[done..i]);
                i += 1;
                done = i;
            }
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => i = nested_end(b, i + 1),
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[done.min(text.len())..]);
    std::borrow::Cow::Owned(out)
}

/// The index just past the `)` or `}` closing the bracket at `open`, skipping
/// quoted text and escapes inside (the end of `b` when it is not closed).
fn nested_end(b: &[u8], open: usize) -> usize {
    let (opening, closing) = if b[open] == b'(' {
        (b'(', b')')
    } else {
        (b'{', b'}')
    };
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            c if c == opening => depth += 1,
            c if c == closing => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Parses arithmetic text, checking its shape only: a subscript stands for `0`
/// (an associative array's key is any text, `m["a b"]`, `m[ k ]`, and an
/// indexed one is checked when it is evaluated, as bash does).
pub fn parse(text: &str) -> Result<brush_parser::ast::ArithmeticExpr, String> {
    parse_one(&blank_subscripts(&unquote_subscripts(text.trim())))
}

/// `text` with the inside of every subscript (`name[…]`, nested or not)
/// replaced by `0`.
fn blank_subscripts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut prev_is_name = false;
    for c in text.chars() {
        match c {
            '[' if depth > 0 || prev_is_name => {
                if depth == 0 {
                    out.push_str("[0");
                }
                depth += 1;
            }
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(']');
                }
            }
            _ if depth > 0 => {}
            _ => out.push(c),
        }
        prev_is_name = depth == 0 && (c.is_ascii_alphanumeric() || c == '_');
    }
    // An unclosed `[`: the grammar reports it.
    if depth > 0 {
        return text.to_string();
    }
    out
}

fn parse_one(t: &str) -> Result<brush_parser::ast::ArithmeticExpr, String> {
    match crate::catch_quietly(|| brush_parser::arithmetic::parse(t)) {
        Ok(Ok(e)) => Ok(e),
        _ => Err(format!("invalid arithmetic expression `{t}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_innermost_nested_subscript() {
        assert_eq!(nested_subscript("a[1]"), None);
        assert_eq!(nested_subscript("a[b[1]] + c[2]"), Some(2..6));
        let deep = "a[a[a[a[a[a[a[a[a[a[1]]]]]]]]]]";
        let r = nested_subscript(deep).unwrap();
        assert_eq!(&deep[r], "a[1]");
    }

    #[test]
    fn deep_nesting_parses_quickly() {
        let mut e = "1".to_string();
        for _ in 0..200 {
            e = format!("a[{e}]");
        }
        assert!(parse(&e).is_ok());
        // Only the shape: subscripts are checked when evaluated.
        assert!(parse("a[b[1 +]]").is_ok());
        assert!(parse("a[1] +").is_err());
        assert!(parse("y = m[\"a b\"]").is_ok());
        assert!(parse("a[1").is_err());
    }
}
