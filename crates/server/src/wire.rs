//! What every face accepts as one request, and the JSON-RPC errors for what it
//! does not: one size limit ([`MAX_REQUEST_BYTES`]) for a JSON-RPC line, an MCP
//! stdio line and an MCP HTTP body; a reply for every bad message, so a client
//! never waits for an answer that will not come.
//!
//! rmcp drops unparsable stdio lines on purpose (no id to answer), and answers
//! some malformed requests without their id or with the wrong code; the MCP
//! faces run every message through [`check_mcp`] before rmcp sees it.

use serde_json::{Value, json};
use std::io::BufRead;

/// The largest request any face accepts, in bytes (a line on stdio, a body on HTTP).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// Parse error (not JSON, not UTF-8, too long to read).
pub const PARSE_ERROR: i64 = -32700;
/// Invalid request (JSON, but not a JSON-RPC request).
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Bad params.
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error reply.
pub fn error_reply(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// The reply to a request longer than [`MAX_REQUEST_BYTES`].
pub fn too_long(bytes: usize) -> Value {
    error_reply(
        Value::Null,
        PARSE_ERROR,
        format!(
            "parse error: the request is {bytes} bytes, more than the limit of {MAX_REQUEST_BYTES} bytes"
        ),
    )
}

/// One message read from a line-based client.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line (without its `\n`, `\r` kept), at most the limit.
    Line(Vec<u8>),
    /// A line longer than the limit (its length): skipped, never buffered.
    TooLong(usize),
}

/// Reads `\n`-terminated lines of at most `max` bytes from `input` and hands
/// each to `send` (which returns false to stop). Memory stays bounded by `max`.
pub fn read_frames<R: BufRead>(mut input: R, max: usize, mut send: impl FnMut(Frame) -> bool) {
    let mut buf: Vec<u8> = Vec::new();
    let mut skipped = 0usize;
    loop {
        let (done, used) = match input.fill_buf() {
            Ok([]) => {
                if skipped > 0 {
                    send(Frame::TooLong(skipped + buf.len()));
                } else if !buf.is_empty() {
                    send(Frame::Line(buf));
                }
                return;
            }
            Ok(data) => match data.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    if skipped > 0 || buf.len() + i > max {
                        skipped += buf.len() + i;
                        buf = Vec::new();
                    } else {
                        buf.extend_from_slice(&data[..i]);
                    }
                    (true, i + 1)
                }
                None => {
                    if skipped > 0 || buf.len() + data.len() > max {
                        skipped += buf.len() + data.len();
                        buf = Vec::new();
                    } else {
                        buf.extend_from_slice(data);
                    }
                    (false, data.len())
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        input.consume(used);
        if done {
            let frame = if skipped > 0 {
                Frame::TooLong(skipped)
            } else {
                Frame::Line(std::mem::take(&mut buf))
            };
            skipped = 0;
            if !send(frame) {
                return;
            }
        }
    }
}

/// A line as JSON: the value, or the -32700 reply (invalid UTF-8, a NUL byte or
/// anything else that is not JSON). A blank line is `Ok(None)`.
pub fn parse_line(line: &[u8]) -> Result<Option<Value>, Value> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Err(error_reply(
                Value::Null,
                PARSE_ERROR,
                format!(
                    "parse error: the request is not UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                ),
            ));
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| error_reply(Value::Null, PARSE_ERROR, format!("parse error: {e}")))
}

fn id_ok(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// Checks one MCP message (a stdio line or an HTTP body) before rmcp sees it:
/// `Err(reply)` for anything rmcp would drop or answer wrongly — not JSON
/// (-32700, id null), not a JSON-RPC 2.0 message (-32600, the id echoed when it
/// is a string or a number), params that are not an object or a `tools/call`
/// without a tool name or with non-object `arguments` (-32602). Batches and
/// responses pass (rmcp decides them).
pub fn check_mcp(bytes: &[u8]) -> Result<(), Value> {
    let Some(msg) = parse_line(bytes)? else {
        return Ok(());
    };
    let obj = match msg {
        Value::Object(o) => o,
        Value::Array(_) => return Ok(()),
        _ => {
            return Err(error_reply(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: a JSON-RPC message is an object",
            ));
        }
    };
    let id = obj.get("id").cloned();
    if id.as_ref().is_some_and(|i| !id_ok(i)) {
        return Err(error_reply(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: id must be a string or a number",
        ));
    }
    let reply_id = id.unwrap_or(Value::Null);
    let invalid = |code: i64, msg: &str| Err(error_reply(reply_id.clone(), code, msg));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        );
    }
    let Some(method) = obj.get("method") else {
        // A response to one of our requests (elicitation): it needs an id.
        if reply_id.is_null() || !(obj.contains_key("result") || obj.contains_key("error")) {
            return invalid(
                INVALID_REQUEST,
                "invalid request: a message needs a string \"method\" (a request) or an id with \"result\"/\"error\" (a response)",
            );
        }
        return Ok(());
    };
    let Some(method) = method.as_str() else {
        return invalid(
            INVALID_REQUEST,
            "invalid request: \"method\" must be a string",
        );
    };
    let params = obj.get("params");
    if params.is_some_and(|p| !(p.is_object() || p.is_null())) {
        return invalid(INVALID_PARAMS, "invalid params: params must be an object");
    }
    if method == "tools/call" {
        let p = params.and_then(Value::as_object);
        if !p.and_then(|p| p.get("name")).is_some_and(Value::is_string) {
            return invalid(
                INVALID_PARAMS,
                "invalid params: tools/call needs \"name\", the tool's name (a string)",
            );
        }
        if p.and_then(|p| p.get("arguments"))
            .is_some_and(|a| !(a.is_object() || a.is_null()))
        {
            return invalid(
                INVALID_PARAMS,
                "invalid params: \"arguments\" must be an object of the tool's parameters",
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<(), Value>) -> (i64, Value) {
        let e = r.expect_err("an error reply");
        (e["error"]["code"].as_i64().unwrap_or(0), e["id"].clone())
    }

    #[test]
    fn bad_messages_get_the_right_code_and_id() {
        assert_eq!(code(check_mcp(b"{nope")), (PARSE_ERROR, Value::Null));
        assert_eq!(code(check_mcp(b"\xff\xfe")), (PARSE_ERROR, Value::Null));
        assert_eq!(code(check_mcp(b"{\"a\":\0}")), (PARSE_ERROR, Value::Null));
        assert_eq!(
            code(check_mcp(br#"{"jsonrpc":"2.0","id":7,"method":5}"#)),
            (INVALID_REQUEST, json!(7))
        );
        assert_eq!(
            code(check_mcp(
                br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"exec","arguments":"echo"}}"#
            )),
            (INVALID_PARAMS, json!("x"))
        );
    }

    #[test]
    fn good_messages_pass() {
        for m in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":2,"result":{"action":"accept"}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"script":"echo"}}}"#,
            b"   ",
        ] {
            assert!(check_mcp(m).is_ok(), "{}", String::from_utf8_lossy(m));
        }
    }

    #[test]
    fn long_lines_are_skipped_not_buffered() {
        let input = format!("{}\nok\n", "x".repeat(100));
        let mut got = Vec::new();
        read_frames(input.as_bytes(), 10, |f| {
            got.push(f);
            true
        });
        assert_eq!(got, vec![Frame::TooLong(100), Frame::Line(b"ok".to_vec())]);
    }
}
