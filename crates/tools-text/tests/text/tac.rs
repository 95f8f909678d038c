use crate::{check, check_in};

#[test]
fn basic() {
    check_in(&["tac"], b"a\nb\nc\n");
    check_in(&["tac"], b"a\nb\nc");
    check_in(&["tac"], b"");
    check_in(&["tac"], b"\n\n");
    check_in(&["tac"], b"single");
}

#[test]
fn separators() {
    check_in(&["tac", "-s", ","], b"a,b,c,");
    check_in(&["tac", "-s", ","], b"a,b,c");
    check_in(&["tac", "-s", "::"], b"a::b::c");
    check_in(&["tac", "-s", "aa"], b"xaaaybaaaaaz");
    check_in(&["tac", "-b"], b"a\nb\nc\n");
    check_in(&["tac", "-b", "-s", ","], b",a,b,c");
    check_in(&["tac", "-b", "-s", ","], b"a,b,c");
}

#[test]
fn regex_separators() {
    check_in(&["tac", "-r", "-s", "[0-9]"], b"a1b22c3d");
    check_in(&["tac", "-r", "-s", "x*y"], b"axxybyczd");
    check_in(&["tac", "-rb", "-s", "[,;]"], b"a,b;c,d");
    check_in(&["tac", "-r", "-s", "\\(ab\\)"], b"1abab2ab3abab4");
    check_in(&["tac", "-r", "-s", "a\\|b+"], b"1abbb2ab3abab4");
    check_in(&["tac", "-r", "-s", "x(y)"], b"1x(y)2xy3");
    check_in(&["tac", "-r", "-s", "\\(ab\\)\\{2\\}"], b"1abab2ab3abab4");
}

#[test]
fn files() {
    let files: crate::Files = &[("a", b"1\n2\n"), ("b", b"3\n4")];
    check(files, &["tac", "a", "b"], b"");
    check(files, &["tac", "a", "-", "b"], b"x\ny\n");
    check(files, &["tac", "missing", "a"], b"");
}

#[test]
fn big() {
    let data: Vec<u8> = (0..10_000)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    check_in(&["tac"], &data);
    check_in(&["tac", "--bogus"], &data);
}
