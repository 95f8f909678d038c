use crate::{check, check_in};

const T: &[u8] =
    b"a\tb\tc\n\tlead\n  \t mixed\tafter x\n\t\t\n12345678\tx\nab\x08\tc\n\ttrailing no newline\t";

#[test]
fn stops() {
    check_in(&["expand"], T);
    for t in [
        "1", "3", "4", "8", "2,5", "2,5,9", "3 7", "2,/5", "2,+5", "4,8,/3", "/4", "+3",
    ] {
        check_in(&["expand", "-t", t], T);
        check_in(&["expand", "-i", "-t", t], T);
    }
    check_in(&["expand", "-4"], T);
    check_in(&["expand", "-2,6"], T);
    check_in(&["expand", "-t", "2", "-t", "6"], T);
    check_in(&["expand", "--tabs=5", "--initial"], T);
}

#[test]
fn errors() {
    for t in ["0", "4,2", "3,3", "a", "2,/3,5", "2,+3,9", "/0", ""] {
        check_in(&["expand", "-t", t], T);
    }
    check_in(&["expand", "-q"], T);
}

#[test]
fn files_are_one_stream() {
    let files = &[("a", &b"ab"[..]), ("b", &b"\tc\n\td\n"[..])];
    check(files, &["expand", "a", "b"], b"");
    check(
        files,
        &["expand", "-t", "3", "a", "nosuch", "-", "b"],
        b"x\ty\n",
    );
}
