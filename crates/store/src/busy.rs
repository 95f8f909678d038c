//! Waiting out another process's lock where SQLite does not wait itself.
//!
//! The busy timeout covers ordinary transactions, but some setup steps fail at
//! once with `SQLITE_BUSY` rather than risk a deadlock: switching a new file to
//! WAL while a second process opens it, or upgrading a read lock. Every safesh
//! process opens the state databases, so two first runs racing on a fresh state
//! dir hit exactly that; they retry the whole setup until a deadline instead of
//! failing the command.

use std::time::{Duration, Instant};

/// How long setup keeps retrying a busy database (the stores' busy timeout).
pub const SETUP_DEADLINE: Duration = Duration::from_secs(10);

/// Whether `e` is SQLite saying another connection holds a lock.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs `setup` until it succeeds, fails for a reason `busy` rejects, or
/// [`SETUP_DEADLINE`] passes (then the last busy error is returned). The pause
/// grows from 1 ms to 50 ms and is offset by the process id, so racing
/// processes do not retry in lockstep.
pub fn retry_while_busy<T, E>(
    mut setup: impl FnMut() -> Result<T, E>,
    busy: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let start = Instant::now();
    let jitter = u64::from(std::process::id() % 7);
    let mut pause_ms = 1;
    loop {
        match setup() {
            Err(e) if busy(&e) && start.elapsed() < SETUP_DEADLINE => {
                std::thread::sleep(Duration::from_millis(pause_ms + jitter));
                pause_ms = (pause_ms * 2).min(50);
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, TransactionBehavior};

    #[test]
    fn a_busy_setup_is_retried_and_other_errors_are_not() {
        let mut calls = 0;
        let r: Result<u32, &str> = retry_while_busy(
            || {
                calls += 1;
                if calls < 3 { Err("busy") } else { Ok(7) }
            },
            |e| *e == "busy",
        );
        assert_eq!(r, Ok(7));
        assert_eq!(calls, 3);
        let mut calls = 0;
        let r: Result<u32, &str> = retry_while_busy(
            || {
                calls += 1;
                Err("corrupt")
            },
            |e| *e == "busy",
        );
        assert_eq!(r, Err("corrupt"));
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_held_write_lock_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        let mut a = Connection::open(&path).unwrap();
        a.execute_batch("CREATE TABLE t (x)").unwrap();
        let tx = a
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .unwrap();
        let b = Connection::open(&path).unwrap();
        b.busy_timeout(Duration::ZERO).unwrap();
        let err = b.execute_batch("INSERT INTO t VALUES (1)").unwrap_err();
        assert!(is_busy(&err), "{err}");
        drop(tx);
        let not_busy = b.execute_batch("SELECT * FROM nowhere").unwrap_err();
        assert!(!is_busy(&not_busy), "{not_busy}");
    }
}
