//! Runs one command line through our utility and the real tool against the same
//! server, and compares stdout, status, files written and what the server received.

use crate::server::{Received, Server};
use safesh_utils::UtilFn;
use safesh_utils::testing::{Output, run_real, run_util};
use std::collections::BTreeMap;
use std::path::Path;

/// Replaces curl-style multipart boundaries (24 dashes and 16 hex digits), which
/// are random, with a fixed word.
pub fn norm_boundary(b: &[u8]) -> Vec<u8> {
    let pat = b"------------------------";
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(pat) {
            let rest = &b[i + pat.len()..];
            let hex = rest.iter().take_while(|c| c.is_ascii_hexdigit()).count();
            if hex == 16 {
                out.extend_from_slice(b"BOUNDARY");
                i += pat.len() + 16;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// What the server received, comparable: headers sorted, boundaries and the
/// Expect header (curl's 100-continue for big bodies) removed.
type Seen = (String, String, Vec<(String, String)>, Vec<u8>);

fn norm(rs: Vec<Received>) -> Vec<Seen> {
    rs.into_iter()
        .map(|r| {
            let mut h: Vec<(String, String)> = r
                .headers
                .into_iter()
                .filter(|(n, _)| n != "expect")
                // We offer only the encodings we decode (DIFFERENCES.md).
                .map(|(n, v)| match (n.as_str(), v.as_str()) {
                    ("accept-encoding", "deflate, gzip, br, zstd") => (n, "deflate, gzip".into()),
                    _ => (n, v),
                })
                .map(|(n, v)| {
                    (
                        n,
                        String::from_utf8_lossy(&norm_boundary(v.as_bytes())).into_owned(),
                    )
                })
                .collect();
            h.sort();
            (r.method, r.target, h, norm_boundary(&r.body))
        })
        .collect()
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    fn walk(base: &Path, d: &Path, m: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                m.insert(format!("{rel}/"), Vec::new());
                walk(base, &p, m);
            } else {
                m.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    walk(dir, dir, &mut m);
    m
}

/// Both runs' outputs (ours, real) after asserting they agree.
pub fn check(
    f: UtilFn,
    srv: &Server,
    argv: &[&str],
    stdin: &[u8],
    inputs: &[(&str, &[u8])],
) -> (Output, Output) {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for (n, c) in inputs {
        std::fs::write(a.path().join(n), c).unwrap();
        std::fs::write(b.path().join(n), c).unwrap();
    }
    let argv: Vec<String> = argv.iter().map(|s| s.replace("%S", &srv.base())).collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    srv.take();
    let ours = run_util(f, &argv, stdin, a.path(), &[]);
    let got = norm(srv.take());
    let real = run_real(&argv, stdin, b.path());
    let want = norm(srv.take());
    let ctx = format!(
        "{argv:?}\nours stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&norm_boundary(&ours.stdout)),
        String::from_utf8_lossy(&norm_boundary(&real.stdout)),
        "stdout: {ctx}"
    );
    assert_eq!(ours.status, real.status, "status: {ctx}");
    assert_eq!(got, want, "server received: {ctx}");
    assert_eq!(files(a.path()), files(b.path()), "files: {ctx}");
    (ours, real)
}
