//! Colours for the line being typed: keywords, the command word, strings,
//! variables, comments and operators, and the parse error (from
//! [`crate::input::classify`]) underlined in red. A small scanner with bash's
//! quoting rules: it must colour half-typed input, which no parser accepts.

/// What a span of the line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `if`, `then`, `for`, `do`, `{`, … at a command position.
    Keyword,
    /// The command word.
    Command,
    /// A quoted string.
    Str,
    /// `$name`, `${…}`, `$(`, `$((`, and the name of an assignment.
    Variable,
    /// `# …`.
    Comment,
    /// `|`, `&&`, `;`, redirections.
    Operator,
}

impl Kind {
    fn ansi(self) -> &'static str {
        match self {
            Kind::Keyword => "\x1b[1;35m",
            Kind::Command => "\x1b[1;34m",
            Kind::Str => "\x1b[32m",
            Kind::Variable => "\x1b[36m",
            Kind::Comment => "\x1b[90m",
            Kind::Operator => "\x1b[33m",
        }
    }
}

const RESET: &str = "\x1b[0m";
const ERROR: &str = "\x1b[4;31m";

const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "{", "}", "!", "[[", "]]", "in",
];

/// Keywords after which a command word follows.
const OPENERS: &[&str] = &[
    "if", "then", "else", "elif", "while", "until", "do", "{", "!", "time",
];

fn is_name_byte(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphanumeric()
}

fn is_operator_byte(b: u8) -> bool {
    matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
}

/// The coloured spans of `line` (byte ranges, in order, not overlapping).
pub fn spans(line: &str) -> Vec<(std::ops::Range<usize>, Kind)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut command_position = true;
    let mut after_redirect = false;
    // The word before: `for NAME in`, `case WORD in`.
    let mut prev_words: Vec<String> = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' {
            i += 1;
            continue;
        }
        if c == b'\n' {
            command_position = true;
            i += 1;
            continue;
        }
        if c == b'#' {
            out.push((
                i..b.len().min(line[i..].find('\n').map_or(b.len(), |n| i + n)),
                Kind::Comment,
            ));
            i = out.last().map_or(b.len(), |s| s.0.end);
            continue;
        }
        if is_operator_byte(c) {
            let start = i;
            while i < b.len() && is_operator_byte(b[i]) && i - start < 3 {
                i += 1;
            }
            let op = &line[start..i];
            out.push((start..i, Kind::Operator));
            if op.contains('<') || op.contains('>') {
                after_redirect = !op.ends_with('(');
            } else {
                command_position = true;
            }
            continue;
        }
        // A word.
        let start = i;
        let mut inner: Vec<(std::ops::Range<usize>, Kind)> = Vec::new();
        i = scan_word(line, i, &mut inner);
        let word = &line[start..i];
        if after_redirect {
            after_redirect = false;
            out.extend(inner);
            continue;
        }
        let in_keyword = word == "in"
            && prev_words
                .iter()
                .rev()
                .nth(1)
                .is_some_and(|w| w == "for" || w == "case" || w == "select");
        if in_keyword {
            out.push((start..i, Kind::Keyword));
        } else if command_position && KEYWORDS.contains(&word) {
            out.push((start..i, Kind::Keyword));
            command_position = OPENERS.contains(&word);
        } else if command_position && is_assignment(word) {
            let eq = word.find('=').unwrap_or(word.len());
            out.push((start..start + eq, Kind::Variable));
            out.extend(inner.into_iter().filter(|(r, _)| r.start >= start + eq));
        } else if command_position {
            out.push((start..i, Kind::Command));
            command_position = false;
        } else {
            out.extend(inner);
        }
        prev_words.push(word.to_string());
    }
    out
}

fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    !name.is_empty() && !name.as_bytes()[0].is_ascii_digit() && name.bytes().all(is_name_byte)
}

/// Scans one word from `i`; pushes the strings and variables inside it; returns
/// where it ends.
fn scan_word(line: &str, mut i: usize, inner: &mut Vec<(std::ops::Range<usize>, Kind)>) -> usize {
    let b = line.as_bytes();
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' => break,
            c if is_operator_byte(c) => break,
            b'\\' => i = (i + 2).min(b.len()),
            b'\'' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i = (i + 1).min(b.len());
                inner.push((start..i, Kind::Str));
            }
            b'"' => {
                let start = i;
                i += 1;
                let mut seg = start;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'$' {
                        inner.push((seg..i, Kind::Str));
                        let end = scan_dollar(b, i);
                        inner.push((i..end, Kind::Variable));
                        i = end;
                        seg = i;
                        continue;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                inner.push((seg..i, Kind::Str));
            }
            b'$' => {
                let end = scan_dollar(b, i);
                inner.push((i..end, Kind::Variable));
                i = end;
            }
            _ => i += 1,
        }
    }
    i.min(b.len())
}

/// The end of a `$…` expansion starting at `i` (`$( … )` bodies are left plain).
fn scan_dollar(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    match b.get(j) {
        Some(b'{') => {
            while j < b.len() && b[j] != b'}' {
                j += 1;
            }
            (j + 1).min(b.len())
        }
        Some(b'(') => {
            j += 1;
            if b.get(j) == Some(&b'(') {
                j += 1;
            }
            j
        }
        Some(c) if is_name_byte(*c) && !c.is_ascii_digit() => {
            while j < b.len() && is_name_byte(b[j]) {
                j += 1;
            }
            j
        }
        Some(b'?' | b'#' | b'@' | b'*' | b'$' | b'!' | b'-' | b'0'..=b'9') => j + 1,
        _ => j,
    }
}

/// `line` with ANSI colours; the bytes from `error_at` to the end of that word
/// (or the last character, at the end of the line) underlined in red.
pub fn paint(line: &str, error_at: Option<usize>) -> String {
    let spans = spans(line);
    let error = error_at.map(|at| {
        let at = at.min(line.len());
        let at = floor_char(
            line,
            if at == line.len() {
                at.saturating_sub(1)
            } else {
                at
            },
        );
        let end = line[at..]
            .find([' ', '\t', '\n'])
            .map_or(line.len(), |n| at + n)
            .max(next_char(line, at));
        at..end
    });
    let mut out = String::with_capacity(line.len() * 2);
    let style_at = |i: usize| -> Option<&'static str> {
        if error.as_ref().is_some_and(|e| e.contains(&i)) {
            return Some(ERROR);
        }
        spans
            .iter()
            .find(|(r, _)| r.contains(&i))
            .map(|(_, k)| k.ansi())
    };
    let mut current: Option<&'static str> = None;
    for (i, ch) in line.char_indices() {
        let s = style_at(i);
        if s != current {
            if current.is_some() {
                out.push_str(RESET);
            }
            if let Some(s) = s {
                out.push_str(s);
            }
            current = s;
        }
        out.push(ch);
    }
    if current.is_some() {
        out.push_str(RESET);
    }
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn next_char(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(i, |c| i + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::{Kind, paint, spans};

    fn kinds(line: &str) -> Vec<(&str, Kind)> {
        spans(line)
            .into_iter()
            .filter(|(r, _)| !r.is_empty())
            .map(|(r, k)| (&line[r], k))
            .collect()
    }

    #[test]
    fn keywords_commands_strings_variables_comments() {
        let k = kinds("if grep -q 'a b' \"$f\"; then echo $HOME; fi # done");
        assert!(k.contains(&("if", Kind::Keyword)));
        assert!(k.contains(&("grep", Kind::Command)));
        assert!(k.contains(&("'a b'", Kind::Str)));
        assert!(k.contains(&("$f", Kind::Variable)));
        assert!(k.contains(&("then", Kind::Keyword)));
        assert!(k.contains(&("echo", Kind::Command)));
        assert!(k.contains(&("$HOME", Kind::Variable)));
        assert!(k.contains(&("fi", Kind::Keyword)));
        assert!(k.contains(&("# done", Kind::Comment)));
        // An argument that spells a keyword is not one.
        assert!(!kinds("echo if").contains(&("if", Kind::Keyword)));
    }

    #[test]
    fn for_loop_and_assignment() {
        let k = kinds("for i in 1 2; do x=$i; done");
        assert!(k.contains(&("in", Kind::Keyword)));
        assert!(k.contains(&("x", Kind::Variable)));
        assert!(k.contains(&("done", Kind::Keyword)));
    }

    #[test]
    fn the_error_is_underlined_and_text_kept() {
        let p = paint("echo )", Some(5));
        assert!(p.contains("\x1b[4;31m)"), "{p:?}");
        let plain: String = strip(&p);
        assert_eq!(plain, "echo )");
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut esc = false;
        for c in s.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }
}
