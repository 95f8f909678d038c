//! Checkpoint round trips over real trees in temp dirs.

// Tests: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use safesh_checkpoint::{CheckpointError, Filter, Settings, Store};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

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
    // dup1/dup2 share one object: 5 distinct contents + the changed README.
    let objects = walk_count(&f.state.join("checkpoints/objects"));
    assert_eq!(objects, 6);
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

fn walk_count(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            n += walk_count(&e.path());
        } else {
            n += 1;
        }
    }
    n
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
    assert_eq!(store.list(&f.proj).unwrap().len(), 20);
    std::fs::write(f.proj.join("README.md"), "x").unwrap();
    store.restore(&f.proj, "t0-0", &roots, &filter(&s)).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.proj.join("README.md")).unwrap(),
        "# demo\n"
    );
    store.sweep().unwrap();
    assert!(!objects.join(".tmp-999-1").exists());
}
