//! grep differential tests.

use super::common::{check, check_sorted};

const T: &[u8] = b"alpha\nbeta\ngamma delta\nAlpha beta\nfoo.bar\nfoobar\nfoo bar\n\nend line\n";

fn files() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("t", T),
        (
            "u",
            b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
        ),
        ("nonl", b"abc\nlast abc"),
        ("empty", b""),
        ("bin", b"abc\0def\nabc\n"),
        ("d/a.txt", b"hello\nworld\n"),
        ("d/b.rs", b"hello rust\n"),
        ("d/sub/c.txt", b"hello sub\n"),
        ("d/skip/e.txt", b"hello skip\n"),
        ("pats", b"alpha\nfoo\n"),
        ("uni", "caf\u{e9}\nna\u{ef}ve\n\u{3b1}\u{3b2}\n".as_bytes()),
    ]
}

fn g(args: &[&str]) {
    let mut argv = vec!["grep"];
    argv.extend_from_slice(args);
    check(&argv, b"x\nalpha\ny\n", &files());
}

#[test]
fn basic_matching() {
    g(&["alpha", "t"]);
    g(&["-i", "alpha", "t"]);
    g(&["-v", "a", "t"]);
    g(&["-c", "a", "t"]);
    g(&["-n", "bar", "t"]);
    g(&["nomatch", "t"]);
    g(&["alpha"]);
    g(&["-", "t"]);
    g(&["abc", "nonl"]);
    g(&["x", "empty"]);
    g(&["-c", "x", "empty"]);
    g(&["", "t"]);
    g(&["-c", "^$", "t"]);
    g(&["-n", "$", "nonl"]);
}

#[test]
fn regex_syntax() {
    g(&["fo*\\.b", "t"]);
    g(&["-E", "fo+(\\.| )b", "t"]);
    g(&["-F", "foo.bar", "t"]);
    g(&["-G", "a\\|z", "t"]);
    g(&["\\(al\\)pha", "t"]);
    g(&["-E", "(a|b){2}", "t"]);
    g(&["[[:upper:]]", "t"]);
    g(&["\\<beta", "t"]);
    g(&["-e", "alpha", "-e", "end", "t"]);
    g(&["-f", "pats", "t"]);
    g(&["\\(a\\).*\\1", "t"]);
    g(&["-E", "(l)\\1", "t", "u"]);
    g(&["caf.", "uni"]);
    g(&["-c", "^..$", "uni"]);
    g(&["[", "t"]);
    g(&["-E", "a{1", "t"]);
    g(&["[:space:]", "t"]);
}

#[test]
fn output_modes() {
    g(&["-o", "a[a-z]", "t"]);
    g(&["-o", "-b", "a", "t"]);
    g(&["-b", "bar", "t"]);
    g(&["-on", "-E", "o|oo", "t"]);
    g(&["-w", "foo", "t"]);
    g(&["-x", "foobar", "t"]);
    g(&["-l", "a", "t", "u", "nonl"]);
    g(&["-L", "a", "t", "u", "nonl"]);
    g(&["-q", "alpha", "t"]);
    g(&["-q", "zzz", "t"]);
    g(&["-m", "2", "a", "t"]);
    g(&["-c", "-m", "2", "a", "t"]);
    g(&["-h", "a", "t", "u"]);
    g(&["-H", "a", "t"]);
    g(&["a", "t", "u"]);
    g(&["-c", "e", "t", "u"]);
    g(&["--color=never", "alpha", "t"]);
    g(&["-vc", "e", "u"]);
}

#[test]
fn context() {
    g(&["-A", "1", "three", "u"]);
    g(&["-B", "2", "five", "u"]);
    g(&["-C", "1", "-n", "-e", "two", "-e", "six", "u"]);
    g(&["-C", "1", "-e", "two", "-e", "four", "u"]);
    g(&["-A1", "e", "u", "t"]);
    g(&["-m1", "-A2", "t", "u"]);
    g(&["-2", "five", "u"]);
}

#[test]
fn files_and_errors() {
    g(&["a", "missing", "t"]);
    g(&["-s", "a", "missing"]);
    g(&["-q", "a", "missing", "t"]);
    g(&["abc", "bin"]);
    g(&["-c", "abc", "bin"]);
    g(&["-a", "abc", "bin"]);
    g(&["hello", "d"]);
    g(&["-y"]);
    g(&["--bogus", "x"]);
    g(&[]);
    g(&["-E", "(", "t"]);
    g(&["\\(", "t"]);
    g(&["-z", "beta", "t"]);
}

fn gs(args: &[&str]) {
    let mut argv = vec!["grep"];
    argv.extend_from_slice(args);
    check_sorted(&argv, b"", &files());
}

#[test]
fn recursive() {
    gs(&["-r", "hello", "d"]);
    gs(&["-r", "hello", "d", "--include=*.txt"]);
    gs(&["-r", "hello", "d", "--exclude=*.txt"]);
    gs(&["-r", "hello", "d", "--exclude-dir=skip"]);
    gs(&["-rl", "hello", "d"]);
    gs(&["-rc", "hello", "d/sub"]);
    gs(&["-rh", "hello", "d"]);
    gs(&["-r", "hello", "d/a.txt"]);
}

#[test]
fn gnu_special_cases() {
    g(&["-c", "-f", "/dev/null", "t"]);
    g(&["-v", "-f", "/dev/null", "t"]);
    g(&["-vc", "", "t"]);
    g(&["-m0", "-c", "a", "t"]);
    g(&["-L", "alpha", "t", "u"]);
    g(&["-c", "hello", "t", "d"]);
    g(&["-P", "\\d", "t"]);
    g(&["-oP", "o(?=o)", "t"]);
    g(&["-P", "(?<=f)oo", "t"]);
    g(&["-Pc", "^(\\w)\\w*\\1", "t"]);
    g(&["-o", "-E", "(ab|a)(c|bcd)", "t"]);
    g(&["-ow", "foo", "t"]);
    g(&["-x", "-F", "-e", "alpha", "-e", "end line", "t"]);
    g(&["-F", "-i", "ALPHA", "t"]);
    g(&["-e", "alpha", "-e", "", "-c", "t"]);
    g(&["-Z", "-l", "a", "t", "u"]);
    g(&["-I", "abc", "bin", "t"]);
    g(&["--binary-files=text", "abc", "bin"]);
    g(&["--binary-files=bogus", "abc", "bin"]);
    g(&["-U", "abc", "t"]);
    g(&["-o", "abc", "bin"]);
    g(&["-l", "abc", "bin"]);
    g(&["-lc", "a", "t", "u"]);
    g(&["-d", "skip", "hello", "d", "t"]);
    g(&["hello", "/dev/null"]);
    g(&["--label=LBL", "-H", "alpha"]);
    g(&["-y", "ALPHA", "t"]);
}

/// Inputs larger than one read buffer: line numbers, offsets and context across
/// buffer boundaries, a line longer than the buffer, no final newline.
#[test]
fn across_buffers() {
    let mut data = Vec::new();
    for i in 0..30000 {
        let mark = if i % 3000 == 0 || i % 3000 == 2999 {
            "MARK"
        } else {
            "x"
        };
        data.extend_from_slice(format!("line {i:06} {mark}\n").as_bytes());
    }
    data.extend_from_slice(&vec![b'L'; 300_000]);
    data.extend_from_slice(b"\nlast");
    let files: Vec<(&str, &[u8])> = vec![("big", &data)];
    for args in [
        &["-n", "-B2", "-A2", "MARK", "big"][..],
        &["-c", "MARK", "big"],
        &["-n", "last", "big"],
        &["-vn", "x", "big"],
        &["-b", "-o", "MARK", "big"],
        &["-n", "-m", "5", "-C3", "MARK", "big"],
    ] {
        let mut argv = vec!["grep"];
        argv.extend_from_slice(args);
        check(&argv, b"", &files);
    }
    check(&["sed", "-n", "/MARK/{=;p}", "big"], b"", &files);
    check(&["sed", "$!d", "big"], b"", &files);
}

/// Runs `grep ARGS` with `stdin` and one file `input` holding `file`.
fn g_with(args: &[&str], file: &'static [u8], stdin: &[u8]) {
    let mut argv = vec!["grep"];
    argv.extend_from_slice(args);
    check(&argv, stdin, &[("input", file)]);
}

#[test]
fn nul_bytes_in_lines() {
    g_with(&["-a", "foo", "input"], b"\0foo\n\n", b"");
    g_with(&["-a", "foo"], b"", b"\0foo\n\n");
    g_with(&[".", "input"], b"\0\n", b"");
    g_with(&["-c", ".", "input"], b"\0\n", b"");
    g_with(&["-a", "-c", "^.$", "input"], b"\0\n", b"");
    g_with(&["foo", "input"], b"\0foo\n\n", b"");
    g_with(&["-a", "-o", "o.b", "input"], b"fo\0bar\n", b"");
    g_with(&["-z", "b"], b"", b"a\0b\0c");
    g_with(&["-a", "-v", "x", "input"], b"\0\nx\n\0\0\n", b"");
    g_with(&["-a", "-n", "", "input"], b"a\0\n\0b\n", b"");
    // A neighbour: no NUL, plain text.
    g_with(&["foo", "input"], b"foo\nbar\n", b"");
}

#[test]
fn back_references_in_several_patterns() {
    // Each -e pattern numbers its own groups.
    let data: &[u8] = b"bcc\nbcb\nab\nxbb\nyzz\nqq\n";
    for args in [
        &["-e", "a\\(b\\)", "-e", "b\\(c\\)\\1"][..],
        &["-o", "-e", "a\\(b\\)", "-e", "b\\(c\\)\\1"],
        &["-E", "-e", "(a)(b)", "-e", "(x)(b)\\2", "-e", "y(z)\\1"],
        &["-c", "-e", "\\(.\\)\\1", "-e", "q\\(x\\)"],
        &["-w", "-e", "b\\(c\\)\\1", "-e", "y\\(z\\)\\1"],
        &["-v", "-e", "\\(b\\)\\1", "-e", "\\(c\\)\\1"],
    ] {
        let mut argv = vec!["grep"];
        argv.extend_from_slice(args);
        check(&argv, data, &[]);
    }
}
