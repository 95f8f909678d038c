//! Differential tests: our `jq` against the real jq 1.6.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod jq {
    pub mod cases;
    pub mod clusters;
    pub mod deep;
    pub mod matrix;
    pub mod modules;
    pub mod suite;
    pub mod table;
}

use safesh_utils::testing::{Output, run_real, run_util};
use std::path::Path;

/// Runs our jq and the real one with the same argv, stdin and directory.
pub fn both(args: &[&str], stdin: &str, dir: &Path) -> (Output, Output) {
    let mut argv = vec!["jq"];
    argv.extend_from_slice(args);
    let ours = run_util(
        safesh_tools_jq::UTILS[0].1,
        &argv,
        stdin.as_bytes(),
        dir,
        &[],
    );
    let real = run_real(&argv, stdin.as_bytes(), dir);
    (ours, real)
}

/// Asserts stdout and status match the real jq.
pub fn check(args: &[&str], stdin: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    check_in(args, stdin, dir.path());
}

/// Like [`check`] in a given directory.
pub fn check_in(args: &[&str], stdin: &str, dir: &Path) {
    let (ours, real) = both(args, stdin, dir);
    assert_eq!(
        (ours.out(), ours.status),
        (real.out(), real.status),
        "jq {args:?} <<< {stdin:?}\nour stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr)
    );
}

/// Ad-hoc comparison for development: `JQ_ARGS='-c .' JQ_IN='...' cargo test adhoc -- --ignored --nocapture`
/// (arguments separated by the unit separator \x1f).
#[test]
#[ignore]
fn adhoc() {
    let args = std::env::var("JQ_ARGS").unwrap_or_default();
    let input = std::env::var("JQ_IN").unwrap_or_default();
    let args: Vec<&str> = args.split('\x1f').collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let (ours, real) = both(&args, &input, dir.path());
    for (name, o) in [("ours", ours), ("real", real)] {
        println!(
            "== {name} status {}\n{}-- stderr:\n{}",
            o.status,
            o.out(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Batch comparison for development: `JQ_CASES=file`, one case per line as
/// `stdin<TAB>arg<US>arg...` (`\n` in stdin written as `\\n`); prints mismatches.
#[test]
#[ignore]
fn batch() {
    let file = std::env::var("JQ_CASES").unwrap_or_default();
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let dir = tempfile::tempdir().expect("tempdir");
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (input, args) = line.split_once('\t').unwrap_or(("", line));
        let input = input.replace("\\n", "\n");
        let args: Vec<&str> = args.split('\x1f').collect();
        let (ours, real) = both(&args, &input, dir.path());
        if (ours.out(), ours.status) != (real.out(), real.status) {
            println!(
                "MISMATCH {args:?} <<< {input:?}\n ours {}: {:?} {:?}\n real {}: {:?} {:?}",
                ours.status,
                ours.out(),
                String::from_utf8_lossy(&ours.stderr),
                real.status,
                real.out(),
                String::from_utf8_lossy(&real.stderr)
            );
        } else if ours.stderr != real.stderr {
            println!(
                "STDERR {args:?}: ours {:?} real {:?}",
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&real.stderr)
            );
        }
    }
}
