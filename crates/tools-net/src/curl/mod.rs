//! `curl`: HTTP(S) transfers, faithful to the local curl (7.88) in exit codes and
//! stdout. Reads every byte to send first, then asks the host (egress) per hop.

mod body;
mod opts;
mod writeout;

use crate::decode::Decoder;
use crate::error::NetError;
use crate::output::{Sink, head_bytes};
use crate::transfer::{self, ClientOpts, Deadline, Follow, Request, StreamEnd};
use reqwest::Url;
use safesh_utils::{UtilCtx, UtilResult};
use std::time::Duration;
use writeout::Info;

const TRY: &str = "curl: try 'curl --help' or 'curl --manual' for more information";

const HELP: &str = "Usage: curl [options...] <url>
 -d, --data <data>          HTTP POST data
 -f, --fail                 Fail fast with no output on HTTP errors
 -h, --help <category>      Get help for commands
 -i, --include              Include protocol response headers in the output
 -o, --output <file>        Write to file instead of stdout
 -O, --remote-name          Write output to a file named as the remote file
 -s, --silent               Silent mode
 -T, --upload-file <file>   Transfer local FILE to destination
 -u, --user <user:password> Server user and password
 -A, --user-agent <name>    Send User-Agent <name> to server
 -v, --verbose              Make the operation more talkative
 -V, --version              Show version number and quit

This is not the full help, this menu is stripped into categories.
Use \"--help category\" to get an overview of all categories.
For all options use the manual or \"--help all\".
";

/// Runs `curl`.
pub fn curl(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match opts::parse(ctx.args()) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(ctx.stderr, "curl: {}\n{TRY}", e.0);
            return Ok(2);
        }
    };
    if p.on("help") {
        return Ok(match ctx.stdout.write_all(HELP.as_bytes()) {
            Ok(()) => 0,
            Err(_) => 23,
        });
    }
    if p.on("version") {
        let v = format!(
            "curl {} (safesh in-process curl; reqwest, rustls)\nProtocols: http https\nFeatures: libz\n",
            crate::CURL_VERSION
        );
        return Ok(match ctx.stdout.write_all(v.as_bytes()) {
            Ok(()) => 0,
            Err(_) => 23,
        });
    }
    if p.urls.is_empty() {
        let _ = writeln!(ctx.stderr, "{TRY}");
        return Ok(2);
    }
    match run(ctx, &p) {
        Ok(c) => Ok(c),
        Err(NetError::Interrupt(i)) => Err(i),
        Err(NetError::Cancelled) => Ok(130),
        Err(e) => {
            let _ = writeln!(ctx.stderr, "curl: ({}) {e}", e.curl_code());
            Ok(e.curl_code())
        }
    }
}

/// Everything read from the command line and files, before any connection.
struct Prepared {
    data: Option<body::Data>,
    form: Option<body::Form>,
    upload: Option<(String, Vec<u8>)>,
    headers: Vec<(String, Vec<u8>)>,
    writeout: Option<Vec<u8>>,
}

fn prepare(ctx: &mut UtilCtx<'_>, p: &opts::Parsed) -> Result<Result<Prepared, i32>, NetError> {
    let quiet = p.on("silent");
    let has_data = p.opts.iter().any(|o| {
        matches!(
            o.name,
            "data" | "data-ascii" | "data-binary" | "data-raw" | "data-urlencode" | "json"
        )
    });
    let has_form = p
        .opts
        .iter()
        .any(|o| matches!(o.name, "form" | "form-string"));
    let head = p.on("head") && !p.on("get");
    if (has_data && has_form) || (head && (has_form || has_data)) {
        let (a, b) = if has_form && has_data {
            ("POST \n(-d, --data)", "multipart formpost (-F, --form)")
        } else {
            (
                "HEAD (-I, --head)",
                if has_form {
                    "multipart formpost (-F, --form)"
                } else {
                    "POST (-d, --data)"
                },
            )
        };
        let _ = writeln!(
            ctx.stderr,
            "Warning: You can only select one HTTP request method! You asked for both {a} and {b}."
        );
        return Ok(Err(2));
    }
    let data = body::data(ctx, p, quiet)?;
    let form = body::form(ctx, p)?;
    let upload = match p.value("upload-file") {
        Some(f) => match body::read_source(ctx, f) {
            Ok(b) => Some((f.to_string(), b)),
            Err(_) => {
                let _ = writeln!(ctx.stderr, "curl: Can't open '{f}'!\n{TRY}");
                return Ok(Err(26));
            }
        },
        None => None,
    };
    let mut headers = body::base_headers(p);
    if p.on("compressed") {
        // Only what the client can decode (curl here also offers br, zstd).
        headers.push(("Accept-Encoding".into(), b"deflate, gzip".to_vec()));
    }
    if let Some(d) = &data
        && d.json
    {
        headers.push(("Accept".into(), b"application/json".to_vec()));
    }
    body::user_headers(ctx, p, &mut headers);
    let writeout = p.value("write-out").map(|w| match w.strip_prefix('@') {
        Some(f) => body::read_source(ctx, f).unwrap_or_default(),
        None => w.as_bytes().to_vec(),
    });
    Ok(Ok(Prepared {
        data,
        form,
        upload,
        headers,
        writeout,
    }))
}

/// The hosts of the URLs curl would fetch first with `args` (without argv[0]),
/// parsed as curl parses them; `None` when they do not parse.
pub(crate) fn first_hosts(args: &[String]) -> Option<Vec<String>> {
    let p = opts::parse(args).ok()?;
    p.urls
        .iter()
        .map(|u| {
            parse_url(u)
                .ok()
                .and_then(|u| u.host_str().map(String::from))
        })
        .collect()
}

/// Parses a URL the way curl accepts it (no scheme means http).
fn parse_url(s: &str) -> Result<Url, NetError> {
    let bad = || NetError::Failed(3, "URL using bad/illegal format or missing URL".into());
    let full = if s.contains("://") {
        s.to_string()
    } else {
        format!("http://{s}")
    };
    let (scheme, _) = full.split_once("://").ok_or_else(bad)?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(bad());
        }
        return Err(NetError::Failed(
            1,
            format!("Protocol \"{scheme}\" not supported or disabled in libcurl"),
        ));
    }
    let u = Url::parse(&full).map_err(|_| bad())?;
    if u.host_str().is_none_or(str::is_empty) {
        return Err(bad());
    }
    Ok(u)
}

fn secs(v: Option<&str>) -> Option<Duration> {
    v.and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0 && f.is_finite())
        .map(Duration::from_secs_f64)
}

fn run(ctx: &mut UtilCtx<'_>, p: &opts::Parsed) -> Result<i32, NetError> {
    let prep = match prepare(ctx, p)? {
        Ok(prep) => prep,
        Err(code) => return Ok(code),
    };
    let silent = p.on("silent");
    let show_err = !silent || p.on("show-error");
    let copts = ClientOpts {
        max_time: secs(p.value("max-time")),
        connect_timeout: secs(p.value("connect-timeout")),
        insecure: p.on("insecure"),
    };
    let client = transfer::client(&copts)?;
    // Outputs pair with URLs in order.
    let outputs: Vec<&opts::Opt> = p
        .opts
        .iter()
        .filter(|o| matches!(o.name, "output" | "remote-name"))
        .collect();
    let mut status = 0;
    for (n, raw) in p.urls.iter().enumerate() {
        let mut info = Info::default();
        let r = one(
            ctx,
            p,
            &prep,
            &client,
            &copts,
            raw,
            outputs.get(n).copied(),
            &mut info,
        );
        let code = match r {
            Ok(c) => c,
            Err(NetError::Interrupt(i)) => return Err(NetError::Interrupt(i)),
            Err(NetError::Cancelled) => return Ok(130),
            Err(e) => {
                let c = e.curl_code();
                info.exitcode = c;
                info.errormsg = e.to_string();
                if show_err {
                    let _ = writeln!(ctx.stderr, "curl: ({c}) {e}");
                }
                c
            }
        };
        if code == 130 {
            return Ok(130);
        }
        if info.exitcode == 0 {
            info.exitcode = code;
        }
        if let Some(fmt) = &prep.writeout {
            let mut warns = Vec::new();
            let text = writeout::expand(fmt, &info, &mut warns);
            for w in warns {
                let _ = writeln!(ctx.stderr, "curl: {w}");
            }
            ctx.stdout.write_all(&text).map_err(NetError::Write)?;
        }
        // curl's status is the last transfer's.
        status = code;
    }
    ctx.stdout.flush().map_err(NetError::Write)?;
    Ok(status)
}

/// The request for one URL.
fn build_request(p: &opts::Parsed, prep: &Prepared, mut url: Url) -> Request {
    let mut headers = prep.headers.clone();
    let has = |h: &[(String, Vec<u8>)], n: &str| h.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    let mut body = None;
    let get = p.on("get");
    if let Some(f) = &prep.form {
        if !has(&headers, "content-type") {
            headers.push((
                "Content-Type".into(),
                format!("multipart/form-data; boundary={}", f.boundary).into_bytes(),
            ));
        }
        body = Some(f.body.clone());
    } else if let Some(d) = &prep.data {
        if get {
            let q = String::from_utf8_lossy(&d.bytes).into_owned();
            let new = match url.query() {
                Some(old) if !old.is_empty() => format!("{old}&{q}"),
                _ => q,
            };
            url.set_query(Some(&new));
        } else {
            if !has(&headers, "content-type") {
                let t: &[u8] = if d.json {
                    b"application/json"
                } else {
                    b"application/x-www-form-urlencoded"
                };
                headers.push(("Content-Type".into(), t.to_vec()));
            }
            body = Some(d.bytes.clone());
        }
    } else if let Some((name, b)) = &prep.upload {
        if url.path().ends_with('/') {
            let base = name.rsplit('/').next().unwrap_or(name);
            if let Ok(u) = url.join(base) {
                url = u;
            }
        }
        body = Some(b.clone());
    }
    let method = if let Some(m) = p.value("request") {
        m.to_string()
    } else if p.on("head") {
        "HEAD".into()
    } else if prep.upload.is_some() && prep.form.is_none() && (prep.data.is_none() || get) {
        "PUT".into()
    } else if body.is_some() {
        "POST".into()
    } else {
        "GET".into()
    };
    Request {
        method,
        url,
        headers,
        body,
    }
}

/// HTTP statuses `--retry` treats as transient.
fn transient(code: u16) -> bool {
    matches!(code, 408 | 429 | 500 | 502 | 503 | 504)
}

/// One URL: request, redirects, output, `-w` info. Returns the exit status.
#[allow(clippy::too_many_arguments)]
fn one(
    ctx: &mut UtilCtx<'_>,
    p: &opts::Parsed,
    prep: &Prepared,
    client: &reqwest::blocking::Client,
    copts: &ClientOpts,
    raw: &str,
    output: Option<&opts::Opt>,
    info: &mut Info,
) -> Result<i32, NetError> {
    let url = parse_url(raw)?;
    let req = build_request(p, prep, url);
    info.url_effective = req.url.to_string();
    info.method = req.method.clone();
    let mut sink = match output {
        Some(o) if o.name == "output" => match o.value.as_deref() {
            Some("-") | None => Sink::Stdout,
            Some(f) => Sink::file(f, p.on("create-dirs")),
        },
        Some(_) => {
            let name = req
                .url
                .path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or("")
                .to_string();
            if name.is_empty() {
                return Err(NetError::Failed(
                    23,
                    "Remote file name has no length!".into(),
                ));
            }
            Sink::file(&name, p.on("create-dirs"))
        }
        None => Sink::Stdout,
    };
    let follow = Follow {
        enabled: p.on("location"),
        max: p
            .value("max-redirs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(50),
        forced_method: p.value("request").is_some(),
    };
    let fail = p.on("fail") && !p.on("fail-with-body");
    let include = p.on("include") || p.on("head");
    let verbose = p.on("verbose");
    let mut retries: u32 = p.value("retry").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut delay = 1u64;
    let deadline = Deadline::after(copts.max_time);
    let started = std::time::Instant::now();
    let timed_out = |e: NetError, n: u64| match e {
        NetError::Failed(28, _) => NetError::Failed(
            28,
            format!(
                "Operation timed out after {} milliseconds with {n} bytes received",
                started.elapsed().as_millis()
            ),
        ),
        e => e,
    };
    let ex = loop {
        let mut on_resp = |ctx: &mut UtilCtx<'_>,
                           r: &Request,
                           resp: &reqwest::blocking::Response|
         -> Result<(), NetError> {
            let head = head_bytes(resp);
            if verbose {
                let _ = write_verbose(ctx, r, &head);
            }
            if include {
                sink.write(ctx, &head)?;
            }
            Ok(())
        };
        let res = transfer::exchange(ctx, "curl", client, req.clone(), follow, &mut on_resp);
        let retry_it = match &res {
            Ok(ex) => transient(ex.response.status().as_u16()),
            Err(NetError::Failed(28, _)) => true,
            Err(_) => false,
        };
        if retry_it && retries > 0 {
            if !p.on("silent") {
                let _ = writeln!(
                    ctx.stderr,
                    "Warning: Problem : HTTP error. Will retry in {delay} seconds. {retries} retries left."
                );
            }
            drop(res);
            ctx.host
                .sleep(Duration::from_secs(delay))
                .map_err(NetError::Interrupt)?;
            retries -= 1;
            delay = (delay * 2).min(600);
            continue;
        }
        break res.map_err(|e| timed_out(e, 0))?;
    };
    let code = ex.response.status().as_u16();
    info.http_code = code;
    info.url_effective = ex.url.to_string();
    info.method = ex.method.clone();
    info.num_redirects = ex.redirects;
    info.redirect_url = ex
        .redirect_url
        .as_ref()
        .map(Url::to_string)
        .unwrap_or_default();
    info.content_type = ex
        .response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    if fail && code >= 400 {
        return Err(NetError::Failed(
            22,
            format!("The requested URL returned error: {code}"),
        ));
    }
    // What was written so far (`-i` heads) goes out before the reply's scope.
    ctx.stdout.flush().map_err(NetError::Write)?;
    let reply = transfer::ReplyScope::begin(ctx.host, &ex.url);
    sink.open(ctx)?;
    let encoding = ex
        .response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let mut decoder = match (p.on("compressed"), encoding) {
        (true, Some(e)) => Decoder::for_encoding(&e),
        _ => Decoder::Identity,
    };
    let mut n = 0u64;
    let end = {
        let host = ctx.host;
        let stdout = &mut *ctx.stdout;
        let mut out = |b: &[u8]| match decoder.feed(b) {
            Ok(plain) => sink.write_with(stdout, &plain).map_err(NetError::Write),
            Err(e) => Err(unencoding(&e)),
        };
        let r = transfer::stream_body(host, ex.response, &mut out, &mut n, deadline);
        info.size_download = n;
        r.map_err(|e| timed_out(e, n))?
    };
    let tail = decoder.finish().map_err(|e| unencoding(&e))?;
    sink.write(ctx, &tail)?;
    sink.finish(ctx)?;
    ctx.stdout.flush().map_err(NetError::Write)?;
    reply.end();
    if let StreamEnd::Cancelled = end {
        return Ok(130);
    }
    if p.on("fail-with-body") && code >= 400 {
        return Err(NetError::Failed(
            22,
            format!("The requested URL returned error: {code}"),
        ));
    }
    Ok(0)
}

/// curl's error for a body that does not decode.
fn unencoding(e: &std::io::Error) -> NetError {
    NetError::Failed(
        61,
        format!("Error while processing content unencoding: {e}"),
    )
}

/// A subset of `-v`: the request line and headers, then the response head.
fn write_verbose(ctx: &mut UtilCtx<'_>, r: &Request, head: &[u8]) -> std::io::Result<()> {
    let host = r.url.host_str().unwrap_or("");
    let port = r.url.port_or_known_default().unwrap_or(0);
    writeln!(ctx.stderr, "* Connected to {host} port {port}")?;
    let mut target = r.url.path().to_string();
    if let Some(q) = r.url.query() {
        target.push('?');
        target.push_str(q);
    }
    writeln!(ctx.stderr, "> {} {target} HTTP/1.1", r.method)?;
    let has = |n: &str| r.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has("host") {
        match r.url.port() {
            Some(p) => writeln!(ctx.stderr, "> Host: {host}:{p}")?,
            None => writeln!(ctx.stderr, "> Host: {host}")?,
        }
    }
    for (k, v) in &r.headers {
        writeln!(ctx.stderr, "> {k}: {}", String::from_utf8_lossy(v))?;
    }
    if !has("accept") {
        writeln!(ctx.stderr, "> Accept: */*")?;
    }
    writeln!(ctx.stderr, "> ")?;
    for l in String::from_utf8_lossy(head).lines() {
        writeln!(ctx.stderr, "< {l}")?;
    }
    Ok(())
}
