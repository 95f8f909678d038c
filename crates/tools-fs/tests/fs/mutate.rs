use super::harness::{fixture, same_effect, same_in, util};
use safesh_utils::testing::run_util;

macro_rules! effects {
    ($($name:ident: $script:expr, [$($arg:expr),+];)*) => { $( #[test] fn $name() { same_effect($script, &[$($arg),+]); } )* };
}

effects! {
    mkdir_one: "", ["mkdir", "new"];
    mkdir_exists: "", ["mkdir", "sub"];
    mkdir_parents: "", ["mkdir", "-p", "x/y/z", "sub/deep"];
    mkdir_verbose: "", ["mkdir", "-pv", "x/y/z"];
    mkdir_mode: "", ["mkdir", "-m", "700", "m1"];
    mkdir_mode_symbolic: "", ["mkdir", "-m", "u=rwx,g=rx,o=", "m2"];
    mkdir_missing_parent: "", ["mkdir", "no/such"];
    mkdir_none: "", ["mkdir"];
    touch_new: "", ["touch", "t1", "t2"];
    touch_no_create: "", ["touch", "-c", "t1"];
    touch_missing_dir: "", ["touch", "no/t1"];
    touch_none: "", ["touch"];
    rm_file: "", ["rm", "a", "b.txt"];
    rm_missing: "", ["rm", "nope"];
    rm_force_missing: "", ["rm", "-f", "nope", "a"];
    rm_dir_without_r: "", ["rm", "sub"];
    rm_recursive: "", ["rm", "-r", "sub", "emptydir"];
    rm_verbose: "", ["rm", "-rv", "sub/deep"];
    cp_recursive_verbose: "", ["cp", "-rv", "sub/deep", "sub2"];
    rm_d_empty: "", ["rm", "-d", "emptydir"];
    rm_d_nonempty: "", ["rm", "-d", "sub"];
    rm_dot: "", ["rm", "-rf", "."];
    rm_dotdot: "", ["rm", "-r", "sub/.."];
    rm_symlink: "", ["rm", "dirlink", "broken"];
    rm_none: "", ["rm"];
    rm_none_force: "", ["rm", "-f"];
    cp_file: "", ["cp", "a", "copy"];
    cp_into_dir: "", ["cp", "a", "b.txt", "sub"];
    cp_dir_no_r: "", ["cp", "sub", "sub2"];
    cp_recursive: "", ["cp", "-r", "sub", "sub2"];
    cp_archive: "", ["cp", "-a", "sub", "sub3"];
    cp_preserve: "", ["cp", "-p", "b.txt", "p.txt"];
    cp_no_clobber: "", ["cp", "-n", "a", "b.txt"];
    cp_overwrite: "", ["cp", "a", "b.txt"];
    cp_same: "", ["cp", "a", "a"];
    cp_missing: "", ["cp", "nope", "x"];
    cp_t: "", ["cp", "-t", "sub", "a", "run.sh"];
    cp_no_target_dir: "", ["cp", "-T", "a", "emptydir"];
    cp_symlink_follow: "", ["cp", "link", "lcopy"];
    cp_r_symlink: "", ["cp", "-r", "dirlink", "dl2"];
    cp_one_operand: "", ["cp", "a"];
    cp_not_dir_target: "", ["cp", "a", "b.txt", "run.sh"];
    mv_rename: "", ["mv", "a", "moved"];
    mv_into_dir: "", ["mv", "a", "b.txt", "sub"];
    mv_verbose: "", ["mv", "-v", "a", "z"];
    mv_no_clobber: "", ["mv", "-n", "a", "b.txt"];
    mv_overwrite: "", ["mv", "a", "b.txt"];
    mv_dir: "", ["mv", "sub", "emptydir"];
    mv_into_itself: "", ["mv", "sub", "sub/deep"];
    mv_missing: "", ["mv", "nope", "x"];
    mv_t: "", ["mv", "-t", "emptydir", "a", "sub"];
    mv_dir_over_file: "", ["mv", "-T", "sub", "a"];
    ln_symbolic: "", ["ln", "-s", "a", "sl"];
    ln_hard: "", ["ln", "a", "hl"];
    ln_exists: "", ["ln", "-s", "a", "b.txt"];
    ln_force: "", ["ln", "-sf", "a", "b.txt"];
    ln_into_dir: "", ["ln", "-s", "../a", "sub"];
    ln_verbose: "", ["ln", "-sv", "a", "x1"];
    ln_no_deref: "", ["ln", "-sfn", "a", "dirlink"];
    ln_deref_dir: "", ["ln", "-sf", "a", "dirlink"];
    ln_hard_missing: "", ["ln", "nope", "x"];
    ln_t: "", ["ln", "-s", "-t", "emptydir", "../a", "../b.txt"];
    ln_relative: "", ["ln", "-sr", "sub/c", "emptydir/lc"];
    ln_relative_dir: "", ["ln", "-srv", "a", "sub/deep"];
    ln_relative_same: "", ["ln", "-sr", "a", "la"];
    chmod_octal: "", ["chmod", "700", "a"];
    chmod_symbolic: "", ["chmod", "u+x,go-r", "a", "b.txt"];
    chmod_equals: "", ["chmod", "a=r", "a"];
    chmod_minus_w: "", ["chmod", "-w", "a"];
    chmod_recursive: "", ["chmod", "-R", "go-rwx", "sub"];
    chmod_verbose: "", ["chmod", "-v", "644", "a", "run.sh"];
    chmod_changes: "", ["chmod", "-c", "644", "a", "run.sh"];
    chmod_x_cap: "", ["chmod", "-R", "a+X", "sub"];
    chmod_copy: "", ["chmod", "g=u", "b.txt"];
    chmod_missing: "", ["chmod", "644", "nope"];
    chmod_bad_mode: "", ["chmod", "xyz", "a"];
    chmod_no_file: "", ["chmod", "644"];
    tee_files: "", ["tee", "t1", "t2"];
}

#[test]
fn tee_cases() {
    for argv in [
        &["tee"][..],
        &["tee", "out"],
        &["tee", "-a", "a"],
        &["tee", "-"],
        &["tee", "nodir/x", "ok"],
        &["tee", "--bogus"],
    ] {
        let (a, b) = (fixture(), fixture());
        let ours = run_util(util("tee"), argv, b"line1\nline2", a.path(), &[]);
        let real = safesh_utils::testing::run_real(argv, b"line1\nline2", b.path());
        assert_eq!(
            (ours.status, &ours.stdout),
            (real.status, &real.stdout),
            "{argv:?}"
        );
        assert_eq!(
            super::harness::snapshot(a.path()),
            super::harness::snapshot(b.path()),
            "{argv:?}"
        );
    }
}

#[test]
fn touch_times() {
    same_effect("", &["touch", "-d", "2020-01-01 00:00:00", "a", "new"]);
    same_effect("", &["touch", "-r", "b.txt", "a"]);
    same_effect("", &["touch", "-t", "202001021530.45", "a"]);
    // The times themselves: compare with stat.
    let t = fixture();
    run_util(
        util("touch"),
        &["touch", "-d", "2020-05-06 07:08:09", "a"],
        b"",
        t.path(),
        &[],
    );
    let o = same_in(&["stat", "-c", "%Y", "a"], b"", t.path());
    let real = safesh_utils::testing::run_real(
        &["date", "-d", "2020-05-06 07:08:09", "+%s"],
        b"",
        t.path(),
    );
    assert_eq!(o.stdout, real.stdout);
    run_util(
        util("touch"),
        &["touch", "-m", "-r", "b.txt", "sub/c"],
        b"",
        t.path(),
        &[],
    );
    let x = same_in(&["stat", "-c", "%Y", "sub/c"], b"", t.path());
    let y = same_in(&["stat", "-c", "%Y", "b.txt"], b"", t.path());
    assert_eq!(x.stdout, y.stdout);
}

#[test]
fn rm_interactive_refused() {
    let t = fixture();
    let o = run_util(util("rm"), &["rm", "-i", "a"], b"y\n", t.path(), &[]);
    assert_eq!(o.status, 1);
    assert!(t.path().join("a").exists());
}

#[test]
fn rm_root_refused() {
    let t = fixture();
    let o = run_util(util("rm"), &["rm", "-rf", "/"], b"", t.path(), &[]);
    assert_eq!(o.status, 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("dangerous"));
}

#[test]
fn mktemp_shapes() {
    let t = fixture();
    let dir = t.path().to_str().expect("utf8").to_string();
    let run = |argv: &[&str]| run_util(util("mktemp"), argv, b"", t.path(), &[]);
    let o = run(&["mktemp", "-p", &dir]);
    assert_eq!(o.status, 0);
    let name = o.out().trim_end().to_string();
    let base = name.rsplit('/').next().expect("base").to_string();
    assert!(base.starts_with("tmp.") && base.len() == 14, "{name}");
    assert!(std::path::Path::new(&name).is_file());
    let o = run(&["mktemp", "-d", "-p", &dir, "dXXXXX"]);
    let name = o.out().trim_end().to_string();
    assert!(std::path::Path::new(&name).is_dir(), "{name}");
    let o = run(&["mktemp", "fooXXXX"]);
    let name = o.out().trim_end().to_string();
    assert!(name.starts_with("foo") && name.len() == 7 && t.path().join(&name).is_file());
    let o = run(&["mktemp", "--suffix=.txt", "sfXXXX"]);
    let name = o.out().trim_end().to_string();
    assert!(
        name.starts_with("sf") && name.ends_with(".txt") && name.len() == 10,
        "{name}"
    );
    let o = run(&["mktemp", "-u", "zzXXX"]);
    assert!(!t.path().join(o.out().trim_end()).exists());
    // Errors match the real tool.
    same_in(&["mktemp", "fooXX"], b"", t.path());
    same_in(&["mktemp", "-t", "a/bXXX"], b"", t.path());
    same_in(&["mktemp", "-p", "nope", "xXXX"], b"", t.path());
    let o = run(&["mktemp", "-t", "shapeXXXXXX"]);
    assert!(o.out().starts_with("/tmp/shape"));
    let _ = std::fs::remove_file(o.out().trim_end());
    let o = run(&["mktemp"]);
    assert!(o.out().starts_with("/tmp/tmp."));
    let _ = std::fs::remove_file(o.out().trim_end());
}

#[test]
fn cp_into_itself_refused() {
    let t = fixture();
    let o = run_util(
        util("cp"),
        &["cp", "-r", "sub", "sub/deep"],
        b"",
        t.path(),
        &[],
    );
    let real =
        safesh_utils::testing::run_real(&["cp", "-r", "sub", "sub/deep"], b"", fixture().path());
    assert_eq!(o.status, real.status);
    assert!(!t.path().join("sub/deep/sub").exists());
}

#[test]
fn mkdir_trailing_slash_verbose() {
    same_effect("", &["mkdir", "-pv", "x/y/"]);
    same_effect("", &["mkdir", "-v", "z/"]);
}
