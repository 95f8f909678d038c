//! Pending and granted approvals, shared by every safesh process of the user
//! (SQLite, one file `approvals.db` in the state dir).
//!
//! A request refused with `APPROVAL_REQUIRED` by one process (a sessionless
//! JSON-RPC `execute`, the CLI without a terminal) is granted by the human with
//! `safesh approve ID` after that process has exited; the same request, sent
//! again by any process, then finds the grant and consumes it. Invariants:
//! * a request is decided once (pending → granted | denied), and only before its
//!   expiry;
//! * a grant is consumed once: [`ApprovalDb::take`] marks it used in the same
//!   `BEGIN IMMEDIATE` transaction that finds it, so two processes never both run
//!   on one grant;
//! * a grant authorizes exactly its action, at its commit point, in its scope
//!   (the working directory it was asked in).
//!
//! The state dir is unreachable from scripts and programs (`safesh_policy::own`,
//! the sandbox), so the model cannot write a grant here.

use crate::error::StoreError;
use crate::fsutil;
use crate::labels::sql_err;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// File name of the database inside the state dir.
pub const APPROVALS_DB: &str = "approvals.db";

/// Schema version stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// How long a process waits for another one's write transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Decided or lapsed requests are forgotten this long after their expiry.
const KEEP: Duration = Duration::from_secs(30 * 60);

/// One stored request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredApproval {
    /// Short random id the human types.
    pub id: String,
    /// The exact action text it authorizes.
    pub action: String,
    /// `network | exec | destructive | env`.
    pub commit_point: String,
    /// What the action affects, for the human.
    pub target: String,
    /// Where it was asked (the working directory); a grant applies only there.
    pub scope: String,
    /// When it was requested.
    pub created: SystemTime,
    /// When it lapses.
    pub expires: SystemTime,
    /// `pending | granted | denied | used` (lapsed ones read as `expired`).
    pub status: String,
}

/// Why a decision by id failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decide {
    /// Decided now: the request as stored.
    Done(StoredApproval),
    /// No request has this id.
    Unknown,
    /// It lapsed before the human answered.
    Expired,
    /// Already granted, denied or used (the status).
    Already(String),
}

/// The approvals database of one state dir; `Sync` (one connection behind a mutex).
#[derive(Debug)]
pub struct ApprovalDb {
    conn: Mutex<Connection>,
    path: PathBuf,
}

fn ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

const COLUMNS: &str = "id, action, commit_point, target, scope, created_ms, expires_ms, status";

fn row(r: &rusqlite::Row<'_>, now: i64) -> rusqlite::Result<StoredApproval> {
    let expires: i64 = r.get(6)?;
    let mut status: String = r.get(7)?;
    if (status == "pending" || status == "granted") && now >= expires {
        status = "expired".into();
    }
    Ok(StoredApproval {
        id: r.get(0)?,
        action: r.get(1)?,
        commit_point: r.get(2)?,
        target: r.get(3)?,
        scope: r.get(4)?,
        created: time(r.get(5)?),
        expires: time(expires),
        status,
    })
}

impl ApprovalDb {
    /// Opens (creating if needed, 0600) `approvals.db` in `state_dir`.
    pub fn open(state_dir: &Path) -> Result<Self, StoreError> {
        fsutil::ensure_dir(state_dir)?;
        let path = state_dir.join(APPROVALS_DB);
        fsutil::create_private(&path)?;
        Self::open_file(path)
    }

    /// Opens `approvals.db` in `state_dir` only when it exists (`safesh approve`
    /// must not create state where no request was ever made).
    pub fn open_existing(state_dir: &Path) -> Result<Option<Self>, StoreError> {
        let path = state_dir.join(APPROVALS_DB);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io("inspecting", path, e)),
            Ok(_) => Self::open_file(path).map(Some),
        }
    }

    fn open_file(path: PathBuf) -> Result<Self, StoreError> {
        let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| sql_err(&path, e))?;
        let db = ApprovalDb {
            conn: Mutex::new(conn),
            path,
        };
        crate::busy::retry_while_busy(|| db.init(), StoreError::is_busy)?;
        Ok(db)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A dropped transaction rolls back: the connection is good after a panic.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn init(&self) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(e)?;
        crate::labels::wal_full(&conn, &self.path)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(e)?;
        match version {
            0 => {
                tx.execute_batch(
                    "CREATE TABLE IF NOT EXISTS approvals (
                        id TEXT PRIMARY KEY NOT NULL,
                        action TEXT NOT NULL,
                        commit_point TEXT NOT NULL,
                        target TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        created_ms INTEGER NOT NULL,
                        expires_ms INTEGER NOT NULL,
                        status TEXT NOT NULL
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
        tx.prepare(&format!("SELECT {COLUMNS} FROM approvals LIMIT 0"))
            .map_err(|err| StoreError::Corrupt {
                path: self.path.clone(),
                detail: err.to_string(),
            })?;
        tx.commit().map_err(e)
    }

    /// Records a new pending request (and forgets long-lapsed ones). False when
    /// the id is taken already (the caller picks another).
    pub fn insert(&self, a: &StoredApproval, now: SystemTime) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let forget = ms(now).saturating_sub(i64::try_from(KEEP.as_millis()).unwrap_or(0));
        tx.execute("DELETE FROM approvals WHERE expires_ms < ?1", [forget])
            .map_err(e)?;
        let n = tx
            .execute(
                &format!(
                    "INSERT OR IGNORE INTO approvals ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending')"
                ),
                params![
                    a.id,
                    a.action,
                    a.commit_point,
                    a.target,
                    a.scope,
                    ms(a.created),
                    ms(a.expires)
                ],
            )
            .map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(n == 1)
    }

    /// The request `id`, its status as of `now` (`None`: unknown or forgotten).
    pub fn get(&self, id: &str, now: SystemTime) -> Result<Option<StoredApproval>, StoreError> {
        let conn = self.conn();
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"),
            [id],
            |r| row(r, ms(now)),
        )
        .optional()
        .map_err(|e| sql_err(&self.path, e))
    }

    /// The human decides request `id`: `to` is `granted` or `denied`.
    pub fn decide(&self, id: &str, to: &str, now: SystemTime) -> Result<Decide, StoreError> {
        let mut conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let found = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"),
                [id],
                |r| row(r, ms(now)),
            )
            .optional()
            .map_err(e)?;
        let out = match found {
            None => Decide::Unknown,
            Some(a) if a.status == "expired" => Decide::Expired,
            Some(a) if a.status != "pending" => Decide::Already(a.status),
            Some(mut a) => {
                tx.execute(
                    "UPDATE approvals SET status = ?2 WHERE id = ?1 AND status = 'pending'",
                    params![id, to],
                )
                .map_err(e)?;
                a.status = to.to_string();
                Decide::Done(a)
            }
        };
        tx.commit().map_err(e)?;
        Ok(out)
    }

    /// Consumes a live grant of exactly `action` in `scope` (at `commit_point`
    /// when given): its id, or `None` when nothing authorizes it.
    pub fn take(
        &self,
        action: &str,
        commit_point: Option<&str>,
        scope: &str,
        now: SystemTime,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let id: Option<String> = tx
            .query_row(
                "SELECT id FROM approvals WHERE status = 'granted' AND action = ?1 \
                 AND scope = ?2 AND (?3 IS NULL OR commit_point = ?3) AND expires_ms > ?4 \
                 ORDER BY created_ms LIMIT 1",
                params![action, scope, commit_point, ms(now)],
                |r| r.get(0),
            )
            .optional()
            .map_err(e)?;
        if let Some(id) = &id {
            tx.execute(
                "UPDATE approvals SET status = 'used' WHERE id = ?1",
                [id.as_str()],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(id)
    }

    /// Requests still waiting for the human, oldest first.
    pub fn pending(&self, now: SystemTime) -> Result<Vec<StoredApproval>, StoreError> {
        let conn = self.conn();
        let e = |e| sql_err(&self.path, e);
        let mut st = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE status = 'pending' AND expires_ms > ?1 \
                 ORDER BY created_ms"
            ))
            .map_err(e)?;
        let rows = st.query_map([ms(now)], |r| row(r, ms(now))).map_err(e)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: &str, action: &str, now: SystemTime) -> StoredApproval {
        StoredApproval {
            id: id.into(),
            action: action.into(),
            commit_point: "destructive".into(),
            target: "keep1.txt".into(),
            scope: "/p".into(),
            created: now,
            expires: now + Duration::from_secs(300),
            status: "pending".into(),
        }
    }

    #[test]
    fn a_grant_is_taken_once_by_another_process_and_only_for_its_action_and_scope() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let now = SystemTime::now();
        let a = ApprovalDb::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            a.insert(&req("abcd2345", "rm x", now), now).ok(),
            Some(true)
        );
        assert_eq!(
            a.insert(&req("abcd2345", "rm y", now), now).ok(),
            Some(false)
        );
        // Another process (another connection) grants it.
        let b = ApprovalDb::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            b.decide("abcd2345", "granted", now),
            Ok(Decide::Done(_))
        ));
        assert!(matches!(
            b.decide("abcd2345", "denied", now),
            Ok(Decide::Already(s)) if s == "granted"
        ));
        assert_eq!(a.take("rm y", None, "/p", now).ok(), Some(None));
        assert_eq!(a.take("rm x", None, "/other", now).ok(), Some(None));
        assert_eq!(a.take("rm x", Some("network"), "/p", now).ok(), Some(None));
        assert_eq!(
            a.take("rm x", Some("destructive"), "/p", now).ok(),
            Some(Some("abcd2345".to_string()))
        );
        assert_eq!(b.take("rm x", None, "/p", now).ok(), Some(None));
    }

    #[test]
    fn a_lapsed_request_cannot_be_decided_or_taken() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let now = SystemTime::now();
        let db = ApprovalDb::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let _ = db.insert(&req("aaaa2345", "rm x", now), now);
        let _ = db.insert(&req("bbbb2345", "rm x", now), now);
        let _ = db.decide("bbbb2345", "granted", now);
        let later = now + Duration::from_secs(301);
        assert_eq!(
            db.decide("aaaa2345", "granted", later).ok(),
            Some(Decide::Expired)
        );
        assert_eq!(db.take("rm x", None, "/p", later).ok(), Some(None));
        assert_eq!(db.pending(later).map(|v| v.len()).ok(), Some(0));
        assert_eq!(
            db.get("bbbb2345", later).ok().flatten().map(|a| a.status),
            Some("expired".to_string())
        );
        assert_eq!(
            db.decide("zzzz2345", "granted", now).ok(),
            Some(Decide::Unknown)
        );
    }
}
