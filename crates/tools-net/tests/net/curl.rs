//! curl: ours against the real curl, same server, same command lines.

use crate::diff::check;
use crate::server::{Server, closed_port};
use safesh_utils::UtilFn;

fn curl_fn() -> UtilFn {
    safesh_tools_net::UTILS
        .iter()
        .find(|(n, _)| *n == "curl")
        .map(|(_, f)| *f)
        .unwrap()
}

fn same(srv: &Server, args: &[&str]) -> i32 {
    same_with(srv, args, b"", &[])
}

fn same_with(srv: &Server, args: &[&str], stdin: &[u8], files: &[(&str, &[u8])]) -> i32 {
    let mut argv = vec!["curl"];
    argv.extend_from_slice(args);
    check(curl_fn(), srv, &argv, stdin, files).0.status
}

#[test]
fn get_and_bodies() {
    let s = Server::start();
    assert_eq!(same(&s, &["-s", "%S/echo/a?x=1"]), 0);
    same(&s, &["-s", "%S/binary"]);
    same(&s, &["-s", "%S/big"]);
    same(&s, &["-s", "%S/chunked"]);
    same(&s, &["-s", "%S/empty"]);
    same(&s, &["-sS", "--url", "%S/echo/url"]);
    same(&s, &["-s", "%S/echo/1", "%S/echo/2"]);
    same(
        &s,
        &["-s", "-w", "[%{http_code}]", "%S/echo/1", "%S/status/404"],
    );
    same(&s, &["-s", "-f", "%S/status/404", "%S/echo/2"]);
    let tls = format!("https://127.0.0.1:{}/", s.port);
    same(&s, &["-s", &tls]);
    same(&s, &["-s", "-k", &tls]);
    // No scheme: http is assumed.
    let no_scheme = format!("127.0.0.1:{}/echo/noscheme", s.port);
    same(&s, &["-s", &no_scheme]);
    let userinfo = format!("http://us%20er:p%40ss@127.0.0.1:{}/echo/ui", s.port);
    same(&s, &["-s", "-w", "%{url_effective}", &userinfo]);
}

#[test]
fn status_and_fail() {
    let s = Server::start();
    assert_eq!(same(&s, &["-s", "%S/status/404"]), 0);
    assert_eq!(same(&s, &["-s", "-f", "%S/status/404"]), 22);
    assert_eq!(same(&s, &["-sS", "--fail", "%S/status/500"]), 22);
    assert_eq!(same(&s, &["-s", "--fail-with-body", "%S/status/404"]), 22);
    assert_eq!(same(&s, &["-s", "-f", "%S/status/204"]), 0);
    same(&s, &["-s", "-f", "-w", "%{http_code}\\n", "%S/status/403"]);
}

#[test]
fn include_and_head() {
    let s = Server::start();
    same(&s, &["-s", "-i", "%S/headers"]);
    same(&s, &["-s", "-I", "%S/headers"]);
    same(&s, &["-s", "--head", "%S/status/404"]);
    same(&s, &["-s", "-i", "-L", "%S/redirect/302?to=/headers"]);
    same(&s, &["-s", "-i", "-f", "%S/status/404"]);
    same(&s, &["-s", "-i", "%S/chunked"]);
    same(&s, &["-s", "-I", "-L", "%S/chain/2"]);
    same(&s, &["-s", "-X", "HEAD", "-m", "5", "%S/empty"]);
}

#[test]
fn redirects() {
    let s = Server::start();
    for code in ["301", "302", "303", "307", "308"] {
        let url = format!("%S/redirect/{code}?to=/echo/done");
        same(&s, &["-s", &url]);
        same(&s, &["-s", "-L", &url]);
        same(&s, &["-s", "-L", "-d", "payload", &url]);
        same(&s, &["-s", "-L", "-T", "up.txt", &url][..]);
    }
    same(&s, &["-s", "-L", "%S/chain/5"]);
    same(
        &s,
        &[
            "-s",
            "-L",
            "-w",
            "%{num_redirects} %{url_effective}\\n",
            "%S/chain/3",
        ],
    );
    assert_eq!(
        same(&s, &["-s", "-L", "--max-redirs", "2", "%S/chain/5"]),
        47
    );
    assert_eq!(same(&s, &["-s", "-L", "--max-redirs", "3", "%S/loop"]), 47);
    same(
        &s,
        &["-s", "-w", "%{redirect_url}\\n", "%S/redirect/302?to=/x/y"],
    );
    let abs = format!("%S/redirect/307?to=http://127.0.0.1:{}/echo/abs", s.port);
    same(&s, &["-s", "-L", "-X", "PUT", "-d", "z", &abs]);
    same(
        &s,
        &[
            "-s",
            "-L",
            "-X",
            "POST",
            "-d",
            "z",
            "%S/redirect/302?to=/echo/x",
        ],
    );
    same(&s, &["-s", "-L", "-I", "%S/redirect/303?to=/echo/h"]);
    same(&s, &["-s", "-L", "-u", "u:p", "-w", "%{method}", &abs]);
    // Credentials do not follow a redirect to another host.
    let other = format!("%S/redirect/302?to=http://localhost:{}/echo/other", s.port);
    same(
        &s,
        &[
            "-s",
            "-L",
            "-u",
            "u:p",
            "-b",
            "k=v",
            "-H",
            "X-Keep: 1",
            &other,
        ],
    );
    same(&s, &["-s", "-L", "-H", "Authorization: Bearer t", &other]);
}

#[test]
fn data_options() {
    let s = Server::start();
    let files: &[(&str, &[u8])] = &[
        ("d.txt", b"line1\r\nline2\nend"),
        ("bin", b"\x00\x01\xff\n"),
        ("j.json", b"{\"k\": 1}"),
    ];
    let cases: &[&[&str]] = &[
        &["-s", "-d", "a=1", "-d", "b=2", "%S/echo"],
        &["-s", "--data", "@d.txt", "%S/echo"],
        &["-s", "--data-ascii", "x y", "%S/echo"],
        &["-s", "--data-binary", "@d.txt", "%S/echo"],
        &["-s", "--data-binary", "@bin", "%S/echo"],
        &["-s", "--data-raw", "@d.txt", "%S/echo"],
        &["-s", "--data-urlencode", "name=a b&c", "%S/echo"],
        &["-s", "--data-urlencode", "=x/y", "%S/echo"],
        &["-s", "--data-urlencode", "plain text", "%S/echo"],
        &["-s", "--data-urlencode", "f@d.txt", "%S/echo"],
        &["-s", "-G", "-d", "q=1", "-d", "r=2", "%S/echo?a=0"],
        &["-s", "--get", "--data-urlencode", "q=a b", "%S/echo"],
        &["-s", "--json", "{\"a\":1}", "%S/echo"],
        &["-s", "--json", "@j.json", "%S/echo"],
        &["-s", "-d", "@missing", "%S/echo"],
        &["-s", "-d", "", "%S/echo"],
        &["-s", "-X", "PATCH", "-d", "p", "%S/echo"],
        &["-s", "--request", "DELETE", "%S/echo"],
        &["-s", "-H", "Content-Type: text/x", "-d", "c", "%S/echo"],
    ];
    for c in cases {
        same_with(&s, c, b"", files);
    }
    same_with(&s, &["-s", "-d", "@-", "%S/echo"], b"from\nstdin", &[]);
    // Big enough for curl's `Expect: 100-continue`.
    let big: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    same_with(
        &s,
        &["-s", "--data-binary", "@big", "%S/echo"],
        b"",
        &[("big", &big)],
    );
    same_with(
        &s,
        &["-s", "--data-binary", "@-", "%S/echo"],
        b"from\nstdin",
        &[],
    );
    assert_eq!(
        same_with(&s, &["-s", "-d", "x", "-F", "a=b", "%S/echo"], b"", &[]),
        2
    );
    assert_eq!(
        same_with(&s, &["-s", "-I", "-d", "x", "%S/echo"], b"", &[]),
        2
    );
}

#[test]
fn forms_and_uploads() {
    let s = Server::start();
    let files: &[(&str, &[u8])] = &[("f.txt", b"file text\n"), ("raw", b"\x00raw")];
    let cases: &[&[&str]] = &[
        &["-s", "-F", "a=b", "-F", "c=d", "%S/echo"],
        &["-s", "-F", "up=@f.txt", "%S/echo"],
        &["-s", "-F", "up=@raw;type=text/weird", "%S/echo"],
        &["-s", "-F", "up=@f.txt;filename=other.bin", "%S/echo"],
        &["-s", "-F", "v=<f.txt", "%S/echo"],
        &["-s", "--form-string", "s=@notafile", "%S/echo"],
        &["-s", "-T", "f.txt", "%S/echo/put"],
        &["-s", "-T", "f.txt", "%S/echo/dir/"],
        &["-s", "-X", "POST", "-T", "raw", "%S/echo"],
    ];
    for c in cases {
        same_with(&s, c, b"", files);
    }
    assert_eq!(
        same_with(&s, &["-s", "-F", "a=@missing", "%S/echo"], b"", &[]),
        26
    );
    assert_eq!(
        same_with(&s, &["-s", "-T", "missing", "%S/echo"], b"", &[]),
        26
    );
}

#[test]
fn headers_and_identity() {
    let s = Server::start();
    let files: &[(&str, &[u8])] = &[("h.txt", b"X-From-File: 1\nX-Two: 2\n")];
    let cases: &[&[&str]] = &[
        &["-s", "-H", "X-A: 1", "-H", "X-B: two words", "%S/echo"],
        &["-s", "-H", "User-Agent:", "%S/echo"],
        &["-s", "-H", "User-Agent: mine", "%S/echo"],
        &["-s", "-H", "X-Empty;", "%S/echo"],
        &["-s", "-H", "@h.txt", "%S/echo"],
        &["-s", "-H", "Host: example.test", "%S/echo"],
        &["-s", "-A", "agent/1", "%S/echo"],
        &["-s", "-u", "bob:secret", "%S/echo"],
        &["-s", "-u", "bob", "%S/echo"],
        &["-s", "-e", "http://ref/", "%S/echo"],
        &["-s", "-b", "a=b; c=d", "%S/echo"],
        &["-s", "--user-agent", "", "%S/echo"],
    ];
    for c in cases {
        same_with(&s, c, b"", files);
    }
}

#[test]
fn outputs() {
    let s = Server::start();
    same(&s, &["-s", "-o", "out.txt", "%S/echo/o"]);
    same(&s, &["-s", "-o", "-", "%S/echo/o"]);
    same(&s, &["-s", "-O", "%S/echo/remote.txt"]);
    same(&s, &["-s", "--remote-name", "%S/binary"]);
    same(&s, &["-s", "-o", "a", "-o", "b", "%S/echo/1", "%S/echo/2"]);
    same(&s, &["-s", "--create-dirs", "-o", "d1/d2/f", "%S/echo/cd"]);
    same(&s, &["-s", "-i", "-o", "withhead", "%S/headers"]);
    same(&s, &["-s", "-o", "e", "%S/empty"]);
    same(&s, &["-s", "-f", "-o", "nf", "%S/status/404"]);
    same(&s, &["-s", "-o", "big", "%S/big"]);
    assert_eq!(same(&s, &["-s", "-O", "%S/"]), 23);
    assert_eq!(same(&s, &["-s", "-o", "no/such/dir/f", "%S/echo"]), 23);
}

#[test]
fn write_out() {
    let s = Server::start();
    let files: &[(&str, &[u8])] = &[("fmt", b"code=%{http_code}\\n")];
    let fmt = "%{http_code} %{response_code} %{size_download} %{url_effective} \
               %{content_type} %{num_redirects} %{redirect_url} %{method} %{exitcode} \
               [%{errormsg}] 100%% \\t\\n";
    same(&s, &["-s", "-w", fmt, "%S/headers"]);
    same(&s, &["-s", "-w", fmt, "-d", "x", "%S/echo"]);
    same(&s, &["-s", "-w", fmt, "%S/redirect/301?to=/echo"]);
    same(&s, &["-s", "-L", "-w", fmt, "%S/redirect/303?to=/echo"]);
    same(
        &s,
        &[
            "-s",
            "-o",
            "x",
            "--write-out",
            "%{size_download}\\n",
            "%S/big",
        ],
    );
    same_with(&s, &["-s", "-w", "@fmt", "%S/echo"], b"", files);
    same(&s, &["-s", "-w", "%{nonsense}|\\n", "%S/echo"]);
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    same(
        &s,
        &[
            "-s",
            "-w",
            "%{http_code} %{exitcode} %{url_effective}\\n",
            &closed,
        ],
    );
}

#[test]
fn errors_and_options() {
    let s = Server::start();
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    assert_eq!(same(&s, &["-s", &closed]), 7);
    assert_eq!(same(&s, &["-sS", &closed]), 7);
    let closed_tls = format!("https://127.0.0.1:{}/", closed_port());
    assert_eq!(same(&s, &["-s", &closed_tls]), 7);
    assert_eq!(same(&s, &["-s", "http://nonexistent.invalid/"]), 6);
    assert_eq!(same(&s, &["-s", "http://"]), 3);
    assert_eq!(same(&s, &["-s", "ht tp://x"]), 3);
    assert_eq!(same(&s, &["-s", "foo://bar"]), 1);
    assert_eq!(same(&s, &["--bogus", "%S/echo"]), 2);
    assert_eq!(same(&s, &["-s", "-o"]), 2);
    assert_eq!(same(&s, &[]), 2);
    assert_eq!(same(&s, &["-s", "-m", "1", "%S/slow"]), 28);
    same(&s, &["-s", "--connect-timeout", "5", "%S/echo"]);
    same(&s, &["-s", "-k", "%S/echo"]);
    same(&s, &["-s", "--compressed", "%S/gzip"]);
    same(&s, &["-s", "%S/gzip"]);
    same(
        &s,
        &[
            "-s",
            "-i",
            "--compressed",
            "-w",
            "%{size_download}",
            "%S/gzip",
        ],
    );
    same(&s, &["-s", "-#", "%S/echo"]);
    same(&s, &["-s", "-v", "%S/echo"]);
    same(&s, &["-s", "--retry", "1", "%S/echo"]);
    same(&s, &["-s", "--no-location", "%S/redirect/302?to=/echo"]);
    same(
        &s,
        &["--no-progress-meter", "-N", "-g", "--http1.1", "%S/echo"],
    );
    same(
        &s,
        &[
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "%S/status/201",
        ],
    );
    same(&s, &["-fsSL", "%S/redirect/308?to=/echo/fssl"]);
    // Transient statuses are retried (after 1 s), then the last answer stands.
    assert_eq!(same(&s, &["-s", "-f", "--retry", "1", "%S/status/503"]), 22);
}

#[test]
fn help_and_version() {
    let s = Server::start();
    same(&s, &["-h"]);
    let out = safesh_utils::testing::run_util(
        curl_fn(),
        &["curl", "-V"],
        b"",
        std::path::Path::new("/"),
        &[],
    );
    assert_eq!(out.status, 0);
    assert!(out.out().contains("safesh"));
}

/// A real TLS server (`openssl s_server -www`, self-signed): certificate errors are
/// 60 like curl's, `-k` gets through. Skipped with a reason without openssl.
#[test]
fn tls_with_openssl_server() {
    use std::process::{Command, Stdio};
    let d = tempfile::tempdir().unwrap();
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "k.pem",
            "-out",
            "c.pem",
            "-days",
            "1",
        ])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: openssl is not available to make a test certificate");
        return;
    }
    let port = closed_port();
    let mut server = Command::new("openssl")
        .args([
            "s_server", "-quiet", "-www", "-cert", "c.pem", "-key", "k.pem",
        ])
        .args(["-accept", &format!("127.0.0.1:{port}")])
        .current_dir(d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) until it listens.
    for _ in 0..50 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let url = format!("https://localhost:{port}/");
    let run = |args: &[&str]| {
        let mut argv = vec!["curl"];
        argv.extend_from_slice(args);
        argv.push(&url);
        let ours = safesh_utils::testing::run_util(curl_fn(), &argv, b"", d.path(), &[]);
        let real = safesh_utils::testing::run_real(&argv, b"", d.path());
        (ours, real)
    };
    let (ours, real) = run(&["-s", "-o", "/dev/null"]);
    let (ours_k, real_k) = run(&["-sk", "-w", "%{http_code}", "-o", "/dev/null"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(ours.status, 60);
    assert_eq!(ours.status, real.status);
    assert_eq!(
        ours_k.status,
        0,
        "{}",
        String::from_utf8_lossy(&ours_k.stderr)
    );
    assert_eq!(ours_k.stdout, real_k.stdout);
    assert_eq!(ours_k.out(), "200");
}
