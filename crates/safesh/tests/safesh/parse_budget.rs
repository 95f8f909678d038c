//! Issue 15 item 8: parsing, the checks and the pre-run pass grow linearly with the
//! script, stay inside the request's deadline (`--timeout-ms` → `TIMEOUT`, 124), and a
//! script over `[limits] script_bytes` is refused before anything runs — by any road
//! (the request's text, `eval`, `source`). Benign controls: a megabyte script runs
//! with the right output, and syntax errors late in a long script keep their
//! line:column.

use crate::flow_support::{AFTER, Arena};
use crate::policy_support::Run;

/// Refused before running with `code` and exit `status` (`safesh: CODE:` on stderr).
fn assert_refused(r: &Run, code: &str, status: i32) {
    assert!(!r.timed_out, "timed out (not refused):\n{}", r.dump());
    assert_eq!(r.stderr_code().as_deref(), Some(code), "{}", r.dump());
    assert_eq!(r.status, status, "{}", r.dump());
}

/// `n` lines of `echo a` inside `if false; then … fi`: parsed, checked and
/// pre-checked whole, never run.
fn never_run_block(n: usize) -> String {
    let mut s = String::from("if false; then\n");
    s.push_str(&"echo a\n".repeat(n));
    s.push_str("fi\n");
    s
}

#[test]
fn a_one_megabyte_script_parses_checks_and_runs_with_the_right_output() {
    let a = Arena::new();
    // ~1 MB: 150 000 never-run lines, then a few that run.
    let mut script = never_run_block(150_000);
    for i in 0..200 {
        script.push_str(&format!("echo line{i}\n"));
    }
    script.push_str("echo done\n");
    assert!(script.len() > 1_000_000);
    a.write("big.sh", &script);
    let r = a.run_args(&["big.sh"]);
    assert!(!r.timed_out, "a 1 MB script did not finish:\n{}", r.dump());
    assert_eq!(r.status, 0, "{}", r.dump());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 201, "{}", r.dump());
    assert_eq!(lines[0], "line0");
    assert_eq!(lines[199], "line199");
    assert_eq!(lines[200], "done");
}

#[test]
fn a_one_megabyte_single_line_script_parses() {
    let a = Arena::new();
    // One line (no top-level newline to cut at) of ~1 MB, never run.
    let script = format!(
        "if false; then {}fi; echo done\n",
        "echo a; ".repeat(130_000)
    );
    a.write("line.sh", &script);
    let r = a.run_args(&["line.sh"]);
    assert!(!r.timed_out, "a 1 MB line did not finish:\n{}", r.dump());
    assert_eq!((r.status, r.stdout.as_str()), (0, "done\n"), "{}", r.dump());
}

#[test]
fn a_huge_script_with_a_200ms_timeout_stops_with_timeout_and_runs_nothing() {
    let a = Arena::new();
    // ~3 MB that would take seconds to parse; the deadline ends the parse instead.
    let mut script = never_run_block(420_000);
    script.push_str(&format!("touch {AFTER}\n"));
    a.write("huge.sh", &script);
    let r = a.run_args(&["--timeout-ms", "200", "huge.sh"]);
    assert!(
        !r.timed_out,
        "the 200 ms timeout did not stop it:\n{}",
        r.dump()
    );
    assert_eq!(r.status, 124, "{}", r.dump());
    assert_eq!(r.stderr_code().as_deref(), Some("TIMEOUT"), "{}", r.dump());
    assert!(
        !a.exists(AFTER),
        "the script ran after the timeout:\n{}",
        r.dump()
    );
    // The same through --json.
    let r = a.run_args(&["--json", "--timeout-ms", "200", "huge.sh"]);
    let v = r.json();
    assert_eq!(v["error"]["code"], "TIMEOUT", "{}", r.dump());
    assert_eq!(v["exit_code"], 124, "{}", r.dump());
    assert!(!a.exists(AFTER));
}

#[test]
fn a_script_over_script_bytes_is_refused_before_running() {
    let a = Arena::with_extra("[limits]\nscript_bytes = 2000");
    let body = "echo a\n".repeat(400); // 2800 bytes
    let r = a.run(&format!("touch {AFTER}\n{body}"));
    assert_refused(&r, "LIMIT_EXCEEDED", 125);
    assert!(r.stderr.contains("limit of 2000 bytes"), "{}", r.dump());
    assert!(!a.exists(AFTER), "a refused script ran:\n{}", r.dump());
    assert!(r.stdout.is_empty(), "{}", r.dump());
    // The same through --json, which names the setting.
    let (r, v) = a.run_json(&format!("touch {AFTER}\n{body}"));
    assert_eq!(v["error"]["code"], "LIMIT_EXCEEDED", "{}", r.dump());
    assert_eq!(
        v["error"]["details"]["rule"],
        "limits.script_bytes",
        "{}",
        r.dump()
    );
    assert!(!a.exists(AFTER));
}

#[test]
fn an_eval_or_source_text_over_script_bytes_is_refused() {
    let a = Arena::with_extra("[limits]\nscript_bytes = 2000");
    // A short script that builds a long text at run time: the limit binds there too.
    let r =
        a.run("s=''; for i in $(seq 1 400); do s=\"$s echo a;\"; done; eval \"$s\"; touch after");
    assert_refused(&r, "LIMIT_EXCEEDED", 125);
    assert!(!a.exists(AFTER), "{}", r.dump());
    a.write("long.sh", &"echo a\n".repeat(400));
    let r = a.run("source ./long.sh; touch after");
    assert_refused(&r, "LIMIT_EXCEEDED", 125);
    assert!(!a.exists(AFTER), "{}", r.dump());
}

#[test]
fn scripts_under_script_bytes_run_benign_control() {
    let a = Arena::with_extra("[limits]\nscript_bytes = 2000");
    let body = "echo a\n".repeat(200); // 1400 bytes
    let r = a.run(&body);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert_eq!(r.stdout, "a\n".repeat(200));
    let r = a.run("s=''; for i in $(seq 1 100); do s=\"$s echo a;\"; done; eval \"$s\" | wc -l");
    assert_eq!((r.status, r.stdout.trim()), (0, "100"), "{}", r.dump());
}

#[test]
fn syntax_errors_late_in_a_long_script_keep_their_line_and_column() {
    let a = Arena::new();
    // Long enough to be parsed in pieces; the errors are past many cuts.
    let lines = "echo a\n".repeat(5000);
    let cases = [
        (format!("{lines}echo b; )\n"), "line 5001, column 9"),
        (format!("{lines}if true; then\n  echo x\n"), "expected `fi`"),
        (format!("{lines}echo 'open\n"), "unterminated single quote"),
    ];
    for (script, want) in cases {
        a.write("err.sh", &script);
        let r = a.run_args(&["err.sh"]);
        assert_refused(&r, "PARSE_ERROR", 2);
        assert!(r.stderr.contains(want), "want {want:?}:\n{}", r.stderr);
        assert!(
            r.stdout.is_empty(),
            "a script with a syntax error ran:\n{}",
            r.dump()
        );
    }
    // The same error in a short script: the same position.
    let r = a.run("echo b; )");
    assert!(r.stderr.contains("line 1, column 9"), "{}", r.stderr);
}
