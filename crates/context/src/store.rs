//! The context store: scoped key–value pairs with JSON values, each kept with its
//! label, in `context.db` beside the label store.

use crate::db::{self, sql_err};
use crate::error::ContextError;
use crate::scope::{Scope, check_key};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use safesh_label::Label;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// File name of the database inside the state dir.
pub const CONTEXT_DB: &str = "context.db";

/// `[context]` limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest value, in bytes of its JSON text.
    pub max_value_bytes: u64,
    /// The most keys in one scope (of one project, session or step).
    pub max_keys: u64,
}

impl Limits {
    /// Built-in `[context] max_value_bytes`: 1 MiB.
    pub const DEFAULT_MAX_VALUE_BYTES: u64 = 1 << 20;
    /// Built-in `[context] max_keys`.
    pub const DEFAULT_MAX_KEYS: u64 = 1000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_value_bytes: Self::DEFAULT_MAX_VALUE_BYTES,
            max_keys: Self::DEFAULT_MAX_KEYS,
        }
    }
}

/// Who a scope's values belong to: the project root, the session id, the step's
/// owner. A request resolves its scope to one of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owners {
    /// The project root (the trusted `safesh.toml`'s directory, else the cwd).
    pub project: String,
    /// The server session, if the request runs in one.
    pub session: Option<String>,
    /// The step's owner (the session, or one per process without a session).
    pub step: String,
}

impl Owners {
    /// The owner of `scope`'s values (`history` has none: it is shared).
    pub fn owner(&self, scope: Scope) -> Result<&str, ContextError> {
        match scope {
            Scope::Project => Ok(&self.project),
            Scope::Session => self.session.as_deref().ok_or(ContextError::NoSession),
            Scope::Step => Ok(&self.step),
            Scope::History => Ok(""),
        }
    }
}

/// One stored value.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Its key.
    pub key: String,
    /// The value.
    pub value: Value,
    /// What it was made of: a value set from a secret stays secret.
    pub label: Label,
    /// What chose its key (a listing of keys carries it, not the value's).
    pub key_label: Label,
    /// The caller's tags.
    pub tags: BTreeMap<String, String>,
    /// When it was last set (ms since the Unix epoch).
    pub updated_unix_ms: u64,
}

/// What [`ContextStore::set`] stores.
#[derive(Clone, Copy, Debug)]
pub struct NewValue<'a> {
    /// The value.
    pub value: &'a Value,
    /// Its label: what it was made of (and the PC).
    pub label: &'a Label,
    /// What chose the key.
    pub key_label: &'a Label,
    /// The caller's tags.
    pub tags: &'a BTreeMap<String, String>,
}

/// The context store of one state dir. `Sync`: one connection behind a mutex,
/// every method one short transaction.
#[derive(Debug)]
pub struct ContextStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// Milliseconds since the Unix epoch.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl ContextStore {
    /// Opens (creating 0600 if needed) `context.db` in `state_dir`.
    pub fn open(state_dir: &Path) -> Result<ContextStore, ContextError> {
        let path = state_dir.join(CONTEXT_DB);
        let conn = db::open(&path)?;
        Ok(ContextStore {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// The process's store for `state_dir`, opened once and shared by every
    /// session and face of the process (a failed open is retried next time).
    pub fn shared(state_dir: &Path) -> Result<Arc<ContextStore>, ContextError> {
        type Stores = Mutex<HashMap<PathBuf, Arc<ContextStore>>>;
        static STORES: std::sync::LazyLock<Stores> = std::sync::LazyLock::new(Default::default);
        let mut stores = STORES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = stores.get(state_dir) {
            return Ok(s.clone());
        }
        let s = Arc::new(ContextStore::open(state_dir)?);
        stores.insert(state_dir.to_path_buf(), s.clone());
        Ok(s)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The history beside it (read through the `history` scope).
    pub fn history_log(&self) -> crate::history::HistoryLog {
        crate::history::HistoryLog::new(self.path.parent().unwrap_or(Path::new(".")))
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock left no transaction open (a dropped
        // transaction rolls back), so the connection is still good.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction (the write lock first, so a
    /// check-then-write never races another process).
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, ContextError>,
    ) -> Result<T, ContextError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&self.path, e))?;
        let out = f(&tx)?;
        tx.commit().map_err(|e| sql_err(&self.path, e))?;
        Ok(out)
    }

    /// The value of `key` in `scope` of `owner`, if set.
    pub fn get(&self, scope: Scope, owner: &str, key: &str) -> Result<Option<Item>, ContextError> {
        check_key(key)?;
        if scope == Scope::History {
            return self.history_log().item(key);
        }
        let conn = self.conn();
        let row = conn
            .prepare_cached(
                "SELECT key, value, label, key_label, tags, updated_ms FROM context
                 WHERE scope = ?1 AND owner = ?2 AND key = ?3",
            )
            .and_then(|mut st| {
                st.query_row(params![scope.as_str(), owner, key], row)
                    .optional()
            })
            .map_err(|e| sql_err(&self.path, e))?;
        row.map(|r| self.decode(r)).transpose()
    }

    /// Sets `key` in `scope` of `owner` to `value`, labeled `label`. Refused
    /// (nothing stored) past `limits` or in the read-only `history` scope.
    pub fn set(
        &self,
        scope: Scope,
        owner: &str,
        key: &str,
        new: NewValue<'_>,
        limits: Limits,
    ) -> Result<(), ContextError> {
        let NewValue {
            value,
            label,
            key_label,
            tags,
        } = new;
        check_key(key)?;
        if scope == Scope::History {
            return Err(ContextError::ReadOnly);
        }
        let text = serde_json::to_string(value).map_err(|e| self.corrupt(e))?;
        let size = text.len() as u64;
        if size > limits.max_value_bytes {
            return Err(ContextError::LimitExceeded {
                what: format!("the value of {key:?} is too large"),
                key: "max_value_bytes",
                limit: limits.max_value_bytes,
                got: size,
            });
        }
        let label_text = serde_json::to_string(label).map_err(|e| self.corrupt(e))?;
        let key_label_text = serde_json::to_string(key_label).map_err(|e| self.corrupt(e))?;
        let tags_text = serde_json::to_string(tags).map_err(|e| self.corrupt(e))?;
        let path = self.path.clone();
        let e = move |e| sql_err(&path, e);
        let now = now_unix_ms() as i64;
        // The row's eight values, in the order both statements number them.
        let row = params![
            scope.as_str(),
            owner,
            key,
            text,
            label_text,
            key_label_text,
            tags_text,
            now
        ];
        self.write(|tx| {
            // A key already set is replaced in place: one statement (the
            // common case, and no count of the scope needed).
            let replaced = tx
                .prepare_cached(
                    "UPDATE context SET value = ?4, label = ?5, key_label = ?6, tags = ?7,
                     updated_ms = ?8 WHERE scope = ?1 AND owner = ?2 AND key = ?3",
                )
                .and_then(|mut st| st.execute(row))
                .map_err(e.clone())?;
            if replaced > 0 {
                return Ok(());
            }
            let n: i64 = tx
                .prepare_cached("SELECT count(*) FROM context WHERE scope = ?1 AND owner = ?2")
                .and_then(|mut st| st.query_row(params![scope.as_str(), owner], |r| r.get(0)))
                .map_err(e.clone())?;
            let n = n.max(0) as u64;
            if n >= limits.max_keys {
                return Err(ContextError::LimitExceeded {
                    what: format!("the {scope} scope is full"),
                    key: "max_keys",
                    limit: limits.max_keys,
                    got: n + 1,
                });
            }
            tx.prepare_cached(
                "INSERT INTO context
                 (scope, owner, key, value, label, key_label, tags, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut st| st.execute(row))
            .map_err(e.clone())?;
            Ok(())
        })
    }

    /// Deletes `key`; true if it was set.
    pub fn delete(&self, scope: Scope, owner: &str, key: &str) -> Result<bool, ContextError> {
        check_key(key)?;
        if scope == Scope::History {
            return Err(ContextError::ReadOnly);
        }
        let n = self
            .conn()
            .execute(
                "DELETE FROM context WHERE scope = ?1 AND owner = ?2 AND key = ?3",
                params![scope.as_str(), owner, key],
            )
            .map_err(|e| sql_err(&self.path, e))?;
        Ok(n > 0)
    }

    /// The items of `scope` of `owner` whose key starts with `prefix`, by key.
    pub fn list(
        &self,
        scope: Scope,
        owner: &str,
        prefix: Option<&str>,
    ) -> Result<Vec<Item>, ContextError> {
        if scope == Scope::History {
            return self.history_log().items(prefix);
        }
        let rows: Vec<RawRow> = {
            let conn = self.conn();
            let mut stmt = conn
                .prepare_cached(
                    "SELECT key, value, label, key_label, tags, updated_ms FROM context
                     WHERE scope = ?1 AND owner = ?2 ORDER BY key",
                )
                .map_err(|e| sql_err(&self.path, e))?;
            stmt.query_map(params![scope.as_str(), owner], row)
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .map_err(|e| sql_err(&self.path, e))?
        };
        rows.into_iter()
            .filter(|r| prefix.is_none_or(|p| r.0.starts_with(p)))
            .map(|r| self.decode(r))
            .collect()
    }

    /// Deletes every value of `scope` of `owner`; how many there were.
    pub fn clear(&self, scope: Scope, owner: &str) -> Result<usize, ContextError> {
        if scope == Scope::History {
            return Err(ContextError::ReadOnly);
        }
        self.conn()
            .execute(
                "DELETE FROM context WHERE scope = ?1 AND owner = ?2",
                params![scope.as_str(), owner],
            )
            .map_err(|e| sql_err(&self.path, e))
    }

    /// Clears the `step` scope of `owner` (between steps).
    pub fn clear_step(&self, owner: &str) -> Result<usize, ContextError> {
        self.clear(Scope::Step, owner)
    }

    /// Deletes a session's values (its `session` and `step` scopes) when it ends.
    pub fn end_session(&self, session: &str) -> Result<usize, ContextError> {
        Ok(self.clear(Scope::Session, session)? + self.clear(Scope::Step, session)?)
    }

    fn corrupt(&self, e: impl std::fmt::Display) -> ContextError {
        ContextError::Corrupt {
            path: self.path.clone(),
            detail: e.to_string(),
        }
    }

    fn decode(&self, r: RawRow) -> Result<Item, ContextError> {
        let (key, value, label, key_label, tags, ms) = r;
        Ok(Item {
            key,
            value: serde_json::from_str(&value).map_err(|e| self.corrupt(e))?,
            // A label that cannot be read back would launder the value: refuse.
            label: serde_json::from_str(&label).map_err(|e| self.corrupt(e))?,
            key_label: serde_json::from_str(&key_label).map_err(|e| self.corrupt(e))?,
            tags: serde_json::from_str(&tags).map_err(|e| self.corrupt(e))?,
            updated_unix_ms: ms.max(0) as u64,
        })
    }
}

/// A row as stored: key, value, label, key label, tags (JSON texts), time.
type RawRow = (String, String, String, String, String, i64);

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}
