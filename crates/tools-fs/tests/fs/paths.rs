use super::harness::{fixture, same, same_in, setup, util};
use safesh_utils::testing::run_util;

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { same(&[$($arg),+]); } )* };
}

cases! {
    basename_plain: ["basename", "/usr/lib/x.so"];
    basename_suffix: ["basename", "/a/b.txt", ".txt"];
    basename_suffix_whole: ["basename", ".txt", ".txt"];
    basename_multi: ["basename", "-a", "a/b", "c/d/", "/"];
    basename_s: ["basename", "-s", ".c", "x.c", "y.c", "z.h"];
    basename_zero: ["basename", "-z", "a/b"];
    basename_slashes: ["basename", "//"];
    basename_empty: ["basename", ""];
    basename_missing: ["basename"];
    basename_extra: ["basename", "a", "b", "c"];
    dirname_plain: ["dirname", "/usr/lib/x.so"];
    dirname_many: ["dirname", "a", "/a", "a/b/", "//a", "a//b", "/", "", "//a/b"];
    dirname_zero: ["dirname", "-z", "x/y"];
    dirname_missing: ["dirname"];
    dirname_dots: ["dirname", "../x", "./y", "."];
    dirname_bad: ["dirname", "-q", "x"];
    readlink_plain: ["readlink", "link"];
    readlink_not_link: ["readlink", "a"];
    readlink_multi: ["readlink", "link", "broken", "dirlink"];
    readlink_n: ["readlink", "-n", "link"];
    readlink_missing: ["readlink", "nope"];
    readlink_e_missing: ["readlink", "-e", "broken"];
    readlink_v_missing: ["readlink", "-v", "nope"];
    readlink_z: ["readlink", "-z", "link"];
    which_missing: ["which", "definitely-not-here"];
    which_ls: ["which", "ls"];
    which_all: ["which", "-a", "sh"];
    which_several: ["which", "ls", "nope", "sh"];
    which_path: ["which", "./run.sh"];
    which_none: ["which"];
}

/// Realpath and readlink -f print absolute paths: compare inside the fixture.
fn abs(argv: &[&str]) {
    let t = fixture();
    let dir = t.path().canonicalize().expect("canon");
    same_in(argv, b"", &dir);
}

#[test]
fn realpath_cases() {
    abs(&["realpath", "a"]);
    abs(&["realpath", "link", "dirlink/c", "sub/../b.txt"]);
    abs(&["realpath", "-s", "link"]);
    abs(&["realpath", "nope"]);
    abs(&["realpath", "nope/deeper"]);
    abs(&["realpath", "-e", "nope"]);
    abs(&["realpath", "-m", "nope/deeper/../x"]);
    abs(&["realpath", "--relative-to=sub", "a", "sub/deep/d.log"]);
    abs(&["realpath", "--relative-to=sub/deep", "b.txt"]);
    abs(&["realpath", "-z", "a"]);
    abs(&["realpath", "broken"]);
    abs(&["realpath", "."]);
    abs(&["realpath"]);
}

#[test]
fn readlink_canonical() {
    abs(&["readlink", "-f", "link"]);
    abs(&["readlink", "-f", "dirlink/deep/../c"]);
    abs(&["readlink", "-f", "nope/x"]);
    abs(&["readlink", "-e", "dirlink"]);
    abs(&["readlink", "-m", "nope/x/../y"]);
    abs(&["readlink", "-f", "broken"]);
}

#[test]
fn realpath_loop() {
    let t = setup("ln -s l2 l1; ln -s l1 l2");
    let dir = t.path().canonicalize().expect("canon");
    same_in(&["realpath", "l1"], b"", &dir);
    same_in(&["readlink", "-f", "l1"], b"", &dir);
}

fn env_run(argv: &[&str]) -> safesh_utils::testing::Output {
    let t = fixture();
    run_util(util(argv[0]), argv, b"", t.path(), &[])
}

#[test]
fn printenv_cases() {
    // The test host's environment is exactly PATH=/usr/bin:/bin.
    let o = env_run(&["printenv"]);
    assert_eq!((o.status, o.out()), (0, "PATH=/usr/bin:/bin\n".to_string()));
    let o = env_run(&["printenv", "PATH"]);
    assert_eq!((o.status, o.out()), (0, "/usr/bin:/bin\n".to_string()));
    let o = env_run(&["printenv", "NOPE"]);
    assert_eq!((o.status, o.out()), (1, String::new()));
    let o = env_run(&["printenv", "NOPE", "PATH"]);
    assert_eq!((o.status, o.out()), (1, "/usr/bin:/bin\n".to_string()));
    let o = env_run(&["printenv", "-0", "PATH"]);
    assert_eq!((o.status, o.out()), (0, "/usr/bin:/bin\0".to_string()));
    let o = env_run(&["printenv", "--bogus"]);
    assert_eq!(o.status, 2);
    // Same as the real printenv for a variable both have and one neither has.
    let t = fixture();
    same_in(&["printenv", "PATH_SURELY_UNSET_X"], b"", t.path());
}
