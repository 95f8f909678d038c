use crate::{check, check_in};

const A: &[u8] = b"a1\na2\na3\n";
const B: &[u8] = b"b1\nb2";
const C: &[u8] = b"c1\nc2\nc3\nc4\nc5\n";

#[test]
fn parallel() {
    let files: crate::Files = &[("a", A), ("b", B), ("c", C), ("e", b"")];
    check(files, &["paste", "a", "b"], b"");
    check(files, &["paste", "a", "b", "c"], b"");
    check(files, &["paste", "c", "a"], b"");
    check(files, &["paste", "e", "a"], b"");
    check(files, &["paste", "e"], b"");
    check(files, &["paste", "a"], b"");
}

#[test]
fn delimiters() {
    let files: crate::Files = &[("a", A), ("b", B), ("c", C)];
    check(files, &["paste", "-d,", "a", "b", "c"], b"");
    check(files, &["paste", "-d", ",;", "a", "b", "c", "a"], b"");
    check(files, &["paste", "-d", "\\t\\n", "a", "b", "c"], b"");
    check(files, &["paste", "-d", "\\0", "a", "b"], b"");
    check(files, &["paste", "-d", "", "a", "b"], b"");
    check(files, &["paste", "-d", "\\\\", "a", "b"], b"");
    check(files, &["paste", "-d", "x\\", "a", "b"], b"");
}

#[test]
fn serial() {
    let files: crate::Files = &[("a", A), ("b", B), ("c", C), ("e", b"")];
    check(files, &["paste", "-s", "a", "b"], b"");
    check(files, &["paste", "-s", "-d,", "c"], b"");
    check(files, &["paste", "-s", "-d", ",;", "c"], b"");
    check(files, &["paste", "-s", "e"], b"");
    check(files, &["paste", "-sd", "\\n", "a"], b"");
}

#[test]
fn stdin() {
    check_in(&["paste"], A);
    check_in(&["paste", "-", "-"], C);
    check_in(&["paste", "-d", " ", "-", "-", "-"], C);
    check_in(&["paste", "-s", "-"], C);
    check(&[("a", A)], &["paste", "a", "-"], C);
}

#[test]
fn errors_and_zero() {
    check(&[("a", A)], &["paste", "a", "missing"], b"");
    check(&[("a", A)], &["paste", "-s", "missing", "a"], b"");
    check_in(&["paste", "-z", "-", "-"], b"a\0b\0c\0");
    check_in(&["paste", "--bogus"], A);
}
