//! jq 1.6's own test suite (`tests/data/jq-1.6/jq.test`, run by jq 1.6 as
//! `jq -L modules --run-tests jq.test`) through our jq, with the rules of
//! jq 1.6's `--run-tests`: a case is a program, an input and the expected
//! outputs (compared as JSON values, so key order and number spelling do not
//! matter; an error after the last expected output is allowed); a `%%FAIL`
//! case must fail to compile with the given message (`%%FAIL IGNORE MSG`: any
//! message). Expected values are normalised by the real jq 1.6 (`jq -cS .`),
//! our outputs by `-S`. Each program is given with `-f`, as `--run-tests`
//! reads it from a file.

use safesh_utils::testing::{run_real, run_util};
use std::path::{Path, PathBuf};

/// Cases of jq 1.6's suite that pass here, out of [`TOTAL`]. The test fails
/// when fewer pass, so a regression shows; raise it when more do.
const MIN_PASSING: usize = 321;

/// The number of cases jq 1.6 counts in its suite.
const TOTAL: usize = 321;

/// What a case expects.
enum Expect {
    /// These outputs, one JSON text each.
    Outputs(Vec<String>),
    /// A compile error, with this message unless `None`.
    CompileError(Option<String>),
}

/// One case of the suite.
struct Case {
    line: usize,
    program: String,
    input: String,
    expect: Expect,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jq-1.6")
}

/// jq 1.6's `skipline`: blank lines and comments.
fn skip(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t', '\r']);
    t.is_empty() || t.starts_with('#')
}

/// Splits the file into cases as jq 1.6's `run_jq_tests` reads it.
fn parse_suite(text: &str) -> Vec<Case> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let mut i = 0;
    let mut fail: Option<bool> = None;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if skip(line) {
            continue;
        }
        if let Some(rest) = line.strip_prefix("%%FAIL") {
            fail = Some(!rest.trim_start().starts_with("IGNORE MSG"));
            continue;
        }
        let program = line.to_string();
        let at = i;
        if let Some(check_msg) = fail.take() {
            let msg = lines.get(i).map(|m| m.to_string());
            i += 1;
            cases.push(Case {
                line: at,
                program,
                input: String::new(),
                expect: Expect::CompileError(msg.filter(|_| check_msg)),
            });
            continue;
        }
        let input = lines.get(i).copied().unwrap_or_default().to_string();
        i += 1;
        let mut outputs = Vec::new();
        while i < lines.len() {
            let l = lines[i];
            i += 1;
            if skip(l) {
                break;
            }
            outputs.push(l.to_string());
        }
        cases.push(Case {
            line: at,
            program,
            input,
            expect: Expect::Outputs(outputs),
        });
    }
    cases
}

/// Every expected output normalised by the real jq 1.6 in one run (one
/// compact, key-sorted line per value, in order).
fn normalise_expected(cases: &[Case], dir: &Path) -> Vec<String> {
    let mut all = String::new();
    for c in cases {
        if let Expect::Outputs(outs) = &c.expect {
            for o in outs {
                all.push_str(o);
                all.push('\n');
            }
        }
    }
    let real = run_real(&["jq", "-cS", "."], all.as_bytes(), dir);
    assert_eq!(
        real.status, 0,
        "the real jq must parse every expected value"
    );
    real.out().lines().map(str::to_string).collect()
}

/// Runs one case; `None` when it passes, else why not.
fn run_case(case: &Case, expected: &[String], mods: &Path, dir: &Path) -> Option<String> {
    // The program goes in a file, as `--run-tests` reads it (`-1` is a
    // program there, an option on a command line).
    let prog = dir.join("program.jq");
    std::fs::write(&prog, &case.program).expect("write program");
    let mods = mods.to_string_lossy();
    let prog = prog.to_string_lossy();
    let argv = ["jq", "-L", &mods, "-cS", "-f", &prog];
    let ours = run_util(
        safesh_tools_jq::UTILS[0].1,
        &argv,
        case.input.as_bytes(),
        dir,
        &[],
    );
    let err = String::from_utf8_lossy(&ours.stderr).into_owned();
    match &case.expect {
        Expect::CompileError(msg) => {
            if ours.status != 3 {
                return Some(format!("compiled (status {}): {}", ours.status, ours.out()));
            }
            match msg {
                Some(m) if !err.lines().any(|l| l == m) => {
                    Some(format!("wrong message: {err:?}, want {m:?}"))
                }
                _ => None,
            }
        }
        Expect::Outputs(_) => {
            if ours.status == 3 {
                return Some(format!("does not compile: {err}"));
            }
            let out = ours.out();
            let got: Vec<&str> = out.lines().collect();
            (got != expected).then(|| format!("got {got:?} want {expected:?} ({err})"))
        }
    }
}

#[test]
fn jq_1_6_test_suite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = data_dir();
    let text = std::fs::read_to_string(data.join("jq.test")).expect("jq.test");
    let cases = parse_suite(&text);
    assert_eq!(cases.len(), TOTAL, "jq 1.6 counts {TOTAL} cases");
    let expected = normalise_expected(&cases, dir.path());
    let mods = data.join("modules");
    let mut next = 0;
    let mut passed = 0;
    let mut failures = Vec::new();
    for c in &cases {
        let want: &[String] = match &c.expect {
            Expect::Outputs(o) => {
                let w = &expected[next..next + o.len()];
                next += o.len();
                w
            }
            Expect::CompileError(_) => &[],
        };
        match run_case(c, want, &mods, dir.path()) {
            None => passed += 1,
            Some(why) => failures.push(format!("line {}: {}\n    {why}", c.line, c.program)),
        }
    }
    println!("jq 1.6 tests/jq.test: {passed} of {TOTAL} pass");
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        passed >= MIN_PASSING,
        "{passed} of {TOTAL} pass, fewer than {MIN_PASSING}:\n{}",
        failures.join("\n")
    );
}
