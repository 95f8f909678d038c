//! The loopback forwarder: inside the sandbox's network namespace, a TCP port on
//! 127.0.0.1 whose every connection is piped to the proxy's unix socket (unix socket
//! paths are not namespaced, so the namespace's only way out is the proxy).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::pipe::{Mode, pipe};

/// A running loopback forwarder. Dropping it stops accepting (connections already
/// piped run to their end). [`forward_loopback`] is the fire-and-forget form.
#[derive(Debug)]
pub struct Forwarder {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Forwarder {
    /// Listens on `127.0.0.1:<ephemeral port>` and pipes each connection to `unix`.
    pub fn start(unix: &Path) -> io::Result<Forwarder> {
        Forwarder::from_listener(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?, unix)
    }

    /// Serves an already bound listener (e.g. a fixed port) and pipes each
    /// connection to `unix`.
    pub fn from_listener(listener: TcpListener, unix: &Path) -> io::Result<Forwarder> {
        let mut addr = listener.local_addr()?;
        if addr.ip().is_unspecified() {
            addr.set_ip(Ipv4Addr::LOCALHOST.into());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let unix = unix.to_path_buf();
        let accept = std::thread::Builder::new()
            .name("egress-forward".into())
            .spawn(move || accept_loop(&listener, &unix, &s))?;
        Ok(Forwarder {
            addr,
            stop,
            accept: Some(accept),
        })
    }

    /// The TCP port on loopback.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Leaves the forwarder running for the life of the process; returns its port.
    pub fn detach(mut self) -> u16 {
        // Dropping the handle detaches the thread; `Drop` then has nothing to stop.
        self.accept = None;
        self.addr.port()
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        if let Some(t) = self.accept.take() {
            self.stop.store(true, Ordering::SeqCst);
            // Wake the accept loop; if that fails, leave it blocked rather than hang.
            if TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok() {
                let _ = t.join();
            }
        }
    }
}

fn accept_loop(listener: &TcpListener, unix: &Path, stop: &AtomicBool) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(tcp) = conn else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let unix = unix.to_path_buf();
        let _ = std::thread::Builder::new()
            .name("egress-forward-conn".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                // If the proxy is gone the client just sees the connection close.
                if let Ok(up) = UnixStream::connect(&unix) {
                    let _ = tcp.set_nodelay(true);
                    let _ = pipe(tcp, up, Mode::Tunnel);
                }
            });
    }
}

/// Inside a network namespace: accept TCP on `127.0.0.1:<ephemeral port>` and pipe each
/// connection to the unix socket `unix`. Background threads (for the life of the
/// process); returns the port. Point `http_proxy`, `https_proxy` and `all_proxy` at
/// `http://127.0.0.1:<port>` (SOCKS5 clients may use `socks5h://127.0.0.1:<port>`).
///
/// Only call this where nobody else shares the loopback interface (a fresh network
/// namespace): on the host it would open the proxy to every local user.
pub fn forward_loopback(unix: &Path) -> io::Result<u16> {
    Ok(Forwarder::start(unix)?.detach())
}
