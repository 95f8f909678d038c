//! The assertion model (`{type, target, expected, message}`) and its validation
//! before anything runs.

use crate::target::Target;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// An assertion as written by the agent or a spec. `value` (today's name) and
/// `pattern` are aliases of `expected`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assertion {
    /// The assertion type (see [`Kind`]).
    #[serde(rename = "type")]
    pub kind: String,
    /// What it looks at (see [`Target`]); `output` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The expected value, pattern, count, schema or criterion.
    #[serde(
        default,
        alias = "value",
        alias = "pattern",
        skip_serializing_if = "Option::is_none"
    )]
    pub expected: Option<Value>,
    /// A human-readable description of the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Assertion {
    /// An assertion of type `kind` with `expected`, on the default target.
    pub fn new(kind: &str, expected: Option<Value>) -> Self {
        Assertion {
            kind: kind.to_string(),
            target: None,
            expected,
            message: None,
        }
    }
}

/// The assertion types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Fails on empty (or whitespace-only) text, `[]`, `{}` and `null`.
    NotEmpty,
    /// The text contains `expected` (an array: one element contains it).
    Contains,
    /// A JSON array's elements, else the non-empty lines, number at least `expected`.
    CountGte,
    /// The text matches the regex `expected`.
    MatchesRegex,
    /// The JSON value validates against the schema `expected`.
    JsonSchema,
    /// An LLM judges the output against the criterion `expected`.
    LlmJudge,
    /// The exit status equals `expected` (0 when absent).
    ExitCode,
    /// The file exists (and the path check lets it be read).
    FileExists,
    /// The file contains `expected`.
    FileContains,
}

impl Kind {
    /// Every type, in documentation order.
    pub const ALL: [Kind; 9] = [
        Kind::NotEmpty,
        Kind::Contains,
        Kind::CountGte,
        Kind::MatchesRegex,
        Kind::JsonSchema,
        Kind::LlmJudge,
        Kind::ExitCode,
        Kind::FileExists,
        Kind::FileContains,
    ];

    /// The type's name as written in an assertion.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NotEmpty => "not_empty",
            Kind::Contains => "contains",
            Kind::CountGte => "count_gte",
            Kind::MatchesRegex => "matches_regex",
            Kind::JsonSchema => "json_schema",
            Kind::LlmJudge => "llm_judge",
            Kind::ExitCode => "exit_code",
            Kind::FileExists => "file_exists",
            Kind::FileContains => "file_contains",
        }
    }

    /// The type named `s`.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    fn names() -> String {
        Kind::ALL.map(Kind::name).join(", ")
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An assertion rejected before anything runs.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("verify[{index}].{field}: {message}")]
pub struct InvalidAssertion {
    /// Its index in the list.
    pub index: usize,
    /// The field at fault: `type`, `target` or `expected`.
    pub field: &'static str,
    /// What is wrong and what is accepted.
    pub message: String,
}

/// A validated assertion, ready to evaluate.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Its index in the list it came from.
    pub index: usize,
    /// The assertion as written.
    pub assertion: Assertion,
    /// Its type.
    pub kind: Kind,
    /// Its target (defaults applied).
    pub target: Target,
    pub(crate) check: Check,
}

/// What to compare against, compiled.
#[derive(Clone, Debug)]
pub(crate) enum Check {
    NotEmpty,
    Contains(String),
    CountGte(u64),
    Regex(regex::Regex),
    Schema(Arc<jsonschema::Validator>),
    Judge(String),
    ExitCode(i64),
    FileExists,
    FileContains(String),
}

/// The most bytes a compiled regex may take (a hostile pattern is refused, not run).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Validates every assertion; the first invalid one is the error.
pub fn validate(asserts: &[Assertion]) -> Result<Vec<Checked>, InvalidAssertion> {
    asserts
        .iter()
        .enumerate()
        .map(|(i, a)| Checked::new(i, a))
        .collect()
}

impl Checked {
    /// Validates assertion number `index`.
    pub fn new(index: usize, a: &Assertion) -> Result<Checked, InvalidAssertion> {
        let err = |field: &'static str, message: String| InvalidAssertion {
            index,
            field,
            message,
        };
        let kind = Kind::parse(a.kind.trim()).ok_or_else(|| {
            err(
                "type",
                format!(
                    "unknown assertion type {:?} (types: {})",
                    a.kind,
                    Kind::names()
                ),
            )
        })?;
        let mut target = match &a.target {
            Some(t) => Target::parse(t).map_err(|m| err("target", m))?,
            None if kind == Kind::ExitCode => Target::ExitCode,
            None => Target::Output,
        };
        let text = |what: &str| -> Result<String, InvalidAssertion> {
            match &a.expected {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                Some(Value::String(_)) => Err(err(
                    "expected",
                    format!("{what} is empty (the assertion could never fail)"),
                )),
                Some(other) => Err(err(
                    "expected",
                    format!("{what} must be a string, not {}", type_name(other)),
                )),
                None => Err(err("expected", format!("{kind} needs `expected`: {what}"))),
            }
        };
        let check = match kind {
            Kind::NotEmpty => Check::NotEmpty,
            Kind::Contains => Check::Contains(text("the text to find")?),
            Kind::CountGte => Check::CountGte(count(&a.expected).map_err(|m| err("expected", m))?),
            Kind::MatchesRegex => {
                let pattern = text("the regex")?;
                let re = regex::RegexBuilder::new(&pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| err("expected", format!("bad regex {pattern:?}: {e}")))?;
                Check::Regex(re)
            }
            Kind::JsonSchema => Check::Schema(Arc::new(
                schema(&a.expected).map_err(|m| err("expected", m))?,
            )),
            Kind::LlmJudge => Check::Judge(match &a.expected {
                Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                None | Some(Value::Null) => "the output satisfies the stated intent".to_string(),
                Some(other) => {
                    return Err(err(
                        "expected",
                        format!("the criterion must be text, not {}", type_name(other)),
                    ));
                }
            }),
            Kind::ExitCode => {
                if target != Target::ExitCode {
                    return Err(err(
                        "target",
                        format!("exit_code looks at the exit status; target {target} is not it"),
                    ));
                }
                Check::ExitCode(match &a.expected {
                    None | Some(Value::Null) => 0,
                    Some(v) => int(v).ok_or_else(|| {
                        err(
                            "expected",
                            format!("the exit status must be an integer, not {v}"),
                        )
                    })?,
                })
            }
            Kind::FileExists => {
                if !matches!(target, Target::File(_)) {
                    // `{type: file_exists, expected: PATH}` names the file in expected.
                    match (&a.target, &a.expected) {
                        (None, Some(Value::String(p))) if !p.is_empty() => {
                            target = Target::File(p.clone());
                        }
                        _ => {
                            return Err(err(
                                "target",
                                "file_exists needs target file:<path> (or the path in expected)"
                                    .into(),
                            ));
                        }
                    }
                }
                Check::FileExists
            }
            Kind::FileContains => {
                if !matches!(target, Target::File(_)) {
                    return Err(err(
                        "target",
                        "file_contains needs target file:<path>".into(),
                    ));
                }
                Check::FileContains(text("the text to find")?)
            }
        };
        Ok(Checked {
            index,
            assertion: a.clone(),
            kind,
            target,
            check,
        })
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn count(v: &Option<Value>) -> Result<u64, String> {
    let Some(v) = v else {
        return Err("count_gte needs `expected`: the least count".into());
    };
    match int(v) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(format!(
            "the least count must be a non-negative integer, not {v}"
        )),
    }
}

/// The schema in `expected` (an object, a boolean, or a string holding JSON),
/// compiled; no `$ref` is fetched from anywhere.
fn schema(v: &Option<Value>) -> Result<jsonschema::Validator, String> {
    let schema = match v {
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).map_err(|e| format!("the schema is not JSON: {e}"))?
        }
        Some(v @ (Value::Object(_) | Value::Bool(_))) => v.clone(),
        Some(other) => {
            return Err(format!(
                "the schema must be an object, not {}",
                type_name(other)
            ));
        }
        None => return Err("json_schema needs `expected`: the schema".into()),
    };
    jsonschema::validator_for(&schema).map_err(|e| format!("bad schema: {e}"))
}
