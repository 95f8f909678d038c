use crate::{check, check_in};

const TEN: &[u8] = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12";

#[test]
fn lines() {
    for n in [
        "0", "1", "3", "11", "12", "100", "-0", "-1", "-3", "-11", "-12", "-50", "1K",
    ] {
        check_in(&["head", "-n", n], TEN);
        check_in(&["head", "-n", n], b"a\nb\nc\n");
    }
    check_in(&["head"], TEN);
    check_in(&["head"], b"");
}

#[test]
fn bytes() {
    for n in ["0", "1", "5", "100", "-0", "-1", "-5", "-100"] {
        check_in(&["head", "-c", n], TEN);
    }
    check_in(&["head", "--bytes=3"], TEN);
}

#[test]
fn obsolete_form() {
    check_in(&["head", "-3"], TEN);
    check_in(&["head", "-3c"], TEN);
    check(&[("a", TEN)], &["head", "-2", "a", "a"], b"");
}

#[test]
fn headers() {
    let files: crate::Files = &[("a", TEN), ("b", b"x\ny\n")];
    check(files, &["head", "-n2", "a", "b"], b"");
    check(files, &["head", "-q", "-n2", "a", "b"], b"");
    check(files, &["head", "-v", "-n2", "a"], b"");
    check(files, &["head", "-n1", "a", "-", "b"], b"stdin\n");
    check(files, &["head", "-n1", "a", "missing", "b"], b"");
    check(files, &["head", "-n1", "missing", "a"], b"");
}

#[test]
fn zero_terminated_and_errors() {
    check_in(&["head", "-z", "-n1"], b"a\0b\0");
    check_in(&["head", "-n", "x"], TEN);
    check_in(&["head", "-c", "1y"], TEN);
    check_in(&["head", "--bogus"], TEN);
}

#[test]
fn long_input() {
    let big: Vec<u8> = (0..100_000)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    check_in(&["head", "-n", "-70000"], &big);
    check_in(&["head", "-c", "-300000"], &big);
    check_in(&["head", "-n", "50000"], &big);
}

#[test]
fn last_option_wins_and_suffixes() {
    check_in(&["head", "-n", "2", "-c", "3"], TEN);
    check_in(&["head", "-c", "3", "-n", "2"], TEN);
    check_in(&["head", "-c", "1kB"], TEN);
    check_in(&["head", "-n", "+2"], TEN);
    check_in(&["head", "-qv", "-n1"], TEN);
    check_in(&["head", "-vq", "-n1"], TEN);
}
