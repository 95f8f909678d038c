use crate::{dir_with, same_in};

fn files() -> tempfile::TempDir {
    dir_with(&[
        ("a", b"apple\nbanana\ncherry\ndate\n"),
        ("b", b"banana\ncarrot\ndate\neggplant\n"),
        ("nonl", b"apple\nzebra"),
        ("unsorted", b"pear\napple\nbanana\n"),
        ("unsorted2", b"zz\naa\n"),
        ("empty", b""),
        ("dups", b"a\na\nb\n"),
        ("dups2", b"a\nb\nb\n"),
        ("z1", b"a\0c\0"),
        ("z2", b"b\0c\0"),
        ("same1", b"b\na\n"),
    ])
}

#[test]
fn comm_cases() {
    let d = files();
    for args in [
        &["a", "b"][..],
        &["-1", "a", "b"],
        &["-2", "a", "b"],
        &["-3", "a", "b"],
        &["-12", "a", "b"],
        &["-13", "a", "b"],
        &["-23", "a", "b"],
        &["-123", "a", "b"],
        &["--output-delimiter=|", "a", "b"],
        &["--output-delimiter=::", "-1", "a", "b"],
        &["--output-delimiter=", "a", "b"],
        &["--total", "a", "b"],
        &["a", "nonl"],
        &["unsorted", "a"],
        &["a", "unsorted"],
        &["unsorted", "unsorted2"],
        &["--check-order", "unsorted", "a"],
        &["--nocheck-order", "unsorted", "a"],
        &["same1", "same1"],
        &["empty", "a"],
        &["a", "empty"],
        &["dups", "dups2"],
        &["-z", "z1", "z2"],
        &["a", "-"],
        &["-", "b"],
        &["a", "missing"],
        &["a"],
        &["a", "b", "c"],
        &["-4", "a", "b"],
    ] {
        let mut argv = vec!["comm"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"banana\nfig\n");
    }
}

/// Random subsets of a word list (sometimes unsorted): same columns and warnings.
#[test]
fn random_lists() {
    let mut seed: u64 = 0x1234_5678_9abc_def1;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let words = [
        "", "a", "B", "b", "ab", "abc", "b c", "z", "Z", "é", "10", "9", "a\t",
    ];
    let d = tempfile::tempdir().unwrap();
    for round in 0..40 {
        let mut mk = || {
            let mut v: Vec<&str> = words.iter().copied().filter(|_| rnd(2) == 0).collect();
            v.sort();
            if round % 5 == 0 && v.len() > 2 {
                let k = 1 + rnd(v.len() as u64 - 1) as usize;
                v.swap(0, k);
            }
            v.iter().map(|w| format!("{w}\n")).collect::<String>()
        };
        std::fs::write(d.path().join("x"), mk()).unwrap();
        std::fs::write(d.path().join("y"), mk()).unwrap();
        let opts: &[&str] = match round % 4 {
            0 => &[],
            1 => &["-3"],
            2 => &["-12", "--total"],
            _ => &["--check-order"],
        };
        let mut argv = vec!["comm"];
        argv.extend_from_slice(opts);
        argv.extend_from_slice(&["x", "y"]);
        crate::same_in(d.path(), &argv, b"");
    }
}
