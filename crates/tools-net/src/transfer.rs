//! One HTTP exchange with redirects handled here (not by the client), so that the
//! host decides egress before every hop: the heart of the host contract.

use crate::error::NetError;
use reqwest::Url;
use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use safesh_utils::{Egress, Host, UtilCtx};
use std::time::{Duration, Instant};

/// Client settings shared by curl and wget.
#[derive(Clone, Debug, Default)]
pub struct ClientOpts {
    /// Total time limit (`curl -m`, `wget -T`).
    pub max_time: Option<Duration>,
    /// Connect time limit.
    pub connect_timeout: Option<Duration>,
    /// Skip certificate checks (`-k`).
    pub insecure: bool,
}

/// Builds the client: no environment proxies (the script's env is not ours and the
/// host decides egress), no automatic redirects (each hop needs its own decision).
pub fn client(o: &ClientOpts) -> Result<Client, NetError> {
    let mut b = Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .http1_title_case_headers()
        .danger_accept_invalid_certs(o.insecure)
        .timeout(o.max_time);
    if let Some(t) = o.connect_timeout {
        b = b.connect_timeout(t);
    }
    b.build()
        .map_err(|e| NetError::Failed(2, format!("failed to initialize: {e}")))
}

/// A request to send: everything in it has already been read through the context.
#[derive(Clone, Debug)]
pub struct Request {
    /// The method.
    pub method: String,
    /// The target.
    pub url: Url,
    /// Headers in order (names as given).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
}

/// The redirect rules of one run.
#[derive(Clone, Copy, Debug)]
pub struct Follow {
    /// Follow `Location` at all.
    pub enabled: bool,
    /// Most hops to follow; negative is unlimited.
    pub max: i64,
    /// The method was forced (`curl -X`): keep it on every hop.
    pub forced_method: bool,
}

/// A finished exchange: the last response and what led to it.
pub struct Exchange {
    /// The last response (body not yet read).
    pub response: Response,
    /// The URL of the last request.
    pub url: Url,
    /// The method of the last request.
    pub method: String,
    /// Redirects followed.
    pub redirects: u32,
    /// The `Location` of the last response resolved against its URL, if it is a redirect.
    pub redirect_url: Option<Url>,
}

/// What the host decides on: where the request goes and everything it sends.
pub fn egress_for(ctx: &UtilCtx<'_>, tool: &str, req: &Request) -> Result<(), NetError> {
    let url = &req.url;
    let host = url.host_str().unwrap_or("");
    let port = url.port_or_known_default().unwrap_or(0);
    let req = Egress {
        tool,
        url: url.as_str(),
        scheme: url.scheme(),
        host,
        port,
        method: &req.method,
        headers: &req.headers,
        body: req.body.as_deref(),
    };
    ctx.host.egress(&req).map_err(NetError::Interrupt)
}

/// The Location of a redirect response, resolved against `base`.
pub fn location(resp: &Response, base: &Url) -> Option<Url> {
    if !resp.status().is_redirection() {
        return None;
    }
    let loc = resp.headers().get(reqwest::header::LOCATION)?;
    let loc = String::from_utf8_lossy(loc.as_bytes()).into_owned();
    base.join(loc.trim()).ok()
}

/// Sends `req`, following redirects by `follow`; asks the host before each hop and
/// tells it where responses came from. `on_response` sees every response's head
/// (for `-i` / `-v` / `-S`) before the next hop.
pub fn exchange(
    ctx: &mut UtilCtx<'_>,
    tool: &str,
    client: &Client,
    mut req: Request,
    follow: Follow,
    on_response: &mut dyn FnMut(&mut UtilCtx<'_>, &Request, &Response) -> Result<(), NetError>,
) -> Result<Exchange, NetError> {
    let mut redirects = 0u32;
    loop {
        egress_for(ctx, tool, &req)?;
        let resp = send(ctx.host, client, &req)?;
        ctx.host.received_from(req.url.host_str().unwrap_or(""));
        on_response(ctx, &req, &resp)?;
        let next = location(&resp, &req.url);
        let (true, Some(next)) = (follow.enabled, next.clone()) else {
            return Ok(Exchange {
                response: resp,
                url: req.url,
                method: req.method,
                redirects,
                redirect_url: next,
            });
        };
        if follow.max >= 0 && i64::from(redirects) >= follow.max {
            return Err(NetError::Failed(
                47,
                format!("Maximum ({}) redirects followed", follow.max),
            ));
        }
        redirects += 1;
        let code = resp.status().as_u16();
        drop(resp);
        req = redirected(req, next, code, follow.forced_method);
    }
}

/// The request for the next hop, with curl's method rules: 303 turns anything but
/// HEAD into GET; 301/302 turn POST into GET; 307/308 keep method and body.
fn redirected(mut req: Request, next: Url, code: u16, forced: bool) -> Request {
    let to_get = match code {
        303 => req.method != "HEAD",
        301 | 302 => req.method == "POST",
        _ => false,
    };
    if to_get {
        if !forced {
            req.method = "GET".into();
        }
        req.body = None;
        req.headers.retain(|(n, _)| {
            !n.eq_ignore_ascii_case("content-type") && !n.eq_ignore_ascii_case("content-length")
        });
    }
    // Credentials stay with the host they were meant for.
    let same = req.url.host_str() == next.host_str()
        && req.url.port_or_known_default() == next.port_or_known_default();
    if !same {
        req.headers
            .retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
    }
    req.url = next;
    req
}

/// How often a wait on the network looks at cancellation.
const POLL: Duration = Duration::from_millis(50);

/// Sends one request (no redirects) and classifies failures. The blocking send runs
/// on its own thread so that a cancelled script does not wait for a slow server.
fn send(host: &dyn Host, client: &Client, req: &Request) -> Result<Response, NetError> {
    let method = reqwest::Method::from_bytes(req.method.as_bytes())
        .map_err(|_| NetError::Failed(3, "URL using bad/illegal format or missing URL".into()))?;
    let mut headers = HeaderMap::new();
    for (n, v) in &req.headers {
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_bytes(v),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    let mut rb = client.request(method, req.url.clone()).headers(headers);
    if let Some(b) = &req.body {
        rb = rb.body(b.clone());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(rb.send());
    });
    loop {
        match rx.recv_timeout(POLL) {
            Ok(r) => return r.map_err(|e| classify(&e, &req.url)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if host.cancelled() {
                    return Err(NetError::Cancelled);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(NetError::Failed(
                    56,
                    "Failure when receiving data from the peer".into(),
                ));
            }
        }
    }
}

/// Maps a client error to curl's exit code and message.
pub fn classify(e: &reqwest::Error, url: &Url) -> NetError {
    let host = url.host_str().unwrap_or("");
    let port = url.port_or_known_default().unwrap_or(0);
    let chain = error_chain(e);
    if e.is_timeout() || chain.contains("timed out") {
        return NetError::Failed(28, "Operation timed out".into());
    }
    if chain.contains("dns error") || chain.contains("failed to lookup") {
        return NetError::Failed(6, format!("Could not resolve host: {host}"));
    }
    if e.is_connect() {
        if chain.contains("invalid peer certificate") {
            return NetError::Failed(60, format!("SSL certificate problem: {chain}"));
        }
        if url.scheme() == "https" && !chain.contains("Connection refused") {
            return NetError::Failed(35, format!("SSL connect error: {chain}"));
        }
        return NetError::Failed(
            7,
            format!(
                "Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"
            ),
        );
    }
    if e.is_builder() {
        return NetError::Failed(3, "URL using bad/illegal format or missing URL".into());
    }
    NetError::Failed(
        56,
        format!("Failure when receiving data from the peer: {chain}"),
    )
}

/// The messages of an error and its sources, joined.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// A deadline for the whole transfer (`-m`), checked while streaming the body.
#[derive(Clone, Copy, Debug)]
pub struct Deadline(pub Option<Instant>);

impl Deadline {
    /// A deadline `d` from now, if any.
    pub fn after(d: Option<Duration>) -> Self {
        Deadline(d.map(|d| Instant::now() + d))
    }
    /// True once passed.
    pub fn passed(&self) -> bool {
        self.0.is_some_and(|t| Instant::now() >= t)
    }
}

/// Why a body stream stopped early.
pub enum StreamEnd {
    /// All of it was copied.
    Done,
    /// The script was cancelled.
    Cancelled,
}

/// Copies a response body to `out` in chunks, polling cancellation and the deadline
/// even while the server is silent (the reads run on their own thread); counts
/// bytes into `n`. Read errors map to curl codes (56, 28); `out` reports its own.
pub fn stream_body(
    host: &dyn Host,
    resp: Response,
    out: &mut dyn FnMut(&[u8]) -> Result<(), NetError>,
    n: &mut u64,
    deadline: Deadline,
) -> Result<StreamEnd, NetError> {
    use std::sync::mpsc::{RecvTimeoutError, sync_channel};
    let (tx, rx) = sync_channel::<std::io::Result<Vec<u8>>>(2);
    std::thread::spawn(move || read_chunks(resp, &tx));
    loop {
        if host.cancelled() {
            return Ok(StreamEnd::Cancelled);
        }
        if deadline.passed() {
            return Err(timed_out(*n));
        }
        let chunk = match rx.recv_timeout(POLL) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                let text = error_chain(&e);
                if e.kind() == std::io::ErrorKind::TimedOut || text.contains("timed out") {
                    return Err(timed_out(*n));
                }
                return Err(NetError::Failed(
                    56,
                    format!("Failure when receiving data from the peer: {text}"),
                ));
            }
            Err(RecvTimeoutError::Timeout) => continue,
            // The reader ends its channel at the end of the body.
            Err(RecvTimeoutError::Disconnected) => return Ok(StreamEnd::Done),
        };
        *n += chunk.len() as u64;
        out(&chunk)?;
    }
}

fn timed_out(n: u64) -> NetError {
    NetError::Failed(28, format!("Operation timed out with {n} bytes received"))
}

/// Reads `resp` in chunks into `tx` until the end, an error, or the receiver is gone.
fn read_chunks(mut resp: Response, tx: &std::sync::mpsc::SyncSender<std::io::Result<Vec<u8>>>) {
    use std::io::Read;
    loop {
        let mut buf = vec![0u8; 64 * 1024];
        match resp.read(&mut buf) {
            Ok(0) => return,
            Ok(k) => {
                buf.truncate(k);
                if tx.send(Ok(buf)).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// The scope in which a utility writes the body of a response from one host
/// ([`Host::reply_begin`] … [`Host::reply_end`]). Bytes still buffered when it
/// ends are labeled with everything that was sent, so flush the output before
/// [`ReplyScope::end`]; an early return drops it unflushed (over-labeled, never
/// under).
pub struct ReplyScope<'h> {
    host: &'h dyn Host,
}

impl<'h> ReplyScope<'h> {
    /// Opens the scope for a reply from the host of `url`. Call it after the last
    /// hop (every egress decided) and with nothing buffered from before.
    pub fn begin(host: &'h dyn Host, url: &Url) -> Self {
        host.reply_begin(url.host_str().unwrap_or(""));
        ReplyScope { host }
    }

    /// Ends the scope (the same as dropping it).
    pub fn end(self) {}
}

impl Drop for ReplyScope<'_> {
    fn drop(&mut self) {
        self.host.reply_end();
    }
}
