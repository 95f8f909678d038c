//! Differential tests: our awk against the real mawk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use safesh_utils::testing::{run_real, run_util};
use std::path::Path;

#[path = "awk/cases.rs"]
mod cases;
#[path = "awk/grammar.rs"]
mod grammar;
#[path = "awk/order.rs"]
mod order;

/// Runs both and asserts identical stdout and status.
pub fn check_in(dir: &Path, args: &[&str], stdin: &str) {
    let mut argv = vec!["awk"];
    argv.extend_from_slice(args);
    // Each side runs in its own copy of `dir` so output files do not interfere.
    let (a, b) = (copy_dir(dir), copy_dir(dir));
    let ours = run_util(
        safesh_tools_awk::awk,
        &argv,
        stdin.as_bytes(),
        a.path(),
        &[],
    );
    let real = run_real(&argv, stdin.as_bytes(), b.path());
    assert_eq!(
        (ours.out(), ours.status),
        (real.out(), real.status),
        "args {args:?} stdin {stdin:?}\nour stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr)
    );
}

/// `check_in` inside a fresh temporary directory.
pub fn check(args: &[&str], stdin: &str) {
    let d = tempfile::tempdir().unwrap();
    check_in(d.path(), args, stdin);
}

fn copy_dir(dir: &Path) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), t.path().join(e.file_name())).unwrap();
        }
    }
    t
}
