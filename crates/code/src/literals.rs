//! The string literals of a script's source: the words the agent wrote.
//!
//! A value equal to one of them is the agent's (an argv word, a path, a URL),
//! whatever the script read before: the agent typed that very text, so it
//! reveals nothing the agent did not know and was not chosen by the data.
//! The scan is lexical and lenient: a quote inside a comment or a regular
//! expression may make it collect more text, but all of it is the agent's.

use std::collections::HashSet;

/// The set of literal texts.
#[derive(Debug, Default, Clone)]
pub struct Literals(HashSet<String>);

impl Literals {
    /// Collects the contents of `'…'`, `"…"` and template literals (each
    /// piece between `${…}`) of `source`.
    pub fn scan(source: &str) -> Literals {
        let mut set = HashSet::new();
        let b: Vec<char> = source.chars().collect();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == '/' && b.get(i + 1) == Some(&'/') {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            if c == '/' && b.get(i + 1) == Some(&'*') {
                i += 2;
                while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            if c == '\'' || c == '"' || c == '`' {
                let mut text = String::new();
                i += 1;
                while i < b.len() && b[i] != c {
                    if b[i] == '\\' && i + 1 < b.len() {
                        text.push_str(&unescape(b[i + 1], &b, &mut i));
                        continue;
                    }
                    if c != '`' && b[i] == '\n' {
                        break;
                    }
                    if c == '`' && b[i] == '$' && b.get(i + 1) == Some(&'{') {
                        set.insert(std::mem::take(&mut text));
                        // Skip the interpolation (nested braces counted).
                        let mut depth = 0;
                        while i < b.len() {
                            match b[i] {
                                '{' => depth += 1,
                                '}' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            i += 1;
                        }
                        i += 1;
                        continue;
                    }
                    text.push(b[i]);
                    i += 1;
                }
                set.insert(text);
                i += 1;
                continue;
            }
            i += 1;
        }
        Literals(set)
    }

    /// True when `text` is exactly one of the literals.
    pub fn contains(&self, text: &str) -> bool {
        self.0.contains(text)
    }
}

/// The character(s) an escape `\c` stands for; advances `i` past it.
fn unescape(c: char, b: &[char], i: &mut usize) -> String {
    *i += 2;
    match c {
        'n' => "\n".into(),
        't' => "\t".into(),
        'r' => "\r".into(),
        '0' => "\0".into(),
        'b' => "\u{8}".into(),
        'f' => "\u{c}".into(),
        'v' => "\u{b}".into(),
        '\n' => String::new(),
        'x' => {
            let hex: String = b.iter().skip(*i).take(2).collect();
            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                Some(ch) if hex.len() == 2 => {
                    *i += 2;
                    ch.to_string()
                }
                _ => "x".into(),
            }
        }
        'u' => {
            if b.get(*i) == Some(&'{') {
                let hex: String = b.iter().skip(*i + 1).take_while(|c| **c != '}').collect();
                if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    *i += hex.len() + 2;
                    return ch.to_string();
                }
                return "u".into();
            }
            let hex: String = b.iter().skip(*i).take(4).collect();
            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                Some(ch) if hex.len() == 4 => {
                    *i += 4;
                    ch.to_string()
                }
                _ => "u".into(),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_quoted_and_template_pieces() {
        let l = Literals::scan(r#"const a = "x.txt"; $.cmd('git', `log ${n} -1`); // "no""#);
        assert!(l.contains("x.txt"));
        assert!(l.contains("git"));
        assert!(l.contains("log "));
        assert!(l.contains(" -1"));
        assert!(!l.contains("no"));
        assert!(!l.contains("log ${n} -1"));
    }

    #[test]
    fn escapes_are_decoded() {
        let l = Literals::scan(r#"f("a\nb", '\x41\u0042\u{43}')"#);
        assert!(l.contains("a\nb"));
        assert!(l.contains("ABC"));
    }
}
