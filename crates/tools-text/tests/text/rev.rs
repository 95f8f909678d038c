use crate::{check, check_in};

#[test]
fn basic() {
    check_in(&["rev"], b"abc\nhello world\n");
    check_in(&["rev"], b"no newline");
    check_in(&["rev"], b"");
    check_in(&["rev"], b"\n\n");
    check_in(&["rev"], b"a\tb c\n");
}

#[test]
fn files() {
    let files: crate::Files = &[("a", b"12\n34\n"), ("b", b"xy")];
    check(files, &["rev", "a", "b"], b"");
    check(files, &["rev", "a", "-"], b"in\n");
    let (mine, real) = crate::run_both(files, &["rev", "missing", "a"], b"");
    assert_eq!((mine.stdout, mine.status), (real.stdout, real.status));
}

#[test]
fn long_line() {
    let line: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    check_in(&["rev"], &line);
}

#[test]
fn bad_option() {
    check_in(&["rev", "--bogus"], b"x\n");
    check_in(&["rev", "-z"], b"x\n");
}

#[test]
fn utf8_reversed_by_character() {
    // The real rev needs a UTF-8 locale for this (see DIFFERENCES.md), so only ours runs.
    let f = safesh_tools_text::UTILS
        .iter()
        .find(|(n, _)| *n == "rev")
        .unwrap()
        .1;
    let dir = tempfile::tempdir().unwrap();
    let out = safesh_utils::testing::run_util(
        f,
        &["rev"],
        "añb\n\u{1F600}x\n".as_bytes(),
        dir.path(),
        &[],
    );
    assert_eq!(out.status, 0);
    assert_eq!(out.stdout, "bña\nx\u{1F600}\n".as_bytes());
    let out = safesh_utils::testing::run_util(f, &["rev"], b"a\xffb\n", dir.path(), &[]);
    assert_eq!(out.stdout, b"b\xffa\n");
}

#[test]
fn nul_bytes() {
    check_in(&["rev"], b"ab\0cd\n");
    check_in(&["rev"], b"\0\n\0\0x\n");
    check_in(&["rev"], b"a\0");
    check_in(&["rev"], b"\0");
}

#[test]
fn nul_bytes_join_lines() {
    check_in(&["rev"], b"ab\0cd\nef\n");
    check_in(&["rev"], b"x\ny\0z\nw");
    check_in(&["rev"], b"a\0b\n\0c\nd\n");
}
