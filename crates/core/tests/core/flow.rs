//! Information flow with a policy: how each utility propagates a secret label, and
//! the commit points that refuse (the end-to-end attacks with a real HTTP server
//! live in the CLI suite, crates/safesh/tests/safesh/flow.rs).

use safesh_core::{ExecOutcome, InputSource, Limits, OutputTarget, Session, SessionOptions};
use std::path::Path;

const CONFIG: &str = r#"
[sandbox]
read = ["."]
write = ["."]
[labels]
secret = [".env"]
"#;

fn session(dir: &Path) -> Session {
    std::fs::write(dir.join("c.toml"), CONFIG).unwrap();
    std::fs::write(dir.join(".env"), "API_KEY=sk-live-0123456789\nOTHER=2\n").unwrap();
    std::fs::write(dir.join("public.txt"), "hello\nworld\n").unwrap();
    let state = dir.join("state");
    let config = safesh_policy::config::load(&safesh_policy::config::LoadOptions {
        config_file: Some(dir.join("c.toml")),
        cwd: dir.to_path_buf(),
        home: Some(dir.to_path_buf()),
        xdg_state_home: Some(state),
        xdg_config_home: Some(dir.join("xdg-config")),
        no_project: true,
    })
    .unwrap();
    Session::new(SessionOptions {
        cwd: dir.to_path_buf(),
        env: vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("HOME".into(), dir.display().to_string()),
            ("DEPLOY_TOKEN".into(), "tok-abcdef".into()),
        ],
        limits: Limits::default(),
        arg0: "safesh".into(),
        args: Vec::new(),
        write_roots: None,
        on_calling_thread: false,
        policy: Some(safesh_policy::Policy::new(config)),
    })
}

fn run(dir: &Path, script: &str) -> ExecOutcome {
    session(dir).exec(
        script,
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    )
}

/// Runs `script` after recording `file` in the label store as downloaded (as
/// `curl -o file` would have).
fn run_downloaded(dir: &Path, file: &str, script: &str) -> ExecOutcome {
    let store = safesh_store::LabelStore::open(&dir.join("state").join("safesh")).unwrap();
    store
        .record_write(
            &dir.join(file),
            &safesh_label::Label::from_network("evil.example"),
            safesh_store::WriteMode::Truncate,
        )
        .unwrap();
    drop(store);
    run(dir, script)
}

fn secret(o: &ExecOutcome) -> bool {
    !o.label.confidentiality.is_public()
}

fn code(o: &ExecOutcome) -> Option<String> {
    o.error.as_ref().map(|e| e.code.as_str().to_string())
}

#[test]
fn cat_head_tail_sort_keep_the_secret_label() {
    let d = tempfile::tempdir().unwrap();
    for s in [
        "cat .env",
        "head -1 .env",
        "tail -n1 .env",
        "sort .env",
        "cut -d= -f2 .env",
        "tr a-z A-Z < .env",
        "base64 .env",
    ] {
        let o = run(d.path(), s);
        assert!(secret(&o), "{s}: {:?}", o.label);
    }
}

#[test]
fn every_utility_family_propagates_the_label() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(".env.json"), "{\"k\":\"sk-live-1\"}\n").unwrap();
    std::fs::write(
        d.path().join("c2.toml"),
        "[sandbox]\nread = [\".\"]\nwrite = [\".\"]\n[labels]\nsecret = [\".env\", \".env.*\"]\n",
    )
    .unwrap();
    for s in [
        "jq -r .k .env.json",                 // jq projects
        "cat .env | tee copy2.txt",           // tee duplicates (stdout)
        "K=$(cat .env); echo \"$K\"",         // echo joins its arguments
        "printf '%s\\n' \"$(head -1 .env)\"", // printf too
        "sort .env | uniq",                   // sort / uniq permute
        "cat .env | xargs -n1 echo",          // xargs fans out
        "sed s/API/X/ .env",                  // sed edits
        "awk -F= '{print $2}' .env",          // awk projects
        "grep API .env",                      // grep keeps matching lines
    ] {
        let o = run(d.path(), s);
        assert_eq!(o.exit_code, 0, "{s}: {:?}", o.error);
        assert!(secret(&o), "{s}: {:?}", o.label);
    }
    // tee's file copy carries it too.
    let o = run(d.path(), "cat copy2.txt");
    assert!(secret(&o), "{:?}", o.label);
}

#[test]
fn grep_joins_the_label_of_its_pattern() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        "P=$(cut -c1-3 .env | head -1); grep -c \"$P\" public.txt",
    );
    // A count with a secret pattern says something about the secret.
    assert!(secret(&o), "{:?}", o.label);
    let o = run(
        d.path(),
        "printf 'alpha\\n' > a.txt; P=$(cut -c1-1 .env | head -1); grep -i \"$P\" a.txt",
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "alpha\n");
    assert!(
        secret(&o),
        "matching on a secret pattern reveals it: {:?}",
        o.label
    );
}

#[test]
fn counts_of_secret_data_stay_secret() {
    // A count is a channel (`head -c $byte | wc -c` sends a byte a call): its
    // confidentiality is the data's, whatever the options look like.
    let d = tempfile::tempdir().unwrap();
    for s in [
        "wc -l .env",
        "grep -c API .env",
        "cat .env | wc -c",
        "grep -e -c -e . .env",
        "grep . .env -- -c",
        "grep -iek .env",
        "egrep -c A .env",
        "head -c \"$(head -c 1 .env | od -An -tu1)\" /dev/zero | wc -c",
    ] {
        let o = run(d.path(), s);
        assert!(
            secret(&o),
            "{s}: a count of a secret is secret: {:?}",
            o.label
        );
    }
}

#[test]
fn a_count_is_vouched_for_only_when_the_options_make_it_a_count() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("dl.txt"), "rm -rf x\n").unwrap();
    for (s, counted) in [
        ("wc -l dl.txt", true),
        ("grep -c rm dl.txt", true),
        ("grep --count rm dl.txt", true),
        ("grep -e -c -e rm dl.txt", false),
        ("grep rm dl.txt -- -c", false),
        ("grep -ier dl.txt", false),
        ("grep -rc rm .", false),
    ] {
        let o = run_downloaded(d.path(), "dl.txt", s);
        assert_eq!(
            safesh_flow::trust::is_trusted(&o.label),
            counted,
            "{s}: {:?}",
            o.label
        );
    }
}

#[test]
fn public_files_stay_public() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "cat public.txt; grep -n o public.txt");
    assert!(!secret(&o), "{:?}", o.label);
}

#[test]
fn variables_substitutions_and_copies_keep_the_label() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "K=$(cat .env); echo \"$K\" | head -c 3");
    assert!(secret(&o));
    // A copy made by safesh carries the label, in this process and the next.
    let o = run(d.path(), "cp .env copy.txt; cat copy.txt");
    assert!(secret(&o));
    let o = run(d.path(), "cat copy.txt");
    assert!(secret(&o), "a later session still knows: {:?}", o.label);
    let o = run(d.path(), "cat .env > redirected.txt");
    assert_eq!(o.exit_code, 0);
    let o = run(d.path(), "cat redirected.txt");
    assert!(secret(&o), "{:?}", o.label);
}

#[test]
fn a_files_label_only_goes_up() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "cat .env > f.txt; echo public > f.txt; cat f.txt");
    assert!(secret(&o), "overwriting with public data keeps it secret");
}

#[test]
fn secret_environment_values_are_labeled() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "echo \"$DEPLOY_TOKEN\"");
    assert!(secret(&o), "{:?}", o.label);
    let o = run(d.path(), "echo \"$HOME\"");
    assert!(!secret(&o));
}

#[test]
fn an_if_on_a_secret_taints_what_it_controls_only() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "if grep -q sk-live .env; then echo yes; fi");
    assert!(secret(&o), "implicit flow: {:?}", o.label);
    let o = run(d.path(), "if grep -q sk-live .env; then :; fi; echo after");
    assert!(
        !secret(&o),
        "the PC is restored after the if: {:?}",
        o.label
    );
    let o = run(d.path(), "grep -q sk-live .env && echo yes");
    assert!(secret(&o));
    let o = run(d.path(), "for l in $(cat .env); do echo x; done");
    assert!(secret(&o), "the loop list decides how often: {:?}", o.label);
}

#[test]
fn setting_path_from_a_secret_condition_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        "if grep -q sk-live .env; then PATH=/tmp:$PATH; fi; echo ran",
    );
    assert_eq!(code(&o).as_deref(), Some("FLOW_VIOLATION"), "{:?}", o.error);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("ran"));
    // Control: the same assignment under a clean condition.
    let o = run(d.path(), "if true; then PATH=/usr/bin:$PATH; fi; echo ran");
    assert_eq!(o.exit_code, 0, "{:?}", o.error);
}

#[test]
fn eval_and_source_of_agent_text_run() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        "printf 'echo hi\\n' > s.sh; source s.sh; eval 'echo there'",
    );
    assert_eq!(o.exit_code, 0, "{:?}", o.error);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hi\nthere\n");
}

#[test]
fn network_without_a_host_list_is_refused_before_connecting() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "curl -s http://127.0.0.1:9/; echo ran");
    assert_eq!(
        code(&o).as_deref(),
        Some("PERMISSION_DENIED"),
        "{:?}",
        o.error
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("ran"));
}

#[test]
fn every_refused_commit_point_is_in_the_audit_log_without_the_secret() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        "K=$(cat .env); if [ -n \"$K\" ]; then HOME=/x; fi",
    );
    assert_eq!(code(&o).as_deref(), Some("FLOW_VIOLATION"), "{:?}", o.error);
    let log = std::fs::read_to_string(d.path().join("state/safesh/audit.jsonl")).unwrap();
    assert!(log.contains("\"verdict\":\"block\""), "{log}");
    assert!(log.contains("flow.env"), "{log}");
    assert!(!log.contains("sk-live"), "{log}");
}

#[test]
fn symlinks_and_dot_dot_paths_to_a_secret_are_secret_however_they_are_read() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(d.path().join(".env"), d.path().join("link")).unwrap();
    // `dirlink/..` is the symlink target's parent for the kernel, not `.`.
    std::fs::create_dir_all(d.path().join("deep/inner")).unwrap();
    std::fs::write(d.path().join("deep/.env"), "K=v\n").unwrap();
    std::os::unix::fs::symlink(d.path().join("deep/inner"), d.path().join("dirlink")).unwrap();
    for s in [
        "cat link",
        "cat < link",
        "cat ./link",
        "cat sub/../link",
        "grep K link",
        "cat dirlink/../.env",
        "cat < dirlink/../.env",
        "grep -r K deep",
        "cat link link .env public.txt",
    ] {
        let o = run(d.path(), s);
        assert_eq!(
            o.exit_code,
            0,
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(secret(&o), "{s}: {:?}", o.label);
    }
    // The same file read twice in one session (the classification is cached) and
    // a public file read after a secret one keep their own labels.
    let mut s = session(d.path());
    for (script, want) in [
        ("cat public.txt", false),
        ("cat link", true),
        ("cat public.txt", false),
        ("cat link", true),
    ] {
        let o = s.exec(
            script,
            InputSource::Empty,
            OutputTarget::Separate { cap: 1 << 20 },
        );
        assert_eq!(secret(&o), want, "{script}: {:?}", o.label);
    }
    // A symlink retargeted between reads: the label follows the target.
    std::fs::write(d.path().join("plain.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink(d.path().join("plain.txt"), d.path().join("moving")).unwrap();
    let o = s.exec(
        "cat moving",
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    );
    assert!(!secret(&o), "{:?}", o.label);
    std::fs::remove_file(d.path().join("moving")).unwrap();
    std::os::unix::fs::symlink(d.path().join(".env"), d.path().join("moving")).unwrap();
    let o = s.exec(
        "cat moving",
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    );
    assert!(secret(&o), "{:?}", o.label);
}

#[test]
fn a_store_created_by_another_session_is_seen_from_the_next_request_on() {
    let d = tempfile::tempdir().unwrap();
    let mut reader = session(d.path());
    std::fs::write(d.path().join("later.txt"), "x\n").unwrap();
    // No store yet: the reader remembers its absence for this request only.
    let o = reader.exec(
        "cat later.txt",
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    );
    assert!(!secret(&o), "{:?}", o.label);
    assert!(!d.path().join("state/safesh/labels.db").exists());
    // Another session (another process, for the store) writes a secret there.
    let o = run(d.path(), "cat .env > later.txt");
    assert_eq!(o.exit_code, 0);
    let o = reader.exec(
        "cat later.txt",
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    );
    assert!(
        secret(&o),
        "the next request looks for the store again: {:?}",
        o.label
    );
}
