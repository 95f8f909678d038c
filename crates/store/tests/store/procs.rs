//! Several real processes at once: this test binary re-runs itself as children
//! (the ignored `child` test), each hammering the same state dir.

use crate::common::secrets;
use safesh_label::{Atom, Clause, Confidentiality, Integrity, Label};
use safesh_store::{
    ApprovalDb, AuditLog, CommitPoint, Entry, Filter, LabelStore, Verdict, WriteMode,
};
use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHILDREN: usize = 8;
const OPS: usize = 200;
const DONE: &str = "child finished";

fn named(name: String) -> Label {
    Label::new(
        Confidentiality(BTreeSet::from([Clause::single(Atom::Secret(name.into()))])),
        Integrity::single(Atom::Agent),
        safesh_label::AtomSet::new(),
    )
}

/// Run `CHILDREN` copies of the `child` test with `role`, all at once, and check
/// each one ran (its marker line) and succeeded.
fn spawn_children(role: &str, state: &Path, work: &Path) {
    let exe = std::env::current_exe().unwrap();
    let kids: Vec<_> = (0..CHILDREN)
        .map(|i| {
            Command::new(&exe)
                .args(["procs::child", "--exact", "--ignored", "--nocapture"])
                .args(["--test-threads", "1"])
                .env("SAFESH_STORE_ROLE", role)
                .env("SAFESH_STORE_INDEX", i.to_string())
                .env("SAFESH_STORE_STATE", state)
                .env("SAFESH_STORE_WORK", work)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for kid in kids {
        let out = kid.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(DONE),
            "child failed: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "run by the multi-process tests as a child process"]
fn child() {
    let var = |k: &str| std::env::var(k).unwrap();
    let i: usize = var("SAFESH_STORE_INDEX").parse().unwrap();
    let state = PathBuf::from(var("SAFESH_STORE_STATE"));
    let work = PathBuf::from(var("SAFESH_STORE_WORK"));
    match var("SAFESH_STORE_ROLE").as_str() {
        "labels" => label_child(i, &state, &work),
        "audit" => audit_child(i, &state),
        "first_open" => first_open_child(&state, &work),
        other => panic!("unknown role {other}"),
    }
    println!("{DONE}");
}

/// Even ops append to the shared file, odd ops truncate this child's own file.
fn label_child(i: usize, state: &Path, work: &Path) {
    let store = LabelStore::open(state).unwrap();
    let shared = work.join("shared");
    let own = work.join(format!("own{i}"));
    for j in 0..OPS {
        if j % 2 == 0 {
            let mut f = OpenOptions::new().append(true).open(&shared).unwrap();
            f.write_all(b"x").unwrap();
            drop(f);
            store
                .record_write(
                    &shared,
                    &named(format!("s{i}-{j}")),
                    WriteMode::Append { before: None },
                )
                .unwrap();
        } else {
            fs::write(&own, format!("{j}")).unwrap();
            store
                .record_write(&own, &named(format!("o{i}-{j}")), WriteMode::Truncate)
                .unwrap();
            let got = store.lookup(&own).unwrap().unwrap();
            assert!(secrets(&got.label).contains(&format!("o{i}-{j}")));
        }
    }
}

fn audit_child(i: usize, state: &Path) {
    let log = AuditLog::open(state).unwrap();
    for j in 0..OPS {
        // Long enough lines (~2 KiB) that interleaving inside a line would show.
        let e = Entry::new(format!("child{i}"), CommitPoint::Exec, Verdict::Allow)
            .with_command(format!("{j} {}", "y".repeat(2000)))
            .with_rule(format!("{j}"));
        log.append(&e).unwrap();
    }
}

#[test]
fn concurrent_label_writers_lose_no_update() {
    let d = crate::common::dirs();
    let shared = d.work.join("shared");
    fs::write(&shared, "").unwrap();
    // The children also race to create the database.
    spawn_children("labels", &d.state, &d.work);
    let store = LabelStore::open(&d.state).unwrap();
    let got = store.lookup(&shared).unwrap().unwrap();
    // The last transaction fingerprinted the file after every append.
    assert!(!got.changed_outside);
    let want: BTreeSet<String> = (0..CHILDREN)
        .flat_map(|i| (0..OPS).step_by(2).map(move |j| format!("s{i}-{j}")))
        .collect();
    assert_eq!(secrets(&got.label), want);
    assert_eq!(
        fs::metadata(&shared).unwrap().len(),
        (CHILDREN * OPS / 2) as u64
    );
    for i in 0..CHILDREN {
        let own = store
            .lookup(&d.work.join(format!("own{i}")))
            .unwrap()
            .unwrap();
        let want: BTreeSet<String> = (1..OPS).step_by(2).map(|j| format!("o{i}-{j}")).collect();
        assert_eq!(secrets(&own.label), want, "own{i}");
    }
    assert_eq!(store.len().unwrap(), CHILDREN + 1);
}

#[test]
fn concurrent_audit_appends_never_interleave() {
    let d = crate::common::dirs();
    spawn_children("audit", &d.state, &d.work);
    let read = AuditLog::read(&d.state, &Filter::default()).unwrap();
    assert_eq!(read.malformed, 0);
    assert_eq!(read.entries.len(), CHILDREN * OPS);
    for i in 0..CHILDREN {
        let f = Filter {
            session: Some(format!("child{i}")),
            ..Filter::default()
        };
        let mine = AuditLog::read(&d.state, &f).unwrap().entries;
        // Each child's entries are all there, in its own order.
        let rules: Vec<String> = mine.iter().map(|e| e.rule.clone()).collect();
        let want: Vec<String> = (0..OPS).map(|j| j.to_string()).collect();
        assert_eq!(rules, want, "child{i}");
        assert!(mine.iter().all(|e| e.command.len() > 2000));
    }
}

/// Waits for `work/go` (so every child opens at the same moment), then opens
/// both databases of a fresh state dir.
fn first_open_child(state: &Path, work: &Path) {
    while !work.join("go").exists() {
        std::hint::spin_loop();
    }
    if let Err(e) = LabelStore::open(state) {
        panic!("label store: {e}");
    }
    if let Err(e) = ApprovalDb::open(state) {
        panic!("approvals: {e}");
    }
}

#[test]
fn first_opens_racing_on_a_fresh_state_dir_all_succeed() {
    // Switching a new database to WAL fails at once (no busy wait) when another
    // process is doing the same: every safesh process opens these stores, so two
    // first runs at once failed one of them with "database is locked".
    for _round in 0..10 {
        let d = crate::common::dirs();
        let go = d.work.join("go");
        let starter = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            fs::write(go, "").unwrap();
        });
        spawn_children("first_open", &d.state, &d.work);
        starter.join().unwrap();
    }
}
