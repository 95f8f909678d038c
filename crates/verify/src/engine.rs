//! Evaluating checked assertions over a [`View`].

use crate::assertion::{Assertion, Check, Checked};
use crate::judge::{Judge, JudgeOutcome};
use crate::target::Target;
use crate::view::{FileRead, View};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How verification behaves (`[verify]` in the config).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Stop at the first failed assertion; the rest are reported as skipped.
    pub fail_fast: bool,
    /// `llm_judge` without a judge fails (true) or becomes a warning left out of
    /// `passed` (false).
    pub llm_judge_required: bool,
    /// The most bytes of `actual` shown in a result.
    pub actual_cap: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fail_fast: false,
            llm_judge_required: true,
            actual_cap: 200,
        }
    }
}

/// The outcome of a list of assertions: `{passed, results, warnings}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Every counted assertion passed.
    pub passed: bool,
    /// One result per assertion, in order.
    pub results: Vec<AssertionResult>,
    /// What was left out of `passed` (an unavailable, not required `llm_judge`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One assertion's result: today's `{type, passed, detail}` plus `target`,
/// `actual` (capped, redacted) and `message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssertionResult {
    /// The assertion type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether it held.
    pub passed: bool,
    /// What was checked and found.
    pub detail: String,
    /// The target looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What was found (capped, redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// The assertion's message, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `llm_judge` had no judge to ask.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unavailable: bool,
    /// Not evaluated (`fail_fast` after an earlier failure).
    #[serde(default, skip_serializing_if = "is_false")]
    pub skipped: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Checks `asserts` against `view` with the default options and no judge
/// (`llm_judge` is `unavailable`, a failure). Invalid assertions fail.
pub fn verify(view: &dyn View, asserts: &[Assertion]) -> Verification {
    verify_with(view, asserts, &Options::default(), None)
}

/// Checks `asserts` against `view`. An invalid assertion is a failed result
/// naming the problem (call [`crate::validate`] first to refuse before running).
pub fn verify_with(
    view: &dyn View,
    asserts: &[Assertion],
    opts: &Options,
    judge: Option<&dyn Judge>,
) -> Verification {
    let mut eval = Evaluation::new(view, opts, judge);
    for (i, a) in asserts.iter().enumerate() {
        match Checked::new(i, a) {
            Ok(c) => eval.push(&c),
            Err(e) => eval.record(AssertionResult {
                kind: a.kind.clone(),
                passed: false,
                detail: format!("invalid assertion: {e}"),
                target: a.target.clone(),
                actual: None,
                message: a.message.clone(),
                unavailable: false,
                skipped: false,
            }),
        }
    }
    eval.finish()
}

/// Checks validated assertions against `view`.
pub fn verify_checked(
    view: &dyn View,
    asserts: &[Checked],
    opts: &Options,
    judge: Option<&dyn Judge>,
) -> Verification {
    let mut eval = Evaluation::new(view, opts, judge);
    for c in asserts {
        eval.push(c);
    }
    eval.finish()
}

struct Evaluation<'a> {
    view: &'a dyn View,
    opts: &'a Options,
    judge: Option<&'a dyn Judge>,
    passed: bool,
    stopped: bool,
    results: Vec<AssertionResult>,
    warnings: Vec<String>,
}

impl<'a> Evaluation<'a> {
    fn new(view: &'a dyn View, opts: &'a Options, judge: Option<&'a dyn Judge>) -> Self {
        Evaluation {
            view,
            opts,
            judge,
            passed: true,
            stopped: false,
            results: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn push(&mut self, c: &Checked) {
        if self.stopped {
            self.results.push(AssertionResult {
                kind: c.kind.name().to_string(),
                passed: false,
                detail: "not evaluated: an earlier assertion failed (fail_fast)".into(),
                target: Some(c.target.to_string()),
                actual: None,
                message: None,
                unavailable: false,
                skipped: true,
            });
            return;
        }
        let r = evaluate(self.view, c, self.opts, self.judge);
        if r.unavailable && !self.opts.llm_judge_required {
            self.warnings.push(format!(
                "verify[{}] llm_judge not evaluated: {} ([verify] llm_judge_required = false, so it does not count)",
                c.index, r.detail
            ));
            self.results.push(r);
            return;
        }
        self.record(r);
    }

    fn record(&mut self, r: AssertionResult) {
        if !r.passed {
            self.passed = false;
            if self.opts.fail_fast {
                self.stopped = true;
            }
        }
        self.results.push(r);
    }

    fn finish(self) -> Verification {
        Verification {
            passed: self.passed,
            results: self.results,
            warnings: self.warnings,
        }
    }
}

/// What a target resolved to.
enum Subject {
    Text(String),
    Json(Value),
    Int(i64),
    /// Not there (why).
    Missing(String),
}

impl Subject {
    fn text(&self) -> String {
        match self {
            Subject::Text(s) | Subject::Json(Value::String(s)) => s.clone(),
            Subject::Json(v) => v.to_string(),
            Subject::Int(n) => n.to_string(),
            Subject::Missing(_) => String::new(),
        }
    }

    /// The JSON value: a JSON subject, or text that parses as JSON.
    fn json(&self) -> Option<Value> {
        match self {
            Subject::Json(v) => Some(v.clone()),
            Subject::Text(s) => serde_json::from_str(s.trim()).ok(),
            Subject::Int(n) => Some(Value::from(*n)),
            Subject::Missing(_) => None,
        }
    }

    fn actual(&self) -> Value {
        match self {
            Subject::Text(s) => Value::String(s.clone()),
            Subject::Json(v) => v.clone(),
            Subject::Int(n) => Value::from(*n),
            Subject::Missing(_) => Value::Null,
        }
    }
}

fn resolve(view: &dyn View, target: &Target) -> Subject {
    match target {
        Target::Output | Target::Stdout => Subject::Text(view.stdout().to_string()),
        Target::Stderr => Subject::Text(view.stderr().to_string()),
        Target::ExitCode => match view.exit_code() {
            Some(n) => Subject::Int(n.into()),
            None => Subject::Missing("the step has no exit status".into()),
        },
        Target::Payload(path) => {
            let Some(mut v) = view.payload().filter(|v| !v.is_null()) else {
                return Subject::Missing(
                    "no JSON payload (the output is not JSON, or it was truncated or redacted)"
                        .into(),
                );
            };
            for (i, seg) in path.iter().enumerate() {
                let next = match v {
                    Value::Object(m) => m.get(seg),
                    Value::Array(a) => seg.parse::<usize>().ok().and_then(|n| a.get(n)),
                    _ => None,
                };
                match next {
                    Some(n) => v = n,
                    None => {
                        return Subject::Missing(format!(
                            "the payload has no {}",
                            path[..=i].join(".")
                        ));
                    }
                }
            }
            Subject::Json(v.clone())
        }
        Target::Context { scope, key } => match view.context(scope, key) {
            Ok(Some(v)) => Subject::Json(v),
            Ok(None) => Subject::Missing(format!("context.{scope}.{key} is not set")),
            Err(e) => Subject::Missing(format!("context.{scope}.{key}: {e}")),
        },
        Target::Tag(k) => match view.tag(k) {
            Some(v) => Subject::Text(v),
            None => Subject::Missing(format!("no tag {k:?}")),
        },
        Target::File(p) => match view.read_file(p) {
            FileRead::Text(t) => Subject::Text(t),
            FileRead::Missing => Subject::Missing(format!("no such file: {p}")),
            FileRead::Refused(m) => Subject::Missing(format!("{p}: {m}")),
        },
    }
}

fn is_empty_json(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

fn non_empty_lines(s: &str) -> usize {
    s.lines().filter(|l| !l.trim().is_empty()).count()
}

fn evaluate(
    view: &dyn View,
    c: &Checked,
    opts: &Options,
    judge: Option<&dyn Judge>,
) -> AssertionResult {
    let subject = resolve(view, &c.target);
    let mut unavailable = false;
    let (passed, detail) = match (&c.check, &subject) {
        (Check::FileExists, Subject::Missing(why)) => (false, why.clone()),
        (Check::FileExists, _) => (true, "the file exists".into()),
        (_, Subject::Missing(why)) => (false, why.clone()),
        (Check::NotEmpty, s) => {
            let empty = match s {
                Subject::Text(t) => {
                    t.trim().is_empty()
                        || serde_json::from_str::<Value>(t.trim()).is_ok_and(|v| is_empty_json(&v))
                }
                Subject::Json(v) => is_empty_json(v),
                _ => false,
            };
            let what = match s {
                Subject::Text(t) => format!("{} bytes", t.len()),
                Subject::Json(v) => format!("JSON {}", kind_of(v)),
                _ => "a value".into(),
            };
            (
                !empty,
                if empty {
                    format!("empty ({what})")
                } else {
                    what
                },
            )
        }
        (Check::Contains(x), s) => {
            let found = match s {
                Subject::Json(Value::Array(items)) => items.iter().any(|i| match i {
                    Value::String(t) => t.contains(x.as_str()),
                    other => other.to_string().contains(x.as_str()),
                }),
                _ => s.text().contains(x.as_str()),
            };
            (found, format!("looked for {x:?}"))
        }
        (Check::CountGte(n), s) => {
            let (count, unit) = match s.json() {
                Some(Value::Array(a)) => (a.len(), "elements"),
                Some(Value::Null) if matches!(s, Subject::Json(_)) => (0, "elements"),
                _ => (non_empty_lines(&s.text()), "non-empty lines"),
            };
            (count as u64 >= *n, format!("{count} {unit}, wanted ≥ {n}"))
        }
        (Check::Regex(re), s) => (re.is_match(&s.text()), format!("regex {:?}", re.as_str())),
        (Check::Schema(v), s) => match s.json() {
            None => (false, "not JSON, so it cannot match the schema".into()),
            Some(instance) => {
                let errors: Vec<String> = v
                    .iter_errors(&instance)
                    .take(3)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        format!("{}: {e}", if at.is_empty() { "/" } else { &at })
                    })
                    .collect();
                if errors.is_empty() {
                    (true, "matches the schema".into())
                } else {
                    (
                        false,
                        format!("does not match the schema: {}", errors.join("; ")),
                    )
                }
            }
        },
        (Check::ExitCode(want), s) => {
            let got = match s {
                Subject::Int(n) => Some(*n),
                _ => s.text().trim().parse().ok(),
            };
            (
                got == Some(*want),
                format!(
                    "exit status {}, wanted {want}",
                    got.map_or("?".into(), |g| g.to_string())
                ),
            )
        }
        (Check::FileContains(x), s) => (s.text().contains(x.as_str()), format!("looked for {x:?}")),
        (Check::Judge(criterion), s) => match judge {
            None => {
                unavailable = true;
                (
                    false,
                    "unavailable: no LLM judge is configured ([llm] endpoint)".into(),
                )
            }
            Some(j) => match j.judge(view.intent(), criterion, &s.text()) {
                JudgeOutcome::Verdict { pass, reason } => (pass, format!("judge: {reason}")),
                JudgeOutcome::Unavailable(why) => {
                    unavailable = true;
                    (false, format!("unavailable: {why}"))
                }
                JudgeOutcome::Error(why) => (false, format!("the judge could not answer: {why}")),
            },
        },
    };
    let actual = match (&c.check, &subject) {
        (_, Subject::Missing(_)) => None,
        (Check::FileExists, _) => None,
        _ => Some(shown(view, subject.actual(), opts.actual_cap)),
    };
    AssertionResult {
        kind: c.kind.name().to_string(),
        passed,
        // Not redacted: it quotes the caller's own expected value, and
        // redacting a correct guess of a secret differently from a wrong one
        // would make the detail an oracle; what it found is `actual`.
        detail,
        target: Some(c.target.to_string()),
        actual,
        message: if passed {
            None
        } else {
            c.assertion.message.clone()
        },
        unavailable,
        skipped: false,
    }
}

fn kind_of(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("array of {}", a.len()),
        Value::Object(o) => format!("object of {} keys", o.len()),
        Value::Null => "null".into(),
        Value::String(s) => format!("string of {} bytes", s.len()),
        other => other.to_string(),
    }
}

/// `actual` as shown: redacted by the view, capped at `cap` bytes.
fn shown(view: &dyn View, v: Value, cap: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cap_str(&view.redact(&s), cap)),
        Value::Number(_) | Value::Bool(_) | Value::Null => v,
        other => {
            let s = other.to_string();
            let r = view.redact(&s);
            if r == s && s.len() <= cap {
                other
            } else {
                Value::String(cap_str(&r, cap))
            }
        }
    }
}

fn cap_str(s: &str, cap: usize) -> String {
    if s.len() <= cap {
        return s.to_string();
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}
