//! The `verify` builtin (issue 19): a pass-through when every assertion holds
//! (differential: `S | verify …` prints exactly what `S` prints), a stop like a
//! refusal when one fails, and never an oracle on a secret.

use safesh_core::{
    ErrorCode, ExecOutcome, InputSource, Limits, OutputTarget, Session, SessionOptions,
};
use std::path::Path;

const CONFIG: &str = r#"
[sandbox]
read = ["."]
write = ["."]
[labels]
secret = [".env"]
"#;

fn session(dir: &Path, extra: &str) -> Session {
    std::fs::write(dir.join("c.toml"), format!("{CONFIG}\n{extra}")).unwrap();
    std::fs::write(dir.join(".env"), "API_KEY=sk-live-0123456789\n").unwrap();
    std::fs::write(dir.join("public.txt"), "hello\nworld\n").unwrap();
    let config = safesh_policy::config::load(&safesh_policy::config::LoadOptions {
        config_file: Some(dir.join("c.toml")),
        cwd: dir.to_path_buf(),
        home: Some(dir.to_path_buf()),
        xdg_state_home: Some(dir.join("state")),
        xdg_config_home: Some(dir.join("xdg-config")),
        no_project: true,
    })
    .unwrap();
    Session::new(SessionOptions {
        cwd: dir.to_path_buf(),
        env: vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("HOME".into(), dir.display().to_string()),
        ],
        limits: Limits::default(),
        arg0: "safesh".into(),
        args: Vec::new(),
        write_roots: None,
        on_calling_thread: false,
        policy: Some(safesh_policy::Policy::new(config)),
    })
}

fn run_in(s: &mut Session, script: &str) -> ExecOutcome {
    s.exec(
        script,
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    )
}

fn run(dir: &Path, script: &str) -> ExecOutcome {
    run_in(&mut session(dir, ""), script)
}

fn err(o: &ExecOutcome) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_passing_verify_prints_exactly_what_its_input_was() {
    let dir = tempfile::tempdir().unwrap();
    for (producer, asserts) in [
        (
            "printf 'a.rs\\nb.rs\\nc.rs\\n'",
            "not_empty 'contains:.rs' 'count_gte:3'",
        ),
        ("printf 'no newline at the end'", "'matches_regex:end$'"),
        ("printf '\\001\\377bytes\\n\\n\\n'", "not_empty"),
        (
            "printf '[1,2,3]'",
            "'count_gte:3' 'json_schema:{\"type\":\"array\"}'",
        ),
        ("cat public.txt", "'contains:world' not_empty@payload.x"),
        ("seq 1 2000", "'count_gte:2000' 'contains:1999'"),
    ] {
        let plain = run(dir.path(), producer);
        let verified = run(dir.path(), &format!("{producer} | verify {asserts}"));
        if asserts.contains("payload.x") {
            // The input is not JSON: the payload target fails (the neighbour below).
            assert_eq!(verified.exit_code, 1, "{}", err(&verified));
            continue;
        }
        assert_eq!(
            verified.stdout,
            plain.stdout,
            "{producer} | verify {asserts}: {}",
            err(&verified)
        );
        assert_eq!(verified.exit_code, 0, "{producer}: {}", err(&verified));
        assert!(verified.error.is_none());
    }
}

#[test]
fn a_failing_assertion_stops_the_script_like_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        "printf 'a\\nb\\n' | verify not_empty 'count_gte:3'; touch after",
    );
    let e = o.error.as_ref().expect("a refusal");
    assert_eq!(e.code, ErrorCode::VerificationFailed);
    assert_eq!(o.exit_code, 1);
    assert!(
        o.stdout.is_empty(),
        "nothing passes through a failed verify"
    );
    assert_eq!(
        e.message,
        "verify: assertion 2 (count_gte) failed: 2 non-empty lines, wanted ≥ 3"
    );
    assert!(e.suggestion.is_some());
    assert!(!dir.path().join("after").exists(), "the script went on");
    // Empty input, `[]`, `{}` and `null` are empty.
    for input in ["", "[]", "{}", "null", "  \n"] {
        let o = run(dir.path(), &format!("printf '{input}' | verify not_empty"));
        assert_eq!(o.exit_code, 1, "{input:?} is not empty?");
    }
}

#[test]
fn a_bad_assertion_is_a_usage_error_before_the_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for (words, says) in [
        ("contain:x", "unknown assertion type \"contain\""),
        ("'matches_regex:(a'", "bad regex"),
        ("count_gte:many", "integer"),
        ("", "usage: verify"),
    ] {
        let o = run(
            dir.path(),
            &format!("echo x | verify {words}; echo status=$?"),
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "status=2\n", "{words}");
        assert!(err(&o).contains(says), "{words}: {}", err(&o));
    }
}

#[test]
fn verify_on_a_secret_cannot_tell_a_right_guess_from_a_wrong_one() {
    let dir = tempfile::tempdir().unwrap();
    let right = run(
        dir.path(),
        "cat .env | verify 'contains:sk-live-0123456789'",
    );
    let wrong = run(
        dir.path(),
        "cat .env | verify 'contains:sk-live-9999999999'",
    );
    let prefix = run(dir.path(), "cat .env | verify 'contains:API_KEY'");
    for o in [&right, &wrong, &prefix] {
        assert_eq!(o.exit_code, 1);
        assert_eq!(
            o.error.as_ref().map(|e| e.code),
            Some(ErrorCode::VerificationFailed)
        );
    }
    // Same for a regex and a count of the secret's lines.
    let re = run(dir.path(), "cat .env | verify 'matches_regex:^API'");
    assert_eq!(re.exit_code, 1);
    // What does pass on a secret says nothing about it: it is not empty.
    let o = run(
        dir.path(),
        "cat .env | verify not_empty > copy.txt; echo ok",
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n", "{}", err(&o));
    // The data passed through keeps its label: the copy is as secret as .env.
    let o = run(dir.path(), "cat .env | verify not_empty");
    assert!(o.label.is_secret(), "the label was lost");
    // The benign neighbour: public text is checked as written.
    let o = run(
        dir.path(),
        "cat public.txt | verify 'contains:hello' 'matches_regex:(?m)^world$'",
    );
    assert_eq!(o.exit_code, 0, "{}", err(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\nworld\n");
}

#[test]
fn context_targets_and_fail_fast_from_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "[verify]\nfail_fast = true\n");
    let o = run_in(
        &mut s,
        "context set --json project files '[\"a\",\"b\"]'; echo x | verify 'count_gte@context.project.files:2'",
    );
    assert_eq!(o.exit_code, 0, "{}", err(&o));
    let o = run_in(
        &mut s,
        "echo x | verify 'contains:y' 'count_gte@context.project.files:9'",
    );
    let e = o.error.expect("failed");
    assert!(
        e.message.contains("assertion 1 (contains)"),
        "{}",
        e.message
    );
    assert!(
        !e.message.contains("assertions failed"),
        "fail_fast evaluated the rest: {}",
        e.message
    );
    // A file target is read through the path check, like `cat`.
    std::fs::write(dir.path().join("public.txt"), "hello\n").unwrap();
    let o = run_in(
        &mut s,
        "echo x | verify 'file_exists:public.txt' 'file_contains:public.txt:hello'",
    );
    assert_eq!(o.exit_code, 0, "{}", err(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "x\n");
    let o = run_in(&mut s, "echo x | verify 'file_exists:missing.txt'");
    assert_eq!(o.exit_code, 1, "{}", err(&o));
}

#[test]
fn llm_judge_in_a_script_is_unavailable_or_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), "echo hi | verify 'llm_judge:greets'");
    assert_eq!(o.exit_code, 1);
    assert!(o.error.expect("fails").message.contains("unavailable"));
    let mut s = session(dir.path(), "[verify]\nllm_judge_required = false\n");
    let o = run_in(&mut s, "echo hi | verify not_empty 'llm_judge:greets'");
    assert_eq!(o.exit_code, 0, "{}", err(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hi\n");
    assert!(err(&o).contains("llm_judge"), "{}", err(&o));
}
