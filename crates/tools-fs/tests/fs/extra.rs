//! Everyday command shapes an agent uses, compared against the real tools.

use super::harness::{same, same_in, same_sorted, setup};

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { same(&[$($arg),+]); } )* };
}

cases! {
    ls_ltr: ["ls", "-ltr"];
    ls_dirs_slash: ["ls", "-d", "sub/", "emptydir/"];
    ls_two_dirs: ["ls", "-1", "sub", "emptydir"];
    ls_long_file: ["ls", "-l", "a"];
    ls_lah: ["ls", "-lah", "sub"];
    ls_dot_dot: ["ls", "-a", "sub/deep"];
    ls_recursive_dir: ["ls", "-R", "sub"];
    ls_la_link_dir: ["ls", "-la", "dirlink"];
    ls_l_link_dir_slash: ["ls", "-l", "dirlink/"];
    ls_big_long: ["ls", "-lSr", "sub"];
    ls_file_and_missing_long: ["ls", "-l", "a", "zz"];
    find_size_big: ["find", ".", "-size", "+1M"];
    find_maxdepth0: ["find", ".", "-maxdepth", "0"];
    find_exec_cat: ["find", "sub/deep", "-type", "f", "-exec", "cat", "{}", ";"];
    du_sh_files: ["du", "-sh", "a", "b.txt", "sub"];
    du_ch: ["du", "-ch", "sub/c", "sub/big.bin"];
    date_utc_iso_z: ["date", "-u", "-d", "@1700000000", "+%Y-%m-%dT%H:%M:%SZ"];
    date_epoch_plus: ["date", "-d", "@1700000000", "+%s"];
    tree_l2_ignore: ["tree", "-L", "2", "-a", "-I", ".hdir|emptydir"];
    stat_size_name: ["stat", "-c", "%s %n", "a", "b.txt", "sub/big.bin"];
    basename_dot_ext: ["basename", "-s", ".tar.gz", "x.tar.gz"];
    dirname_trailing: ["dirname", "/a/b//"];
}

#[test]
fn find_sorted_cases() {
    same_sorted(&["find", ".", "-type", "f", "-newer", "sub/c"]);
    same_sorted(&["find", ".", "-newermt", "2021-01-01"]);
    same_sorted(&[
        "find",
        ".",
        "-type",
        "f",
        "-newermt",
        "2020-06-01",
        "!",
        "-newermt",
        "2021-12-31",
    ]);
    same_sorted(&["find", ".", "-newermm", "b.txt"]);
    same_sorted(&["find", ".", "-newermt", "not a date"]);
    same_sorted(&["find", ".", "-newerqq", "a"]);
    same_sorted(&[
        "find", ".", "-path", "./sub", "-prune", "-o", "-type", "f", "-print",
    ]);
    same_sorted(&["find", ".", "-not", "-path", "*/.*", "-type", "f"]);
    same_sorted(&["find", "sub", "-type", "f", "-printf", "%P\\n"]);
    same_sorted(&["find", ".", "-name", "*.txt", "-o", "-name", "*.sh"]);
    same_sorted(&["find", ".", "-type", "f", "-exec", "echo", "f:", "{}", ";"]);
    same_sorted(&[
        "find",
        ".",
        "-mindepth",
        "1",
        "-maxdepth",
        "1",
        "-type",
        "d",
    ]);
    same_sorted(&["find", ".", "-type", "f", "-empty"]);
    same_sorted(&["find", ".", "-perm", "-644", "-type", "f"]);
    same_sorted(&["find", ".", "-user", "root", "-name", "a"]);
    same_sorted(&["find", ".", "-links", "+1", "-type", "d"]);
    same_sorted(&["find", ".", "-iname", "B*"]);
    same_sorted(&[
        "find",
        ".",
        "-regextype",
        "posix-extended",
        "-regex",
        ".*/(a|c)$",
    ]);
    same_sorted(&["find", "-H", "dirlink", "-name", "c"]);
    same_sorted(&["find", ".", "-xtype", "l"]);
    same_sorted(&["find", ".", "-type", "f", "-printf", "%s %k %b %n %u %g\\n"]);
}

#[test]
fn long_alignment() {
    let t = setup(
        "head -c 123456 /dev/zero > big; touch small; ln small hard1; ln small hard2; mkdir d; \
         touch -d '2020-02-02 02:02' big small d hard1 hard2 'sp ace' café; touch -h -d '2020-02-02' .",
    );
    same_in(&["ls", "-l"], b"", t.path());
    same_in(&["ls", "-la"], b"", t.path());
    same_in(&["ls", "-lh"], b"", t.path());
    same_in(&["ls", "-lS"], b"", t.path());
}

#[test]
fn xargs_with_find() {
    let t = super::harness::fixture();
    same_in(
        &["xargs", "-0", "-n", "1", "echo"],
        b"./a\0./b.txt\0",
        t.path(),
    );
    same_in(&["xargs", "-I", "{}", "cat", "{}"], b"a\nsub/c\n", t.path());
    same_in(&["xargs", "cat", "nope"], b"a\n", t.path());
}

#[test]
fn help_and_version_succeed() {
    let t = super::harness::fixture();
    for name in ["ls", "cp", "date", "find", "xargs", "stat"] {
        for flag in ["--help", "--version"] {
            let o = safesh_utils::testing::run_util(
                super::harness::util(name),
                &[name, flag],
                b"",
                t.path(),
                &[],
            );
            assert_eq!(o.status, 0, "{name} {flag}");
            assert!(!o.stdout.is_empty());
        }
    }
}

#[test]
fn non_utf8_names() {
    let t = setup(
        "touch \"$(printf 'bad\\377name')\" ok; mkdir \"$(printf 'd\\376')\"; touch \"$(printf 'd\\376/in')\"",
    );
    for argv in [
        &["ls"][..],
        &["ls", "-l"],
        &["ls", "-R"],
        &["tree"],
        &["find", ".", "-name", "bad*", "-printf", "%f|%P\\n"],
    ] {
        same_in(argv, b"", t.path());
    }
    super::harness::same_sorted_in(&["find", "."], t.path());
    super::harness::same_sorted_in(&["du", "-a"], t.path());
}

#[test]
fn table_is_sorted_and_complete() {
    let names: Vec<&str> = safesh_tools_fs::UTILS.iter().map(|(n, _)| *n).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    for n in [
        "ls", "find", "xargs", "tee", "basename", "dirname", "realpath", "readlink", "mkdir",
        "touch", "rm", "cp", "mv", "ln", "stat", "du", "tree", "which", "mktemp", "chmod", "date",
        "printenv", "sleep",
    ] {
        assert!(names.contains(&n), "{n}");
    }
}
