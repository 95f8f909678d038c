//! Host-list networking: the program's network namespace has only `lo`, where a
//! loopback forwarder (run by a host thread that joined the namespace) pipes every
//! connection to the egress proxy's unix socket on the host. Unix socket paths are not
//! namespaced, so the proxy is the namespace's only way out.

use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The forwarder's port inside the namespace (the namespace is fresh: always free).
pub(crate) const PROXY_PORT: u16 = 3128;

/// The proxy URL the program's environment points at.
pub(crate) fn proxy_url() -> String {
    format!("http://127.0.0.1:{PROXY_PORT}")
}

/// The proxy variables set for the program (curl ignores upper-case `HTTP_PROXY`, so
/// both cases).
pub(crate) fn proxy_env() -> Vec<(String, String)> {
    let url = proxy_url();
    let mut v: Vec<(String, String)> = [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ]
    .iter()
    .map(|k| (k.to_string(), url.clone()))
    .collect();
    v.push(("no_proxy".into(), String::new()));
    v.push(("NO_PROXY".into(), String::new()));
    v
}

/// The host side of one host-list run: the proxy and the forwarder thread.
pub(crate) struct Egress {
    proxy: safesh_egress::Proxy,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Egress {
    /// Starts the proxy for `hosts`.
    pub(crate) fn start(hosts: &[String]) -> std::io::Result<Egress> {
        Ok(Egress {
            proxy: safesh_egress::Proxy::start(hosts.to_vec())?,
            stop: None,
            thread: None,
        })
    }

    /// Sets the hook told of each connection the proxy lets through.
    pub(crate) fn on_allow(&self, hook: safesh_egress::AllowHook) {
        self.proxy.on_allow(hook);
    }

    /// Joins `pid`'s network namespace on a dedicated thread, brings `lo` up and serves
    /// the forwarder there until [`Egress::finish`].
    pub(crate) fn attach(&mut self, pid: libc::pid_t) -> std::io::Result<()> {
        let ns = std::fs::File::open(format!("/proc/{pid}/ns/net"))?;
        let unix: PathBuf = self.proxy.socket_path().to_path_buf();
        let (ready_tx, ready_rx) = mpsc::channel::<std::io::Result<()>>();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sandbox-netns".into())
            .spawn(move || {
                let fwd = (|| {
                    // SAFETY: setns on this thread only (network namespaces are per thread).
                    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    loopback_up()?;
                    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, PROXY_PORT))?;
                    safesh_egress::Forwarder::from_listener(l, &unix)
                })();
                match fwd {
                    Ok(f) => {
                        let _ = ready_tx.send(Ok(()));
                        let _ = stop_rx.recv();
                        // Dropped here, inside the namespace, where its wake-up connect lands.
                        drop(f);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })?;
        self.thread = Some(thread);
        self.stop = Some(stop_tx);
        ready_rx
            .recv()
            .map_err(|_| std::io::Error::other("the network thread died"))?
    }

    /// Stops the forwarder; returns the proxy's log.
    pub(crate) fn finish(mut self) -> Vec<String> {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.proxy.log()
    }
}

/// `ip link set lo up` in the current thread's network namespace.
fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a plain datagram socket; the fd is ours.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just created.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // struct ifreq: 16-byte name, then the flags (short) in the union.
    let mut ifr = [0u8; 40];
    ifr[..3].copy_from_slice(b"lo\0");
    // SAFETY: ifr is a buffer as large as struct ifreq.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, ifr.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let flags = i16::from_ne_bytes([ifr[16], ifr[17]]) | libc::IFF_UP as i16;
    ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: as above.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, ifr.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
