//! The persistent history: one entry per script any face ran, appended without
//! a disk flush, the oldest dropped past `[history] max_entries`.

use crate::db::sql_err;
use crate::error::ContextError;
use crate::store::{ContextStore, Item};
use rusqlite::{OptionalExtension, params};
use safesh_label::Label;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
}

impl HistoryEntry {
    /// The label summary of `label` as history keeps it.
    pub fn label_summary(label: &Label) -> Value {
        serde_json::to_value(safesh_label::LabelSummary::from(label)).unwrap_or(Value::Null)
    }
}

/// Which entries [`ContextStore::history`] returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryQuery {
    /// Only this session's.
    pub session: Option<String>,
    /// Only those at or after this time (ms since the Unix epoch).
    pub since: Option<u64>,
    /// At most this many (the newest); `None`: 20.
    pub limit: Option<usize>,
}

/// Default number of entries a query returns.
pub const DEFAULT_LIMIT: usize = 20;

impl ContextStore {
    /// Appends `entry` (nothing when `config.persist` is false) and drops the
    /// oldest entries past `config.max_entries`; in the same transaction, clears
    /// the step scope of `clear_step` (a request ended: its step is over). No
    /// fsync (see `db.rs`): one WAL append per script.
    pub fn append_history(
        &self,
        entry: &HistoryEntry,
        config: HistoryConfig,
        clear_step: Option<&str>,
    ) -> Result<(), ContextError> {
        if !config.persist {
            return match clear_step {
                Some(owner) => self.clear_step(owner).map(drop),
                None => Ok(()),
            };
        }
        let text = serde_json::to_string(entry).map_err(|e| ContextError::Corrupt {
            path: self.path().to_path_buf(),
            detail: e.to_string(),
        })?;
        let path = self.path().to_path_buf();
        let max = i64::try_from(config.max_entries).unwrap_or(i64::MAX);
        self.write(|tx| {
            tx.execute(
                "INSERT INTO history (time_unix_ms, session, entry) VALUES (?1, ?2, ?3)",
                params![entry.time_unix_ms as i64, entry.session, text],
            )
            .map_err(|e| sql_err(&path, e))?;
            let last = tx.last_insert_rowid();
            tx.execute(
                "DELETE FROM history WHERE id <= ?1",
                params![last.saturating_sub(max)],
            )
            .map_err(|e| sql_err(&path, e))?;
            if let Some(owner) = clear_step {
                tx.execute(
                    "DELETE FROM context WHERE scope = 'step' AND owner = ?1",
                    [owner],
                )
                .map_err(|e| sql_err(&path, e))?;
            }
            Ok(())
        })
    }

    /// The newest entries matching `q`, oldest first, each with its id.
    pub fn history(&self, q: &HistoryQuery) -> Result<Vec<(i64, HistoryEntry)>, ContextError> {
        let limit = i64::try_from(q.limit.unwrap_or(DEFAULT_LIMIT)).unwrap_or(i64::MAX);
        let since = q.since.map_or(0, |s| i64::try_from(s).unwrap_or(i64::MAX));
        let rows: Vec<(i64, String)> = {
            let conn = self.conn();
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, entry FROM history
                     WHERE (?1 IS NULL OR session = ?1) AND time_unix_ms >= ?2
                     ORDER BY id DESC LIMIT ?3",
                )
                .map_err(|e| sql_err(self.path(), e))?;
            stmt.query_map(params![q.session, since, limit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(|e| sql_err(self.path(), e))?
        };
        let mut out = Vec::with_capacity(rows.len());
        for (id, text) in rows.into_iter().rev() {
            let entry = serde_json::from_str(&text).map_err(|e| ContextError::Corrupt {
                path: self.path().to_path_buf(),
                detail: e.to_string(),
            })?;
            out.push((id, entry));
        }
        Ok(out)
    }

    /// `context get history ID`: one entry as an item (public: it holds no value).
    pub(crate) fn history_item(&self, key: &str) -> Result<Option<Item>, ContextError> {
        let Ok(id) = key.parse::<i64>() else {
            return Ok(None);
        };
        let text: Option<String> = self
            .conn()
            .query_row("SELECT entry FROM history WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| sql_err(self.path(), e))?;
        text.map(|t| self.entry_item(id, &t)).transpose()
    }

    /// `context list history`: the newest entries, keyed by id.
    pub(crate) fn history_items(&self, prefix: Option<&str>) -> Result<Vec<Item>, ContextError> {
        let entries = self.history(&HistoryQuery {
            limit: Some(DEFAULT_LIMIT),
            ..HistoryQuery::default()
        })?;
        Ok(entries
            .into_iter()
            .filter(|(id, _)| prefix.is_none_or(|p| id.to_string().starts_with(p)))
            .map(|(id, e)| Item {
                key: id.to_string(),
                updated_unix_ms: e.time_unix_ms,
                value: serde_json::to_value(e).unwrap_or(Value::Null),
                label: Label::agent(),
                key_label: Label::agent(),
                tags: Default::default(),
            })
            .collect())
    }

    fn entry_item(&self, id: i64, text: &str) -> Result<Item, ContextError> {
        let e: HistoryEntry = serde_json::from_str(text).map_err(|e| ContextError::Corrupt {
            path: self.path().to_path_buf(),
            detail: e.to_string(),
        })?;
        Ok(Item {
            key: id.to_string(),
            updated_unix_ms: e.time_unix_ms,
            value: serde_json::to_value(e).unwrap_or(Value::Null),
            label: Label::agent(),
            key_label: Label::agent(),
            tags: Default::default(),
        })
    }
}
