use crate::{check, check_in};

const WORDS: &[u8] = b"banana\nApple\napple\n cherry\n\tdate\nBanana\n10\n9\n-3\n2.5\n\nzeta\n\xc3\xa9clair\napple\n";
const TABLE: &[u8] = b"b 2 x\na 10 y\nc 2 a\nd -1 z\ne 2.0 b\nf 10 a\n";
const CSV: &[u8] = b"x,3,b\ny,1,a\nz,3,a\nw,2,c\nv,1,b\n";

#[test]
fn plain_and_reverse() {
    check_in(&["sort"], WORDS);
    check_in(&["sort", "-r"], WORDS);
    check_in(&["sort"], b"");
    check_in(&["sort"], b"b\na");
    check_in(&["sort", "-u"], WORDS);
    check_in(&["sort", "-ru"], WORDS);
}

#[test]
fn numeric() {
    let nums = b"10\n9\n-3\n2.5\n+4\n 7\n0\n-0\nabc\n1e3\n.5\n-.5\n007\n\n3a\n";
    for f in ["-n", "-nr", "-nu", "-ns", "-g", "-gr", "-h"] {
        check_in(&["sort", f], nums);
    }
    check_in(&["sort", "-h"], b"1K\n2M\n512\n1G\n0K\n-1M\n3k\n1.5K\n");
    check_in(
        &["sort", "-g"],
        b"1e3\n5\nnan\ninf\n-inf\nx\n0x10\n2.5e-1\n",
    );
}

#[test]
fn keys() {
    for k in [
        "-k2",
        "-k2,2",
        "-k2n",
        "-k2,2n",
        "-k2,2nr",
        "-k3,3",
        "-k3",
        "-k2n,2 -k1r",
        "-k1.2,1.3",
        "-k2.2",
    ] {
        let mut argv = vec!["sort"];
        argv.extend(k.split(' '));
        check_in(&argv, TABLE);
    }
    check_in(&["sort", "-k2,2n", "-k3,3r"], TABLE);
    check_in(&["sort", "-n", "-k2,2"], TABLE);
    check_in(&["sort", "-r", "-k2,2n"], TABLE);
}

#[test]
fn separator() {
    check_in(&["sort", "-t,", "-k2,2"], CSV);
    check_in(&["sort", "-t,", "-k2,2", "-k3,3"], CSV);
    check_in(&["sort", "-t", ",", "-k2n", "-s"], CSV);
    check_in(&["sort", "-t,", "-k3,3", "-u"], CSV);
    check_in(&["sort", "-t,", "-k2,2nr", "-k1,1"], CSV);
    check_in(&["sort", "-t:", "-k2"], b"a:b:c\nb:a\nc\n:x\n");
}

#[test]
fn stable_and_last_resort() {
    check_in(&["sort", "-k2,2"], b"b x\na x\nc w\n");
    check_in(&["sort", "-s", "-k2,2"], b"b x\na x\nc w\n");
    check_in(&["sort", "-s", "-k2,2r"], b"b x\na x\nc w\n");
    check_in(&["sort", "-f"], WORDS);
    check_in(&["sort", "-fu"], WORDS);
    check_in(&["sort", "-fs"], WORDS);
}

#[test]
fn blanks_dict_nonprinting() {
    check_in(&["sort", "-b"], b"  b\na\n c\n\td\n");
    check_in(&["sort", "-k2b"], b"x   b\ny a\nz  c\n");
    check_in(&["sort", "-k2"], b"x   b\ny a\nz  c\n");
    check_in(&["sort", "-d"], b"a-c\nab\n_z\n a\n");
    check_in(&["sort", "-i"], b"a\x01c\nab\n\x02z\n");
    check_in(&["sort", "-df"], b"B-b\na_a\nC\n");
}

#[test]
fn month_and_version() {
    check_in(&["sort", "-M"], b"Mar\nJAN\nfeb\n  dec\nxyz\nJanuary\n\n");
    check_in(
        &["sort", "-V"],
        b"a10\na2\na1.10\na1.9\n1.0~rc1\n1.0\nfoo.tar.gz\nfoo1.tar.gz\n.hidden\n..\n.\n",
    );
    check_in(&["sort", "-Vr"], b"v1.2.10\nv1.2.9\nv1.10\n");
    check_in(&["sort", "-k2V"], b"x 1.10\ny 1.9\nz 1.9a\n");
}

#[test]
fn check_mode() {
    check_in(&["sort", "-c"], b"a\nb\nc\n");
    check_in(&["sort", "-c"], b"a\nc\nb\n");
    check_in(&["sort", "-C"], b"a\nc\nb\n");
    check_in(&["sort", "-cu"], b"a\nb\nb\n");
    check_in(&["sort", "-cn"], b"1\n2\n10\n");
    check_in(&["sort", "--check=quiet"], b"b\na\n");
}

#[test]
fn files_output_zero() {
    let files: crate::Files = &[("a", b"c\na\n"), ("b", b"b\nd")];
    check(files, &["sort", "a", "b"], b"");
    check(files, &["sort", "a", "-", "b"], b"e\n");
    check(files, &["sort", "missing", "a"], b"");
    check_in(&["sort", "-z"], b"b\0a\0c\nx\0");
    check_in(&["sort", "-z", "-k2"], b"b\n1\0a\n2\0");
    check_in(&["sort", "-h"], b"1R\n1Q\n1Y\n1Z\n1E\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), b"z\ny\nx\n").unwrap();
    let f = safesh_tools_text::UTILS
        .iter()
        .find(|(n, _)| *n == "sort")
        .unwrap()
        .1;
    let out = safesh_utils::testing::run_util(f, &["sort", "-o", "f", "f"], b"", dir.path(), &[]);
    assert_eq!(out.status, 0);
    assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"x\ny\nz\n");
}

#[test]
fn errors() {
    check_in(&["sort", "-k0"], b"a\n");
    check_in(&["sort", "-kx"], b"a\n");
    check_in(&["sort", "-t", "ab"], b"a\n");
    check_in(&["sort", "-ng"], b"a\n");
    check_in(&["sort", "--bogus"], b"a\n");
    check_in(&["sort", "-c", "a", "b"], b"a\n");
}

#[test]
fn big_input() {
    let mut data = Vec::new();
    let mut x: u64 = 12345;
    // More lines than the two-thread threshold.
    for _ in 0..70_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        data.extend_from_slice(format!("{} {}\n", x % 1000, (x >> 20) % 97).as_bytes());
    }
    check_in(&["sort"], &data);
    check_in(&["sort", "-n"], &data);
    check_in(&["sort", "-k2,2n", "-k1,1"], &data);
    check_in(&["sort", "-u", "-k2,2n"], &data);
    check_in(&["sort", "-s", "-k2,2n"], &data);
    check_in(&["sort", "-r"], &data);
}

#[test]
fn random_sort_groups_equal_lines() {
    let input = b"a\nb\nc\na\nd\nb\na\n";
    let (mine, real) = crate::run_both(&[], &["sort", "-R"], input);
    assert_eq!(mine.status, 0);
    assert_eq!(real.status, 0);
    let mut got: Vec<&[u8]> = mine
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    // Equal lines are adjacent: four distinct lines make exactly three changes.
    let changes = got.windows(2).filter(|w| w[0] != w[1]).count();
    assert_eq!(changes, 3, "{}", String::from_utf8_lossy(&mine.stdout));
    got.sort();
    assert_eq!(got, vec![&b"a"[..], b"a", b"a", b"b", b"b", b"c", b"d"]);
}

/// Integer keys (compared as integers), keys that are not plain integers
/// (fractions, 19+ digits, blanks, signs, text) and many ties, in a file large
/// enough to be sorted on two threads.
fn mixed_numeric_keys() -> Vec<u8> {
    let special = [
        "5.5",
        "5.0",
        "5.",
        "-0",
        "0",
        "-",
        "+3",
        " 12",
        "\t-12",
        "abc",
        "",
        "1234567890123456789",
        "123456789012345678",
        "-123456789012345678",
        "99999999999999999999",
        "0007",
        "7",
        "-7.25",
        ".5",
        "-.5",
    ];
    let mut out = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..70_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = (x >> 33) % 2000;
        let key = if i % 97 == 0 {
            special[(x >> 20) as usize % special.len()].to_string()
        } else if i % 3 == 0 {
            format!("-{n}")
        } else {
            n.to_string()
        };
        out.extend_from_slice(format!("{i},w{},{key},tail{}\n", n % 7, x % 5).as_bytes());
    }
    out
}

#[test]
fn numeric_keys_fast_path_and_fallback() {
    let data = mixed_numeric_keys();
    let files: crate::Files = &[("f", &data)];
    for args in [
        &["-t,", "-k3", "-n"][..],
        &["-t,", "-k3n"],
        &["-t,", "-k3,3n"],
        &["-t,", "-k3nr"],
        &["-t,", "-k3", "-n", "-r"],
        &["-t,", "-k3n", "-s"],
        &["-t,", "-k3n", "-u"],
        &["-t,", "-k3n", "-k2"],
        &["-t,", "-k3bn"],
        &["-t,", "-k3", "-g"],
        &["-t,", "-k2"],
        &[],
        &["-r"],
    ] {
        let mut argv = vec!["sort"];
        argv.extend_from_slice(args);
        argv.push("f");
        check(files, &argv, b"");
    }
}
