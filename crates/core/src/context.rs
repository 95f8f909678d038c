//! The context store and the persistent history as a session sees them: which
//! store (the policy's state dir), whose values (project root, server session,
//! step), which limits, and the history entry of each script a face ran.

use crate::error::{ErrorCode, Refusal};
use crate::interp::Shell;
use crate::session::{ExecOutcome, Session};
use safesh_context::{
    ContextError, ContextStore, HistoryConfig, HistoryEntry, HistoryLog, Limits, Owners,
};
use safesh_policy::config::Config;
use std::path::PathBuf;
use std::sync::Arc;

/// The step owner of a process's requests that run outside a server session:
/// unique per process, so two CLI processes never share a step.
fn process_owner() -> &'static str {
    static OWNER: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        format!("process:{}:{nanos:x}", std::process::id())
    });
    &OWNER
}

/// Step owners whose step scope holds values (so that ending a request that
/// never used it opens no database).
static STEPS_USED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes that `owner`'s step scope was written (call before writing it).
pub fn mark_step(owner: &str) {
    let mut v = STEPS_USED.lock().unwrap_or_else(|p| p.into_inner());
    if !v.iter().any(|o| o == owner) {
        v.push(owner.to_string());
    }
}

/// Whether `owner`'s step scope was written since the last call (forgets it).
fn take_step(owner: &str) -> bool {
    let mut v = STEPS_USED.lock().unwrap_or_else(|p| p.into_inner());
    let before = v.len();
    v.retain(|o| o != owner);
    v.len() != before
}

/// The project root: the directory of the trusted (applied) project
/// `safesh.toml`, else the directory the config was loaded for.
pub fn project_root(config: &Config) -> PathBuf {
    config
        .sources
        .iter()
        .rev()
        .find(|s| s.layer == "project" && s.applied)
        .and_then(|s| s.path.parent().map(PathBuf::from))
        .unwrap_or_else(|| config.base_dir.clone())
}

/// The owners of a request's scopes.
pub fn owners(config: &Config, session: Option<&str>) -> Owners {
    Owners {
        project: project_root(config).to_string_lossy().into_owned(),
        session: session.map(str::to_string),
        step: session.map_or_else(|| process_owner().to_string(), str::to_string),
    }
}

/// `[context]` limits of `config`.
pub fn limits(config: &Config) -> Limits {
    let d = Limits::default();
    Limits {
        max_value_bytes: config.context.max_value_bytes.unwrap_or(d.max_value_bytes),
        max_keys: config.context.max_keys.unwrap_or(d.max_keys),
    }
}

/// `[history]` settings of `config`.
pub fn history_config(config: &Config) -> HistoryConfig {
    let d = HistoryConfig::default();
    HistoryConfig {
        max_entries: config.history.max_entries.unwrap_or(d.max_entries),
        persist: config.history.persist.unwrap_or(d.persist),
    }
}

/// The process's context store for `config`'s state dir.
pub fn store(config: &Config) -> Result<Arc<ContextStore>, Refusal> {
    let Some(dir) = &config.state_dir else {
        return Err(Refusal::new(
            ErrorCode::ExecutionError,
            "the context store needs safesh's state directory ($XDG_STATE_HOME/safesh), \
             and none is known (set HOME or XDG_STATE_HOME)",
        )
        .rule("context.store"));
    };
    ContextStore::shared(dir).map_err(|e| store_refusal(&e))
}

/// The refusal for a store that cannot be used, or a limit.
pub fn store_refusal(e: &ContextError) -> Refusal {
    match e {
        ContextError::LimitExceeded { key, .. } => Refusal::new(
            ErrorCode::LimitExceeded,
            e.to_string(),
        )
        .rule(format!("context.{key}"))
        .suggest(format!(
            "store less (delete keys you no longer need), or raise [context] {key} in safesh.toml"
        )),
        _ => Refusal::new(ErrorCode::ExecutionError, e.to_string())
            .rule("context.store")
            .suggest("ask the human to repair safesh's state directory (context.db)"),
    }
}

impl Shell {
    /// The config the shell's policy was built from (`None`: a library shell).
    pub(crate) fn context_config(&self) -> Option<&Config> {
        self.shared.policy.as_ref().map(|p| p.config())
    }

    /// The owners of this shell's scopes.
    pub(crate) fn context_owners(&self) -> Option<Owners> {
        let c = self.context_config()?;
        Some(owners(c, self.context_session.as_deref()))
    }
}

/// What a face ran, for its history entry.
pub struct HistoryRecord<'a> {
    /// `cli`, `json-rpc`, `mcp`.
    pub face: &'a str,
    /// The script (or quoted argv) as the caller gave it.
    pub script: &'a str,
    /// The caller's declared intent.
    pub intent: Option<serde_json::Value>,
    /// What it produced.
    pub outcome: &'a ExecOutcome,
    /// Its verification summary (`{passed, results: [{type, passed}]}`, no
    /// values), when the request had `verify`.
    pub verification: Option<serde_json::Value>,
}

impl<'a> HistoryRecord<'a> {
    /// The record of `script` run by `face`, without an intent.
    pub fn new(face: &'a str, script: &'a str, outcome: &'a ExecOutcome) -> Self {
        HistoryRecord {
            face,
            script,
            intent: None,
            outcome,
            verification: None,
        }
    }
}

/// A project spec run's one history entry: the run's `command` (`spec run
/// NAME plan HASH`), status 0 when it passed (else 1 and `error`), and `run`, the
/// report's summary (no output, no `actual`). Best effort, like every entry.
pub struct RunRecord<'a> {
    /// Which face ran it.
    pub face: &'a str,
    /// The server session the steps ran in.
    pub session: Option<&'a str>,
    /// The command line shown (`spec run NAME plan HASH`).
    pub command: String,
    /// The spec's goal.
    pub intent: Option<serde_json::Value>,
    /// Whether every step and the success criteria passed.
    pub passed: bool,
    /// The code that failed it (`PLAN_REFUSED`, `VERIFICATION_FAILED`, …).
    pub error: Option<String>,
    /// Wall time of the whole run.
    pub duration_ms: u64,
    /// The summary kept as the entry's `run`.
    pub run: serde_json::Value,
}

/// Appends `rec` to the history of `config`'s state dir.
pub fn record_run(config: &Config, rec: RunRecord<'_>) {
    let Some(dir) = &config.state_dir else {
        return;
    };
    let entry = HistoryEntry {
        id: String::new(),
        time_unix_ms: safesh_context::now_unix_ms(),
        face: rec.face.to_string(),
        session: rec.session.map(str::to_string),
        command: rec.command,
        intent: rec.intent,
        exit_code: if rec.passed { 0 } else { 1 },
        error: if rec.passed { None } else { rec.error },
        duration_ms: rec.duration_ms,
        label: HistoryEntry::label_summary(&safesh_label::Label::empty()),
        verification: None,
        run: Some(rec.run),
    };
    let _ = HistoryLog::new(dir).append(&entry, history_config(config));
}

impl Session {
    /// The `session` scope of the context store (and the step) belong to this
    /// server session from now on (`None`: no session scope).
    pub fn set_context_session(&mut self, id: Option<&str>) {
        self.shell_mut().context_session = id.map(Arc::from);
    }

    /// Appends the history entry of a script this session just ran, and clears
    /// the step scope (every request is a step). The command text has the known
    /// secret values withheld; the label is a summary of names. Best effort: a
    /// store that cannot be used costs the entry, never the result.
    pub fn record_history(&self, rec: HistoryRecord<'_>) {
        let shell = self.shell();
        let Some(config) = shell.context_config() else {
            return;
        };
        let hc = history_config(config);
        if config.state_dir.is_none() {
            return;
        }
        let command = match &shell.shared.flow {
            Some(flow) => flow.redact_known(rec.script.to_string()),
            None => rec.script.to_string(),
        };
        let o = rec.outcome;
        // A command that succeeded but failed its verification is recorded as
        // the result says it: status 1, VERIFICATION_FAILED.
        let verification_failed = o.exit_code == 0
            && o.error.is_none()
            && rec
                .verification
                .as_ref()
                .is_some_and(|v| v["passed"] == serde_json::Value::Bool(false));
        let entry = HistoryEntry {
            id: String::new(),
            time_unix_ms: safesh_context::now_unix_ms(),
            face: rec.face.to_string(),
            session: shell.context_session.as_deref().map(str::to_string),
            command,
            intent: rec.intent,
            exit_code: if verification_failed { 1 } else { o.exit_code },
            error: if verification_failed {
                Some(ErrorCode::VerificationFailed.to_string())
            } else {
                o.error.as_ref().map(|e| e.code.to_string())
            },
            duration_ms: o.duration_ms,
            label: HistoryEntry::label_summary(&o.label),
            verification: rec.verification,
            run: None,
        };
        if let Some(dir) = &config.state_dir {
            let _ = HistoryLog::new(dir).append(&entry, hc);
        }
        // The request's step is over (the store is opened only if it was used).
        if let Some(owners) = shell.context_owners()
            && take_step(&owners.step)
            && let Ok(store) = store(config)
        {
            let _ = store.clear_step(&owners.step);
        }
    }

    /// `text` with the secret values this session knows of replaced by
    /// `[secret]` (the backstop behind labels, for text whose label was lost:
    /// an assertion's detail or `actual`).
    pub fn redact_known(&self, text: &str) -> String {
        match &self.shell().shared.flow {
            Some(flow) => flow.redact_known(text.to_string()),
            None => text.to_string(),
        }
    }

    /// Clears this session's `step` scope (between pipeline steps).
    pub fn clear_step_context(&self) -> Result<(), Refusal> {
        let shell = self.shell();
        let (Some(config), Some(owners)) = (shell.context_config(), shell.context_owners()) else {
            return Ok(());
        };
        if config.state_dir.is_none() {
            return Ok(());
        }
        let store = store(config)?;
        store
            .clear_step(&owners.step)
            .map(drop)
            .map_err(|e| store_refusal(&e))
    }
}
