//! sed differential tests.

use super::common::{check, check_outputs};

const T: &[u8] = b"one two\nthree four\nfive six\nseven eight\nnine ten\n";

fn files() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("t", T),
        ("nonl", b"a\nb"),
        ("empty", b""),
        ("x", b"hello world\nfoo bar\n"),
        ("script.sed", b"s/one/ONE/\n# comment\n/five/d\n"),
        ("ins", b"inserted line\n"),
        ("crlf", b"a\r\nb\r\n"),
        ("uni", "caf\u{e9}\n\u{3b1}\u{3b2}\n".as_bytes()),
    ]
}

fn s(args: &[&str]) {
    let mut argv = vec!["sed"];
    argv.extend_from_slice(args);
    check(&argv, b"in1\nin2\nin3\n", &files());
}

#[test]
fn substitution() {
    s(&["s/o/0/", "t"]);
    s(&["s/o/0/g", "t"]);
    s(&["s/o/0/2", "t"]);
    s(&["s/o/0/2g", "t"]);
    s(&["-n", "s/two/2/p", "t"]);
    s(&["s/\\(o\\)\\(n\\)/\\2\\1/", "t"]);
    s(&["-E", "s/(\\w+) (\\w+)/\\2 \\1/", "t"]);
    s(&["s/[aeiou]/<&>/g", "t"]);
    s(&["s/O/x/Ig", "t"]);
    s(&["s|/|_|g", "t"]);
    s(&["s/e*/X/g", "t"]);
    s(&["-E", "s/(\\w)(\\w*)/\\u\\1\\U\\2\\E!/g", "t"]);
    s(&["s/\\w\\+/\\L\\u&/g", "x"]);
    s(&["s/ /\\n/", "t"]);
    s(&["-E", "s/a|ab/X/", "t"]);
    s(&["s/\\(.\\)\\1/DOUBLE/", "t", "x"]);
    s(&["s/x*$/END/", "nonl"]);
    s(&["s/é/E/", "uni"]);
    s(&["-E", "s/(o)|(e)/[\\1\\2]/g", "t"]);
    s(&["s/.*/\"&\"/", "crlf"]);
}

#[test]
fn addresses() {
    s(&["-n", "2p", "t"]);
    s(&["-n", "$p", "t"]);
    s(&["2,4d", "t"]);
    s(&["/three/,/seven/d", "t"]);
    s(&["-n", "/FIVE/Ip", "t"]);
    s(&["-n", "\\%four%p", "t"]);
    s(&["-n", "1~2p", "t"]);
    s(&["-n", "0~2p", "t"]);
    s(&["2,+1d", "t"]);
    s(&["2,~4d", "t"]);
    s(&["0,/o/s//X/", "t"]);
    s(&["1,/o/s//X/", "t"]);
    s(&["2!d", "t"]);
    s(&["/two/,3!d", "t"]);
    s(&["3,1d", "t"]);
    s(&["-n", "$=", "t", "x"]);
    s(&["-s", "-n", "$p", "t", "x"]);
    s(&["-n", "/t/{/f/p}", "t"]);
}

#[test]
fn commands() {
    s(&["-n", "p", "nonl"]);
    s(&["p", "nonl"]);
    s(&["$!N;s/\\n/+/", "t"]);
    s(&["N;P;D", "t"]);
    s(&["$!N;P;D", "nonl"]);
    s(&["1!G;h;$!d", "t"]);
    s(&["-n", "h;n;G;p", "t"]);
    s(&["x;$G", "t"]);
    s(&["2q", "t"]);
    s(&["2q5", "t"]);
    s(&["2Q", "t"]);
    s(&["=", "nonl"]);
    s(&["-n", "l", "crlf"]);
    s(&["-n", "l 5", "t"]);
    s(&["-l", "6", "-n", "l", "t"]);
    s(&["2a\\\nappended", "t"]);
    s(&["2a appended text", "t"]);
    s(&["2i\\  indented", "t"]);
    s(&["2,3c\\\nchanged", "t"]);
    s(&["$a end", "nonl"]);
    s(&["y/abcdefghij/ABCDEFGHIJ/", "t"]);
    s(&["2r ins", "t"]);
    s(&["r missing", "nonl"]);
    s(&["R ins", "t"]);
    s(&[":a;N;$!ba;s/\\n/,/g", "t"]);
    s(&["s/o/0/;ta;s/$/ no/;b;:a;s/$/ yes/", "t"]);
    s(&["s/o/0/;Ta;s/$/ yes/;b;:a;s/$/ no/", "t"]);
    s(&["n;d", "t"]);
    s(&["-n", "$!{h;d};x;G;p", "t"]);
    s(&["z;s/^$/empty/", "nonl"]);
    s(&["F", "nonl"]);
    s(&["-z", "s/\\n/|/g", "t"]);
    s(&["#n\np", "nonl"]);
    s(&["-f", "script.sed", "t"]);
    s(&["-e", "s/one/1/", "-e", "s/two/2/", "t"]);
    s(&["-e", "a\\", "-e", "foo", "nonl"]);
    s(&["p", "-"]);
    s(&["s/in/IN/", "-", "nonl"]);
    s(&["p", "empty"]);
    s(&["-n", "/two/{p;p}", "t"]);
    s(&["2{s/three/3/;s/four/4/}", "t"]);
    s(&["-n", "/o/{p;b};p", "t"]);
    s(&["b end; s/o/0/; :end", "t"]);
    s(&["N;s/[\\n]/+/", "t"]);
    s(&["-n", "/ONE/I,/FIVE/Ip", "t"]);
    s(&["s/\\(o\\|t\\)\\+/<\\1>/g", "t"]);
}

#[test]
fn errors() {
    s(&["k", "t"]);
    s(&["s/a/b", "t"]);
    s(&["s/a/b/q", "t"]);
    s(&["y/ab/c/", "t"]);
    s(&["}", "t"]);
    s(&["{p", "t"]);
    s(&["b nowhere", "t"]);
    s(&["0p", "t"]);
    s(&["p x", "t"]);
    s(&["a", "t"]);
    s(&["p", "missing", "t"]);
    s(&["s/\\(a/b/", "t"]);
    s(&["s/a/\\1/", "t"]);
    s(&["--bogus", "t"]);
    s(&["--sandbox", "r ins", "t"]);
    s(&["--sandbox", "s/o/0/w out", "t"]);
    s(&["--sandbox", "s/o/0/", "t"]);
    s(&["-h", "p", "t"]);
    s(&["0~0p", "t"]);
    s(&["-n", "l 1", "t"]);
    s(&["s/\\w\\+/\\u\\L&X/g", "t"]);
    s(&["c\\", "t"]);
    s(&["$a\\", "t"]);
    s(&[]);
}

#[test]
fn e_is_refused_before_output() {
    use safesh_utils::testing::run_util;
    let dir = tempfile::tempdir().unwrap();
    for script in ["p;e echo hi", "s/x/date/e", "1e ls"] {
        // Decided before running (the policy asks `shell_escape`) …
        assert_eq!(
            safesh_tools_regex::sed::shell_escape(&["-n".to_string(), script.to_string()]),
            Some("sed: e command is not supported in safesh (it would run a shell)".into()),
            "{script}"
        );
        // … and if run anyway, sed interrupts (125 in the test host) before any output.
        let out = run_util(
            safesh_tools_regex::sed::sed,
            &["sed", script],
            b"x\n",
            dir.path(),
            &[],
        );
        assert_eq!(out.status, 125, "{script}");
        assert!(out.stdout.is_empty(), "{script}");
    }
    assert_eq!(
        safesh_tools_regex::sed::shell_escape(&["s/a/e/".to_string()]),
        None
    );
}

#[test]
fn write_files_and_in_place() {
    let f = files();
    check_outputs(&["sed", "-n", "/o/w out", "t"], b"", &f, &["out"]);
    check_outputs(&["sed", "s/o/0/w out2", "t"], b"", &f, &["out2"]);
    check(&["sed", "-i", "s/o/0/", "t", "x"], b"", &f);
    check_outputs(&["sed", "-i.bak", "s/o/0/", "t"], b"", &f, &["t", "t.bak"]);
    check_outputs(&["sed", "-n", "-i", "2p", "t"], b"", &f, &["t"]);
    check(&["sed", "-i", "$d", "nonl"], b"", &f);
    check(&["sed", "-s", "1d", "t", "x"], b"", &f);
    check(&["sed", "-n", "w /dev/stdout", "t"], b"", &f);
}

/// Runs `sed ARGS` on `stdin` (no files).
fn s_in(args: &[&str], stdin: &[u8]) {
    let mut argv = vec!["sed"];
    argv.extend_from_slice(args);
    check(&argv, stdin, &files());
}

const FOUR: &[u8] = b"first\nsecond\nthird\nfourth\n";

#[test]
fn ranges_whose_start_line_was_skipped() {
    // GNU opens a range that starts at line N on the first line at or past N
    // that reaches the command (an earlier `d` may have skipped line N).
    s_in(&["-n", "1d;1,3p"], FOUR);
    s_in(&["-n", "1d;1,/hir/p"], FOUR);
    s_in(&["-n", "2d;2,1p"], FOUR);
    s_in(&["-n", "1,2d;1,+1p"], FOUR);
    s_in(&["-n", "1,2d;2,/x/p"], FOUR);
    s_in(&["-n", "1d;1,3!p"], FOUR);
    for script in [
        "1,2d;1,+2p",
        "1d;1,~2p",
        "1d;1,~4p",
        "1,3d;2,3p",
        "1,3d;2,4p",
        "2d;2,$p",
        "1,2d;2,/ourth/p",
    ] {
        s_in(&["-n", script], b"first\nsecond\nthird\nfourth\nfifth\n");
    }
    s_in(&["-n", "1{N;N;d};1p;2,3p;3p;4p"], b"1\n2\n3\n4\n");
    s_in(&["-n", "1,5d;1,/hir/p", "-", "t"], FOUR);
    s_in(&["-s", "-n", "1d;1,2p", "-", "t"], FOUR);
    // Benign neighbours: a plain line address and a range never skipped.
    s_in(&["-n", "1d;1p"], FOUR);
    s_in(&["-n", "2,3p;2,3p"], FOUR);
    s_in(&["-n", "/second/d;/second/,/third/p"], FOUR);
}

#[test]
fn text_commands_with_escapes() {
    s_in(&["a a\\tb\\nc\\rd"], b"x\n");
    s_in(&["i\\\na\\tb\\nc"], b"x\n");
    s_in(&["a\\  lead\\\\back\\qz"], b"x\n");
    s_in(&["-e", "a\\", "-e", "foo\\tbar"], b"x\n");
    s_in(&["c\\\nx\\ty"], b"1\n2\n");
    s_in(&["1i\\\\tlead"], b"x\n");
    s_in(&["$a end\\"], b"x\n");
}

#[test]
fn delimiter_characters_escaped_in_the_replacement() {
    s_in(&["s@o@\\@@g"], b"one@two\n");
    s_in(&["s.\\..X."], b"a.b\n");
    s_in(&["s|b|\\||"], b"abc\n");
    s_in(&["s,b,\\,,"], b"abc\n");
    s_in(&["s&b&[\\&]&"], b"abc\n");
    s_in(&["sxbx\\xx"], b"abc\n");
    s_in(&["s1\\11X1"], b"a1c\n");
    s_in(&["snanXn"], b"anc\n");
    s_in(&["N;sn\\nnXn"], b"a\nc\n");
    s_in(&["s*b*\\**"], b"abc\n");
    s_in(&["s^b^\\^^"], b"abc\n");
    s_in(&["s$b$\\$$"], b"abc\n");
    s_in(&["s[b[\\[["], b"abc\n");
    s_in(&["s/b/\\//"], b"abc\n");
    s_in(&["s|\\(b\\)|<\\1\\|>|"], b"abc\n");
}

#[test]
fn null_data_separates_lines_inside_the_buffers() {
    // Under -z the NUL joins and splits what N, G, H, D, P and W handle, and
    // ends `l` output; a newline in the data is ordinary text.
    for script in [
        "N",
        "N;P",
        "N;D",
        "h;G",
        "H;g",
        "H;x",
        "$!N;P;D",
        "N;l",
        "=",
        "F",
        "N;s/\\n/+/",
    ] {
        s_in(&["-z", script], b"one\0two\nsix\0three\0");
        s_in(&["-z", script], b"one\0two");
    }
    s_in(&["-zn", "N;l"], b"a\0b\tc\n");
    s_in(&["-z", "-n", "N;W /dev/stdout"], b"a\0b\0c\0");
}

#[test]
fn text_ending_the_script() {
    // `a\` at the very end adds nothing; `a\` then a lone `\` is an empty line.
    for script in [
        "a\\",
        "a\\\\",
        "i\\\\",
        "c\\\\",
        "$a\\",
        "1a\\\\",
        "a foo\\",
        "a foo\\\\",
    ] {
        s_in(&[script], b"x\ny\n");
    }
    s_in(&["-e", "a\\", "-e", "\\"], b"x\n");
    s_in(&["-e", "c\\", "-e", "two\\", "-e", ""], b"hello");
}
