//! The persistent history: one JSON line per script any face ran, in
//! `history.jsonl` beside the context store. Appending is one `O_APPEND`
//! write(2) of a whole line: no fsync, no SQLite open (the CLI appends per script
//! and must not pay for it: opening a WAL database that no other process holds
//! replays its WAL first). Past a size threshold the file is compacted to the
//! newest `[history] max_entries` under an exclusive lock (temp file + rename).

use crate::error::ContextError;
use crate::store::Item;
use safesh_label::Label;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// File name of the history inside the state dir.
pub const HISTORY_LOG: &str = "history.jsonl";

/// `[history]` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryConfig {
    /// Entries kept; the oldest are dropped.
    pub max_entries: u64,
    /// Whether entries are written at all.
    pub persist: bool,
}

impl HistoryConfig {
    /// Built-in `[history] max_entries`.
    pub const DEFAULT_MAX_ENTRIES: u64 = 10_000;
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            max_entries: Self::DEFAULT_MAX_ENTRIES,
            persist: true,
        }
    }
}

/// One script a face ran. Never holds a secret value: the command text has the
/// secret words withheld by the caller and the label is a summary (names only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Unique id (`TIME-PID-N`), set when appended.
    #[serde(default)]
    pub id: String,
    /// When it finished (ms since the Unix epoch).
    pub time_unix_ms: u64,
    /// Which face ran it: `cli`, `json-rpc`, `mcp`.
    pub face: String,
    /// The server session, if any.
    pub session: Option<String>,
    /// The script (or quoted argv), secret words withheld.
    pub command: String,
    /// The caller's declared intent.
    #[serde(default)]
    pub intent: Option<Value>,
    /// The exit status.
    pub exit_code: i32,
    /// The refusal code, if a refusal stopped it.
    #[serde(default)]
    pub error: Option<String>,
    /// Wall time.
    pub duration_ms: u64,
    /// A summary of the output's label (atom names, never values).
    pub label: Value,
    /// The request's verification: `{passed, results: [{type, passed}]}`
    /// (never an `actual` value), when it had `verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Value>,
    /// A project spec run's report (`safesh spec run`, `project.run`): `{spec,
    /// hash, passed, steps: [{index, command, status, exit_code, error}],
    /// success_criteria: [{type, passed}]}` — never an output or an `actual`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Value>,
}

impl HistoryEntry {
    /// The label summary of `label` as history keeps it.
    pub fn label_summary(label: &Label) -> Value {
        serde_json::to_value(safesh_label::LabelSummary::from(label)).unwrap_or(Value::Null)
    }
}

/// Which entries [`HistoryLog::read`] returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryQuery {
    /// Only this session's.
    pub session: Option<String>,
    /// Only those at or after this time (ms since the Unix epoch).
    pub since: Option<u64>,
    /// At most this many (the newest); `None`: [`DEFAULT_LIMIT`].
    pub limit: Option<usize>,
}

/// Default number of entries a query returns.
pub const DEFAULT_LIMIT: usize = 20;

/// Bytes per entry the compaction threshold allows for.
const BYTES_PER_ENTRY: u64 = 512;
/// The file is never compacted below this size.
const MIN_THRESHOLD: u64 = 1 << 20;

/// The history file of one state dir.
#[derive(Clone, Debug)]
pub struct HistoryLog {
    path: PathBuf,
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> ContextError + 'a {
    move |source| ContextError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

impl HistoryLog {
    /// The history of `state_dir` (nothing is opened yet).
    pub fn new(state_dir: &Path) -> HistoryLog {
        HistoryLog {
            path: state_dir.join(HISTORY_LOG),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` (nothing when `config.persist` is false) with a fresh id;
    /// compacts the file once it passes the size threshold.
    pub fn append(&self, entry: &HistoryEntry, config: HistoryConfig) -> Result<(), ContextError> {
        if !config.persist {
            return Ok(());
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut e = entry.clone();
        e.id = format!(
            "{}-{}-{}",
            e.time_unix_ms,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut line = serde_json::to_string(&e).map_err(|err| ContextError::Corrupt {
            path: self.path.clone(),
            detail: err.to_string(),
        })?;
        line.push('\n');
        let open = || {
            OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&self.path)
        };
        // The state dir exists on every append but the first: open first, and
        // make the dir only when the open says it is missing.
        let mut f = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = self.path.parent() {
                    std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(dir)
                        .map_err(io("creating state dir", dir))?;
                }
                open()
            }
            r => r,
        }
        .map_err(io("opening", &self.path))?;
        // One write of the whole line: concurrent appenders never interleave.
        f.write_all(line.as_bytes())
            .map_err(io("appending to", &self.path))?;
        let meta = f.metadata().map_err(io("inspecting", &self.path))?;
        if meta.permissions().mode() & 0o077 != 0 {
            let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
        }
        let threshold = config
            .max_entries
            .saturating_mul(BYTES_PER_ENTRY)
            .max(MIN_THRESHOLD);
        if meta.len() > threshold {
            self.compact(&f, config.max_entries, threshold / 2)?;
        }
        Ok(())
    }

    /// Keeps the newest `max` entries within `max_bytes`, under an exclusive
    /// lock of the file (another compaction waits; an append racing the rename
    /// may be lost: the history is a record for the agent, not the audit log).
    fn compact(&self, f: &File, max: u64, max_bytes: u64) -> Result<(), ContextError> {
        // SAFETY: flock on a descriptor we own; no memory is involved.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Ok(()); // Another process is compacting it.
        }
        let text = self.read_text()?;
        let lines: Vec<&str> = text.lines().collect();
        let mut keep = Vec::new();
        let mut bytes = 0u64;
        for l in lines.iter().rev() {
            if keep.len() as u64 >= max || bytes + l.len() as u64 + 1 > max_bytes {
                break;
            }
            bytes += l.len() as u64 + 1;
            keep.push(*l);
        }
        keep.reverse();
        let tmp = self
            .path
            .with_extension(format!("jsonl.{}.tmp", std::process::id()));
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(io("creating", &tmp))?;
        let mut body = keep.join("\n");
        if !body.is_empty() {
            body.push('\n');
        }
        let written = out.write_all(body.as_bytes()).map_err(io("writing", &tmp));
        if let Err(e) =
            written.and_then(|()| std::fs::rename(&tmp, &self.path).map_err(io("renaming", &tmp)))
        {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(())
    }

    fn read_text(&self) -> Result<String, ContextError> {
        let mut f = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
            Err(e) => return Err(io("opening", &self.path)(e)),
        };
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)
            .map_err(io("reading", &self.path))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The newest entries matching `q`, oldest first (a line that does not parse,
    /// e.g. cut by a crash, is skipped).
    pub fn read(&self, q: &HistoryQuery) -> Result<Vec<HistoryEntry>, ContextError> {
        let limit = q.limit.unwrap_or(DEFAULT_LIMIT);
        let text = self.read_text()?;
        let mut out: Vec<HistoryEntry> = text
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<HistoryEntry>(l).ok())
            .filter(|e| q.session.is_none() || e.session == q.session)
            .filter(|e| q.since.is_none_or(|s| e.time_unix_ms >= s))
            .take(limit)
            .collect();
        out.reverse();
        Ok(out)
    }

    /// `context get history ID`: one entry as an item (public: it holds no value).
    pub fn item(&self, id: &str) -> Result<Option<Item>, ContextError> {
        let all = self.read(&HistoryQuery {
            limit: Some(usize::MAX),
            ..HistoryQuery::default()
        })?;
        Ok(all.into_iter().rev().find(|e| e.id == id).map(entry_item))
    }

    /// `context list history`: the newest entries, keyed by id.
    pub fn items(&self, prefix: Option<&str>) -> Result<Vec<Item>, ContextError> {
        let entries = self.read(&HistoryQuery::default())?;
        Ok(entries
            .into_iter()
            .filter(|e| prefix.is_none_or(|p| e.id.starts_with(p)))
            .map(entry_item)
            .collect())
    }
}

fn entry_item(e: HistoryEntry) -> Item {
    Item {
        key: e.id.clone(),
        updated_unix_ms: e.time_unix_ms,
        value: serde_json::to_value(e).unwrap_or(Value::Null),
        label: Label::agent(),
        key_label: Label::agent(),
        tags: Default::default(),
    }
}
