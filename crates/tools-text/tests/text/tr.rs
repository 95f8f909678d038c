use crate::check_in;

const T: &[u8] = b"Hello, World!\n\tTabs  and   spaces\n123 abc XYZ\n\xc3\xa9\x00\xff\n";

#[test]
fn translate() {
    check_in(&["tr", "a-z", "A-Z"], T);
    check_in(&["tr", "[:lower:]", "[:upper:]"], T);
    check_in(&["tr", "[:upper:]", "[:lower:]"], T);
    check_in(&["tr", "abc", "x"], T);
    check_in(&["tr", "a-z", "0-9"], T);
    check_in(&["tr", "lo", "01"], T);
    check_in(&["tr", "aa", "xy"], b"aaa\n");
    check_in(&["tr", "-t", "abcd", "xy"], b"abcd\n");
}

#[test]
fn escapes_and_octal() {
    check_in(&["tr", "\\n", " "], T);
    check_in(&["tr", "\\t", "_"], T);
    check_in(&["tr", "\\\\", "/"], b"a\\b\n");
    check_in(&["tr", "\\000", "0"], T);
    check_in(&["tr", "\\377\\303", "XY"], T);
    check_in(&["tr", "z", "\\400"], b"zz\n");
    check_in(&["tr", "a\\", "x"], b"a\\\n");
    check_in(&["tr", "\\q", "Q"], b"q\n");
}

#[test]
fn classes() {
    for c in [
        "[:alpha:]",
        "[:digit:]",
        "[:space:]",
        "[:alnum:]",
        "[:punct:]",
        "[:upper:]",
        "[:lower:]",
        "[:blank:]",
        "[:cntrl:]",
        "[:xdigit:]",
        "[:print:]",
        "[:graph:]",
    ] {
        check_in(&["tr", "-d", c], T);
    }
    check_in(&["tr", "-s", "[:space:]"], T);
    check_in(&["tr", "[:digit:]", "#"], T);
    check_in(&["tr", "[=a=]", "A"], b"banana\n");
}

#[test]
fn repeats() {
    check_in(&["tr", "abcd", "[x*2]y"], b"abcd\n");
    check_in(&["tr", "a-z", "[x*]"], T);
    check_in(&["tr", "a-z", "A[x*]Z"], T);
    check_in(&["tr", "abc", "[x*010]"], b"abc\n");
    check_in(&["tr", "-c", "a", "[x*]"], b"a\n");
}

#[test]
fn delete_squeeze_complement() {
    check_in(&["tr", "-d", "lo"], T);
    check_in(&["tr", "-dc", "a-z\\n"], T);
    check_in(&["tr", "-cd", "[:alnum:]"], T);
    check_in(&["tr", "-s", "l"], T);
    check_in(&["tr", "-s", " "], T);
    check_in(&["tr", "-s", "a-z", "A-Z"], b"aabbccdd\n");
    check_in(&["tr", "-ds", "a", "b"], b"abbbaabbc\n");
    check_in(&["tr", "-c", "a-z", "_"], T);
    check_in(&["tr", "-cs", "a-zA-Z", "\\n"], T);
    check_in(&["tr", "-C", "a-z", "_"], T);
    check_in(&["tr", "-sc", "a", "x"], b"abbcca\n");
}

#[test]
fn errors() {
    check_in(&["tr"], T);
    check_in(&["tr", "a"], T);
    check_in(&["tr", "-d"], T);
    check_in(&["tr", "-d", "a", "b"], T);
    check_in(&["tr", "z-a", "x"], T);
    check_in(&["tr", "a", ""], T);
    check_in(&["tr", "a", "[:digit:]"], T);
    check_in(&["tr", "a-z", "[:upper:]"], T);
    check_in(&["tr", "[:bogus:]", "x"], T);
    check_in(&["tr", "[a*2]", "x"], T);
    check_in(&["tr", "a", "b", "c"], T);
}

#[test]
fn empty_and_binary() {
    check_in(&["tr", "a", "b"], b"");
    let all: Vec<u8> = (0u8..=255).collect();
    check_in(&["tr", "\\000-\\177", "\\200-\\377"], &all);
    check_in(&["tr", "-d", "\\200-\\377"], &all);
}
