//! Every limit overrun is a clear LIMIT_EXCEEDED (status 125) or TIMEOUT (124).

use super::support::{out, run_with};
use safesh_core::{ErrorCode, Limits};

fn limited() -> Limits {
    Limits {
        loop_iterations: 1000,
        call_depth: 50,
        commands: 5000,
        substitution_depth: 8,
        brace_expansion: 1000,
        string_bytes: 100_000,
        script_timeout_ms: 2000,
        processes: 16,
        output_bytes: 0,
        script_bytes: 10_000,
    }
}

fn assert_refused(script: &str, code: ErrorCode, status: i32) {
    let d = tempfile::tempdir().unwrap();
    let o = run_with(d.path(), script, limited());
    let err = o
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("no error for {script}: {}", out(&o)));
    assert_eq!(err.code, code, "{script}: {err:?}");
    assert_eq!(o.exit_code, status, "{script}");
    assert!(err.suggestion.is_some());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(code.as_str()), "{stderr}");
}

#[test]
fn a_script_over_script_bytes_is_refused_before_parsing() {
    assert_refused(&"echo a\n".repeat(2000), ErrorCode::LimitExceeded, 125);
    // `$(…)` text built at run time is bound too (run through eval).
    assert_refused(
        "s=$(printf 'echo a;%.0s' $(seq 1 2000)); eval \"$s\"",
        ErrorCode::LimitExceeded,
        125,
    );
}

#[test]
fn infinite_loop_hits_the_iteration_limit() {
    assert_refused("while true; do :; done", ErrorCode::LimitExceeded, 125);
}

#[test]
fn unbounded_recursion_hits_the_call_depth_limit() {
    assert_refused("f() { f; }; f", ErrorCode::LimitExceeded, 125);
}

#[test]
fn nested_substitutions_hit_the_depth_limit() {
    assert_refused("f() { echo $(f); }; f", ErrorCode::LimitExceeded, 125);
}

#[test]
fn huge_brace_expansion_is_refused() {
    assert_refused("echo {1..100000}", ErrorCode::LimitExceeded, 125);
    assert_refused(
        "echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
        ErrorCode::LimitExceeded,
        125,
    );
}

#[test]
fn growing_string_hits_the_size_limit() {
    assert_refused(
        "x=aaaaaaaaaa; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do x=$x$x; done",
        ErrorCode::LimitExceeded,
        125,
    );
}

#[test]
fn too_many_commands_is_refused() {
    assert_refused(
        "for i in {1..900}; do :; :; :; :; :; :; :; done",
        ErrorCode::LimitExceeded,
        125,
    );
}

#[test]
fn sleeping_past_the_script_timeout_is_a_timeout() {
    assert_refused("sleep 10", ErrorCode::Timeout, 124);
}

#[test]
fn partial_output_is_kept_when_a_limit_stops_the_script() {
    let d = tempfile::tempdir().unwrap();
    let o = run_with(
        d.path(),
        "echo before; while :; do :; done; echo after",
        limited(),
    );
    assert_eq!(out(&o), "before\n");
    assert_eq!(o.exit_code, 125);
}

#[test]
fn timeout_wrapper_gives_124_and_the_script_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let o = run_with(d.path(), "timeout 0.1 sleep 5; echo st=$?", limited());
    assert_eq!(out(&o), "st=124\n");
    assert!(o.error.is_none());
}

#[test]
fn recursion_through_pipelines_hits_the_process_limit() {
    assert_refused("f() { f | cat; }; f", ErrorCode::LimitExceeded, 125);
}

#[test]
fn a_word_full_of_braces_does_not_hang_the_expander() {
    // Found by the fuzzer: the brace grammar backtracks exponentially.
    let d = tempfile::tempdir().unwrap();
    let word = format!("{}a{}", "{".repeat(20), ",".repeat(13));
    let o = run_with(d.path(), &format!("echo {word}"), limited());
    assert_eq!(out(&o), format!("{word}\n"));
}

#[test]
fn endless_output_hits_the_output_limit() {
    let d = tempfile::tempdir().unwrap();
    let mut l = limited();
    l.output_bytes = 10_000;
    l.loop_iterations = 1_000_000;
    l.commands = 1_000_000;
    let o = run_with(d.path(), "yes", l);
    assert_eq!(
        o.error.as_ref().map(|e| e.code),
        Some(ErrorCode::LimitExceeded)
    );
    assert_eq!(o.exit_code, 125);
    assert!(o.stdout.len() <= 10_000);
    let o = run_with(d.path(), "while :; do echo spam; done; echo never", l);
    assert_eq!(
        o.error.as_ref().map(|e| e.code),
        Some(ErrorCode::LimitExceeded)
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("never"));
}
