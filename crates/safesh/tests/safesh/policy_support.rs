//! Shared helpers of the policy suites (`policy_attacks.rs`, `policy_benign.rs`).
//!
//! A [`Project`] is a fresh temp tree:
//!
//! ```text
//! <tmp>/proj/            cwd of every run; holds safesh.toml (read = ["."], write = ["."])
//! <tmp>/proj/notes.txt   an ordinary file the scripts may use
//! <tmp>/home/            $HOME, empty
//! <tmp>/outside/         a sibling dir outside every root: secret.txt (SECRET), script.sh
//! ```
//!
//! safesh runs with the environment cleared except `PATH=/usr/bin:/bin`, `LC_ALL=C` and
//! `HOME`, as `safesh --config <proj>/safesh.toml [opts] -c SCRIPT`, under a timeout
//! (a refusal that does not happen must not hang the suite: `sleep 600`, `vim`).

// Each test binary module uses a different subset of these helpers.
#![allow(dead_code)]

use crate::runner::kill_group;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The acceptance config of issue 3.
pub const ACCEPTANCE_CONFIG: &str = r#"[sandbox]
read = ["."]
write = ["."]
network = false

[commands.git]
allow = ["status", "log", "diff"]
deny_flags = ["-c"]
"#;

/// The content of the secret file outside the roots; must never reach stdout.
pub const SECRET: &str = "TOP-SECRET-7f3a9c-outside-the-roots";

/// Marker file an attack payload tries to create (in the project dir, or via `$PWD`).
pub const PWNED: &str = "pwned";
/// Created by the harness's prefix `touch canary`: must not exist when the script is
/// refused before running.
pub const CANARY: &str = "canary";
/// Created by the harness's suffix `touch after`: must not exist when a refusal stopped
/// the script.
pub const AFTER: &str = "after";

/// A run is killed after this long (a missing refusal of `sleep 600` or `vim`).
const TIMEOUT: Duration = Duration::from_secs(20);

/// What one run of safesh produced.
#[derive(Debug)]
pub struct Run {
    /// The script (or argv) that ran, for messages.
    pub what: String,
    /// Exit status; -1 when killed by a signal or by the timeout.
    pub status: i32,
    /// Whether the harness killed it after [`TIMEOUT`].
    pub timed_out: bool,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
}

impl Run {
    /// The refusal code from stderr: the CODE of the first `safesh: CODE: message` line.
    pub fn stderr_code(&self) -> Option<String> {
        self.stderr.lines().find_map(|l| {
            let rest = l.strip_prefix("safesh: ")?;
            let (code, _) = rest.split_once(':')?;
            let is_code = !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit());
            is_code.then(|| code.to_string())
        })
    }

    /// stdout parsed as one JSON object (for `--json` and `check --json`).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{}", self.dump()))
    }

    /// A readable description of the whole run, for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "  script: {:?}\n  status: {}{}\n  stdout: {:?}\n  stderr: {:?}",
            self.what,
            self.status,
            if self.timed_out { " (TIMED OUT)" } else { "" },
            self.stdout,
            self.stderr
        )
    }

    /// Nothing secret reached the output.
    pub fn assert_no_leak(&self) {
        assert!(
            !self.stdout.contains(SECRET) && !self.stderr.contains(SECRET),
            "the outside secret leaked:\n{}",
            self.dump()
        );
        assert!(
            !self.stdout.contains("root:x:0:0"),
            "/etc/passwd leaked:\n{}",
            self.dump()
        );
    }

    /// A human-format refusal: status 126, `safesh: CODE: message` on stderr with the
    /// given code, and a `suggestion:` line.
    pub fn assert_refused(&self, code: &str) {
        self.assert_refused_one_of(&[code]);
    }

    /// Like [`Run::assert_refused`], where the contract leaves which of several checks
    /// fires first open (e.g. a denied flag on a denied subcommand).
    pub fn assert_refused_one_of(&self, codes: &[&str]) {
        assert!(!self.timed_out, "timed out (not refused):\n{}", self.dump());
        let got = self.stderr_code();
        assert!(
            got.as_deref().is_some_and(|c| codes.contains(&c)),
            "want refusal code {codes:?}, got {got:?}:\n{}",
            self.dump()
        );
        assert_eq!(self.status, 126, "refusal status:\n{}", self.dump());
        assert!(
            self.stderr.lines().any(|l| l.starts_with("suggestion:")),
            "no `suggestion:` line on stderr:\n{}",
            self.dump()
        );
        self.assert_no_leak();
    }

    /// No policy refusal at all: status 0 and no `safesh: CODE:` line.
    pub fn assert_ok(&self) {
        assert!(!self.timed_out, "timed out:\n{}", self.dump());
        assert_eq!(self.stderr_code(), None, "refused:\n{}", self.dump());
        assert_eq!(self.status, 0, "status:\n{}", self.dump());
    }

    /// [`Run::assert_ok`] and stdout is exactly `want`.
    pub fn assert_ok_with(&self, want: &str) {
        self.assert_ok();
        assert_eq!(self.stdout, want, "stdout:\n{}", self.dump());
    }
}

/// A temp project with a config, an empty HOME and an outside secret.
pub struct Project {
    _tmp: tempfile::TempDir,
    /// The canonical temp dir holding all three.
    pub root: PathBuf,
    /// The project dir (cwd of every run).
    pub dir: PathBuf,
    /// `$HOME`: an empty dir outside the project.
    pub home: PathBuf,
    /// A sibling dir outside every root.
    pub outside: PathBuf,
    /// The config file (`<dir>/safesh.toml`).
    pub config: PathBuf,
}

impl Project {
    /// A project with the acceptance config.
    pub fn new() -> Project {
        Project::with_config(ACCEPTANCE_CONFIG)
    }

    /// A project with the acceptance config followed by `extra` (new tables only).
    pub fn with_extra(extra: &str) -> Project {
        Project::with_config(&format!("{ACCEPTANCE_CONFIG}\n{extra}\n"))
    }

    /// A project whose config is exactly `config`.
    pub fn with_config(config: &str) -> Project {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let dir = root.join("proj");
        let home = root.join("home");
        let outside = root.join("outside");
        for d in [&dir, &home, &outside] {
            std::fs::create_dir(d).expect("create dir");
        }
        std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).expect("secret");
        std::fs::write(
            outside.join("script.sh"),
            "bash -c 'touch pwned'\necho sourced-outside\n",
        )
        .expect("outside script");
        std::fs::write(
            dir.join("notes.txt"),
            "alpha one\nbeta two\ngamma three\nalpha four\n",
        )
        .expect("notes");
        let config_path = dir.join("safesh.toml");
        std::fs::write(&config_path, config).expect("config");
        Project {
            _tmp: tmp,
            root,
            dir,
            home,
            outside,
            config: config_path,
        }
    }

    /// The absolute path of `rel` inside the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The outside secret file's absolute path, as a string for scripts.
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

    /// Write an executable shell script inside the project (a planted program).
    pub fn write_exe(&self, rel: &str, content: &str) {
        self.write(rel, content);
        let p = self.path(rel);
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// A planted program that creates `$PWD/pwned` (absolute, so it lands in the
    /// project whatever its cwd is).
    pub fn plant(&self, rel: &str) {
        let marker = self.path(PWNED);
        self.write_exe(
            rel,
            &format!(
                "#!/bin/sh\ntouch '{}'\necho planted-ran\n",
                marker.display()
            ),
        );
    }

    /// A symlink inside the project at `rel` pointing at `target`.
    pub fn symlink(&self, target: &Path, rel: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("symlink");
    }

    /// Make `.git/hooks` and `.git/config` exist (without running git).
    pub fn fake_git_dir(&self) {
        self.write(".git/config", "[core]\n\trepositoryformatversion = 0\n");
        self.write(".git/HEAD", "ref: refs/heads/main\n");
        std::fs::create_dir_all(self.path(".git/hooks")).expect("hooks dir");
        std::fs::create_dir_all(self.path(".git/objects")).expect("objects dir");
        std::fs::create_dir_all(self.path(".git/refs")).expect("refs dir");
    }

    /// Run safesh with `--config FILE` followed by `args`.
    pub fn run_args(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
        cmd.arg("--config").arg(&self.config).args(args);
        self.spawn(cmd, args.join(" "))
    }

    /// `safesh --config FILE -c SCRIPT`.
    pub fn run(&self, script: &str) -> Run {
        self.run_args(&["-c", script])
    }

    /// `safesh --config FILE --force -c SCRIPT`.
    pub fn run_forced(&self, script: &str) -> Run {
        self.run_args(&["--force", "-c", script])
    }

    /// `safesh --config FILE --json -c SCRIPT`, stdout parsed.
    pub fn run_json(&self, script: &str) -> (Run, serde_json::Value) {
        let r = self.run_args(&["--json", "-c", script]);
        let v = r.json();
        (r, v)
    }

    /// `safesh --config FILE check -c SCRIPT`.
    pub fn check(&self, script: &str) -> Run {
        self.run_args(&["check", "-c", script])
    }

    /// `safesh --config FILE check -c SCRIPT --json`, stdout parsed and shape-checked.
    pub fn check_json(&self, script: &str) -> (Run, serde_json::Value) {
        let r = self.run_args(&["check", "-c", script, "--json"]);
        let v = r.json();
        assert_eq!(
            v["schema_version"],
            1,
            "check schema_version:\n{}",
            r.dump()
        );
        assert!(v["allowed"].is_boolean(), "check `allowed`:\n{}", r.dump());
        assert!(v["commands"].is_array(), "check `commands`:\n{}", r.dump());
        let want_status = if v["allowed"] == true { 0 } else { 1 };
        assert_eq!(
            r.status,
            want_status,
            "check status vs allowed:\n{}",
            r.dump()
        );
        (r, v)
    }

    fn spawn(&self, mut cmd: Command, what: String) -> Run {
        cmd.current_dir(&self.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group, so the timeout can kill anything it started.
            .process_group(0);
        collect(cmd, what)
    }

    // ---- side-effect checks -------------------------------------------------------

    /// `rel` does not exist in the project (not even as a dangling symlink).
    pub fn assert_absent(&self, rel: &str, run: &Run) {
        assert!(
            self.path(rel).symlink_metadata().is_err(),
            "`{rel}` was created, so something ran:\n{}",
            run.dump()
        );
    }

    /// `rel` exists in the project.
    pub fn assert_present(&self, rel: &str, run: &Run) {
        assert!(
            self.path(rel).symlink_metadata().is_ok(),
            "`{rel}` is missing:\n{}",
            run.dump()
        );
    }

    /// The outside dir holds exactly its two original files, unchanged.
    pub fn assert_outside_untouched(&self, run: &Run) {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        assert_eq!(
            names,
            ["script.sh", "secret.txt"],
            "the outside dir was changed:\n{}",
            run.dump()
        );
        let secret = std::fs::read_to_string(self.outside.join("secret.txt")).unwrap_or_default();
        assert_eq!(secret, format!("{SECRET}\n"), "secret.txt was modified");
        // safesh's own state may appear under ~/.local/state/safesh; nothing else may.
        let mut home = Vec::new();
        walk_files(&self.home, &mut home);
        let state = self.home.join(".local/state/safesh");
        home.retain(|f| !f.starts_with(&state));
        assert!(
            home.is_empty(),
            "HOME was written: {home:?}\n{}",
            run.dump()
        );
    }

    /// The config file still has the content it was created with.
    pub fn assert_config_unchanged(&self, original: &str, run: &Run) {
        let now = std::fs::read_to_string(&self.config).unwrap_or_default();
        assert_eq!(now, original, "safesh.toml was modified:\n{}", run.dump());
    }

    // ---- the two attack shapes ----------------------------------------------------

    /// A refusal decidable before running: `touch canary` + `attack` + `touch after`
    /// must refuse with `code` and run nothing (no canary, no pwned, no after, nothing
    /// outside changed, nothing secret on stdout).
    pub fn assert_refused_before_running(&self, attack: &str, code: &str) -> Run {
        self.assert_refused_before_running_one_of(attack, &[code])
    }

    /// [`Project::assert_refused_before_running`] accepting any of `codes`.
    pub fn assert_refused_before_running_one_of(&self, attack: &str, codes: &[&str]) -> Run {
        let script = format!("touch {CANARY}\n{attack}\ntouch {AFTER}");
        let r = self.run(&script);
        r.assert_refused_one_of(codes);
        self.assert_absent(CANARY, &r);
        self.assert_no_side_effect(&r);
        r
    }

    /// A refusal that may be decided only when reached (names or args from expansion):
    /// `attack` + `touch after` must refuse with `code`, the payload must not have run
    /// and the script must stop there.
    pub fn assert_refused_when_reached(&self, attack: &str, code: &str) -> Run {
        self.assert_refused_when_reached_one_of(attack, &[code])
    }

    /// [`Project::assert_refused_when_reached`] accepting any of `codes`.
    pub fn assert_refused_when_reached_one_of(&self, attack: &str, codes: &[&str]) -> Run {
        let script = format!("{attack}\ntouch {AFTER}");
        let r = self.run(&script);
        r.assert_refused_one_of(codes);
        self.assert_no_side_effect(&r);
        r
    }

    /// No payload marker, no trailing marker, outside untouched, no leak.
    pub fn assert_no_side_effect(&self, r: &Run) {
        self.assert_absent(PWNED, r);
        self.assert_absent(AFTER, r);
        self.assert_outside_untouched(r);
        r.assert_no_leak();
        assert!(
            !r.stdout.contains("planted-ran") && !r.stdout.contains("sourced-outside"),
            "a planted program ran:\n{}",
            r.dump()
        );
    }
}

/// The first command entry of a `check --json` result.
pub fn check_entry(v: &serde_json::Value, i: usize) -> &serde_json::Value {
    &v["commands"][i]
}

/// The entries of a `check --json` result whose `command` text contains `needle`.
pub fn check_entries<'a>(v: &'a serde_json::Value, needle: &str) -> Vec<&'a serde_json::Value> {
    v["commands"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| c["command"].as_str().is_some_and(|t| t.contains(needle)))
                .collect()
        })
        .unwrap_or_default()
}

/// Every non-directory entry under `dir`, recursively (symlinks not followed).
pub(crate) fn walk_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk_files(&p, out),
            _ => out.push(p),
        }
    }
}

/// Reads a child's pipe to the end on a thread.
pub(crate) fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Runs a prepared `safesh` command (own process group) to completion or
/// [`TIMEOUT`], killing whatever it started on timeout, and collects its output.
pub fn collect(mut cmd: Command, what: String) -> Run {
    let mut child = cmd.spawn().expect("start safesh");
    let pgid = child.id();
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().expect("wait for safesh") {
            Some(st) => break st.code().unwrap_or(-1),
            None if start.elapsed() > TIMEOUT => {
                timed_out = true;
                kill_group(pgid);
                let _ = child.kill();
                let _ = child.wait();
                break -1;
            }
            None => thread::sleep(Duration::from_millis(5)),
        }
    };
    // Readers end when every holder of the pipes is gone; never wait forever.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(out.is_finished() && err.is_finished()) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    if !(out.is_finished() && err.is_finished()) {
        kill_group(pgid);
        timed_out = true;
    }
    let take = |h: thread::JoinHandle<Vec<u8>>| {
        if h.is_finished() {
            String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
        } else {
            String::from("<reader still blocked>")
        }
    };
    Run {
        what,
        status,
        timed_out,
        stdout: take(out),
        stderr: take(err),
    }
}
