//! Background jobs against bash: a subshell ends without waiting for the jobs it
//! started (bash's subshells do not wait either), so a job that needs something
//! the script does after the subshell — a reader for the fifo it writes — no
//! longer deadlocks the script until its timeout. `wait` still waits for the
//! shell's own jobs, and the end of a `safesh -c` script still joins every job.

use crate::runner::{Shell, Status};
use std::path::Path;

fn safesh() -> Shell {
    Shell::from_path(env!("CARGO_BIN_EXE_safesh"))
}

/// A temp dir holding the fifo `ff` and the file `g`.
fn dir_with_fifo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g"), "g\n").unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("ff"))
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    dir
}

/// Runs `script` under bash and safesh, each in a fresh dir from `setup`, and
/// asserts both finish with the same stdout and status.
fn same_as_bash(script: &str, setup: fn() -> tempfile::TempDir) {
    let run = |shell: &Shell| {
        let dir = setup();
        shell.run(script, Path::new(dir.path()), None)
    };
    let bash = run(&Shell::bash());
    assert!(
        matches!(bash.status, Status::Exit(_)),
        "bash: {}",
        bash.status
    );
    let ours = run(&safesh());
    assert_eq!(
        (
            String::from_utf8_lossy(&ours.stdout),
            ours.status.to_string()
        ),
        (
            String::from_utf8_lossy(&bash.stdout),
            bash.status.to_string()
        ),
        "script: {script}\nsafesh stderr: {}",
        String::from_utf8_lossy(&ours.stderr)
    );
}

fn plain_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn subshell_job_writing_a_fifo_lets_the_reader_after_it_run() {
    same_as_bash(
        "(printf a > ff &); diff ff g; echo \"status $?\"",
        dir_with_fifo,
    );
    same_as_bash(
        "eval '(printf a > ff &)'; cat ff; echo \" status $?\"",
        dir_with_fifo,
    );
}

#[test]
fn jobs_started_through_eval_and_functions_write_a_fifo_read_later() {
    same_as_bash("eval 'printf a > ff &'; cat ff; echo", dir_with_fifo);
    same_as_bash(
        "f() { printf b > ff & }; f; cat ff; echo; wait; echo \"waited $?\"",
        dir_with_fifo,
    );
}

#[test]
fn wait_does_not_wait_for_a_finished_subshells_jobs_but_for_its_own() {
    // The subshell's job is no child of the script: `wait` returns at once and
    // its output comes after `after`; the script's own job is waited for.
    same_as_bash(
        "(sleep 0.3; echo orphan) & wait; echo after\n( { sleep 0.3; echo late; } & ); wait; echo now; sleep 0.6",
        plain_dir,
    );
    same_as_bash(
        "(exit 3 &); wait; echo \"status $?\"; (exit 4) & wait $!; echo \"own $?\"",
        plain_dir,
    );
}
