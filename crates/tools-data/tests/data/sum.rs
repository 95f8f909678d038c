use crate::{dir_with, same, same_in};

fn tree() -> tempfile::TempDir {
    let d = dir_with(&[
        ("plain", b"d"),
        ("empty", b""),
        ("x\ny", b"a"),
        ("b\\c", b"b"),
        ("c\rr", b"e"),
        ("sub/f", b"nested\n"),
    ]);
    let sums = "8277e0910d750195b448797616e091ad  plain\n\
                00000000000000000000000000000000  empty\n\
                garbage\n\
                8277e0910d750195b448797616e091ad  nofile\n";
    std::fs::write(d.path().join("md5s"), sums).unwrap();
    let variants = "8277e0910d750195b448797616e091ad *plain\n \
                    8277e0910d750195b448797616e091ad  plain\n\
                    8277e0910d750195b448797616e091ad plain\n\
                    8277E0910D750195B448797616E091AD  plain\n\
                    8277e0910d750195b448797616e091ad  plain\r\n\
                    MD5 (plain) = 8277e0910d750195b448797616e091ad\n";
    std::fs::write(d.path().join("variants"), variants).unwrap();
    d
}

/// Every digest tool, against its GNU namesake.
const TOOLS: [&str; 6] = [
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
];

#[test]
fn print_digests() {
    let d = tree();
    for tool in TOOLS {
        for args in [
            &["plain", "empty"][..],
            &["x\ny", "b\\c", "c\rr"],
            &["--tag", "plain", "x\ny"],
            &["-b", "plain"],
            &["-t", "plain"],
            &["-z", "plain", "x\ny"],
            &["-", "plain"],
            &[],
            &["missing", "plain"],
            &["sub"],
            &["sub/f"],
            &["--bogus"],
        ] {
            let mut argv = vec![tool];
            argv.extend_from_slice(args);
            same_in(d.path(), &argv, b"stdin data\n");
        }
    }
}

#[test]
fn check_mode() {
    let d = tree();
    for args in [
        &["-c", "md5s"][..],
        &["-c", "--quiet", "md5s"],
        &["-c", "--status", "md5s"],
        &["-c", "variants"],
        &["-c", "--strict", "variants"],
        &["-c", "-w", "variants"],
        &["--check", "--ignore-missing", "md5s"],
        &["-c", "nonexistent"],
        &["-c", "plain"],
    ] {
        let mut argv = vec!["md5sum"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

#[test]
fn check_round_trip() {
    let d = tree();
    for tool in TOOLS {
        let listed = same_in(
            d.path(),
            &[tool, "plain", "empty", "x\ny", "b\\c", "c\rr"],
            b"",
        );
        same_in(d.path(), &[tool, "-c"], &listed.stdout);
        same_in(d.path(), &[tool, "-c", "-"], &listed.stdout);
        let tagged = same_in(d.path(), &[tool, "--tag", "plain", "x\ny"], b"");
        same_in(d.path(), &[tool, "-c"], &tagged.stdout);
        same_in(
            d.path(),
            &[tool, "-c", "--ignore-missing"],
            b"0000  nofile\n",
        );
    }
}

#[test]
fn stdin_only() {
    for tool in TOOLS {
        same(&[tool], b"");
        same(&[tool], b"abc");
    }
    same(&["md5sum", "-"], "héllo\n".as_bytes());
    same(&["md5sum", "-c"], b"garbage\n");
}
