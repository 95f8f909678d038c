//! Run one shell on one script in one directory, with a clean environment and a timeout.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A run is killed (with its whole process group) after this long.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Normal exit with this code.
    Exit(i32),
    /// Killed by this signal.
    Signal(i32),
    /// Still running after [`TIMEOUT`]; killed by the harness.
    TimedOut,
    /// The program could not be started at all.
    SpawnFailed(String),
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Exit(c) => write!(f, "exit {c}"),
            Status::Signal(s) => write!(f, "signal {s}"),
            Status::TimedOut => write!(f, "TIMED OUT after {}s", TIMEOUT.as_secs()),
            Status::SpawnFailed(e) => write!(f, "could not start: {e}"),
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// Captured stdout.
    pub stdout: Vec<u8>,
    /// Captured stderr.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub status: Status,
}

/// The config the differential cases run safesh with: the whole file system as
/// read and write roots, because these cases compare bash behaviour (the policy's
/// own suites live in `policy_*.rs`). Protected paths still apply.
fn harness_config() -> String {
    let path = concat!(env!("CARGO_TARGET_TMPDIR"), "/differential-harness.toml");
    let text = "[sandbox]\nread = [\"/\"]\nwrite = [\"/\"]\n";
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write the harness config");
    }
    path.to_string()
}

/// The state dir of every run of this harness (outside the fixture trees).
fn harness_state_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("safesh-harness-state-{}", std::process::id()))
}

/// A shell to run scripts with: `program pre_args… -c SCRIPT`.
#[derive(Debug, Clone)]
pub struct Shell {
    /// Path of the program.
    pub program: String,
    /// Arguments before `-c`.
    pub pre_args: Vec<String>,
}

impl Shell {
    /// Real bash, without any startup files.
    pub fn bash() -> Shell {
        Shell {
            program: "/bin/bash".into(),
            pre_args: vec!["--norc".into(), "--noprofile".into()],
        }
    }

    /// A shell given by path; bash gets its no-startup-files flags.
    pub fn from_path(path: &str) -> Shell {
        if path.ends_with("/bash") || path == "bash" {
            Shell {
                program: path.into(),
                pre_args: Shell::bash().pre_args,
            }
        } else {
            Shell {
                program: path.into(),
                pre_args: vec!["--config".into(), harness_config()],
            }
        }
    }

    /// Run `script` in `dir` (which is also `$HOME`), feeding `stdin`, under `LC_ALL=C`.
    pub fn run(&self, script: &str, dir: &Path, stdin: Option<&[u8]>) -> Output {
        self.run_in_locale(script, dir, stdin, "C")
    }

    /// [`Shell::run`] with `LC_ALL=locale`.
    pub fn run_in_locale(
        &self,
        script: &str,
        dir: &Path,
        stdin: Option<&[u8]>,
        locale: &str,
    ) -> Output {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.pre_args)
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env_clear()
            .env("LC_ALL", locale)
            .env("HOME", dir)
            // safesh keeps state (its history) under $XDG_STATE_HOME: outside the
            // compared tree. Both shells get it, so `env` prints the same.
            .env("XDG_STATE_HOME", harness_state_dir())
            .env("PATH", "/usr/bin:/bin")
            .env("TZ", "UTC")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group, so a timeout can kill background children too.
            .process_group(0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Output {
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                    status: Status::SpawnFailed(e.to_string()),
                };
            }
        };
        let pgid = child.id();

        let writer = match (child.stdin.take(), stdin) {
            (Some(mut pipe), Some(bytes)) => {
                let bytes = bytes.to_vec();
                // A shell that never reads stdin closes the pipe: ignore EPIPE.
                Some(thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let out_reader = reader(child.stdout.take());
        let err_reader = reader(child.stderr.take());

        let start = Instant::now();
        let mut status = loop {
            match child.try_wait() {
                Ok(Some(st)) => {
                    break match (st.code(), st.signal()) {
                        (Some(c), _) => Status::Exit(c),
                        (None, Some(s)) => Status::Signal(s),
                        (None, None) => Status::SpawnFailed("unknown status".into()),
                    };
                }
                Ok(None) if start.elapsed() > TIMEOUT => {
                    kill_group(pgid);
                    let _ = child.kill();
                    let _ = child.wait();
                    break Status::TimedOut;
                }
                Ok(None) => thread::sleep(Duration::from_millis(2)),
                Err(e) => break Status::SpawnFailed(e.to_string()),
            }
        };
        // Background children may still hold the pipes open: give them until the
        // timeout too, then kill the group so the readers see EOF.
        let deadline = start + TIMEOUT;
        let readers = [&out_reader, &err_reader];
        while readers.iter().any(|r| !r.is_finished()) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
        if readers.iter().any(|r| !r.is_finished()) {
            kill_group(pgid);
            status = Status::TimedOut;
            // Never hang the harness: after a grace period, keep what was read so far
            // and leave any reader still blocked behind (it ends with the pipe).
            let grace = Instant::now() + Duration::from_secs(2);
            while readers.iter().any(|r| !r.is_finished()) && Instant::now() < grace {
                thread::sleep(Duration::from_millis(5));
            }
        }
        // The writer ends on its own once the child's stdin closes; never wait for it.
        drop(writer);
        Output {
            stdout: out_reader.take(),
            stderr: err_reader.take(),
            status,
        }
    }
}

/// A thread draining one pipe into a shared buffer, readable at any time.
struct Reader {
    buf: Arc<Mutex<Vec<u8>>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Reader {
    fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// The bytes read so far (all of them when the reader has finished).
    fn take(self) -> Vec<u8> {
        if self.is_finished()
            && let Some(h) = self.handle
        {
            let _ = h.join();
        }
        self.buf
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> Reader {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let handle = pipe.map(|mut r| {
        let buf = Arc::clone(&buf);
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match r.read(&mut chunk) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut b) = buf.lock() {
                            b.extend_from_slice(&chunk[..n]);
                        }
                    }
                }
            }
        })
    });
    Reader { buf, handle }
}

/// SIGKILL a whole process group (no libc in this crate's dev-deps: use kill(1)).
pub(crate) fn kill_group(pgid: u32) {
    let _ = Command::new("/bin/kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
