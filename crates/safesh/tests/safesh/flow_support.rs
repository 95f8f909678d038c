//! Shared helpers of the information-flow suite (`flow.rs`, issue 6).
//!
//! An [`Arena`] is a fresh temp tree plus its own [`Server`]:
//!
//! ```text
//! <tmp>/proj/            cwd of every run; safesh.toml (the flow config), .env (the
//!                        secret), public.txt, README.md (has a TODO), keep1.txt, keep2.txt
//! <tmp>/home/            $HOME, empty
//! <tmp>/state/           $XDG_STATE_HOME: safesh's audit log and label store land here
//! ```
//!
//! safesh runs as `safesh --config <proj>/safesh.toml [opts] -c SCRIPT` with the
//! environment cleared except `PATH=/usr/bin:/bin`, `LC_ALL=C`, `HOME`,
//! `XDG_STATE_HOME` (and what a test adds, e.g. `GITHUB_TOKEN`), under a timeout.
//! Scripts may say `{URL}` (`http://127.0.0.1:PORT`) and `{PORT}`.
//!
//! The [`Server`] is a real HTTP/1.1 server on 127.0.0.1 that records every connection
//! (accepted, even if nothing is sent), every raw byte and every parsed request. Routes:
//! `/data.json`, `/payload.sh`, `/code.py`, `/list.txt`, `/cmd.txt`, `/name.txt`,
//! `/dir.txt`, `/dirname` (see `route`), `/echo-auth` (quotes the `Authorization`
//! header back), `/to-localhost` (302 to `http://localhost:PORT/user`); anything
//! else is 200 `ok`.

// Each test uses a different subset of these helpers.
#![allow(dead_code)]

use crate::policy_support::{Run, walk_files};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The acceptance config of the brief (read/write roots and PATH made explicit).
pub const CONFIG: &str = r#"[sandbox]
read = ["."]
write = ["."]
path = ["/usr/bin", "/bin"]
network = ["127.0.0.1"]

[commands."/usr/bin/python3"]
allow = true

[commands.python3]
allow = true

[labels]
secret = [".env"]

[labels.github_token]
env = ["GITHUB_TOKEN"]
may_flow_to = ["127.0.0.1"]
"#;

/// The secret file's content.
pub const ENV_FILE: &str = "API_KEY=sk-live-0123456789abcdef\n";
/// The secret value itself: must never reach the server, the audit log or the model.
pub const SECRET_VALUE: &str = "sk-live-0123456789abcdef";
/// A prefix of the secret: no recorded byte may contain it.
pub const SECRET_MARK: &str = "sk-live";
/// The public file's content.
pub const PUBLIC: &str = "hello public world\n";
/// A payload marker: must not exist after an injection attack.
pub const PWNED: &str = "pwned";
/// Created by the suffix `touch after`: must not exist when a refusal stopped the script.
pub const AFTER: &str = "after";
/// The flow refusal code.
pub const FLOW: &str = "FLOW_VIOLATION";
/// The approval refusal code.
pub const APPROVAL: &str = "APPROVAL_REQUIRED";

/// A run is killed after this long (a refusal that does not happen must not hang).
const TIMEOUT: Duration = Duration::from_secs(30);
/// How long the server waits for a client's bytes before giving up on a connection.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

// ==== the recording server ============================================================

/// One parsed HTTP request.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, `PUT`, …
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (chunked encoding decoded).
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The body as text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[derive(Default)]
struct Log {
    /// Peer address of every accepted connection, in accept order.
    peers: Vec<SocketAddr>,
    /// Raw bytes received on each connection (index = accept order).
    raw: Vec<Vec<u8>>,
    /// Every complete request.
    requests: Vec<Request>,
}

/// A recording HTTP/1.1 server on 127.0.0.1 (see the module docs for its routes).
pub struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    active: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    /// Peer addresses of the harness's own probe connections (not counted).
    probes: Mutex<Vec<SocketAddr>>,
}

impl Server {
    /// Start the server on an ephemeral port.
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("server address");
        let log = Arc::new(Mutex::new(Log::default()));
        let active = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (l2, a2, s2) = (log.clone(), active.clone(), stop.clone());
        thread::spawn(move || accept_loop(listener, l2, a2, s2));
        Server {
            addr,
            log,
            active,
            stop,
            probes: Mutex::new(Vec::new()),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Wait until every connection made so far has been accepted and fully handled: a
    /// probe connection is accepted after all earlier ones (the backlog is FIFO), then
    /// the handlers finish (clients are gone when safesh has exited).
    pub fn settle(&self) {
        let probe = TcpStream::connect(self.addr).expect("probe connect");
        let me = probe.local_addr().expect("probe address");
        self.probes.lock().unwrap().push(me);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log.lock().unwrap().peers.contains(&me) {
            assert!(Instant::now() < deadline, "probe never accepted");
            thread::sleep(Duration::from_millis(2));
        }
        drop(probe);
        // The probe's handler ends on EOF; wait for every handler to end.
        while self.active.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
    }

    fn is_probe(&self, peer: &SocketAddr) -> bool {
        self.probes.lock().unwrap().contains(peer)
    }

    /// How many connections clients opened (probes excluded), after [`Server::settle`].
    pub fn connections(&self) -> usize {
        self.settle();
        let log = self.log.lock().unwrap();
        log.peers.iter().filter(|p| !self.is_probe(p)).count()
    }

    /// Every complete request received, after [`Server::settle`].
    pub fn requests(&self) -> Vec<Request> {
        self.settle();
        self.log.lock().unwrap().requests.clone()
    }

    /// All raw bytes received on every connection, concatenated, after settling.
    pub fn raw(&self) -> Vec<u8> {
        self.settle();
        self.log.lock().unwrap().raw.concat()
    }

    /// A readable listing of what was received, for assertion messages.
    pub fn dump(&self) -> String {
        let log = self.log.lock().unwrap();
        let mut s = format!("  server: {} connection(s)\n", log.peers.len());
        for r in &log.requests {
            s.push_str(&format!(
                "    {} {} headers={:?} body={:?}\n",
                r.method,
                r.target,
                r.headers,
                r.body_text()
            ));
        }
        s
    }

    /// The server received nothing at all: no connection, and no byte carrying the
    /// secret (belt and braces).
    pub fn assert_nothing_received(&self, run: &Run) {
        let n = self.connections();
        let raw = self.raw();
        assert!(
            !contains(&raw, SECRET_MARK.as_bytes()),
            "THE SECRET REACHED THE SERVER:\n{}\n{}",
            run.dump(),
            self.dump()
        );
        assert_eq!(
            n,
            0,
            "the server was contacted after the attack started:\n{}\n{}",
            run.dump(),
            self.dump()
        );
    }

    /// The server received at least one request, and `needle` (if any) somewhere in
    /// the raw bytes (target, headers or body). No byte carries the secret.
    pub fn assert_received(&self, needle: Option<&str>, run: &Run) {
        let reqs = self.requests();
        let raw = self.raw();
        assert!(
            !reqs.is_empty(),
            "the server received no request:\n{}\n{}",
            run.dump(),
            self.dump()
        );
        if let Some(n) = needle {
            assert!(
                contains(&raw, n.as_bytes()),
                "the server did not receive {n:?}:\n{}\n{}",
                run.dump(),
                self.dump()
            );
        }
        assert!(
            !contains(&raw, SECRET_MARK.as_bytes()),
            "the secret reached the server:\n{}\n{}",
            run.dump(),
            self.dump()
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

fn accept_loop(
    listener: TcpListener,
    log: Arc<Mutex<Log>>,
    active: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let peer = stream
            .peer_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        let index = {
            let mut l = log.lock().unwrap();
            l.peers.push(peer);
            l.raw.push(Vec::new());
            l.raw.len() - 1
        };
        active.fetch_add(1, Ordering::SeqCst);
        let (log, active) = (log.clone(), active.clone());
        thread::spawn(move || {
            let _ = handle(stream, index, &log);
            active.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Reads from one connection, recording every byte as it arrives.
struct Recorder<'a> {
    stream: TcpStream,
    index: usize,
    log: &'a Mutex<Log>,
    buf: Vec<u8>,
}

impl Recorder<'_> {
    /// Read more bytes into `buf`; false on EOF or error.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.log.lock().unwrap().raw[self.index].extend_from_slice(&chunk[..n]);
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// Take bytes up to and including `delim`, reading as needed.
    fn take_until(&mut self, delim: &[u8]) -> Option<Vec<u8>> {
        loop {
            if let Some(pos) = self.buf.windows(delim.len()).position(|w| w == delim) {
                let rest = self.buf.split_off(pos + delim.len());
                return Some(std::mem::replace(&mut self.buf, rest));
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// Take exactly `n` bytes, reading as needed.
    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill() {
                return None;
            }
        }
        let rest = self.buf.split_off(n);
        Some(std::mem::replace(&mut self.buf, rest))
    }
}

fn handle(stream: TcpStream, index: usize, log: &Mutex<Log>) -> Option<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT)).ok()?;
    let mut rec = Recorder {
        stream,
        index,
        log,
        buf: Vec::new(),
    };
    // Keep-alive: serve requests until the client closes.
    loop {
        let head = rec.take_until(b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&head).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let method = first.next()?.to_string();
        let target = first.next().unwrap_or("").to_string();
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
            .collect();
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        if get("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
            rec.stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .ok()?;
        }
        let body = if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            let mut body = Vec::new();
            loop {
                let line = rec.take_until(b"\r\n")?;
                let size = String::from_utf8_lossy(&line);
                let size = size.trim().split(';').next().unwrap_or("0");
                let n = usize::from_str_radix(size.trim(), 16).ok()?;
                if n == 0 {
                    // Trailers end with an empty line.
                    while rec.take_until(b"\r\n")? != b"\r\n" {}
                    break;
                }
                body.extend(rec.take(n)?);
                rec.take(2)?;
            }
            body
        } else {
            let n = get("content-length")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            rec.take(n)?
        };
        let close = get("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let req = Request {
            method,
            target,
            headers,
            body,
        };
        let port = rec.stream.local_addr().map(|a| a.port()).unwrap_or(0);
        let (status, extra, content) = match req.path() {
            // Replies with what the client sent as `Authorization` (an API that
            // quotes the token back).
            "/echo-auth" => (
                "200 OK",
                String::new(),
                format!("you sent: {}\n", req.header("authorization").unwrap_or("")),
            ),
            // Redirects to the same server under another host name.
            "/to-localhost" => (
                "302 Found",
                format!("Location: http://localhost:{port}/user\r\n"),
                String::new(),
            ),
            path => ("200 OK", String::new(), route(path).1.to_string()),
        };
        let ctype = route(req.path()).0;
        log.lock().unwrap().requests.push(req);
        let resp = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\n\r\n{content}",
            content.len()
        );
        rec.stream.write_all(resp.as_bytes()).ok()?;
        rec.stream.flush().ok()?;
        if close {
            return Some(());
        }
    }
}

/// The server's routes.
fn route(path: &str) -> (&'static str, &'static str) {
    match path {
        "/data.json" => (
            "application/json",
            r#"{"items":[{"name":"a","n":1},{"name":"b","n":2}]}"#,
        ),
        "/payload.sh" => ("text/plain", "touch pwned\n"),
        "/code.py" => ("text/plain", "open(\"pwned\",\"w\").write(\"x\")\n"),
        "/list.txt" => ("text/plain", "keep1.txt\nkeep2.txt\n"),
        "/cmd.txt" => ("text/plain", "touch pwned\n"),
        "/name.txt" => ("text/plain", "touch\n"),
        "/dir.txt" => ("text/plain", "/tmp/evil\n"),
        "/dirname" => ("text/plain", "keepdir\n"),
        "/arith.txt" => ("text/plain", "a[$(touch pwned)0]\n"),
        _ => ("text/plain", "ok"),
    }
}

// ==== the project arena ===============================================================

/// A fresh project, state dir and recording server.
pub struct Arena {
    _tmp: tempfile::TempDir,
    /// The canonical temp dir holding everything.
    pub root: PathBuf,
    /// The project dir (cwd of every run).
    pub dir: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// `$XDG_STATE_HOME`.
    pub state: PathBuf,
    /// The config file.
    pub config: PathBuf,
    /// The recording server.
    pub server: Server,
    /// Extra environment for safesh.
    env: Vec<(String, String)>,
}

impl Arena {
    /// An arena with the acceptance config.
    pub fn new() -> Arena {
        Arena::with_config(CONFIG)
    }

    /// An arena with the acceptance config followed by `extra` (new tables only).
    pub fn with_extra(extra: &str) -> Arena {
        Arena::with_config(&format!("{CONFIG}\n{extra}\n"))
    }

    /// An arena whose config is exactly `config`.
    pub fn with_config(config: &str) -> Arena {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let dir = root.join("proj");
        let home = root.join("home");
        let state = root.join("state");
        for d in [&dir, &home, &state] {
            std::fs::create_dir(d).expect("create dir");
        }
        let files = [
            (".env", ENV_FILE),
            ("public.txt", PUBLIC),
            ("README.md", "# demo\n\nTODO: write the docs\n"),
            ("keep1.txt", "one\n"),
            ("keep2.txt", "two\n"),
        ];
        for (name, content) in files {
            std::fs::write(dir.join(name), content).expect("write project file");
        }
        let config_path = dir.join("safesh.toml");
        std::fs::write(&config_path, config).expect("config");
        Arena {
            _tmp: tmp,
            root,
            dir,
            home,
            state,
            config: config_path,
            server: Server::start(),
            env: Vec::new(),
        }
    }

    /// Add a variable to safesh's environment.
    pub fn env(mut self, name: &str, value: &str) -> Arena {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// `script` with `{URL}` and `{PORT}` filled in.
    pub fn script(&self, script: &str) -> String {
        script
            .replace("{URL}", &self.server.url())
            .replace("{PORT}", &self.server.port().to_string())
    }

    /// The absolute path of `rel` inside the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Write a file inside the project.
    pub fn write(&self, rel: &str, content: &str) {
        std::fs::write(self.path(rel), content).expect("write file");
    }

    /// `rel` exists in the project.
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).symlink_metadata().is_ok()
    }

    /// `safesh --config FILE -c SCRIPT` (placeholders filled in).
    pub fn run(&self, script: &str) -> Run {
        let s = self.script(script);
        self.run_args(&["-c", &s])
    }

    /// `safesh --config FILE --json -c SCRIPT`, stdout parsed.
    pub fn run_json(&self, script: &str) -> (Run, serde_json::Value) {
        let s = self.script(script);
        let r = self.run_args(&["--json", "-c", &s]);
        let v = r.json();
        (r, v)
    }

    /// `safesh --config FILE ARGS…`.
    pub fn run_args(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
        cmd.arg("--config").arg(&self.config).args(args);
        self.spawn(cmd, args.join(" "))
    }

    /// `safesh ARGS…` without `--config` (e.g. `audit`), same environment.
    pub fn run_plain(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
        cmd.args(args);
        self.spawn(cmd, args.join(" "))
    }

    fn spawn(&self, mut cmd: Command, what: String) -> Run {
        cmd.current_dir(&self.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", &self.state)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group, so the timeout can kill anything it started.
            .process_group(0);
        crate::policy_support::collect(cmd, what)
    }

    // ---- the checks ---------------------------------------------------------------

    /// `SCRIPT; touch after` is refused with `code` (human format: status 126,
    /// `safesh: CODE:` and a suggestion on stderr), stops there, and runs no payload.
    pub fn assert_blocked(&self, script: &str, code: &str) -> Run {
        let r = self.run(&format!("{script}\ntouch {AFTER}"));
        r.assert_refused(code);
        self.assert_stopped(&r);
        r
    }

    /// The same through `--json`: `exit_code` 126, `error.code` is `code` (with an
    /// `approval_id` for approvals), and the model-facing result never shows the secret.
    pub fn assert_blocked_json(&self, script: &str, code: &str) -> (Run, serde_json::Value) {
        let (r, v) = self.run_json(&format!("{script}\ntouch {AFTER}"));
        assert!(!r.timed_out, "timed out (not refused):\n{}", r.dump());
        assert_eq!(v["error"]["code"], code, "error.code:\n{}", r.dump());
        assert_eq!(v["exit_code"], 126, "exit_code:\n{}", r.dump());
        assert_eq!(r.status, 126, "process status:\n{}", r.dump());
        if code == APPROVAL {
            let id = v["error"]["details"]["approval_id"].as_str().unwrap_or("");
            assert!(!id.is_empty(), "no details.approval_id:\n{}", r.dump());
        }
        assert!(
            !r.stdout.contains(SECRET_MARK),
            "the --json result shows the secret to the model:\n{}",
            r.dump()
        );
        self.assert_stopped(&r);
        (r, v)
    }

    /// No payload marker and no trailing marker.
    pub fn assert_stopped(&self, r: &Run) {
        assert!(
            !self.exists(PWNED),
            "the payload ran (`pwned` exists):\n{}",
            r.dump()
        );
        assert!(
            !self.exists(AFTER),
            "the script went on after the refusal (`after` exists):\n{}",
            r.dump()
        );
    }

    /// No file under the state dir contains `needle`; returns how many files there are.
    pub fn state_files_without(&self, needle: &str) -> usize {
        let mut files = Vec::new();
        walk_files(&self.state, &mut files);
        for f in &files {
            let bytes = std::fs::read(f).unwrap_or_default();
            assert!(
                !contains(&bytes, needle.as_bytes()),
                "{needle:?} appears in clear in safesh's state file {}",
                f.display()
            );
        }
        files.len()
    }

    /// The concatenated text of every file under the state dir whose path mentions
    /// `audit`.
    pub fn audit_text(&self) -> String {
        let mut files = Vec::new();
        walk_files(&self.state, &mut files);
        files
            .iter()
            .filter(|f| f.to_string_lossy().contains("audit"))
            .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap_or_default()).into_owned())
            .collect()
    }

    /// Paths of the state dir's files, for messages.
    pub fn state_listing(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        walk_files(&self.state, &mut files);
        files
            .into_iter()
            .map(|f| {
                f.strip_prefix(&self.state)
                    .map(Path::to_path_buf)
                    .unwrap_or(f)
            })
            .collect()
    }
}
