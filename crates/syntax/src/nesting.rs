//! A cheap bound on nesting, checked before the (recursive) parser runs, so a
//! hostile script of ten thousand `(` is refused instead of overflowing a stack.

use crate::budget::Budget;
use crate::error::{ParseError, Position};

/// The deepest nesting of groups, substitutions and compound commands accepted.
pub const MAX_NESTING: usize = 512;

/// More unclosed `(` than this at the end of a script is reported at once: the
/// parser's backtracking doubles with each one (a fuzzer-found hang).
const MAX_UNCLOSED_PARENS: usize = 10;

/// Scans `source` for nesting depth: `(`, `{`, `$(`, `` ` `` and the keywords that
/// open compound commands. Quotes are respected roughly; the bound is generous.
/// The scan polls `budget` once per this many characters.
const POLL_CHARS: usize = 64 * 1024;

pub(crate) fn check(source: &str, budget: &Budget<'_>) -> Result<(), ParseError> {
    let mut depth: usize = 0;
    let mut parens: usize = 0;
    let mut line = 1;
    let mut col = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut word = String::new();
    let mut backquote_open = false;
    let too_deep = |line, col| ParseError::TooDeep {
        limit: MAX_NESTING,
        position: Position { line, column: col },
    };
    let flush_word = |word: &mut String, depth: &mut usize| {
        match word.as_str() {
            "if" | "case" | "do" => *depth += 1,
            "fi" | "esac" | "done" => *depth = depth.saturating_sub(1),
            _ => {}
        }
        word.clear();
    };
    for (n, c) in source.chars().enumerate() {
        if n % POLL_CHARS == 0 {
            budget.check()?;
        }
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
        }
        if escaped {
            escaped = false;
            continue;
        }
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                }
                continue;
            }
            Some(_) => {
                match c {
                    '\\' => escaped = true,
                    '"' => quote = None,
                    '(' => {
                        depth += 1;
                        parens += 1;
                    }
                    ')' => {
                        depth = depth.saturating_sub(1);
                        parens = parens.saturating_sub(1);
                    }
                    _ => {}
                }
                if depth > MAX_NESTING {
                    return Err(too_deep(line, col));
                }
                continue;
            }
            None => {}
        }
        match c {
            '\\' => escaped = true,
            '\'' | '"' => quote = Some(c),
            '(' => {
                depth += 1;
                parens += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                parens = parens.saturating_sub(1);
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '`' => {
                if backquote_open {
                    depth = depth.saturating_sub(1);
                } else {
                    depth += 1;
                }
                backquote_open = !backquote_open;
            }
            _ => {}
        }
        if c.is_ascii_alphabetic() {
            word.push(c);
        } else {
            flush_word(&mut word, &mut depth);
        }
        if depth > MAX_NESTING {
            return Err(too_deep(line, col));
        }
    }
    flush_word(&mut word, &mut depth);
    if depth > MAX_NESTING {
        return Err(too_deep(line, col));
    }
    if parens > MAX_UNCLOSED_PARENS {
        return Err(ParseError::Syntax {
            position: Position { line, column: col },
            message: format!("{parens} unclosed `(`: expected `)`"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_parentheses_are_refused() {
        let s = format!("{}true{}", "(".repeat(2000), ")".repeat(2000));
        assert!(matches!(
            check(&s, &Budget::default()),
            Err(ParseError::TooDeep { .. })
        ));
    }

    #[test]
    fn many_unclosed_parentheses_fail_fast() {
        let s = format!("{}a", "(".repeat(30));
        assert!(matches!(
            check(&s, &Budget::default()),
            Err(ParseError::Syntax { .. })
        ));
    }

    #[test]
    fn ordinary_scripts_pass() {
        assert!(
            check(
                "if true; then (echo $(echo 'a(((b')); fi",
                &Budget::default()
            )
            .is_ok()
        );
        let s = format!("{}true{}", "(".repeat(100), ")".repeat(100));
        assert!(check(&s, &Budget::default()).is_ok());
    }
}
