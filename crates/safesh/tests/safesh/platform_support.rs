//! A fake GitHub REST API v3 on 127.0.0.1 for the platform command tests
//! (`platform.rs`): real JSON shapes, `Link` pagination, 401/403/404/422 and
//! rate-limit headers. It checks the token itself (`Authorization: Bearer
//! TOKEN`, else 401 "Bad credentials") and records every raw request, so a
//! test can assert the token arrived in that header and nowhere else.
//!
//! Repository `octo/demo`: 3 pull requests (#3, #2, #1), 3 issues of which
//! one is a pull request. `octo/limited` answers 403 with the rate limit
//! spent; `octo/missing` 404. `POST /repos/octo/demo/issues` creates #7
//! (422 "missing_field" without a title).

#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The token the fake API accepts.
pub const TOKEN: &str = "ghp_platformTestToken0123456789abcdef";
/// The variable the tests' config names for it.
pub const TOKEN_ENV: &str = "GH_PLATFORM_TOKEN";

/// One request as received.
#[derive(Clone, Debug)]
pub struct Hit {
    /// `GET /repos/octo/demo/pulls?state=open&per_page=2`.
    pub method: String,
    /// Path and query.
    pub target: String,
    /// The raw bytes (head and body).
    pub raw: Vec<u8>,
    /// The body.
    pub body: Vec<u8>,
}

/// The fake API.
pub struct GitHub {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
}

impl GitHub {
    /// Starts it on an ephemeral port.
    pub fn start() -> GitHub {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        let hits = Arc::new(Mutex::new(Vec::new()));
        let h = hits.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let h = h.clone();
                std::thread::spawn(move || serve(s, addr, &h));
            }
        });
        GitHub { addr, hits }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }
}

fn serve(mut s: TcpStream, addr: SocketAddr, hits: &Mutex<Vec<Hit>>) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while raw.len() < head_end + len {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let mut first = head.lines().next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let target = first.next().unwrap_or("").to_string();
    let auth = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("authorization")
            .then(|| v.trim().to_string())
    });
    let body = raw[head_end..].to_vec();
    hits.lock().unwrap().push(Hit {
        method: method.clone(),
        target: target.clone(),
        raw: raw.clone(),
        body: body.clone(),
    });
    let base = format!("http://{addr}");
    let (status, extra, v) = if auth.as_deref() != Some(&format!("Bearer {TOKEN}")) {
        (
            401,
            Vec::new(),
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
        )
    } else {
        route(&method, &target, &body, &base)
    };
    let text = v.to_string();
    let reason = match status {
        200 => "OK",
        201 => "Created",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        _ => "Unprocessable Entity",
    };
    let mut resp = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-RateLimit-Limit: 5000\r\n",
        text.len()
    );
    if !extra
        .iter()
        .any(|(k, _): &(String, String)| k == "X-RateLimit-Remaining")
    {
        resp.push_str("X-RateLimit-Remaining: 4999\r\nX-RateLimit-Reset: 1795737600\r\n");
    }
    for (k, val) in extra {
        resp.push_str(&format!("{k}: {val}\r\n"));
    }
    resp.push_str("\r\n");
    resp.push_str(&text);
    let _ = s.write_all(resp.as_bytes());
}

fn user(login: &str) -> Value {
    json!({"login": login, "id": 1, "type": "User", "site_admin": false})
}

fn pr(n: u64, base: &str) -> Value {
    json!({
        "url": format!("{base}/repos/octo/demo/pulls/{n}"),
        "id": 1000 + n,
        "number": n,
        "state": "open",
        "locked": false,
        "title": format!("Change number {n}"),
        "user": user("alice"),
        "body": format!("Body of {n}"),
        "created_at": "2026-11-01T10:00:00Z",
        "updated_at": "2026-11-02T10:00:00Z",
        "draft": n == 2,
        "head": {"ref": format!("feature-{n}"), "sha": "abc"},
        "base": {"ref": "main", "sha": "def"},
        "html_url": format!("https://github.com/octo/demo/pull/{n}"),
        "merged": false,
        "mergeable": true,
        "additions": 10 * n,
        "deletions": n,
        "changed_files": n
    })
}

fn issue(n: u64, is_pr: bool, base: &str) -> Value {
    let mut v = json!({
        "url": format!("{base}/repos/octo/demo/issues/{n}"),
        "id": 2000 + n,
        "number": n,
        "state": "open",
        "title": format!("Issue number {n}"),
        "user": user("bob"),
        "labels": [{"id": 1, "name": "bug", "color": "d73a4a"}],
        "comments": n,
        "created_at": "2026-11-01T10:00:00Z",
        "updated_at": "2026-11-02T10:00:00Z",
        "html_url": format!("https://github.com/octo/demo/issues/{n}"),
        "body": "text"
    });
    if is_pr {
        v["pull_request"] = json!({"url": format!("{base}/repos/octo/demo/pulls/{n}")});
    }
    v
}

fn query(target: &str, key: &str) -> Option<String> {
    let q = target.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.to_string())
    })
}

/// One page of `items` with GitHub's `Link` header.
fn page(target: &str, items: Vec<Value>, base: &str) -> (u16, Vec<(String, String)>, Value) {
    let per: usize = query(target, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let p: usize = query(target, "page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let pages = items.len().div_ceil(per).max(1);
    let path = target.split('?').next().unwrap_or("");
    let state = query(target, "state").unwrap_or_else(|| "open".into());
    let link = |n: usize, rel: &str| {
        format!("<{base}{path}?state={state}&per_page={per}&page={n}>; rel=\"{rel}\"")
    };
    let mut links = Vec::new();
    if p < pages {
        links.push(link(p + 1, "next"));
        links.push(link(pages, "last"));
    }
    if p > 1 {
        links.push(link(1, "first"));
        links.push(link(p - 1, "prev"));
    }
    let slice: Vec<Value> = items.into_iter().skip((p - 1) * per).take(per).collect();
    let extra = if links.is_empty() {
        Vec::new()
    } else {
        vec![("Link".to_string(), links.join(", "))]
    };
    (200, extra, Value::Array(slice))
}

fn route(
    method: &str,
    target: &str,
    body: &[u8],
    base: &str,
) -> (u16, Vec<(String, String)>, Value) {
    let path = target.split('?').next().unwrap_or("");
    let not_found =
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"});
    match (method, path) {
        ("GET", "/repos/octo/demo") => (
            200,
            Vec::new(),
            json!({
                "id": 1,
                "name": "demo",
                "full_name": "octo/demo",
                "private": false,
                "owner": user("octo"),
                "html_url": "https://github.com/octo/demo",
                "description": "A demo repository",
                "fork": false,
                "clone_url": "https://github.com/octo/demo.git",
                "stargazers_count": 42,
                "forks_count": 7,
                "open_issues_count": 5,
                "language": "Rust",
                "topics": ["shell", "agents"],
                "default_branch": "main",
                "archived": false,
                "updated_at": "2026-11-20T08:00:00Z"
            }),
        ),
        ("GET", "/repos/octo/limited") => (
            403,
            vec![
                ("X-RateLimit-Remaining".to_string(), "0".to_string()),
                ("X-RateLimit-Reset".to_string(), "1795737600".to_string()),
            ],
            json!({"message": "API rate limit exceeded for user ID 1.", "documentation_url": "https://docs.github.com/rest/rate-limit"}),
        ),
        ("GET", "/repos/octo/demo/pulls") => {
            page(target, (1..=3).rev().map(|n| pr(n, base)).collect(), base)
        }
        ("GET", p) if p.starts_with("/repos/octo/demo/pulls/") => {
            match p.rsplit('/').next().and_then(|n| n.parse::<u64>().ok()) {
                Some(n @ 1..=3) => (200, Vec::new(), pr(n, base)),
                _ => (404, Vec::new(), not_found),
            }
        }
        ("GET", "/repos/octo/demo/issues") => page(
            target,
            vec![
                issue(6, false, base),
                issue(5, true, base),
                issue(4, false, base),
            ],
            base,
        ),
        ("POST", "/repos/octo/demo/issues") => {
            let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let title = v["title"].as_str().unwrap_or("");
            if title.is_empty() {
                return (
                    422,
                    Vec::new(),
                    json!({"message": "Validation Failed", "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}], "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue"}),
                );
            }
            let mut i = issue(7, false, base);
            i["title"] = json!(title);
            i["body"] = v["body"].clone();
            i["comments"] = json!(0);
            (201, Vec::new(), i)
        }
        _ => (404, Vec::new(), not_found),
    }
}
