//! Differential tests: every case runs our utility and the real one (GNU tools, or
//! bash 5.2 for the `echo`/`printf` builtins) on the same input and compares stdout
//! and exit status.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use safesh_utils::UtilFn;
use safesh_utils::testing::{Output, run_real, run_util};
use std::path::Path;

#[path = "data/base64.rs"]
mod base64;
#[path = "data/cmp.rs"]
mod cmp;
#[path = "data/comm.rs"]
mod comm;
#[path = "data/diff.rs"]
mod diff;
#[path = "data/echo.rs"]
mod echo;
#[path = "data/expr.rs"]
mod expr;
#[path = "data/od.rs"]
mod od;
#[path = "data/printf.rs"]
mod printf;
#[path = "data/seq.rs"]
mod seq;
#[path = "data/sum.rs"]
mod sum;
#[path = "data/yes.rs"]
mod yes;

/// Our implementation of `name`.
pub fn util(name: &str) -> UtilFn {
    safesh_tools_data::UTILS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no utility {name}"))
}

fn compare(argv: &[&str], ours: &Output, real: &Output) {
    assert_eq!(
        (String::from_utf8_lossy(&ours.stdout), ours.status),
        (String::from_utf8_lossy(&real.stdout), real.status),
        "argv {argv:?}\nour stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr),
    );
    assert_eq!(ours.stdout, real.stdout, "argv {argv:?} (bytes)");
}

/// Runs ours and the real tool in `dir`; asserts stdout and status match.
pub fn same_in(dir: &Path, argv: &[&str], stdin: &[u8]) -> Output {
    let ours = run_util(util(argv[0]), argv, stdin, dir, &[]);
    let real = run_real(argv, stdin, dir);
    compare(argv, &ours, &real);
    ours
}

/// Like [`same_in`] in a fresh empty directory.
pub fn same(argv: &[&str], stdin: &[u8]) -> Output {
    let d = tempfile::tempdir().unwrap();
    same_in(d.path(), argv, stdin)
}

/// Compares with the bash builtin of the same name (`bash -c '"$@"' bash ARGV`):
/// for `printf`, our builtin flavor (the registry's is coreutils').
pub fn same_bash(argv: &[&str], stdin: &[u8]) -> Output {
    let d = tempfile::tempdir().unwrap();
    let ours_fn = if argv[0] == "printf" {
        safesh_tools_data::printf_builtin
    } else {
        util(argv[0])
    };
    let ours = run_util(ours_fn, argv, stdin, d.path(), &[]);
    let mut full = vec!["bash", "-c", "\"$@\"", "bash"];
    full.extend_from_slice(argv);
    let real = run_real(&full, stdin, d.path());
    compare(argv, &ours, &real);
    ours
}

/// Compares with the coreutils program of the same name: stdout, status and
/// every message (both are called by the bare name, in the C locale).
pub fn same_program(argv: &[&str], stdin: &[u8]) -> Output {
    let ours = same(argv, stdin);
    let d = tempfile::tempdir().unwrap();
    let real = run_real(argv, stdin, d.path());
    assert_eq!(
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr),
        "argv {argv:?}: messages"
    );
    ours
}

/// Writes `files` (name, contents) into a fresh temp dir.
pub fn dir_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, data) in files {
        let p = d.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, data).unwrap();
    }
    d
}
