use crate::check;

const A: &[u8] = b"apple 1 red\nbanana 2 yellow\nbanana 3 green\ncherry 4\ndate 5 brown\n";
const B: &[u8] = b"apple fruit\nbanana long\nbanana ripe\nelder tree\n";

fn files<'a>(a: &'a [u8], b: &'a [u8]) -> [(&'a str, &'a [u8]); 2] {
    [("a", a), ("b", b)]
}

#[test]
fn pairs_and_unpaired() {
    let f = files(A, B);
    for args in [
        &[][..],
        &["-a", "1"],
        &["-a", "2"],
        &["-a1", "-a2"],
        &["-v", "1"],
        &["-v", "2"],
        &["-v1", "-v2"],
        &["-a", "1", "-v", "2"],
        &["-o", "auto", "-a1", "-a2"],
        &["-o", "1.1,2.2,1.3", "-e", "NONE", "-a1"],
        &["-o", "0 2.1 1.2", "-a", "2"],
        &["-e", "X", "-a1"],
        &["-i"],
        &["--header"],
        &["--header", "-o", "auto"],
    ] {
        let mut argv = vec!["join"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["a", "b"]);
        check(&f, &argv, b"");
    }
}

#[test]
fn fields_and_separators() {
    let f = files(b"x,1,,a\ny,2,b,\nz,3\n", b"1,one\n2,two\n4,four\n");
    for args in [
        &["-t", ",", "-1", "2", "-2", "1"][..],
        &["-t", ",", "-1", "2", "-a1", "-o", "auto"],
        &["-t", ",", "-1", "2", "-e", "E", "-a1", "-o", "auto"],
        &["-t", ",", "-j", "1"],
        &["-t", "", "-a1"],
    ] {
        let mut argv = vec!["join"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["a", "b"]);
        check(&f, &argv, b"");
    }
    let blanks = files(b"  k1   v1\nk2\tv2 \n\nk3\n", b"k1 w\nk2 w2 w3\nk3\n");
    check(&blanks, &["join", "a", "b"], b"");
    check(
        &blanks,
        &["join", "-a1", "-a2", "-o", "auto", "a", "b"],
        b"",
    );
    check(&blanks, &["join", "-z", "a", "b"], b"");
    let case = files(b"A 1\nb 2\n", b"a x\nB y\n");
    check(&case, &["join", "-i", "a", "b"], b"");
    check(&case, &["join", "a", "b"], b"");
}

#[test]
fn order_checks() {
    let f = files(b"b 1\na 2\nc 3\n", b"a\nb\nd\n");
    for args in [
        &[][..],
        &["--check-order"],
        &["--nocheck-order"],
        &["-a1"],
        &["-a2"],
    ] {
        let mut argv = vec!["join"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["a", "b"]);
        check(&f, &argv, b"");
    }
    // All pairable: no check unless asked.
    let g = files(b"b 1\na 2\n", b"b x\na y\n");
    check(&g, &["join", "a", "b"], b"");
    check(&g, &["join", "--check-order", "a", "b"], b"");
}

#[test]
fn operands_and_errors() {
    let f = files(A, B);
    check(&f, &["join", "a", "-"], B);
    check(&f, &["join", "-", "b"], A);
    for argv in [
        &["join", "a"][..],
        &["join"],
        &["join", "a", "b", "c"],
        &["join", "a", "nosuch"],
        &["join", "-", "-"],
        &["join", "-a", "3", "a", "b"],
        &["join", "-1", "0", "a", "b"],
        &["join", "-o", "1.x", "a", "b"],
        &["join", "-o", "3.1", "a", "b"],
        &["join", "-t", "ab", "a", "b"],
    ] {
        check(&f, argv, b"");
    }
}
