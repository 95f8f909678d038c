use crate::{check, check_in};

const T: &[u8] = b"one\ntwo\n\n\nthree\n  \nfour";

#[test]
fn defaults() {
    check_in(&["nl"], T);
    check_in(&["nl"], b"");
    check_in(&["nl"], b"\n");
    check_in(&["nl"], b"a");
}

#[test]
fn styles() {
    for b in ["-ba", "-bt", "-bn"] {
        check_in(&["nl", b], T);
    }
    check_in(&["nl", "-ba", "-l2"], T);
    check_in(&["nl", "-bpt"], T);
    check_in(&["nl", "-bp^t.*o$"], T);
    check_in(&["nl", "-bp\\(on\\|fo\\)"], T);
}

#[test]
fn formats_widths() {
    for n in ["ln", "rn", "rz"] {
        check_in(&["nl", "-n", n], T);
        check_in(&["nl", "-n", n, "-w", "3"], T);
    }
    check_in(&["nl", "-w1"], T);
    check_in(&["nl", "-w", "10", "-s", " | "], T);
    check_in(&["nl", "-s", ""], T);
}

#[test]
fn start_increment() {
    check_in(&["nl", "-v", "10", "-i", "5"], T);
    check_in(&["nl", "-v", "-2"], T);
    check_in(&["nl", "-v0", "-nrz", "-w3"], T);
}

#[test]
fn sections() {
    let s = b"\\:\\:\\:\nhead\n\\:\\:\nbody\n\nbody2\n\\:\nfoot\n\\:\\:\nb3\n";
    check_in(&["nl"], s);
    check_in(&["nl", "-ha", "-fa"], s);
    check_in(&["nl", "-p"], s);
    check_in(&["nl", "-d", "@@"], b"@@@@\nx\ny\n");
    check_in(&["nl", "-d", "@"], b"@:@:\nx\n@:\ny\n");
}

#[test]
fn files_and_errors() {
    let files: crate::Files = &[("a", b"x\ny\n"), ("b", b"z\n")];
    check(files, &["nl", "a", "b"], b"");
    check(files, &["nl", "a", "missing", "b"], b"");
    check_in(&["nl", "-b", "x"], T);
    check_in(&["nl", "-n", "xx"], T);
    check_in(&["nl", "-w", "0"], T);
    check_in(&["nl", "--bogus"], T);
}

#[test]
fn numeric_arguments() {
    for argv in [
        &["nl", "-i", "0"][..],
        &["nl", "-i", "-1"],
        &["nl", "-v", "x"],
        &["nl", "-l", "0"],
        &["nl", "-w", "100"],
        &["nl", "-i", "x"],
    ] {
        check_in(argv, T);
    }
}
