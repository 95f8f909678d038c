use super::harness::{same, same_in, same_sorted, setup};

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { same(&[$($arg),+]); } )* };
}

cases! {
    stat_default_file: ["stat", "a"];
    stat_default_dir: ["stat", "sub"];
    stat_deref: ["stat", "-L", "link"];
    stat_format_long: ["stat", "--format=%n %s", "b.txt"];
    stat_printf: ["stat", "--printf", "%n\\t%s\\n", "a", "b.txt"];
    stat_width: ["stat", "-c", "[%10n][%-6s][%05a]", "a"];
    stat_missing: ["stat", "nope", "a"];
    stat_none: ["stat"];
    stat_fifo_dev: ["stat", "-c", "%F %t %T", "/dev/null"];
    stat_terse: ["stat", "-t", "a"];
    du_summary: ["du", "-s"];
    du_human: ["du", "-sh", "sub"];
    du_total: ["du", "-c", "sub", "a"];
    du_max_depth: ["du", "--max-depth=0", "sub"];
    du_bytes: ["du", "-b", "sub"];
    du_apparent: ["du", "--apparent-size", "-s", "sub"];
    du_k: ["du", "-k", "sub/big.bin"];
    du_m: ["du", "-m", "sub"];
    du_missing: ["du", "nope"];
    du_dup_operands: ["du", "-s", ".", "sub"];
    du_file: ["du", "a", "b.txt"];
    tree_default: ["tree"];
    tree_all: ["tree", "-a"];
    tree_dirs: ["tree", "-d"];
    tree_level: ["tree", "-L", "1"];
    tree_ignore: ["tree", "-I", "sub"];
    tree_ignore_alt: ["tree", "-I", "*.txt|deep"];
    tree_full: ["tree", "-f"];
    tree_classify: ["tree", "-F"];
    tree_subdir: ["tree", "sub"];
    tree_missing: ["tree", "nope"];
    tree_noreport: ["tree", "--noreport", "sub"];
    tree_empty: ["tree", "emptydir"];
    tree_dirs_empty: ["tree", "-d", "sub/deep"];
}

#[test]
fn du_single_chain_order() {
    // du -a lists children in readdir order; a single-entry chain is unambiguous.
    let t = setup("mkdir -p x/y; head -c 3000 /dev/zero > x/y/f");
    same_in(&["du", "-a", "x"], b"", t.path());
    same_in(&["du", "-ah", "x"], b"", t.path());
    same_in(&["du", "-ab", "x"], b"", t.path());
}

#[test]
fn stat_special_names() {
    let t = setup("touch 'with space' \"it's\"");
    same_in(&["stat", "-c", "%N", "with space", "it's"], b"", t.path());
    same_in(&["stat", "with space"], b"", t.path());
}

#[test]
fn tree_one_file() {
    let t = setup("mkdir one; touch one/z");
    same_in(&["tree", "one"], b"", t.path());
    same_in(&["tree", "-d", "one"], b"", t.path());
}

#[test]
fn du_readdir_order() {
    same_sorted(&["du"]);
    same_sorted(&["du", "-a"]);
    same_sorted(&["du", "-d", "1"]);
    same_sorted(&["du", "-ah", "--max-depth=1"]);
}

#[test]
fn stat_symlinks() {
    // Reading a link updates its atime once; let that happen before comparing.
    let t = super::harness::fixture();
    safesh_utils::testing::run_real(&["stat", "link", "broken"], b"", t.path());
    same_in(&["stat", "link"], b"", t.path());
    same_in(&["stat", "broken"], b"", t.path());
    same_in(
        &[
            "stat",
            "-c",
            "%n|%s|%a|%A|%F|%U|%G|%u|%g|%h|%Y|%y|%X|%N|%b|%B",
            "a",
            "link",
            "sub",
            "empty.txt",
        ],
        b"",
        t.path(),
    );
}

#[test]
fn tree_utf8_locale() {
    use safesh_utils::{Host, UtilCtx};
    let t = super::harness::fixture();
    let host = safesh_utils::testing::TestHost {
        table: vec![],
        env: std::collections::BTreeMap::from([("LANG".to_string(), "C.UTF-8".to_string())]),
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut input: &[u8] = b"";
    let mut ctx = UtilCtx {
        argv: vec!["tree".into(), "sub".into()],
        cwd: t.path().to_path_buf(),
        env: safesh_utils::Env::new(&host.env, &host),
        stdin: &mut input,
        stdout: &mut out,
        stderr: &mut err,
        host: &host as &dyn Host,
    };
    let st = super::harness::util("tree")(&mut ctx).expect("run");
    let real = std::process::Command::new("tree")
        .arg("sub")
        .current_dir(t.path())
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("tree");
    assert_eq!(st, real.status.code().unwrap_or(-1));
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&real.stdout)
    );
    assert!(String::from_utf8_lossy(&out).contains("└── "));
}

#[test]
fn du_separate_dirs() {
    let t = setup(
        "mkdir -p a/b; head -c 5000 /dev/zero > f; head -c 9000 /dev/zero > a/g; head -c 20000 /dev/zero > a/b/h",
    );
    same_in(&["du", "-S", "a/b"], b"", t.path());
    same_in(&["du", "-Sc", "a"], b"", t.path());
    same_in(&["du", "-Ss", "."], b"", t.path());
    super::harness::same_sorted_in(&["du", "-S"], t.path());
}
