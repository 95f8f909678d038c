//! The audit log: one JSON line per commit-point decision, appended and flushed to
//! disk before the action runs, by any number of safesh processes at once.
//!
//! Each line goes out in ONE `write(2)` on an `O_APPEND` descriptor, so lines of
//! concurrent processes never interleave, then `fdatasync`, so a crash right after
//! the decision loses no entry.

use crate::error::StoreError;
use crate::fsutil;
use crate::redact::Redactor;
use jiff::Timestamp;
use safesh_label::{Label, LabelSummary};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// File name of the log inside the state dir.
pub const AUDIT_LOG: &str = "audit.jsonl";

/// Where a command's effect leaves safesh's control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommitPoint {
    /// Data leaves through the network.
    Network,
    /// An external program runs.
    Exec,
    /// Files are deleted or overwritten.
    Destructive,
    /// A value goes into an exported environment variable.
    Env,
    /// The policy (the first wall) refused a command before it ran: blocklist,
    /// allowlist, flags, paths, nudges.
    Policy,
}

/// What the policy decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Allowed silently.
    Allow,
    /// Allowed with a warning.
    Warn,
    /// Refused.
    Block,
    /// Waiting for a human's approval.
    RequestApproval,
    /// A human approved it.
    Approved,
    /// A human was asked and said no.
    Denied,
}

impl CommitPoint {
    /// The name used in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            CommitPoint::Network => "network",
            CommitPoint::Exec => "exec",
            CommitPoint::Destructive => "destructive",
            CommitPoint::Env => "env",
            CommitPoint::Policy => "policy",
        }
    }
}

impl Verdict {
    /// The name used in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Warn => "warn",
            Verdict::Block => "block",
            Verdict::RequestApproval => "request-approval",
            Verdict::Approved => "approved",
            Verdict::Denied => "denied",
        }
    }
}

impl fmt::Display for CommitPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A label as the log records it: names of atoms, no values.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LabelBrief {
    /// Confidentiality clauses (atoms of one clause joined by `|`); empty = public.
    pub secrets: Vec<String>,
    /// Integrity atoms (`["*"]` when untainted).
    pub integrity: Vec<String>,
    /// Where the bytes came from.
    pub origins: Vec<String>,
}

impl From<&Label> for LabelBrief {
    fn from(label: &Label) -> Self {
        let s = LabelSummary::from(label);
        LabelBrief {
            secrets: s.secrets,
            integrity: s.integrity,
            origins: s.origins,
        }
    }
}

/// One decision at a commit point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// When it was decided (RFC 3339, UTC).
    pub time: Timestamp,
    /// The safesh session.
    pub session: String,
    /// The command text (redacted when written).
    pub command: String,
    /// Which commit point.
    pub commit_point: CommitPoint,
    /// Host, path, variable… the effect is aimed at (redacted when written).
    pub target: String,
    /// Label of the data crossing the commit point.
    pub data_label: LabelBrief,
    /// Label of the control context (program counter).
    pub pc_label: LabelBrief,
    /// The rule that decided.
    pub rule: String,
    /// The decision.
    pub verdict: Verdict,
    /// The approval request or grant, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The deciding safesh process.
    pub pid: u32,
}

impl Entry {
    /// An entry stamped now by this process; fill the rest with the `with_*` methods.
    pub fn new(session: impl Into<String>, commit_point: CommitPoint, verdict: Verdict) -> Self {
        Entry {
            time: Timestamp::now(),
            session: session.into(),
            command: String::new(),
            commit_point,
            target: String::new(),
            data_label: LabelBrief::default(),
            pc_label: LabelBrief::default(),
            rule: String::new(),
            verdict,
            approval_id: None,
            pid: std::process::id(),
        }
    }

    /// Set the command text.
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = command.into();
        self
    }

    /// Set the target.
    pub fn with_target(mut self, target: impl Into<String>) -> Self {
        self.target = target.into();
        self
    }

    /// Set the data and pc labels.
    pub fn with_labels(mut self, data: &Label, pc: &Label) -> Self {
        self.data_label = data.into();
        self.pc_label = pc.into();
        self
    }

    /// Set the deciding rule.
    pub fn with_rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = rule.into();
        self
    }

    /// Set the approval id.
    pub fn with_approval(mut self, id: impl Into<String>) -> Self {
        self.approval_id = Some(id.into());
        self
    }
}

/// The append side of the audit log of one state dir.
#[derive(Debug)]
pub struct AuditLog {
    file: File,
    path: PathBuf,
    redactor: Redactor,
}

impl AuditLog {
    /// Open (creating 0600) `audit.jsonl` in `state_dir` for appending.
    pub fn open(state_dir: &Path) -> Result<Self, StoreError> {
        fsutil::ensure_dir(state_dir)?;
        let path = state_dir.join(AUDIT_LOG);
        let file = fsutil::open_append(&path)?;
        Ok(AuditLog {
            file,
            path,
            redactor: Redactor::default(),
        })
    }

    /// Redact with `redactor` from now on.
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.redactor = redactor;
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append `entry` (its command, target and label names redacted) as one line,
    /// and flush it to disk before returning.
    pub fn append(&self, entry: &Entry) -> Result<(), StoreError> {
        let mut line =
            serde_json::to_vec(&self.redacted(entry)).map_err(|source| StoreError::Encode {
                what: "audit entry",
                source,
            })?;
        line.push(b'\n');
        let written = loop {
            // One write(2): O_APPEND makes it atomic against other appenders.
            match (&self.file).write(&line) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other.map_err(|e| StoreError::io("writing", &self.path, e))?,
            }
        };
        if written != line.len() {
            return Err(StoreError::ShortWrite {
                path: self.path.clone(),
                written,
                len: line.len(),
            });
        }
        self.file
            .sync_data()
            .map_err(|e| StoreError::io("syncing", &self.path, e))
    }

    fn redacted(&self, entry: &Entry) -> Entry {
        let r = |s: &str| self.redactor.redact(s).into_owned();
        let brief = |b: &LabelBrief| LabelBrief {
            secrets: b.secrets.iter().map(|s| r(s)).collect(),
            integrity: b.integrity.iter().map(|s| r(s)).collect(),
            origins: b.origins.iter().map(|s| r(s)).collect(),
        };
        Entry {
            command: r(&entry.command),
            target: r(&entry.target),
            data_label: brief(&entry.data_label),
            pc_label: brief(&entry.pc_label),
            ..entry.clone()
        }
    }

    /// The entries of the log in `state_dir` that pass `filter`, oldest first.
    /// Lines that do not parse are skipped and counted. A missing log is empty.
    pub fn read(state_dir: &Path, filter: &Filter) -> Result<AuditRead, StoreError> {
        let path = state_dir.join(AUDIT_LOG);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(AuditRead::default()),
            Err(e) => return Err(StoreError::io("opening", &path, e)),
        };
        let mut reader = BufReader::new(file);
        let mut out = AuditRead::default();
        let mut kept = VecDeque::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| StoreError::io("reading", &path, e))?;
            if n == 0 {
                break;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<Entry>(&line) {
                Ok(entry) if filter.matches(&entry) => {
                    kept.push_back(entry);
                    if filter.last.is_some_and(|n| kept.len() > n) {
                        kept.pop_front();
                    }
                }
                Ok(_) => {}
                Err(_) => out.malformed += 1,
            }
        }
        out.entries = kept.into();
        Ok(out)
    }
}

/// What [`AuditLog::read`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditRead {
    /// Matching entries, oldest first.
    pub entries: Vec<Entry>,
    /// Lines skipped because they did not parse.
    pub malformed: usize,
}

/// Which entries [`AuditLog::read`] returns (every set field must match).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this session.
    pub session: Option<String>,
    /// Only this verdict.
    pub verdict: Option<Verdict>,
    /// Only this commit point.
    pub commit_point: Option<CommitPoint>,
    /// Only this rule.
    pub rule: Option<String>,
    /// Only entries at or after this time.
    pub since: Option<Timestamp>,
    /// Only the last N matching entries.
    pub last: Option<usize>,
}

impl Filter {
    /// True if `entry` passes every set criterion (`last` aside).
    pub fn matches(&self, entry: &Entry) -> bool {
        self.session.as_ref().is_none_or(|s| *s == entry.session)
            && self.verdict.is_none_or(|v| v == entry.verdict)
            && self.commit_point.is_none_or(|c| c == entry.commit_point)
            && self.rule.as_ref().is_none_or(|r| *r == entry.rule)
            && self.since.is_none_or(|t| entry.time >= t)
    }
}

/// One human-readable line: time (UTC, seconds), verdict, commit point, rule,
/// command and target, control characters escaped so an entry stays one line.
pub fn render_line(entry: &Entry) -> String {
    let mut line = format!(
        "{} {:<16} {:<11} {:<20} {}",
        entry.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        entry.verdict,
        entry.commit_point,
        one_line(&entry.rule),
        one_line(&entry.command),
    );
    if !entry.target.is_empty() {
        line.push_str(" -> ");
        line.push_str(&one_line(&entry.target));
    }
    if let Some(id) = &entry.approval_id {
        line.push_str(" [approval ");
        line.push_str(&one_line(id));
        line.push(']');
    }
    line
}

/// `s` with control characters escaped (`\n`, `\u{1b}`…).
fn one_line(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}
