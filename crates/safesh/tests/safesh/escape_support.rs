//! Shared helpers of the sandbox escape suite (`escape.rs`).
//!
//! An [`Arena`] is a fresh temp tree, laid out like the acceptance runs of issue 4:
//!
//! ```text
//! <tmp>/proj/              cwd of every run; holds safesh.toml (python3 allowed,
//!                          read = ["."], write = ["."], network off, low limits)
//! <tmp>/proj/notes.txt     an ordinary file
//! <tmp>/home/              $HOME: .ssh/id_rsa (HOME_SECRET), .bashrc (BASHRC)
//! <tmp>/outside/           a sibling dir outside every root: secret.txt (SECRET)
//! ```
//!
//! safesh runs as `safesh --config <proj>/safesh.toml -c SCRIPT` with the environment
//! cleared except `PATH=/usr/bin:/bin`, `LC_ALL=C` and `HOME`, under a harness timeout.
//! Every attack is a python program whose prelude first prints [`STARTED`] (so no test
//! passes because nothing ran) and whose `attempt(what, fn)` prints `ESCAPED what: …`
//! when the escape worked and `blocked what: …` when it raised (or read nothing: a
//! secret masked by `/dev/null`). `SAFESH_ESCAPE_VERBOSE=1` prints every run
//! (with `--nocapture`), to review what each attack saw.

// Each test uses a different subset of these helpers.
#![allow(dead_code)]

use crate::policy_support::{drain, walk_files};
use crate::runner::kill_group;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The acceptance config of the brief.
pub const CONFIG: &str = r#"[sandbox]
read = ["."]
write = ["."]
network = false

[limits]
timeout_ms = 5000
memory_mb = 256
processes = 64
file_size_mb = 64

[commands."/usr/bin/python3"]
allow = true

[commands.python3]
allow = true
"#;

/// Printed first by every attack program.
pub const STARTED: &str = "STARTED";
/// Printed by `attempt` when an escape worked.
pub const ESCAPED: &str = "ESCAPED";
/// Content of the sibling dir's secret file.
pub const SECRET: &str = "OUTSIDE-SECRET-51c0d2-sibling-dir";
/// Content of the planted `$HOME/.ssh/id_rsa`.
pub const HOME_SECRET: &str = "HOME-SECRET-9b4e77-id-rsa";
/// Content of the planted `$HOME/.bashrc`.
pub const BASHRC: &str = "# original bashrc\n";
/// Values of secrets set in safesh's own environment.
pub const AWS_SECRET: &str = "AWSSECRET-0e7d1f-never-in-a-child";
/// See [`AWS_SECRET`].
pub const GITHUB_SECRET: &str = "ghp_GITHUBSECRET-a8c4b2-never-in-a-child";

/// A run is killed after this long (a sandbox that does not stop a program).
const HARNESS_TIMEOUT: Duration = Duration::from_secs(25);

/// The python prelude of every attack program.
const PRELUDE: &str = r#"import os, sys, time, socket, ctypes, errno, struct, signal
print("STARTED", flush=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def attempt(what, fn):
    try:
        r = fn()
        if isinstance(r, bytes) and not r:
            # A secret masked by /dev/null reads as nothing: contained.
            print("blocked %s: read nothing" % what, flush=True)
            return False
        print("ESCAPED %s: %r" % (what, r), flush=True)
        return True
    except BaseException as e:
        print("blocked %s: %r" % (what, e), flush=True)
        return False

def raw_syscall(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r

def cfunc(name, *args):
    ctypes.set_errno(0)
    r = getattr(libc, name)(*args)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r

def read_file(p):
    with open(p, "rb") as f:
        return f.read(4096)

def write_file(p, data="pwned\n", mode="w"):
    with open(p, mode) as f:
        f.write(data)
    return "wrote " + p

"#;

/// What one run of safesh produced.
#[derive(Debug)]
pub struct Run {
    /// The script, for messages.
    pub what: String,
    /// Exit code; `None` when killed by a signal or by the harness.
    pub code: Option<i32>,
    /// The signal that ended safesh itself, if any.
    pub signal: Option<i32>,
    /// Whether the harness had to kill it.
    pub timed_out: bool,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Run {
    /// A readable description of the whole run, for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "  script: {:?}\n  code: {:?} signal: {:?}{} after {:?}\n  stdout: {:?}\n  stderr: {:?}",
            self.what,
            self.code,
            self.signal,
            if self.timed_out {
                " (HARNESS TIMEOUT)"
            } else {
                ""
            },
            self.elapsed,
            self.stdout,
            self.stderr
        )
    }

    /// The attack program really ran (its prelude printed the marker).
    pub fn assert_started(&self) {
        assert!(
            self.stdout.lines().any(|l| l == STARTED),
            "the attack never started (no `{STARTED}` line), so it proves nothing:\n{}",
            self.dump()
        );
    }

    /// No `attempt` reported success.
    pub fn assert_no_escape_reported(&self) {
        let hits: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| l.starts_with(ESCAPED))
            .collect();
        assert!(
            hits.is_empty(),
            "escape(s) succeeded inside the sandbox: {hits:?}\n{}",
            self.dump()
        );
    }

    /// `needle` appears in neither stdout nor stderr.
    pub fn assert_absent(&self, needle: &str, what: &str) {
        assert!(
            !self.stdout.contains(needle) && !self.stderr.contains(needle),
            "{what} reached the output ({needle:?}):\n{}",
            self.dump()
        );
    }

    /// stdout contains `needle`.
    pub fn assert_stdout_has(&self, needle: &str) {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}",
            self.dump()
        );
    }

    /// safesh itself ended by exiting (not killed by a signal, not hung).
    pub fn assert_safesh_exited(&self) {
        assert!(!self.timed_out, "safesh hung:\n{}", self.dump());
        assert!(
            self.code.is_some(),
            "safesh itself was killed by a signal:\n{}",
            self.dump()
        );
    }

    /// The refusal code from stderr: the CODE of the first `safesh: CODE: message` line.
    pub fn stderr_code(&self) -> Option<String> {
        self.stderr.lines().find_map(|l| {
            let rest = l.strip_prefix("safesh: ")?;
            let (code, _) = rest.split_once(':')?;
            let ok = !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit());
            ok.then(|| code.to_string())
        })
    }

    /// A plain successful run: exit 0, no refusal, stdout exactly `want`.
    pub fn assert_ok_with(&self, want: &str) {
        assert!(!self.timed_out, "timed out:\n{}", self.dump());
        assert_eq!(self.stderr_code(), None, "refused:\n{}", self.dump());
        assert_eq!(self.code, Some(0), "status:\n{}", self.dump());
        assert_eq!(self.stdout, want, "stdout:\n{}", self.dump());
    }
}

/// Extra settings of one run.
#[derive(Default)]
pub struct Opts<'a> {
    /// Variables added to safesh's (otherwise cleared) environment.
    pub env: Vec<(&'a str, &'a str)>,
    /// Bytes on safesh's stdin (else /dev/null).
    pub stdin: Option<&'a [u8]>,
    /// Give safesh a fresh pseudo-terminal as controlling terminal and stdin;
    /// the master side is returned in [`Run`]-less form through `pty_master`.
    pub pty: bool,
}

/// A temp project with a config, a HOME holding secrets and a sibling secret dir.
pub struct Arena {
    _tmp: tempfile::TempDir,
    /// The canonical temp dir holding everything.
    pub root: PathBuf,
    /// The project dir (cwd of every run).
    pub dir: PathBuf,
    /// `$HOME`, outside the project.
    pub home: PathBuf,
    /// A sibling dir outside every root.
    pub outside: PathBuf,
    /// `<dir>/safesh.toml`.
    pub config: PathBuf,
    /// The config text as written.
    pub config_text: String,
}

impl Arena {
    /// An arena with the acceptance config.
    pub fn new() -> Arena {
        Arena::with_config(CONFIG)
    }

    /// An arena with the acceptance config plus `extra` (new tables only).
    pub fn with_extra(extra: &str) -> Arena {
        Arena::with_config(&format!("{CONFIG}\n{extra}\n"))
    }

    /// An arena whose config is exactly `config`.
    pub fn with_config(config: &str) -> Arena {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let dir = root.join("proj");
        let home = root.join("home");
        let outside = root.join("outside");
        for d in [&dir, &home, &outside, &home.join(".ssh")] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).expect("secret");
        std::fs::write(home.join(".ssh/id_rsa"), format!("{HOME_SECRET}\n")).expect("id_rsa");
        std::fs::write(home.join(".bashrc"), BASHRC).expect("bashrc");
        std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").expect("notes");
        let config_path = dir.join("safesh.toml");
        std::fs::write(&config_path, config).expect("config");
        Arena {
            _tmp: tmp,
            root,
            dir,
            home,
            outside,
            config: config_path,
            config_text: config.to_string(),
        }
    }

    /// The absolute path of `rel` inside the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The sibling secret's path.
    pub fn secret_path(&self) -> String {
        self.outside.join("secret.txt").display().to_string()
    }

    /// Write a file inside the project (creating parent dirs).
    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, content).expect("write file");
    }

    /// Make a minimal `.git` dir (hooks, config) without running git.
    pub fn fake_git_dir(&self) {
        self.write(".git/config", "[core]\n\trepositoryformatversion = 0\n");
        self.write(".git/HEAD", "ref: refs/heads/main\n");
        for d in [".git/hooks", ".git/objects", ".git/refs"] {
            std::fs::create_dir_all(self.path(d)).expect("git dir");
        }
    }

    /// `safesh --config FILE -c SCRIPT`.
    pub fn run(&self, script: &str) -> Run {
        self.run_opts(script, &Opts::default()).0
    }

    /// Write the attack program `code` (after the prelude) to `<proj>/<file>` and run
    /// `python3 <file>` through safesh.
    pub fn python(&self, code: &str) -> Run {
        self.python_opts(code, &Opts::default())
    }

    /// [`Arena::python`] with extra options.
    pub fn python_opts(&self, code: &str, opts: &Opts) -> Run {
        self.write_attack(code);
        self.run_opts("python3 attack.py", opts).0
    }

    /// Write `code` (after the prelude) to `<proj>/attack.py` without running it,
    /// after checking on the host that it parses (an attack that dies of a syntax
    /// error would prove nothing; parsing runs none of it).
    pub fn write_attack(&self, code: &str) {
        let text = format!("{PRELUDE}{code}\n");
        let check = Command::new("/usr/bin/python3")
            .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                if let Some(mut i) = c.stdin.take() {
                    i.write_all(text.as_bytes())?;
                }
                c.wait_with_output()
            })
            .expect("run the host python to parse the attack");
        assert!(
            check.status.success(),
            "the attack program does not parse:\n{}\n{text}",
            String::from_utf8_lossy(&check.stderr)
        );
        self.write("attack.py", &text);
    }

    /// Run safesh; with `opts.pty` also returns the pty master (still open).
    pub fn run_opts(&self, script: &str, opts: &Opts) -> (Run, Option<OwnedFd>) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
        cmd.arg("--config")
            .arg(&self.config)
            .args(["-c", script])
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("HOME", &self.home)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let mut master = None;
        if opts.pty {
            let (m, slave) = open_pty();
            let slave_fd = slave.as_raw_fd();
            cmd.stdin(Stdio::from(slave));
            // SAFETY: setsid and ioctl are async-signal-safe; they make the pty the
            // controlling terminal of safesh's new session, like a login shell's.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let _ = slave_fd;
                    Ok(())
                });
            }
            master = Some(m);
        } else {
            cmd.process_group(0);
            cmd.stdin(if opts.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        }
        let start = Instant::now();
        let mut child = cmd.spawn().expect("start safesh");
        let pgid = child.id();
        if let (Some(data), Some(mut sink)) = (opts.stdin, child.stdin.take()) {
            let data = data.to_vec();
            thread::spawn(move || {
                use std::io::Write;
                let _ = sink.write_all(&data);
            });
        }
        let out = drain(child.stdout.take());
        let err = drain(child.stderr.take());
        let mut timed_out = false;
        let status = loop {
            match child.try_wait().expect("wait for safesh") {
                Some(st) => break Some(st),
                None if start.elapsed() > HARNESS_TIMEOUT => {
                    timed_out = true;
                    kill_group(pgid);
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                None => thread::sleep(Duration::from_millis(5)),
            }
        };
        let elapsed = start.elapsed();
        // Readers end when every holder of the pipes is gone: a leftover sandboxed
        // process still holding them is itself a finding, so never wait forever.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(out.is_finished() && err.is_finished()) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        let leftover = !(out.is_finished() && err.is_finished());
        if leftover {
            kill_group(pgid);
        }
        let take = |h: thread::JoinHandle<Vec<u8>>| {
            if h.is_finished() {
                String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
            } else {
                String::from("<a process outlived safesh and still holds the pipe>")
            }
        };
        use std::os::unix::process::ExitStatusExt;
        let run = Run {
            what: script.to_string(),
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            timed_out: timed_out || leftover,
            stdout: take(out),
            stderr: take(err),
            elapsed,
        };
        if std::env::var_os("SAFESH_ESCAPE_VERBOSE").is_some() {
            eprintln!("---- run\n{}", run.dump());
        }
        (run, master)
    }

    // ---- side-effect checks -------------------------------------------------------

    /// `rel` does not exist in the project (not even as a dangling symlink).
    pub fn assert_no_file(&self, rel: &str, run: &Run) {
        assert_missing(&self.path(rel), run);
    }

    /// The sibling dir holds exactly its secret, unchanged; HOME holds exactly what
    /// the arena planted (plus safesh's own state dir).
    pub fn assert_outside_untouched(&self, run: &Run) {
        let names = list_names(&self.outside);
        assert_eq!(
            names,
            ["secret.txt"],
            "the outside dir was changed:\n{}",
            run.dump()
        );
        let secret = std::fs::read_to_string(self.outside.join("secret.txt")).unwrap_or_default();
        assert_eq!(
            secret,
            format!("{SECRET}\n"),
            "outside secret.txt was modified:\n{}",
            run.dump()
        );
        let mut home = Vec::new();
        walk_files(&self.home, &mut home);
        let state = self.home.join(".local/state/safesh");
        home.retain(|f| !f.starts_with(&state));
        home.sort();
        assert_eq!(
            home,
            [self.home.join(".bashrc"), self.home.join(".ssh/id_rsa")],
            "HOME was changed:\n{}",
            run.dump()
        );
        let bashrc = std::fs::read_to_string(self.home.join(".bashrc")).unwrap_or_default();
        assert_eq!(bashrc, BASHRC, "~/.bashrc was modified:\n{}", run.dump());
    }

    /// No secret of the arena (sibling, HOME, environment) reached the output.
    pub fn assert_no_leak(&self, run: &Run) {
        run.assert_absent(SECRET, "the sibling dir's secret");
        run.assert_absent(HOME_SECRET, "$HOME/.ssh/id_rsa");
        run.assert_absent(AWS_SECRET, "AWS_SECRET_ACCESS_KEY");
        run.assert_absent(GITHUB_SECRET, "GITHUB_TOKEN");
    }

    /// The config file still has its original content.
    pub fn assert_config_unchanged(&self, run: &Run) {
        let now = std::fs::read_to_string(&self.config).unwrap_or_default();
        assert_eq!(
            now,
            self.config_text,
            "safesh.toml was modified:\n{}",
            run.dump()
        );
    }

    /// The usual end of an attack: it started, reported no escape, leaked nothing,
    /// changed nothing outside, left the config alone, and safesh itself survived.
    pub fn assert_contained(&self, run: &Run) {
        run.assert_started();
        run.assert_no_escape_reported();
        self.assert_no_leak(run);
        self.assert_outside_untouched(run);
        self.assert_config_unchanged(run);
        run.assert_safesh_exited();
    }
}

/// `path` does not exist (not even as a dangling symlink).
pub fn assert_missing(path: &Path, run: &Run) {
    assert!(
        path.symlink_metadata().is_err(),
        "{} exists: the escape had an effect:\n{}",
        path.display(),
        run.dump()
    );
}

/// A path in the real /tmp (or another host dir) unique to this test run.
pub fn unique_host_path(dir: &str, tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    PathBuf::from(dir).join(format!(
        "safesh-escape-{tag}-{}-{nanos}",
        std::process::id()
    ))
}

/// Removes a host path when dropped (a failed test must not leave litter in /tmp).
pub struct Cleanup(pub PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A quoted python string literal for a path or text.
pub fn py(s: impl AsRef<str>) -> String {
    format!("{:?}", s.as_ref())
}

fn list_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A new pseudo-terminal pair (master, slave).
pub fn open_pty() -> (OwnedFd, OwnedFd) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: openpty writes two fds into the locals; the null name/termios/winsize
    // pointers are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both fds were just opened by openpty and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// Bytes waiting on the pty for a reader of the terminal (what TIOCSTI would have
/// pushed): read them non-blockingly from a fresh fd on the slave side.
pub fn pty_pending_input(master: &OwnedFd) -> Vec<u8> {
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the buffer is 128 bytes long as passed.
    let rc = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
    if rc != 0 {
        return Vec::new();
    }
    // SAFETY: ptsname_r wrote a NUL-terminated string into `name`.
    let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
    else {
        return Vec::new();
    };
    let mut f = f;
    let mut buf = vec![0u8; 4096];
    match f.read(&mut buf) {
        Ok(n) => buf[..n].to_vec(),
        Err(_) => Vec::new(),
    }
}
