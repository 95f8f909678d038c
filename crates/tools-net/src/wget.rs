//! `wget`: HTTP(S) downloads to files, faithful to the local GNU Wget 1.21 in exit
//! codes, files written and what the server receives; messages are a subset.

use crate::error::NetError;
use crate::output::{Sink, head_bytes};
use crate::transfer::{self, ClientOpts, Deadline, Follow, Request, StreamEnd};
use base64::Engine;
use reqwest::Url;
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::time::Duration;

/// The version of the local wget we imitate.
const WGET_VERSION: &str = "1.21.3";

const SPEC: Spec = Spec {
    flags: "qSVhvc",
    valued: "OPUTt",
    long: &[
        ("quiet", false, "q"),
        ("server-response", false, "S"),
        ("version", false, "V"),
        ("help", false, "h"),
        ("verbose", false, "v"),
        ("no-verbose", false, "no-verbose"),
        ("continue", false, "c"),
        ("output-document", true, "O"),
        ("directory-prefix", true, "P"),
        ("user-agent", true, "U"),
        ("timeout", true, "T"),
        ("tries", true, "t"),
        ("post-data", true, "post-data"),
        ("post-file", true, "post-file"),
        ("body-data", true, "body-data"),
        ("body-file", true, "body-file"),
        ("method", true, "method"),
        ("header", true, "header"),
        ("user", true, "user"),
        ("password", true, "password"),
        ("http-user", true, "user"),
        ("http-password", true, "password"),
        ("auth-no-challenge", false, "auth-no-challenge"),
        ("max-redirect", true, "max-redirect"),
        ("content-on-error", false, "content-on-error"),
        ("no-check-certificate", false, "no-check-certificate"),
        ("connect-timeout", true, "connect-timeout"),
        ("read-timeout", true, "read-timeout"),
    ],
    stop_at_operand: false,
};

const USAGE: &str = "Usage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n";

const HELP: &str = "GNU Wget 1.21.3 (safesh in-process), a non-interactive network retriever.
Usage: wget [OPTION]... [URL]...

  -V,  --version                   display the version of Wget and exit
  -h,  --help                      print this help
  -q,  --quiet                     quiet (no output)
  -O,  --output-document=FILE      write documents to FILE
  -P,  --directory-prefix=PREFIX   save files to PREFIX/..
  -T,  --timeout=SECONDS           set all timeout values to SECONDS
  -t,  --tries=NUMBER              set number of retries to NUMBER
  -S,  --server-response           print server response
  -U,  --user-agent=AGENT          identify as AGENT instead of Wget/VERSION
       --header=STRING             insert STRING among the headers
       --post-data=STRING          use the POST method; send STRING as the data
       --post-file=FILE            use the POST method; send contents of FILE
       --method=HTTPMethod         use method \"HTTPMethod\" in the request
       --body-data=STRING          send STRING as data
       --body-file=FILE            send contents of FILE
       --user=USER, --password=PASS  set both http user and password
       --max-redirect              maximum redirections allowed per page
       --content-on-error          output the received content on server errors
";

/// wget's exit codes.
mod code {
    pub const GENERIC: i32 = 1;
    pub const PARSE: i32 = 2;
    pub const IO: i32 = 3;
    pub const NETWORK: i32 = 4;
    pub const AUTH: i32 = 6;
    pub const SERVER: i32 = 8;
}

/// The hosts of the URLs wget would fetch first with `args` (without argv[0]),
/// parsed as wget parses them; `None` when they do not parse (or name none
/// directly: `-i FILE`).
pub(crate) fn first_hosts(args: &[String]) -> Option<Vec<String>> {
    let p = args::parse(args, &SPEC).ok()?;
    p.operands
        .iter()
        .map(|u| {
            parse_url(u)
                .ok()
                .and_then(|u| u.host_str().map(String::from))
        })
        .collect()
}

/// Runs `wget`.
pub fn wget(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => {
            let _ = write!(ctx.stderr, "wget: {e}\n{USAGE}");
            return Ok(code::PARSE);
        }
    };
    if p.has("h") {
        return Ok(if ctx.stdout.write_all(HELP.as_bytes()).is_ok() {
            0
        } else {
            code::IO
        });
    }
    if p.has("V") {
        let v = format!("GNU Wget {WGET_VERSION} (safesh in-process wget; reqwest, rustls)\n");
        return Ok(if ctx.stdout.write_all(v.as_bytes()).is_ok() {
            0
        } else {
            code::IO
        });
    }
    if p.operands.is_empty() {
        let _ = write!(ctx.stderr, "wget: missing URL\n{USAGE}");
        return Ok(code::GENERIC);
    }
    match run(ctx, &p) {
        Ok(c) => Ok(c),
        Err(NetError::Interrupt(i)) => Err(i),
        Err(NetError::Cancelled) => Ok(130),
        Err(e) => {
            let _ = writeln!(ctx.stderr, "wget: {e}");
            Ok(code::GENERIC)
        }
    }
}

/// Keeps wget's precedence: lower codes win, except that 1 yields to any other.
fn worse(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (1, x) | (x, 1) => x,
        (x, y) => x.min(y),
    }
}

struct Settings {
    quiet: bool,
    server_response: bool,
    content_on_error: bool,
    tries: u32,
    max_redirect: i64,
    creds: Option<(String, String)>,
    preemptive_auth: bool,
    method: String,
    body: Option<Vec<u8>>,
    headers: Vec<(String, Vec<u8>)>,
}

fn secs(v: Option<&str>) -> Option<Duration> {
    v.and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0 && f.is_finite())
        .map(Duration::from_secs_f64)
}

fn run(ctx: &mut UtilCtx<'_>, p: &args::Parsed) -> Result<i32, NetError> {
    // Everything sent is read first: --post-file / --body-file.
    let mut body: Option<Vec<u8>> = None;
    for (opt, file) in [
        ("post-file", true),
        ("body-file", true),
        ("post-data", false),
        ("body-data", false),
    ] {
        if let Some(v) = p.value(opt) {
            if file {
                match ctx.read_file(v) {
                    Ok(b) => body = Some(b),
                    Err(e) => {
                        ctx.warn_io(v, &e);
                        return Ok(code::IO);
                    }
                }
            } else {
                body = Some(v.as_bytes().to_vec());
            }
            break;
        }
    }
    let post = p.has("post-data") || p.has("post-file");
    let method = match p.value("method") {
        Some(m) => m.to_ascii_uppercase(),
        None if post => "POST".into(),
        None => "GET".into(),
    };
    let ua = p
        .value("U")
        .map(str::to_string)
        .unwrap_or_else(|| format!("Wget/{WGET_VERSION}"));
    let mut headers: Vec<(String, Vec<u8>)> = vec![
        ("User-Agent".into(), ua.into_bytes()),
        ("Accept".into(), b"*/*".to_vec()),
        ("Accept-Encoding".into(), b"identity".to_vec()),
        ("Connection".into(), b"Keep-Alive".to_vec()),
    ];
    if body.is_some() {
        headers.push((
            "Content-Type".into(),
            b"application/x-www-form-urlencoded".to_vec(),
        ));
    }
    for h in p.values("header") {
        if let Some((n, v)) = h.split_once(':') {
            let n = n.trim();
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(n));
            headers.push((n.to_string(), v.trim().as_bytes().to_vec()));
        }
    }
    let creds = p
        .value("user")
        .map(|u| (u.to_string(), p.value("password").unwrap_or("").to_string()));
    let timeout = secs(p.value("T").or(p.value("read-timeout")));
    let copts = ClientOpts {
        max_time: timeout,
        connect_timeout: secs(p.value("connect-timeout")).or(timeout),
        insecure: p.has("no-check-certificate"),
    };
    let s = Settings {
        quiet: p.has("q"),
        server_response: p.has("S"),
        content_on_error: p.has("content-on-error"),
        tries: p
            .value("t")
            .and_then(|v| v.parse::<u32>().ok())
            .map(|t| if t == 0 { u32::MAX } else { t })
            .unwrap_or(20),
        max_redirect: p
            .value("max-redirect")
            .and_then(|v| v.parse().ok())
            .unwrap_or(20),
        creds,
        preemptive_auth: p.has("auth-no-challenge"),
        method,
        body,
        headers,
    };
    let client = transfer::client(&copts)?;
    let mut document: Option<Sink> = match p.value("O") {
        Some("-") => Some(Sink::Stdout),
        Some(f) => Some(Sink::file(f, false)),
        None => None,
    };
    let prefix = p.value("P").map(str::to_string);
    let mut status = 0;
    for raw in &p.operands {
        let r = one(ctx, &s, &client, raw, document.as_mut(), prefix.as_deref());
        let c = match r {
            Ok(c) => c,
            Err(NetError::Interrupt(i)) => return Err(NetError::Interrupt(i)),
            Err(NetError::Cancelled) => return Ok(130),
            Err(e) => {
                if !s.quiet || matches!(e, NetError::Failed(code::GENERIC, _)) {
                    let _ = writeln!(ctx.stderr, "{e}");
                }
                match e {
                    NetError::Failed(c, _) if c < 10 => c,
                    NetError::Write(_) => code::IO,
                    _ => code::NETWORK,
                }
            }
        };
        if c == 130 {
            return Ok(130);
        }
        status = worse(status, c);
    }
    // wget creates the -O file up front: it exists even when every download failed.
    if let Some(d) = document.as_mut() {
        d.open(ctx)
            .map_err(|_| NetError::Failed(code::IO, "cannot write".into()))?;
        d.finish(ctx)?;
    }
    Ok(status)
}

/// Parses a URL as wget does (no scheme means http).
fn parse_url(raw: &str) -> Result<Url, NetError> {
    let full = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    let scheme = full.split_once("://").map(|(s, _)| s).unwrap_or("");
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(NetError::Failed(
            code::GENERIC,
            format!("{raw}: Unsupported scheme '{scheme}'."),
        ));
    }
    let u = Url::parse(&full)
        .map_err(|_| NetError::Failed(code::GENERIC, format!("{raw}: Invalid URL.")))?;
    if u.host_str().is_none_or(str::is_empty) {
        return Err(NetError::Failed(
            code::GENERIC,
            format!("{raw}: Invalid host name."),
        ));
    }
    Ok(u)
}

/// The local name wget picks: the last path segment (with the query), or
/// `index.html`; decoded, then `/` and control bytes escaped as wget does on Unix.
fn local_name(u: &Url) -> String {
    let seg = u
        .path_segments()
        .and_then(|mut s| s.next_back())
        .unwrap_or("");
    let mut name = file_part(seg);
    if name.is_empty() {
        name = "index.html".into();
    }
    if let Some(q) = u.query() {
        name.push('?');
        name.push_str(&file_part(q));
    }
    name
}

/// Percent-decodes `s` and escapes what cannot be in a Unix file name.
fn file_part(s: &str) -> String {
    let raw: Vec<u8> = percent_encoding::percent_decode_str(s).collect();
    let mut out = Vec::with_capacity(raw.len());
    for c in raw {
        if c == b'/' || c < 32 || (128..160).contains(&c) {
            out.extend_from_slice(format!("%{c:02X}").as_bytes());
        } else {
            out.push(c);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `name`, or `name.1`, `name.2`, ... when it exists.
fn unique(ctx: &UtilCtx<'_>, name: &str) -> String {
    // A path the host will not let us look at counts as free: creating it is then
    // refused by the host too, with a proper error (and the search stays finite).
    let exists = |n: &str| {
        ctx.check_read(n)
            .map(|p| p.symlink_metadata().is_ok())
            .unwrap_or(false)
    };
    if !exists(name) {
        return name.to_string();
    }
    (1..)
        .map(|i| format!("{name}.{i}"))
        .find(|n| !exists(n))
        .unwrap_or_else(|| name.to_string())
}

/// One URL: request (with auth after a challenge), redirects, retries, saving.
fn one(
    ctx: &mut UtilCtx<'_>,
    s: &Settings,
    client: &reqwest::blocking::Client,
    raw: &str,
    document: Option<&mut Sink>,
    prefix: Option<&str>,
) -> Result<i32, NetError> {
    let url = parse_url(raw)?;
    let mut req = Request {
        method: s.method.clone(),
        url: url.clone(),
        headers: s.headers.clone(),
        body: s.body.clone(),
    };
    let auth = s.creds.as_ref().map(|(u, p)| {
        let enc = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        (
            "Authorization".to_string(),
            format!("Basic {enc}").into_bytes(),
        )
    });
    if s.preemptive_auth
        && let Some(a) = &auth
    {
        req.headers.push(a.clone());
    }
    let follow = Follow {
        enabled: true,
        max: s.max_redirect,
        forced_method: false,
    };
    let mut tries_left = s.tries;
    let mut authed = s.preemptive_auth;
    let mut wait = 1u64;
    let ex = loop {
        tries_left = tries_left.saturating_sub(1);
        let quiet = s.quiet;
        let show = s.server_response && !s.quiet;
        let mut on_resp = |ctx: &mut UtilCtx<'_>,
                           r: &Request,
                           resp: &reqwest::blocking::Response|
         -> Result<(), NetError> {
            if !quiet {
                let host = r.url.host_str().unwrap_or("");
                let port = r.url.port_or_known_default().unwrap_or(0);
                let _ = writeln!(
                    ctx.stderr,
                    "--  {}\nConnecting to {host}:{port}... connected.",
                    r.url
                );
            }
            if show {
                let head = head_bytes(resp);
                for l in String::from_utf8_lossy(&head)
                    .lines()
                    .filter(|l| !l.is_empty())
                {
                    let _ = writeln!(ctx.stderr, "  {l}");
                }
            } else if !quiet {
                let line = crate::output::status_line(resp);
                let code_reason = line.split_once(' ').map(|(_, r)| r).unwrap_or("");
                let _ = writeln!(
                    ctx.stderr,
                    "HTTP request sent, awaiting response... {code_reason}"
                );
            }
            Ok(())
        };
        let res = transfer::exchange(ctx, "wget", client, req.clone(), follow, &mut on_resp);
        match res {
            Ok(ex)
                if ex.response.status().as_u16() == 401
                    && !authed
                    && auth.is_some()
                    && challenged(&ex.response) =>
            {
                // wget sends credentials only when challenged (unless
                // --auth-no-challenge); the retry goes to the URL that asked.
                authed = true;
                req.url = ex.url.clone();
                req.method = ex.method.clone();
                if let Some(a) = &auth {
                    req.headers.push(a.clone());
                }
                tries_left += 1;
                continue;
            }
            Err(NetError::Failed(28, m)) if tries_left > 0 => {
                if !s.quiet {
                    let _ = writeln!(ctx.stderr, "{m}. Retrying.");
                }
                ctx.host
                    .sleep(Duration::from_secs(wait))
                    .map_err(NetError::Interrupt)?;
                wait = (wait + 1).min(10);
                continue;
            }
            Err(NetError::Failed(47, _)) => {
                return Err(NetError::Failed(
                    code::SERVER,
                    format!("{} redirections exceeded.", s.max_redirect),
                ));
            }
            Err(NetError::Failed(c, m)) => {
                return Err(NetError::Failed(
                    code::NETWORK,
                    wget_message(c, &m, &req.url),
                ));
            }
            other => break other?,
        }
    };
    let status = ex.response.status();
    if status.as_u16() == 401 && !s.content_on_error {
        if !s.quiet {
            let _ = writeln!(ctx.stderr, "Username/Password Authentication Failed.");
        }
        return Ok(code::AUTH);
    }
    let error = status.as_u16() >= 400;
    if error {
        if !s.quiet {
            let line = crate::output::status_line(&ex.response);
            let reason = line.splitn(3, ' ').nth(2).unwrap_or("");
            let _ = writeln!(ctx.stderr, "ERROR {}: {reason}.", status.as_u16());
        }
        if !s.content_on_error {
            return Ok(code::SERVER);
        }
    }
    let mut own;
    let sink: &mut Sink = match document {
        Some(d) => d,
        None => {
            let mut name = local_name(&url);
            if let Some(pre) = prefix {
                // Each missing directory, outermost first, made in the
                // directory checked (no symlink followed by name).
                let full = ctx.resolve(pre);
                let missing: Vec<&std::path::Path> =
                    full.ancestors().take_while(|a| !a.exists()).collect();
                for d in missing.iter().rev() {
                    match ctx
                        .resolve_write(d, false)
                        .and_then(|e| e.create_dir(0o777))
                    {
                        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                            return Err(NetError::Failed(code::IO, format!("{pre}: {e}")));
                        }
                        _ => {}
                    }
                }
                name = format!("{}/{name}", pre.trim_end_matches('/'));
            }
            let name = unique(ctx, &name);
            if !s.quiet {
                let _ = writeln!(ctx.stderr, "Saving to: '{name}'");
            }
            own = Sink::file(&name, false);
            &mut own
        }
    };
    ctx.stdout
        .flush()
        .map_err(|e| NetError::Failed(code::IO, format!("write error: {e}")))?;
    let reply = transfer::ReplyScope::begin(ctx.host, &ex.url);
    sink.open(ctx)
        .map_err(|e| NetError::Failed(code::IO, e.to_string()))?;
    let mut n = 0u64;
    let end = {
        let host = ctx.host;
        let stdout = &mut *ctx.stdout;
        let mut out = |b: &[u8]| sink.write_with(stdout, b).map_err(NetError::Write);
        transfer::stream_body(host, ex.response, &mut out, &mut n, Deadline::after(None))
    };
    let end = match end {
        Ok(e) => e,
        Err(NetError::Write(e)) => {
            return Err(NetError::Failed(code::IO, format!("write error: {e}")));
        }
        Err(e) => return Err(NetError::Failed(code::NETWORK, e.to_string())),
    };
    sink.finish(ctx)
        .map_err(|e| NetError::Failed(code::IO, e.to_string()))?;
    ctx.stdout
        .flush()
        .map_err(|e| NetError::Failed(code::IO, format!("write error: {e}")))?;
    reply.end();
    if let StreamEnd::Cancelled = end {
        return Ok(130);
    }
    if !s.quiet {
        let _ = writeln!(ctx.stderr, "saved [{n}]");
    }
    Ok(if error { code::SERVER } else { 0 })
}

/// True if a 401 response asks for Basic credentials.
fn challenged(resp: &reqwest::blocking::Response) -> bool {
    resp.headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .any(|v| {
            v.as_bytes()
                .get(..5)
                .is_some_and(|b| b.eq_ignore_ascii_case(b"basic"))
        })
}

/// wget's wording for a network failure (curl code → message).
fn wget_message(c: i32, m: &str, u: &Url) -> String {
    let host = u.host_str().unwrap_or("");
    match c {
        6 => format!("wget: unable to resolve host address '{host}'"),
        7 => format!(
            "Connecting to {host}:{}... failed: Connection refused.",
            u.port_or_known_default().unwrap_or(0)
        ),
        _ => m.to_string(),
    }
}
