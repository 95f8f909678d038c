//! Rewording jaq's run-time error messages as jq 1.6 prints them.

use crate::read::Reader;
use crate::val::Val;
use crate::val::{kind, trunc};

/// Parses a JSON value at the start of `s`, returning it and the rest.
fn value_prefix(s: &str) -> Option<(Val, String)> {
    let mut r = Reader::new(s.as_bytes().to_vec());
    let v = r.next_value()?.ok()?;
    Some((v, String::from_utf8_lossy(r.rest()).into_owned()))
}

fn str_of(v: &Val) -> Option<String> {
    match v {
        Val::Str(b) => Some(b.to_string()),
        _ => None,
    }
}

/// jq 1.6 reports a bad regex as `Regex failure: ` and Oniguruma's message;
/// the engine here is jaq's, whose common messages have an Oniguruma twin.
fn regex_failure(e: &str) -> String {
    let onig = match e {
        "found open group without closing ')'" | "expected closing ')', but got end of pattern" => {
            "end pattern with unmatched parenthesis"
        }
        "found closing ')' without matching '('" => "unmatched close parenthesis",
        "found unclosed character class"
        | "non-empty character class has no closing bracket"
        | "non-empty character class has no closing bracket after dash"
        | "negated character class has no closing bracket"
        | "character class begins with literal ']' but has no closing bracket" => {
            "premature end of char-class"
        }
        "found counted repetition with a min bigger than its max" => {
            "upper is smaller than lower in repeat range"
        }
        "uncounted repetition operator must be applied to a sub-expression"
        | "counted repetition operator must be applied to a sub-expression" => {
            "target of repeat operator is not specified"
        }
        "invalid range in character class" => "empty range in char class",
        other => other,
    };
    format!("Regex failure: {onig}")
}

/// Translates a jaq message into jq 1.6's wording when it has a known shape.
pub fn translate(msg: &str) -> String {
    if let Some(e) = msg.strip_prefix("invalid regex: ") {
        return regex_failure(e);
    }
    // The patched jaq-core (vendor/jaq-core) gives jq 1.6's own messages for
    // non-path expressions; its internal error, which names the input, should
    // never get out (updates catch it). Should it, word it as jq would.
    if let Some(rest) = msg.strip_prefix("invalid path expression with input ")
        && let Some((v, _)) = value_prefix(rest)
    {
        return format!("Invalid path expression with result {}", trunc(&v));
    }
    if let Some(rest) = msg.strip_prefix("cannot index ")
        && let Some((a, rest)) = value_prefix(rest)
        && let Some(b_text) = rest.trim_start().strip_prefix("with ")
        && let Some((b, _)) = value_prefix(b_text)
    {
        return match (&a, str_of(&b)) {
            (Val::Obj(_), None) => format!("Cannot index object with {}", kind(&b)),
            (Val::Arr(_), Some(k)) => format!("Cannot index array with string \"{k}\""),
            (_, Some(k)) => format!("Cannot index {} with \"{k}\"", kind(&a)),
            (_, None) => format!("Cannot index {} with {}", kind(&a), kind(&b)),
        };
    }
    if let Some(rest) = msg.strip_prefix("cannot use ")
        && let Some((v, rest)) = value_prefix(rest)
    {
        let ty = rest.trim_start().strip_prefix("as ").unwrap_or("");
        if ty.starts_with("iterable") {
            return format!("Cannot iterate over {} ({})", kind(&v), trunc(&v));
        }
        return format!("{} ({}) cannot be used as {ty}", kind(&v), trunc(&v));
    }
    if let Some(rest) = msg.strip_prefix("cannot calculate ")
        && let Some((l, rest)) = value_prefix(rest)
    {
        let rest = rest.trim_start();
        let (op, r_text) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Some((r, _)) = value_prefix(r_text) {
            let zero = matches!(&r, Val::Num(n) if *n == 0.0);
            let verb = match op {
                "+" => "added",
                "-" => "subtracted",
                "*" => "multiplied",
                "/" | "%" if zero && matches!(l, Val::Num(_)) => {
                    return format!(
                        "{} ({}) and {} ({}) cannot be divided because the divisor is zero",
                        kind(&l),
                        trunc(&l),
                        kind(&r),
                        trunc(&r)
                    );
                }
                _ => "divided",
            };
            return format!(
                "{} ({}) and {} ({}) cannot be {verb}",
                kind(&l),
                trunc(&l),
                kind(&r),
                trunc(&r)
            );
        }
    }
    if let Some(v_text) = msg.strip_suffix(" has no length")
        && let Some((v, _)) = value_prefix(v_text)
    {
        return format!("{} ({}) has no length", kind(&v), trunc(&v));
    }
    msg.to_string()
}
