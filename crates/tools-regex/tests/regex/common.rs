//! Shared helpers for the differential tests.

use safesh_utils::testing::{run_real, run_util};
use std::path::Path;

/// Writes `files` into `dir` (names may contain `/` for subdirectories).
pub fn setup(dir: &Path, files: &[(&str, &[u8])]) {
    for (name, data) in files {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, data).unwrap();
    }
}

/// Runs `argv` through our table and the real tool with the same files and stdin,
/// asserting equal stdout and status.
pub fn check(argv: &[&str], stdin: &[u8], files: &[(&str, &[u8])]) {
    let ours_dir = tempfile::tempdir().unwrap();
    let real_dir = tempfile::tempdir().unwrap();
    setup(ours_dir.path(), files);
    setup(real_dir.path(), files);
    let f = safesh_tools_regex::UTILS
        .iter()
        .find(|(n, _)| *n == argv[0])
        .map(|(_, f)| *f)
        .unwrap();
    let ours = run_util(f, argv, stdin, ours_dir.path(), &[]);
    let real = run_real(argv, stdin, real_dir.path());
    assert_eq!(
        (ours.out(), ours.status),
        (real.out(), real.status),
        "argv {argv:?}\nour stderr: {}\nreal stderr: {}",
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&real.stderr)
    );
    // Files the tool may have written (sed -i, w) must match too.
    for (name, _) in files {
        let a = std::fs::read(ours_dir.path().join(name)).ok();
        let b = std::fs::read(real_dir.path().join(name)).ok();
        assert_eq!(a, b, "file {name} after {argv:?}");
    }
}

/// Like [`check`] but compares stdout as a sorted set of lines (directory order
/// differs on purpose: we sort entries, GNU uses readdir order).
pub fn check_sorted(argv: &[&str], stdin: &[u8], files: &[(&str, &[u8])]) {
    let ours_dir = tempfile::tempdir().unwrap();
    let real_dir = tempfile::tempdir().unwrap();
    setup(ours_dir.path(), files);
    setup(real_dir.path(), files);
    let f = safesh_tools_regex::UTILS
        .iter()
        .find(|(n, _)| *n == argv[0])
        .map(|(_, f)| *f)
        .unwrap();
    let ours = run_util(f, argv, stdin, ours_dir.path(), &[]);
    let real = run_real(argv, stdin, real_dir.path());
    let mut a: Vec<String> = ours.out().lines().map(String::from).collect();
    let mut b: Vec<String> = real.out().lines().map(String::from).collect();
    let sorted = a.windows(2).all(|w| w[0] <= w[1]);
    assert!(sorted, "our output is not in sorted order: {a:?}");
    a.sort();
    b.sort();
    assert_eq!((a, ours.status), (b, real.status), "argv {argv:?}");
}

/// Like [`check`] and also compares named output files created by the tool.
pub fn check_outputs(argv: &[&str], stdin: &[u8], files: &[(&str, &[u8])], outputs: &[&str]) {
    let ours_dir = tempfile::tempdir().unwrap();
    let real_dir = tempfile::tempdir().unwrap();
    setup(ours_dir.path(), files);
    setup(real_dir.path(), files);
    let f = safesh_tools_regex::UTILS
        .iter()
        .find(|(n, _)| *n == argv[0])
        .map(|(_, f)| *f)
        .unwrap();
    let ours = run_util(f, argv, stdin, ours_dir.path(), &[]);
    let real = run_real(argv, stdin, real_dir.path());
    assert_eq!(
        (ours.out(), ours.status),
        (real.out(), real.status),
        "argv {argv:?}"
    );
    for name in outputs {
        let a = std::fs::read(ours_dir.path().join(name)).ok();
        let b = std::fs::read(real_dir.path().join(name)).ok();
        assert_eq!(a, b, "output file {name} after {argv:?}");
    }
}
