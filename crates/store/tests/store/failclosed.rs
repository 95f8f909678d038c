//! What the interpreter's fail-closed handling relies on (issue 14, channel 12):
//! a store that cannot be opened says which file and why; a label prepared
//! before a write outlives a writer that never records the end; many processes
//! creating a fresh store at once all get it.

use crate::common::{dirs, secret, secrets};
use safesh_label::{Atom, Integrity};
use safesh_store::{LABELS_DB, LabelStore, StoreError, WriteMode};
use std::fs;

#[test]
fn an_unusable_store_is_an_error_naming_the_database() {
    for bad in ["dir", "garbage"] {
        let d = dirs();
        fs::create_dir(&d.state).unwrap();
        let db = d.state.join(LABELS_DB);
        if bad == "dir" {
            fs::create_dir(&db).unwrap();
        } else {
            fs::write(&db, b"not a database, just text\n".repeat(200)).unwrap();
        }
        let err = LabelStore::open(&d.state).unwrap_err();
        assert!(
            err.to_string().contains(&db.display().to_string()),
            "{bad}: the error does not name {}: {err}",
            db.display()
        );
        if bad == "garbage" {
            assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        }
    }
}

#[test]
fn a_label_prepared_before_the_bytes_survives_a_writer_that_never_records() {
    let d = dirs();
    let data = secret("k", Atom::Env("K".into()));
    let f = d.work.join("copy");
    {
        let writer = LabelStore::open(&d.state).unwrap();
        // Before the file exists (a redirection records, then opens).
        writer.prepare_write(&f, &data).unwrap();
        fs::write(&f, "the secret k").unwrap();
        // The writer is killed here: no record_write, the handle just goes.
    }
    let reader = LabelStore::open(&d.state).unwrap();
    let got = reader.lookup(&f).unwrap().expect("a label");
    assert_eq!(secrets(&got.label), ["k".to_string()].into());
    assert_eq!(got.label.integrity, Integrity::none());
    // A later complete write of the same file keeps the secrecy.
    fs::write(&f, "more").unwrap();
    let l = reader
        .record_write(&f, &safesh_label::Label::agent(), WriteMode::Truncate)
        .unwrap();
    assert_eq!(secrets(&l), ["k".to_string()].into());
}

#[test]
fn many_processes_creating_a_fresh_store_at_once_all_get_it() {
    let d = dirs();
    let data = secret("k", Atom::Env("K".into()));
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (state, work) = (d.state.clone(), d.work.clone());
            let (data, barrier) = (data.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                // One connection each, like separate processes.
                let store = LabelStore::open(&state)?;
                store.prepare_write(&work.join(format!("f{i}")), &data)
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let store = LabelStore::open(&d.state).unwrap();
    assert_eq!(store.len().unwrap(), 8);
}
