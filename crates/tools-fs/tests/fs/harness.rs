//! Shared helpers: fixtures, the oracle comparison, and small inner commands.

use safesh_utils::testing::{Output, run_real, run_util};
use safesh_utils::{UtilCtx, UtilFn, UtilResult};
use std::path::Path;
use std::process::Command;

/// A utility from the crate's table.
pub fn util(name: &str) -> UtilFn {
    safesh_tools_fs::UTILS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no util {name}"))
}

/// Test-local `echo` (inner command for xargs and find -exec).
pub fn echo(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let line = ctx.args().join(" ");
    let _ = writeln!(ctx.stdout, "{line}");
    Ok(0)
}

/// Test-local `sh -c 'exit N'` / `sh -c 'echo ...; exit N'` for exit-status cases.
pub fn sh(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let script = ctx.args().get(1).cloned().unwrap_or_default();
    let code = script
        .split("exit ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(code)
}

/// Test-local `false`.
pub fn fail(_ctx: &mut UtilCtx<'_>) -> UtilResult {
    Ok(1)
}

/// Test-local `cat` of named files.
pub fn cat(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let mut st = 0;
    for a in ctx.args().to_vec() {
        match ctx.read_file(&a) {
            Ok(d) => {
                let _ = ctx.stdout.write_all(&d);
            }
            Err(_) => st = 1,
        }
    }
    Ok(st)
}

/// Inner commands available to xargs / find -exec in tests.
pub fn table() -> Vec<(&'static str, UtilFn)> {
    let mut t: Vec<(&'static str, UtilFn)> = safesh_tools_fs::UTILS.to_vec();
    t.push(("echo", echo));
    t.push(("sh", sh));
    t.push(("false", fail));
    t.push(("cat", cat));
    t
}

fn sh_run(dir: &Path, script: &str) {
    let st = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .status()
        .expect("sh");
    assert!(st.success(), "setup failed: {script}");
}

/// A scratch directory nested one level inside a temporary directory, so that
/// `..` (listed by `ls -a`) is stable while other tests create files in /tmp.
pub struct Scratch {
    _root: tempfile::TempDir,
    dir: std::path::PathBuf,
}

impl Scratch {
    /// The working directory of the test.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

fn scratch() -> Scratch {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("w");
    std::fs::create_dir(&dir).expect("mkdir");
    Scratch { _root: root, dir }
}

/// The standard fixture: files with fixed old dates, a recent file, hidden
/// entries, nested directories, an empty directory and symlinks.
pub fn fixture() -> Scratch {
    let t = scratch();
    sh_run(
        t.path(),
        "printf 'hello\\n' > a; printf 'some longer content here\\n' > b.txt; : > empty.txt; \
         printf x > .hidden; mkdir -p sub/deep emptydir .hdir; printf 'cc\\n' > sub/c; \
         head -c 5000 /dev/zero > sub/big.bin; printf 'd\\n' > sub/deep/d.log; : > .hdir/h; \
         printf '#!/bin/sh\\n' > run.sh; chmod 755 run.sh; chmod 600 b.txt; \
         ln -s a link; ln -s sub dirlink; ln -s missing broken; \
         touch -d '2020-03-04 05:06:07' a sub/c sub/deep/d.log .hidden; \
         touch -d '2021-07-08 09:10:11' b.txt empty.txt run.sh sub/big.bin; \
         touch -h -d '2019-01-02 03:04:05' link dirlink broken; \
         touch -d '2022-01-01 00:00:00' sub/deep sub emptydir .hdir .hdir/h",
    );
    t
}

/// A fresh directory prepared by a shell script.
pub fn setup(script: &str) -> Scratch {
    let t = scratch();
    sh_run(t.path(), script);
    t
}

fn show(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `argv` through our utility and the real tool in `dir`; stdout and status must match.
pub fn same_in(argv: &[&str], stdin: &[u8], dir: &Path) -> Output {
    let ours = run_util(util(argv[0]), argv, stdin, dir, &table());
    let real = run_real(argv, stdin, dir);
    assert!(
        ours.status == real.status && ours.stdout == real.stdout,
        "\n{argv:?}\n=== ours\n{}\n=== real\n{}",
        show(&ours),
        show(&real)
    );
    ours
}

/// Like `same_in` but compares stdout lines as a set (for readdir-order output).
pub fn same_sorted(argv: &[&str]) {
    let t = fixture();
    same_sorted_in(argv, t.path());
}

/// `same_sorted` in a given directory.
pub fn same_sorted_in(argv: &[&str], dir: &Path) {
    let ours = run_util(util(argv[0]), argv, b"", dir, &table());
    let real = run_real(argv, b"", dir);
    let sort = |b: &[u8]| {
        let mut v: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
        v.sort();
        v
    };
    assert!(
        ours.status == real.status && sort(&ours.stdout) == sort(&real.stdout),
        "\n{argv:?}\n=== ours\n{}\n=== real\n{}",
        show(&ours),
        show(&real)
    );
}

/// `same_in` on a fresh standard fixture.
pub fn same(argv: &[&str]) -> Output {
    let t = fixture();
    same_in(argv, b"", t.path())
}

/// `same_in` with stdin on a fresh fixture.
pub fn same_stdin(argv: &[&str], stdin: &[u8]) -> Output {
    let t = fixture();
    same_in(argv, stdin, t.path())
}

/// A listing of a tree (type, mode, size, link target, content digest) for
/// comparing the effects of mutating tools.
pub fn snapshot(dir: &Path) -> String {
    let o = Command::new("sh")
        .arg("-c")
        .arg("find . -printf '%p|%y|%m|%s|%l\\n' | LC_ALL=C sort; find . -type f -exec cksum {} + | LC_ALL=C sort")
        .current_dir(dir)
        .output()
        .expect("find");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs a mutating command on two copies of a fixture (made by `script`, or the
/// standard fixture when empty): stdout, status and the resulting trees must match.
pub fn same_effect(script: &str, argv: &[&str]) {
    let make = || {
        if script.is_empty() {
            fixture()
        } else {
            setup(script)
        }
    };
    let (a, b) = (make(), make());
    let ours = run_util(util(argv[0]), argv, b"", a.path(), &table());
    let real = run_real(argv, b"", b.path());
    assert!(
        ours.status == real.status && ours.stdout == real.stdout,
        "\n{argv:?}\n=== ours\n{}\n=== real\n{}",
        show(&ours),
        show(&real)
    );
    assert_eq!(
        snapshot(a.path()),
        snapshot(b.path()),
        "trees differ after {argv:?}"
    );
}
