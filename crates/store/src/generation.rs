//! The label store's generation: a number that changes whenever any file's
//! label is written, changed or removed, so that a caller which computed labels
//! at one generation (a checkpoint's files) can tell, at the next, whether any
//! of them could differ now without asking again for each file.
//!
//! Why triggers: every writer bumps it, whatever its version — an older safesh
//! sharing the state dir runs the triggers too, since they are part of the
//! database's schema, so no write path can forget to count. The counter comes
//! with a random id chosen when the table is made: a store moved aside and
//! created again starts a new sequence, never one that repeats an old
//! `(id, n)`. The schema version is not raised (an older safesh reading
//! version 2 would refuse the whole store): the table and triggers are made,
//! if missing, the first time a generation is asked for.

use crate::error::StoreError;
use crate::labels::{LabelStore, sql_err};
use rusqlite::TransactionBehavior;

/// Where the store's generation is: one row, and a trigger per kind of change.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS label_generation (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id INTEGER NOT NULL,
    n INTEGER NOT NULL
);
INSERT OR IGNORE INTO label_generation (one, id, n) VALUES (1, random(), 0);
CREATE TRIGGER IF NOT EXISTS label_generation_insert AFTER INSERT ON labels
    BEGIN UPDATE label_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS label_generation_update AFTER UPDATE ON labels
    BEGIN UPDATE label_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS label_generation_delete AFTER DELETE ON labels
    BEGIN UPDATE label_generation SET n = n + 1; END;
";

/// A generation of the label store: equal generations mean no label was
/// written, changed or removed in between (by any process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Generation {
    /// Chosen at random when the counter was made.
    pub id: i64,
    /// Changes counted since.
    pub n: i64,
}

impl LabelStore {
    /// The store's generation now (see the module docs). The first call on a
    /// store made before generations existed adds the counter (one write).
    pub fn generation(&self) -> Result<Generation, StoreError> {
        let read = |conn: &rusqlite::Connection| {
            conn.prepare_cached("SELECT id, n FROM label_generation WHERE one = 1")
                .and_then(|mut st| {
                    st.query_row([], |r| {
                        Ok(Generation {
                            id: r.get(0)?,
                            n: r.get(1)?,
                        })
                    })
                })
        };
        let mut conn = self.conn();
        if let Ok(g) = read(&conn) {
            return Ok(g);
        }
        let e = |e| sql_err(self.path(), e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        tx.execute_batch(SCHEMA).map_err(e)?;
        let g = read(&tx).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::WriteMode;
    use safesh_label::Label;

    #[test]
    fn every_change_of_a_label_changes_the_generation() {
        let state = tempfile::tempdir().unwrap();
        let files = tempfile::tempdir().unwrap();
        let f = files.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let store = LabelStore::open(state.path()).unwrap();
        let g0 = store.generation().unwrap();
        assert_eq!(store.generation().unwrap(), g0, "a read is no change");
        store
            .record_write(&f, &Label::secret("s"), WriteMode::Truncate)
            .unwrap();
        let g1 = store.generation().unwrap();
        assert_ne!(g1, g0);
        store.lookup(&f).unwrap();
        assert_eq!(store.generation().unwrap(), g1, "a lookup is no change");
        store
            .record_write(&f, &Label::secret("t"), WriteMode::Append { before: None })
            .unwrap();
        let g2 = store.generation().unwrap();
        assert_ne!(g2, g1);
        store.remove(&f).unwrap();
        assert_ne!(store.generation().unwrap(), g2);
    }

    #[test]
    fn another_connection_sees_the_change_and_a_new_store_a_new_id() {
        let state = tempfile::tempdir().unwrap();
        let files = tempfile::tempdir().unwrap();
        let f = files.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let a = LabelStore::open(state.path()).unwrap();
        let b = LabelStore::open(state.path()).unwrap();
        let g0 = a.generation().unwrap();
        assert_eq!(b.generation().unwrap(), g0);
        b.record_write(&f, &Label::secret("s"), WriteMode::Truncate)
            .unwrap();
        assert_ne!(a.generation().unwrap(), g0);
        drop((a, b));
        let other = tempfile::tempdir().unwrap();
        let c = LabelStore::open(other.path()).unwrap();
        // Random ids: equal by chance once in 2^64.
        assert_ne!(c.generation().unwrap().id, g0.id);
    }
}
