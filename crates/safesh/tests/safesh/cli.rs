//! The command-line contract (DESIGN.md "Contracts"): `-c`, FILE, stdin, `run --`,
//! `--json`, and how refusals are reported.

use std::io::Write;
use std::process::{Command, Stdio};

fn safesh() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_safesh"));
    c.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

fn run(mut c: Command) -> (i32, String, String) {
    let o = c.output().expect("safesh runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn dash_c_streams_output_and_exits_with_the_script_status() {
    let mut c = safesh();
    c.args(["-c", "echo out; echo err >&2; exit 7"]);
    let (code, out, err) = run(c);
    assert_eq!((code, out.as_str(), err.as_str()), (7, "out\n", "err\n"));
}

#[test]
fn dash_c_takes_name_and_positional_arguments() {
    let mut c = safesh();
    c.args(["-c", "echo \"$0|$1|$#\"", "myname", "a b", "c"]);
    assert_eq!(run(c).1, "myname|a b|2\n");
}

#[test]
fn a_script_file_runs_with_its_arguments() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.sh");
    std::fs::write(&f, "echo \"file $1\"\nexit 3\n").unwrap();
    let mut c = safesh();
    c.arg(&f).arg("x");
    assert_eq!(run(c), (3, "file x\n".to_string(), String::new()));
}

#[test]
fn a_script_on_stdin_runs_when_stdin_is_not_a_terminal() {
    let mut child = safesh()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"x=4\necho $((x * 2))\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "8\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn run_takes_an_argv_without_shell_parsing() {
    let mut c = safesh();
    c.args(["run", "--", "echo", "a  b", "$HOME", "*", ";", "|"]);
    assert_eq!(run(c).1, "a  b $HOME * ; |\n");
}

#[test]
fn a_refusal_prints_code_message_and_suggestion_on_stderr() {
    let mut c = safesh();
    c.args(["-c", "echo never; if true; then echo x"]);
    let (code, out, err) = run(c);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert!(err.starts_with("safesh: PARSE_ERROR: "), "{err}");
    assert!(err.contains("expected `fi`"), "{err}");
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn a_limit_prints_limit_exceeded_and_exits_125() {
    let mut c = safesh();
    c.args(["-c", "echo {1..2000000}"]);
    let (code, _, err) = run(c);
    assert_eq!(code, 125);
    assert!(err.contains("safesh: LIMIT_EXCEEDED:"), "{err}");
    assert!(err.contains("suggestion: "), "{err}");
}

#[test]
fn the_timeout_option_stops_the_script_with_124() {
    let mut c = safesh();
    c.args([
        "--timeout-ms",
        "300",
        "-c",
        "echo start; sleep 5; echo never",
    ]);
    let (code, out, err) = run(c);
    assert_eq!((code, out.as_str()), (124, "start\n"));
    assert!(err.contains("safesh: TIMEOUT:"), "{err}");
}

#[test]
fn json_result_has_the_contract_fields() {
    let mut c = safesh();
    c.args(["--json", "-c", "echo hi; echo oops >&2; exit 4"]);
    let (code, out, _) = run(c);
    assert_eq!(code, 4);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for key in [
        "schema_version",
        "exit_code",
        "signal",
        "stdout",
        "stderr",
        "truncated",
        "total_bytes",
        "total_lines",
        "log_path",
        "duration_ms",
        "label",
        "warnings",
        "error",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["exit_code"], 4);
    assert_eq!(v["stdout"], "hi\n");
    assert_eq!(v["stderr"], "oops\n");
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["label"]["confidentiality"], "public");
    assert_eq!(v["label"]["integrity"], serde_json::json!(["agent"]));
}

#[test]
fn json_reports_the_refusal_as_the_error_field() {
    let mut c = safesh();
    c.args(["--json", "-c", "echo $(("]);
    let (code, out, _) = run(c);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["error"]["code"], "PARSE_ERROR");
    assert!(v["error"]["suggestion"].is_string());
    assert!(v["error"]["details"]["location"].is_string());
}

#[test]
fn json_label_names_the_file_a_script_read() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("notes.txt"), "n\n").unwrap();
    let mut c = safesh();
    c.current_dir(d.path())
        .args(["--json", "-c", "cat notes.txt | tr n N"]);
    let (_, out, _) = run(c);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["stdout"], "N\n");
    let origins = v["label"]["origins"].to_string();
    assert!(origins.contains("notes.txt"), "{origins}");
}

#[test]
fn json_merged_mode_gives_one_output_field() {
    let mut c = safesh();
    c.args([
        "--json",
        "--output-mode",
        "merged",
        "-c",
        "echo a; echo b >&2",
    ]);
    let (_, out, _) = run(c);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["output"], "a\nb\n");
    assert!(v.get("stdout").is_none());
}

#[test]
fn external_programs_not_allowed_are_refused_before_anything_runs() {
    let mut c = safesh();
    c.args([
        "-c",
        "echo before; python3 -c 'print(1)'; echo \"status $?\"",
    ]);
    let (code, out, err) = run(c);
    assert_eq!((code, out.as_str()), (126, ""));
    assert!(err.contains("safesh: COMMAND_NOT_WHITELISTED:"), "{err}");
    assert!(err.contains("suggestion:"), "{err}");
}

#[test]
fn unknown_commands_fail_with_127_and_the_script_goes_on() {
    let mut c = safesh();
    c.args(["-c", "no-such-program-xyz; echo \"status $?\""]);
    let (code, out, err) = run(c);
    assert_eq!((code, out.as_str()), (0, "status 127\n"));
    assert!(
        err.contains("no-such-program-xyz: command not found"),
        "{err}"
    );
}

#[test]
fn run_takes_its_options_before_the_double_dash() {
    let mut c = safesh();
    c.args([
        "run",
        "--input",
        "b\na\n",
        "--output-mode",
        "merged",
        "--json",
        "--",
        "sort",
    ]);
    let (code, out, _) = run(c);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((code, v["output"].as_str()), (0, Some("a\nb\n")));
}

#[test]
fn run_passes_arguments_that_look_like_options_to_the_program() {
    let mut c = safesh();
    c.args(["run", "--", "echo", "-n", "--json"]);
    assert_eq!(run(c).1, "--json");
}
