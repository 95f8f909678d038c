use crate::{check, check_in};
use safesh_tools_text::UTILS;
use safesh_utils::testing::run_util;

const TEN: &[u8] = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12";

#[test]
fn lines_stdin_and_file() {
    for n in [
        "0", "1", "3", "12", "13", "+0", "+1", "+3", "+12", "+13", "-2",
    ] {
        check_in(&["tail", "-n", n], TEN);
        check(&[("f", TEN)], &["tail", "-n", n, "f"], b"");
        check(&[("f", b"a\nb\n")], &["tail", "-n", n, "f"], b"");
    }
    check_in(&["tail"], TEN);
    check_in(&["tail"], b"");
}

#[test]
fn bytes() {
    for n in ["0", "1", "5", "100", "+1", "+5", "+100"] {
        check_in(&["tail", "-c", n], TEN);
        check(&[("f", TEN)], &["tail", "-c", n, "f"], b"");
    }
}

#[test]
fn obsolete_forms() {
    check_in(&["tail", "-3"], TEN);
    check_in(&["tail", "+3"], TEN);
    check_in(&["tail", "-3c"], TEN);
    check_in(&["tail", "+3c"], TEN);
    check(&[("f", TEN)], &["tail", "-2", "f"], b"");
}

#[test]
fn headers() {
    let files: crate::Files = &[("a", TEN), ("b", b"x\ny\n")];
    check(files, &["tail", "-n2", "a", "b"], b"");
    check(files, &["tail", "-q", "-n2", "a", "b"], b"");
    check(files, &["tail", "-v", "-n2", "a"], b"");
    check(
        files,
        &["tail", "-n1", "a", "-", "missing", "b"],
        b"stdin\n",
    );
}

#[test]
fn follow_is_refused() {
    // The real `tail -f` would never end, so only ours runs here.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), TEN).unwrap();
    for argv in [
        &["tail", "-f", "f"][..],
        &["tail", "-F", "f"],
        &["tail", "--follow", "f"],
        &["tail", "--follow=name", "f"],
        &["tail", "-n1", "-f", "f"],
        &["tail", "-5f", "f"],
    ] {
        let out = run_util(safesh_tools_text_tail(), argv, b"", dir.path(), UTILS);
        assert_eq!(out.status, 1, "{argv:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("not supported"));
    }
}

fn safesh_tools_text_tail() -> safesh_utils::UtilFn {
    UTILS
        .iter()
        .find(|(n, _)| *n == "tail")
        .map(|(_, f)| *f)
        .unwrap()
}

#[test]
fn zero_terminated_and_errors() {
    check_in(&["tail", "-z", "-n1"], b"a\0b\0");
    check_in(&["tail", "-n", "x"], TEN);
    check_in(&["tail", "--bogus"], TEN);
}

#[test]
fn long_input() {
    let big: Vec<u8> = (0..100_000)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    check_in(&["tail", "-n", "70000"], &big);
    check(&[("f", &big)], &["tail", "-n", "70000", "f"], b"");
    check(&[("f", &big)], &["tail", "-n", "3", "f"], b"");
    check_in(&["tail", "-c", "300000"], &big);
}

#[test]
fn odd_forms() {
    check_in(&["tail", "-c", "2K"], TEN);
    check_in(&["tail", "-n", "2", "-c", "3"], TEN);
    check_in(&["tail", "-"], TEN);
    check_in(&["tail", "-1", "-"], TEN);
    check_in(&["tail", "+"], TEN);
    check_in(&["tail", "-c"], TEN);
    check_in(&["tail", "-n", "-0"], TEN);
}

#[test]
fn bytes_from_past_the_end() {
    for n in ["+27", "+28", "+100", "+1000000", "+0", "+1"] {
        check_in(&["tail", "-c", n], b"12345\n");
        check(&[("f", b"12345\n")], &["tail", "-c", n, "f"], b"");
        check(&[("f", b"")], &["tail", "-c", n, "f"], b"");
    }
    check(
        &[("f", b"abc"), ("g", b"de")],
        &["tail", "-c", "+3", "f", "g"],
        b"",
    );
    check_in(&["tail", "-n", "+100"], b"a\nb\n");
}
