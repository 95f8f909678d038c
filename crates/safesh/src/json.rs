//! The `--json` result object (DESIGN.md "Contracts": Result).

use safesh_core::ExecOutcome;
use safesh_label::LabelSummary;
use safesh_server::shape::Redaction;
use serde_json::{Value, json};

/// Caps `data` for a model: the first and last parts when it is longer than `cap`.
fn shape(data: &[u8], cap: usize) -> (String, bool) {
    if data.len() <= cap {
        return (String::from_utf8_lossy(data).into_owned(), false);
    }
    let half = cap / 2;
    let head = String::from_utf8_lossy(&data[..half]);
    let tail = String::from_utf8_lossy(&data[data.len() - half..]);
    (
        format!(
            "{head}\n… [{} bytes omitted] …\n{tail}",
            data.len() - 2 * half
        ),
        true,
    )
}

fn lines(data: &[u8]) -> usize {
    let n = data.iter().filter(|b| **b == b'\n').count();
    if data.last().is_some_and(|b| *b != b'\n') {
        n + 1
    } else {
        n
    }
}

/// `data` capped for the model, or the placeholder when its label may not flow
/// to the model. The outcome has one label for both streams: their join, so a
/// secret on either stream redacts both (conservative).
fn shown(
    o: &ExecOutcome,
    data: &[u8],
    cap: usize,
    redaction: Option<&Redaction>,
) -> (String, bool) {
    match redaction.and_then(|r| r.redact_bytes(&o.label, data)) {
        Some(placeholder) => (placeholder, false),
        None => shape(data, cap),
    }
}

/// Builds the result object; output the model may not see is redacted unless
/// `redaction` is `None` (`[labels] redact = false`).
pub fn result(o: &ExecOutcome, mode: &str, cap: usize, redaction: Option<&Redaction>) -> Value {
    let label = LabelSummary::from(&o.label);
    let (out, t1) = shown(o, &o.stdout, cap, redaction);
    let (err, t2) = shown(o, &o.stderr, cap, redaction);
    let mut v = json!({
        "schema_version": 1,
        "exit_code": o.exit_code,
        "signal": Value::Null,
        "truncated": o.truncated || t1 || t2,
        "total_bytes": o.stdout_total + o.stderr_total,
        "total_lines": lines(&o.stdout) + lines(&o.stderr),
        "log_path": Value::Null,
        "duration_ms": o.duration_ms,
        "label": label,
        "warnings": [],
        "error": o.error,
    });
    match mode {
        "merged" => v["output"] = json!(out),
        "stdout" => v["stdout"] = json!(out),
        "stderr" => v["stderr"] = json!(err),
        _ => {
            v["stdout"] = json!(out);
            v["stderr"] = json!(err);
        }
    }
    v
}
