//! Checkpoints of the session's write roots ([`safesh_checkpoint`]) under the
//! session's policy: what a checkpoint leaves out (`[checkpoints]`, protected
//! paths, safesh's config and state, the session's `$TMPDIR`), the labels files
//! are saved and restored with, and the destructive commit point a restore
//! passes (audited like `rm`, asked for when its name or the PC is untrusted).
//! Used by the `checkpoint` builtin and [`crate::Session::checkpoint`] (the faces).

use crate::error::{ErrorCode, Refusal};
use crate::interp::Shell;
use safesh_checkpoint::{CheckpointError, Filter, SaveRequest, Settings, Store};
use safesh_context::{Item, NewValue, Scope};
use safesh_label::Label;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// One checkpoint operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointOp {
    /// Save the write roots (a generated name when `None`).
    Save(Option<String>),
    /// Put the write roots back as checkpoint NAME saw them.
    Restore(String),
    /// The project's checkpoints, oldest first.
    List,
    /// What changed from checkpoint A to B (or to now).
    Diff(String, Option<String>),
    /// Remove checkpoint NAME.
    Delete(String),
}

/// Why a checkpoint operation did not happen.
#[derive(Clone, Debug)]
pub enum CheckpointFailure {
    /// Bad input (a name that is not one, no such checkpoint): a usage error.
    Invalid(String),
    /// A refusal (a limit, a path outside the roots, the commit point, the store).
    Refused(Box<Refusal>),
}

impl From<Refusal> for CheckpointFailure {
    fn from(r: Refusal) -> Self {
        CheckpointFailure::Refused(Box::new(r))
    }
}

fn failure(e: CheckpointError) -> CheckpointFailure {
    let (code, suggest) = match &e {
        CheckpointError::BadName { .. }
        | CheckpointError::NotFound(_)
        | CheckpointError::Exists(_) => {
            return CheckpointFailure::Invalid(e.to_string());
        }
        CheckpointError::TooLarge { .. } => (
            ErrorCode::LimitExceeded,
            "exclude build output in [checkpoints] exclude, or ask the human to raise [checkpoints] max_mb",
        ),
        CheckpointError::Outside(_) => (
            ErrorCode::PathViolation,
            "a checkpoint is restored only inside the current write roots",
        ),
        _ => (ErrorCode::ExecutionError, "check safesh's state directory"),
    };
    Refusal::new(code, e.to_string())
        .rule("checkpoints")
        .suggest(suggest)
        .into()
}

impl Shell {
    /// Runs `op`; `words` is the label of the words that named it (a restore
    /// from a downloaded name is decided like `rm` of one).
    pub(crate) fn checkpoint_op(
        &mut self,
        op: &CheckpointOp,
        words: &Label,
    ) -> Result<Value, CheckpointFailure> {
        let Some(policy) = self.shared.policy.clone() else {
            return Err(Refusal::new(
                ErrorCode::ExecutionError,
                "checkpoints need a policy (its write roots)",
            )
            .into());
        };
        let config = policy.config();
        let Some(state) = config.state_dir.clone() else {
            return Err(Refusal::new(
                ErrorCode::ExecutionError,
                "checkpoints need safesh's state directory ($XDG_STATE_HOME/safesh)",
            )
            .rule("checkpoints")
            .into());
        };
        let store = Store::open(&state).map_err(failure)?;
        let project = config.base_dir.clone();
        // The project's write roots: not the session's own temp dir (another
        // process has another) nor anything of safesh's state.
        let temp = self.shared.temp_dir.clone();
        let roots: Vec<PathBuf> = policy
            .write_roots()
            .iter()
            .filter(|r| r.is_dir())
            .filter(|r| !temp.as_ref().is_some_and(|t| r.starts_with(t)))
            .filter(|r| !r.starts_with(&state))
            .cloned()
            .collect();
        let c = &config.checkpoints;
        let settings = Settings {
            exclude: c.exclude.clone(),
            max_bytes: c.max_mb.saturating_mul(1 << 20),
            keep: usize::try_from(c.keep).unwrap_or(usize::MAX),
            max_age_days: c.max_age_days,
            journal: c.journal,
        };
        // (Asked for every path of the tree: `$HOME` resolved once, here.)
        let checker = safesh_policy::protected::Checker::new(config.home.as_deref(), Some(&state));
        let protected = |p: &Path| {
            p.file_name().is_some_and(|n| n == "safesh.toml")
                || p.starts_with(&state)
                || temp.as_ref().is_some_and(|t| p.starts_with(t))
                || checker.reason(p).is_some()
        };
        let filter = Filter {
            exclude: &settings.exclude,
            protected: &protected,
        };
        // What `filter` depends on (a journal made under another is not
        // used): the session's temp dir only when a root holds it.
        let temp_in_roots = temp
            .as_ref()
            .filter(|t| roots.iter().any(|r| t.starts_with(r)));
        let filter_key = format!(
            "{:?}",
            (
                env!("CARGO_PKG_VERSION"),
                &state,
                temp_in_roots,
                &config.home,
                &settings.exclude
            )
        );
        match op {
            CheckpointOp::Save(name) => {
                // Each directory resolved once, not each file (the walk never
                // follows a symlink, so a file is its dir's canonical form
                // joined with its name): 10,000 files in 100 dirs cost 100
                // realpaths, not 20,000. Files come directory by directory: the
                // last one resolved is the one to keep.
                let last_dir: std::cell::RefCell<Option<(PathBuf, Option<PathBuf>)>> =
                    std::cell::RefCell::new(None);
                let label_of = |p: &Path| {
                    let real = p.parent().and_then(|d| {
                        let mut last = last_dir.borrow_mut();
                        if last.as_ref().is_none_or(|(dir, _)| dir != d) {
                            *last = Some((d.to_path_buf(), std::fs::canonicalize(d).ok()));
                        }
                        let (_, c) = last.as_ref()?;
                        Some(c.as_ref()?.join(p.file_name()?))
                    });
                    let l = self.file_label_resolved(p, real.as_deref());
                    crate::flow::worth_storing(&l)
                        .then(|| serde_json::to_string(&l).ok())
                        .flatten()
                };
                let extra = self.context_snapshot()?;
                // Taken before any label is asked for: a label written during
                // the save changes the next save's epoch, never this one's labels.
                let epoch = self.label_epoch(&roots);
                let saved = store
                    .save(
                        &SaveRequest {
                            project: &project,
                            roots: &roots,
                            name: name.as_deref(),
                            filter: &filter,
                            label_of: &label_of,
                            extra,
                            label_epoch: epoch.as_deref(),
                            journal: Some(&filter_key),
                        },
                        &settings,
                    )
                    .map_err(failure)?;
                Ok(json!(saved))
            }
            CheckpointOp::Restore(name) => {
                // No such checkpoint: a usage error, not a decision.
                let manifest = store.load(&project, name).map_err(failure)?;
                // A restore rewrites and removes files: the destructive commit
                // point, always (so it is audited), like `rm -r` of the roots.
                let data = words.join(&self.pc);
                self.commit(
                    safesh_flow::CommitPoint::Destructive {
                        targets: vec![name.clone()],
                        op: safesh_flow::DestructiveOp::RmR,
                    },
                    &data,
                    format!("checkpoint restore {name}"),
                    name,
                )?;
                let r = store
                    .restore(&project, name, &roots, &filter)
                    .map_err(failure)?;
                if let Some(flow) = self.shared.flow.clone() {
                    for (path, label) in &r.written {
                        let label = label
                            .as_deref()
                            .and_then(|l| serde_json::from_str::<Label>(l).ok())
                            .unwrap_or_else(Label::empty);
                        if path.is_file() {
                            flow.record_write(path, &label, false)?;
                        }
                    }
                }
                let context = self.restore_context(&manifest.extra)?;
                Ok(json!({
                    "name": name,
                    "written": r.written.iter().map(|(p, _)| p).collect::<Vec<_>>(),
                    "removed": r.removed,
                    "unchanged": r.unchanged,
                    "context": context,
                }))
            }
            CheckpointOp::List => Ok(json!(store.list(&project).map_err(failure)?)),
            CheckpointOp::Diff(a, b) => Ok(json!(
                store
                    .diff(&project, a, b.as_deref(), &filter)
                    .map_err(failure)?
            )),
            CheckpointOp::Delete(name) => {
                store.delete(&project, name).map_err(failure)?;
                Ok(json!({"deleted": name}))
            }
        }
    }
}

impl Shell {
    /// The label epoch of a save of `roots` (see
    /// [`safesh_checkpoint::SaveRequest::label_epoch`]): the flow's (config,
    /// label store, this process's writes), where the roots resolve to (a
    /// file's label is taken with its real path), and this build. `None`: no
    /// reuse.
    fn label_epoch(&self, roots: &[PathBuf]) -> Option<String> {
        use std::fmt::Write;
        // A `<(…)` file's label is this command's (host.rs): none then.
        if !crate::io::lock(&self.shared.temp_labels).is_empty() {
            return None;
        }
        let flow = self.shared.flow.as_ref()?;
        let mut text = format!("safesh {}\n", env!("CARGO_PKG_VERSION"));
        text.push_str(&flow.label_epoch()?);
        for r in roots {
            let real = std::fs::canonicalize(r).ok()?;
            let _ = write!(text, "\nroot: {r:?} {real:?}");
        }
        Some(text)
    }
}

/// A context item as a checkpoint keeps it (its labels with it).
fn item_json(item: &Item) -> Value {
    json!({
        "key": item.key,
        "value": item.value,
        "label": item.label,
        "key_label": item.key_label,
        "tags": item.tags,
    })
}

impl Shell {
    /// The context store's `project` scope and this session's `session` scope,
    /// saved with a checkpoint (`null` without a store).
    fn context_snapshot(&self) -> Result<Value, CheckpointFailure> {
        let (Some(config), Some(owners)) = (self.context_config(), self.context_owners()) else {
            return Ok(Value::Null);
        };
        if config.state_dir.is_none() {
            return Ok(Value::Null);
        }
        let store = crate::context::store(config)?;
        let list = |scope: Scope, owner: &str| -> Result<Vec<Value>, CheckpointFailure> {
            Ok(store
                .list(scope, owner, None)
                .map_err(|e| crate::context::store_refusal(&e))?
                .iter()
                .map(item_json)
                .collect())
        };
        let project = list(Scope::Project, &owners.project)?;
        let session = match &owners.session {
            Some(id) => Some(list(Scope::Session, id)?),
            None => None,
        };
        Ok(json!({"context": {"project": project, "session": session}}))
    }

    /// Puts the context scopes a checkpoint saved back: the project's scope
    /// exactly as it was, and the saved session scope into this session's (when
    /// it runs in one). What it did: `{project, session}` counts, or `null`.
    fn restore_context(&self, extra: &Value) -> Result<Value, CheckpointFailure> {
        let saved = &extra["context"];
        if saved.is_null() {
            return Ok(Value::Null);
        }
        let (Some(config), Some(owners)) = (self.context_config(), self.context_owners()) else {
            return Ok(Value::Null);
        };
        let store = crate::context::store(config)?;
        let limits = crate::context::limits(config);
        let put_back =
            |scope: Scope, owner: &str, items: &Value| -> Result<usize, CheckpointFailure> {
                let fail = |e: safesh_context::ContextError| crate::context::store_refusal(&e);
                store.clear(scope, owner).map_err(fail)?;
                let mut n = 0;
                for item in items.as_array().into_iter().flatten() {
                    let (Some(key), Ok(label), Ok(key_label)) = (
                        item["key"].as_str(),
                        serde_json::from_value::<Label>(item["label"].clone()),
                        serde_json::from_value::<Label>(item["key_label"].clone()),
                    ) else {
                        continue;
                    };
                    let tags = serde_json::from_value(item["tags"].clone()).unwrap_or_default();
                    let new = NewValue {
                        value: &item["value"],
                        label: &label,
                        key_label: &key_label,
                        tags: &tags,
                    };
                    store.set(scope, owner, key, new, limits).map_err(fail)?;
                    n += 1;
                }
                Ok(n)
            };
        let project = put_back(Scope::Project, &owners.project, &saved["project"])?;
        let session = match (&owners.session, saved["session"].is_array()) {
            (Some(id), true) => Some(put_back(Scope::Session, id, &saved["session"])?),
            _ => None,
        };
        Ok(json!({"project": project, "session": session}))
    }
}
