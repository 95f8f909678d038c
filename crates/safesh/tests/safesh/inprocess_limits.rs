//! Issue 15 item 12: `[limits]` bind in-process work. `file_size_mb` stops
//! redirections, utilities' files and builtins' loops at the cap with
//! `LIMIT_EXCEEDED` (what was written stays bounded); `sort` spills sorted runs
//! to disk past its memory budget (a tiny `-S`, or a low `memory_mb`) and its
//! output is GNU sort's; the timeout stops in-process loops with `TIMEOUT`.
//! Every limit here is low (1 MB files, KB sort budgets): nothing aims at the
//! machine.

use crate::policy_support::{ACCEPTANCE_CONFIG, Project, Run};
use std::process::Command;

const MIB: u64 = 1 << 20;

fn capped() -> Project {
    Project::with_extra("[limits]\nfile_size_mb = 1")
}

/// The script stopped with `code` (and its status), saying which limit.
fn assert_stopped(r: &Run, code: &str, status: i32) {
    assert!(!r.timed_out, "not stopped:\n{}", r.dump());
    assert_eq!(r.stderr_code().as_deref(), Some(code), "{}", r.dump());
    assert_eq!(r.status, status, "{}", r.dump());
}

fn size(p: &Project, rel: &str) -> u64 {
    std::fs::metadata(p.path(rel)).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn head_of_dev_zero_into_a_file_stops_at_file_size_mb() {
    let p = capped();
    let r = p.run("head -c 200000000 /dev/zero > f; touch after");
    assert_stopped(&r, "LIMIT_EXCEEDED", 125);
    assert!(r.stderr.contains("file_size_mb"), "{}", r.dump());
    assert!(size(&p, "f") <= MIB, "f is {} bytes", size(&p, "f"));
    p.assert_absent("after", &r);
    // Benign: under the cap.
    let r = p.run("head -c 500000 /dev/zero > g; wc -c < g");
    r.assert_ok_with("500000\n");
}

#[test]
fn yes_into_a_file_stops_at_the_cap() {
    let p = capped();
    let r = p.run("yes > big.txt");
    assert_stopped(&r, "LIMIT_EXCEEDED", 125);
    assert_eq!(size(&p, "big.txt"), MIB);
    let r = p.run("yes | head -n 3 > small.txt; cat small.txt");
    r.assert_ok_with("y\ny\ny\n");
}

#[test]
fn a_builtin_loop_appending_stops_at_the_cap() {
    let p = capped();
    let r = p.run("while true; do echo 0123456789abcdef0123456789abcdef; done >> loop.txt");
    assert_stopped(&r, "LIMIT_EXCEEDED", 125);
    assert!(size(&p, "loop.txt") <= MIB);
}

#[test]
fn utilities_writing_files_stop_at_the_cap() {
    let p = capped();
    p.write("two-mb.bin", &"z".repeat(2 * MIB as usize));
    for (script, file) in [
        ("head -c 3000000 /dev/zero | tee t.txt >/dev/null", "t.txt"),
        ("cp two-mb.bin copy.bin", "copy.bin"),
        ("sort -o sorted.txt two-mb.bin", "sorted.txt"),
        ("awk '{ print > \"awk.txt\" }' two-mb.bin", "awk.txt"),
    ] {
        let r = p.run(script);
        assert_stopped(&r, "LIMIT_EXCEEDED", 125);
        assert!(size(&p, file) <= MIB, "{file}: {} bytes", size(&p, file));
    }
    // Benign: the same utilities under the cap.
    p.write("small.txt", "b\na\n");
    let r = p.run(
        "cp small.txt c.txt; sort -o s.txt small.txt; tee t2.txt < small.txt >/dev/null; cat s.txt",
    );
    r.assert_ok_with("a\nb\n");
}

/// A few thousand lines whose order exercises keys, ties, case and numbers.
fn sort_input() -> String {
    let words = [
        "alpha", "beta", "Gamma", "10", "9", "-3", "1e3", "b a", "  x", " z", "apple", "Apple", "",
    ];
    let mut s = String::new();
    let mut x: u64 = 12345;
    for _ in 0..3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = 1 + (x >> 60) % 3;
        let line: Vec<&str> = (0..n)
            .map(|k| words[((x >> (8 * k + 8)) % words.len() as u64) as usize])
            .collect();
        s.push_str(&line.join(" "));
        s.push('\n');
    }
    s
}

fn gnu_sort(p: &Project, args: &[&str]) -> String {
    let out = Command::new("sort")
        .args(args)
        .arg(p.path("in.txt"))
        .env("LC_ALL", "C")
        .output()
        .expect("GNU sort");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SORT_OPTIONS: &[&[&str]] = &[
    &[],
    &["-n"],
    &["-r"],
    &["-u"],
    &["-k2"],
    &["-s", "-k1,1"],
    &["-f", "-u"],
    &["-g"],
];

#[test]
fn sort_spills_past_a_tiny_buffer_and_matches_gnu_sort() {
    let p = Project::new();
    p.write("in.txt", &sort_input());
    for opts in SORT_OPTIONS {
        let script = format!("sort -S 2k {} in.txt", opts.join(" "));
        let r = p.run(&script);
        r.assert_ok();
        assert_eq!(r.stdout, gnu_sort(&p, opts), "sort {opts:?} spilled");
    }
    // The runs were unnamed files: nothing is left in the spill dir.
    let spill = p.home.join(".local/state/safesh/spill");
    assert!(spill.is_dir(), "sort did not spill to {}", spill.display());
    let left = std::fs::read_dir(&spill).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "spill files left in {}", spill.display());
}

#[test]
fn sort_spills_under_a_low_memory_mb_and_matches_gnu_sort() {
    // 1 MB of memory_mb: a budget of a quarter of it, below this input's cost.
    let p = Project::with_config(&format!("{ACCEPTANCE_CONFIG}\n[limits]\nmemory_mb = 1\n"));
    let mut input = String::new();
    for _ in 0..4 {
        input.push_str(&sort_input());
    }
    p.write("in.txt", &input);
    for opts in [&["-n"][..], &["-u"], &[]] {
        let r = p.run(&format!("sort {} in.txt", opts.join(" ")));
        r.assert_ok();
        assert_eq!(
            r.stdout,
            gnu_sort(&p, opts),
            "sort {opts:?} under memory_mb"
        );
    }
}

#[test]
fn timeout_stops_in_process_sort_yes_cat_and_head() {
    // A low memory budget: sort spills a little instead of holding much.
    let p = Project::with_config(&format!("{ACCEPTANCE_CONFIG}\n[limits]\nmemory_mb = 8\n"));
    for script in [
        "seq 1 100000000 | sort -n | tail -n 1",
        "yes > /dev/null",
        "cat /dev/zero > /dev/null",
        // 100 TB: reading /dev/zero runs at tens of GB/s, so a smaller count
        // could end before the deadline on a fast machine.
        "head -c 100000000000000 /dev/zero > /dev/null",
    ] {
        let r = p.run_args(&["--timeout-ms", "1500", "-c", script]);
        assert_stopped(&r, "TIMEOUT", 124);
    }
}

#[test]
fn sort_check_streams_and_stops_at_the_first_disorder_like_gnu() {
    let p = Project::new();
    // Out of order at line 10 ("9" > "10"): read no further than GNU sort does,
    // holding two lines, whatever the input's length.
    let r = p.run("seq 1 100000000 | sort -c");
    assert_eq!(r.status, 1, "{}", r.dump());
    assert_eq!(r.stderr, "sort: -:10: disorder: 10\n", "{}", r.dump());
    p.write("in.txt", &sort_input());
    for opts in [&["-c"][..], &["-c", "-u"], &["-C"], &["-c", "-n"]] {
        let r = p.run(&format!("sort {} in.txt", opts.join(" ")));
        let gnu = Command::new("sort")
            .args(opts)
            .arg(p.path("in.txt"))
            .env("LC_ALL", "C")
            .output()
            .expect("GNU sort");
        assert_eq!(r.status, gnu.status.code().unwrap_or(-1), "{}", r.dump());
        let gnu_err = String::from_utf8_lossy(&gnu.stderr)
            .replace(&p.path("in.txt").display().to_string(), "in.txt");
        assert_eq!(r.stderr, gnu_err, "sort {opts:?}");
    }
    // Benign: sorted input passes.
    let r = p.run("seq 1 1000 | sort -n -c");
    r.assert_ok();
}

/// Issue 15 (harden item 5): `tac` and `jq` hold all their input in memory;
/// past their share of `memory_mb` (a quarter: 1 MiB of 4 here) they stop with
/// `LIMIT_EXCEEDED` (rule `memory_mb`) instead of growing without bound. Benign
/// neighbours of the same shape under the budget give tac's and jq's answers.
#[test]
fn tac_and_jq_stop_at_their_memory_budget() {
    let p = Project::with_extra("[limits]\nmemory_mb = 4");
    for script in [
        "seq 1 400000 | tac | head -n 1",
        "seq 1 400000 | jq -s length",
        "seq 1 400000 > nums.txt; jq -s length nums.txt",
    ] {
        let r = p.run(script);
        assert_stopped(&r, "LIMIT_EXCEEDED", 125);
        assert!(r.stderr.contains("memory_mb"), "{script}: {}", r.dump());
    }
    p.run("seq 1 1000 | tac | head -n 2")
        .assert_ok_with("1000\n999\n");
    p.run("seq 1 1000 | jq -s length").assert_ok_with("1000\n");
}

/// Issue 15 (harden, memory): awk's arrays, one string it builds (concatenation,
/// `gsub`) and one input record are bound by its share of `memory_mb` (a
/// quarter: 1 MiB of 4 here) with `LIMIT_EXCEEDED` (rule `memory_mb`), not by
/// the worker's address space. Benign neighbours: a small array, an element
/// set and deleted per record (released bytes are counted back), `split` into
/// one array per record.
#[test]
fn awk_stops_at_its_memory_budget() {
    let p = Project::with_extra("[limits]\nmemory_mb = 4");
    for script in [
        "seq 1 200000 | awk '{a[NR]=$0} END{print length(a)}'",
        "awk 'BEGIN{s=\"x\"; while (1) s = s s}'",
        "awk 'BEGIN{s=\"xxxxxxxx\"; while (1) gsub(/x/, \"xx\", s)}'",
        "head -c 3000000 /dev/zero | awk '{n++} END{print n}'",
        "awk 'function f(n,  loc) { while (1) loc[n++] = n } BEGIN{f(1)}'",
    ] {
        let r = p.run(script);
        assert_stopped(&r, "LIMIT_EXCEEDED", 125);
        assert!(r.stderr.contains("memory_mb"), "{script}: {}", r.dump());
    }
    p.run("seq 1 1000 | awk '{a[NR]=$0} END{print length(a)}'")
        .assert_ok_with("1000\n");
    p.run("seq 1 100000 | awk '{a[1]=$0; delete a[1]; b[1]=$0} END{print b[1]}'")
        .assert_ok_with("100000\n");
    p.run("seq 1 20000 | awk '{n += split($0, parts, \"\")} END{print n}'")
        .assert_ok_with("88894\n");
}

/// `jq . FILE` asks the file's size before reading it (a sparse 1 GiB file is
/// refused without being read) and stops reading an endless one at the budget.
#[test]
fn jq_checks_a_named_file_before_reading_it_whole() {
    let p = Project::with_extra("[limits]\nmemory_mb = 4");
    let big = std::fs::File::create(p.path("sparse.json")).expect("create");
    big.set_len(1 << 30).expect("sparse");
    for script in [
        "jq . sparse.json",
        "jq . /dev/zero",
        "jq --rawfile x sparse.json -n 1",
    ] {
        let r = p.run(script);
        assert!(!r.timed_out, "{}", r.dump());
        assert!(
            r.stderr.contains("memory_mb") || r.stderr.contains("holding more than"),
            "{script}: {}",
            r.dump()
        );
        assert_ne!(r.status, 0, "{}", r.dump());
    }
    p.write("small.json", "{\"a\": [1, 2]}\n");
    p.run("jq -c .a small.json").assert_ok_with("[1,2]\n");
}

/// The other in-process utilities that hold input: sed's pattern and hold
/// spaces (`H`, `G`, `N`), `tail` of a stream (its last N lines or bytes) and
/// `diff -` (stdin read whole) stop at the same budget. Benign neighbours of
/// the same shape that hold little keep working.
#[test]
fn sed_tail_and_diff_stop_at_their_memory_budget() {
    let p = Project::with_extra("[limits]\nmemory_mb = 4");
    for script in [
        "seq 1 400000 | sed 'H;$!d;x' | tail -n 1",
        "seq 1 400000 | sed ':a;N;$!ba' | tail -n 1",
        "seq 1 400000 | tail -n 400000 | head -n 1",
        "seq 1 400000 | tail -c 3000000 | head -n 1",
    ] {
        let r = p.run(script);
        assert_stopped(&r, "LIMIT_EXCEEDED", 125);
        assert!(r.stderr.contains("memory_mb"), "{script}: {}", r.dump());
    }
    p.write("ten", "1\n2\n");
    let r = p.run("seq 1 400000 | diff - ten; echo status=$?");
    assert!(r.stdout.ends_with("status=2\n"), "{}", r.dump());
    assert!(r.stderr.contains("holding more than"), "{}", r.dump());
    p.run("seq 1 400000 | sed 'N;P;D' | tail -n 1")
        .assert_ok_with("400000\n");
    p.run("seq 1 400000 | tail -n 2")
        .assert_ok_with("399999\n400000\n");
    p.run("seq 1 5 | sed 'H;$!d;x' | tail -n 2")
        .assert_ok_with("4\n5\n");
    p.run("seq 1 2 | diff - ten && echo same")
        .assert_ok_with("same\n");
}

/// Issue 15 (bytes): the files a utility reads whole besides its input, jq's
/// `--rawfile`/`--slurpfile` and the `-f` program files of jq, awk and sed,
/// stop the script past the budget with `LIMIT_EXCEEDED` (rule `memory_mb`),
/// like every other budget, rather than a plain error the script goes on
/// after. A sparse 1 GiB file is refused on its size, without being read.
/// Benign neighbours: the same options on small files.
#[test]
fn named_and_program_files_past_the_budget_are_limit_exceeded() {
    let p = Project::with_extra("[limits]\nmemory_mb = 4");
    let big = std::fs::File::create(p.path("sparse")).expect("create");
    big.set_len(1 << 30).expect("sparse");
    for script in [
        "jq -n --rawfile x sparse 1; echo after",
        "jq -n --slurpfile x sparse 1; echo after",
        "jq -n -f sparse; echo after",
        "awk -f sparse /dev/null; echo after",
        "sed -f sparse /dev/null; echo after",
    ] {
        let r = p.run(script);
        assert_stopped(&r, "LIMIT_EXCEEDED", 125);
        assert!(r.stderr.contains("memory_mb"), "{script}: {}", r.dump());
        assert!(!r.stdout.contains("after"), "{script}: {}", r.dump());
    }
    p.write("raw.txt", "hello\n");
    p.write("doc.json", "{\"a\": 1}\n");
    p.write("prog.jq", ".a + 1\n");
    p.write("prog.awk", "{ print NR \": \" $0 }\n");
    p.write("prog.sed", "s/hello/bye/\n");
    p.run("jq -n -r --rawfile x raw.txt '$x'")
        .assert_ok_with("hello\n\n");
    p.run("jq -n -c --slurpfile x doc.json '$x'")
        .assert_ok_with("[{\"a\":1}]\n");
    p.run("jq -f prog.jq doc.json").assert_ok_with("2\n");
    p.run("awk -f prog.awk raw.txt")
        .assert_ok_with("1: hello\n");
    p.run("sed -f prog.sed raw.txt").assert_ok_with("bye\n");
}
