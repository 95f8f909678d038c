use super::harness::{same, same_in, setup};

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { same(&[$($arg),+]); } )* };
}

cases! {
    plain: ["ls"];
    all: ["ls", "-a"];
    almost_all: ["ls", "-A"];
    long: ["ls", "-l"];
    long_all: ["ls", "-la"];
    long_human: ["ls", "-lh", "sub"];
    one_per_line: ["ls", "-1"];
    recursive: ["ls", "-R"];
    recursive_all: ["ls", "-aR"];
    reverse: ["ls", "-r"];
    by_time: ["ls", "-t"];
    by_time_reverse: ["ls", "-tr"];
    by_size: ["ls", "-S"];
    by_size_long: ["ls", "-lS"];
    directory_self: ["ls", "-d", "sub", "a"];
    dir_long: ["ls", "-ld", "sub", "emptydir"];
    classify: ["ls", "-F"];
    classify_long: ["ls", "-lF"];
    slash: ["ls", "-p"];
    operands_mixed: ["ls", "a", "sub", "b.txt", "emptydir"];
    missing: ["ls", "nope"];
    missing_and_present: ["ls", "a", "nope", "sub"];
    color_never: ["ls", "--color=never", "-A"];
    symlink_operand: ["ls", "dirlink"];
    symlink_operand_long: ["ls", "-l", "dirlink", "link", "broken"];
    numeric_ids: ["ls", "-n", "sub"];
    bad_option: ["ls", "--bogus"];
    bad_color: ["ls", "--color=sometimes"];
    empty_dir: ["ls", "-l", "emptydir"];
    recursive_long: ["ls", "-lR", "sub"];
    g_and_o: ["ls", "-g", "sub"];
    o_flag: ["ls", "-o", "sub"];
    trailing_slash: ["ls", "sub/"];
    hidden_operand: ["ls", "-d", ".hidden", ".hdir"];
    ignore_pattern: ["ls", "-I", "*.txt"];
}

#[test]
fn byte_order_sorting() {
    let t = setup("touch B a _x Z 1 '~t' é");
    same_in(&["ls"], b"", t.path());
    same_in(&["ls", "-r"], b"", t.path());
}

#[test]
fn human_sizes() {
    let t = setup(
        "head -c 1023 /dev/zero > s1; head -c 1024 /dev/zero > s2; head -c 1536 /dev/zero > s3; head -c 10240 /dev/zero > s4; head -c 10241 /dev/zero > s5; head -c 1048577 /dev/zero > s6; touch -d 2020-01-01 s*",
    );
    same_in(&["ls", "-lh"], b"", t.path());
    same_in(&["ls", "-lS"], b"", t.path());
}

#[test]
fn recent_dates() {
    let t = setup("touch now1; touch -d '2 days ago' past; touch -d '2 years ago' old");
    same_in(&["ls", "-l"], b"", t.path());
    same_in(&["ls", "-lt"], b"", t.path());
}

#[test]
fn devices_long() {
    let t = setup("touch f");
    same_in(
        &["ls", "-l", "/dev/null", "/dev/zero", "/dev/tty"],
        b"",
        t.path(),
    );
    same_in(&["ls", "-lh", "/dev/null", "f"], b"", t.path());
}

#[test]
fn columns() {
    let t = setup(
        "touch a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh iiiiiiiii jjjjjjjjjj k l m n o p q r s t u v w x y z \
         a_very_long_file_name_indeed another_quite_long_name.txt; mkdir dir1",
    );
    for argv in [
        &["ls", "-C"][..],
        &["ls", "-x"],
        &["ls", "-CF"],
        &["ls", "-C", "-w", "40"],
        &["ls", "-x", "-w", "30"],
        &["ls", "-C", "-w", "200"],
        &["ls", "-C", "-w", "10"],
        &["ls", "-C", "-T", "0"],
        &["ls", "-C", "a", "bb", "dir1"],
        &["ls", "-C1"],
        &["ls", "-1C", "-w", "20"],
    ] {
        same_in(argv, b"", t.path());
    }
    let e = setup("mkdir e");
    same_in(&["ls", "-C", "e"], b"", e.path());
}

#[test]
fn inode_and_size() {
    // Inode numbers differ between two fixtures, so compare in one directory.
    let t =
        setup("head -c 5000 /dev/zero > big; touch small; mkdir d; head -c 100 /dev/zero > d/x");
    for argv in [
        &["ls", "-i"][..],
        &["ls", "-s"],
        &["ls", "-si"],
        &["ls", "-ls"],
        &["ls", "-li"],
        &["ls", "-sh"],
        &["ls", "-lsh"],
        &["ls", "-Cs"],
        &["ls", "-s", "d", "big"],
        &["ls", "-sR"],
    ] {
        same_in(argv, b"", t.path());
    }
}

#[test]
fn time_styles_and_kinds() {
    for argv in [
        &["ls", "-l", "--time-style=iso"][..],
        &["ls", "-l", "--time-style=long-iso"],
        &["ls", "-l", "--time-style=full-iso", "sub"],
        &["ls", "--full-time", "a"],
        &["ls", "-l", "--time-style=+%Y/%m/%d", "sub"],
        &["ls", "-l", "--time-style=posix-long-iso", "sub"],
        &["ls", "-l", "--time-style=bogus"],
        &["ls", "--group-directories-first"],
        &["ls", "-l", "--group-directories-first", "-r"],
        &["ls", "-lu", "--time-style=long-iso", "sub"],
        &["ls", "-ltu", "sub"],
    ] {
        same(argv);
    }
}
