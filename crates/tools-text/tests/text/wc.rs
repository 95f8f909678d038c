use crate::{check, check_in};

const T: &[u8] = b"hello world\n\tfoo  bar\x01baz\n\xc3\xa9t\xe9 \x80\nlast no newline";

#[test]
fn stdin_defaults() {
    check_in(&["wc"], b"x\n");
    check_in(&["wc"], b"");
    check_in(&["wc"], T);
}

#[test]
fn single_counts_bare() {
    for f in ["-l", "-w", "-c", "-m", "-L"] {
        check_in(&["wc", f], T);
        check(&[("f", T)], &["wc", f, "f"], b"");
    }
}

#[test]
fn combos_and_widths() {
    for f in ["-lw", "-lc", "-wL", "-lwmcL", "-cl"] {
        check_in(&["wc", f], T);
        check(&[("f", T)], &["wc", f, "f"], b"");
    }
    let big = vec![b'a'; 123_456];
    check(&[("big", &big), ("f", T)], &["wc", "big", "f"], b"");
    check(&[("big", &big), ("f", T)], &["wc", "-l", "big", "f"], b"");
}

#[test]
fn multiple_and_total() {
    let files: crate::Files = &[("a", T), ("b", b"one two\n")];
    check(files, &["wc", "a", "b"], b"");
    check(files, &["wc", "a", "-", "b"], b"x y\n");
    check(files, &["wc", "-L", "a", "b"], b"");
    check(files, &["wc", "-", "-"], b"x y\n");
}

#[test]
fn missing_and_dirs() {
    let files: crate::Files = &[("a", T), ("d/x", b"1")];
    check(files, &["wc", "missing", "a"], b"");
    check(files, &["wc", "a", "missing"], b"");
    check(files, &["wc", "d"], b"");
    check(files, &["wc", "-l", "a", "d"], b"");
}

#[test]
fn max_line_length() {
    check_in(&["wc", "-L"], b"a\tb\n12345678901\r12\n\x0cx");
    check_in(&["wc", "-L"], b"\xc3\xa9\xc3\xa9\n");
}

#[test]
fn words_edge() {
    check_in(&["wc", "-w"], b"a\x01b c\x80d \x01\n");
    check_in(&["wc", "-w"], b"\x0b\x0c x\ry\n");
    let all: Vec<u8> = (0u8..=255).collect();
    check_in(&["wc"], &all);
}

#[test]
fn bad_options() {
    check_in(&["wc", "-x"], b"");
    check_in(&["wc", "--total=bogus"], b"");
}
