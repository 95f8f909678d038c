//! Information-flow control in the interpreter: where labels meet the exchange
//! rules (`safesh-flow`), the audit log and the label store (`safesh-store`).
//!
//! One [`Flow`] per session policy. The interpreter asks it at every commit point
//! (network egress, text run as code, destructive writes, execution-changing
//! variables) through [`Shell::commit`]; each decision is appended to the audit log
//! *before* the action, and a refusal carries the rule that made it.
//!
//! Labels of files: the classification rules of the config, joined with what safesh
//! itself recorded when it wrote the file (this process's map, and the persistent
//! store shared by every safesh process — opened only once it exists or something
//! worth remembering is written, so ordinary runs never touch SQLite).

use crate::approval::{ApprovalAnswer, ApprovalChannel, ApprovalQuestion};
use crate::error::{ErrorCode, Refusal};
use crate::interp::Shell;
use crate::interp::expand::Field;
use crate::io::lock;
use safesh_flow::{
    Approvals, Classifier, CommitPoint, CommitRequest, Rules, Status, SystemClock, Verdict,
};
use safesh_label::Label;
use safesh_store::{AuditLog, LabelStore, WriteMode};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How long the label store's absence is trusted before looking again (a
/// long-running request, such as a job, sees a store another process created).
const STORE_RECHECK_MS: u64 = 250;

/// Programs that run text as code: their arguments, script files and stdin are code.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "jshell",
    "groovy",
    "julia",
    "ghci",
    "runghc",
    "scala",
    "kotlin",
    "swift",
    "erl",
    "escript",
    "elixir",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ts-node",
    "tsx",
];

/// True when `program` (a name or path) is an interpreter (`python3.12` counts).
pub(crate) fn is_interpreter(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base) || INTERPRETERS.contains(&stem)
}

/// How long one wait for `safesh approve ID` lasts before the request's
/// cancellation is looked at again.
const WAIT_SLICE: std::time::Duration = std::time::Duration::from_millis(100);

/// Where a decision is asked for: the channel to the human (if any), when to
/// stop waiting on it, and the scope of an approval (the working directory).
pub(crate) struct Asker<'a> {
    pub(crate) channel: Option<&'a dyn ApprovalChannel>,
    pub(crate) stop: &'a dyn Fn() -> bool,
    pub(crate) scope: &'a str,
}

/// The session's information-flow state.
pub(crate) struct Flow {
    /// Immutable and derived from the config alone: shared by the fresh
    /// sessions of one template ([`Flow::successor`]).
    classifier: Arc<Classifier>,
    rules: Arc<Rules>,
    approvals: Arc<Approvals>,
    state_dir: Option<PathBuf>,
    audit: OnceLock<Option<AuditLog>>,
    /// The label store, or why it cannot be used (`Err`: the text of the refusal).
    store: OnceLock<Result<LabelStore, String>>,
    /// The store did not exist when this request first looked (see [`Flow::store`]).
    /// When it was last found absent (ms since `created`, +1; 0: not known absent).
    store_absent: AtomicU64,
    /// The reference point of `store_absent`.
    created: std::time::Instant,
    control: OnceLock<Option<safesh_flow::ControlServer>>,
    /// How long a request with no channel to the human waits for `safesh approve`.
    approval_wait: std::time::Duration,
    /// Labels of files this process wrote (exact, even without the store).
    written: Mutex<HashMap<PathBuf, Label>>,
    /// Labels of names (entries created by secret or untrusted words): `names.rs`.
    pub(crate) names: Mutex<crate::names::NameCache>,
    /// Directory listings for finding the secret files to hide from externals,
    /// shared by every session of the process with the same classification.
    scan: Arc<Mutex<safesh_flow::SecretScan>>,
    /// The session's id in the audit log.
    session: String,
    /// The known secret values, rebuilt when a secret changes (`known.rs`).
    pub(crate) known: Mutex<Option<crate::known::KnownCache>>,
    /// What the classifier was built from, as text (see [`Flow::label_epoch`]);
    /// shared with the classifier by a template's successors.
    classification: Arc<str>,
}

/// The process's scan cache for `config`'s classification: fresh sessions (one per
/// sessionless MCP call) find it warm.
fn shared_scan(config: &safesh_policy::config::Config) -> Arc<Mutex<safesh_flow::SecretScan>> {
    type Scans = Mutex<HashMap<String, Arc<Mutex<safesh_flow::SecretScan>>>>;
    static SCANS: std::sync::LazyLock<Scans> = std::sync::LazyLock::new(Default::default);
    let labels = &config.labels;
    let mut key = format!("{:?}\0{:?}", config.base_dir, config.home);
    for (include, g) in &labels.secret {
        key.push_str(&format!("\0{include}{}", g.pattern));
    }
    for (name, l) in &labels.named {
        for g in &l.files {
            key.push_str(&format!("\0{name}={}", g.pattern));
        }
    }
    lock(&SCANS).entry(key).or_default().clone()
}

/// The inputs of [`Classifier::from_config`] that file labels depend on, as
/// text (`[labels]` globs and named labels, the base and home directories they
/// are resolved against).
fn classification(config: &safesh_policy::config::Config) -> String {
    let secret: Vec<(bool, &str)> = config
        .labels
        .secret
        .iter()
        .map(|(include, g)| (*include, g.pattern.as_str()))
        .collect();
    let named: Vec<(&str, Vec<&str>)> = config
        .labels
        .named
        .iter()
        .map(|(name, l)| {
            (
                name.as_str(),
                l.files.iter().map(|g| g.pattern.as_str()).collect(),
            )
        })
        .collect();
    format!(
        "base: {:?}\nhome: {:?}\nsecret: {secret:?}\nnamed: {named:?}",
        config.base_dir, config.home
    )
}

/// The secret class of a file whose label could not be asked of the label store.
pub(crate) const STORE_UNAVAILABLE: &str = "label-store-unavailable";

/// The label of a file whose record could not be asked of the label store:
/// secret, never public.
pub(crate) fn unavailable_label(path: &Path) -> Label {
    Label::secret(STORE_UNAVAILABLE).join(&Label::from_file(path.to_string_lossy()))
}

/// Worth remembering across processes: secret, or not to be trusted.
pub(crate) fn worth_storing(l: &Label) -> bool {
    !l.confidentiality.is_public() || !safesh_flow::trust::is_trusted(l)
}

/// The refusal when the label store at `db` cannot be used (`why`: the OS or
/// SQLite error): labeled data is neither read nor written without it.
pub(crate) fn store_refusal(db: &Path, why: &str) -> Refusal {
    let mut r = Refusal::new(
        ErrorCode::ExecutionError,
        format!(
            "the label store {} cannot be used ({why}): files safesh labeled cannot be read, \
             and labeled data cannot be written, without it",
            db.display()
        ),
    )
    .rule("labels.store")
    .suggest(format!(
        "ask the human to repair safesh's state directory: make {} a writable SQLite file \
         (or move a corrupt one aside), free disk space, or end the process that holds it locked",
        db.display()
    ));
    r.details.path = Some(db.display().to_string());
    r
}

impl Flow {
    /// The state dir (label store, audit log), when configured.
    pub(crate) fn state_dir(&self) -> Option<&std::path::Path> {
        self.state_dir.as_deref()
    }
}

impl Flow {
    /// The flow state for `config`.
    pub(crate) fn new(config: &safesh_policy::config::Config) -> Flow {
        // The config loader validates `[[rule]]` already; should one still not
        // apply, the built-in rules (the strict defaults) decide.
        let rules = Rules::from_config(config)
            .unwrap_or_else(|_| Rules::builtin(safesh_flow::HostPolicy::from_config(config)));
        Flow::with_parts(
            config,
            (
                Arc::new(Classifier::from_config(config)),
                classification(config).into(),
            ),
            Arc::new(rules),
            shared_scan(config),
        )
    }

    /// The flow state of a new session under the same config as `self`'s (a
    /// fresh session copied from a template): the classification, the rules
    /// and the scan cache are shared; everything a session records (approvals,
    /// writes, names, known values, its audit id) starts empty.
    pub(crate) fn successor(&self, config: &safesh_policy::config::Config) -> Flow {
        Flow::with_parts(
            config,
            (self.classifier.clone(), self.classification.clone()),
            self.rules.clone(),
            self.scan.clone(),
        )
    }

    /// (`classifier`: the classifier and the text of what it was built from.)
    fn with_parts(
        config: &safesh_policy::config::Config,
        (classifier, classification): (Arc<Classifier>, Arc<str>),
        rules: Arc<Rules>,
        scan: Arc<Mutex<safesh_flow::SecretScan>>,
    ) -> Flow {
        let session = format!(
            "{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
                & 0xff_ffff
        );
        Flow {
            classifier,
            rules,
            approvals: Arc::new(
                Approvals::from_config(config, Arc::new(SystemClock))
                    .with_state_dir(config.state_dir.clone()),
            ),
            approval_wait: std::time::Duration::from_millis(
                config.limits.approval_wait_ms.unwrap_or(0),
            ),
            state_dir: config.state_dir.clone(),
            audit: OnceLock::new(),
            store: OnceLock::new(),
            store_absent: AtomicU64::new(0),
            created: std::time::Instant::now(),
            control: OnceLock::new(),
            written: Mutex::new(HashMap::new()),
            names: Mutex::new(Default::default()),
            scan,
            session,
            known: Mutex::new(None),
            classification,
        }
    }

    /// Everything a file's label ([`Flow::file_label`]) depends on besides the
    /// file itself (its path, where it resolves, its inode, size and times):
    /// the classification config, the label store's generation and the labels
    /// this process recorded for files it wrote. Equal epochs give equal
    /// labels for an unchanged file, so a checkpoint reuses the labels its
    /// previous save computed. `None` when the store cannot be asked (labels
    /// are then asked for file by file, and fail closed there).
    pub(crate) fn label_epoch(&self) -> Option<String> {
        use std::fmt::Write;
        let mut text = self.classification.to_string();
        match self.store(false) {
            Err(_) => return None,
            Ok(None) => text.push_str("\nstore: none"),
            Ok(Some(store)) => {
                let g = store.generation().ok()?;
                let _ = write!(text, "\nstore: {} {}", g.id, g.n);
            }
        }
        let written = lock(&self.written);
        let mut entries: Vec<(&PathBuf, &Label)> = written.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (p, label) in entries {
            let label = serde_json::to_string(label).ok()?;
            let _ = write!(text, "\nwritten: {p:?} {label}");
        }
        Some(text)
    }

    /// The label store, opened once it exists (`create`: or to record a write).
    /// `Ok(None)`: there is no store (no state dir configured, or none created
    /// yet), so no file has a recorded label. `Err`: a store exists or is needed
    /// but cannot be used (locked, corrupt, unreadable, a directory in its place):
    /// the caller fails closed (see [`store_refusal`]).
    ///
    /// Its absence is remembered until the next request or for
    /// [`STORE_RECHECK_MS`], whichever comes first (a file read must not pay a
    /// `stat` each): another process may create the store meanwhile, and a request
    /// (or a long job) sees its labels soon after. Once the store exists every
    /// read looks it up.
    fn store(&self, create: bool) -> Result<Option<&LabelStore>, Refusal> {
        if let Some(s) = self.store.get() {
            return self.opened(s);
        }
        let now = self.created.elapsed().as_millis() as u64 + 1;
        let absent_at = self.store_absent.load(Ordering::Relaxed);
        if !create && absent_at != 0 && now.saturating_sub(absent_at) < STORE_RECHECK_MS {
            return Ok(None);
        }
        let Some(dir) = self.state_dir.as_ref() else {
            return Ok(None);
        };
        let db = dir.join(safesh_store::LABELS_DB);
        if !create {
            // Only a store that is certainly absent is skipped: one that cannot
            // even be looked at (an unreadable state dir) may hold labels.
            match std::fs::symlink_metadata(&db) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.store_absent.store(now, Ordering::Relaxed);
                    return Ok(None);
                }
                Err(e) => return Err(store_refusal(&db, &e.to_string())),
                Ok(_) => {}
            }
        }
        let s = self
            .store
            .get_or_init(|| LabelStore::open(dir).map_err(|e| e.to_string()));
        self.opened(s)
    }

    fn opened<'a>(
        &self,
        s: &'a Result<LabelStore, String>,
    ) -> Result<Option<&'a LabelStore>, Refusal> {
        match s {
            Ok(store) => Ok(Some(store)),
            Err(e) => {
                let db = self
                    .state_dir
                    .as_ref()
                    .map(|d| d.join(safesh_store::LABELS_DB))
                    .unwrap_or_default();
                Err(store_refusal(&db, e))
            }
        }
    }

    /// The label store for name labels (`names.rs`). Name labels are best
    /// effort: a store that cannot be used is already refused for contents.
    pub(crate) fn store_for_names(&self, create: bool) -> Option<&LabelStore> {
        self.store(create).ok().flatten()
    }

    /// A new request starts: look for the label store again (another process may
    /// have created it since).
    pub(crate) fn new_request(&self) {
        self.store_absent.store(0, Ordering::Relaxed);
    }

    /// The label of bytes read from `path` (already normalized, absolute);
    /// `real`: its canonical form when the caller resolved it already.
    ///
    /// When the label store cannot be asked, the file is never taken as public:
    /// its label is secret ([`STORE_UNAVAILABLE`]). Reads that can stop use
    /// [`Flow::file_label_checked`] and refuse instead.
    pub(crate) fn file_label(&self, path: &Path, real: Option<&Path>) -> Label {
        self.file_label_checked(path, real)
            .unwrap_or_else(|_| unavailable_label(path))
    }

    /// [`Flow::file_label`], or the refusal to read when the label store that
    /// may hold the file's label cannot be asked (fail closed: a copy of a secret
    /// must not read as public because its record is out of reach).
    pub(crate) fn file_label_checked(
        &self,
        path: &Path,
        real: Option<&Path>,
    ) -> Result<Label, Refusal> {
        if cfg!(feature = "untracked") {
            return Ok(Label::empty());
        }
        let mut l = self.classifier.path_label_resolved(path, real);
        l = l.join(&self.recorded(path)?);
        // A sandboxed program running now may be writing it.
        l = l.join(&crate::running_writers::label_of(path, real));
        // Through a symlink (`ln -s dl.sh ok.sh`, or one a program made), the bytes
        // are those of the file it points to: its recorded label too.
        let target = match real {
            Some(r) => Some(r.to_path_buf()),
            None => std::fs::canonicalize(path).ok(),
        };
        if let Some(t) = target.filter(|t| t != path) {
            l = l.join(&self.recorded(&t)?);
        }
        Ok(l)
    }

    /// Raises the recorded label of `path` to include `label` BEFORE data so
    /// labeled is written to it (at open, and again when a chunk with a higher
    /// label arrives): a writer killed at any point leaves the file labeled at
    /// least as high as the bytes in it. A label not worth remembering (public,
    /// trusted) costs nothing. An error is a refusal: the bytes must not be
    /// written.
    pub(crate) fn prepare_write(&self, path: &Path, label: &Label) -> Result<(), Refusal> {
        if cfg!(feature = "untracked") || !worth_storing(label) {
            return Ok(());
        }
        {
            // This process's view never falls below what the store holds (reads
            // prefer the map): a first entry starts from the stored label.
            let mut written = lock(&self.written);
            let new = match written.get(path) {
                Some(old) => old.join(label),
                None => self
                    .stored_label(path)?
                    .map_or(label.clone(), |o| o.join(label)),
            };
            written.insert(path.to_path_buf(), new);
        }
        if let Some(store) = self.store(true)? {
            store
                .prepare_write(path, label)
                .map_err(|e| store_refusal(store.path(), &e.to_string()))?;
        }
        Ok(())
    }

    /// What safesh recorded when it wrote `path` (this process, then the store).
    /// What safesh recorded for `path`: in this process, else in the store (a
    /// store that cannot be asked is a refusal, never "nothing recorded").
    fn recorded(&self, path: &Path) -> Result<Label, Refusal> {
        if let Some(w) = lock(&self.written).get(path) {
            return Ok(w.clone());
        }
        if let Some(store) = self.store(false)? {
            return match store.lookup(path) {
                Ok(Some(stored)) => Ok(stored.label),
                Ok(None) => Ok(Label::empty()),
                Err(e) => Err(store_refusal(store.path(), &e.to_string())),
            };
        }
        Ok(Label::empty())
    }

    /// Records that safesh wrote `label`ed data to `path` (`append`: joined with
    /// what was there). A file's label only goes up. An error is a refusal: the
    /// label could not be kept.
    pub(crate) fn record_write(
        &self,
        path: &Path,
        label: &Label,
        append: bool,
    ) -> Result<(), Refusal> {
        let mut written = lock(&self.written);
        let new = match written.get(path) {
            Some(old) => old.join(label),
            None if append => self
                .stored_label(path)?
                .map_or(label.clone(), |o| o.join(label)),
            None => label.clone(),
        };
        let keep = worth_storing(&new);
        if keep || written.contains_key(path) {
            written.insert(path.to_path_buf(), new.clone());
        }
        drop(written);
        if keep && let Some(store) = self.store(true)? {
            let mode = if append {
                WriteMode::Append { before: None }
            } else {
                WriteMode::Truncate
            };
            match store.record_write(path, &new, mode) {
                // Gone meanwhile (`> f; rm f`): no bytes left to label.
                Ok(_) | Err(safesh_store::StoreError::NotFound(_)) => {}
                Err(e) => return Err(store_refusal(store.path(), &e.to_string())),
            }
        }
        Ok(())
    }

    fn stored_label(&self, path: &Path) -> Result<Option<Label>, Refusal> {
        let Some(store) = self.store(false)? else {
            return Ok(None);
        };
        store
            .lookup(path)
            .map(|s| s.map(|s| s.label))
            .map_err(|e| store_refusal(store.path(), &e.to_string()))
    }

    /// The files under `roots` (resolved directories), at any depth, whose bytes
    /// are confidential: by the classification, or by what safesh recorded when it
    /// wrote them (a copy of `.env` under another name). `false` with them when the
    /// classification walk stopped at [`safesh_flow::scan::MAX_DIRS`] directories.
    /// A store that cannot be asked is a refusal: what it would hide is unknown.
    pub(crate) fn confidential_files(
        &self,
        roots: &[PathBuf],
    ) -> Result<(Vec<PathBuf>, bool), Refusal> {
        let scanned = lock(&self.scan).scan(&self.classifier, roots);
        let mut out = scanned.secrets;
        let under = |p: &Path| roots.iter().any(|r| p.starts_with(r));
        out.extend(
            lock(&self.written)
                .iter()
                .filter(|(p, l)| !l.confidentiality.is_public() && under(p))
                .map(|(p, _)| p.clone()),
        );
        if let Some(store) = self.store(false)? {
            for r in roots {
                let under = store
                    .confidential_under(r)
                    .map_err(|e| store_refusal(store.path(), &e.to_string()))?;
                out.extend(under);
            }
        }
        out.retain(|p| p.symlink_metadata().is_ok());
        out.sort();
        out.dedup();
        Ok((out, scanned.complete))
    }

    /// The label of a reply from `host` to data labeled `sent` (token brokering,
    /// [`safesh_flow::HostPolicy::reply_label`]).
    pub(crate) fn reply_label(&self, sent: &Label, host: &str) -> Label {
        self.classifier.hosts().reply_label(sent, host)
    }

    /// The label of an environment variable's value, if the config classifies it.
    pub(crate) fn env_label(&self, name: &str) -> Option<Label> {
        self.classifier.env_label(name)
    }

    fn audit(&self) -> Result<&AuditLog, Refusal> {
        let log = self.audit.get_or_init(|| {
            let dir = self.state_dir.as_ref()?;
            AuditLog::open(dir).ok()
        });
        log.as_ref().ok_or_else(|| {
            Refusal::new(
                ErrorCode::ExecutionError,
                "cannot write the audit log: every commit-point decision is recorded before the action",
            )
            .rule("flow.audit")
            .suggest("make safesh's state directory ($XDG_STATE_HOME/safesh) writable")
        })
    }

    fn record(
        &self,
        point: &CommitPoint,
        verdict: safesh_store::Verdict,
        req: &CommitRequest,
        target: &str,
        rule: &str,
        approval: Option<&str>,
    ) -> Result<(), Refusal> {
        let cp = match point {
            CommitPoint::Network { .. } | CommitPoint::NetworkWrite { .. } => {
                safesh_store::CommitPoint::Network
            }
            CommitPoint::Exec { .. } => safesh_store::CommitPoint::Exec,
            CommitPoint::Destructive { .. } => safesh_store::CommitPoint::Destructive,
            CommitPoint::Env { .. } => safesh_store::CommitPoint::Env,
        };
        let mut entry = safesh_store::Entry::new(self.session.clone(), cp, verdict)
            .with_command(self.redact_known(req.command.clone()))
            .with_target(self.redact_known(target.to_string()))
            .with_labels(&req.data, &req.pc)
            .with_rule(rule.to_string());
        if let Some(id) = approval {
            entry = entry.with_approval(id.to_string());
        }
        self.audit()?.append(&entry).map_err(|e| {
            Refusal::new(
                ErrorCode::ExecutionError,
                format!("cannot write the audit log: {e}"),
            )
            .rule("flow.audit")
        })
    }

    /// Records a refusal of the policy (the first wall) as a decision: the
    /// command (its secret words withheld by the caller), what it aimed at, and
    /// the rule. Best effort: the refusal stands whether or not it is recorded.
    pub(crate) fn record_refusal(&self, command: String, r: &Refusal) {
        let target = r
            .details
            .path
            .clone()
            .or_else(|| r.details.flag.clone())
            .or_else(|| r.details.command.clone())
            .unwrap_or_default();
        let rule = r
            .details
            .rule
            .clone()
            .unwrap_or_else(|| r.code.as_str().to_string());
        let entry = safesh_store::Entry::new(
            self.session.clone(),
            safesh_store::CommitPoint::Policy,
            safesh_store::Verdict::Block,
        )
        .with_command(self.redact_known(command))
        .with_target(self.redact_known(target))
        .with_labels(&Label::empty(), &Label::empty())
        .with_rule(format!("{rule} ({})", r.code.as_str()));
        if let Ok(log) = self.audit() {
            let _ = log.append(&entry);
        }
    }

    /// Decides one commit point: `Ok(Some(warning))` for a rule that warns, a
    /// refusal for block and for an approval not (yet) granted. With a channel
    /// to the human in `asker`, an approval is asked for and waited on; without
    /// one, it waits up to `[limits] approval_wait_ms` for `safesh approve ID`.
    pub(crate) fn decide(
        &self,
        req: CommitRequest,
        target: &str,
        asker: &Asker<'_>,
    ) -> Result<Option<String>, Refusal> {
        use safesh_store::Verdict as V;
        let d = self.rules.decide(&req);
        match d.verdict {
            Verdict::Allow => {
                self.record(&req.point, V::Allow, &req, target, &d.rule, None)?;
                Ok(None)
            }
            Verdict::Warn => {
                self.record(&req.point, V::Warn, &req, target, &d.rule, None)?;
                Ok(Some(format!("{}: {}", d.rule, d.reason)))
            }
            Verdict::Block => {
                self.record(&req.point, V::Block, &req, target, &d.rule, None)?;
                let mut r = Refusal::new(ErrorCode::FlowViolation, d.reason.clone())
                    .rule(d.rule.clone())
                    .command(req.command.clone())
                    .suggest(d.suggestion.clone());
                r.details.allowed = d.allowed.clone();
                Err(r)
            }
            Verdict::RequestApproval => {
                let kind = req.point.kind();
                if let Some(id) = self.approvals.take_in(&req.command, kind, asker.scope) {
                    // The audit names the request whose grant was used.
                    let id = (!id.is_empty()).then_some(id);
                    self.record(
                        &req.point,
                        V::Approved,
                        &req,
                        target,
                        &d.rule,
                        id.as_deref(),
                    )?;
                    return Ok(None);
                }
                // The request is stored (and shown) with known secret values
                // withheld from its target, as its command already is.
                let pending = self.approvals.request_in(
                    &req.command,
                    kind,
                    &self.redact_known(target.to_string()),
                    asker.scope,
                );
                let refusal = |what: &str, suggestion: String| {
                    let mut r = Refusal::new(
                        ErrorCode::ApprovalRequired,
                        format!("{}: {what} (approval_id: {})", d.reason, pending.id),
                    )
                    .rule(d.rule.clone())
                    .command(req.command.clone())
                    .suggest(suggestion);
                    r.details.approval_id = Some(pending.id.clone());
                    r
                };
                // A channel the model cannot drive: `safesh approve ID` reaches this
                // process over its control socket while it lives (MCP, JSON-RPC).
                if let Some(dir) = &self.state_dir {
                    self.control.get_or_init(|| {
                        safesh_flow::ControlServer::bind(dir, self.approvals.clone()).ok()
                    });
                }
                self.record(
                    &req.point,
                    V::RequestApproval,
                    &req,
                    target,
                    &d.rule,
                    Some(&pending.id),
                )?;
                let id = pending.id.as_str();
                if let Some(channel) = asker.channel {
                    let question = ApprovalQuestion {
                        id: pending.id.clone(),
                        commit_point: kind.to_string(),
                        action: req.command.clone(),
                        target: pending.target.clone(),
                        reason: d.reason.clone(),
                        rule: d.rule.clone(),
                        expires: pending.expires,
                    };
                    // `safesh approve ID` / `deny ID` meanwhile also ends the wait.
                    let decided_elsewhere = || self.approvals.status(id) != Some(Status::Pending);
                    let stop = || (asker.stop)() || decided_elsewhere();
                    let answer = match channel.ask(&question, &stop) {
                        ApprovalAnswer::Unanswered => match self.approvals.status(id) {
                            Some(Status::Granted) => ApprovalAnswer::Granted,
                            Some(Status::Denied) => ApprovalAnswer::Denied,
                            _ => ApprovalAnswer::Unanswered,
                        },
                        a => a,
                    };
                    match answer {
                        ApprovalAnswer::Granted => {
                            // Already granted over the control socket is as good.
                            let _ = self.approvals.decide_by(&pending.id, true, channel.name());
                        }
                        ApprovalAnswer::Denied => {
                            let _ = self.approvals.decide_by(&pending.id, false, channel.name());
                            self.record(
                                &req.point,
                                V::Denied,
                                &req,
                                target,
                                &d.rule,
                                Some(&pending.id),
                            )?;
                            return Err(refusal(
                                "the human declined",
                                "the human said no to this exact command: do not retry it; ask them what they want instead".to_string(),
                            ));
                        }
                        ApprovalAnswer::Unanswered => {}
                    }
                } else if !self.approval_wait.is_zero() {
                    // No channel that asks: `safesh approve ID` (the store or the
                    // control socket) is the human's way in, for a while.
                    let until = std::time::Instant::now() + self.approval_wait;
                    loop {
                        let left = until.saturating_duration_since(std::time::Instant::now());
                        if left.is_zero() || (asker.stop)() {
                            break;
                        }
                        match self.approvals.wait(id, left.min(WAIT_SLICE)) {
                            Ok(Status::Pending) => {}
                            Ok(Status::Denied) => {
                                self.record(
                                    &req.point,
                                    V::Denied,
                                    &req,
                                    target,
                                    &d.rule,
                                    Some(id),
                                )?;
                                return Err(refusal(
                                    "the human declined",
                                    "the human said no to this exact command: do not retry it; ask them what they want instead".to_string(),
                                ));
                            }
                            _ => break,
                        }
                    }
                }
                // Granted by the channel, or meanwhile with `safesh approve ID`.
                if self.approvals.status(id) == Some(Status::Granted)
                    && let Some(used) = self.approvals.take_in(&req.command, kind, asker.scope)
                {
                    let used = if used.is_empty() {
                        pending.id.clone()
                    } else {
                        used
                    };
                    self.record(&req.point, V::Approved, &req, target, &d.rule, Some(&used))?;
                    return Ok(None);
                }
                Err(refusal(
                    "a human's approval is needed",
                    format!(
                        "tell the human what you want to do and why; they can run `safesh approve {}` (valid 5 minutes, once), then run the same command again",
                        pending.id
                    ),
                ))
            }
        }
    }
}

/// The command text for the audit log and approvals: words whose label is
/// confidential are withheld, so no secret value is written anywhere.
pub(crate) fn command_text(argv: &[Field]) -> String {
    argv.iter()
        .map(|f| {
            if f.label.confidentiality.is_public() {
                f.text.clone()
            } else {
                "[secret]".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `text` is long enough to contain a known secret value (shorter
/// values are never searched for, `safesh_flow::known::MIN_KNOWN_LEN`).
fn could_hold_known(text: &str) -> bool {
    text.len() >= safesh_flow::known::MIN_KNOWN_LEN
}

/// A refusal about words that carry secrets must not repeat them: each
/// confidential word's text is replaced by `[secret]` in what the refusal says.
pub(crate) fn withhold_secrets(mut r: Refusal, argv: &[Field]) -> Refusal {
    for f in argv {
        if !f.label.confidentiality.is_public() && !f.text.is_empty() {
            withhold(&mut r, &f.text);
        }
    }
    r
}

/// Replaces `text` by `[secret]` everywhere in `r`.
pub(crate) fn withhold(r: &mut Refusal, text: &str) {
    const SHOWN: &str = "[secret]";
    r.message = r.message.replace(text, SHOWN);
    if let Some(s) = &mut r.suggestion {
        *s = s.replace(text, SHOWN);
    }
    let d = &mut r.details;
    for v in [&mut d.path, &mut d.command, &mut d.flag, &mut d.location]
        .into_iter()
        .flatten()
    {
        *v = v.replace(text, SHOWN);
    }
}

impl Shell {
    /// Asks the exchange rules about a commit point; a refusal stops the script,
    /// a rule that warns says so on stderr.
    pub(crate) fn commit(
        &mut self,
        point: CommitPoint,
        data: &Label,
        command: String,
        target: &str,
    ) -> Result<(), Refusal> {
        if let Some(w) = self.commit_shared(point, data, command, target)? {
            self.diag(format!("safesh: warning: {w}"));
        }
        Ok(())
    }

    /// The decision itself, from anywhere (a utility's host has no `&mut`):
    /// `Ok(Some(warning))` when a rule warns.
    pub(crate) fn commit_shared(
        &self,
        point: CommitPoint,
        data: &Label,
        command: String,
        target: &str,
    ) -> Result<Option<String>, Refusal> {
        let Some(flow) = &self.shared.flow else {
            return Ok(None);
        };
        // The audit line is redacted with the known values: have them built —
        // unless neither text can hold one (a known value is at least
        // MIN_KNOWN_LEN bytes): `IFS=… read` in a loop must not walk the roots.
        if could_hold_known(&command) || could_hold_known(target) {
            let _ = self.known_values();
        }
        let req = CommitRequest {
            point,
            data: data.clone(),
            pc: self.pc.clone(),
            command,
        };
        let stop = || self.cancel.is_cancelled();
        let scope = self.cwd.to_string_lossy();
        let asker = Asker {
            channel: self.approver.as_deref(),
            stop: &stop,
            scope: &scope,
        };
        flow.decide(req, target, &asker)
    }

    /// Records a policy refusal in the audit log (see [`Flow::record_refusal`]).
    pub(crate) fn audit_refusal(&self, command: String, r: &Refusal) {
        if let Some(flow) = &self.shared.flow {
            let d = &r.details;
            let target = [&d.path, &d.flag, &d.command];
            if could_hold_known(&command)
                || target
                    .iter()
                    .any(|t| t.as_deref().is_some_and(could_hold_known))
            {
                let _ = self.known_values();
            }
            flow.record_refusal(command, r);
        }
    }

    /// Text about to run as code (`eval`, `source`, an interpreter's code).
    pub(crate) fn commit_exec(
        &mut self,
        what: safesh_flow::ExecKind,
        code: &Label,
        argv: &[Field],
    ) -> Result<(), Refusal> {
        if self.shared.flow.is_none() || (safesh_flow::trust::is_trusted(code) && self.pc_trusted())
        {
            return Ok(()); // nothing to decide: recorded only when it matters
        }
        let target = argv.first().map(|f| f.text.clone()).unwrap_or_default();
        self.commit(
            CommitPoint::Exec { what },
            code,
            command_text(argv),
            &target,
        )
    }

    fn pc_trusted(&self) -> bool {
        safesh_flow::trust::is_trusted(&self.pc) && self.pc.confidentiality.is_public()
    }

    /// Before a command runs: a command name from untrusted data runs untrusted
    /// code; `rm` / `mv` on targets from untrusted data destroy what the data chose.
    pub(crate) fn commit_command(&mut self, argv: &[Field]) -> Result<(), Refusal> {
        let Some(first) = argv.first() else {
            return Ok(());
        };
        if self.shared.flow.is_none() {
            return Ok(());
        }
        if !safesh_flow::trust::is_trusted(&first.label) {
            return self.commit_exec(safesh_flow::ExecKind::Eval, &first.label, argv);
        }
        let Some(d) = crate::destructive::Destructive::of(argv) else {
            return Ok(());
        };
        let (op, targets) = (d.op, &d.targets);
        let data = targets.iter().fold(Label::empty(), |l, f| l.join(&f.label));
        if targets.is_empty() || (safesh_flow::trust::is_trusted(&data) && self.pc_trusted()) {
            return Ok(());
        }
        // An untrusted PC alone gates deletions and replacements only.
        if safesh_flow::trust::is_trusted(&data)
            && data.confidentiality.is_public()
            && !d.gated_by_pc(&self.cwd)
        {
            return Ok(());
        }
        let names: Vec<String> = targets.iter().map(|f| f.text.clone()).collect();
        let target = names.join(" ");
        self.commit(
            CommitPoint::Destructive { targets: names, op },
            &data,
            command_text(argv),
            &target,
        )
    }

    /// Before an external program starts: an interpreter's code (arguments, script
    /// files) and the program file itself need integrity; a program that can reach
    /// the network may not be given data that cannot flow to those hosts. Returns
    /// the guard its stdin must pass, if any.
    pub(crate) fn commit_external(
        &mut self,
        program: &Path,
        argv: &[Field],
        given: &Label,
        env: &Label,
        network: &safesh_policy::config::Network,
    ) -> Result<Option<StdinGuard>, Refusal> {
        use safesh_policy::config::Network;
        let Some(flow) = self.shared.flow.clone() else {
            return Ok(None);
        };
        let program_text = program.display().to_string();
        let interpreter =
            argv.first().is_some_and(|f| is_interpreter(&f.text)) || is_interpreter(&program_text);
        let prog_label = self.file_label(program);
        if !safesh_flow::trust::is_trusted(&prog_label) {
            self.commit_exec(safesh_flow::ExecKind::ScriptFile, &prog_label, argv)?;
        }
        let texts: Vec<String> = argv.iter().map(|f| f.text.clone()).collect();
        // Its stdin is code when the program comes from it (`curl … | python3`), data
        // when `-c`, `-m` or a script gives the program (`… | python3 -c 'json…'`).
        let stdin_code = interpreter && crate::python_cmdline::stdin_is_program(&texts, &self.cwd);
        // Its environment is code on the same terms as its stdin: a program that can
        // run text (`exec(os.environ["X"])`) runs whatever it was given.
        if stdin_code && !safesh_flow::trust::is_trusted(env) {
            self.commit_exec(safesh_flow::ExecKind::Interpreter, env, argv)?;
        }
        if interpreter {
            let code = argv
                .iter()
                .skip(1)
                .fold(Label::empty(), |l, f| l.join(&f.label));
            self.commit_exec(safesh_flow::ExecKind::Interpreter, &code, argv)?;
            for a in argv.iter().skip(1) {
                let p = self.cwd.join(&a.text);
                if p.is_file() {
                    let l = self.file_label(&p);
                    self.commit_exec(safesh_flow::ExecKind::ScriptFile, &l, argv)?;
                }
            }
            // Local modules it will load (`python3 -m m`, `-c 'import m'`).
            for p in crate::python_cmdline::python_code_files(&texts, &self.cwd) {
                let l = self.file_label(&p);
                self.commit_exec(safesh_flow::ExecKind::ScriptFile, &l, argv)?;
            }
        }
        let hosts: Vec<String> = match network {
            Network::Off => Vec::new(),
            Network::On => vec!["*".to_string()],
            Network::Hosts(h) => h.clone(),
        };
        if !given.confidentiality.is_public() {
            for host in &hosts {
                self.commit(
                    CommitPoint::Network { host: host.clone() },
                    given,
                    command_text(argv),
                    host,
                )?;
            }
        }
        Ok(StdinGuard::new(
            flow,
            self,
            command_text(argv),
            stdin_code,
            hosts,
        ))
    }

    /// `> name` replacing an existing file whose name comes from untrusted data.
    pub(crate) fn commit_overwrite(&mut self, name: &str, target: &Label) -> Result<(), Refusal> {
        // A name the agent wrote is the agent's choice whatever the PC: the written
        // file carries the label (a redirection is a write, not a deletion).
        if self.shared.flow.is_none()
            || safesh_flow::trust::is_trusted(target)
            || !self.cwd.join(name).is_file()
        {
            return Ok(());
        }
        self.commit(
            CommitPoint::Destructive {
                targets: vec![name.to_string()],
                op: safesh_flow::DestructiveOp::Overwrite,
            },
            target,
            format!("> {name}"),
            name,
        )
    }

    /// An assignment to an execution-changing variable (`PATH`, `LD_*`, `HOME`…).
    pub(crate) fn commit_env(&mut self, name: &str, value: &Label) -> Result<(), Refusal> {
        if self.shared.flow.is_none() || !safesh_flow::rules::is_execution_changing(name) {
            return Ok(());
        }
        self.commit(
            CommitPoint::Env {
                name: name.to_string(),
            },
            value,
            format!("{name}=…"),
            name,
        )
    }
}

/// What a program's stdin may not carry, checked chunk by chunk before any byte is
/// handed over (`curl … | python3`, `cat .env | prog-with-network`).
pub(crate) struct StdinGuard {
    pub(crate) flow: Arc<Flow>,
    pub(crate) pc: Label,
    pub(crate) command: String,
    /// An interpreter: its stdin is code.
    pub(crate) code: bool,
    /// The hosts the program can reach (empty: none).
    pub(crate) hosts: Vec<String>,
    /// The first refusal, for the interpreter to raise once the program is done.
    pub(crate) refused: Arc<Mutex<Option<Refusal>>>,
    /// Labels already decided (a stream's chunks mostly share one).
    checked: Vec<Label>,
    /// The shell's channel to the human, and its cancellation scope.
    approver: Option<Arc<dyn ApprovalChannel>>,
    cancel: Arc<crate::interp::Cancel>,
    /// The working directory the approvals are scoped to.
    scope: String,
}

impl StdinGuard {
    /// A guard; `None` when there is nothing to check.
    pub(crate) fn new(
        flow: Arc<Flow>,
        shell: &Shell,
        command: String,
        code: bool,
        hosts: Vec<String>,
    ) -> Option<StdinGuard> {
        (code || !hosts.is_empty()).then(|| StdinGuard {
            flow,
            pc: shell.pc.clone(),
            command,
            code,
            hosts,
            refused: Arc::new(Mutex::new(None)),
            checked: Vec::new(),
            approver: shell.approver.clone(),
            cancel: shell.cancel.clone(),
            scope: shell.cwd.to_string_lossy().into_owned(),
        })
    }

    fn decide(&self, req: CommitRequest, target: &str) -> Result<Option<String>, Refusal> {
        let stop = || self.cancel.is_cancelled();
        let asker = Asker {
            channel: self.approver.as_deref(),
            stop: &stop,
            scope: &self.scope,
        };
        self.flow.decide(req, target, &asker)
    }

    /// Decides `label`ed input (remembered when allowed).
    pub(crate) fn check(&mut self, label: &Label) -> Result<(), Refusal> {
        if self.checked.iter().any(|l| l == label) {
            return Ok(());
        }
        if self.code && !safesh_flow::trust::is_trusted(label) {
            let req = CommitRequest {
                point: CommitPoint::Exec {
                    what: safesh_flow::ExecKind::PipeToInterpreter,
                },
                data: label.clone(),
                pc: self.pc.clone(),
                command: self.command.clone(),
            };
            self.decide(req, "stdin")?;
        }
        if !label.confidentiality.is_public() {
            for host in &self.hosts {
                let req = CommitRequest {
                    point: CommitPoint::Network { host: host.clone() },
                    data: label.clone(),
                    pc: self.pc.clone(),
                    command: self.command.clone(),
                };
                self.decide(req, host)?;
            }
        }
        self.checked.push(label.clone());
        Ok(())
    }
}

/// A program's stdin behind a [`StdinGuard`] and/or searched for known secret
/// values: a refused chunk ends the input (the program sees end of file, having
/// received none of it) and the refusal stops the script once the program is
/// done. With known values, the bytes that may begin a value split across two
/// chunks are held back until the next chunk shows whether it completes one, so
/// a value is decided on before any of it is handed over.
pub(crate) struct GuardedReader {
    pub(crate) src: crate::io::Input,
    pub(crate) cell: crate::io::LabelCell,
    pub(crate) guard: Option<StdinGuard>,
    known: Option<(Arc<safesh_flow::KnownValues>, safesh_flow::HoldBack)>,
    /// Bytes decided and not yet handed over, from `ready_at`.
    ready: Vec<u8>,
    ready_at: usize,
    stopped: bool,
}

impl GuardedReader {
    /// `src` read for a program whose output label is `cell`.
    pub(crate) fn new(
        src: crate::io::Input,
        cell: crate::io::LabelCell,
        guard: Option<StdinGuard>,
        known: Option<Arc<safesh_flow::KnownValues>>,
    ) -> Self {
        GuardedReader {
            src,
            cell,
            guard,
            known: known.map(|k| (k, safesh_flow::HoldBack::default())),
            ready: Vec::new(),
            ready_at: 0,
            stopped: false,
        }
    }
}

impl std::io::Read for GuardedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.ready_at < self.ready.len() {
                let n = buf.len().min(self.ready.len() - self.ready_at);
                buf[..n].copy_from_slice(&self.ready[self.ready_at..self.ready_at + n]);
                self.ready_at += n;
                return Ok(n);
            }
            if self.stopped {
                return Ok(0);
            }
            let (n, mut l) = self.src.read_labeled(buf)?;
            if n == 0 {
                // The end: what was held back was decided with the chunk it came in.
                match &mut self.known {
                    Some((_, hold)) if !hold.is_empty() => {
                        self.ready = hold.finish();
                        self.ready_at = 0;
                        continue;
                    }
                    _ => return Ok(0),
                }
            }
            let released = match &mut self.known {
                Some((k, hold)) => {
                    if let Some(f) = hold.check(k, &buf[..n]).label {
                        l = l.join(&f);
                    }
                    Some(hold.release(k, &buf[..n]))
                }
                None => None,
            };
            if let Some(guard) = &mut self.guard
                && let Err(r) = guard.check(&l)
            {
                self.stopped = true;
                let mut slot = lock(&guard.refused);
                if slot.is_none() {
                    *slot = Some(r);
                }
                return Ok(0);
            }
            self.cell.join(&l);
            match released {
                None => return Ok(n),
                Some(out) => {
                    self.ready = out;
                    self.ready_at = 0;
                }
            }
        }
    }
}
