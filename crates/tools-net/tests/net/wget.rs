//! wget: ours against the real wget (skipped, with a reason, when it is missing).

use crate::diff::check;
use crate::server::{Server, closed_port};
use safesh_utils::UtilFn;

fn wget_fn() -> UtilFn {
    safesh_tools_net::UTILS
        .iter()
        .find(|(n, _)| *n == "wget")
        .map(|(_, f)| *f)
        .unwrap()
}

fn have_wget() -> bool {
    let ok = std::process::Command::new("wget")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: real wget is not installed here (apt-get install wget)");
    }
    ok
}

fn same(srv: &Server, args: &[&str], files: &[(&str, &[u8])]) -> i32 {
    let mut argv = vec!["wget"];
    argv.extend_from_slice(args);
    check(wget_fn(), srv, &argv, b"", files).0.status
}

#[test]
fn downloads_and_names() {
    if !have_wget() {
        return;
    }
    let s = Server::start();
    assert_eq!(same(&s, &["-q", "%S/echo/file.txt"], &[]), 0);
    same(&s, &["-q", "%S/echo/file.txt"], &[("file.txt", b"old")]);
    same(
        &s,
        &["-q", "%S/echo/f"],
        &[("f", b"old"), ("f.1", b"older")],
    );
    same(&s, &["-q", "%S/echo/"], &[]);
    same(&s, &["-q", "%S/echo/a?x=1"], &[]);
    same(&s, &["-q", "-O", "-", "%S/echo/stdout"], &[]);
    same(&s, &["-qO-", "%S/binary"], &[]);
    same(&s, &["-q", "-O", "out", "%S/echo/1", "%S/echo/2"], &[]);
    same(&s, &["-q", "-P", "sub/dir", "%S/echo/f"], &[]);
    same(&s, &["-q", "%S/big"], &[]);
    same(&s, &["-q", "%S/chunked"], &[]);
    same(&s, &["-q", "%S/empty"], &[]);
    same(&s, &["-q", "-S", "%S/headers"], &[]);
    same(&s, &["-q", "--output-document=o2", "%S/echo"], &[]);
}

#[test]
fn requests() {
    if !have_wget() {
        return;
    }
    let s = Server::start();
    let files: &[(&str, &[u8])] = &[("d.txt", b"file\r\ndata\n")];
    let cases: &[&[&str]] = &[
        &["-q", "-O-", "--post-data", "a=1&b=2", "%S/echo"],
        &["-q", "-O-", "--post-file", "d.txt", "%S/echo"],
        &[
            "-q",
            "-O-",
            "--method",
            "PUT",
            "--body-data",
            "x",
            "%S/echo",
        ],
        &["-q", "-O-", "--method=DELETE", "%S/echo"],
        &[
            "-q",
            "-O-",
            "--header",
            "X-A: 1",
            "--header=Accept: text/x",
            "%S/echo",
        ],
        &["-q", "-O-", "-U", "agent/2", "%S/echo"],
        &["-q", "-O-", "--user", "bob", "--password", "pw", "%S/auth"],
        &[
            "-q",
            "-O-",
            "--user=bob",
            "--password=pw",
            "--auth-no-challenge",
            "%S/echo",
        ],
        &["-q", "-O-", "%S/auth"],
    ];
    for c in cases {
        same(&s, c, files);
    }
}

#[test]
fn redirects() {
    if !have_wget() {
        return;
    }
    let s = Server::start();
    for code in ["301", "302", "303", "307", "308"] {
        let url = format!("%S/redirect/{code}?to=/echo/r");
        same(&s, &["-q", &url], &[]);
        same(&s, &["-q", "-O-", "--post-data", "x", &url], &[]);
    }
    same(&s, &["-q", "-O-", "%S/chain/4"], &[]);
    assert_eq!(
        same(&s, &["-q", "-O-", "--max-redirect", "2", "%S/chain/5"], &[]),
        8
    );
}

#[test]
fn errors() {
    if !have_wget() {
        return;
    }
    let s = Server::start();
    assert_eq!(same(&s, &["-q", "%S/status/404"], &[]), 8);
    assert_eq!(same(&s, &["-q", "-O", "o", "%S/status/500"], &[]), 8);
    assert_eq!(
        same(&s, &["-q", "--content-on-error", "%S/status/404"], &[]),
        8
    );
    assert_eq!(
        same(
            &s,
            &["-q", "-O-", "--content-on-error", "%S/status/403"],
            &[]
        ),
        8
    );
    assert_eq!(same(&s, &["-q", "%S/echo/ok", "%S/status/404"], &[]), 8);
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    assert_eq!(same(&s, &["-q", &closed], &[]), 4);
    assert_eq!(same(&s, &["-q", "http://nonexistent.invalid/"], &[]), 4);
    assert_eq!(same(&s, &["-q", "-t", "1", "-T", "1", "%S/slow"], &[]), 4);
    assert_eq!(same(&s, &["--bogus"], &[]), 2);
    assert_eq!(same(&s, &[], &[]), 1);
    assert_eq!(same(&s, &["-q", "foo://x"], &[]), 1);
    assert_eq!(
        same(&s, &["-q", "--post-file", "missing", "%S/echo"], &[]),
        3
    );
}
