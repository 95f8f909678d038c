//! Where an unterminated quote was opened. The parser reports the end of the
//! input; the user needs the quote that never closed. A small scan with bash's
//! quoting rules (backslash, `'…'`, `"…"`, `$'…'`, backquotes, comments and
//! here-document bodies skipped) finds it; when the scan does not end inside a
//! quote of the kind the parser names, it has nothing to say.

/// The kind of quote the parser says is unterminated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quote {
    /// `'…'` (and `$'…'`).
    Single,
    /// `"…"`.
    Double,
    /// `` `…` ``.
    Back,
}

/// 1-based (line, column) of the unterminated `kind` quote in `source`.
pub(crate) fn find(source: &str, kind: Quote) -> Option<(usize, usize)> {
    let b = source.as_bytes();
    let mut i = 0;
    // Innermost open quote first.
    let mut open: Vec<(Quote, usize)> = Vec::new();
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        match open.last().map(|q| q.0) {
            Some(Quote::Single) => {
                if c == b'\'' {
                    open.pop();
                } else if c == b'\\' && ansi_c(b, &open) {
                    i += 1;
                }
                i += 1;
                continue;
            }
            Some(Quote::Double) => {
                match c {
                    b'\\' => i += 1,
                    b'"' => {
                        open.pop();
                    }
                    b'`' => open.push((Quote::Back, i)),
                    _ => {}
                }
                i += 1;
                continue;
            }
            Some(Quote::Back) | None => {}
        }
        match c {
            b'\\' => i += 1,
            b'\'' => open.push((Quote::Single, i)),
            b'"' => open.push((Quote::Double, i)),
            b'`' => {
                if open.last().map(|q| q.0) == Some(Quote::Back) {
                    open.pop();
                } else {
                    open.push((Quote::Back, i));
                }
            }
            b'#' if word_start && open.is_empty() => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'<' if open.is_empty()
                && b.get(i + 1) == Some(&b'<')
                && b.get(i + 2) != Some(&b'<') =>
            {
                i += 2;
                let strip = b.get(i) == Some(&b'-');
                if strip {
                    i += 1;
                }
                while i < b.len() && matches!(b[i], b' ' | b'\t') {
                    i += 1;
                }
                let start = i;
                while i < b.len()
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b')'
                    )
                {
                    i += 1;
                }
                let word: String = source
                    .get(start..i)
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                    .collect();
                heredocs.push((word, strip));
                word_start = false;
                continue;
            }
            b'\n' if open.is_empty() && !heredocs.is_empty() => {
                i += 1;
                for (delim, strip) in std::mem::take(&mut heredocs) {
                    // Skip the body up to and including the delimiter line.
                    loop {
                        let end = source[i..].find('\n').map_or(b.len(), |n| i + n);
                        let line = source.get(i..end).unwrap_or_default();
                        let line = if strip {
                            line.trim_start_matches('\t')
                        } else {
                            line
                        };
                        i = (end + 1).min(b.len());
                        if line == delim || end >= b.len() {
                            break;
                        }
                    }
                }
                word_start = true;
                continue;
            }
            _ => {}
        }
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        i += 1;
    }
    let (q, at) = *open.last()?;
    (q == kind).then(|| position(source, at))
}

/// Inside `$'…'` a backslash escapes the quote.
fn ansi_c(b: &[u8], open: &[(Quote, usize)]) -> bool {
    open.last()
        .is_some_and(|&(_, at)| at > 0 && b.get(at - 1) == Some(&b'$'))
}

fn position(source: &str, at: usize) -> (usize, usize) {
    let before = source.get(..at).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::{Quote, find};

    #[test]
    fn finds_the_quote_that_never_closed() {
        assert_eq!(find("echo \"abc\ndef", Quote::Double), Some((1, 6)));
        assert_eq!(find("echo 'a' \"b\" 'c", Quote::Single), Some((1, 14)));
        assert_eq!(find("echo ok\necho `date", Quote::Back), Some((2, 6)));
        assert_eq!(find("echo $'it\\'s", Quote::Single), Some((1, 7)));
        // A quote in a comment or a here-document body is not one.
        assert_eq!(find("# it's\necho \"x", Quote::Double), Some((2, 6)));
        assert_eq!(
            find("cat <<EOF\nit's\nEOF\necho 'x", Quote::Single),
            Some((4, 6))
        );
        // The scan disagrees with the parser: nothing said.
        assert_eq!(find("echo \"x\"", Quote::Double), None);
        assert_eq!(find("echo 'x", Quote::Double), None);
    }
}
