//! What every face needs from the merged config: the policy, interpreter limits,
//! the output cap, the state directory and the session/job knobs.

use crate::error::ServerError;
use safesh_core::{Limits, Session, SessionOptions};
use safesh_policy::Policy;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The model-facing output cap when the config sets none (bytes).
pub const DEFAULT_CAP: usize = 16 * 1024;
/// The largest request timeout when the config sets none (ms).
pub const DEFAULT_MAX_TIMEOUT_MS: u64 = 600_000;
/// Idle sessions are ended after this long when nothing else is set.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);
/// Live sessions allowed at once when nothing else is set (`--max-sessions N`
/// changes it). Enough for 100 concurrent agents out of the box.
pub const DEFAULT_MAX_SESSIONS: usize = 128;
/// Default limit on live MCP-over-HTTP transport sessions (past it the least
/// recently used one is closed to make room).
pub const DEFAULT_MAX_TRANSPORT_SESSIONS: usize = 256;
/// Bytes of a job's output kept in memory (older bytes are read from its log file).
pub const DEFAULT_JOB_RING: usize = 1024 * 1024;
/// Spill files older than this are removed when a new one is written.
pub const SPILL_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// Server-wide settings, shared by every session and job.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The merged policy; every session gets its own clone.
    pub policy: Policy,
    /// Interpreter limits for every session.
    pub limits: Limits,
    /// Model-facing output cap in bytes.
    pub cap: usize,
    /// safesh's state directory (spill files, job logs).
    pub state_dir: PathBuf,
    /// The largest `timeout_ms` a request may ask for.
    pub max_timeout_ms: u64,
    /// Sessions unused for this long are ended.
    pub idle: Duration,
    /// Live sessions allowed at once.
    pub max_sessions: usize,
    /// Live MCP-over-HTTP transport sessions allowed at once (a limit of its
    /// own: a client holds one transport session and any number of shell sessions).
    pub max_transport_sessions: usize,
    /// Bytes of each job's output kept in memory.
    pub job_ring: usize,
    /// How long spill files are kept.
    pub spill_retention: Duration,
    /// Bytes one spill file or job log keeps (see [`crate::spill`]).
    pub spill_max_bytes: u64,
    /// Bytes all spill files and job logs keep together.
    pub spill_total_bytes: u64,
    /// Run scripts on the calling thread instead of a new thread per request.
    /// Only for callers whose threads have [`SHELL_STACK`] bytes of stack (the
    /// faces' runtimes and job threads do); it saves a thread per request.
    pub on_calling_thread: bool,
    /// Run sessionless requests in a worker process started this way (the
    /// isolation model, `worker.rs`); `None`: in this process.
    pub worker: Option<crate::worker::WorkerSpawn>,
    /// The output redaction of `policy`'s config, made on first use
    /// ([`Settings::redaction`]).
    redaction: std::sync::OnceLock<Option<std::sync::Arc<crate::shape::Redaction>>>,
}

/// The stack an interpreter thread needs (as the core gives its own threads).
pub const SHELL_STACK: usize = 64 * 1024 * 1024;

impl Settings {
    /// Settings from a policy (its config's `[limits]` and state directory).
    pub fn from_policy(policy: Policy) -> Settings {
        let config = policy.config();
        let c = &config.limits;
        let mut limits = Limits::default();
        for (slot, v) in [
            (&mut limits.loop_iterations, c.loop_iterations),
            (&mut limits.call_depth, c.call_depth),
            (&mut limits.commands, c.commands),
            (&mut limits.substitution_depth, c.substitution_depth),
            (&mut limits.brace_expansion, c.brace_expansion),
            (&mut limits.string_bytes, c.string_bytes),
            (&mut limits.script_bytes, c.script_bytes),
            (&mut limits.script_timeout_ms, c.script_timeout_ms),
            (&mut limits.processes, c.processes),
        ] {
            if let Some(v) = v {
                *slot = v;
            }
        }
        let cap = c
            .output_bytes
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX))
            .filter(|b| *b > 0)
            .unwrap_or(DEFAULT_CAP);
        let max_timeout_ms = c.max_timeout_ms.unwrap_or(DEFAULT_MAX_TIMEOUT_MS);
        let state_dir = config.state_dir.clone().unwrap_or_else(default_state_dir);
        // No file safesh writes for a command outgrows `[limits] file_size_mb`:
        // a spill file or job log keeps at most that (and at most the default).
        let spill_max_bytes = c
            .file_size_mb
            .map(|m| m.saturating_mul(1 << 20).max(1))
            .map_or(crate::spill::DEFAULT_MAX_BYTES, |b| {
                b.min(crate::spill::DEFAULT_MAX_BYTES)
            });
        Settings {
            policy,
            limits,
            cap,
            state_dir,
            max_timeout_ms,
            idle: DEFAULT_IDLE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_transport_sessions: DEFAULT_MAX_TRANSPORT_SESSIONS,
            job_ring: DEFAULT_JOB_RING,
            spill_retention: SPILL_RETENTION,
            spill_max_bytes,
            spill_total_bytes: crate::spill::DEFAULT_TOTAL_BYTES,
            on_calling_thread: false,
            worker: None,
            redaction: std::sync::OnceLock::new(),
        }
    }

    /// Settings from the built-in config (library use and tests).
    pub fn builtin(cwd: &Path, state_dir: &Path) -> Result<Settings, ServerError> {
        let opts = safesh_policy::config::LoadOptions {
            config_file: None,
            cwd: cwd.to_path_buf(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            xdg_state_home: Some(state_dir.to_path_buf()),
            xdg_config_home: Some(state_dir.join("no-config")),
            no_project: true,
        };
        let config =
            safesh_policy::config::load(&opts).map_err(|e| ServerError::Config(e.to_string()))?;
        let mut s = Settings::from_policy(Policy::new(config));
        s.state_dir = state_dir.to_path_buf();
        Ok(s)
    }

    /// The redaction of every request's output, made once from `policy`'s
    /// config: building its classifier per request (cloning every label rule
    /// of the config) was 4% of a worker's CPU per call. Its label cache is
    /// shared by the requests, as a label is a pure function of the paths and
    /// the config ([`safesh_flow::classify::Classifier`]).
    pub fn redaction(&self) -> Option<std::sync::Arc<crate::shape::Redaction>> {
        self.redaction
            .get_or_init(|| {
                crate::shape::Redaction::from_config(self.policy.config()).map(std::sync::Arc::new)
            })
            .clone()
    }

    /// The directory of spill files.
    pub fn spill_dir(&self) -> PathBuf {
        self.state_dir.join("spill")
    }

    /// The directory of job logs.
    pub fn jobs_dir(&self) -> PathBuf {
        self.state_dir.join("jobs")
    }

    /// Clamps a requested timeout to the configured maximum.
    pub fn clamp_timeout(&self, ms: u64) -> u64 {
        ms.min(self.max_timeout_ms)
    }

    /// A new session under this policy.
    pub fn new_session(&self, cwd: Option<PathBuf>, env: &[(String, String)]) -> Session {
        self.new_session_on(cwd, env, self.on_calling_thread)
    }

    /// A new session; `on_calling_thread` when the caller's thread has
    /// [`SHELL_STACK`] bytes of stack.
    pub fn new_session_on(
        &self,
        cwd: Option<PathBuf>,
        env: &[(String, String)],
        on_calling_thread: bool,
    ) -> Session {
        Session::new(self.session_options(cwd, env, on_calling_thread))
    }

    /// The options of a session under this policy (`env` added to this process's).
    pub fn session_options(
        &self,
        cwd: Option<PathBuf>,
        env: &[(String, String)],
        on_calling_thread: bool,
    ) -> SessionOptions {
        let mut opts = SessionOptions {
            limits: self.limits,
            policy: Some(self.policy.clone()),
            on_calling_thread,
            ..SessionOptions::default()
        };
        // Without one, sessions start where the policy was loaded (what `.` means in
        // its roots), not wherever this process happens to run.
        opts.cwd = cwd.unwrap_or_else(|| self.policy.config().base_dir.clone());
        for (k, v) in env {
            opts.env.retain(|(n, _)| n != k);
            opts.env.push((k.clone(), v.clone()));
        }
        opts
    }
}

/// `$XDG_STATE_HOME/safesh`, else `~/.local/state/safesh`, else a temp dir.
fn default_state_dir() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(x) = var("XDG_STATE_HOME") {
        return x.join("safesh");
    }
    if let Some(h) = var("HOME") {
        return h.join(".local/state/safesh");
    }
    std::env::temp_dir().join("safesh-state")
}

/// Creates `dir` (and parents) readable only by this user.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
