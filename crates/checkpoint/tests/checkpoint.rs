//! Checkpoint round trips over real trees in temp dirs.

// Tests: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use safesh_checkpoint::{CheckpointError, Filter, Settings, Store};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[path = "checkpoint/journal.rs"]
mod journal;

/// Everything a tree holds, for exact comparison: path → (kind, mode, content).
fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let mode = m.permissions().mode() & 0o7777;
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(
                    rel,
                    ("link".into(), 0, t.as_os_str().as_encoded_bytes().to_vec()),
                );
            } else if m.is_dir() {
                out.insert(rel, ("dir".into(), mode, Vec::new()));
                stack.push(p);
            } else {
                out.insert(rel, ("file".into(), mode, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

struct Fixture {
    _tmp: tempfile::TempDir,
    proj: PathBuf,
    state: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(proj.join("src/deep/er")).unwrap();
    std::fs::create_dir_all(proj.join("target/debug")).unwrap();
    std::fs::write(proj.join("README.md"), "# demo\n").unwrap();
    std::fs::write(proj.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(
        proj.join("src/deep/er/data.bin"),
        (0..=255u8).cycle().take(70_000).collect::<Vec<_>>(),
    )
    .unwrap();
    std::fs::write(proj.join("src/dup1.txt"), "same\n").unwrap();
    std::fs::write(proj.join("src/dup2.txt"), "same\n").unwrap();
    std::fs::write(proj.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(proj.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/main.rs", proj.join("main-link")).unwrap();
    std::os::unix::fs::symlink("../nowhere", proj.join("dangling")).unwrap();
    std::fs::write(proj.join("target/debug/big.o"), "build output\n").unwrap();
    std::fs::write(proj.join("safesh.toml"), "[sandbox]\n").unwrap();
    Fixture {
        _tmp: tmp,
        proj,
        state,
    }
}

fn protected(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "safesh.toml")
}

fn filter(settings: &Settings) -> Filter<'_> {
    Filter {
        exclude: &settings.exclude,
        protected: &protected,
    }
}

fn no_label(_: &Path) -> Option<String> {
    None
}

#[allow(clippy::too_many_arguments)]
fn save(
    store: &Store,
    project: &Path,
    roots: &[PathBuf],
    name: Option<&str>,
    filter: &Filter<'_>,
    label_of: &dyn Fn(&Path) -> Option<String>,
    extra: serde_json::Value,
    settings: &Settings,
) -> Result<safesh_checkpoint::Saved, CheckpointError> {
    store.save(
        &safesh_checkpoint::SaveRequest {
            project,
            roots,
            name,
            filter,
            label_of,
            extra,
            label_epoch: None,
            journal: None,
        },
        settings,
    )
}

#[test]
fn restore_brings_back_contents_modes_links_and_removes_new_files() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    let before = fingerprint(&f.proj);
    let saved = save(
        &store,
        &f.proj,
        &roots,
        Some("before"),
        &filter(&s),
        &no_label,
        serde_json::json!({"k": 1}),
        &s,
    )
    .unwrap();
    assert_eq!(saved.summary.files, 6, "{saved:?}");
    // Break everything: edit, delete, chmod, relink, add files and dirs, swap kinds.
    std::fs::write(f.proj.join("README.md"), "changed\n").unwrap();
    std::fs::remove_file(f.proj.join("src/main.rs")).unwrap();
    std::fs::remove_dir_all(f.proj.join("src/deep")).unwrap();
    std::fs::set_permissions(
        f.proj.join("run.sh"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::remove_file(f.proj.join("main-link")).unwrap();
    std::os::unix::fs::symlink("README.md", f.proj.join("main-link")).unwrap();
    std::fs::create_dir_all(f.proj.join("new/dir")).unwrap();
    std::fs::write(f.proj.join("new/dir/x.txt"), "new\n").unwrap();
    std::fs::remove_file(f.proj.join("src/dup1.txt")).unwrap();
    std::fs::create_dir(f.proj.join("src/dup1.txt")).unwrap();
    std::fs::write(f.proj.join("safesh.toml"), "[sandbox]\n# human edit\n").unwrap();
    std::fs::write(f.proj.join("target/debug/big.o"), "rebuilt\n").unwrap();

    let r = store
        .restore(
            &f.proj,
            "before",
            std::slice::from_ref(&f.proj),
            &filter(&s),
        )
        .unwrap();
    assert!(!r.written.is_empty() && !r.removed.is_empty(), "{r:?}");
    let mut after = fingerprint(&f.proj);
    let mut want = before.clone();
    // Protected and excluded paths are the human's and the build's: untouched.
    for p in ["safesh.toml", "target/debug/big.o"] {
        after.remove(Path::new(p));
        want.remove(Path::new(p));
    }
    assert_eq!(after, want);
    assert_eq!(
        std::fs::read_to_string(f.proj.join("safesh.toml")).unwrap(),
        "[sandbox]\n# human edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.proj.join("target/debug/big.o")).unwrap(),
        "rebuilt\n"
    );
    // A second restore changes nothing.
    let again = store
        .restore(
            &f.proj,
            "before",
            std::slice::from_ref(&f.proj),
            &filter(&s),
        )
        .unwrap();
    assert!(
        again.written.is_empty() && again.removed.is_empty(),
        "{again:?}"
    );
}

#[test]
fn an_unchanged_tree_is_saved_without_reading_files_and_contents_are_stored_once() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    let first = save(
        &store,
        &f.proj,
        &roots,
        Some("a"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    assert_eq!(first.files_read, 6);
    let second = save(
        &store,
        &f.proj,
        &roots,
        Some("b"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    assert_eq!(second.files_read, 0, "{second:?}");
    std::fs::write(f.proj.join("README.md"), "one change\n").unwrap();
    let third = save(
        &store,
        &f.proj,
        &roots,
        None,
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    assert_eq!(third.files_read, 1, "{third:?}");
    // dup1/dup2 share one content: 5 distinct contents + the changed README,
    // in one pack per save that stored something (the second stored nothing).
    assert_eq!(stored_contents(&f.state), 6);
    assert_eq!(pack_count(&f.state), 2);
    let list = store.list(&f.proj).unwrap();
    assert_eq!(list.len(), 3);
    let d = store.diff(&f.proj, "a", None, &filter(&s)).unwrap();
    assert_eq!(d.modified, vec![f.proj.join("README.md")]);
    assert!(d.added.is_empty() && d.removed.is_empty());
    let d = store
        .diff(&f.proj, "a", Some(&third.summary.name), &filter(&s))
        .unwrap();
    assert_eq!(d.modified, vec![f.proj.join("README.md")]);
    let old = store
        .content(&f.proj, "a", &f.proj.join("README.md"))
        .unwrap()
        .unwrap();
    assert_eq!(old.data, b"# demo\n");
}

/// Contents held by the packs' indexes (48 bytes a record after a 12-byte tag).
fn stored_contents(state: &Path) -> usize {
    pack_files(state, "idx")
        .iter()
        .map(|p| (std::fs::metadata(p).unwrap().len() as usize - 12) / 48)
        .sum()
}

fn pack_count(state: &Path) -> usize {
    pack_files(state, "pack").len()
}

fn pack_files(state: &Path, ext: &str) -> Vec<PathBuf> {
    match std::fs::read_dir(state.join("checkpoints/packs")) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn names_are_not_paths_and_restores_stay_inside_the_roots() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    for bad in ["../x", "a/b", "", ".x"] {
        let e = save(
            &store,
            &f.proj,
            &roots,
            Some(bad),
            &filter(&s),
            &no_label,
            serde_json::Value::Null,
            &s,
        );
        assert!(
            matches!(e, Err(CheckpointError::BadName { .. })),
            "{bad}: {e:?}"
        );
    }
    save(
        &store,
        &f.proj,
        &roots,
        Some("ok"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    let elsewhere = f.state.join("elsewhere");
    let e = store.restore(&f.proj, "ok", &[elsewhere], &filter(&s));
    assert!(matches!(e, Err(CheckpointError::Outside(_))), "{e:?}");
    assert!(matches!(
        store.restore(&f.proj, "nope", &roots, &filter(&s)),
        Err(CheckpointError::NotFound(_))
    ));
}

#[test]
fn size_limit_retention_and_labels() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let roots = vec![f.proj.clone()];
    let small = Settings {
        max_bytes: 1000,
        ..Settings::default()
    };
    let e = save(
        &store,
        &f.proj,
        &roots,
        None,
        &filter(&small),
        &no_label,
        serde_json::Value::Null,
        &small,
    );
    assert!(matches!(e, Err(CheckpointError::TooLarge { .. })), "{e:?}");
    let s = Settings {
        keep: 2,
        ..Settings::default()
    };
    let label = |p: &Path| p.ends_with("README.md").then(|| "secret".to_string());
    for n in ["one", "two", "three"] {
        save(
            &store,
            &f.proj,
            &roots,
            Some(n),
            &filter(&s),
            &label,
            serde_json::Value::Null,
            &s,
        )
        .unwrap();
    }
    let names: Vec<String> = store
        .list(&f.proj)
        .unwrap()
        .into_iter()
        .map(|x| x.name)
        .collect();
    assert_eq!(names, ["two", "three"]);
    std::fs::write(f.proj.join("README.md"), "x").unwrap();
    let r = store
        .restore(&f.proj, "three", &roots, &filter(&s))
        .unwrap();
    assert_eq!(
        r.written,
        vec![(f.proj.join("README.md"), Some("secret".to_string()))]
    );
}

/// Labels of files unchanged since the newest checkpoint are kept from it, not
/// asked again, only while the caller's label epoch is the same.
#[test]
fn labels_of_unchanged_files_are_reused_under_the_same_epoch_only() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let roots = vec![f.proj.clone()];
    let s = Settings::default();
    let asked = std::cell::RefCell::new(Vec::<PathBuf>::new());
    let label = |p: &Path| {
        asked.borrow_mut().push(p.to_path_buf());
        p.ends_with("README.md").then(|| "secret".to_string())
    };
    let save_under = |name: &str, epoch: Option<&str>| {
        asked.borrow_mut().clear();
        store
            .save(
                &safesh_checkpoint::SaveRequest {
                    project: &f.proj,
                    roots: &roots,
                    name: Some(name),
                    filter: &filter(&s),
                    label_of: &label,
                    extra: serde_json::Value::Null,
                    label_epoch: epoch,
                    journal: None,
                },
                &s,
            )
            .unwrap();
        let mut a = asked.borrow().clone();
        a.sort();
        a
    };
    let files = save_under("one", Some("e1")).len();
    assert!(files >= 5, "every file is asked the first time ({files})");
    // Unchanged, same epoch: nothing asked, the secret label kept.
    assert!(save_under("two", Some("e1")).is_empty());
    let label_of = |name: &str, file: &str| {
        store.load(&f.proj, name).unwrap().roots[0]
            .entries
            .iter()
            .find(|e| e.path.display() == file)
            .map(|e| match &e.kind {
                safesh_checkpoint::Kind::File { label, .. } => label.clone(),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(label_of("two", "README.md"), Some("secret".to_string()));
    // One file changed: only it is asked.
    std::fs::write(f.proj.join("src/main.rs"), "fn main() { }\n").unwrap();
    assert_eq!(
        save_under("three", Some("e1")),
        [f.proj.join("src/main.rs")]
    );
    assert_eq!(label_of("three", "README.md"), Some("secret".to_string()));
    // Another epoch, or none: every file again.
    assert_eq!(save_under("four", Some("e2")).len(), files);
    assert_eq!(save_under("five", None).len(), files);
    // After a save without an epoch there is nothing to reuse.
    assert_eq!(save_under("six", Some("e2")).len(), files);
}

#[test]
fn concurrent_saves_and_a_killed_save_leave_the_store_readable() {
    let f = fixture();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    std::thread::scope(|sc| {
        for i in 0..4 {
            let (f, s, roots) = (&f, &s, &roots);
            sc.spawn(move || {
                let store = Store::open(&f.state).unwrap();
                for j in 0..5 {
                    let name = format!("t{i}-{j}");
                    save(
                        &store,
                        &f.proj,
                        roots,
                        Some(&name),
                        &filter(s),
                        &no_label,
                        serde_json::Value::Null,
                        s,
                    )
                    .unwrap();
                }
            });
        }
    });
    let store = Store::open(&f.state).unwrap();
    assert_eq!(store.list(&f.proj).unwrap().len(), 20);
    // What a save killed half way leaves: a temporary manifest and object.
    let objects = f.state.join("checkpoints/objects/00");
    std::fs::create_dir_all(&objects).unwrap();
    std::fs::write(objects.join(".tmp-999-1"), "partial").unwrap();
    let proj_dir = std::fs::read_dir(f.state.join("checkpoints/projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(proj_dir.join(".tmp-x-999"), "{\"trunc").unwrap();
    // ... a pack whose index was never written, and a half-written index.
    let packs = f.state.join("checkpoints/packs");
    std::fs::write(packs.join("0-999-0.pack"), "partial pack").unwrap();
    std::fs::write(packs.join("0-999-1.idx-tmp"), "SAFESH-IDX1\n").unwrap();
    assert_eq!(store.list(&f.proj).unwrap().len(), 20);
    std::fs::write(f.proj.join("README.md"), "x").unwrap();
    store.restore(&f.proj, "t0-0", &roots, &filter(&s)).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.proj.join("README.md")).unwrap(),
        "# demo\n"
    );
    store.sweep().unwrap();
    assert!(!objects.join(".tmp-999-1").exists());
    assert!(!packs.join("0-999-0.pack").exists());
    assert!(!packs.join("0-999-1.idx-tmp").exists());
    // The finished packs stay: every checkpoint still restores.
    std::fs::write(f.proj.join("README.md"), "y").unwrap();
    store.restore(&f.proj, "t3-4", &roots, &filter(&s)).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.proj.join("README.md")).unwrap(),
        "# demo\n"
    );
}

#[test]
fn retention_repacks_a_pack_whose_contents_are_mostly_gone() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings {
        keep: 1,
        ..Settings::default()
    };
    let roots = vec![f.proj.clone()];
    let put = |name: &str| {
        save(
            &store,
            &f.proj,
            &roots,
            Some(name),
            &filter(&s),
            &no_label,
            serde_json::Value::Null,
            &s,
        )
        .unwrap()
    };
    put("one");
    assert_eq!((pack_count(&f.state), stored_contents(&f.state)), (1, 5));
    // The big file changes: the first pack is now mostly dead bytes.
    let big = f.proj.join("src/deep/er/data.bin");
    std::fs::write(&big, vec![7u8; 70_000]).unwrap();
    let two = put("two");
    assert_eq!(two.expired, ["one"]);
    // Its 4 live contents moved to a new pack; the old data.bin is gone.
    assert_eq!((pack_count(&f.state), stored_contents(&f.state)), (2, 5));
    let packed: u64 = pack_files(&f.state, "pack")
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(packed < 71_000, "{packed} bytes in packs");
    let want = fingerprint(&f.proj);
    std::fs::write(&big, "gone").unwrap();
    std::fs::remove_file(f.proj.join("src/dup1.txt")).unwrap();
    store.restore(&f.proj, "two", &roots, &filter(&s)).unwrap();
    assert_eq!(fingerprint(&f.proj), want);
}

#[test]
fn a_damaged_content_is_refused_not_restored() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    save(
        &store,
        &f.proj,
        &roots,
        Some("a"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    // Same length, other bytes (what a lost write after a power cut leaves).
    let pack = &pack_files(&f.state, "pack")[0];
    let len = std::fs::metadata(pack).unwrap().len() as usize;
    std::fs::write(pack, vec![0u8; len]).unwrap();
    std::fs::write(f.proj.join("README.md"), "mine\n").unwrap();
    let e = store.restore(&f.proj, "a", &roots, &filter(&s));
    assert!(matches!(e, Err(CheckpointError::Damaged { .. })), "{e:?}");
    assert_eq!(
        std::fs::read_to_string(f.proj.join("README.md")).unwrap(),
        "mine\n"
    );
    let e = store.content(&f.proj, "a", &f.proj.join("README.md"));
    assert!(matches!(e, Err(CheckpointError::Damaged { .. })), "{e:?}");
}

#[test]
fn checkpoints_of_the_older_form_still_list_and_restore() {
    use sha2_hex::hex;
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    save(
        &store,
        &f.proj,
        &roots,
        Some("old"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    let want = fingerprint(&f.proj);
    // Rewrite the store as saves made it before packs: one JSON document per
    // manifest, each content a file `objects/ab/cdef…`.
    let projects = f.state.join("checkpoints/projects");
    let dir = std::fs::read_dir(&projects)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let manifest = dir.join("old.json");
    let m = store.load(&f.proj, "old").unwrap();
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    for idx in pack_files(&f.state, "idx") {
        let pack = std::fs::read(idx.with_extension("pack")).unwrap();
        let records = std::fs::read(&idx).unwrap();
        for r in records[12..].chunks_exact(48) {
            let name = hex(&r[..32]);
            let at = u64::from_le_bytes(r[32..40].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(r[40..48].try_into().unwrap()) as usize;
            let d = f.state.join("checkpoints/objects").join(&name[..2]);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(&name[2..]), &pack[at..at + len]).unwrap();
        }
        std::fs::remove_file(idx.with_extension("pack")).unwrap();
        std::fs::remove_file(&idx).unwrap();
    }
    let list = store.list(&f.proj).unwrap();
    assert_eq!((list.len(), list[0].files), (1, 6), "{list:?}");
    std::fs::write(f.proj.join("README.md"), "changed").unwrap();
    std::fs::write(f.proj.join("new.txt"), "new").unwrap();
    store.restore(&f.proj, "old", &roots, &filter(&s)).unwrap();
    assert_eq!(fingerprint(&f.proj), want);
    // A save over it reuses the loose contents: the restored README is read
    // again (a new inode) and found stored, so no pack is made.
    let again = save(
        &store,
        &f.proj,
        &roots,
        Some("new"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    assert_eq!(again.files_read, 1, "{again:?}");
    assert_eq!(pack_count(&f.state), 0);
}

/// Lower-case hex (as the store names contents).
mod sha2_hex {
    pub fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[test]
fn identical_files_read_by_different_workers_are_stored_once_and_restore_exactly() {
    // 9 MiB: enough for the save to share its reading among two workers
    // (on a machine with two cores), the twin files in different shares.
    let f = fixture();
    let big = |seed: u8| -> Vec<u8> {
        (0..3 << 20)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed)
            .collect()
    };
    std::fs::write(f.proj.join("a.bin"), big(1)).unwrap();
    std::fs::write(f.proj.join("b.bin"), big(2)).unwrap();
    std::fs::write(f.proj.join("c.bin"), big(1)).unwrap();
    let want = fingerprint(&f.proj);
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    let saved = save(
        &store,
        &f.proj,
        &roots,
        Some("big"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    assert_eq!(saved.files_read, 9);
    // a.bin and c.bin, like dup1 and dup2, are one content each pair.
    assert_eq!(stored_contents(&f.state), 7);
    let packed: u64 = pack_files(&f.state, "pack")
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(
        packed < 7 << 20,
        "the twin was stored twice: {packed} bytes"
    );
    std::fs::remove_file(f.proj.join("c.bin")).unwrap();
    std::fs::write(f.proj.join("a.bin"), "changed").unwrap();
    store.restore(&f.proj, "big", &roots, &filter(&s)).unwrap();
    assert_eq!(fingerprint(&f.proj), want);
}

#[test]
fn manifests_with_a_json_body_still_list_restore_and_keep_their_contents() {
    let f = fixture();
    let store = Store::open(&f.state).unwrap();
    let s = Settings::default();
    let roots = vec![f.proj.clone()];
    save(
        &store,
        &f.proj,
        &roots,
        Some("json"),
        &filter(&s),
        &no_label,
        serde_json::Value::Null,
        &s,
    )
    .unwrap();
    let want = fingerprint(&f.proj);
    // Rewrite it as the previous format wrote it: the summary line, then JSON.
    let m = store.load(&f.proj, "json").unwrap();
    let listed = store.list(&f.proj).unwrap().remove(0);
    let dir = std::fs::read_dir(f.state.join("checkpoints/projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut header = serde_json::to_value(&listed).unwrap();
    header["format"] = "safesh-checkpoint-2".into();
    let mut text = serde_json::to_vec(&header).unwrap();
    text.push(b'\n');
    text.extend(serde_json::to_vec(&m).unwrap());
    std::fs::write(dir.join("json.json"), text).unwrap();
    assert_eq!(store.list(&f.proj).unwrap(), vec![listed]);
    // A sweep reads it too: its contents stay.
    store.sweep().unwrap();
    std::fs::write(f.proj.join("README.md"), "changed").unwrap();
    store.restore(&f.proj, "json", &roots, &filter(&s)).unwrap();
    assert_eq!(fingerprint(&f.proj), want);
}
