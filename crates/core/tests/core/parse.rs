//! The whole script is parsed before anything runs.

use super::support::{out, run};
use safesh_core::ErrorCode;

#[test]
fn a_late_syntax_error_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        "touch created.txt\necho hi\nif true; then echo x\n",
    );
    assert_eq!(o.exit_code, 2);
    assert_eq!(
        o.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ParseError)
    );
    assert!(!d.path().join("created.txt").exists());
    assert_eq!(out(&o), "");
    let msg = &o.error.as_ref().unwrap().message;
    assert!(
        msg.contains("fi"),
        "message should say what was expected: {msg}"
    );
    assert!(msg.contains("line"), "{msg}");
}

#[test]
fn a_syntax_error_inside_a_substitution_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "touch a.txt; echo $(if then)");
    assert_eq!(o.exit_code, 2);
    assert!(!d.path().join("a.txt").exists());
}

#[test]
fn unsupported_constructs_are_refused_before_running() {
    let d = tempfile::tempdir().unwrap();
    for script in [
        "touch a.txt; echo x > >(cat)",
        "touch a.txt; coproc cat",
        "touch a.txt; tee >(wc -l) < /dev/null",
    ] {
        let o = run(d.path(), script);
        assert_eq!(
            o.error.as_ref().map(|e| e.code),
            Some(ErrorCode::NotSupported),
            "{script}"
        );
        assert_eq!(o.exit_code, 2);
        assert!(!d.path().join("a.txt").exists(), "{script}");
        assert!(
            o.error
                .as_ref()
                .unwrap()
                .message
                .starts_with("not supported:")
        );
    }
}

#[test]
fn unterminated_quote_names_what_was_expected() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "echo 'abc");
    let e = o.error.unwrap();
    assert_eq!(e.code, ErrorCode::ParseError);
    assert!(e.message.contains("'"), "{}", e.message);
}

#[test]
fn unterminated_quote_points_at_the_quote_that_opened() {
    let d = tempfile::tempdir().unwrap();
    for (script, at) in [
        ("echo ok\necho \"abc\ndef", "line 2, column 6"),
        ("echo 'a' x 'b", "line 1, column 12"),
        (
            "# don't\ncat <<EOF\nit's\nEOF\necho `date",
            "line 5, column 6",
        ),
    ] {
        let e = run(d.path(), script).error.unwrap();
        assert_eq!(e.code, ErrorCode::ParseError);
        let shown = format!("{} {:?}", e.message, e.details.location);
        assert!(shown.contains(at), "{script:?}: {shown}");
    }
}

#[test]
fn command_not_found_continues_like_bash() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "no_such_cmd_xyz; echo after $?");
    assert_eq!(out(&o), "after 127\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no_such_cmd_xyz"));
    assert!(o.error.is_none());
}

#[test]
fn writes_outside_the_write_roots_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "echo x > /tmp/../etc/safesh-should-not-exist");
    assert_eq!(
        o.error.as_ref().map(|e| e.code),
        Some(ErrorCode::PathViolation)
    );
    assert!(!std::path::Path::new("/etc/safesh-should-not-exist").exists());
}

#[test]
fn absurd_nesting_is_a_limit_not_a_crash() {
    let d = tempfile::tempdir().unwrap();
    let deep = format!("{}true{}", "( ".repeat(20_000), " )".repeat(20_000));
    let o = run(d.path(), &deep);
    assert_eq!(
        o.error.as_ref().map(|e| e.code),
        Some(ErrorCode::LimitExceeded)
    );
    assert_eq!(o.exit_code, 125);
}

#[test]
fn spaced_double_parens_are_nested_subshells_like_bash() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "( ( echo deep ) ); ((1 + 1)) && echo arith");
    assert_eq!(out(&o), "deep\narith\n");
}

#[test]
fn input_process_substitution_keeps_the_producer_label() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("src.txt"), "b\na\n").unwrap();
    let o = run(
        d.path(),
        "diff <(sort src.txt) <(printf 'a\\nb\\n') && echo same",
    );
    assert_eq!(out(&o), "same\n");
    let o = run(d.path(), "cat <(cat src.txt)");
    assert!(
        o.label.origins.contains(&safesh_label::Atom::File(
            d.path().join("src.txt").display().to_string().into()
        )),
        "{:?}",
        o.label
    );
}

#[test]
fn a_lone_bang_is_an_empty_negated_pipeline() {
    // Found by the fuzzer: an empty pipeline once underflowed a stage count.
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "!\necho $?");
    assert_eq!(out(&o), "1\n");
}
