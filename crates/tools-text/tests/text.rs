//! Differential tests: each case runs the in-process utility and the real GNU tool
//! (LC_ALL=C) on the same small inputs and compares stdout and exit status.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use safesh_tools_text::UTILS;
use safesh_utils::testing::{run_real, run_util};

mod text {
    pub mod cat;
    pub mod column;
    pub mod cut;
    pub mod expand;
    pub mod fold;
    pub mod fuzz;
    pub mod head;
    pub mod join;
    pub mod nl;
    pub mod paste;
    pub mod rev;
    pub mod sort;
    pub mod tac;
    pub mod tail;
    pub mod tr;
    pub mod unexpand;
    pub mod uniq;
    pub mod wc;
}

/// Files created in a fresh temporary directory before a case runs.
pub type Files<'a> = &'a [(&'a str, &'a [u8])];

/// Runs `argv` both ways with `files` in the working directory and `stdin` piped in;
/// asserts identical stdout and status.
pub fn check(files: Files<'_>, argv: &[&str], stdin: &[u8]) {
    let ours = run_both(files, argv, stdin);
    let (mine, real) = ours;
    assert_eq!(
        (String::from_utf8_lossy(&mine.stdout), mine.status),
        (String::from_utf8_lossy(&real.stdout), real.status),
        "argv {argv:?}\nour stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&mine.stderr),
        String::from_utf8_lossy(&real.stderr),
    );
    assert_eq!(mine.stdout, real.stdout, "argv {argv:?} (bytes)");
}

/// Runs a case both ways and returns (ours, real) for custom assertions.
pub fn run_both(
    files: Files<'_>,
    argv: &[&str],
    stdin: &[u8],
) -> (safesh_utils::testing::Output, safesh_utils::testing::Output) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, data) in files {
        let p = dir.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, data).expect("write");
    }
    let f = UTILS
        .iter()
        .find(|(n, _)| *n == argv[0])
        .map(|(_, f)| *f)
        .expect("utility in table");
    let mine = run_util(f, argv, stdin, dir.path(), UTILS);
    let real = run_real(argv, stdin, dir.path());
    (mine, real)
}

/// Like [`check`] but on stdin only.
pub fn check_in(argv: &[&str], stdin: &[u8]) {
    check(&[], argv, stdin);
}

#[test]
fn table_is_sorted_and_complete() {
    let names: Vec<&str> = UTILS.iter().map(|(n, _)| *n).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
}

#[test]
fn directory_operands() {
    let files: Files = &[("d/x", b"1\n"), ("f", b"b\na\n")];
    for argv in [
        &["cat", "f", "d", "f"][..],
        &["head", "f", "d"],
        &["tail", "f", "d"],
        &["tail", "-n", "+1", "d"],
        &["wc", "d", "f"],
        &["sort", "d"],
        &["uniq", "d"],
        &["cut", "-f1", "d", "f"],
        &["paste", "f", "d"],
        &["paste", "-s", "d", "f"],
        &["tac", "d", "f"],
        &["nl", "d", "f"],
    ] {
        check(files, argv, b"");
    }
}
