//! `http:` — plain HTTP requests through the same egress decision as `curl`:
//! the host list (`[sandbox] network` with `[platforms.http] allowed_domains`),
//! the flow rules on the label of everything sent, and for `post`/`put`/
//! `delete` (write risk) a human's approval before untrusted data is sent.

use crate::args::Args;
use crate::command::{Field, FieldKind, Output, PlatformCommand, Risk};
use crate::ctx::PlatformCtx;
use crate::error::PlatformError;
use crate::net::{Request, Response, parse_url, send};
use serde_json::{Value, json};
use std::time::Duration;

/// The `http:` commands.
pub static COMMANDS: &[&dyn PlatformCommand] = &[
    &HttpGet,
    &HttpSend {
        name: "http:post",
        method: "POST",
    },
    &HttpSend {
        name: "http:put",
        method: "PUT",
    },
    &HttpSend {
        name: "http:delete",
        method: "DELETE",
    },
];

const DEFAULT_TIMEOUT_MS: i64 = 30_000;
const DEFAULT_MAX_BYTES: i64 = 1 << 20;

const URL: Field = Field::positional("url", "The URL (http:// or https://)");
const HEADERS: Field = Field::optional(
    "headers",
    FieldKind::StringMap,
    "Request headers: a JSON object, or `Name: value` (repeatable)",
);
const QUERY: Field = Field::optional(
    "query",
    FieldKind::StringMap,
    "Query parameters added to the URL: a JSON object, or `name=value` (repeatable)",
);
const TIMEOUT: Field = Field::optional(
    "timeout_ms",
    FieldKind::Integer,
    "Total time limit in ms (default 30000)",
);
const MAX_BYTES: Field = Field::optional(
    "max_bytes",
    FieldKind::Integer,
    "The most response body bytes kept (default 1048576)",
);

fn response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "status": {"type": "integer"},
            "url": {"type": "string"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "content_type": {"type": ["string", "null"]},
            "body": {"type": "string", "description": "the body as text (invalid UTF-8 replaced)"},
            "json": {"description": "the body parsed, when it is JSON"},
            "truncated": {"type": "boolean"}
        },
        "required": ["status", "url", "headers", "content_type", "body", "truncated"],
        "additionalProperties": false
    })
}

fn response_json(r: &Response) -> Value {
    let mut headers = serde_json::Map::new();
    for (k, v) in &r.headers {
        // Repeated headers joined as HTTP allows.
        let joined = match headers.get(k).and_then(Value::as_str) {
            Some(prev) => format!("{prev}, {v}"),
            None => v.clone(),
        };
        headers.insert(k.clone(), Value::String(joined));
    }
    let content_type = r.header("content-type").map(str::to_string);
    let mut v = json!({
        "status": r.status,
        "url": r.url.as_str(),
        "headers": headers,
        "content_type": content_type,
        "body": String::from_utf8_lossy(&r.body),
        "truncated": r.truncated,
    });
    let is_json = content_type.as_deref().is_some_and(|t| t.contains("json"));
    if is_json && let Ok(parsed) = serde_json::from_slice::<Value>(&r.body) {
        v["json"] = parsed;
    }
    v
}

/// The request of an `http:` command: URL with query, headers, limits.
fn request(
    name: &str,
    method: &'static str,
    args: &Args,
    body: Option<Vec<u8>>,
    mut headers: Vec<(String, Vec<u8>)>,
) -> Result<Request, PlatformError> {
    let mut url = parse_url(name, "url", args.str("url").unwrap_or_default())?;
    let query = args.map("query");
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    for (k, v) in args.map("headers") {
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&k));
        headers.push((k, v.into_bytes()));
    }
    let timeout = args.int("timeout_ms").unwrap_or(DEFAULT_TIMEOUT_MS).max(1) as u64;
    Ok(Request {
        method,
        url,
        headers,
        body,
        timeout: Duration::from_millis(timeout),
        max_bytes: args.int("max_bytes").unwrap_or(DEFAULT_MAX_BYTES).max(0) as u64,
    })
}

/// `http:get`.
pub struct HttpGet;

impl PlatformCommand for HttpGet {
    fn name(&self) -> &'static str {
        "http:get"
    }
    fn description(&self) -> &'static str {
        "GET a URL: status, headers and body (parsed as `json` when the response is JSON). Only hosts on the network list ([sandbox] network, [platforms.http] allowed_domains); the URL, query and headers pass the same flow rules as curl. Redirects are not followed (the status and `location` header say where)."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[URL, HEADERS, QUERY, TIMEOUT, MAX_BYTES];
        F
    }
    fn output_schema(&self) -> Value {
        response_schema()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn example(&self) -> &'static str {
        "http:get https://api.example.com/items --query page=2"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let req = request(self.name(), "GET", args, None, Vec::new())?;
        let resp = send(ctx, self.name(), self.risk(), &req)?;
        Ok(Output {
            value: response_json(&resp),
            reply_host: req.url.host_str().map(str::to_string),
        })
    }
}

/// `http:post`, `http:put`, `http:delete`.
pub struct HttpSend {
    name: &'static str,
    method: &'static str,
}

impl PlatformCommand for HttpSend {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        "Send a request with a body (`body` text, `json` value or `form` fields; at most one): status, headers and body of the response. A write: everything sent passes the flow rules like curl (a secret may not go where it may not flow), and untrusted (downloaded) data needs a human's approval before it is sent."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            URL,
            Field::optional("body", FieldKind::String, "The body, as text"),
            Field::optional(
                "json",
                FieldKind::Json,
                "A JSON body (sent with Content-Type: application/json)",
            ),
            Field::optional(
                "form",
                FieldKind::StringMap,
                "Form fields (application/x-www-form-urlencoded): a JSON object or name=value (repeatable)",
            ),
            HEADERS,
            QUERY,
            TIMEOUT,
            MAX_BYTES,
        ];
        F
    }
    fn output_schema(&self) -> Value {
        response_schema()
    }
    fn risk(&self) -> Risk {
        Risk::Write
    }
    fn example(&self) -> &'static str {
        match self.method {
            "PUT" => "http:put https://api.example.com/items/1 --json '{\"done\":true}'",
            "DELETE" => "http:delete https://api.example.com/items/1",
            _ => "http:post https://api.example.com/items --json '{\"name\":\"x\"}'",
        }
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let given: Vec<&str> = ["body", "json", "form"]
            .into_iter()
            .filter(|k| args.json(k).is_some())
            .collect();
        if given.len() > 1 {
            return Err(PlatformError::field(
                self.name,
                given[1],
                format!(
                    "give one of --body, --json, --form (not {})",
                    given.join(" and ")
                ),
            ));
        }
        let (body, content_type) = if let Some(b) = args.str("body") {
            (Some(b.as_bytes().to_vec()), None)
        } else if let Some(j) = args.json("json") {
            (Some(j.to_string().into_bytes()), Some("application/json"))
        } else if args.json("form").is_some() {
            let mut s = reqwest::Url::parse("http://x/")
                .map_err(|e| PlatformError::Failed(e.to_string()))?;
            s.query_pairs_mut().extend_pairs(args.map("form"));
            (
                Some(s.query().unwrap_or_default().as_bytes().to_vec()),
                Some("application/x-www-form-urlencoded"),
            )
        } else {
            (None, None)
        };
        let headers = content_type
            .map(|t| vec![("Content-Type".to_string(), t.as_bytes().to_vec())])
            .unwrap_or_default();
        let req = request(self.name, self.method, args, body, headers)?;
        let resp = send(ctx, self.name, self.risk(), &req)?;
        Ok(Output {
            value: response_json(&resp),
            reply_host: req.url.host_str().map(str::to_string),
        })
    }
}
