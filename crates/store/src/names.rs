//! Name labels: the label of the word that created a directory entry (a file, a
//! directory, a symlink) when that word was secret or untrusted, so that what
//! prints the name later (a listing, a glob, `pwd`) carries it.
//!
//! Kept in their own table `name_labels`, keyed by the entry's identity (device,
//! inode): a rename — by safesh or by any program — keeps the label with the
//! entry, wherever it moves. An inode reused after the entry was removed inherits
//! the old label: an over-label, never a loss. The table is created by the first
//! write (a store made before name labels existed migrates then); until then
//! every read finds no name labeled.

use crate::error::StoreError;
use crate::labels::{LabelStore, decode, sql_err};
use rusqlite::Connection;
use safesh_label::Label;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS name_labels (
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (dev, ino)
) WITHOUT ROWID;";

/// An entry's identity: (device, inode) of the entry itself (not followed).
pub type EntryId = (u64, u64);

impl LabelStore {
    /// Record that the entry at `path` (not followed: a symlink is its own entry)
    /// was created by a word labeled `label`. The stored name label only goes up
    /// (joined with one already there). Returns the label now recorded.
    pub fn record_name(&self, path: &Path, label: &Label) -> Result<Label, StoreError> {
        let meta =
            std::fs::symlink_metadata(path).map_err(|e| StoreError::io("inspecting", path, e))?;
        let id = (meta.dev(), meta.ino());
        self.write(|tx, db| {
            tx.execute_batch(CREATE).map_err(|e| sql_err(db, e))?;
            let old: Option<String> = {
                let mut stmt = tx
                    .prepare_cached("SELECT label FROM name_labels WHERE dev = ?1 AND ino = ?2")
                    .map_err(|e| sql_err(db, e))?;
                let mut rows = stmt
                    .query((id.0 as i64, id.1 as i64))
                    .map_err(|e| sql_err(db, e))?;
                match rows.next().map_err(|e| sql_err(db, e))? {
                    Some(r) => Some(r.get(0).map_err(|e| sql_err(db, e))?),
                    None => None,
                }
            };
            let new = match old {
                Some(json) => decode(db, &json)?.join(label),
                None => label.clone(),
            };
            let json = serde_json::to_string(&new).map_err(|source| StoreError::Encode {
                what: "label",
                source,
            })?;
            // u64 columns are stored as their i64 bit pattern (SQLite integers are i64).
            tx.execute(
                "INSERT OR REPLACE INTO name_labels (dev, ino, label) VALUES (?1, ?2, ?3)",
                (id.0 as i64, id.1 as i64, json),
            )
            .map_err(|e| sql_err(db, e))?;
            Ok(new)
        })
    }

    /// Every recorded name label (one query: callers cache them and look entries
    /// up by identity, so a listing costs no query per entry).
    pub fn name_labels(&self) -> Result<Vec<(EntryId, Label)>, StoreError> {
        let conn = self.conn();
        let db = self.path();
        if !has_table(&conn, db)? {
            return Ok(Vec::new());
        }
        let mut stmt = conn
            .prepare_cached("SELECT dev, ino, label FROM name_labels")
            .map_err(|e| sql_err(db, e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(|e| sql_err(db, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (dev, ino, json) = row.map_err(|e| sql_err(db, e))?;
            out.push(((dev as u64, ino as u64), decode(db, &json)?));
        }
        Ok(out)
    }

    /// A number that changes whenever another connection (another safesh process)
    /// commits to the store: a cache of [`name_labels`](Self::name_labels) is
    /// current while it stays the same (SQLite's `PRAGMA data_version`).
    pub fn data_version(&self) -> Result<i64, StoreError> {
        let conn = self.conn();
        // A cached statement: this is asked before every lookup of names.
        conn.prepare_cached("PRAGMA data_version")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| sql_err(self.path(), e))
    }
}

fn has_table(conn: &Connection, db: &Path) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'name_labels'")
        .and_then(|mut s| s.exists([]))
        .map_err(|e| sql_err(db, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use safesh_label::Label;

    #[test]
    fn a_name_label_follows_the_entry_through_a_rename_and_only_goes_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = LabelStore::open(&dir.path().join("state")).unwrap();
        assert!(store.name_labels().unwrap().is_empty());
        let f = dir.path().join("a");
        std::fs::write(&f, "").unwrap();
        let secret = Label::from_file("/p/.env");
        store.record_name(&f, &secret).unwrap();
        let g = dir.path().join("b");
        std::fs::rename(&f, &g).unwrap();
        let meta = std::fs::symlink_metadata(&g).unwrap();
        let labels = store.name_labels().unwrap();
        assert_eq!(labels.len(), 1);
        assert_eq!(labels[0].0, (meta.dev(), meta.ino()));
        let net = Label::from_network("example.com");
        let joined = store.record_name(&g, &net).unwrap();
        assert_eq!(joined, secret.join(&net));
        // Another connection sees it (persisted).
        let other = LabelStore::open(&dir.path().join("state")).unwrap();
        assert_eq!(other.name_labels().unwrap()[0].1, joined);
    }
}
