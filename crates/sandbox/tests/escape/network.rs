//! Network attacks with the network off.
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use crate::common::*;

#[test]
fn tcp_to_host_loopback() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let w = World::new();
    denied(w.py(&format!(
        "attempt('tcp', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2))\n\
         attempt('tcp6', lambda: socket.create_connection(('::1', {port}), timeout=2))"
    )));
    l.set_nonblocking(true).unwrap();
    assert!(l.accept().is_err(), "the listener saw a connection");
}

#[test]
fn udp_to_host_loopback() {
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = u.local_addr().unwrap().port();
    let w = World::new();
    denied(w.py(&format!(
        "attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {port})))"
    )));
    u.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(
        u.recv_from(&mut buf).is_err(),
        "the listener received a datagram"
    );
}

#[test]
fn host_unix_socket_in_write_root() {
    let w = World::new();
    let path = w.root.join("host.sock");
    let l = UnixListener::bind(&path).unwrap();
    denied(w.py(&format!(
        "attempt('unix', lambda: socket.socket(socket.AF_UNIX).connect({path:?}))\n\
         attempt('abstract', lambda: socket.socket(socket.AF_UNIX).connect('\\0safesh-test'))"
    )));
    l.set_nonblocking(true).unwrap();
    assert!(l.accept().is_err(), "the host socket saw a connection");
}

#[test]
fn host_unix_socket_network_on() {
    let w = World::new();
    let path = w.root.join("docker.sock");
    let l = UnixListener::bind(&path).unwrap();
    let mut s = w.py(&format!(
        "attempt('unix', lambda: socket.socket(socket.AF_UNIX).connect({path:?}))"
    ));
    s.network = safesh_sandbox::Network::On;
    denied(s);
    l.set_nonblocking(true).unwrap();
    let got = l.accept();
    if let Ok((mut c, _)) = got {
        let mut v = vec![];
        let _ = c.read_to_end(&mut v);
        panic!("connection reached the host socket");
    }
}

#[test]
fn dns_and_raw_sockets() {
    let w = World::new();
    denied(w.py(
        "attempt('dns', lambda: socket.getaddrinfo('example.com', 80))\n\
         attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))\n\
         attempt('packet', lambda: socket.socket(17, socket.SOCK_RAW, 0))\n\
         attempt('netlink', lambda: socket.socket(16, socket.SOCK_RAW, 0))",
    ));
}

/// A host HTTP server on 127.0.0.1 counting connections.
fn http_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::Write;
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 15\r\n\r\nhello-from-host");
        }
    });
    (port, hits)
}

#[test]
fn hosts_mode_allows_listed_host_through_proxy() {
    let (port, hits) = http_server();
    let w = World::new();
    let mut s = w.py(&format!(
        "import urllib.request\nprint('PROXY', os.environ.get('http_proxy'), flush=True)\n\
         print('BODY', urllib.request.urlopen('http://127.0.0.1:{port}/x', timeout=5).read().decode(), flush=True)"
    ));
    s.network = safesh_sandbox::Network::Hosts(vec!["127.0.0.1".into()]);
    let r = go(s);
    r.started();
    assert!(r.out.contains("BODY hello-from-host"), "{r:?}");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        r.outcome.proxy_log.iter().any(|l| l.starts_with("allow")),
        "{:?}",
        r.outcome.proxy_log
    );
}

#[test]
fn hosts_mode_denies_other_hosts_and_bypasses() {
    let (port, hits) = http_server();
    let w = World::new();
    let mut s = w.py(&format!(
        "import urllib.request\n\
         attempt('unlisted', lambda: urllib.request.urlopen('http://example.com/', timeout=5).read())\n\
         attempt('unlisted_connect', lambda: urllib.request.urlopen('https://example.org/', timeout=5).read())\n\
         attempt('direct', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2))\n\
         attempt('noproxy', lambda: urllib.request.build_opener(urllib.request.ProxyHandler({{}})).open('http://127.0.0.1:{port}/', timeout=2).read())\n\
         attempt('dns', lambda: socket.getaddrinfo('example.com', 80))\n\
         attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))\n\
         attempt('unix', lambda: socket.socket(socket.AF_UNIX))"
    ));
    s.network = safesh_sandbox::Network::Hosts(vec!["api.github.com".into()]);
    let r = denied(s);
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the host listener saw a connection"
    );
    assert!(
        r.outcome
            .proxy_log
            .iter()
            .filter(|l| l.starts_with("deny"))
            .count()
            >= 2,
        "{:?}",
        r.outcome.proxy_log
    );
}
