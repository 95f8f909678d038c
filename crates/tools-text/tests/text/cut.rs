use crate::{check, check_in};

const T: &[u8] = b"a\tb\tc\td\none\ntwo\tthree\n\n\xc3\xa9\tx\nlast\tno\tnewline";
const CSV: &[u8] = b"a,b,c,d,e\n1,2\n,,\nnone\n";

#[test]
fn fields_default_tab() {
    for l in [
        "1", "2", "1,3", "2-", "-2", "1-2,4", "3-3", "5", "2,1", "1-",
    ] {
        check_in(&["cut", "-f", l], T);
    }
}

#[test]
fn fields_delim() {
    for l in ["1", "2", "1,3", "2-", "-2", "4-5", "3-10"] {
        check_in(&["cut", "-d,", "-f", l], CSV);
        check_in(&["cut", "-d,", "-s", "-f", l], CSV);
    }
    check_in(&["cut", "-d", " ", "-f2"], b"a b c\nx  y\n");
}

#[test]
fn bytes_chars() {
    for l in ["1", "2-3", "-2", "3-", "1,3,5", "1-2,2-4", "1,2", "10-"] {
        check_in(&["cut", "-b", l], T);
        check_in(&["cut", "-c", l], T);
    }
}

#[test]
fn complement() {
    check_in(&["cut", "--complement", "-f2"], T);
    check_in(&["cut", "--complement", "-d,", "-f1,3"], CSV);
    check_in(&["cut", "--complement", "-b2-3"], T);
    check_in(&["cut", "--complement", "-c1"], T);
}

#[test]
fn output_delimiter() {
    check_in(&["cut", "-d,", "-f1,3", "--output-delimiter=|"], CSV);
    check_in(&["cut", "-d,", "-f1-", "--output-delimiter", "::"], CSV);
    check_in(&["cut", "-b1,2,4-5", "--output-delimiter=:"], b"abcdef\n");
    check_in(&["cut", "-b1-3,2-4,6", "--output-delimiter=:"], b"abcdef\n");
    check_in(&["cut", "-c1,3", "--output-delimiter="], b"abcdef\n");
}

#[test]
fn files_and_zero() {
    let files: crate::Files = &[("a", CSV), ("b", T)];
    check(files, &["cut", "-f1", "a", "b"], b"");
    check(files, &["cut", "-f1", "a", "missing", "-"], b"x\ty\n");
    check_in(&["cut", "-z", "-d,", "-f2"], b"a,b\0c,d\0");
}

#[test]
fn errors() {
    check_in(&["cut"], T);
    check_in(&["cut", "-f0"], T);
    check_in(&["cut", "-f", "3-1"], T);
    check_in(&["cut", "-f", "x"], T);
    check_in(&["cut", "-d", "ab", "-f1"], T);
    check_in(&["cut", "-b1", "-f1"], T);
    check_in(&["cut", "-b1", "-d,"], T);
    check_in(&["cut", "-c1", "-s"], T);
    check_in(&["cut", "-f-"], T);
}

#[test]
fn long_lines() {
    let line: Vec<u8> = (0..5000)
        .flat_map(|i| format!("f{i},").into_bytes())
        .collect();
    check_in(&["cut", "-d,", "-f2,4000-4002"], &line);
    check_in(&["cut", "-c9990-10010"], &line);
}
