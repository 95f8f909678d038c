use super::harness::{same, same_in, setup};

// Our traversal is in name order and the real find's readdir order is not, so
// most cases compare the lines after sorting them.
fn sorted(argv: &[&str]) {
    let t = super::harness::fixture();
    let ours = safesh_utils::testing::run_util(
        super::harness::util("find"),
        argv,
        b"",
        t.path(),
        &super::harness::table(),
    );
    let real = safesh_utils::testing::run_real(argv, b"", t.path());
    let sort = |b: &[u8]| {
        let mut v: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
        v.sort();
        v.concat()
    };
    assert_eq!(
        ours.status,
        real.status,
        "{argv:?}: {}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert_eq!(
        sort(&ours.stdout),
        sort(&real.stdout),
        "{argv:?}\nours:\n{}\nreal:\n{}",
        ours.out(),
        real.out()
    );
}

macro_rules! sorted_cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { sorted(&[$($arg),+]); } )* };
}

sorted_cases! {
    all_default: ["find"];
    dot: ["find", "."];
    name_glob: ["find", ".", "-name", "*.txt"];
    iname: ["find", ".", "-iname", "*.TXT"];
    path_glob: ["find", ".", "-path", "./sub/*"];
    ipath: ["find", ".", "-ipath", "./SUB/*"];
    type_f: ["find", ".", "-type", "f"];
    type_d: ["find", ".", "-type", "d"];
    type_l: ["find", ".", "-type", "l"];
    type_list: ["find", ".", "-type", "l,d"];
    maxdepth: ["find", ".", "-maxdepth", "1"];
    mindepth: ["find", ".", "-mindepth", "2"];
    min_and_max: ["find", "sub", "-mindepth", "1", "-maxdepth", "1"];
    size_bytes: ["find", ".", "-size", "-10c"];
    size_plus_k: ["find", ".", "-size", "+4k"];
    size_blocks: ["find", ".", "-type", "f", "-size", "1"];
    size_exact_c: ["find", ".", "-size", "6c"];
    size_mega: ["find", ".", "-type", "f", "-size", "-1M"];
    mtime_old: ["find", ".", "-mtime", "+100"];
    mtime_recent: ["find", ".", "-mtime", "-1"];
    mmin: ["find", ".", "-mmin", "-5"];
    newer: ["find", ".", "-newer", "a"];
    empty: ["find", ".", "-empty"];
    perm_exact: ["find", ".", "-perm", "600"];
    perm_all: ["find", ".", "-type", "f", "-perm", "-u+x"];
    perm_any: ["find", ".", "-perm", "/o+w"];
    regex: ["find", ".", "-regex", ".*/[a-c]\\(\\.txt\\)?"];
    iregex: ["find", ".", "-iregex", ".*SUB.*"];
    not_name: ["find", ".", "-not", "-name", "*.txt", "-type", "f"];
    bang: ["find", ".", "!", "-type", "d"];
    or: ["find", ".", "-name", "a", "-o", "-name", "c"];
    parens: ["find", ".", "(", "-name", "*.log", "-o", "-name", "*.bin", ")", "-print"];
    and_explicit: ["find", ".", "-type", "f", "-a", "-name", "*.sh"];
    prune: ["find", ".", "-name", "sub", "-prune", "-o", "-print"];
    print0: ["find", ".", "-name", "*.txt", "-print0"];
    printf_basic: ["find", ".", "-printf", "%p %f %s %d %m %y\\n"];
    printf_hp: ["find", "sub", "-printf", "[%h][%P][%H]\\n"];
    printf_times: ["find", ".", "-name", "a", "-printf", "%T@ %TY-%Tm-%Td %t\\n"];
    printf_width: ["find", ".", "-maxdepth", "1", "-printf", "%-10f|%5s|%M\\n"];
    printf_link: ["find", ".", "-type", "l", "-printf", "%p -> %l %Y\\n"];
    multiple_starts: ["find", "sub", "a", "emptydir"];
    missing_start: ["find", "nope", "a"];
    trailing_slash: ["find", "sub/"];
    exec_semicolon: ["find", ".", "-name", "*.txt", "-exec", "echo", "got", "{}", ";"];
    exec_plus: ["find", "sub/deep", "-exec", "echo", "{}", "+"];
    exec_false: ["find", ".", "-name", "a", "-exec", "false", ";", "-o", "-print"];
    execdir: ["find", "sub", "-name", "c", "-execdir", "echo", "{}", ";"];
    exec_embedded: ["find", ".", "-name", "a", "-exec", "echo", "x{}y", ";"];
    quit: ["find", ".", "-name", "a", "-print", "-quit"];
    comma: ["find", ".", "-maxdepth", "1", "-name", "a", "-print", ",", "-name", "b.txt", "-print"];
    follow_l: ["find", "-L", ".", "-name", "c"];
    links: ["find", ".", "-type", "d", "-links", "2"];
    ls_action: ["find", "sub", "-name", "c", "-ls"];
    depth: ["find", "sub", "-depth"];
    true_false: ["find", ".", "-false", "-o", "-true", "-name", "a"];
    unknown_predicate: ["find", ".", "-bogus"];
    missing_arg: ["find", ".", "-name"];
    paths_after_expr: ["find", "-name", "a", "sub"];
    bad_type: ["find", ".", "-type", "q"];
}

#[test]
fn ok_is_refused() {
    let t = super::harness::fixture();
    let o = safesh_utils::testing::run_util(
        super::harness::util("find"),
        &["find", ".", "-ok", "rm", "{}", ";"],
        b"",
        t.path(),
        &[],
    );
    assert_eq!(o.status, 1);
    assert!(o.stdout.is_empty());
    assert!(t.path().join("a").exists());
}

#[test]
fn delete_files() {
    super::harness::same_effect("", &["find", ".", "-name", "*.txt", "-delete"]);
    super::harness::same_effect("", &["find", "sub", "-delete"]);
    super::harness::same_effect(
        "mkdir -p x/y; touch x/f",
        &["find", "x", "-name", "x", "-delete"],
    );
}

#[test]
fn sorted_traversal_single_entries() {
    // Chains of single entries have the same order everywhere.
    let t = setup("mkdir -p a/b/c; touch a/b/c/f");
    same_in(&["find", "a"], b"", t.path());
    same_in(&["find", "a", "-depth"], b"", t.path());
    same_in(&["find", "a", "-printf", "%d %y %p\\n"], b"", t.path());
}

#[test]
fn exact_simple() {
    same(&["find", "a"]);
    same(&["find", "emptydir", "-empty"]);
}

#[test]
fn execdir_plus_and_loops() {
    let t = setup("mkdir -p x/y; touch x/a x/y/b; ln -s .. x/y/up");
    same_in(
        &["find", "x/y", "-type", "f", "-execdir", "echo", "{}", "+"],
        b"",
        t.path(),
    );
    same_in(
        &[
            "find", "x/y", "-name", "b", "-execdir", "echo", "in", "{}", ";",
        ],
        b"",
        t.path(),
    );
    let ours = safesh_utils::testing::run_util(
        super::harness::util("find"),
        &["find", "-L", "x", "-name", "b"],
        b"",
        t.path(),
        &[],
    );
    let real = safesh_utils::testing::run_real(&["find", "-L", "x", "-name", "b"], b"", t.path());
    assert_eq!((ours.status, ours.stdout), (real.status, real.stdout));
}
