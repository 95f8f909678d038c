//! A minimal [`Host`] for unit and differential tests of single utilities: no
//! policy, real files, inner commands resolved from a given utility table.

use crate::{Host, Interrupt, UtilCtx, UtilFn, UtilResult};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

/// A host that allows everything and runs inner commands from `table`.
pub struct TestHost {
    /// Utilities inner commands may call (for xargs / find -exec tests).
    pub table: Vec<(&'static str, UtilFn)>,
    /// The environment given to inner commands.
    pub env: BTreeMap<String, String>,
}

impl Host for TestHost {
    fn check_read(&self, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn check_write(&self, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn run(
        &self,
        argv: &[String],
        cwd: &Path,
        stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> UtilResult {
        let Some(name) = argv.first() else {
            return Ok(0);
        };
        let Some((_, f)) = self.table.iter().find(|(n, _)| n == name) else {
            let _ = writeln!(stderr, "{name}: command not found");
            return Ok(127);
        };
        let mut ctx = UtilCtx {
            argv: argv.to_vec(),
            cwd: cwd.to_path_buf(),
            env: crate::Env::new(&self.env, self),
            stdin,
            stdout,
            stderr,
            host: self,
        };
        f(&mut ctx)
    }
    fn cancelled(&self) -> bool {
        false
    }
    fn sleep(&self, d: std::time::Duration) -> Result<(), Interrupt> {
        std::thread::sleep(d);
        Ok(())
    }
    fn command_kind(&self, name: &str) -> Option<&'static str> {
        self.table
            .iter()
            .any(|(n, _)| *n == name)
            .then_some("utility")
    }
    /// Tests may reach servers on this machine: every request is allowed.
    fn egress(&self, _request: &crate::Egress<'_>) -> Result<(), Interrupt> {
        Ok(())
    }
}

/// What a [`RecordingHost`] saw, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `check_read` of a path.
    Read(std::path::PathBuf),
    /// `check_write` of a path.
    Write(std::path::PathBuf),
    /// An egress request: tool, url, scheme, host, port, method.
    Egress {
        /// The tool.
        tool: String,
        /// The full URL.
        url: String,
        /// `http` / `https`.
        scheme: String,
        /// The host.
        host: String,
        /// The port.
        port: u16,
        /// The method.
        method: String,
    },
    /// `received_from(host)`.
    Received(String),
}

/// A [`TestHost`] that records reads, writes, egress requests and responses, and
/// refuses egress when `refuse_egress` is set (for host-contract tests).
pub struct RecordingHost {
    /// Where everything else goes.
    pub inner: TestHost,
    /// Refuse every egress request.
    pub refuse_egress: bool,
    /// The events seen, in order.
    pub events: std::sync::Mutex<Vec<Event>>,
}

impl RecordingHost {
    /// A recording host around a [`TestHost`] with no inner commands.
    pub fn new(refuse_egress: bool) -> Self {
        RecordingHost {
            inner: TestHost {
                table: Vec::new(),
                env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
            },
            refuse_egress,
            events: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The events recorded so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    fn push(&self, e: Event) {
        if let Ok(mut v) = self.events.lock() {
            v.push(e);
        }
    }
}

impl Host for RecordingHost {
    fn check_read(&self, path: &Path) -> std::io::Result<()> {
        self.push(Event::Read(path.to_path_buf()));
        Ok(())
    }
    fn check_write(&self, path: &Path) -> std::io::Result<()> {
        self.push(Event::Write(path.to_path_buf()));
        Ok(())
    }
    fn run(
        &self,
        argv: &[String],
        cwd: &Path,
        stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> UtilResult {
        self.inner.run(argv, cwd, stdin, stdout, stderr)
    }
    fn cancelled(&self) -> bool {
        false
    }
    fn sleep(&self, d: std::time::Duration) -> Result<(), Interrupt> {
        self.inner.sleep(d)
    }
    fn command_kind(&self, name: &str) -> Option<&'static str> {
        self.inner.command_kind(name)
    }
    fn egress(&self, r: &crate::Egress<'_>) -> Result<(), Interrupt> {
        self.push(Event::Egress {
            tool: r.tool.to_string(),
            url: r.url.to_string(),
            scheme: r.scheme.to_string(),
            host: r.host.to_string(),
            port: r.port,
            method: r.method.to_string(),
        });
        if self.refuse_egress {
            return Err(Interrupt(Box::new(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("{}: egress refused", r.tool),
            ))));
        }
        Ok(())
    }
    fn received_from(&self, host: &str) {
        self.push(Event::Received(host.to_string()));
    }
}

/// Runs utility `f` against `host`; an interrupt is returned as `Err` with what was
/// written so far.
pub fn run_util_on(
    f: UtilFn,
    argv: &[&str],
    stdin: &[u8],
    cwd: &Path,
    host: &dyn Host,
) -> (Result<i32, Interrupt>, Output) {
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    let mut input = stdin;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let r = {
        let mut ctx = UtilCtx {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: cwd.to_path_buf(),
            env: crate::Env::new(&env, host),
            stdin: &mut input,
            stdout: &mut stdout,
            stderr: &mut stderr,
            host,
        };
        f(&mut ctx)
    };
    let status = *r.as_ref().unwrap_or(&125);
    (
        r,
        Output {
            status,
            stdout,
            stderr,
        },
    )
}

/// What a utility produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Exit status.
    pub status: i32,
    /// Bytes written to stdout.
    pub stdout: Vec<u8>,
    /// Bytes written to stderr.
    pub stderr: Vec<u8>,
}

impl Output {
    /// Stdout as (lossy) text.
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs utility `f` with `argv` in `cwd`, feeding `stdin`; inner commands come from `table`.
pub fn run_util(
    f: UtilFn,
    argv: &[&str],
    stdin: &[u8],
    cwd: &Path,
    table: &[(&'static str, UtilFn)],
) -> Output {
    let host = TestHost {
        table: table.to_vec(),
        env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
    };
    let mut input = stdin;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let status = {
        let mut ctx = UtilCtx {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: cwd.to_path_buf(),
            env: crate::Env::new(&host.env, &host),
            stdin: &mut input,
            stdout: &mut stdout,
            stderr: &mut stderr,
            host: &host,
        };
        f(&mut ctx).unwrap_or(125)
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Runs the real program `argv[0]` (the oracle) with the same inputs, in the C locale.
pub fn run_real(argv: &[&str], stdin: &[u8], cwd: &Path) -> Output {
    use std::process::{Command, Stdio};
    let spawned = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = spawned else {
        return Output {
            status: 127,
            stdout: Vec::new(),
            stderr: b"spawn failed".to_vec(),
        };
    };
    if let Some(mut si) = child.stdin.take() {
        let data = stdin.to_vec();
        std::thread::spawn(move || {
            let _ = si.write_all(&data);
        });
    }
    match child.wait_with_output() {
        Ok(o) => Output {
            status: o.status.code().unwrap_or(128),
            stdout: o.stdout,
            stderr: o.stderr,
        },
        Err(_) => Output {
            status: 128,
            stdout: Vec::new(),
            stderr: Vec::new(),
        },
    }
}
