//! The proxy: a unix-socket listener, one thread per connection, an attempt log.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::allow::{Allowlist, Host, parse_authority};
use crate::error::RequestError;
use crate::http::{self, HeadError};
use crate::pipe::{Mode, pipe};
use crate::socks;

/// How long a client may take to send its request head (or SOCKS handshake).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to one address of an origin may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more are answered `503` and closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Log lines kept; older ones are dropped (and counted).
pub const MAX_LOG_LINES: usize = 10_000;
/// Longest URL written to the log.
const MAX_LOGGED_TARGET: usize = 300;

/// What one proxy's threads share.
pub(crate) struct Shared {
    pub allow: Allowlist,
    log: Mutex<Log>,
    /// Told of each `allow …` line before the connection carries a byte.
    on_allow: std::sync::OnceLock<AllowHook>,
    conns: Mutex<Conns>,
    stopping: AtomicBool,
}

#[derive(Default)]
struct Log {
    lines: VecDeque<String>,
    dropped: u64,
}

#[derive(Default)]
struct Conns {
    next: u64,
    open: HashMap<u64, Vec<Closer>>,
}

/// A clone of a socket, kept to shut it down when the proxy stops.
enum Closer {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Closer {
    fn close(&self) {
        let _ = match self {
            Closer::Unix(s) => s.shutdown(Shutdown::Both),
            Closer::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub(crate) fn log(&self, line: String) {
        if line.starts_with("allow ")
            && let Some(hook) = self.on_allow.get()
        {
            hook(&line);
        }
        let mut log = lock(&self.log);
        if log.lines.len() >= MAX_LOG_LINES {
            log.lines.pop_front();
            log.dropped += 1;
        }
        log.lines.push_back(line);
    }

    /// Registers a client; `None` when the proxy is full or stopping.
    fn open(&self, client: &UnixStream) -> Option<u64> {
        let mut c = lock(&self.conns);
        if c.open.len() >= MAX_CONNECTIONS || self.stopping.load(Ordering::SeqCst) {
            return None;
        }
        let id = c.next;
        c.next += 1;
        let closers = client.try_clone().map(Closer::Unix).into_iter().collect();
        c.open.insert(id, closers);
        Some(id)
    }

    /// Remembers an upstream socket of connection `id` so that stopping closes it.
    pub(crate) fn track(&self, id: u64, up: &TcpStream) {
        let mut c = lock(&self.conns);
        if self.stopping.load(Ordering::SeqCst) {
            let _ = up.shutdown(Shutdown::Both);
            return;
        }
        if let (Some(list), Ok(clone)) = (c.open.get_mut(&id), up.try_clone()) {
            list.push(Closer::Tcp(clone));
        }
    }

    fn close(&self, id: u64) {
        lock(&self.conns).open.remove(&id);
    }

    fn stop(&self) {
        let c = lock(&self.conns);
        self.stopping.store(true, Ordering::SeqCst);
        for closer in c.open.values().flatten() {
            closer.close();
        }
    }
}

/// A host-side filtering proxy on background threads, listening on a unix socket in a
/// private (0700) temporary directory. It speaks HTTP `CONNECT`, plain-HTTP
/// absolute-form requests and SOCKS5 `CONNECT`, and lets through only what the
/// [`Allowlist`] names. Dropping it stops the listener, closes every open connection
/// and removes the directory.
///
/// A hook told of each connection the proxy lets through ([`Proxy::on_allow`]).
pub type AllowHook = Box<dyn Fn(&str) + Send + Sync>;

/// Every attempt is logged, one line, in the order decided (see [`Proxy::log`]).
pub struct Proxy {
    shared: Arc<Shared>,
    path: PathBuf,
    accept: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("socket", &self.path).finish()
    }
}

impl Proxy {
    /// Starts a proxy allowing only `allowed` hosts (exact names, `*.example.com`
    /// wildcards, IP literals; ports: any unless written `host:port`). Listens on a
    /// fresh unix socket in a private temp dir (mode 0700). An entry that cannot be
    /// parsed is an [`io::ErrorKind::InvalidInput`] error wrapping
    /// [`InvalidEntry`](crate::InvalidEntry).
    pub fn start(allowed: Vec<String>) -> io::Result<Proxy> {
        Proxy::with_allowlist(Allowlist::parse(allowed)?)
    }

    /// Starts a proxy for an already parsed allowlist.
    pub fn with_allowlist(allow: Allowlist) -> io::Result<Proxy> {
        let mut base = std::env::temp_dir();
        // A unix socket path must fit in sun_path (108 bytes).
        if base.as_os_str().len() > 64 {
            base = PathBuf::from("/tmp");
        }
        let dir = tempfile::Builder::new()
            .prefix("safesh-egress-")
            .tempdir_in(base)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
        let path = dir.path().join("proxy.sock");
        let listener = UnixListener::bind(&path)?;
        let shared = Arc::new(Shared {
            allow,
            log: Mutex::default(),
            on_allow: std::sync::OnceLock::new(),
            conns: Mutex::default(),
            stopping: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("egress-accept".into())
            .spawn(move || accept_loop(&s, &listener))?;
        Ok(Proxy {
            shared,
            path,
            accept: Some(accept),
            _dir: dir,
        })
    }

    /// Sets the hook told of each connection let through (its `allow …` log
    /// line), before any byte of it is relayed; once per proxy.
    pub fn on_allow(&self, hook: AllowHook) {
        let _ = self.shared.on_allow.set(hook);
    }

    /// The unix socket to connect to.
    pub fn socket_path(&self) -> &Path {
        &self.path
    }

    /// One line per attempt, in the order the proxy decided them:
    /// - `allow CONNECT api.github.com:443`, `allow GET http://host/path`,
    ///   `allow SOCKS5 host:port`: let through;
    /// - `deny GET http://x/… (host not in the allowlist)` (or `(port N not allowed
    ///   for this host)`): refused with `403` (SOCKS: "not allowed by ruleset");
    /// - `error CONNECT host:port (…)`: allowed, but the origin could not be reached
    ///   (`502`);
    /// - `bad request (…)` / `bad SOCKS5 (…)`: malformed (`400`, `431`), or refused
    ///   for lack of capacity (`503`).
    ///
    /// At most [`MAX_LOG_LINES`] are kept; when older ones were dropped the first line
    /// says how many.
    pub fn log(&self) -> Vec<String> {
        let log = lock(&self.shared.log);
        let mut out = Vec::with_capacity(log.lines.len() + 1);
        if log.dropped > 0 {
            out.push(format!("… {} earlier lines dropped", log.dropped));
        }
        out.extend(log.lines.iter().cloned());
        out
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop();
        // Wake the accept loop, which then sees `stopping`. Should the socket be gone,
        // leave the thread blocked in accept rather than hang here.
        let woken = UnixStream::connect(&self.path).is_ok();
        if let Some(t) = self.accept.take()
            && woken
        {
            let _ = t.join();
        }
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &UnixListener) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut client) = conn else {
            // Out of descriptors or similar: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let Some(id) = shared.open(&client) else {
            if !shared.stopping.load(Ordering::SeqCst) {
                shared.log("bad request (too many open connections)".into());
                let _ = http::respond(
                    &mut client,
                    503,
                    "Service Unavailable",
                    "safesh egress: too many open connections",
                );
            }
            continue;
        };
        let s = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("egress-conn".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                serve(&s, id, client);
                s.close(id);
            });
        if spawned.is_err() {
            shared.close(id);
        }
    }
}

/// Makes a client-supplied string safe and short for the log.
fn clip(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(MAX_LOGGED_TARGET)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect();
    if s.chars().count() > MAX_LOGGED_TARGET {
        out.push('…');
    }
    out
}

/// Why an origin could not be reached.
pub(crate) struct Unreachable {
    pub refused: bool,
    pub message: String,
}

/// Resolves (names only; the proxy does the DNS the sandbox cannot) and connects,
/// trying each address in turn.
pub(crate) fn connect(host: &Host, port: u16) -> Result<TcpStream, Unreachable> {
    let addrs: Vec<SocketAddr> = match host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, port)],
        Host::Name(n) => match (n.as_str(), port).to_socket_addrs() {
            Ok(a) => a.collect(),
            Err(e) => {
                return Err(Unreachable {
                    refused: false,
                    message: format!("cannot resolve {n}: {e}"),
                });
            }
        },
    };
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => Unreachable {
            refused: e.kind() == io::ErrorKind::ConnectionRefused,
            message: format!("cannot connect: {e}"),
        },
        None => Unreachable {
            refused: false,
            message: "no address".into(),
        },
    })
}

fn bad(shared: &Shared, client: &mut UnixStream, e: &RequestError) {
    shared.log(format!("bad request ({e})"));
    let (status, reason) = e.status();
    let _ = http::respond(
        client,
        status,
        reason,
        &format!("safesh egress: bad request: {e}"),
    );
}

fn serve(shared: &Shared, id: u64, mut client: UnixStream) {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let mut first = [0u8; 1];
    if client.read_exact(&mut first).is_err() {
        return; // closed without a word: nothing was attempted
    }
    if first[0] == socks::VERSION {
        socks::serve(shared, id, client);
        return;
    }
    let head = match http::read_head(&mut client, first[0]) {
        Ok(h) => h,
        Err(HeadError::Request(e)) => return bad(shared, &mut client, &e),
        Err(HeadError::Io(e)) => {
            shared.log(format!("bad request (reading the request: {e})"));
            return;
        }
    };
    let req = match http::parse(&head.bytes) {
        Ok(r) => r,
        Err(e) => return bad(shared, &mut client, &e),
    };
    if req.method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = match parse_authority(req.target, None) {
            Ok(hp) => hp,
            Err(e) => return bad(shared, &mut client, &e),
        };
        let what = format!("CONNECT {host}:{port}");
        let Some(mut up) = admit(shared, &mut client, &what, &host, port) else {
            return;
        };
        shared.track(id, &up);
        let _ = client.set_read_timeout(None);
        if client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .is_err()
            || up.write_all(&head.rest).is_err()
        {
            return;
        }
        let _ = pipe(client, up, Mode::Tunnel);
    } else {
        let target = match http::parse_absolute(req.target) {
            Ok(t) => t,
            Err(e) => return bad(shared, &mut client, &e),
        };
        let what = format!("{} {}", req.method, clip(req.target));
        let Some(mut up) = admit(shared, &mut client, &what, &target.host, target.port) else {
            return;
        };
        shared.track(id, &up);
        let _ = client.set_read_timeout(None);
        let out = http::origin_head(&req, &target);
        if up.write_all(&out).is_err() || up.write_all(&head.rest).is_err() {
            return;
        }
        let _ = pipe(client, up, Mode::Exchange);
    }
}

/// Checks the allowlist and connects; logs the outcome and answers the client on
/// refusal or failure.
fn admit(
    shared: &Shared,
    client: &mut UnixStream,
    what: &str,
    host: &Host,
    port: u16,
) -> Option<TcpStream> {
    if let Err(d) = shared.allow.check(host, port) {
        shared.log(format!("deny {what} ({d})"));
        let body = format!("safesh egress: {host}:{port} refused: {d}");
        let _ = http::respond(client, 403, "Forbidden", &body);
        return None;
    }
    match connect(host, port) {
        Ok(up) => {
            shared.log(format!("allow {what}"));
            Some(up)
        }
        Err(e) => {
            shared.log(format!("error {what} ({})", e.message));
            let body = format!("safesh egress: {host}:{port} unreachable: {}", e.message);
            let _ = http::respond(client, 502, "Bad Gateway", &body);
            None
        }
    }
}
