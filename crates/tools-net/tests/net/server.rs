//! A small HTTP/1.1 server on 127.0.0.1 for the tests: one thread per connection,
//! `Connection: close`, every request recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub method: String,
    pub target: String,
    /// (lower-case name, value), in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Server {
    pub port: u16,
    log: Arc<Mutex<Vec<Received>>>,
    conns: Arc<AtomicUsize>,
}

impl Server {
    pub fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let conns = Arc::new(AtomicUsize::new(0));
        let (log2, conns2) = (log.clone(), conns.clone());
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { break };
                conns2.fetch_add(1, Ordering::SeqCst);
                let log = log2.clone();
                std::thread::spawn(move || {
                    let _ = handle(s, port, &log);
                });
            }
        });
        Server { port, log, conns }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far, and forgets them.
    pub fn take(&self) -> Vec<Received> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }
}

/// A port nothing listens on.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn read_request(s: &mut BufReader<TcpStream>) -> std::io::Result<Option<Received>> {
    let mut line = String::new();
    if s.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.trim_end().splitn(3, ' ');
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        s.read_line(&mut h)?;
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut r = Received {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if r.header("expect").is_some() {
        s.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    if let Some(n) = r
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        let mut b = vec![0; n];
        s.read_exact(&mut b)?;
        r.body = b;
    } else if r.header("transfer-encoding") == Some("chunked") {
        loop {
            let mut sz = String::new();
            s.read_line(&mut sz)?;
            let n = usize::from_str_radix(sz.trim(), 16).unwrap_or(0);
            let mut b = vec![0; n + 2];
            s.read_exact(&mut b)?;
            if n == 0 {
                break;
            }
            b.truncate(n);
            r.body.extend(b);
        }
    }
    Ok(Some(r))
}

fn query_param<'a>(target: &'a str, key: &str) -> Option<&'a str> {
    let q = target.split_once('?')?.1;
    q.split('&')
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn respond(
    s: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut o = format!("HTTP/1.1 {status}\r\n").into_bytes();
    for (k, v) in headers {
        o.extend(format!("{k}: {v}\r\n").bytes());
    }
    o.extend(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .bytes(),
    );
    o.extend_from_slice(body);
    s.write_all(&o)
}

fn handle(s: TcpStream, port: u16, log: &Mutex<Vec<Received>>) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut r = BufReader::new(s);
    let Some(req) = read_request(&mut r)? else {
        return Ok(());
    };
    log.lock().unwrap().push(req.clone());
    let mut s = r.into_inner();
    let path = req.target.split('?').next().unwrap_or("").to_string();
    let head = req.method == "HEAD";
    let body_or_none = |b: Vec<u8>| if head { Vec::new() } else { b };
    let text = [("Content-Type", "text/plain".to_string())];
    if path.starts_with("/echo") {
        let mut b = format!("{} {}\n", req.method, req.target).into_bytes();
        b.extend_from_slice(&req.body);
        return respond(&mut s, "200 OK", &text, &body_or_none(b));
    }
    if let Some(code) = path.strip_prefix("/status/") {
        let b = format!("status {code}\n").into_bytes();
        return respond(&mut s, &format!("{code} Whatever"), &text, &body_or_none(b));
    }
    if let Some(code) = path.strip_prefix("/redirect/") {
        let to = query_param(&req.target, "to")
            .unwrap_or("/echo")
            .to_string();
        let to = to
            .replace("%3F", "?")
            .replace("%3D", "=")
            .replace("%26", "&");
        let b = format!("moved to {to}\n").into_bytes();
        return respond(
            &mut s,
            &format!("{code} Moved"),
            &[("Location", to)],
            &body_or_none(b),
        );
    }
    if let Some(n) = path.strip_prefix("/chain/") {
        let n: u32 = n.parse().unwrap_or(0);
        if n == 0 {
            return respond(
                &mut s,
                "200 OK",
                &text,
                &body_or_none(b"end of chain\n".to_vec()),
            );
        }
        // Alternate relative and absolute Locations.
        let loc = if n.is_multiple_of(2) {
            format!("/chain/{}", n - 1)
        } else {
            format!("http://127.0.0.1:{port}/chain/{}", n - 1)
        };
        return respond(&mut s, "302 Found", &[("Location", loc)], b"");
    }
    match path.as_str() {
        "/loop" => respond(
            &mut s,
            "301 Moved Permanently",
            &[("Location", "/loop".into())],
            b"",
        ),
        "/binary" => {
            let b: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
            respond(
                &mut s,
                "200 OK",
                &[("Content-Type", "application/octet-stream".into())],
                &body_or_none(b),
            )
        }
        "/big" => {
            let b: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
            respond(&mut s, "200 OK", &text, &body_or_none(b))
        }
        "/chunked" => {
            let mut o =
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    .to_vec();
            if !head {
                for piece in [&b"hello "[..], b"chunked ", b"world\n"] {
                    o.extend(format!("{:x}\r\n", piece.len()).bytes());
                    o.extend_from_slice(piece);
                    o.extend_from_slice(b"\r\n");
                }
                o.extend_from_slice(b"0\r\n\r\n");
            }
            s.write_all(&o)
        }
        "/slow" => {
            std::thread::sleep(Duration::from_secs(3));
            respond(&mut s, "200 OK", &text, b"slow\n")
        }
        "/headers" => respond(
            &mut s,
            "200 Fine Thanks",
            &[
                ("X-Custom", "yes".into()),
                ("Content-Type", "text/html; charset=utf-8".into()),
            ],
            &body_or_none(b"<p>hi</p>\n".to_vec()),
        ),
        "/cd" => respond(
            &mut s,
            "200 OK",
            &[(
                "Content-Disposition",
                "attachment; filename=\"named.txt\"".into(),
            )],
            &body_or_none(b"disposition\n".to_vec()),
        ),
        "/empty" => respond(&mut s, "200 OK", &text, b""),
        "/auth" => match req.header("authorization") {
            Some(a) => respond(
                &mut s,
                "200 OK",
                &text,
                &body_or_none(format!("authed {a}\n").into_bytes()),
            ),
            None => respond(
                &mut s,
                "401 Unauthorized",
                &[("WWW-Authenticate", "Basic realm=\"test\"".into())],
                &body_or_none(b"who are you\n".to_vec()),
            ),
        },
        "/gzip" => {
            let gz = gzip(b"compressed body\n");
            let accept = req.header("accept-encoding").unwrap_or("");
            if accept.contains("gzip") {
                respond(
                    &mut s,
                    "200 OK",
                    &[("Content-Encoding", "gzip".into())],
                    &body_or_none(gz),
                )
            } else {
                respond(
                    &mut s,
                    "200 OK",
                    &text,
                    &body_or_none(b"plain body\n".to_vec()),
                )
            }
        }
        _ => respond(
            &mut s,
            "404 Not Found",
            &text,
            &body_or_none(b"not found\n".to_vec()),
        ),
    }
}

/// Gzip bytes made by the system's gzip (no compression crate needed in tests).
fn gzip(data: &[u8]) -> Vec<u8> {
    use std::process::{Command, Stdio};
    let mut c = Command::new("gzip")
        .arg("-nc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(data).unwrap();
    c.wait_with_output().unwrap().stdout
}
