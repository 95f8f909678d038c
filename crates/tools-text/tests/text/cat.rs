use crate::{check, check_in};

const F1: &[u8] = b"one\ttab\n\n\n\nfive\x01\x7f\xc3\xa9\x89\n";
const F2: &[u8] = b"no newline";

#[test]
fn plain_and_stdin() {
    check_in(&["cat"], F1);
    check_in(&["cat"], b"");
    check(&[("a", F1), ("b", F2)], &["cat", "a", "-", "b"], b"in\n");
}

#[test]
fn numbering() {
    for flag in ["-n", "-b", "-nb", "-ns", "-bs", "--number"] {
        check(&[("a", F1), ("b", F2)], &["cat", flag, "a", "b", "a"], b"");
    }
}

#[test]
fn partial_line_continues_across_files() {
    check(
        &[("a", b"x"), ("b", b"y\n\n\nz")],
        &["cat", "-n", "a", "b"],
        b"",
    );
    check(
        &[("a", b"x"), ("b", b"\n\n\nz")],
        &["cat", "-sb", "a", "b"],
        b"",
    );
}

#[test]
fn squeeze() {
    check_in(&["cat", "-s"], b"\n\n\na\n\n\n\nb\n\n");
    check_in(&["cat", "-s"], b"a\n\n");
}

#[test]
fn show_flags() {
    for flag in ["-A", "-E", "-T", "-v", "-e", "-t", "-vT", "-nA"] {
        check_in(&["cat", flag], F1);
    }
    let all: Vec<u8> = (0u8..=255).collect();
    check_in(&["cat", "-v"], &all);
    check_in(&["cat", "-A"], &all);
}

#[test]
fn missing_file_continues() {
    check(&[("a", F1)], &["cat", "missing", "a"], b"");
    check(&[("a", F1)], &["cat", "a", "missing"], b"");
}

#[test]
fn directory_and_bad_option() {
    check(&[("d/x", b"1")], &["cat", "d"], b"");
    check_in(&["cat", "-z"], b"x");
    check_in(&["cat", "--bogus"], b"x");
}

#[test]
fn long_line() {
    let long = vec![b'x'; 200_000];
    check_in(&["cat", "-n"], &long);
}
