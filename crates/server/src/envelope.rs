//! The envelope every exec-style result carries (DESIGN "Agent runtime
//! contracts"): `meta` {content_type, tags, created_at, source}, `payload`
//! (the parsed JSON of what the model was shown) and `provenance` (the steps
//! that produced it). Built in one place, [`attach`], which `exec::run` calls
//! for every request — in the server and in a worker process alike — and the
//! pipeline reuses for its own result.

use crate::exec::ExecParams;
use crate::shape::Facts;
use serde_json::{Value, json};
use std::time::SystemTime;

/// Longest command text kept in `meta.source` and `provenance[].command`.
const MAX_COMMAND_CHARS: usize = 2000;

/// RFC 3339 (UTC, milliseconds) of a moment.
pub fn rfc3339(t: SystemTime) -> String {
    let ms = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    jiff::Timestamp::from_millisecond(ms)
        .map(|ts| ts.to_string())
        .unwrap_or_default()
}

/// The MIME type of a binary output, from [`crate::shape::binary_kind`]'s description.
fn binary_type(kind: &str) -> &'static str {
    const TYPES: &[(&str, &str)] = &[
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("GIF", "image/gif"),
        ("PDF", "application/pdf"),
        ("ZIP", "application/zip"),
        ("gzip", "application/gzip"),
        ("ELF", "application/x-executable"),
        ("bzip2", "application/x-bzip2"),
        ("xz", "application/x-xz"),
        ("zstd", "application/zstd"),
        ("SQLite", "application/vnd.sqlite3"),
        ("WebAssembly", "application/wasm"),
        ("tar", "application/x-tar"),
    ];
    TYPES
        .iter()
        .find(|(name, _)| {
            kind.strip_prefix("looks like ")
                .is_some_and(|k| k.starts_with(name))
        })
        .map_or("application/octet-stream", |(_, t)| t)
}

/// The command text of a request: the program for an argv, else the script
/// (long ones cut, marked with `…`).
fn command_text(p: &ExecParams, script: &str) -> String {
    let text = p.command.as_deref().unwrap_or(script);
    match text.char_indices().nth(MAX_COMMAND_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Whether a shaped result counts as a success: status 0, no refusal, and its
/// assertions (if any) held.
pub fn succeeded(v: &Value) -> bool {
    v["exit_code"] == json!(0)
        && v["error"].is_null()
        && v.get("verification")
            .is_none_or(|x| x["passed"] == json!(true))
}

/// One provenance entry: `{command, args, timestamp, duration_ms, status,
/// label}` (`status` ok | error | skipped).
pub fn provenance_entry(
    p: &ExecParams,
    script: &str,
    started: Option<SystemTime>,
    duration_ms: Value,
    status: &str,
    label: Value,
) -> Value {
    json!({
        "command": command_text(p, script),
        "args": p.args.clone().map_or(json!([]), |a| json!(a)),
        "timestamp": started.map(rfc3339),
        "duration_ms": duration_ms,
        "status": status,
        "label": label,
    })
}

/// `meta.content_type` and `payload` of a shown text.
pub fn content(text: Option<&str>, truncated: bool, facts: &Facts) -> (String, Value) {
    if let Some(kind) = &facts.binary {
        return (binary_type(kind).to_string(), Value::Null);
    }
    // Only what the model saw whole: a cut or redacted output is not parsed.
    let parsed = match text {
        Some(t) if !truncated && !facts.redacted && !t.trim().is_empty() => {
            serde_json::from_str::<Value>(t).ok()
        }
        _ => None,
    };
    match parsed {
        Some(v) => ("application/json".to_string(), v),
        None => ("text/plain".to_string(), Value::Null),
    }
}

/// `meta` of a result no command produced output for (a pipeline stopped
/// before its first step).
pub fn empty_meta(source: &str) -> Value {
    json!({
        "content_type": "text/plain",
        "tags": {},
        "created_at": rfc3339(SystemTime::now()),
        "source": source,
    })
}

/// Adds the envelope to `v`, the shaped result of `p` (whose text is
/// `script`), started at `started`; `facts` are what the capture showed.
pub fn attach(v: &mut Value, p: &ExecParams, script: &str, started: SystemTime, facts: &Facts) {
    let text = v
        .get("stdout")
        .or_else(|| v.get("output"))
        .and_then(Value::as_str);
    let (content_type, payload) = content(text, v["truncated"] == json!(true), facts);
    let status = if succeeded(v) { "ok" } else { "error" };
    let entry = provenance_entry(
        p,
        script,
        Some(started),
        v["duration_ms"].clone(),
        status,
        v["label"].clone(),
    );
    v["meta"] = json!({
        "content_type": content_type,
        "tags": p.tags.clone().unwrap_or_default(),
        "created_at": rfc3339(SystemTime::now()),
        "source": command_text(p, script),
    });
    v["payload"] = payload;
    v["provenance"] = json!([entry]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_is_parsed_and_anything_else_is_text() {
        let f = Facts::default();
        assert_eq!(
            content(Some("{\"a\": [1, 2]}\n"), false, &f),
            ("application/json".into(), json!({"a": [1, 2]}))
        );
        assert_eq!(content(Some("hello\n"), false, &f).0, "text/plain");
        assert_eq!(
            content(Some(""), false, &f),
            ("text/plain".into(), Value::Null)
        );
    }

    #[test]
    fn a_cut_or_redacted_output_has_no_payload() {
        assert_eq!(content(Some("[1]"), true, &Facts::default()).1, Value::Null);
        let f = Facts {
            redacted: true,
            binary: None,
        };
        assert_eq!(
            content(Some("[1]"), false, &f),
            ("text/plain".into(), Value::Null)
        );
    }

    #[test]
    fn binary_output_gets_its_type() {
        let f = Facts {
            redacted: false,
            binary: Some("looks like PNG".into()),
        };
        assert_eq!(content(Some("<binary>"), false, &f).0, "image/png");
        let f = Facts {
            redacted: false,
            binary: Some("not text".into()),
        };
        assert_eq!(content(None, false, &f).0, "application/octet-stream");
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.123Z");
    }
}
