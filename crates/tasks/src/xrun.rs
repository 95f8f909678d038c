//! The xrun array syntax: `[a, b]` runs a and b at once, `[-s, a, b]` one after
//! the other; arrays nest (`[lint, [-s, test, build]]`).

/// A parsed xrun list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Xrun {
    /// A task name.
    Name(String),
    /// Items run one after another (`[-s, …]`).
    Serial(Vec<Xrun>),
    /// Items run at once (`[…]`).
    Parallel(Vec<Xrun>),
}

impl std::fmt::Display for Xrun {
    /// The list as written canonically: `[lint, [-s, test, build]]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (items, serial) = match self {
            Xrun::Name(n) => return f.write_str(n),
            Xrun::Serial(items) => (items, true),
            Xrun::Parallel(items) => (items, false),
        };
        f.write_str(if serial { "[-s, " } else { "[" })?;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        f.write_str("]")
    }
}

/// Why a text is not an xrun list; `position` is the 1-based character column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid task list at column {position}: {message}")]
pub struct XrunError {
    /// 1-based column (in characters) of the problem.
    pub position: usize,
    /// What is wrong there.
    pub message: String,
}

/// Deepest nesting accepted (a bound on recursion for any input).
const MAX_DEPTH: usize = 64;

/// Parses `text` as one xrun array (surrounding whitespace allowed, nothing else).
pub fn parse_xrun(text: &str) -> Result<Xrun, XrunError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { chars, at: 0 };
    p.skip_ws();
    if p.peek() != Some('[') {
        return Err(p.err("a task list starts with `[`"));
    }
    let list = p.array(0)?;
    p.skip_ws();
    if p.at < p.chars.len() {
        return Err(p.err("unexpected text after the closing `]`"));
    }
    Ok(list)
}

/// Whether `name` can name a task (and so appear in an xrun list).
pub fn is_task_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('-') && name.chars().all(is_name_char)
}

/// Characters a task name may hold.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.' | '/' | '@' | '+')
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn err(&self, message: &str) -> XrunError {
        XrunError {
            position: self.at + 1,
            message: message.to_string(),
        }
    }

    /// `[` already next.
    fn array(&mut self, depth: usize) -> Result<Xrun, XrunError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("task lists nested too deeply"));
        }
        let open = self.at;
        self.at += 1; // `[`
        self.skip_ws();
        let mut serial = false;
        let mut items = Vec::new();
        if self.peek() == Some(']') {
            return Err(self.err("an empty task list"));
        }
        loop {
            self.skip_ws();
            let start = self.at;
            match self.peek() {
                Some('[') => items.push(self.array(depth + 1)?),
                Some(c) if is_name_char(c) => {
                    let name = self.name();
                    if name == "-s" && items.is_empty() && !serial {
                        serial = true;
                    } else if name.starts_with('-') {
                        self.at = start;
                        return Err(self.err(&format!(
                            "`{name}` is not a task name (only `-s`, first in a list, is a flag)"
                        )));
                    } else {
                        items.push(Xrun::Name(name));
                    }
                }
                Some(',') => return Err(self.err("a task name or `[` expected before `,`")),
                Some(']') => return Err(self.err("a task name or `[` expected before `]`")),
                Some(c) => return Err(self.err(&format!("unexpected `{c}`"))),
                None => return Err(self.err("unclosed `[`: the list ends too soon")),
            }
            self.skip_ws();
            match self.peek() {
                Some(',') => self.at += 1,
                Some(']') => {
                    self.at += 1;
                    break;
                }
                Some(c) => return Err(self.err(&format!("`,` or `]` expected, found `{c}`"))),
                None => return Err(self.err("unclosed `[`: `]` expected")),
            }
        }
        if items.is_empty() {
            self.at = open;
            return Err(self.err("a task list with no task in it"));
        }
        Ok(if serial {
            Xrun::Serial(items)
        } else {
            Xrun::Parallel(items)
        })
    }

    fn name(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(is_name_char) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Xrun {
        Xrun::Name(s.into())
    }

    #[test]
    fn nested_lists_parse() {
        assert_eq!(
            parse_xrun("[lint, [-s, test, build]]"),
            Ok(Xrun::Parallel(vec![
                n("lint"),
                Xrun::Serial(vec![n("test"), n("build")])
            ]))
        );
        assert_eq!(
            parse_xrun("  [-s,a,[b,[-s,c:d,e.f]]]\n"),
            Ok(Xrun::Serial(vec![
                n("a"),
                Xrun::Parallel(vec![n("b"), Xrun::Serial(vec![n("c:d"), n("e.f")])])
            ]))
        );
        assert_eq!(parse_xrun("[one]"), Ok(Xrun::Parallel(vec![n("one")])));
        assert_eq!(
            parse_xrun("[ a,[ -s ,b,c ] ]").map(|x| x.to_string()),
            Ok("[a, [-s, b, c]]".to_string())
        );
    }

    #[test]
    fn shell_scripts_starting_with_a_bracket_are_not_lists() {
        for s in [
            "[ -f x ] && make",
            "[[ -n $X ]]",
            "[a, b] && echo",
            "[a b]",
            "echo [a]",
            "[a, $b]",
        ] {
            assert!(parse_xrun(s).is_err(), "{s}");
        }
    }

    #[test]
    fn malformed_lists_say_where() {
        let e = |s: &str| parse_xrun(s).err().map(|e| (e.position, e.message));
        assert_eq!(
            e("[a, [-s, b"),
            Some((11, "unclosed `[`: `]` expected".into()))
        );
        assert_eq!(
            e("[a,, b]"),
            Some((4, "a task name or `[` expected before `,`".into()))
        );
        assert_eq!(
            e("[a, -x]"),
            Some((
                5,
                "`-x` is not a task name (only `-s`, first in a list, is a flag)".into()
            ))
        );
        assert_eq!(e("[a, b] c").map(|x| x.0), Some(8));
        assert_eq!(e("[]").map(|x| x.0), Some(2));
        assert_eq!(e("[-s]").map(|x| x.0), Some(1));
        assert_eq!(e("[a ; b]").map(|x| x.0), Some(4));
        let msg = parse_xrun("[a,, b]").err().map(|e| e.to_string());
        assert_eq!(
            msg.as_deref(),
            Some("invalid task list at column 4: a task name or `[` expected before `,`")
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = format!("{}a{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse_xrun(&deep).is_err());
    }
}
