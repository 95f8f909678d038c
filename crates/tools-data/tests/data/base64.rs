use crate::{dir_with, same, same_in};

#[test]
fn encode() {
    let long: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    for input in [
        &b""[..],
        b"a",
        b"ab",
        b"abc",
        b"abcd",
        b"hello world\n",
        &long,
    ] {
        same(&["base64"], input);
        same(&["base64", "-w", "0"], input);
        same(&["base64", "-w", "10"], input);
        same(&["base64", "--wrap=4"], input);
    }
}

#[test]
fn decode() {
    for input in [
        &b""[..],
        b"YQ",
        b"YQ=",
        b"YQ==",
        b"YQ==YQ==",
        b"YWJj",
        b"YW Jj",
        b"YW*Jj",
        b"Y",
        b"YWJjZA",
        b"YWJj\nZGVm\n",
        b"====",
        b"YQ==\n\n",
        b"YQ=x",
        b"aGVsbG8gd29ybGQK\n",
    ] {
        same(&["base64", "-d"], input);
        same(&["base64", "-di"], input);
        same(&["base64", "--decode", "--ignore-garbage"], input);
    }
}

#[test]
fn files_and_errors() {
    let d = dir_with(&[("f", b"some file data\n"), ("e", b"c29tZQ==\n")]);
    same_in(d.path(), &["base64", "f"], b"");
    same_in(d.path(), &["base64", "-"], b"stdin");
    same_in(d.path(), &["base64", "-d", "e"], b"");
    same_in(d.path(), &["base64", "missing"], b"");
    same_in(d.path(), &["base64", "f", "e"], b"");
    same_in(d.path(), &["base64", "-w", "x", "f"], b"");
    same_in(d.path(), &["base64", "-z"], b"");
}

#[test]
fn round_trip_binary() {
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 256) as u8).collect();
    let enc = same(&["base64"], &data);
    let dec = same(&["base64", "-d"], &enc.stdout);
    assert_eq!(dec.stdout, data);
}
