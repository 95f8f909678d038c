//! `safesh mcp --http ADDR`: MCP over streamable HTTP at `/mcp`, bound to
//! 127.0.0.1 by default. Every request needs `Authorization: Bearer TOKEN`; a
//! request whose `Origin` is not a localhost origin is refused (DNS rebinding),
//! and rmcp checks that `Host` is a loopback name. Then a POST body is read up
//! to [`crate::wire::MAX_REQUEST_BYTES`] (413 past it) and checked
//! ([`crate::wire::check_mcp`]: 400 with the JSON-RPC error). A new session
//! past the limit closes the least recently used idle one
//! ([`super::http_sessions`]), whose client is told so (404 with a JSON-RPC
//! error) on its next request; when all are busy the new one gets 503.

use super::SafeshMcp;
use super::http_sessions::Bounded;
use crate::Server;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// Parses `ADDR`: `127.0.0.1:8080`, `localhost:8080`, `:8080` or `8080`
/// (a bare port binds 127.0.0.1).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    let with_host = if let Some(p) = s.strip_prefix(':') {
        format!("127.0.0.1:{p}")
    } else if s.chars().all(|c| c.is_ascii_digit()) {
        format!("127.0.0.1:{s}")
    } else if let Some(p) = s.strip_prefix("localhost:") {
        format!("127.0.0.1:{p}")
    } else {
        s.to_string()
    };
    with_host
        .parse()
        .map_err(|e| format!("bad address {s:?} ({e}); use 127.0.0.1:PORT"))
}

/// The shortest bearer token accepted from a token file.
pub const MIN_TOKEN_LEN: usize = 16;

/// The bearer token: read from `file` (created with a new token, mode 0600, when
/// missing), else a new random one. Returns `(token, where it came from)`.
pub fn load_token(file: Option<&Path>) -> std::io::Result<(String, Option<std::path::PathBuf>)> {
    let Some(f) = file else {
        return Ok((crate::ids::random_hex(24), None));
    };
    match std::fs::read_to_string(f) {
        Ok(t) if !t.trim().is_empty() => {
            use std::os::unix::fs::PermissionsExt;
            // A token others can read, or one short enough to guess, is no lock.
            let mode = std::fs::metadata(f)?.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(std::io::Error::other(format!(
                    "{}: the token file is readable by other users (mode {:o}); run `chmod 600 {}`",
                    f.display(),
                    mode & 0o777,
                    f.display()
                )));
            }
            let t = t.trim();
            if t.len() < MIN_TOKEN_LEN {
                return Err(std::io::Error::other(format!(
                    "{}: the token is {} characters; use at least {MIN_TOKEN_LEN} (or delete the file and safesh writes a new one)",
                    f.display(),
                    t.len()
                )));
            }
            Ok((t.to_string(), Some(f.to_path_buf())))
        }
        Ok(_) | Err(_) if !f.exists() || std::fs::metadata(f).is_ok_and(|m| m.len() == 0) => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            if let Some(dir) = f.parent() {
                crate::settings::private_dir(dir)?;
            }
            let token = crate::ids::random_hex(24);
            let mut h = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(f)?;
            writeln!(h, "{token}")?;
            Ok((token, Some(f.to_path_buf())))
        }
        Ok(_) => Err(std::io::Error::other(format!(
            "{}: empty token file",
            f.display()
        ))),
        Err(e) => Err(e),
    }
}

/// True for an `Origin` on this machine: `http(s)://localhost|127.x|[::1][:port]`.
pub fn origin_is_local(origin: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let Some(rest) = rest else { return false };
    // The authority ends at the path; user info (`127.0.0.1@evil.com`) is not local.
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return false;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, p)) => (h, p),
            None => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, &authority[h.len()..][..1 + p.len()]),
            None => (authority, ""),
        }
    };
    // Nothing but `:digits` may follow the host.
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    // Hosts compared exactly (`127.0.0.1.evil.com` is a name under evil.com).
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
        || host
            .parse::<std::net::Ipv6Addr>()
            .is_ok_and(|a| a.is_loopback());
    port_ok && loopback
}

fn deny(status: StatusCode, msg: &str) -> Response {
    let body = serde_json::json!({"error": msg}).to_string();
    let mut r = (status, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    r
}

/// Compares without an early exit (the token is a secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn guard(State(token): State<Arc<String>>, req: Request, next: Next) -> Response {
    if let Some(o) = req.headers().get(header::ORIGIN) {
        let ok = o.to_str().is_ok_and(origin_is_local);
        if !ok {
            return deny(
                StatusCode::FORBIDDEN,
                "forbidden: the Origin header is not a localhost origin (safesh refuses cross-site requests)",
            );
        }
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(t) if same(t.as_bytes(), token.as_bytes()) => next.run(req).await,
        Some(_) => deny(StatusCode::UNAUTHORIZED, "unauthorized: wrong bearer token"),
        None => deny(
            StatusCode::UNAUTHORIZED,
            "unauthorized: send `Authorization: Bearer TOKEN` (the token safesh mcp printed, or the one in [mcp] http_token_file)",
        ),
    }
}

/// A JSON-RPC error as an HTTP response.
fn rpc_error(status: StatusCode, reply: serde_json::Value) -> Response {
    let mut r = (status, reply.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Reads and checks a POST body before rmcp: the size limit every face shares,
/// a JSON-RPC error for what is not a well-formed request, and the limit on
/// transport sessions for a new one (no `Mcp-Session-Id`).
async fn check_body(State(sessions): State<Arc<Bounded>>, req: Request, next: Next) -> Response {
    use crate::wire::{MAX_REQUEST_BYTES, check_mcp, error_reply, too_long};
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            let said = parts
                .headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(MAX_REQUEST_BYTES + 1);
            return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, too_long(said));
        }
    };
    if let Err(reply) = check_mcp(&bytes) {
        return rpc_error(StatusCode::BAD_REQUEST, reply);
    }
    let id = || {
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(serde_json::Value::Null)
    };
    let mut busy = None;
    match parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        // A client whose session was closed to make room: say so plainly.
        Some(sid) if sessions.was_evicted(sid) => {
            let msg = super::http_sessions::BoundedError::Evicted(sessions.max()).to_string();
            return rpc_error(StatusCode::NOT_FOUND, error_reply(id(), -32000, msg));
        }
        // In flight until its response is sent: not a session to evict.
        Some(sid) => busy = Some(sessions.busy(sid)),
        None => {
            if sessions.full().await && !sessions.evict_oldest().await {
                let msg = super::http_sessions::BoundedError::Full(sessions.max()).to_string();
                return rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    error_reply(id(), -32000, msg),
                );
            }
        }
    }
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await;
    match busy {
        // The response (an SSE stream for a tool call) is sent after this
        // returns: the request stays in flight until its body is done.
        Some(b) => {
            use futures::StreamExt;
            let (parts, body) = response.into_parts();
            let mut rest = body.into_data_stream();
            // The head and the events wait a moment for the stream's end
            // (most calls answer well within it): the head, rmcp's priming
            // event, the answer and the end then leave in one write, and the
            // client reads them at once, instead of three writes. A longer
            // call's stream goes on as it comes after the moment.
            let mut ready = Vec::new();
            let mut ended = false;
            let moment = tokio::time::sleep(HEAD_WAIT);
            tokio::pin!(moment);
            while !ended {
                tokio::select! {
                    chunk = rest.next() => match chunk {
                        Some(c) => ready.push(c),
                        None => ended = true,
                    },
                    () = &mut moment => break,
                }
            }
            let rest = futures::stream::iter((!ended).then_some(rest)).flatten();
            let stream = futures::stream::iter(ready).chain(rest).map(move |chunk| {
                b.hold();
                chunk
            });
            Response::from_parts(parts, axum::body::Body::from_stream(stream))
        }
        None => response,
    }
}

/// How long a call's response waits to be sent whole (then its head and the
/// events so far are sent, and the rest follows as it comes).
const HEAD_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Serves MCP over HTTP on `listener` until the process ends.
pub async fn serve(
    server: Arc<Server>,
    listener: tokio::net::TcpListener,
    token: String,
) -> std::io::Result<()> {
    let sessions = Arc::new(Bounded::new(
        server.clone(),
        server.settings.max_transport_sessions,
        server.settings.idle,
    ));
    let handler = SafeshMcp::new(server);
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if let Ok(a) = listener.local_addr() {
        hosts.push(a.ip().to_string());
    }
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        sessions.clone(),
        StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_max_request_body_bytes(crate::wire::MAX_REQUEST_BYTES),
    );
    // Layers run outside in: the token and Origin first, then the body.
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(sessions, check_body))
        .layer(axum::middleware::from_fn_with_state(Arc::new(token), guard));
    // Without TCP_NODELAY a keep-alive client waits ~40 ms per call: the
    // response goes out as several small writes (headers, then each SSE
    // chunk), and Nagle holds the later ones until the client's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        // Only latency is at stake; a socket that refuses the option still works.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
