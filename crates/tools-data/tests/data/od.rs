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

/// A width that is no multiple of the element sizes falls back to their
/// least common multiple (with a warning); x87 encodings without the integer
/// bit print as NaN.
#[test]
fn odd_widths_and_invalid_long_doubles() {
    let mut bad_ld = Vec::new();
    // unnormal, pseudo-infinity, pseudo-NaN, a normal neighbour
    for (mant, se) in [
        (0x3c80_8094_8001_8080u64, 0x800au16),
        (0, 0x7fff),
        (0x4000_0000_0000_0001, 0xffff),
        (0x8000_0000_0000_0000, 0x3fff),
    ] {
        bad_ld.extend_from_slice(&mant.to_le_bytes());
        bad_ld.extend_from_slice(&se.to_le_bytes());
        bad_ld.extend_from_slice(&[0; 6]);
    }
    let d = dir_with(&[("ld", &bad_ld), ("n", b"0123456789abcdefghijklmnopqrstuv")]);
    for args in [
        &["-tfL", "ld"][..],
        &["-X", "-w6", "n"],
        &["-a", "-tu4", "-w6", "n"],
        &["-O", "-tu8", "-w2", "n"],
        &["-tx2", "-w3", "n"],
        &["-tx1", "-w5", "n"],
    ] {
        let mut argv = vec!["od"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

/// `-S` (strings) and `--endian`.
#[test]
fn strings_and_endian() {
    let d = dir_with(&[
        (
            "s",
            b"ab\0abcd\0xyzw\n\0tab\there\0\x7fdel\0longer string!\0tail",
        ),
        ("n", b"0123456789abcdef\x01\x02\x03"),
    ]);
    for args in [
        &["-S3", "s"][..],
        &["-S", "1", "s"],
        &["-S5", "s"],
        &["--strings", "s"],
        &["--strings=6", "s"],
        &["-Ax", "-S2", "s"],
        &["-An", "-S3", "s"],
        &["-S3", "-j4", "s"],
        &["-S3", "-N12", "s"],
        &["-S3", "-N6", "s"],
        &["-S3", "-j2", "-N9", "s"],
        &["-S3", "-tx1", "s"],
        &["-S3", "-c", "s"],
        &["-S3", "s", "n"],
        &["-S", "x", "s"],
        &["--endian=big", "-tx2", "n"],
        &["--endian=big", "-tx4", "-tu8", "n"],
        &["--endian=little", "-tx2", "n"],
        &["--endian=big", "-tf4", "-tf8", "n"],
        &["--endian=big", "-td2", "-tx1", "n"],
        &["--endian=middle", "-tx2", "n"],
    ] {
        let mut argv = vec!["od"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

/// Floats: every special value, denormals, both signs of zero, in all three
/// sizes (the x87 `long double` included).
fn float_files() -> tempfile::TempDir {
    let mut f4 = Vec::new();
    for v in [
        0.0f32,
        -0.0,
        1.0,
        -1.5,
        0.1,
        3.4028235e38,
        f32::MIN_POSITIVE,
        1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        123456.79,
    ] {
        f4.extend_from_slice(&v.to_le_bytes());
    }
    let mut f8 = Vec::new();
    for v in [
        0.0f64,
        1.0 / 3.0,
        -2.5e-300,
        f64::MAX,
        5e-324,
        f64::NAN,
        -f64::INFINITY,
        1e15,
    ] {
        f8.extend_from_slice(&v.to_le_bytes());
    }
    // x87: 1.0, -pi-ish, a denormal, infinity, then zero padding.
    let mut fl = Vec::new();
    for (mant, se) in [
        (0x8000_0000_0000_0000u64, 0x3fffu16),
        (0xc90f_daa2_2168_c235, 0xc000),
        (0x0000_0000_0000_0001, 0x0000),
        (0x8000_0000_0000_0000, 0x7fff),
    ] {
        fl.extend_from_slice(&mant.to_le_bytes());
        fl.extend_from_slice(&se.to_le_bytes());
        fl.extend_from_slice(&[0; 6]);
    }
    dir_with(&[
        ("f4", &f4),
        ("f8", &f8),
        ("fl", &fl),
        ("bb", b"\x01\x02\x03\nABC\xfe"),
        ("hello", b"HELLO"),
        ("text", b"HELLO WORLD 12345678"),
    ])
}

#[test]
fn od_float_and_traditional_letters() {
    let d = float_files();
    for args in [
        &["-f", "f4"][..],
        &["-tf4", "f4"],
        &["-tfF", "-tx4", "f4"],
        &["-e", "f8"],
        &["-F", "f8"],
        &["-tf", "f8"],
        &["-tfD", "-w16", "f8"],
        &["-tf8", "-tf4", "f8"],
        &["-tfL", "fl"],
        &["-tf16", "fl"],
        &["-tf2", "f4"],
        &["-tf3", "f4"],
        &["-B", "bb"],
        &["-e", "bb"],
        &["-F", "bb"],
        &["-f", "bb"],
        &["-H", "bb"],
        &["-h", "bb"],
        &["-I", "bb"],
        &["-L", "bb"],
        &["-D", "bb"],
        &["-X", "bb"],
        &["-O", "bb"],
        &["-f", "-c", "odd_missing"],
        &["-tf4z", "hello"],
    ] {
        let mut argv = vec!["od"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"\0\0\0\0\0\0\0\0");
    }
}

#[test]
fn od_old_style_offsets_and_traditional() {
    let d = float_files();
    for args in [
        &["-b", "--traditional"][..],
        &["-b", "--traditional", "hello"],
        &["--traditional", "-c", "text", "1"],
        &["--traditional", "-c", "text", "10"],
        &["--traditional", "-c", "text", "0x3"],
        &["--traditional", "-c", "text", "+2"],
        &["--traditional", "-c", "text", "1b"],
        &["--traditional", "-c", "text", "1."],
        &["--traditional", "-c", "text", "1", "2"],
        &["--traditional", "-c", "-tx1", "text", "1", "+2"],
        &["--traditional", "-Ax", "-c", "-tx1", "text", "1", "2"],
        &["--traditional", "-An", "-c", "-tx1", "text", "1", "2"],
        &["--traditional", "-Ad", "-c", "text", "1", "2"],
        &["--traditional", "-c", "1"],
        &["--traditional", "-c", "+1"],
        &["--traditional", "-c", "1", "2"],
        &["--traditional", "-c", "text", "text"],
        &["--traditional", "-c", "text", "1", "2", "3"],
        &["-c", "text", "+2"],
        &["-c", "text", "2"],
        &["-c", "+2"],
        &["-c", "text", "x2"],
        &["-t", "c", "text", "2"],
        &["-v", "-c", "text", "2"],
        &["-c", "text", "hello"],
    ] {
        let mut argv = vec!["od"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"HELLO WORLD 12345678");
    }
}
