use crate::{dir_with, same_in};

fn pair(a: &[u8], b: &[u8], opts: &[&str]) {
    let d = dir_with(&[("a", a), ("b", b)]);
    let mut argv = vec!["diff"];
    argv.extend_from_slice(opts);
    argv.extend_from_slice(&["a", "b"]);
    same_in(d.path(), &argv, b"");
}

fn all_styles(a: &[u8], b: &[u8]) {
    for opts in [
        &[][..],
        &["-u"],
        &["-c"],
        &["-U", "1"],
        &["-U0"],
        &["-C", "2"],
    ] {
        pair(a, b, opts);
    }
}

#[test]
fn identical_and_empty() {
    all_styles(b"x\ny\n", b"x\ny\n");
    all_styles(b"", b"");
    all_styles(b"", b"a\nb\n");
    all_styles(b"a\nb\n", b"");
    pair(b"x\n", b"x\n", &["-s"]);
}

#[test]
fn simple_edits() {
    all_styles(b"a\nb\nc\n", b"a\nB\nc\n");
    all_styles(b"a\nb\nc\n", b"a\nc\n");
    all_styles(b"a\nc\n", b"a\nb\nc\n");
    all_styles(
        b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n",
        b"1\n2\nx\n4\n5\n6\n7\n8\n9\n10\n11\ny\n13\n14\n15\n",
    );
    all_styles(
        b"1\n2\n3\n4\n5\n6\n7\n8\n9\n",
        b"0\n1\n2\n3\n5\n6\n7\n8\n9\nz\n",
    );
    all_styles(b"a\nb\nc\nd\ne\nf\ng\nh\n", b"a\nb\nc\nX\ne\nf\ng\nY\n");
}

#[test]
fn no_newline_at_end() {
    all_styles(b"a\nb", b"a\nb\n");
    all_styles(b"a\nb\n", b"a\nb");
    all_styles(b"a\nb", b"a\nc");
    all_styles(b"x", b"y");
    all_styles(b"a\nb", b"z\na\nb");
}

#[test]
fn duplicates_and_shifts() {
    all_styles(b"a\nb\na\nb\n", b"a\nb\na\nb\na\nb\n");
    all_styles(b"x\na\na\na\ny\n", b"x\na\na\ny\n");
    all_styles(b"{\n}\n{\n}\n", b"{\n}\n{\nfoo\n}\n{\n}\n");
    all_styles(b"a\n\nb\n\nc\n", b"a\n\nb\n\nx\n\nc\n");
    all_styles(b"1\n2\n3\n1\n2\n3\n", b"3\n2\n1\n3\n2\n1\n");
}

#[test]
fn ignore_options() {
    let a = b"Hello World\nfoo  bar\n  x\n\nend\n";
    let b = b"hello world\nfoo bar \nx\nend\n\n";
    for opts in [
        &["-i"][..],
        &["-w"],
        &["-b"],
        &["-B"],
        &["-iw"],
        &["-bB"],
        &["-wB", "-u"],
        &["--ignore-case", "--ignore-all-space"],
    ] {
        pair(a, b, opts);
    }
    pair(b"a\n\n\nb\n", b"a\nb\n", &["-B"]);
    pair(b"a\n\nb\nc\n", b"a\nb\nd\n", &["-B", "-u"]);
    pair(b"a\n \nb\n", b"a\nb\n", &["-B", "-w"]);
    for opts in [&["-T"][..], &["-T", "-u"], &["--initial-tab", "-c"]] {
        pair(b"a\nb\nc\nd", b"a\nB\nc\ne", opts);
    }
}

#[test]
fn brief_binary_text() {
    pair(b"a\n", b"b\n", &["-q"]);
    pair(b"a\n", b"a\n", &["-q"]);
    pair(b"a\0b\n", b"a\0c\n", &[]);
    pair(b"a\0b\n", b"a\0c\n", &["-q"]);
    pair(b"a\0b\n", b"a\0c\n", &["-a"]);
    pair(b"a\0b\n", b"a\0b\n", &[]);
    pair(b"A\n", b"a\n", &["--brief", "-i"]);
}

#[test]
fn labels_and_stdin() {
    pair(b"a\n", b"b\n", &["-u", "-L", "old", "-L", "new"]);
    pair(b"a\n", b"b\n", &["-c", "--label=x", "--label", "y"]);
    let d = dir_with(&[("a", b"1\n2\n3\n")]);
    same_in(d.path(), &["diff", "a", "-"], b"1\n3\n");
    same_in(d.path(), &["diff", "-", "a"], b"1\n3\n");
    same_in(d.path(), &["diff", "-", "-"], b"1\n3\n");
    same_in(d.path(), &["diff", "-s", "-", "-"], b"1\n");
    same_in(
        d.path(),
        &["diff", "-u", "-L", "x", "-L", "y", "-", "a"],
        b"0\n1\n2\n",
    );
}

#[test]
fn errors() {
    let d = dir_with(&[("a", b"1\n"), ("dir/a", b"2\n")]);
    for args in [
        &["diff", "a", "missing"][..],
        &["diff", "missing", "a"],
        &["diff", "-N", "missing", "a"],
        &["diff", "-N", "a", "missing"],
        &["diff", "a"],
        &["diff"],
        &["diff", "a", "a", "a"],
        &["diff", "--bogus", "a", "a"],
        &["diff", "-U", "x", "a", "a"],
        &["diff", "a", "dir"],
        &["diff", "dir", "a"],
        &["diff", "-", "dir"],
    ] {
        same_in(d.path(), args, b"");
    }
}

fn tree() -> tempfile::TempDir {
    dir_with(&[
        ("a/f", b"1\n"),
        ("b/f", b"2\n"),
        ("a/s", b"same\n"),
        ("b/s", b"same\n"),
        ("a/sub/x", b"x\n"),
        ("b/sub/x", b"y\n"),
        ("a/sub/deep/z", b"z1\n"),
        ("b/sub/deep/z", b"z2\n"),
        ("a/onlya", b"o\n"),
        ("b/onlyb", b"o\n"),
        ("a/bin", b"\0"),
        ("b/bin", b"\x01\0"),
        ("a/fd", b""),
        ("b/fd/inner", b"i\n"),
        ("a/sub2/k", b"k\n"),
        ("b/sub2", b"q\n"),
        ("a/onlyd/m", b"m\n"),
        ("a/skip.o", b"1\n"),
        ("b/skip.o", b"2\n"),
    ])
}

#[test]
fn directories() {
    let d = tree();
    for opts in [
        &[][..],
        &["-r"],
        &["-ru"],
        &["-r", "-u"],
        &["-rq"],
        &["-rN"],
        &["-r", "-c"],
        &["-r", "-x", "*.o"],
        &["--recursive", "--brief", "--new-file"],
        &["-rs"],
        &["-N"],
        &["-Nq"],
    ] {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(opts);
        argv.extend_from_slice(&["a", "b"]);
        same_in(d.path(), &argv, b"");
    }
    same_in(d.path(), &["diff", "a/sub", "b/sub"], b"");
    same_in(d.path(), &["diff", "-r", "a/sub/", "b/sub/"], b"");
    same_in(d.path(), &["diff", "a/f", "b"], b"");
}

/// Fifos (and other non-regular files) met inside directories are never
/// opened: GNU names their kinds, or lists them as `Only in` even under `-N`.
#[test]
fn special_files_in_directories() {
    let d = dir_with(&[
        ("a/f", b"1\n"),
        ("a/s", b"same\n"),
        ("b/s", b"same\n"),
        ("a/d/x", b"x\n"),
        ("b/e", b""),
        ("c/g", b"g\n"),
    ]);
    for p in ["b/f", "a/p", "b/p", "b/d", "a/onlyfifo", "a/e", "d/g"] {
        std::fs::create_dir_all(d.path().join(p).parent().unwrap()).unwrap();
        let st = std::process::Command::new("mkfifo")
            .arg(d.path().join(p))
            .status()
            .unwrap();
        assert!(st.success());
    }
    std::os::unix::fs::symlink("p", d.path().join("b/linkp")).unwrap();
    std::os::unix::fs::symlink("s", d.path().join("a/linkp")).unwrap();
    for opts in [&["-r"][..], &["-rN"], &["-ru"], &["-rq"], &[]] {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(opts);
        argv.extend_from_slice(&["a", "b"]);
        same_in(d.path(), &argv, b"");
    }
    same_in(d.path(), &["diff", "-rN", "c", "d"], b"");
    same_in(d.path(), &["diff", "-rN", "d", "c"], b"");
}

/// ed (`-e`, `-f`) and RCS (`-n`) scripts, `-I`, `-t`, `--strip-trailing-cr`.
#[test]
fn scripts_and_line_filters() {
    let d = dir_with(&[
        ("a", b"one\ntwo\nthree\nfour\nfive\nsix\n"),
        ("b", b"zero\none\nTWO\nthree\nfive\nsix\nseven\n.\neight\n"),
        ("dots", b".\nx\n.\n"),
        ("noeol", b"one\ntwo"),
        ("c1", b"keep\n# stamp 1\nbody\n\n"),
        ("c2", b"keep\n# stamp 2\nbody\n"),
        ("c3", b"keep\n# stamp 3\nBODY\n"),
        ("crlf", b"one\r\ntwo\r\nthree\n"),
        ("t1", b"\tx\ty\nab\tc\n\x08\tz\nq\x08\tw\n"),
        ("t2", b"        x       y\nab\tc\n"),
    ]);
    for args in [
        &["-e", "a", "b"][..],
        &["-f", "a", "b"],
        &["-n", "a", "b"],
        &["--ed", "b", "a"],
        &["--rcs", "b", "a"],
        &["-e", "a", "dots"],
        &["-f", "a", "dots"],
        &["-n", "dots", "a"],
        &["-e", "a", "noeol"],
        &["-n", "a", "noeol"],
        &["-e", "a", "a"],
        &["-I", "^# stamp", "c1", "c2"],
        &["-I", "^# stamp", "c1", "c3"],
        &["-B", "-I", "stamp [0-9]", "c1", "c2"],
        &["-u", "-I", "^#", "-I", "^BODY", "c2", "c3"],
        &["--ignore-matching-lines=x\\{2\\}", "c1", "c2"],
        &["--strip-trailing-cr", "crlf", "a"],
        &["--strip-trailing-cr", "-u", "crlf", "a"],
        &["-t", "t1", "t2"],
        &["-t", "-T", "t1", "t2"],
        &["--expand-tabs", "-u", "t1", "t2"],
        &["-t", "-c", "t2", "t1"],
        &["-e", "-u", "a", "b"],
    ] {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

/// Line and group formats (GNU's if-then-else output) and `-F RE`.
#[test]
fn formats_and_function_lines() {
    let d = dir_with(&[
        ("a", b"1\n2\n3\n4\n5\n6\n"),
        ("b", b"1\nX\n3\n5\n6\n7\n8"),
        ("c", b"int f() {\n  a;\n}\n\nint g() {\n  b;\n  c;\n}\n"),
        ("e", b"int f() {\n  A;\n}\n\nint g() {\n  b;\n  C;\n}\n"),
    ]);
    for args in [
        &["--line-format=%L", "a", "b"][..],
        &["--line-format=[%l]", "a", "a"],
        &[
            "--old-line-format=-%l\n",
            "--new-line-format=+%l\n",
            "--unchanged-line-format=",
            "a",
            "b",
        ],
        &[
            "--unchanged-line-format=U%dn:%L",
            "--old-line-format=D%3dn %l|",
            "--new-line-format=A%-4xn%L",
            "a",
            "b",
        ],
        &["--new-line-format=%c'\\101'%c':'%l%%%c'\\n'%c'x'", "a", "b"],
        &[
            "--old-group-format=<%dn %df-%dl %de %dm>",
            "--new-group-format=[%dN %dF-%dL %dE %dM]",
            "--changed-group-format={%<|%>}",
            "--unchanged-group-format=(%=)",
            "a",
            "b",
        ],
        &[
            "--changed-group-format=%df,%dl%%%02XL:%>",
            "--unchanged-group-format=",
            "a",
            "b",
        ],
        &["--old-group-format=%<", "a", "b"],
        &["-F", "^int", "-U1", "c", "e"],
        &["--show-function-line=^int g", "-u", "c", "e"],
        &["-p", "-c", "c", "e"],
    ] {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

/// `-y`: columns, gutter marks, widths, tabs, odd characters, `-t`,
/// `--suppress-common-lines`, missing newlines.
#[test]
fn side_by_side() {
    let d = dir_with(&[
        ("a", b"alpha\nbeta\ngamma\ndelta\nepsilon\n"),
        ("b", b"alpha\nBETA\ngamma\nepsilon\nzeta\neta\n"),
        ("t1", b"one\ttab\there\na line long enough to be cut at the column width of sixty-one\nshort\n"),
        ("t2", b"one tab here\na line long enough to be cut at the column width of sixty-one\nlonger line here\nextra\n"),
        ("c1", b"a\x01b\tc\r\nz\x08q\x0c\n\0x\n\xc3\xa9t\xe9\tx\n"),
        ("c2", b"q\n"),
        ("n1", b"a\nb"),
        ("n2", b"a\nc"),
        ("n3", b"a\nc\n"),
        ("e", b""),
        ("bl1", b"a\n\nb\n"),
        ("bl2", b"a\nb\n"),
    ]);
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["-y", "a", "b"],
        vec!["--side-by-side", "--width=50", "a", "b"],
        vec!["-y", "--suppress-common-lines", "a", "b"],
        vec!["-y", "t1", "t2"],
        vec!["-y", "-t", "t1", "t2"],
        vec!["-y", "-t", "-W", "47", "t1", "t2"],
        vec!["-y", "-W", "30", "c1", "c2"],
        vec!["-y", "n1", "n2"],
        vec!["-y", "n1", "n3"],
        vec!["-y", "n3", "n1"],
        vec!["-y", "a", "a"],
        vec!["-y", "e", "a"],
        vec!["-y", "a", "e"],
        vec!["-y", "-B", "bl1", "bl2"],
        vec!["-y", "-W", "0", "a", "b"],
    ];
    let widths: Vec<String> = (1..=26).map(|w| w.to_string()).collect();
    for w in &widths {
        cases.push(vec!["-y", "-W", w, "t1", "t2"]);
    }
    for args in &cases {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

#[test]
fn from_file_and_to_file() {
    let d = dir_with(&[
        ("x", b"a\n"),
        ("y", b"b\n"),
        ("z", b"a\n"),
        ("dd/y", b"a\n"),
    ]);
    for args in [
        &["--from-file=x", "y", "z"][..],
        &["--to-file=x", "y", "z"],
        &["--from-file=x"],
        &["--from-file=x", "--to-file=y"],
        &["-u", "--label", "L", "--from-file", "x", "y"],
        &["--from-file=dd", "y"],
        &["--to-file", "y", "x", "dd"],
    ] {
        let mut argv = vec!["diff"];
        argv.extend_from_slice(args);
        same_in(d.path(), &argv, b"");
    }
}

/// Deterministic pseudo-random edits: hunks must line up exactly with GNU's.
#[test]
fn random_edits_match_gnu() {
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let d = tempfile::tempdir().unwrap();
    for round in 0..80 {
        let alphabet = 2 + rnd(if round % 2 == 0 { 6 } else { 60 });
        let len = rnd(if round % 10 == 0 { 600 } else { 40 }) as usize;
        let a: Vec<u64> = (0..len).map(|_| rnd(alphabet)).collect();
        let mut b = Vec::new();
        for &x in &a {
            match rnd(6) {
                0 => {}
                1 => {
                    b.push(x);
                    b.push(rnd(alphabet));
                }
                2 => b.push(rnd(alphabet)),
                _ => b.push(x),
            }
        }
        let text = |v: &[u64]| v.iter().map(|x| format!("line{x}\n")).collect::<String>();
        std::fs::write(d.path().join("a"), text(&a)).unwrap();
        std::fs::write(d.path().join("b"), text(&b)).unwrap();
        let opts: &[&str] = match round % 3 {
            0 => &[],
            1 => &["-u"],
            _ => &["-c", "-C", "1"],
        };
        let mut argv = vec!["diff"];
        argv.extend_from_slice(opts);
        argv.extend_from_slice(&["a", "b"]);
        same_in(d.path(), &argv, b"");
    }
}

#[test]
fn larger_file_with_many_changes() {
    let a: String = (0..400).map(|i| format!("row {}\n", i % 37)).collect();
    let b: String = (0..420)
        .map(|i| {
            if i % 11 == 0 {
                format!("new {i}\n")
            } else {
                format!("row {}\n", (i * 3) % 37)
            }
        })
        .collect();
    all_styles(a.as_bytes(), b.as_bytes());
}

/// Random edits where lines differ only in case or white space, under -i/-w/-b/-B.
#[test]
fn random_ignore_options_match_gnu() {
    let mut seed: u64 = 0x2545f4914f6cdd1d;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let variants = [
        "x y", "X y", "x  y", " x y", "x y ", "", "  ", "z", "Z", "x\ty",
    ];
    let d = tempfile::tempdir().unwrap();
    let opt_sets: [&[&str]; 6] = [
        &["-i"],
        &["-w"],
        &["-b"],
        &["-B"],
        &["-iwB", "-u"],
        &["-bB", "-c"],
    ];
    for round in 0..60 {
        let len = rnd(30) as usize;
        let mk = |r: &mut dyn FnMut(u64) -> u64| {
            (0..len)
                .map(|_| format!("{}\n", variants[r(variants.len() as u64) as usize]))
                .collect::<String>()
        };
        let a = mk(&mut rnd);
        let b = mk(&mut rnd);
        std::fs::write(d.path().join("a"), &a).unwrap();
        std::fs::write(d.path().join("b"), &b).unwrap();
        let mut argv = vec!["diff"];
        argv.extend_from_slice(opt_sets[round % opt_sets.len()]);
        argv.extend_from_slice(&["a", "b"]);
        same_in(d.path(), &argv, b"");
    }
}

#[test]
fn show_c_function() {
    let a = "#include <x.h>\n\nint main(void)\n{\n  int a = 1;\n  int b = 2;\n  int c = 3;\n  return a;\n}\n\nstatic void helper_function_with_a_very_long_name_indeed(int x)\n{\n  x++;\n  x++;\n  x++;\n  x++;\n  x++;\n}\n";
    let b = a
        .replace("int b = 2;", "int b = 5;")
        .replace("  x++;\n  x++;\n}", "  x--;\n  x++;\n}");
    for opts in [
        &["-p", "-u"][..],
        &["-p", "-c"],
        &["-up", "-U1"],
        &["--show-c-function", "-U", "0"],
    ] {
        pair(a.as_bytes(), b.as_bytes(), opts);
    }
}

/// A 20k-line file with scattered edits and a block move: fast and identical.
#[test]
fn big_file_with_moves() {
    let a: String = (0..20_000)
        .map(|i| format!("line {i} {}\n", i % 97))
        .collect();
    let mut lines: Vec<String> = a.lines().map(|l| l.to_string()).collect();
    for i in (0..lines.len()).step_by(997) {
        lines[i] = format!("changed {i}");
    }
    let moved: Vec<String> = lines.drain(5000..5300).collect();
    lines.splice(15000..15000, moved);
    let b: String = lines.iter().map(|l| format!("{l}\n")).collect();
    pair(a.as_bytes(), b.as_bytes(), &[]);
    pair(a.as_bytes(), b.as_bytes(), &["-u"]);
}

/// Writes `data` into the fifo at `path` for its reader, retrying until
/// `done` is set. The writer polls with O_NONBLOCK (ENXIO while nobody reads),
/// so a diff that never opens the fifo leaves no thread blocked. A reader can
/// also be a stranger: a child another test forked copies every descriptor
/// until its exec closes them, and one copied while a diff had the fifo open
/// made the feeder write into a fifo nobody would read (the real diff then
/// waited for a writer forever). So the feeder keeps its end open until the
/// data is read (`FIONREAD` 0) and starts over when the readers vanish first.
fn feed_fifo(
    path: std::path::PathBuf,
    data: &'static [u8],
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let pause = || std::thread::sleep(std::time::Duration::from_millis(2));
    std::thread::spawn(move || {
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let Ok(mut f) = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
            else {
                pause();
                continue;
            };
            if f.write_all(data).is_err() {
                continue;
            }
            loop {
                let mut unread: libc::c_int = 0;
                // SAFETY: FIONREAD writes one int; the descriptor is ours.
                let r = unsafe { libc::ioctl(f.as_raw_fd(), libc::FIONREAD, &mut unread) };
                if r == 0 && unread == 0 {
                    // Read: closing `f` gives the reader its end of file.
                    return;
                }
                let mut p = libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: 0,
                    revents: 0,
                };
                // SAFETY: one pollfd of ours, no wait.
                unsafe { libc::poll(&mut p, 1, 0) };
                if p.revents & libc::POLLERR != 0 || done.load(std::sync::atomic::Ordering::SeqCst)
                {
                    // Every reader left without reading: serve the next one.
                    break;
                }
                pause();
            }
        }
    })
}

/// Runs `run` while a feeder writes `data` into the fifo, then stops the feeder.
fn with_fed_fifo<T>(path: &std::path::Path, data: &'static [u8], run: impl FnOnce() -> T) -> T {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let w = feed_fifo(path.to_path_buf(), data, done.clone());
    let out = run();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    w.join().unwrap();
    out
}

#[test]
fn fifo_operands() {
    use safesh_utils::testing::{run_real, run_util};
    for (argv, data) in [
        (&["diff", "ff", "g"][..], &b"a\nb\n"[..]),
        (&["diff", "g", "ff"], b"a\nb\n"),
        (&["diff", "ff", "g"], b"a\nc\n"),
        (&["diff", "-q", "ff", "g"], b"x\n"),
        (&["diff", "-", "ff"], b"a\nc\n"),
    ] {
        let d = dir_with(&[("g", b"a\nc\n")]);
        let fifo = d.path().join("ff");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let ours = with_fed_fifo(&fifo, data, || {
            run_util(crate::util("diff"), argv, b"a\nb\n", d.path(), &[])
        });
        let real = with_fed_fifo(&fifo, data, || run_real(argv, b"a\nb\n", d.path()));
        assert_eq!(
            (String::from_utf8_lossy(&ours.stdout), ours.status),
            (String::from_utf8_lossy(&real.stdout), real.status),
            "argv {argv:?}\nour stderr: {}\nreal stderr: {}",
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&real.stderr),
        );
    }
}
