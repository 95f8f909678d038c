//! Opening the shared SQLite file: the label store's conventions (a private file,
//! WAL, a busy timeout, the schema created once in a write transaction).

use crate::error::ContextError;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use safesh_store::busy::{is_busy, retry_while_busy};
use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

/// Schema version stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// How long a process waits for another one's write transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS context (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    label TEXT NOT NULL,
    key_label TEXT NOT NULL,
    tags TEXT NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (scope, owner, key)
) WITHOUT ROWID;
";

/// Maps a SQLite error: a file that is not our database is `Corrupt`.
pub(crate) fn sql_err(db: &Path, e: rusqlite::Error) -> ContextError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => ContextError::Corrupt {
            path: db.to_path_buf(),
            detail: e.to_string(),
        },
        _ => ContextError::Sqlite {
            path: db.to_path_buf(),
            source: e,
        },
    }
}

/// Opens (creating 0600, in a 0700 dir) and sets up the database at `path`.
pub(crate) fn open(path: &Path) -> Result<Connection, ContextError> {
    if let Some(dir) = path.parent()
        && !dir.is_dir()
    {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| ContextError::Io {
                what: "creating state dir",
                path: dir.to_path_buf(),
                source,
            })?;
    }
    create_private(path)?;
    let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
    let busy =
        |e: &ContextError| matches!(e, ContextError::Sqlite { source, .. } if is_busy(source));
    retry_while_busy(|| set_up(&mut conn, path), busy)?;
    Ok(conn)
}

/// WAL, the tuning and the schema (once per file) on a fresh connection.
fn set_up(conn: &mut Connection, path: &Path) -> Result<(), ContextError> {
    let e = |e| sql_err(path, e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(e)?;
    // NORMAL in WAL mode: a commit appends to the WAL without fsync. A value and
    // its label are one row, so a power loss can lose a recent value, never
    // separate it from its label. Only a checkpoint (WAL into the database)
    // fsyncs, twice: see `tune` for how often.
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(e)?;
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .map_err(e)?;
    if version == SCHEMA_VERSION && mode.eq_ignore_ascii_case("wal") {
        // Set up already (both persist in the file): no write lock per open.
        return tune(conn).map_err(e);
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))
        .map_err(e)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(ContextError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("cannot switch to WAL mode (journal_mode={mode})"),
        });
    }
    tune(conn).map_err(e)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(e)?;
    let version: i64 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(e)?;
    match version {
        0 => {
            tx.execute_batch(SCHEMA).map_err(e)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(e)?;
        }
        SCHEMA_VERSION => {}
        v => {
            return Err(ContextError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("unknown schema version {v}"),
            });
        }
    }
    // Checks the columns too: a foreign database with these tables fails here.
    tx.prepare(
        "SELECT scope, owner, key, value, label, key_label, tags, updated_ms FROM context LIMIT 0",
    )
    .map_err(|err| ContextError::Corrupt {
        path: path.to_path_buf(),
        detail: err.to_string(),
    })?;
    tx.commit().map_err(e)
}

/// Per-connection settings (see `open`).
///
/// The checkpoint interval is SQLite's default, 1000 WAL pages (about one
/// checkpoint per 1000 `set`s): a checkpoint's two fsyncs are what a commit
/// costs most, and at 64 pages they capped `context.set`+`get` near 2,000
/// pairs/s on the benchmark machine (bench/context_rpc.py). A longer WAL
/// costs a reader nothing (the WAL index is shared memory) and a process
/// opening the database alone replays at most ~4 MiB.
fn tune(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)?;
    // Past a checkpoint the WAL file is cut back to this size (not to zero:
    // it would only grow again).
    let _: i64 = conn.pragma_update_and_check(None, "journal_size_limit", 4 << 20, |r| r.get(0))?;
    Ok(())
}

/// WAL pages between automatic checkpoints (see [`tune`]).
const WAL_CHECKPOINT_PAGES: i64 = 1000;

/// Creates `path` 0600 if missing (SQLite gives its WAL and shared-memory files
/// the database's mode), and makes an existing one private again.
fn create_private(path: &Path) -> Result<(), ContextError> {
    let io = |what, source| ContextError::Io {
        what,
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io("opening", e))?;
    let mode = file
        .metadata()
        .map_err(|e| io("inspecting", e))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o600))
            .map_err(|e| io("restricting", e))?;
    }
    Ok(())
}
