use crate::{dir_with, same_in};

fn files() -> tempfile::TempDir {
    let all: Vec<u8> = (0..=255u8).collect();
    dir_with(&[
        ("od1", b"abcdefghijklmnopqrstuvwxyz\n\x01\xff"),
        ("rep", b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"),
        ("rep2", &[0u8; 64]),
        ("all", &all),
        ("odd", b"abc"),
        ("empty", b""),
        ("utf", "héllo wörld\n".as_bytes()),
    ])
}

#[test]
fn od_cases() {
    let d = files();
    for args in [
        &["od1"][..],
        &["-t", "x1", "-t", "o2", "od1"],
        &["-c", "-t", "d2", "od1"],
        &["-t", "a", "od1"],
        &["-t", "a", "all"],
        &["-c", "all"],
        &["-An", "-t", "u1", "-N", "5", "od1"],
        &["-Ax", "-t", "x4", "od1"],
        &["-Ad", "-j", "3", "-N", "10", "-x", "od1"],
        &["-c", "rep"],
        &["-v", "-c", "rep"],
        &["rep2"],
        &["-t", "d1", "-t", "x1z", "od1"],
        &["-i", "od1"],
        &["-l", "od1"],
        &["-tx8", "od1"],
        &["-w4", "-tx1", "od1"],
        &["-w", "-tx1", "od1"],
        &["-b", "odd"],
        &["-x", "odd"],
        &["-tu2", "-td4", "all"],
        &["-to1", "utf"],
        &["-s", "-d", "od1"],
        &["empty"],
        &["-c", "od1", "odd"],
        &["-c", "-"],
        &["-c"],
        &["missing", "odd"],
        &["-j", "100", "odd"],
        &["-t", "q", "odd"],
        &["-A", "z", "odd"],
        &["-j", "0x2", "-N", "010", "all"],
        &["--address-radix=x", "--format=x2", "--read-bytes=6", "od1"],
        &["-t", "u8", "-t", "o8", "-t", "d8", "all"],
        &["-tx1", "-tc", "-ta", "od1"],
        &["-Ad", "-tx1", "-w8", "all"],
        &["-tdC", "-tuS", "-toI", "-txL", "all"],
        &["-w3", "-tx1", "od1"],
        &["-w6", "-tx2", "od1"],
        &["-tx1z", "-w8", "utf"],
        &["-N", "1k", "-c", "all"],
    ] {
        let mut argv = vec!["od"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"stdin\tdata\n");
    }
}
