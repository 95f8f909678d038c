//! The egress proxy against real servers on 127.0.0.1, through its unix socket and
//! through the loopback forwarder, and with real `curl`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use safesh_egress::{Forwarder, Proxy, forward_loopback};

const T: Option<Duration> = Some(Duration::from_secs(10));

/// A minimal HTTP server: records each request head (and body, by Content-Length)
/// and answers `hello <target>` (or `got <body>` for a body).
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn http_server() -> Server {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let s = Arc::clone(&s);
            thread::spawn(move || {
                c.set_read_timeout(T).unwrap();
                let mut buf = Vec::new();
                let mut b = [0u8; 1];
                while !buf.ends_with(b"\r\n\r\n") {
                    if c.read(&mut b).unwrap_or(0) == 0 {
                        return;
                    }
                    buf.push(b[0]);
                }
                let head = String::from_utf8_lossy(&buf).to_string();
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                let mut body = vec![0u8; len];
                c.read_exact(&mut body).unwrap();
                s.lock().unwrap().push(head.clone());
                let target = head.split(' ').nth(1).unwrap_or("").to_string();
                let answer = if len > 0 {
                    format!("got {}", String::from_utf8_lossy(&body))
                } else {
                    format!("hello {target}")
                };
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    Server { port, seen }
}

/// Echoes every byte back until the client closes its side.
fn echo_server() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&count);
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            n.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || {
                let mut r = c.try_clone().unwrap();
                std::io::copy(&mut r, &mut c).ok();
                c.shutdown(Shutdown::Write).ok();
            });
        }
    });
    (port, count)
}

fn unix(p: &Proxy) -> UnixStream {
    let s = UnixStream::connect(p.socket_path()).unwrap();
    s.set_read_timeout(T).unwrap();
    s
}

/// Sends `req` through the proxy's unix socket; returns the whole answer.
fn exchange(p: &Proxy, req: &[u8]) -> String {
    let mut s = unix(p);
    s.write_all(req).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).to_string()
}

fn proxy(allowed: &[&str]) -> Proxy {
    Proxy::start(allowed.iter().map(|s| s.to_string()).collect()).unwrap()
}

/// Reads a CONNECT answer head byte by byte (so no tunneled byte is consumed).
fn read_head(s: &mut impl Read) -> String {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).unwrap() == 0 {
            break;
        }
        buf.push(b[0]);
    }
    String::from_utf8(buf).unwrap()
}

#[test]
fn plain_http_to_an_allowed_host_is_forwarded_in_origin_form() {
    let srv = http_server();
    let p = proxy(&["127.0.0.1"]);
    let url = format!("http://127.0.0.1:{}/hello?x=1", srv.port);
    let out = exchange(
        &p,
        format!("GET {url} HTTP/1.1\r\nHost: elsewhere\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n")
            .as_bytes(),
    );
    assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
    assert!(out.ends_with("hello /hello?x=1"), "{out}");
    let seen = srv.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [format!(
            "GET /hello?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: */*\r\nConnection: close\r\n\r\n",
            srv.port
        )]
    );
    assert_eq!(p.log(), [format!("allow GET {url}")]);
}

#[test]
fn plain_http_body_sent_with_the_head_is_forwarded() {
    let srv = http_server();
    let p = proxy(&["127.0.0.1"]);
    let out = exchange(
        &p,
        format!(
            "POST http://127.0.0.1:{}/p HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde",
            srv.port
        )
        .as_bytes(),
    );
    assert!(out.ends_with("got abcde"), "{out}");
}

#[test]
fn denied_host_gets_403_and_is_logged_and_the_server_sees_nothing() {
    let srv = http_server();
    let p = proxy(&["api.github.com"]);
    let url = format!("http://127.0.0.1:{}/x", srv.port);
    let out = exchange(&p, format!("GET {url} HTTP/1.1\r\n\r\n").as_bytes());
    assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{out}");
    let body = out.split("\r\n\r\n").nth(1).unwrap();
    assert_eq!(body.lines().count(), 1, "{body}");
    assert!(body.contains("host not in the allowlist"), "{body}");
    assert_eq!(
        p.log(),
        [format!("deny GET {url} (host not in the allowlist)")]
    );
    thread::sleep(Duration::from_millis(50));
    assert!(srv.seen.lock().unwrap().is_empty());
}

#[test]
fn a_name_is_never_followed_to_its_address() {
    let srv = http_server();
    // 127.0.0.1 allowed: `localhost` (which resolves to it) is not.
    let p = proxy(&["127.0.0.1"]);
    let out = exchange(
        &p,
        format!("GET http://localhost:{}/ HTTP/1.1\r\n\r\n", srv.port).as_bytes(),
    );
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // `localhost` allowed: the proxy resolves it on the host; 127.0.0.1 is not allowed.
    let p = proxy(&["localhost"]);
    let out = exchange(
        &p,
        format!("GET http://localhost:{}/ok HTTP/1.1\r\n\r\n", srv.port).as_bytes(),
    );
    assert!(out.ends_with("hello /ok"), "{out}");
    let out = exchange(
        &p,
        format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", srv.port).as_bytes(),
    );
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // Disguised addresses never reach the resolver.
    let out = exchange(&p, b"CONNECT 127.1:80 HTTP/1.1\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
}

#[test]
fn connect_tunnel_to_an_allowed_echo_server() {
    let (port, _) = echo_server();
    let p = proxy(&["127.0.0.1"]);
    let mut s = unix(&p);
    // The first tunneled bytes ride along with the CONNECT head.
    s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\nearly ").as_bytes())
        .unwrap();
    assert_eq!(
        read_head(&mut s),
        "HTTP/1.1 200 Connection established\r\n\r\n"
    );
    s.write_all(b"ping").unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert_eq!(out, "early ping");
    assert_eq!(p.log(), [format!("allow CONNECT 127.0.0.1:{port}")]);
}

#[test]
fn connect_to_a_denied_host_is_refused() {
    let (port, count) = echo_server();
    let p = proxy(&["api.github.com:443"]);
    let out = exchange(
        &p,
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    let out = exchange(&p, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    assert_eq!(
        p.log(),
        [
            format!("deny CONNECT 127.0.0.1:{port} (host not in the allowlist)"),
            "deny CONNECT evil.example:443 (host not in the allowlist)".to_string(),
        ]
    );
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[test]
fn wildcard_entries_match_names_strictly_below() {
    // `.invalid` never resolves: allowed names end in 502 (`error`), others in 403.
    let p = proxy(&["*.example.invalid"]);
    let status = |host: &str| {
        let out = exchange(
            &p,
            format!("CONNECT {host}:443 HTTP/1.1\r\n\r\n").as_bytes(),
        );
        out.split(' ').nth(1).unwrap().to_string()
    };
    assert_eq!(status("a.example.invalid"), "502");
    assert_eq!(status("A.B.Example.Invalid."), "502");
    assert_eq!(status("example.invalid"), "403");
    assert_eq!(status("evilexample.invalid"), "403");
    assert_eq!(status("example.invalid.evil.org"), "403");
    let log = p.log();
    assert!(
        log[0].starts_with("error CONNECT a.example.invalid:443 (cannot resolve"),
        "{log:?}"
    );
    assert!(
        log[1].starts_with("error CONNECT a.b.example.invalid:443"),
        "{log:?}"
    );
    assert_eq!(
        log[2],
        "deny CONNECT example.invalid:443 (host not in the allowlist)"
    );
}

#[test]
fn a_port_restricted_entry_allows_only_that_port() {
    let srv = http_server();
    let other = http_server();
    let p = proxy(&[&format!("127.0.0.1:{}", srv.port)]);
    let ok = exchange(
        &p,
        format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", srv.port).as_bytes(),
    );
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let no = exchange(
        &p,
        format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", other.port).as_bytes(),
    );
    assert!(no.starts_with("HTTP/1.1 403"), "{no}");
    assert!(
        no.contains(&format!("port {} not allowed for this host", other.port)),
        "{no}"
    );
    assert_eq!(
        p.log()[1],
        format!(
            "deny GET http://127.0.0.1:{}/ (port {} not allowed for this host)",
            other.port, other.port
        )
    );
}

#[test]
fn malformed_requests_get_400_and_are_logged() {
    let p = proxy(&["127.0.0.1"]);
    let cases: [&[u8]; 8] = [
        b"garbage\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
        b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
        b"GET http://127.0.0.1/ HTTP/1.1\r\nno-colon\r\n\r\n",
        b"GET http://127.0.0.1/ HTTP/1.1\r\n",
        b"\xff\xfe\x00\r\n\r\n",
    ];
    for req in cases {
        let mut s = unix(&p);
        s.write_all(req).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request"),
            "{:?} -> {out}",
            String::from_utf8_lossy(req)
        );
    }
    let log = p.log();
    assert_eq!(log.len(), cases.len(), "{log:?}");
    assert!(
        log.iter().all(|l| l.starts_with("bad request (")),
        "{log:?}"
    );
    assert_eq!(log[2], "bad request (missing port)");
}

#[test]
fn a_header_over_64k_is_refused() {
    let srv = http_server();
    let p = proxy(&["127.0.0.1"]);
    let mut s = unix(&p);
    let mut req = format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\n", srv.port).into_bytes();
    req.extend(b"X-Big: ");
    req.extend(std::iter::repeat_n(b'a', 70 * 1024));
    req.extend(b"\r\n\r\n");
    // The proxy answers after 64 KiB and closes; the rest of the write may fail.
    let _ = s.write_all(&req);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 431"), "{out}");
    assert_eq!(
        p.log(),
        ["bad request (request header larger than 65536 bytes)"]
    );
    assert!(srv.seen.lock().unwrap().is_empty());
}

/// A SOCKS5 CONNECT: greeting, request (`addr` is ATYP + address), reply code.
fn socks(p: &Proxy, addr: &[u8], port: u16) -> (UnixStream, u8) {
    let mut s = unix(p);
    s.write_all(&[5, 1, 0]).unwrap();
    let mut g = [0u8; 2];
    s.read_exact(&mut g).unwrap();
    assert_eq!(g, [5, 0]);
    let mut req = vec![5, 1, 0];
    req.extend(addr);
    req.extend(port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).unwrap();
    assert_eq!(r[0], 5);
    (s, r[1])
}

fn name(n: &str) -> Vec<u8> {
    let mut v = vec![3, n.len() as u8];
    v.extend(n.as_bytes());
    v
}

#[test]
fn socks5_by_name_and_by_address() {
    let (port, count) = echo_server();
    let p = proxy(&["localhost", "127.0.0.1"]);
    for addr in [name("localhost"), vec![1, 127, 0, 0, 1]] {
        let (mut s, code) = socks(&p, &addr, port);
        assert_eq!(code, 0);
        s.write_all(b"hi").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert_eq!(out, "hi");
    }
    let p2 = proxy(&["api.github.com"]);
    assert_eq!(socks(&p2, &name("localhost"), port).1, 2);
    assert_eq!(socks(&p2, &[1, 127, 0, 0, 1], port).1, 2);
    assert_eq!(socks(&p2, &name("127.1"), port).1, 1);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert_eq!(
        p.log(),
        [
            format!("allow SOCKS5 localhost:{port}"),
            format!("allow SOCKS5 127.0.0.1:{port}")
        ]
    );
    assert_eq!(
        p2.log(),
        [
            format!("deny SOCKS5 localhost:{port} (host not in the allowlist)"),
            format!("deny SOCKS5 127.0.0.1:{port} (host not in the allowlist)"),
            "bad SOCKS5 (not a valid host name)".to_string(),
        ]
    );
}

#[test]
fn fifty_concurrent_tunnels_through_the_forwarder() {
    let (port, count) = echo_server();
    let p = proxy(&["127.0.0.1"]);
    let fwd = Forwarder::start(p.socket_path()).unwrap();
    let fport = fwd.port();
    let barrier = Arc::new(std::sync::Barrier::new(50));
    let clients: Vec<_> = (0..50)
        .map(|i| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, fport)).unwrap();
                s.set_read_timeout(T).unwrap();
                s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
                    .unwrap();
                assert!(read_head(&mut s).starts_with("HTTP/1.1 200"));
                // All 50 tunnels are open at once before any is used.
                barrier.wait();
                let msg = format!("client {i} ").repeat(2000);
                s.write_all(msg.as_bytes()).unwrap();
                s.shutdown(Shutdown::Write).unwrap();
                let mut out = String::new();
                s.read_to_string(&mut out).unwrap();
                assert_eq!(out, msg);
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(count.load(Ordering::SeqCst), 50);
    assert_eq!(p.log().len(), 50);
    assert!(
        p.log()
            .iter()
            .all(|l| l == &format!("allow CONNECT 127.0.0.1:{port}"))
    );
}

fn curl(args: &[&str]) -> (i32, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .env_remove("no_proxy")
        .env_remove("NO_PROXY")
        .env_remove("http_proxy")
        .env_remove("all_proxy")
        .env_remove("ALL_PROXY")
        .output()
        .expect("curl is installed");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[test]
fn real_curl_through_forward_loopback() {
    let srv = http_server();
    let p = proxy(&["127.0.0.1", "localhost"]);
    let fport = forward_loopback(p.socket_path()).unwrap();
    let http_proxy = format!("http://127.0.0.1:{fport}");
    let url = format!("http://127.0.0.1:{}/curl", srv.port);
    // Plain HTTP (absolute-form).
    assert_eq!(
        curl(&["--proxy", &http_proxy, &url]),
        (0, "hello /curl".into())
    );
    // CONNECT tunnel (what curl does for https).
    assert_eq!(
        curl(&["--proxytunnel", "--proxy", &http_proxy, &url]),
        (0, "hello /curl".into())
    );
    // SOCKS5 with the proxy resolving the name.
    let socks = format!("socks5h://127.0.0.1:{fport}");
    let by_name = format!("http://localhost:{}/s", srv.port);
    assert_eq!(curl(&["--proxy", &socks, &by_name]), (0, "hello /s".into()));
    // Denied: a port nobody allowed… on a host nobody allowed.
    let p2 = proxy(&["api.github.com"]);
    let f2 = forward_loopback(p2.socket_path()).unwrap();
    let denied = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--proxy",
        &format!("http://127.0.0.1:{f2}"),
        &url,
    ]);
    assert_eq!(denied, (0, "403".into()));
    let tunnel = curl(&[
        "--proxytunnel",
        "--proxy",
        &format!("http://127.0.0.1:{f2}"),
        &url,
    ]);
    assert_ne!(tunnel.0, 0);
    let (code, _) = curl(&["--proxy", &format!("socks5h://127.0.0.1:{f2}"), &url]);
    assert_ne!(code, 0);
    assert_eq!(srv.seen.lock().unwrap().len(), 3);
    assert_eq!(
        p.log(),
        [
            format!("allow GET {url}"),
            format!("allow CONNECT 127.0.0.1:{}", srv.port),
            format!("allow SOCKS5 localhost:{}", srv.port),
        ]
    );
    assert_eq!(p2.log().len(), 3);
    assert!(
        p2.log().iter().all(|l| l.starts_with("deny ")),
        "{:?}",
        p2.log()
    );
}

#[test]
fn drop_closes_open_tunnels_and_removes_the_private_socket_dir() {
    let (port, _) = echo_server();
    let p = proxy(&["127.0.0.1"]);
    let path = p.socket_path().to_path_buf();
    let dir = path.parent().unwrap().to_path_buf();
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let mut s = unix(&p);
    s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    assert!(read_head(&mut s).starts_with("HTTP/1.1 200"));
    drop(p);
    // The open tunnel was closed, not left running.
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    assert!(out.is_empty());
    assert!(!dir.exists());
    assert!(UnixStream::connect(&path).is_err());
}

#[test]
fn unparseable_entries_are_refused_at_start() {
    for bad in ["https://api.github.com", "*", "a.*.com", "host:0", ""] {
        let e = Proxy::start(vec![bad.to_string()]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
    }
}

#[test]
fn a_silent_client_is_not_logged_and_a_stopped_forwarder_closes_its_port() {
    let p = proxy(&[]);
    drop(unix(&p));
    let fwd = Forwarder::start(p.socket_path()).unwrap();
    let port = fwd.port();
    drop(fwd);
    thread::sleep(Duration::from_millis(20));
    assert!(TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err());
    assert!(p.log().is_empty());
}

#[test]
fn end_to_end_inside_a_fresh_network_namespace() {
    let srv = http_server();
    let p = proxy(&["127.0.0.1"]);
    let sock = p.socket_path().to_path_buf();
    let url = format!("http://127.0.0.1:{}/ns", srv.port);
    let u = url.clone();
    let outcome = thread::spawn(move || {
        // SAFETY: unshare(2) with CLONE_NEWNET moves only this thread (and the
        // processes it spawns) into a new, empty network namespace; no memory is touched.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return None;
        }
        let up = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
        assert!(up.unwrap().success());
        let fport = forward_loopback(&sock).unwrap();
        let via_proxy = curl(&["--proxy", &format!("http://127.0.0.1:{fport}"), &u]);
        let direct = curl(&[&u]);
        let dns = curl(&["http://localhost.invalid/"]);
        Some((via_proxy, direct, dns))
    })
    .join()
    .unwrap();
    let Some((via_proxy, direct, dns)) = outcome else {
        eprintln!("skipped: cannot create a network namespace here");
        return;
    };
    // Through the forwarder and the host-side proxy, the host's 127.0.0.1 is reachable…
    assert_eq!(via_proxy, (0, "hello /ns".into()));
    // …around it, it is not (inside the namespace loopback is not the host's)…
    assert_eq!(direct.0, 7, "curl: couldn't connect");
    // …and there is no DNS.
    assert_eq!(dns.0, 6, "curl: couldn't resolve host");
    assert_eq!(srv.seen.lock().unwrap().len(), 1);
    assert_eq!(p.log(), [format!("allow GET {url}")]);
}

/// `cargo test -p safesh-egress -- --ignored --nocapture measure`: numbers for the report.
#[test]
#[ignore = "a measurement, not a check"]
fn measure_throughput_and_latency() {
    let (port, _) = echo_server();
    let srv = http_server();
    let p = proxy(&["127.0.0.1"]);
    let fport = forward_loopback(p.socket_path()).unwrap();
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, fport)).unwrap();
    s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    read_head(&mut s);
    let total = 256 * 1024 * 1024;
    let start = std::time::Instant::now();
    let mut w = s.try_clone().unwrap();
    let writer = thread::spawn(move || {
        let chunk = vec![7u8; 64 * 1024];
        for _ in 0..total / chunk.len() {
            w.write_all(&chunk).unwrap();
        }
        w.shutdown(Shutdown::Write).unwrap();
    });
    let got = std::io::copy(&mut s, &mut std::io::sink()).unwrap();
    writer.join().unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(got, total as u64);
    eprintln!(
        "tunnel (forwarder + proxy, echo both ways): {} MiB in {secs:.2}s = {:.0} MiB/s",
        total >> 20,
        (total >> 20) as f64 / secs
    );
    let n = 200;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut c = TcpStream::connect((Ipv4Addr::LOCALHOST, fport)).unwrap();
        write!(c, "GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", srv.port).unwrap();
        let mut out = Vec::new();
        c.read_to_end(&mut out).unwrap();
        assert!(out.starts_with(b"HTTP/1.1 200"));
    }
    eprintln!(
        "plain HTTP through forwarder + proxy: {:.2} ms per request ({n} sequential)",
        start.elapsed().as_secs_f64() * 1000.0 / f64::from(n)
    );
}
