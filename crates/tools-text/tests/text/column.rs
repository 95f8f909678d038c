use crate::{check, check_in};

const T: &[u8] = b"name size kind\nalpha 10 file\n  beta\t2000   dir\n\nlonger-name-here 3\nx\n";
const CSV: &[u8] = b"a,b,,c\nxx,y,z\n,lead,empty\nend,\n";

#[test]
fn tables() {
    check_in(&["column", "-t"], T);
    check_in(&["column", "-t"], b"");
    check_in(&["column", "-t"], b"\n\n  \n");
    check_in(&["column", "-t", "-s", ","], CSV);
    check_in(&["column", "-t", "-s", ",", "-o", "|"], CSV);
    check_in(&["column", "-t", "-s", ",;"], b"a;b,c\nd,,e;f\n");
    check_in(&["column", "-t", "-o", " | "], T);
    check_in(&["column", "--table", "--separator=,"], CSV);
}

#[test]
fn names_alignment_hiding() {
    check_in(&["column", "-t", "-N", "N,S,K"], T);
    check_in(&["column", "-t", "-N", "one"], T);
    check_in(&["column", "-t", "-R", "2"], T);
    check_in(&["column", "-t", "-R", "3"], T);
    check_in(&["column", "-t", "-N", "N,S,K", "-R", "s"], T);
    check_in(&["column", "-t", "-N", "N,S,K", "-H", "K"], T);
    check_in(&["column", "-t", "-H", "1"], T);
    check_in(&["column", "-N", "a"], T);
}

#[test]
fn filled() {
    let words: Vec<u8> = (1..=40)
        .flat_map(|n| format!("w{n}\n").into_bytes())
        .collect();
    check_in(&["column"], &words);
    check_in(&["column", "-x"], &words);
    for c in ["1", "5", "10", "20", "30", "79", "200"] {
        check_in(&["column", "-c", c], &words);
        check_in(&["column", "-x", "-c", c], &words);
        check_in(&["column", "-c", c], T);
        check_in(&["column", "-x", "-c", c], T);
    }
    check_in(&["column"], b"one\n");
    check_in(&["column"], b"");
    check_in(&["column", "-c", "x"], T);
    check_in(&["column", "-t", "-x"], T);
}

#[test]
fn files() {
    let files = &[("a", &b"k v\nkey value\n"[..]), ("b", &b"z 1\n"[..])];
    check(files, &["column", "-t", "a", "b"], b"");
    check(files, &["column", "-t", "a", "nosuch", "-"], b"s t\n");
}
