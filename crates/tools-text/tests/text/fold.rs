use crate::{check, check_in};

const T: &[u8] = b"The quick brown fox jumps over the lazy dog\n\tindented\tline with\ttabs\nab\x08\x08cd\rxyz and more text here to wrap\n\nshort\nno-newline-at-the-very-end-of-this-input";

#[test]
fn widths() {
    check_in(&["fold"], T);
    for w in ["1", "2", "5", "7", "8", "9", "16", "80"] {
        check_in(&["fold", "-w", w], T);
        check_in(&["fold", "-b", "-w", w], T);
        check_in(&["fold", "-s", "-w", w], T);
        check_in(&["fold", "-bs", "-w", w], T);
    }
    check_in(&["fold", "-3"], T);
    check_in(&["fold", "--width=10", "--spaces"], T);
}

#[test]
fn edges() {
    check_in(&["fold", "-w", "3"], b"");
    check_in(&["fold", "-w", "3"], b"\n\n");
    check_in(&["fold", "-w", "4"], b"a\tbc\n");
    check_in(&["fold", "-s", "-w", "4"], b"a b\tc d e\n   \n");
    check_in(&["fold", "-w", "5"], "h\u{e9}llo w\u{f6}rld\n".as_bytes());
    check_in(&["fold", "-w", "0"], T);
    check_in(&["fold", "-w", "x"], T);
    check_in(&["fold", "-q"], T);
}

#[test]
fn files() {
    let files = &[("a", &b"0123456789\nabc"[..]), ("b", &b"xyz\n"[..])];
    check(files, &["fold", "-w", "4", "a", "b"], b"");
    check(
        files,
        &["fold", "-w", "4", "a", "-", "nosuch", "b"],
        b"stdin text\n",
    );
}
