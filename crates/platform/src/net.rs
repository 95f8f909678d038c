//! One HTTP request from a platform command, on the same stack as `curl`
//! (blocking reqwest, rustls, no proxies from the environment, no automatic
//! redirects): the host decides egress on the exact bytes before it is sent.

use crate::command::Risk;
use crate::ctx::PlatformCtx;
use crate::error::PlatformError;
use reqwest::Url;
use safesh_utils::Egress;
use std::io::Read;
use std::time::Duration;

/// A request, everything in it already known.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: &'static str,
    /// The target.
    pub url: Url,
    /// Headers in order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Total time limit.
    pub timeout: Duration,
    /// The most body bytes kept.
    pub max_bytes: u64,
}

/// A response, its body read (up to the cap).
#[derive(Clone, Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers (names lower case), in order.
    pub headers: Vec<(String, String)>,
    /// The body (at most `max_bytes`).
    pub body: Vec<u8>,
    /// More body bytes came than were kept.
    pub truncated: bool,
    /// The URL requested.
    pub url: Url,
}

impl Response {
    /// The first header called `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses a URL given to a command (`http` / `https` only).
pub fn parse_url(command: &str, field: &str, text: &str) -> Result<Url, PlatformError> {
    let url = Url::parse(text)
        .map_err(|e| PlatformError::field(command, field, format!("--{field}: not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(PlatformError::field(
            command,
            field,
            format!("--{field}: only http:// and https:// URLs with a host"),
        ));
    }
    Ok(url)
}

/// Sends `req` for `command` after the host allowed it; reports where the
/// answer came from before any of it is used.
pub fn send(
    ctx: &dyn PlatformCtx,
    command: &str,
    risk: Risk,
    req: &Request,
) -> Result<Response, PlatformError> {
    let host = req.url.host_str().unwrap_or("");
    ctx.egress(
        &Egress {
            tool: command,
            url: req.url.as_str(),
            scheme: req.url.scheme(),
            host,
            port: req.url.port_or_known_default().unwrap_or(0),
            method: req.method,
            headers: &req.headers,
            body: req.body.as_deref(),
        },
        risk,
    )?;
    let client = reqwest::blocking::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(req.timeout)
        .build()
        .map_err(|e| PlatformError::Failed(format!("{command}: cannot start the client: {e}")))?;
    let method = reqwest::Method::from_bytes(req.method.as_bytes())
        .map_err(|e| PlatformError::Failed(format!("{command}: {e}")))?;
    let mut b = client.request(method, req.url.clone());
    for (k, v) in &req.headers {
        b = b.header(k.as_str(), v.as_slice());
    }
    if let Some(body) = &req.body {
        b = b.body(body.clone());
    }
    let resp = b.send().map_err(|e| {
        // reqwest's message names the URL (never a header): no token in it.
        let why = if e.is_timeout() {
            "timed out".to_string()
        } else if e.is_connect() {
            format!("cannot connect to {host}")
        } else {
            e.without_url().to_string()
        };
        PlatformError::Failed(format!("{command}: {} {}: {why}", req.method, req.url))
    })?;
    ctx.host().received_from(host);
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let mut body = Vec::new();
    resp.take(req.max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| PlatformError::Failed(format!("{command}: reading the response: {e}")))?;
    let truncated = body.len() as u64 > req.max_bytes;
    body.truncate(req.max_bytes as usize);
    Ok(Response {
        status,
        headers,
        body,
        truncated,
        url: req.url.clone(),
    })
}
