//! The label store in one process: monotonicity, append, external changes,
//! cp/mv/rm, declassification, permissions and a corrupt database.

use crate::common::{dirs, mode, secret, secrets};
use safesh_label::{Atom, Integrity, Label};
use safesh_store::{CHANGED_OUTSIDE, Fingerprint, LABELS_DB, LabelStore, StoreError, WriteMode};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn label_json_round_trips_through_the_store() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("f");
    fs::write(&f, "x").unwrap();
    let label = secret("tok", Atom::Env("TOKEN".into()))
        .join(&Label::from_network("example.com"))
        .join(&Label::sandboxed("python3"))
        .endorse([Atom::EndorsedBy("review".into())]);
    store.record_write(&f, &label, WriteMode::Truncate).unwrap();
    drop(store);
    // A fresh open (another process would do the same) reads it back intact.
    let store = LabelStore::open(&d.state).unwrap();
    let got = store.lookup(&f).unwrap().unwrap();
    assert_eq!(got.label, label);
    assert!(!got.changed_outside);
    let json = serde_json::to_string(&Label::agent()).unwrap();
    assert_eq!(
        serde_json::from_str::<Label>(&json).unwrap(),
        Label::agent()
    );
    let top: Label =
        serde_json::from_str(&serde_json::to_string(&Label::empty()).unwrap()).unwrap();
    assert!(top.is_empty());
}

#[test]
fn truncating_public_data_over_a_secret_file_keeps_it_secret() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("notes");
    fs::write(&f, "sk-123456").unwrap();
    store
        .record_write(
            &f,
            &secret("api", Atom::Env("API".into())),
            WriteMode::Truncate,
        )
        .unwrap();
    fs::write(&f, "hello").unwrap();
    let new = store
        .record_write(&f, &Label::agent(), WriteMode::Truncate)
        .unwrap();
    assert_eq!(secrets(&new), names(&["api"]));
    // Integrity is the new data's: the old bytes are gone.
    assert_eq!(new.integrity, Integrity::single(Atom::Agent));
    let got = store.lookup(&f).unwrap().unwrap();
    assert_eq!(got.label, new);
    assert!(got.label.is_secret());
}

#[test]
fn append_joins_with_the_old_label() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("log");
    fs::write(&f, "a").unwrap();
    store
        .record_write(&f, &secret("a", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    let before = Fingerprint::of(&f).unwrap();
    fs::write(&f, "ab").unwrap();
    let new = store
        .record_write(
            &f,
            &secret("b", Atom::Agent),
            WriteMode::Append {
                before: Some(before),
            },
        )
        .unwrap();
    assert_eq!(secrets(&new), names(&["a", "b"]));
    assert_eq!(new.integrity, Integrity::single(Atom::Agent));
    assert!(!store.lookup(&f).unwrap().unwrap().changed_outside);
}

#[test]
fn append_onto_contents_changed_outside_loses_integrity() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("log");
    fs::write(&f, "a").unwrap();
    store
        .record_write(&f, &secret("a", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::write(&f, "changed by someone else").unwrap();
    let before = Fingerprint::of(&f).unwrap();
    fs::write(&f, "changed by someone else + ours").unwrap();
    for mode in [
        WriteMode::Append {
            before: Some(before),
        },
        WriteMode::Append { before: None },
    ] {
        let new = store.record_write(&f, &Label::agent(), mode).unwrap();
        assert_eq!(secrets(&new), names(&["a"]));
        assert_eq!(new.integrity, Integrity::none(), "{mode:?}");
    }
}

#[test]
fn a_change_behind_safeshs_back_keeps_secrecy_and_drops_integrity() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("cfg");
    fs::write(&f, "v1").unwrap();
    let label = secret("db", Atom::User);
    store.record_write(&f, &label, WriteMode::Truncate).unwrap();
    let fresh = store.lookup(&f).unwrap().unwrap();
    assert!(!fresh.changed_outside);
    assert_eq!(fresh.label, label);

    fs::write(&f, "edited outside safesh").unwrap();
    let got = store.lookup(&f).unwrap().unwrap();
    assert!(got.changed_outside);
    assert_eq!(got.recorded, label);
    assert_eq!(got.label.confidentiality, label.confidentiality);
    assert_eq!(got.label.integrity, Integrity::none());
    assert!(!got.label.has_integrity(&Atom::User));
    let marker = Atom::Custom(format!("{CHANGED_OUTSIDE}:{}", f.display()).into());
    assert!(
        got.label.origins.contains(&marker),
        "{:?}",
        got.label.origins
    );
    assert!(got.label.origins.contains(&Atom::User));

    // Replacing the file (new inode) counts as a change too.
    let tmp = d.work.join("cfg.new");
    fs::write(&tmp, "v1").unwrap();
    store.record_write(&f, &label, WriteMode::Truncate).unwrap();
    fs::rename(&tmp, &f).unwrap();
    assert!(store.lookup(&f).unwrap().unwrap().changed_outside);
}

#[test]
fn unknown_and_vanished_files_have_no_stored_label() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("gone");
    assert_eq!(store.lookup(&f).unwrap(), None);
    fs::write(&f, "x").unwrap();
    assert_eq!(store.lookup(&f).unwrap(), None);
    store
        .record_write(&f, &secret("s", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::remove_file(&f).unwrap();
    assert_eq!(store.lookup(&f).unwrap(), None);
    // Recording a write to a file that is not there is an error, not a guess.
    assert!(matches!(
        store.record_write(&f, &Label::agent(), WriteMode::Truncate),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn relative_paths_are_refused() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    assert!(matches!(
        store.lookup(Path::new("rel/f")),
        Err(StoreError::RelativePath(_))
    ));
    assert!(matches!(
        store.record_write(Path::new("f"), &Label::agent(), WriteMode::Truncate),
        Err(StoreError::RelativePath(_))
    ));
}

#[test]
fn cp_carries_the_label_and_joins_into_the_target() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let (a, b, c) = (d.work.join("a"), d.work.join("b"), d.work.join("c"));
    fs::write(&a, "secret a").unwrap();
    store
        .record_write(&a, &secret("a", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::write(&b, "secret b").unwrap();
    store
        .record_write(&b, &secret("b", Atom::Agent), WriteMode::Truncate)
        .unwrap();

    fs::copy(&a, &c).unwrap();
    let new = store.copy(&a, &c).unwrap().unwrap();
    assert_eq!(secrets(&new), names(&["a"]));
    assert!(!store.lookup(&c).unwrap().unwrap().changed_outside);

    fs::copy(&a, &b).unwrap();
    let new = store.copy(&a, &b).unwrap().unwrap();
    assert_eq!(secrets(&new), names(&["a", "b"]));
    assert_eq!(store.lookup(&b).unwrap().unwrap().label, new);

    // Neither side known: nothing recorded.
    let (x, y) = (d.work.join("x"), d.work.join("y"));
    fs::write(&x, "x").unwrap();
    fs::copy(&x, &y).unwrap();
    assert_eq!(store.copy(&x, &y).unwrap(), None);
    assert_eq!(store.lookup(&y).unwrap(), None);
}

#[test]
fn cp_of_a_file_changed_outside_carries_the_untrusted_label() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let (a, c) = (d.work.join("a"), d.work.join("c"));
    fs::write(&a, "v1").unwrap();
    store
        .record_write(&a, &secret("a", Atom::User), WriteMode::Truncate)
        .unwrap();
    fs::write(&a, "tampered!").unwrap();
    fs::copy(&a, &c).unwrap();
    let new = store.copy(&a, &c).unwrap().unwrap();
    assert_eq!(secrets(&new), names(&["a"]));
    assert_eq!(new.integrity, Integrity::none());
}

#[test]
fn mv_moves_the_entry_and_joins_into_an_existing_one() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let (a, b, c) = (d.work.join("a"), d.work.join("b"), d.work.join("c"));
    fs::write(&a, "a").unwrap();
    let la = secret("a", Atom::User);
    store.record_write(&a, &la, WriteMode::Truncate).unwrap();
    fs::rename(&a, &c).unwrap();
    assert_eq!(store.rename(&a, &c).unwrap(), 1);
    assert_eq!(store.lookup(&a).unwrap(), None);
    let got = store.lookup(&c).unwrap().unwrap();
    // A rename changes the ctime only: the contents are still the ones safesh wrote.
    assert!(!got.changed_outside);
    assert_eq!(got.label, la);

    fs::write(&b, "b").unwrap();
    store
        .record_write(&b, &secret("b", Atom::User), WriteMode::Truncate)
        .unwrap();
    fs::rename(&c, &b).unwrap();
    store.rename(&c, &b).unwrap();
    let got = store.lookup(&b).unwrap().unwrap();
    assert_eq!(secrets(&got.label), names(&["a", "b"]));
    assert_eq!(store.len().unwrap(), 1);
}

#[test]
fn mv_of_a_directory_moves_every_entry_under_it_and_nothing_else() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let dir = d.work.join("dir");
    let sibling = d.work.join("dir2");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::create_dir(&sibling).unwrap();
    for (p, s) in [
        (dir.join("f"), "f"),
        (dir.join("sub/g"), "g"),
        (sibling.join("h"), "h"),
    ] {
        fs::write(&p, s).unwrap();
        store
            .record_write(&p, &secret(s, Atom::Agent), WriteMode::Truncate)
            .unwrap();
    }
    let moved = d.work.join("moved");
    fs::rename(&dir, &moved).unwrap();
    assert_eq!(store.rename(&dir, &moved).unwrap(), 2);
    assert_eq!(
        secrets(&store.lookup(&moved.join("f")).unwrap().unwrap().label),
        names(&["f"])
    );
    let g = store.lookup(&moved.join("sub/g")).unwrap().unwrap();
    assert_eq!(secrets(&g.label), names(&["g"]));
    assert!(!g.changed_outside);
    assert_eq!(store.lookup(&dir.join("f")).unwrap(), None);
    // `dir2/` is not under `dir/`.
    assert!(store.lookup(&sibling.join("h")).unwrap().is_some());

    // rename_tree alone, with a trailing slash on the source.
    let back = d.work.join("back");
    fs::rename(&moved, &back).unwrap();
    let from = std::path::PathBuf::from(format!("{}/", moved.display()));
    assert_eq!(store.rename_tree(&from, &back).unwrap(), 2);
    assert!(store.lookup(&back.join("sub/g")).unwrap().is_some());
    assert_eq!(store.len().unwrap(), 3);
}

#[test]
fn rm_drops_the_entry_and_a_new_file_starts_clean() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("f");
    fs::write(&f, "s").unwrap();
    store
        .record_write(&f, &secret("s", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::remove_file(&f).unwrap();
    assert_eq!(store.remove(&f).unwrap(), 1);
    fs::write(&f, "new").unwrap();
    assert_eq!(store.lookup(&f).unwrap(), None);
    assert!(store.is_empty().unwrap());
}

#[test]
fn declassify_is_the_way_down() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("f");
    fs::write(&f, "s").unwrap();
    store
        .record_write(&f, &secret("s", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    store.declassify(&f, &Label::user_input()).unwrap();
    let got = store.lookup(&f).unwrap().unwrap();
    assert!(!got.label.is_secret());
    assert_eq!(got.label, Label::user_input());
}

#[test]
fn state_files_are_private() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("f");
    fs::write(&f, "s").unwrap();
    store
        .record_write(&f, &Label::agent(), WriteMode::Truncate)
        .unwrap();
    assert_eq!(mode(&d.state), 0o700);
    assert_eq!(mode(&d.state.join(LABELS_DB)), 0o600);
    for side in ["labels.db-wal", "labels.db-shm"] {
        let p = d.state.join(side);
        assert!(p.exists(), "{side} missing: not in WAL mode?");
        assert_eq!(mode(&p), 0o600, "{side}");
    }
}

#[test]
fn a_corrupt_database_is_a_clear_error() {
    let d = dirs();
    fs::create_dir(&d.state).unwrap();
    fs::write(d.state.join(LABELS_DB), vec![0x5a; 8192]).unwrap();
    let err = LabelStore::open(&d.state).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("corrupt"), "{err}");

    // A real SQLite database that is not ours.
    let other = dirs();
    fs::create_dir(&other.state).unwrap();
    let conn = foreign_schema_db(&other.state.join(LABELS_DB));
    let err = LabelStore::open(&other.state).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{conn}: {err:?}");

    // Something that is not a file at all.
    let dir = dirs();
    fs::create_dir_all(dir.state.join(LABELS_DB)).unwrap();
    assert!(LabelStore::open(&dir.state).is_err());
}

/// A real SQLite database that is not a store we know: ours, with the schema
/// version in its header (offset 60, big-endian) patched to 7.
fn foreign_schema_db(path: &Path) -> String {
    let state = path.parent().unwrap();
    // Closing the last connection checkpoints the WAL into the main file.
    drop(LabelStore::open(state).unwrap());
    let mut bytes = fs::read(path).unwrap();
    assert!(bytes.len() >= 100, "database header not written");
    bytes[60..64].copy_from_slice(&7u32.to_be_bytes());
    fs::write(path, bytes).unwrap();
    "schema version 7".to_string()
}

#[test]
fn prepare_write_shows_the_new_secrecy_before_the_write_lands() {
    let d = dirs();
    let writer = LabelStore::open(&d.state).unwrap();
    // Another process's view of the same store.
    let reader = LabelStore::open(&d.state).unwrap();
    let (old, new) = (d.work.join("old"), d.work.join("new"));
    fs::write(&old, "public").unwrap();
    writer
        .record_write(&old, &Label::agent(), WriteMode::Truncate)
        .unwrap();
    let data = secret("k", Atom::Env("K".into()));
    for f in [&old, &new] {
        writer.prepare_write(f, &data).unwrap();
        // Mid-write: secret already, and untrusted until recorded.
        fs::write(f, "half").unwrap();
        let mid = reader.lookup(f).unwrap().unwrap();
        assert_eq!(secrets(&mid.label), names(&["k"]), "{f:?}");
        assert_eq!(mid.label.integrity, Integrity::none());
        fs::write(f, "the secret k").unwrap();
        let done = writer.record_write(f, &data, WriteMode::Truncate).unwrap();
        let got = reader.lookup(f).unwrap().unwrap();
        assert!(!got.changed_outside);
        assert_eq!(got.label, done);
        assert_eq!(done.integrity, data.integrity);
    }
}

#[test]
fn mv_onto_a_directory_or_a_missing_path_keeps_the_label() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let a = d.work.join("a");
    let dir = d.work.join("dir");
    fs::create_dir(&dir).unwrap();
    fs::write(&a, "a").unwrap();
    store
        .record_write(&a, &secret("a", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::rename(&a, dir.join("a")).unwrap();
    assert!(matches!(
        store.rename(&a, &dir),
        Err(StoreError::IsDirectory(_))
    ));
    assert!(matches!(
        store.rename(&a, &d.work.join("nowhere")),
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(store.rename(&a, &dir.join("a")).unwrap(), 1);
    let got = store.lookup(&dir.join("a")).unwrap().unwrap();
    assert_eq!(secrets(&got.label), names(&["a"]));
}

#[test]
fn loose_permissions_are_tightened_and_symlinks_refused() {
    use std::os::unix::fs::PermissionsExt;
    let d = dirs();
    fs::create_dir(&d.state).unwrap();
    let db = d.state.join(LABELS_DB);
    drop(LabelStore::open(&d.state).unwrap());
    fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
    drop(LabelStore::open(&d.state).unwrap());
    assert_eq!(mode(&db), 0o600);

    let other = dirs();
    fs::create_dir(&other.state).unwrap();
    std::os::unix::fs::symlink(&db, other.state.join(LABELS_DB)).unwrap();
    assert!(LabelStore::open(&other.state).is_err());
}

#[test]
fn handles_are_shareable_between_threads() {
    fn shareable<T: Send + Sync>(_: &T) -> bool {
        true
    }
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let log = safesh_store::AuditLog::open(&d.state).unwrap();
    assert!(shareable(&store) && shareable(&log));
    let f = d.work.join("f");
    fs::write(&f, "x").unwrap();
    std::thread::scope(|s| {
        for i in 0..4 {
            let (store, f) = (&store, &f);
            s.spawn(move || {
                store
                    .record_write(
                        f,
                        &secret(&format!("t{i}"), Atom::Agent),
                        WriteMode::Append { before: None },
                    )
                    .unwrap();
            });
        }
    });
    let got = store.lookup(&f).unwrap().unwrap();
    assert_eq!(secrets(&got.label), names(&["t0", "t1", "t2", "t3"]));
}

#[test]
fn truncate_forgets_the_changed_outside_mark_but_not_the_secrecy() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("f");
    fs::write(&f, "v1").unwrap();
    store
        .record_write(&f, &secret("s", Atom::Agent), WriteMode::Truncate)
        .unwrap();
    fs::write(&f, "tampered").unwrap();
    let tainted = store
        .record_write(&f, &Label::agent(), WriteMode::Append { before: None })
        .unwrap();
    let marked = |l: &Label| {
        l.origins
            .iter()
            .any(|a| matches!(a, Atom::Custom(c) if c.starts_with(CHANGED_OUTSIDE)))
    };
    assert!(marked(&tainted));
    fs::write(&f, "fresh").unwrap();
    let fresh = store
        .record_write(&f, &Label::agent(), WriteMode::Truncate)
        .unwrap();
    assert!(!marked(&fresh), "{fresh:?}");
    assert_eq!(secrets(&fresh), names(&["s"]));
    assert_eq!(fresh.integrity, Integrity::single(Atom::Agent));
}

#[test]
fn append_after_prepare_on_a_new_file_keeps_our_integrity() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let f = d.work.join("new");
    let data = secret("s", Atom::Agent);
    store.prepare_write(&f, &data).unwrap();
    fs::write(&f, "x").unwrap();
    let got = store
        .record_write(&f, &data, WriteMode::Append { before: None })
        .unwrap();
    assert_eq!(got, data);
}

#[test]
fn confidential_under_lists_only_secret_entries_below_the_directory() {
    let d = dirs();
    let store = LabelStore::open(&d.state).unwrap();
    let sub = d.work.join("sub/deeper");
    fs::create_dir_all(&sub).unwrap();
    let (copy, public, sibling) = (sub.join("copy"), d.work.join("public"), d.work.join("sub2"));
    for f in [&copy, &public] {
        fs::write(f, "x").unwrap();
    }
    fs::write(&sibling, "x").unwrap();
    let s = secret("api", Atom::Env("API".into()));
    store.record_write(&copy, &s, WriteMode::Truncate).unwrap();
    store
        .record_write(&sibling, &s, WriteMode::Truncate)
        .unwrap();
    store
        .record_write(&public, &Label::agent(), WriteMode::Truncate)
        .unwrap();
    assert_eq!(
        store.confidential_under(&d.work.join("sub")).unwrap(),
        vec![copy.clone()]
    );
    let mut all = store.confidential_under(&d.work).unwrap();
    all.sort();
    assert_eq!(all, vec![copy, sibling]);
}
