use crate::{check, check_in};

const T: &[u8] = b"a\na\nb\nA\na\nc\nc\nc\nd\n";
const F: &[u8] = b"1 x a\n2 x a\n3 y a\n4  y b\nzzab\nzzac\nzzbc\n";

#[test]
fn basic_and_count() {
    check_in(&["uniq"], T);
    check_in(&["uniq"], b"");
    check_in(&["uniq"], b"a\na");
    check_in(&["uniq", "-c"], T);
    check_in(&["uniq", "--count"], b"x\n");
}

#[test]
fn repeated_unique() {
    for f in ["-d", "-u", "-D", "-cd", "-cu", "-du", "-iD", "-id"] {
        check_in(&["uniq", f], T);
    }
    check_in(&["uniq", "--all-repeated=separate"], T);
    check_in(&["uniq", "--all-repeated=prepend"], T);
    check_in(&["uniq", "-cD"], T);
}

#[test]
fn ignore_case() {
    check_in(&["uniq", "-i"], T);
    check_in(&["uniq", "-ic"], T);
}

#[test]
fn skip_and_width() {
    check_in(&["uniq", "-f1"], F);
    check_in(&["uniq", "-f", "2", "-c"], F);
    check_in(&["uniq", "-s2"], F);
    check_in(&["uniq", "-s2", "-w1"], F);
    check_in(&["uniq", "-w2", "-c"], F);
    check_in(&["uniq", "-f1", "-s1"], F);
    check_in(&["uniq", "-f9"], F);
}

#[test]
fn group() {
    for g in [
        "--group",
        "--group=prepend",
        "--group=append",
        "--group=both",
        "--group=separate",
    ] {
        check_in(&["uniq", g], T);
    }
}

#[test]
fn files() {
    let files: crate::Files = &[("in", T)];
    check(files, &["uniq", "-c", "in"], b"");
    check(files, &["uniq", "missing"], b"");
    check(files, &["uniq", "-", "-"], T);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in"), T).unwrap();
    let f = safesh_tools_text::UTILS
        .iter()
        .find(|(n, _)| *n == "uniq")
        .unwrap()
        .1;
    let out = safesh_utils::testing::run_util(f, &["uniq", "in", "out"], b"", dir.path(), &[]);
    assert_eq!(out.status, 0);
    assert_eq!(
        std::fs::read(dir.path().join("out")).unwrap(),
        b"a\nb\nA\na\nc\nd\n"
    );
}

#[test]
fn zero_and_errors() {
    check_in(&["uniq", "-z"], b"a\0a\0b\0");
    check_in(&["uniq", "-f", "x"], T);
    check_in(&["uniq", "--bogus"], T);
    check_in(&["uniq", "a", "b", "c"], T);
}

#[test]
fn odd_combinations() {
    for argv in [
        &["uniq", "-Du"][..],
        &["uniq", "-Dd"],
        &["uniq", "--group", "-c"],
        &["uniq", "--all-repeated=bogus"],
        &["uniq", "--all-repeated"],
        &["uniq", "-w", "0"],
        &["uniq", "-s", "99"],
        &["uniq", "-f", "99999999999999999999999"],
    ] {
        check_in(argv, T);
    }
}
