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

/// Non-ASCII text in the C locale (the oracle's here) is not text to
/// util-linux: the line and the rest of the file are dropped, status 1. The
/// UTF-8 locale's character reversal is compared in `od_sed_awk.cases`.
#[test]
fn bytes_past_ascii_in_the_c_locale() {
    check_in(&["rev"], "ok\nañb\nlater\n".as_bytes());
    check_in(&["rev"], b"a\xffb\n");
    check_in(&["rev"], b"first\nsecond\n\x80");
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
