//! Just enough HTTP/1.x for a proxy: read a bounded request head, parse the request
//! line and header lines, rewrite an absolute-form request to origin-form.

use std::io::{self, Read, Write};

use crate::allow::{Host, parse_authority};
use crate::error::RequestError;

/// The largest request head (request line and headers) the proxy reads.
pub const MAX_HEAD: usize = 64 * 1024;

/// A request head read from the client, plus any bytes read past its end (the start
/// of a body or of tunneled data), which must be forwarded.
pub(crate) struct Head {
    pub bytes: Vec<u8>,
    pub rest: Vec<u8>,
}

/// Reads until the blank line that ends the head (at most [`MAX_HEAD`] bytes).
/// `first` is the byte already read (to tell HTTP from SOCKS).
pub(crate) fn read_head(r: &mut impl Read, first: u8) -> Result<Head, HeadError> {
    let mut buf = Vec::with_capacity(1024);
    buf.push(first);
    let mut chunk = [0u8; 4096];
    let mut scanned = 0;
    loop {
        if let Some(end) = find_end(&buf, scanned) {
            let rest = buf.split_off(end);
            return Ok(Head { bytes: buf, rest });
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::Request(RequestError::TooLarge));
        }
        scanned = buf.len().saturating_sub(3);
        let want = chunk.len().min(MAX_HEAD + 4 - buf.len());
        let n = match r.read(&mut chunk[..want]) {
            Ok(0) => return Err(HeadError::Request(RequestError::Bad("incomplete request"))),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(HeadError::Io(e)),
        };
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Failure to read a head: the client's fault (answered) or the connection's (not).
pub(crate) enum HeadError {
    Request(RequestError),
    Io(io::Error),
}

/// Index just past the `\r\n\r\n` (or `\n\n`) that ends the head, searching from `from`.
fn find_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf[i + 1..].starts_with(b"\r\n") {
                return Some(i + 3);
            }
            if buf[i + 1..].starts_with(b"\n") {
                return Some(i + 2);
            }
        }
        i += 1;
    }
    None
}

/// A parsed request head.
pub(crate) struct Request<'a> {
    pub method: &'a str,
    pub target: &'a str,
    pub version: &'a str,
    /// Header lines (without line ends), each `name: value`, name checked.
    pub headers: Vec<&'a [u8]>,
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

pub(crate) fn parse(head: &[u8]) -> Result<Request<'_>, RequestError> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let line = lines.next().unwrap_or_default();
    let line =
        std::str::from_utf8(line).map_err(|_| RequestError::Bad("request line is not text"))?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(RequestError::Bad("malformed request line"));
    };
    if !is_token(method.as_bytes()) {
        return Err(RequestError::Bad("malformed method"));
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(RequestError::Bad("malformed request target"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(RequestError::Bad(
            "only HTTP/1.0 and HTTP/1.1 are supported",
        ));
    }
    let mut headers = Vec::new();
    for l in lines {
        if l.is_empty() {
            continue; // the final blank line(s)
        }
        let colon = l
            .iter()
            .position(|&b| b == b':')
            .ok_or(RequestError::Bad("malformed header line"))?;
        if !is_token(&l[..colon]) {
            return Err(RequestError::Bad("malformed header name"));
        }
        if l.iter().any(|&b| b == b'\r' || b == 0) {
            return Err(RequestError::Bad("control character in a header"));
        }
        headers.push(l);
    }
    Ok(Request {
        method,
        target,
        version,
        headers,
    })
}

/// An absolute-form `http://` target split into where to connect and what to send.
pub(crate) struct AbsoluteTarget<'a> {
    pub host: Host,
    pub port: u16,
    /// The authority as written (for the `Host` header).
    pub authority: &'a str,
    /// Origin-form: `/path?query`.
    pub path: String,
}

pub(crate) fn parse_absolute(target: &str) -> Result<AbsoluteTarget<'_>, RequestError> {
    let scheme_end = target.find("://").ok_or(RequestError::Bad(
        "not a proxy request (expected an absolute http:// URL)",
    ))?;
    let scheme = &target[..scheme_end];
    if scheme.eq_ignore_ascii_case("https") {
        return Err(RequestError::Bad("https URLs go through CONNECT"));
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(RequestError::Bad("only http:// URLs are supported"));
    }
    let rest = &target[scheme_end + 3..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let (host, port) = parse_authority(authority, Some(80))?;
    let tail = &rest[auth_end..];
    let tail = tail.split('#').next().unwrap_or_default();
    let path = if tail.starts_with('/') {
        tail.to_string()
    } else {
        format!("/{tail}")
    };
    Ok(AbsoluteTarget {
        host,
        port,
        authority,
        path,
    })
}

/// Headers not passed on to the origin (hop-by-hop, or for the proxy only).
fn dropped(line: &[u8]) -> bool {
    let name = line.split(|&b| b == b':').next().unwrap_or_default();
    [
        "host",
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h.as_bytes()))
}

/// The origin-form head to send to the origin: `Host` set to the URL's authority,
/// hop-by-hop headers dropped, `Connection: close`.
pub(crate) fn origin_head(req: &Request<'_>, t: &AbsoluteTarget<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_HEAD.min(1024));
    out.extend_from_slice(format!("{} {} {}\r\n", req.method, t.path, req.version).as_bytes());
    out.extend_from_slice(format!("Host: {}\r\n", t.authority).as_bytes());
    for h in req.headers.iter().filter(|h| !dropped(h)) {
        out.extend_from_slice(h);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// Writes a short response whose body is one line.
pub(crate) fn respond(w: &mut impl Write, status: u16, reason: &str, body: &str) -> io::Result<()> {
    let body = format!("{body}\n");
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    w.write_all(msg.as_bytes())?;
    w.flush()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn head_end_and_rest() {
        let mut r: &[u8] = b"ET / HTTP/1.1\r\nA: b\r\n\r\nbody";
        let h = read_head(&mut r, b'G').ok().unwrap();
        assert_eq!(h.bytes, b"GET / HTTP/1.1\r\nA: b\r\n\r\n");
        assert_eq!(h.rest, b"body");
        let mut r: &[u8] = b"ET / HTTP/1.1\nA: b\n\nx";
        let h = read_head(&mut r, b'G').ok().unwrap();
        assert_eq!(h.rest, b"x");
    }

    #[test]
    fn rewrite_to_origin_form() {
        let head = b"GET http://Example.com:8080/a?b=1 HTTP/1.1\r\nHost: evil\r\n\
            Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        let req = parse(head).unwrap();
        let t = parse_absolute(req.target).unwrap();
        assert_eq!(t.port, 8080);
        let out = origin_head(&req, &t);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "GET /a?b=1 HTTP/1.1\r\nHost: Example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let t = parse_absolute("http://h.com?q").unwrap();
        assert_eq!(t.path, "/?q");
        assert_eq!(t.port, 80);
    }

    /// Mutated requests never panic the parser (a tiny deterministic fuzz).
    #[test]
    fn mutations_never_panic() {
        let seeds: [&[u8]; 3] = [
            b"GET http://[::1]:80/a?b HTTP/1.1\r\nHost: x\r\n\r\n",
            b"CONNECT a.b:443 HTTP/1.0\r\n\r\n",
            b"POST http://h\xc3\xa9.com/ HTTP/1.1\r\nA:b\n\n",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = b" :/[]@?#%\r\n\x00\xff\xc3.0123456789abcHTP";
        for _ in 0..20_000 {
            let mut m = seeds[(next() % 3) as usize].to_vec();
            for _ in 0..(next() % 4 + 1) {
                let i = (next() % m.len() as u64) as usize;
                let c = alphabet[(next() % alphabet.len() as u64) as usize];
                match next() % 3 {
                    0 => m[i] = c,
                    1 => m.insert(i, c),
                    _ => {
                        m.remove(i);
                    }
                }
                if m.is_empty() {
                    m.push(b'G');
                }
            }
            let mut r = &m[1..];
            if let Ok(h) = read_head(&mut r, m[0])
                && let Ok(req) = parse(&h.bytes)
            {
                let _ = crate::allow::parse_authority(req.target, None);
                if let Ok(t) = parse_absolute(req.target) {
                    let _ = origin_head(&req, &t);
                }
            }
        }
    }

    #[test]
    fn malformed() {
        for h in [
            &b"GET\r\n\r\n"[..],
            b"GET  / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/2\r\n\r\n",
            b"G(T / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\n folded: x\r\n\r\n",
            b"\xff / HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(h).is_err(), "{}", String::from_utf8_lossy(h));
        }
        for t in ["/", "ftp://h/", "https://h/", "http://u@h/", "http:///"] {
            assert!(parse_absolute(t).is_err(), "{t}");
        }
    }
}
