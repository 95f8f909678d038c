//! The control socket: how the human's `safesh approve ID` reaches the safesh
//! process that is waiting for the approval.
//!
//! Each safesh process binds its own unix socket `control-<pid>.sock` in the state
//! directory (created 0700; the socket is 0600). The model cannot reach it: the
//! sandbox denies external programs `AF_UNIX` connects and the state directory,
//! and in-process utilities have no sockets. The server also checks the peer's
//! credentials (`SO_PEERCRED`): only the same user (or root) may talk to it, so
//! the check holds even where file modes do not (root ignores them).
//!
//! Protocol: one request line, reply lines, then the server closes.
//! `approve ID` / `deny ID` → `ok approved ID: ACTION` | `unknown ID` | `error …`;
//! `list` → one `pending ID POINT ACTION TARGET` line per request (tab-separated,
//! action and target quoted).
//!
//! The client ([`approve`], [`deny`], [`list`]) decides requests kept in the
//! state store (`approvals.db`, see [`crate::approvals`]) directly — their process
//! may have exited, and the same request sent again then proceeds once — and
//! tries every socket in the state directory for the others (a process whose
//! store failed); a socket nobody listens on (its process died) is removed.

use crate::approvals::{ApprovalError, Approvals};
use safesh_store::{ApprovalDb, Decide};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long either side waits for the other on one connection.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request line accepted.
const MAX_LINE: u64 = 512;

/// A control-channel failure.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Binding, connecting, reading or writing failed.
    #[error("control socket {path}: {source}")]
    Io {
        /// The socket or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// No safesh process is listening in this state directory.
    #[error("no running safesh process is waiting for approvals (no live control socket in {0})")]
    NoServer(PathBuf),
    /// No running safesh process knows this id.
    #[error("no running safesh process has an approval request `{0}`")]
    UnknownId(String),
    /// A server refused the request.
    #[error("{0}")]
    Refused(String),
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> ControlError + '_ {
    move |source| ControlError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A running control socket; unbound (and its file removed) on drop.
#[derive(Debug)]
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ControlServer {
    /// Binds `state_dir/control-<pid>.sock` and serves `approvals` on a thread.
    pub fn bind(state_dir: &Path, approvals: Arc<Approvals>) -> Result<Self, ControlError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_dir)
            .map_err(io_err(state_dir))?;
        let path = state_dir.join(format!("control-{}.sock", std::process::id()));
        // A leftover from a dead process that had our pid.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).map_err(io_err(&path))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(io_err(&path))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("safesh-control".into())
            .spawn(move || serve(&listener, &approvals, &flag))
            .map_err(io_err(&path))?;
        Ok(ControlServer {
            path,
            stop,
            thread: Some(thread),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; join only if that worked (else it would hang).
        let woke = UnixStream::connect(&self.path).is_ok();
        if let Some(t) = self.thread.take()
            && woke
        {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(listener: &UnixListener, approvals: &Approvals, stop: &AtomicBool) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(stream) = conn {
            // One bad client must not stop the server.
            let _ = handle(stream, approvals);
        }
    }
}

/// The peer's uid (`SO_PEERCRED`).
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes passed, and the
    // fd is a live socket owned by `stream`.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &raw mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}

fn handle(stream: UnixStream, approvals: &Approvals) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut out = &stream;
    // Read the request first even when refusing: closing with unread data would
    // reset the connection and the client would never see the refusal.
    let mut line = String::new();
    BufReader::new((&stream).take(MAX_LINE)).read_line(&mut line)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    match peer_uid(&stream) {
        Some(uid) if uid == me || uid == 0 => {}
        _ => return out.write_all(b"error refused: not the owner of this safesh process\n"),
    }
    let mut words = line.split_whitespace();
    let reply = match (words.next(), words.next(), words.next()) {
        (Some(verb @ ("approve" | "deny")), Some(id), None) => {
            let r = approvals.decide_by(id, verb == "approve", &format!("safesh {verb}"));
            match r {
                Ok(req) => format!(
                    "ok {} {id}: {}\n",
                    if verb == "approve" {
                        "approved"
                    } else {
                        "denied"
                    },
                    one_line(&req.action)
                ),
                Err(ApprovalError::UnknownId(_)) => format!("unknown {id}\n"),
                Err(e) => format!("error {e}\n"),
            }
        }
        (Some("list"), None, None) => approvals
            .pending()
            .iter()
            .map(|r| {
                format!(
                    "pending {}\t{}\t{:?}\t{:?}\n",
                    r.id, r.commit_point, r.action, r.target
                )
            })
            .collect(),
        _ => "error expected `approve ID`, `deny ID` or `list`\n".to_string(),
    };
    out.write_all(reply.as_bytes())
}

fn one_line(s: &str) -> String {
    s.replace('\n', "\\n")
}

/// The control sockets in `state_dir`.
fn sockets(state_dir: &Path) -> Result<Vec<PathBuf>, ControlError> {
    let dir = match std::fs::read_dir(state_dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(state_dir)(e)),
    };
    let mut v: Vec<PathBuf> = dir
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("control-") && n.ends_with(".sock"))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Sends `line` to every live server; returns each server's reply lines.
/// Sockets nobody listens on are removed.
fn broadcast(state_dir: &Path, line: &str) -> Result<Vec<Vec<String>>, ControlError> {
    let mut replies = Vec::new();
    let mut failed = None;
    for path in sockets(state_dir)? {
        let mut stream = match UnixStream::connect(&path) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                // Its process is gone.
                let _ = std::fs::remove_file(&path);
                continue;
            }
            Err(_) => continue,
        };
        let talk = |stream: &mut UnixStream| -> std::io::Result<Vec<String>> {
            stream.set_read_timeout(Some(IO_TIMEOUT))?;
            stream.set_write_timeout(Some(IO_TIMEOUT))?;
            stream.write_all(format!("{line}\n").as_bytes())?;
            BufReader::new(stream).lines().collect()
        };
        // One stuck or broken server must not hide the others.
        match talk(&mut stream) {
            Ok(r) => replies.push(r),
            Err(e) => failed = failed.or(Some(io_err(&path)(e))),
        }
    }
    match (replies.is_empty(), failed) {
        (true, Some(e)) => Err(e),
        (true, None) => Err(ControlError::NoServer(state_dir.to_path_buf())),
        (false, _) => Ok(replies),
    }
}

/// Decides request `id` in the state store: `None` when it is not there.
fn decide_stored(state_dir: &Path, verb: &str, id: &str) -> Option<Result<String, ControlError>> {
    let db = ApprovalDb::open_existing(state_dir).ok()??;
    let (to, done) = if verb == "approve" {
        ("granted", "approved")
    } else {
        ("denied", "denied")
    };
    match db.decide(id, to, std::time::SystemTime::now()) {
        Ok(Decide::Done(a)) => {
            let req = crate::approvals::ApprovalRequest {
                id: a.id.clone(),
                action: a.action.clone(),
                commit_point: a.commit_point.clone(),
                target: a.target.clone(),
                scope: a.scope.clone(),
                created: a.created,
                expires: a.expires,
            };
            crate::approvals::audit_decision(
                state_dir,
                &req,
                done == "approved",
                &format!("safesh {verb}"),
            );
            Some(Ok(format!("{done} {id}: {}", one_line(&a.action))))
        }
        Ok(Decide::Unknown) | Err(_) => None,
        Ok(Decide::Expired) => Some(Err(ControlError::Refused(format!(
            "approval request `{id}` has expired"
        )))),
        Ok(Decide::Already(s)) => Some(Err(ControlError::Refused(format!(
            "approval request `{id}` is already {s}"
        )))),
    }
}

fn decide(state_dir: &Path, verb: &str, id: &str) -> Result<String, ControlError> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ControlError::UnknownId(id.to_string()));
    }
    if let Some(r) = decide_stored(state_dir, verb, id) {
        return r;
    }
    let stored = state_dir.join(safesh_store::APPROVALS_DB).exists();
    let replies = match broadcast(state_dir, &format!("{verb} {id}")) {
        Err(ControlError::NoServer(_)) if stored => {
            return Err(ControlError::UnknownId(id.to_string()));
        }
        r => r?,
    };
    let mut refused = None;
    for reply in replies {
        let first = reply.first().map(String::as_str).unwrap_or_default();
        if let Some(ok) = first.strip_prefix("ok ") {
            return Ok(ok.to_string());
        }
        if let Some(e) = first.strip_prefix("error ") {
            refused = Some(e.to_string());
        }
    }
    Err(refused.map_or_else(
        || ControlError::UnknownId(id.to_string()),
        ControlError::Refused,
    ))
}

/// Grants approval request `id` in whichever running safesh process holds it;
/// returns `approved ID: ACTION`.
pub fn approve(state_dir: &Path, id: &str) -> Result<String, ControlError> {
    decide(state_dir, "approve", id)
}

/// Denies approval request `id`; returns `denied ID: ACTION`.
pub fn deny(state_dir: &Path, id: &str) -> Result<String, ControlError> {
    decide(state_dir, "deny", id)
}

/// The pending requests of every running safesh process, one line each
/// (`pending ID<TAB>POINT<TAB>"ACTION"<TAB>"TARGET"`).
pub fn list(state_dir: &Path) -> Result<Vec<String>, ControlError> {
    let db = ApprovalDb::open_existing(state_dir).ok().flatten();
    let mut out: Vec<String> = db
        .as_ref()
        .and_then(|db| db.pending(std::time::SystemTime::now()).ok())
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "pending {}\t{}\t{:?}\t{:?}",
                r.id, r.commit_point, r.action, r.target
            )
        })
        .collect();
    let replies = match broadcast(state_dir, "list") {
        Err(ControlError::NoServer(_)) if db.is_some() => Vec::new(),
        r => r?,
    };
    for reply in replies {
        for l in reply {
            if let Some(e) = l.strip_prefix("error ") {
                return Err(ControlError::Refused(e.to_string()));
            }
            // A live process lists the stored requests too: once each.
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    Ok(out)
}
