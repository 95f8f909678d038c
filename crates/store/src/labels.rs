//! The label store: labels of files safesh wrote, keyed by real path, shared by
//! every safesh process of the user (SQLite in WAL mode, one file `labels.db`).
//!
//! Invariants:
//! * a path's stored confidentiality only goes up, except through
//!   [`LabelStore::declassify`], which only a human may trigger;
//! * contents changed behind safesh's back keep their confidentiality and lose their
//!   integrity (never laundered to public or trusted);
//! * every read-modify-write is one `BEGIN IMMEDIATE` transaction, so concurrent
//!   processes never lose each other's updates.

use crate::error::StoreError;
use crate::fingerprint::Fingerprint;
use crate::fsutil;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};
use safesh_label::{Atom, Integrity, Label};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// File name of the database inside the state dir.
pub const LABELS_DB: &str = "labels.db";

/// Schema version stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// How long a process waits for another one's write transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Origin added to the label of contents that changed since safesh wrote them.
pub const CHANGED_OUTSIDE: &str = "changed-outside-safesh";

/// How safesh wrote the file whose label is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// The old contents were replaced (`>`, `tee`, `cp` onto it).
    Truncate,
    /// The new bytes were appended (`>>`). `before` is the file's fingerprint taken
    /// just before safesh opened it: when it is missing or differs from the stored
    /// one, the old contents are treated as changed outside safesh (integrity lost).
    Append {
        /// Fingerprint of the file right before the append, if the caller took one.
        before: Option<Fingerprint>,
    },
}

/// What the store says about a file's current contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The label to use for the file's current contents.
    pub label: Label,
    /// The label recorded when safesh last wrote the file.
    pub recorded: Label,
    /// True when the file changed since safesh last wrote it (then `label` is
    /// `recorded` with no integrity and a [`CHANGED_OUTSIDE`] origin).
    pub changed_outside: bool,
}

/// The label store of one state dir. Open it once per process; it is `Sync` (one
/// connection behind a mutex) and every method is one short transaction.
#[derive(Debug)]
pub struct LabelStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// One row: the recorded label and fingerprint.
type Row = (Label, Fingerprint);

impl LabelStore {
    /// Open (creating if needed, 0600) `labels.db` in `state_dir` (created 0700 if
    /// missing). A file that is not a label store gives [`StoreError::Corrupt`].
    pub fn open(state_dir: &Path) -> Result<Self, StoreError> {
        fsutil::ensure_dir(state_dir)?;
        let path = state_dir.join(LABELS_DB);
        fsutil::create_private(&path)?;
        let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| sql_err(&path, e))?;
        let store = LabelStore {
            conn: Mutex::new(conn),
            path,
        };
        crate::busy::retry_while_busy(|| store.init(), StoreError::is_busy)?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set the connection up and create or check the schema.
    fn init(&self) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(e)?;
        // An existing store of this version in WAL mode (both persist in the file)
        // needs no write transaction: every safesh process opens the store, and a
        // write lock per open serialized them and cost more than their lookups.
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(e)?;
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(e)?;
        if version == SCHEMA_VERSION && mode.eq_ignore_ascii_case("wal") {
            return conn.pragma_update(None, "synchronous", "FULL").map_err(e);
        }
        // WAL: readers never block the writer, and one writer at a time across
        // processes. FULL: a committed label survives a power loss (a lost label
        // would launder a secret file to public).
        wal_full(&conn, &self.path)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(e)?;
        match version {
            0 => {
                tx.execute_batch(
                    "CREATE TABLE IF NOT EXISTS labels (
                        path BLOB PRIMARY KEY NOT NULL,
                        label TEXT NOT NULL,
                        dev INTEGER NOT NULL,
                        ino INTEGER NOT NULL,
                        size INTEGER NOT NULL,
                        mtime_ns INTEGER NOT NULL,
                        ctime_ns INTEGER NOT NULL
                    ) WITHOUT ROWID;",
                )
                .map_err(e)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                    .map_err(e)?;
            }
            SCHEMA_VERSION => {}
            v => {
                return Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    detail: format!("unknown schema version {v}"),
                });
            }
        }
        // Checks the columns too: a foreign database with a `labels` table fails here.
        tx.prepare("SELECT path, label, dev, ino, size, mtime_ns, ctime_ns FROM labels LIMIT 0")
            .map_err(|err| StoreError::Corrupt {
                path: self.path.clone(),
                detail: err.to_string(),
            })?;
        tx.commit().map_err(e)
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock left no transaction open (a dropped
        // transaction rolls back), so the connection is still good.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` in one `BEGIN IMMEDIATE` transaction (the write lock is taken first,
    /// so a read-modify-write never races another process).
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>, &Path) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&self.path, e))?;
        let out = f(&tx, &self.path)?;
        tx.commit().map_err(|e| sql_err(&self.path, e))?;
        Ok(out)
    }

    /// The label of the file at `path` (absolute, resolved) for its current contents,
    /// or `None` when safesh never wrote it or it no longer exists.
    ///
    /// The entry of a vanished file is kept: a concurrent `mv` may be about to move it.
    pub fn lookup(&self, path: &Path) -> Result<Option<Stored>, StoreError> {
        let key = key(path)?;
        let row = {
            let conn = self.conn();
            get(&conn, &self.path, key)?
        };
        let Some((recorded, fp)) = row else {
            return Ok(None);
        };
        let Some(now) = fingerprint_if_exists(path)? else {
            return Ok(None);
        };
        let changed_outside = now != fp;
        let label = if changed_outside {
            untrusted(&recorded, path)
        } else {
            recorded.clone()
        };
        Ok(Some(Stored {
            label,
            recorded,
            changed_outside,
        }))
    }

    /// Record that safesh wrote data labeled `label` to the file at `path` (call it
    /// right after the write). The stored label only goes up: `Truncate` keeps the
    /// old confidentiality (and origins) and takes `label`'s integrity; `Append`
    /// joins with the old label. The fingerprint is refreshed. Returns the label now
    /// recorded.
    ///
    /// The store knows only what it recorded: the caller joins its own
    /// classification of the path (config rules) into `label` itself.
    pub fn record_write(
        &self,
        path: &Path,
        label: &Label,
        mode: WriteMode,
    ) -> Result<Label, StoreError> {
        let key = key(path)?;
        self.write(|tx, db| {
            // Taken under the write lock, so the last writer records the final state.
            let now = fingerprint_required(path)?;
            let new = match (get(tx, db, key)?, mode) {
                (None, _) => label.clone(),
                // The old bytes are gone, and with them the marks about them.
                (Some((old, _)), WriteMode::Truncate) => Label::new(
                    old.confidentiality.clone(),
                    Integrity::Top,
                    old.origins
                        .iter()
                        .filter(|a| !is_changed_marker(a))
                        .cloned()
                        .collect(),
                )
                .join(label),
                // `NONE`: only `prepare_write` recorded it, with our own data's label.
                (Some((old, fp)), WriteMode::Append { before }) => {
                    let old = if before == Some(fp) || fp == Fingerprint::NONE {
                        old
                    } else {
                        untrusted(&old, path)
                    };
                    old.join(label)
                }
            };
            put(tx, db, key, &new, &now)?;
            Ok(new)
        })
    }

    /// Raise the stored confidentiality of `path` to include `label`'s BEFORE safesh
    /// writes data labeled `label` to it (or copies or moves such a file onto it),
    /// so another process reading the file during the write already sees it as
    /// secret. The stored fingerprint is not refreshed: until
    /// [`record_write`](Self::record_write) (or `copy`/`rename`) follows, the file
    /// reads as changed outside safesh (untrusted). Raising early is always safe:
    /// if the write never happens, the path is merely over-labeled.
    pub fn prepare_write(&self, path: &Path, label: &Label) -> Result<(), StoreError> {
        let key = key(path)?;
        self.write(|tx, db| {
            let (new, fp) = match get(tx, db, key)? {
                Some((old, fp)) => (
                    Label::new(
                        old.confidentiality.join(&label.confidentiality),
                        old.integrity.clone(),
                        old.origins.union(&label.origins).cloned().collect(),
                    ),
                    fp,
                ),
                // Never recorded: no fingerprint can match, so it reads as untrusted.
                None => (label.clone(), Fingerprint::NONE),
            };
            put(tx, db, key, &new, &fp)
        })
    }

    /// Set the label of the file at `path` to exactly `label`, lowering it if asked.
    ///
    /// This is the only way a stored label goes down. It must only be reachable
    /// from a human's explicit action (the CLI's declassify command, an approved
    /// request), never from a command the model runs.
    pub fn declassify(&self, path: &Path, label: &Label) -> Result<(), StoreError> {
        let key = key(path)?;
        self.write(|tx, db| {
            let now = fingerprint_required(path)?;
            put(tx, db, key, label, &now)
        })
    }

    /// Record `cp from to` (call it after the copy): `to` gets the join of its own
    /// recorded label and `from`'s current label. Returns `to`'s new label, or `None`
    /// when neither path has an entry. When only `to` has one, the copied bytes count
    /// as [`Label::from_file`]`(from)`; a caller that classified `from` itself should
    /// follow with [`record_write`](Self::record_write)`(to, that, Append)`.
    pub fn copy(&self, from: &Path, to: &Path) -> Result<Option<Label>, StoreError> {
        let (from_key, to_key) = (key(from)?, key(to)?);
        self.write(|tx, db| {
            let source = match get(tx, db, from_key)? {
                Some((label, fp)) => match fingerprint_if_exists(from)? {
                    Some(now) if now == fp => Some(label),
                    _ => Some(untrusted(&label, from)),
                },
                None => None,
            };
            carry(tx, db, source, from, to, to_key)
        })
    }

    /// Record `mv from to` (call it after the rename): `from`'s entry, and those of
    /// every path under `from/` when it was a directory, move to the new name,
    /// joining into entries already there. Returns the number of entries moved.
    ///
    /// `to` is the final path (`dir/a` for `mv a dir/`): a labeled file moved onto
    /// a directory or a missing path is an error and nothing changes.
    pub fn rename(&self, from: &Path, to: &Path) -> Result<usize, StoreError> {
        let (from_key, to_key) = (key(from)?, key(to)?);
        self.write(|tx, db| {
            let mut moved = rename_tree_in(tx, db, from, to)?;
            if let Some(row) = get(tx, db, from_key)? {
                // A wrong destination must not lose the label: refuse, keep the entry.
                let now = fingerprint_required(to)?;
                if to.is_dir() {
                    return Err(StoreError::IsDirectory(to.to_path_buf()));
                }
                del(tx, db, from_key)?;
                move_entry(tx, db, row, &now, from, to_key)?;
                moved += 1;
            } else if to.is_file() {
                carry(tx, db, None, from, to, to_key)?;
            }
            Ok(moved)
        })
    }

    /// Move every entry under the directory `from_dir` to the same place under
    /// `to_dir` (what `mv dir other` does to its files). Returns the count moved.
    pub fn rename_tree(&self, from_dir: &Path, to_dir: &Path) -> Result<usize, StoreError> {
        key(from_dir)?;
        key(to_dir)?;
        self.write(|tx, db| rename_tree_in(tx, db, from_dir, to_dir))
    }

    /// Record `rm path`: drop its entry and every entry under `path/`. A file later
    /// created at that path starts with no recorded label, which is intended: its
    /// bytes are new. Returns the count removed.
    pub fn remove(&self, path: &Path) -> Result<usize, StoreError> {
        let k = key(path)?;
        self.write(|tx, db| {
            let (lo, hi) = prefix_range(k);
            let n = tx
                .execute(
                    "DELETE FROM labels WHERE path = ?1 OR (path >= ?2 AND path < ?3)",
                    (k, lo, hi),
                )
                .map_err(|e| sql_err(db, e))?;
            Ok(n)
        })
    }

    /// The files under the directory `dir` (at any depth) whose recorded label is
    /// confidential: what an external program must not open unless given.
    pub fn confidential_under(&self, dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
        let k = key(dir)?;
        let (lo, hi) = prefix_range(k);
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT path, label FROM labels WHERE path >= ?1 AND path < ?2")
            .map_err(|e| sql_err(&self.path, e))?;
        let rows = stmt
            .query_map((lo, hi), |r| {
                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| sql_err(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (path, json) = row.map_err(|e| sql_err(&self.path, e))?;
            if !decode(&self.path, &json)?.confidentiality.is_public() {
                out.push(PathBuf::from(std::ffi::OsStr::from_bytes(&path)));
            }
        }
        Ok(out)
    }

    /// Number of entries (for diagnostics and tests).
    pub fn len(&self) -> Result<usize, StoreError> {
        let conn = self.conn();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM labels", [], |r| r.get(0))
            .map_err(|e| sql_err(&self.path, e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// True when the store has no entry.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }
}

/// `label` for contents that changed outside safesh: same confidentiality, no
/// integrity, and an origin saying so.
fn untrusted(label: &Label, path: &Path) -> Label {
    let mut origins = label.origins.clone();
    origins.insert(Atom::Custom(
        format!("{CHANGED_OUTSIDE}:{}", path.display()).into(),
    ));
    Label::new(label.confidentiality.clone(), Integrity::none(), origins)
}

fn is_changed_marker(atom: &Atom) -> bool {
    matches!(atom, Atom::Custom(c) if c.starts_with(CHANGED_OUTSIDE))
}

/// Give `to` (just overwritten with the bytes labeled `source`) the join of its own
/// recorded label and `source`. With no source label, the bytes count as read from
/// `from`, and nothing is stored when `to` had no entry either.
fn carry(
    tx: &Transaction<'_>,
    db: &Path,
    source: Option<Label>,
    from: &Path,
    to: &Path,
    to_key: &[u8],
) -> Result<Option<Label>, StoreError> {
    let target = get(tx, db, to_key)?.map(|(label, _)| label);
    let new = match (target, source) {
        (None, None) => return Ok(None),
        (None, Some(s)) => s,
        (Some(t), Some(s)) => t.join(&s),
        (Some(t), None) => t.join(&Label::from_file(from.to_string_lossy())),
    };
    let now = fingerprint_required(to)?;
    put(tx, db, to_key, &new, &now)?;
    Ok(Some(new))
}

/// Store a moved entry `row` (recorded for `from`) at `to`, whose fingerprint is
/// now `now`: a rename only changes the ctime, anything else means the contents
/// changed outside safesh before the move.
fn move_entry(
    tx: &Transaction<'_>,
    db: &Path,
    row: Row,
    now: &Fingerprint,
    from: &Path,
    to_key: &[u8],
) -> Result<(), StoreError> {
    let (label, fp) = row;
    let label = if fp.same_ignoring_ctime(now) {
        label
    } else {
        untrusted(&label, from)
    };
    let label = match get(tx, db, to_key)? {
        Some((existing, _)) => existing.join(&label),
        None => label,
    };
    put(tx, db, to_key, &label, now)
}

/// Move every entry strictly under `from_dir/` to `to_dir/`. Entries of files that
/// no longer exist at the destination are dropped.
fn rename_tree_in(
    tx: &Transaction<'_>,
    db: &Path,
    from_dir: &Path,
    to_dir: &Path,
) -> Result<usize, StoreError> {
    let from_key = key(from_dir)?;
    let (lo, hi) = prefix_range(from_key);
    let rows: Vec<(Vec<u8>, String, [i64; 5])> = {
        let mut stmt = tx
            .prepare(
                "SELECT path, label, dev, ino, size, mtime_ns, ctime_ns FROM labels
                 WHERE path >= ?1 AND path < ?2",
            )
            .map_err(|e| sql_err(db, e))?;
        let rows = stmt
            .query_map((&lo, &hi), |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?],
                ))
            })
            .map_err(|e| sql_err(db, e))?;
        rows.collect::<Result<_, _>>().map_err(|e| sql_err(db, e))?
    };
    tx.execute(
        "DELETE FROM labels WHERE path >= ?1 AND path < ?2",
        (&lo, &hi),
    )
    .map_err(|e| sql_err(db, e))?;
    let to_base = key(to_dir)?;
    let to_base = to_base.strip_suffix(b"/").unwrap_or(to_base);
    let n = rows.len();
    for (old_key, json, cols) in rows {
        // `lo` is `from_dir/`, so every row starts with it.
        let rest = old_key.get(lo.len()..).unwrap_or_default();
        let mut new_key = Vec::with_capacity(to_base.len() + 1 + rest.len());
        new_key.extend_from_slice(to_base);
        new_key.push(b'/');
        new_key.extend_from_slice(rest);
        let new_path = PathBuf::from(std::ffi::OsStr::from_bytes(&new_key));
        let old_path = PathBuf::from(std::ffi::OsStr::from_bytes(&old_key));
        let row = (decode(db, &json)?, fp_from(cols));
        if let Some(now) = fingerprint_if_exists(&new_path)? {
            move_entry(tx, db, row, &now, &old_path, &new_key)?;
        }
    }
    Ok(n)
}

/// The key of an absolute path: its bytes.
fn key(path: &Path) -> Result<&[u8], StoreError> {
    if !path.is_absolute() {
        return Err(StoreError::RelativePath(path.to_path_buf()));
    }
    Ok(path.as_os_str().as_bytes())
}

/// Keys strictly under directory `dir`: `[dir/, dir0)` (`0` follows `/` in ASCII).
fn prefix_range(dir: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let dir = dir.strip_suffix(b"/").unwrap_or(dir);
    let mut lo = dir.to_vec();
    lo.push(b'/');
    let mut hi = dir.to_vec();
    hi.push(b'0');
    (lo, hi)
}

fn get(conn: &Connection, db: &Path, key: &[u8]) -> Result<Option<Row>, StoreError> {
    // A cached statement: preparing (parsing the SQL) cost most of a lookup, and
    // every file a command reads is looked up.
    let row: Option<(String, [i64; 5])> = conn
        .prepare_cached(
            "SELECT label, dev, ino, size, mtime_ns, ctime_ns FROM labels WHERE path = ?1",
        )
        .and_then(|mut stmt| {
            stmt.query_row([key], |r| {
                Ok((
                    r.get(0)?,
                    [r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?],
                ))
            })
            .optional()
        })
        .map_err(|e| sql_err(db, e))?;
    row.map(|(json, cols)| Ok((decode(db, &json)?, fp_from(cols))))
        .transpose()
}

fn put(
    tx: &Transaction<'_>,
    db: &Path,
    key: &[u8],
    label: &Label,
    fp: &Fingerprint,
) -> Result<(), StoreError> {
    let json = serde_json::to_string(label).map_err(|source| StoreError::Encode {
        what: "label",
        source,
    })?;
    // u64 columns are stored as their i64 bit pattern (SQLite integers are i64).
    tx.execute(
        "INSERT OR REPLACE INTO labels (path, label, dev, ino, size, mtime_ns, ctime_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        (
            key,
            json,
            fp.dev as i64,
            fp.ino as i64,
            fp.size as i64,
            fp.mtime_ns,
            fp.ctime_ns,
        ),
    )
    .map_err(|e| sql_err(db, e))?;
    Ok(())
}

fn del(tx: &Transaction<'_>, db: &Path, key: &[u8]) -> Result<(), StoreError> {
    tx.execute("DELETE FROM labels WHERE path = ?1", [key])
        .map_err(|e| sql_err(db, e))?;
    Ok(())
}

fn fp_from([dev, ino, size, mtime_ns, ctime_ns]: [i64; 5]) -> Fingerprint {
    Fingerprint {
        dev: dev as u64,
        ino: ino as u64,
        size: size as u64,
        mtime_ns,
        ctime_ns,
    }
}

pub(crate) fn decode(db: &Path, json: &str) -> Result<Label, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        path: db.to_path_buf(),
        detail: format!("undecodable label: {e}"),
    })
}

fn fingerprint_if_exists(path: &Path) -> Result<Option<Fingerprint>, StoreError> {
    match Fingerprint::of(path) {
        Ok(fp) => Ok(Some(fp)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io("inspecting", path, e)),
    }
}

fn fingerprint_required(path: &Path) -> Result<Fingerprint, StoreError> {
    fingerprint_if_exists(path)?.ok_or_else(|| StoreError::NotFound(path.to_path_buf()))
}

/// Map a SQLite error: "not a database" and "malformed" are corruption.
/// Puts the database at `path` in WAL mode with `synchronous=FULL`: readers
/// never block the writer, one writer at a time across processes, and a
/// committed row survives a power loss. A database that cannot switch is
/// reported as corrupt.
pub(crate) fn wal_full(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let e = |e| sql_err(path, e);
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))
        .map_err(e)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("cannot switch to WAL mode (journal_mode={mode})"),
        });
    }
    conn.pragma_update(None, "synchronous", "FULL").map_err(e)
}

pub(crate) fn sql_err(db: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: db.to_path_buf(),
            detail: e.to_string(),
        },
        _ => StoreError::Sqlite {
            path: db.to_path_buf(),
            source: e,
        },
    }
}
