use crate::{dir_with, same_in};

fn files() -> tempfile::TempDir {
    let big1: Vec<u8> = vec![b'x'; 300];
    let mut big2 = vec![b'x'; 299];
    big2.push(b'y');
    dir_with(&[
        ("a", b"abc\ndef\n"),
        ("b", b"abc\ndxf\n"),
        ("c", b"abc"),
        ("d", b"abc\n"),
        ("e", b""),
        ("long", b"abc\ndef\nmore\n"),
        ("n1", b"\x01\x80\xff\x7f"),
        ("n2", b"abcd"),
        ("big1", &big1),
        ("big2", &big2),
    ])
}

#[test]
fn cmp_cases() {
    let d = files();
    for args in [
        &["a", "b"][..],
        &["a", "c"],
        &["c", "a"],
        &["a", "d"],
        &["d", "a"],
        &["a", "e"],
        &["e", "a"],
        &["a", "a"],
        &["e", "e"],
        &["-l", "a", "b"],
        &["-l", "a", "long"],
        &["-l", "big1", "big2"],
        &["-l", "big1", "a"],
        &["-b", "a", "b"],
        &["-bl", "a", "b"],
        &["-bl", "n1", "n2"],
        &["-b", "n1", "n2"],
        &["-s", "a", "b"],
        &["-s", "a", "c"],
        &["-s", "a", "a"],
        &["a", "missing"],
        &["-s", "missing", "a"],
        &["-n", "5", "a", "b"],
        &["-n", "6", "a", "b"],
        &["-i", "2", "a", "b"],
        &["-i", "2:3", "a", "b"],
        &["--ignore-initial=1", "d", "a"],
        &["a", "b", "1", "1"],
        &["a", "b", "5"],
        &["-x", "a", "b"],
        &["a"],
        &["a", "-"],
        &["-", "-"],
        &[],
        &["--verbose", "--print-bytes", "d", "a"],
    ] {
        let mut argv = vec!["cmp"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"abc\ndeF\n");
    }
}
