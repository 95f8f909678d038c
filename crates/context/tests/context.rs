//! The context store and the history on real files: values keep their labels
//! across opens (as across processes), limits refuse, history is bounded.

// Tests: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use safesh_context::{
    CONTEXT_DB, ContextError, ContextStore, HISTORY_LOG, HistoryConfig, HistoryEntry, HistoryLog,
    HistoryQuery, Limits, NewValue, Scope,
};
use safesh_label::Label;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

fn set(
    s: &ContextStore,
    scope: Scope,
    owner: &str,
    key: &str,
    v: Value,
    l: &Label,
) -> Result<(), ContextError> {
    let tags = BTreeMap::new();
    let new = NewValue {
        value: &v,
        label: l,
        key_label: &Label::agent(),
        tags: &tags,
    };
    s.set(scope, owner, key, new, Limits::default())
}

fn entry(session: Option<&str>, command: &str, t: u64) -> HistoryEntry {
    HistoryEntry {
        id: String::new(),
        time_unix_ms: t,
        face: "cli".into(),
        session: session.map(str::to_string),
        command: command.into(),
        intent: None,
        exit_code: 0,
        error: None,
        duration_ms: 1,
        label: HistoryEntry::label_summary(&Label::agent()),
        verification: None,
        run: None,
    }
}

#[test]
fn a_secret_value_keeps_its_label_in_another_open_store() {
    let dir = tempfile::tempdir().unwrap();
    let secret = Label::secret("dotenv");
    {
        let s = ContextStore::open(dir.path()).unwrap();
        set(&s, Scope::Project, "/p", "tok", json!("v"), &secret).unwrap();
        set(
            &s,
            Scope::Project,
            "/p",
            "pub",
            json!({"a": [1]}),
            &Label::agent(),
        )
        .unwrap();
    }
    let s = ContextStore::open(dir.path()).unwrap();
    let got = s.get(Scope::Project, "/p", "tok").unwrap().unwrap();
    assert_eq!(got.value, json!("v"));
    assert_eq!(got.label, secret);
    assert!(!got.label.confidentiality.is_public());
    let public = s.get(Scope::Project, "/p", "pub").unwrap().unwrap();
    assert!(public.label.confidentiality.is_public());
    // Another project does not see it.
    assert!(s.get(Scope::Project, "/q", "tok").unwrap().is_none());
    let keys: Vec<String> = s
        .list(Scope::Project, "/p", Some("t"))
        .unwrap()
        .into_iter()
        .map(|i| i.key)
        .collect();
    assert_eq!(keys, ["tok"]);
    let mode = std::fs::metadata(dir.path().join(CONTEXT_DB))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn limits_refuse_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = ContextStore::open(dir.path()).unwrap();
    let limits = Limits {
        max_value_bytes: 10,
        max_keys: 2,
    };
    let tags = BTreeMap::new();
    let l = Label::agent();
    let new = |v: &'static Value| NewValue {
        value: v,
        label: &l,
        key_label: &l,
        tags: &tags,
    };
    static BIG: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!("0123456789abcdef"));
    static SMALL: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!("ok"));
    let e = s
        .set(Scope::Project, "/p", "big", new(&BIG), limits)
        .unwrap_err();
    assert!(
        matches!(
            e,
            ContextError::LimitExceeded {
                key: "max_value_bytes",
                ..
            }
        ),
        "{e}"
    );
    assert!(s.get(Scope::Project, "/p", "big").unwrap().is_none());
    s.set(Scope::Project, "/p", "a", new(&SMALL), limits)
        .unwrap();
    s.set(Scope::Project, "/p", "b", new(&SMALL), limits)
        .unwrap();
    // Replacing an existing key is not a new key.
    s.set(Scope::Project, "/p", "b", new(&SMALL), limits)
        .unwrap();
    let e = s
        .set(Scope::Project, "/p", "c", new(&SMALL), limits)
        .unwrap_err();
    assert!(
        matches!(
            e,
            ContextError::LimitExceeded {
                key: "max_keys",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("max_keys"));
    // Another scope has its own count.
    s.set(Scope::Step, "x", "c", new(&SMALL), limits).unwrap();
}

#[test]
fn bad_keys_and_the_read_only_history_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = ContextStore::open(dir.path()).unwrap();
    for key in ["", "a\nb", "nul\0"] {
        let e = set(&s, Scope::Project, "/p", key, json!(1), &Label::agent()).unwrap_err();
        assert!(matches!(e, ContextError::BadKey { .. }), "{key:?}: {e}");
    }
    let e = set(&s, Scope::History, "", "k", json!(1), &Label::agent()).unwrap_err();
    assert!(matches!(e, ContextError::ReadOnly));
    assert!(matches!(
        s.delete(Scope::History, "", "1"),
        Err(ContextError::ReadOnly)
    ));
    assert!(matches!(
        Scope::parse("global"),
        Err(ContextError::BadScope(_))
    ));
}

#[test]
fn step_and_session_scopes_are_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let s = ContextStore::open(dir.path()).unwrap();
    set(&s, Scope::Step, "s1", "k", json!(1), &Label::agent()).unwrap();
    set(&s, Scope::Session, "s1", "k", json!(2), &Label::agent()).unwrap();
    set(&s, Scope::Session, "s2", "k", json!(3), &Label::agent()).unwrap();
    s.clear_step("s1").unwrap();
    assert!(s.get(Scope::Step, "s1", "k").unwrap().is_none());
    assert!(s.get(Scope::Session, "s1", "k").unwrap().is_some());
    s.end_session("s1").unwrap();
    assert!(s.get(Scope::Session, "s1", "k").unwrap().is_none());
    assert!(s.get(Scope::Session, "s2", "k").unwrap().is_some());
}

#[test]
fn history_filters_and_is_read_through_the_history_scope() {
    let dir = tempfile::tempdir().unwrap();
    let log = HistoryLog::new(dir.path());
    let cfg = HistoryConfig::default();
    for i in 0..5u64 {
        let session = if i % 2 == 0 { Some("a") } else { None };
        log.append(&entry(session, &format!("cmd {i}"), 1000 + i), cfg)
            .unwrap();
    }
    let all = log
        .read(&HistoryQuery {
            limit: Some(100),
            ..Default::default()
        })
        .unwrap();
    let cmds: Vec<&str> = all.iter().map(|e| e.command.as_str()).collect();
    assert_eq!(cmds, ["cmd 0", "cmd 1", "cmd 2", "cmd 3", "cmd 4"]);
    let a = log
        .read(&HistoryQuery {
            session: Some("a".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(a.len(), 3);
    let since = log
        .read(&HistoryQuery {
            since: Some(1004),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(since.len(), 1);
    let one = log
        .read(&HistoryQuery {
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(one[0].command, "cmd 4");
    // Read through the history scope of the store beside it.
    let s = ContextStore::open(dir.path()).unwrap();
    let item = s.get(Scope::History, "", &one[0].id).unwrap().unwrap();
    assert_eq!(item.value["command"], "cmd 4");
    assert_eq!(s.list(Scope::History, "", None).unwrap().len(), 5);
    // Not persisted: nothing appended.
    let off = HistoryConfig {
        max_entries: 3,
        persist: false,
    };
    log.append(&entry(None, "hidden", 2000), off).unwrap();
    let last = log
        .read(&HistoryQuery {
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(last[0].command, "cmd 4");
    let mode = std::fs::metadata(dir.path().join(HISTORY_LOG))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn history_is_compacted_to_the_newest_max_entries() {
    let dir = tempfile::tempdir().unwrap();
    let log = HistoryLog::new(dir.path());
    // 3 entries of ~1 KiB pass the 1 MiB floor of the threshold only after
    // ~1000 appends: use big commands to get there quickly.
    let cfg = HistoryConfig {
        max_entries: 3,
        persist: true,
    };
    let big = "x".repeat(64 * 1024);
    for i in 0..20u64 {
        log.append(&entry(None, &format!("{i} {big}"), i), cfg)
            .unwrap();
    }
    let all = log
        .read(&HistoryQuery {
            limit: Some(100),
            ..Default::default()
        })
        .unwrap();
    assert!(all.len() <= 16, "never compacted: {} entries", all.len());
    assert!(
        all.last().unwrap().command.starts_with("19 "),
        "the newest is kept"
    );
    let size = std::fs::metadata(dir.path().join(HISTORY_LOG))
        .unwrap()
        .len();
    assert!(size <= 1 << 20, "{size}");
    // Small entries: at most max_entries survive a compaction.
    let dir = tempfile::tempdir().unwrap();
    let log = HistoryLog::new(dir.path());
    let cfg = HistoryConfig {
        max_entries: 10,
        persist: true,
    };
    let mid = "y".repeat(2000);
    for i in 0..600u64 {
        log.append(&entry(None, &format!("{i} {mid}"), i), cfg)
            .unwrap();
    }
    let all = log
        .read(&HistoryQuery {
            limit: Some(1000),
            ..Default::default()
        })
        .unwrap();
    assert!(all.len() < 600, "never compacted");
    assert!(all.last().unwrap().command.starts_with("599 "));
}

#[test]
fn a_foreign_file_is_reported_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(CONTEXT_DB), b"not a database at all, just text....................................................................................").unwrap();
    let e = ContextStore::open(dir.path()).unwrap_err();
    assert!(matches!(e, ContextError::Corrupt { .. }), "{e}");
}

/// Child side of `first_opens_racing_on_a_fresh_state_dir_all_succeed`: with
/// `RACE_STATE` set, waits for the `go` file, then opens the store and sets a key.
#[test]
#[ignore = "run by first_opens_racing_on_a_fresh_state_dir_all_succeed as a child process"]
fn race_child() {
    let Some(state) = std::env::var_os("RACE_STATE") else {
        return;
    };
    let state = std::path::PathBuf::from(state);
    let go = state.with_file_name("go");
    while !go.exists() {
        std::hint::spin_loop();
    }
    let key = format!("k{}", std::process::id());
    let r = ContextStore::open(&state)
        .and_then(|s| set(&s, Scope::Project, "/p", &key, json!(1), &Label::agent()));
    if let Err(e) = r {
        eprintln!("RACE FAILED: {e}");
        std::process::exit(3);
    }
}

#[test]
fn first_opens_racing_on_a_fresh_state_dir_all_succeed() {
    // Every safesh process opens the store, and several first runs at once once
    // failed one of them with "database is locked": the switch of a new file to
    // WAL fails at once rather than wait. Real processes race here (threads of
    // one process share SQLite's locks and do not show it).
    const CHILDREN: usize = 8;
    for round in 0..15 {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let children: Vec<_> = (0..CHILDREN)
            .map(|_| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["race_child", "--exact", "--ignored", "--nocapture"])
                    .env("RACE_STATE", &state)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::write(dir.path().join("go"), "").unwrap();
        for c in children {
            let out = c.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "round {round}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let store = ContextStore::open(&state).unwrap();
        assert_eq!(
            store.list(Scope::Project, "/p", None).unwrap().len(),
            CHILDREN
        );
    }
}
