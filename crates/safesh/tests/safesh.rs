//! Differential tests of the whole shell: every case in `tests/cases/*.cases` runs
//! under real bash and under `safesh -c`, each in a fresh copy of a small fixture
//! project, and the two must agree on stdout bytes, exit status and (for cases marked
//! `#! files`) the resulting file tree. See `safesh/cases.rs` for the file format.
//!
//! Run: `cargo test -p safesh --test safesh` (one test per case file, each prints all
//! of its mismatches and fails with their count; deliberate differences, marked
//! `#! skip: reason`, are always listed on stderr).
//!
//! Knobs (environment variables):
//! * `SAFESH_HARNESS_SHELL=/bin/bash` — the shell under test instead of safesh (a
//!   self-check: every case must then pass, which proves the cases are deterministic).
//! * `SAFESH_HARNESS_FILTER=text` — only cases whose name contains `text`.
//! * `SAFESH_HARNESS_VERBOSE=1` — print every case's bash stdout, stderr and status
//!   (to review that the bash side does what the case intends).
//! * `SAFESH_HARNESS_LOCALES="C C.UTF-8"` — run each case that names no
//!   `#! locale:` under these `LC_ALL` values instead of `C` alone (to sweep the
//!   whole corpus under the machine's default `C.UTF-8`).

// Test-harness code: a failed fixture setup should abort the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "safesh/approval_prompt.rs"]
mod approval_prompt;
#[path = "safesh/approvals.rs"]
mod approvals;
#[path = "safesh/beneath.rs"]
mod beneath;
// Issue 21: subshells do not wait for their background jobs (as in bash).
#[path = "safesh/background_jobs.rs"]
mod background_jobs;
#[path = "safesh/cases.rs"]
mod cases;
#[path = "safesh/checkpoints.rs"]
mod checkpoints;
#[path = "safesh/cli.rs"]
mod cli;
#[path = "safesh/cli_args.rs"]
mod cli_args;
#[path = "safesh/cli_tasks.rs"]
mod cli_tasks;
#[path = "safesh/code_mode.rs"]
mod code_mode;
#[path = "safesh/context.rs"]
mod context;
#[path = "safesh/demos.rs"]
mod demos;
#[path = "safesh/escape.rs"]
mod escape;
#[path = "safesh/escape_support.rs"]
mod escape_support;
#[path = "safesh/faces.rs"]
mod faces;
#[path = "safesh/fixture.rs"]
mod fixture;
#[path = "safesh/flow.rs"]
mod flow;
#[path = "safesh/flow_broker.rs"]
mod flow_broker;
#[path = "safesh/flow_cli.rs"]
mod flow_cli;
#[path = "safesh/flow_concurrent.rs"]
mod flow_concurrent;
#[path = "safesh/flow_fds.rs"]
mod flow_fds;
#[path = "safesh/flow_known.rs"]
mod flow_known;
#[path = "safesh/flow_names.rs"]
mod flow_names;
#[path = "safesh/flow_reads.rs"]
mod flow_reads;
#[path = "safesh/flow_reflect.rs"]
mod flow_reflect;
#[path = "safesh/flow_sound.rs"]
mod flow_sound;
#[path = "safesh/flow_store.rs"]
mod flow_store;
#[path = "safesh/flow_support.rs"]
mod flow_support;
#[path = "safesh/git_wall.rs"]
mod git_wall;
#[path = "safesh/hardening.rs"]
mod hardening;
#[path = "safesh/human_builtins.rs"]
mod human_builtins;
#[path = "safesh/inprocess_limits.rs"]
mod inprocess_limits;
#[path = "safesh/isolation.rs"]
mod isolation;
#[path = "safesh/parse_budget.rs"]
mod parse_budget;
#[path = "safesh/pipelines.rs"]
mod pipelines;
#[path = "safesh/platform.rs"]
mod platform;
#[path = "safesh/platform_support.rs"]
mod platform_support;
#[path = "safesh/policy_attacks.rs"]
mod policy_attacks;
#[path = "safesh/policy_benign.rs"]
mod policy_benign;
#[path = "safesh/policy_support.rs"]
mod policy_support;
#[path = "safesh/repl.rs"]
mod repl;
#[path = "safesh/runner.rs"]
mod runner;
#[path = "safesh/server_state.rs"]
mod server_state;
#[path = "safesh/spec_cli.rs"]
mod spec_cli;
#[path = "safesh/spec_run.rs"]
mod spec_run;
#[path = "safesh/tree.rs"]
mod tree;
// Issue 19: verification in the runtime (execute/pipeline verify, llm_judge).
#[path = "safesh/verification.rs"]
mod verification;
// Issue 15 item 7: non-UTF-8 names through external programs.
#[path = "safesh/bytes_names.rs"]
mod bytes_names;

use cases::Case;
use runner::{Output, Shell, Status};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Placeholder for the project directory (cwd and `$HOME`) in compared output.
const DIR_PLACEHOLDER: &str = "<DIR>";
/// Placeholder for the temp directory that holds it.
const TMP_PLACEHOLDER: &str = "<TMP>";
/// Longest output shown in a report before it is cut.
const SHOW_MAX: usize = 3000;

/// The shell under test.
fn shell_under_test() -> Shell {
    match std::env::var("SAFESH_HARNESS_SHELL") {
        Ok(p) if !p.is_empty() => Shell::from_path(&p),
        _ => Shell::from_path(env!("CARGO_BIN_EXE_safesh")),
    }
}

/// A fresh fixture copy: `<tmp>/proj`.
struct Sandbox {
    _tmp: tempfile::TempDir,
    tmp_path: PathBuf,
    proj: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let tmp = tempfile::tempdir().expect("create temp dir");
        // Canonical, so that `pwd -P`, `realpath` and friends print the same prefix.
        let tmp_path = tmp.path().canonicalize().expect("canonicalize temp dir");
        let proj = tmp_path.join("proj");
        std::fs::create_dir(&proj).expect("create project dir");
        fixture::create(&proj).expect("create fixture");
        Sandbox {
            _tmp: tmp,
            tmp_path,
            proj,
        }
    }

    /// Replace this sandbox's paths in `bytes` by placeholders.
    fn scrub(&self, bytes: &[u8]) -> Vec<u8> {
        let proj = self.proj.to_string_lossy();
        let tmp = self.tmp_path.to_string_lossy();
        let once = replace(bytes, proj.as_bytes(), DIR_PLACEHOLDER.as_bytes());
        replace(&once, tmp.as_bytes(), TMP_PLACEHOLDER.as_bytes())
    }
}

fn replace(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// The result of one side of a case, scrubbed of temp paths.
struct Side {
    out: Output,
    tree: Option<tree::Tree>,
}

fn run_side(shell: &Shell, case: &Case, locale: &str) -> Side {
    let sb = Sandbox::new();
    let mut out = shell.run_in_locale(&case.script, &sb.proj, case.stdin.as_deref(), locale);
    out.stdout = sb.scrub(&out.stdout);
    out.stderr = sb.scrub(&out.stderr);
    let tree = case
        .files
        .then(|| tree::snapshot(&sb.proj, DIR_PLACEHOLDER));
    Side { out, tree }
}

/// Differences between bash and safesh for one case (empty = agree).
fn compare(expected: &Side, actual: &Side) -> Vec<String> {
    let mut problems = Vec::new();
    if expected.out.stdout != actual.out.stdout {
        problems.push("stdout differs".to_string());
    }
    if expected.out.status != actual.out.status {
        problems.push(format!(
            "status differs: bash {}, safesh {}",
            expected.out.status, actual.out.status
        ));
    }
    if let (Some(e), Some(a)) = (&expected.tree, &actual.tree) {
        let d = tree::diff(e, a);
        if !d.is_empty() {
            problems.push(format!("file tree differs:\n{}", d.join("\n")));
        }
    }
    problems
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= SHOW_MAX {
        return indent(&text);
    }
    let mut cut = SHOW_MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n    … ({} bytes in all)",
        indent(&text[..cut]),
        bytes.len()
    )
}

fn indent(text: &str) -> String {
    if text.is_empty() {
        return "    (empty)".into();
    }
    let mut s: String = text
        .lines()
        .map(|l| format!("    |{l}"))
        .collect::<Vec<_>>()
        .join("\n");
    if !text.ends_with('\n') {
        s.push_str("\n    (no trailing newline)");
    }
    s
}

fn report(file: &str, case: &Case, expected: &Side, actual: &Side, problems: &[String]) -> String {
    format!(
        "==== {file}:{} `{}`: {}\n  script:\n{}\n  bash stdout ({}):\n{}\n  safesh stdout ({}):\n{}\n  bash stderr:\n{}\n  safesh stderr:\n{}\n",
        case.line,
        case.name,
        problems.join("; "),
        indent(&case.script),
        expected.out.status,
        show(&expected.out.stdout),
        actual.out.status,
        show(&actual.out.stdout),
        show(&expected.out.stderr),
        show(&actual.out.stderr),
    )
}

/// Write straight to the process's stderr, bypassing libtest's capture, so that
/// deliberate differences are listed even when the test passes.
fn always_print(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Run every case of one `.cases` file and fail with the list of mismatches.
fn run_case_file(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let cases = cases::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let filter = std::env::var("SAFESH_HARNESS_FILTER").unwrap_or_default();
    let verbose = std::env::var("SAFESH_HARNESS_VERBOSE").is_ok_and(|v| !v.is_empty());
    let bash = Shell::bash();
    let under_test = shell_under_test();

    let mut failures = Vec::new();
    let mut bad_cases = Vec::new();
    let mut skipped = Vec::new();
    let mut ran = 0;
    let sweep: Vec<String> = std::env::var("SAFESH_HARNESS_LOCALES")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    // A case runs once per locale it names (`#! locale:`).
    let runs = cases
        .iter()
        .filter(|c| c.name.contains(&filter))
        .flat_map(|c| {
            let locales = if c.locale_given || sweep.is_empty() {
                &c.locales
            } else {
                &sweep
            };
            locales.iter().map(move |l| (c, l.as_str()))
        });
    for (case, locale) in runs {
        ran += 1;
        let expected = run_side(&bash, case, locale);
        if verbose {
            println!(
                "---- {file}:{} `{}` (bash {}):\n  stdout:\n{}\n  stderr:\n{}",
                case.line,
                case.name,
                expected.out.status,
                show(&expected.out.stdout),
                show(&expected.out.stderr)
            );
        }
        if !matches!(expected.out.status, Status::Exit(_)) {
            bad_cases.push(format!(
                "{file}:{} `{}`: bash itself ended with {} (a bad case)",
                case.line, case.name, expected.out.status
            ));
            continue;
        }
        let actual = run_side(&under_test, case, locale);
        let mut problems = compare(&expected, &actual);
        if locale != "C" && !problems.is_empty() {
            problems.insert(0, format!("LC_ALL={locale}"));
        }
        if let Some(reason) = &case.skip {
            let now = if problems.is_empty() {
                "now matches: consider removing the skip"
            } else {
                "still differs"
            };
            skipped.push(format!(
                "  {file}:{} `{}`: {reason} [{now}]",
                case.line, case.name
            ));
            continue;
        }
        if !problems.is_empty() {
            failures.push(report(file, case, &expected, &actual, &problems));
        }
    }

    if !skipped.is_empty() {
        always_print(&format!(
            "{file}: {} deliberate difference(s) skipped:\n{}\n",
            skipped.len(),
            skipped.join("\n")
        ));
    }
    for f in &failures {
        println!("{f}");
    }
    for b in &bad_cases {
        println!("{b}");
    }
    println!(
        "{file}: {ran} case(s) run, {} mismatch(es), {} skipped, {} bad",
        failures.len(),
        skipped.len(),
        bad_cases.len()
    );
    assert!(
        failures.is_empty() && bad_cases.is_empty(),
        "{file}: {} of {ran} case(s) differ from bash ({} bad case(s)); see the report above",
        failures.len(),
        bad_cases.len()
    );
}

/// One `#[test]` per case file; `CASE_FILES` lists them so a new file cannot be forgotten.
macro_rules! case_files {
    ($($test:ident => $file:literal),* $(,)?) => {
        const CASE_FILES: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $test() {
                run_case_file($file);
            }
        )*
    };
}

case_files! {
    grammar => "grammar.cases",
    expansion => "expansion.cases",
    quoting_globbing => "quoting_globbing.cases",
    redirection => "redirection.cases",
    arrays_conditionals => "arrays_conditionals.cases",
    builtins => "builtins.cases",
    utilities => "utilities.cases",
    text_tools => "text_tools.cases",
    fs_tools => "fs_tools.cases",
    agent => "agent.cases",
    errors => "errors.cases",
    control => "control.cases",
    expansion_edges => "expansion_edges.cases",
    conditionals_arith => "conditionals_arith.cases",
    heredoc_quoting => "heredoc_quoting.cases",
    locale => "locale.cases",
    shell_state => "shell_state.cases",
    expansion_corners => "expansion_corners.cases",
    bytes_names => "bytes_names.cases",
    od_sed_awk => "od_sed_awk.cases",
    fidelity_more => "fidelity_more.cases",
    programs => "programs.cases",
}

#[test]
fn every_case_file_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("read tests/cases")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cases"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CASE_FILES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "add new .cases files to `case_files!`");
}

#[test]
fn every_case_file_parses() {
    for file in CASE_FILES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/cases")
            .join(file);
        let text = std::fs::read_to_string(&path).expect("read case file");
        let cases = cases::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!cases.is_empty(), "{file} has no cases");
    }
}

/// safesh's own contract for scripts that do not parse (a deliberate difference from
/// bash, which runs the lines before the error): exit 2, nothing runs, and stderr
/// starts with `safesh: PARSE_ERROR:`.
#[test]
fn parse_error_contract() {
    let safesh = Shell::from_path(env!("CARGO_BIN_EXE_safesh"));
    let scripts = [
        "touch ran.marker\necho visible\nfi",
        "touch ran.marker; echo visible\nif true; then echo x",
        "touch ran.marker\necho visible\nfor x in a b; echo $x; done",
        "touch ran.marker\necho visible\n{ echo a",
        "touch ran.marker\necho visible\necho \"unterminated",
        "touch ran.marker\necho visible\ncase x in",
        "touch ran.marker\necho visible\nwhile true; do echo x",
        "touch ran.marker\necho visible\necho $(echo a",
        "touch ran.marker\necho visible\necho a |",
        "touch ran.marker\necho visible\n)",
        "touch ran.marker\necho visible\nf() {",
        "touch ran.marker\necho visible\nx=( a b",
    ];
    let mut failures = Vec::new();
    for script in scripts {
        let sb = Sandbox::new();
        let out = safesh.run(script, &sb.proj, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut problems = Vec::new();
        if out.status != Status::Exit(2) {
            problems.push(format!("status {} (want exit 2)", out.status));
        }
        if !out.stdout.is_empty() {
            problems.push(format!(
                "stdout not empty: {:?}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        if sb.proj.join("ran.marker").exists() {
            problems.push("a command before the error ran (ran.marker exists)".into());
        }
        if !stderr.starts_with("safesh: PARSE_ERROR:") {
            problems.push(format!(
                "stderr does not start with `safesh: PARSE_ERROR:`: {stderr:?}"
            ));
        }
        if !problems.is_empty() {
            failures.push(format!("script {script:?}:\n  {}", problems.join("\n  ")));
        }
        // Sanity of the case itself: bash does run the first line (the documented difference).
        let bash_sb = Sandbox::new();
        let b = Shell::bash().run(script, &bash_sb.proj, None);
        assert!(
            bash_sb.proj.join("ran.marker").exists() && b.out_is_visible(),
            "bad parse-error case {script:?}: bash did not run its first lines"
        );
    }
    assert!(
        failures.is_empty(),
        "{} parse-error script(s) break the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Helpers on outputs used by the contract tests.
trait OutputExt {
    fn out_is_visible(&self) -> bool;
}

impl OutputExt for Output {
    /// bash printed the `echo visible` line that precedes the syntax error.
    fn out_is_visible(&self) -> bool {
        self.stdout.starts_with(b"visible\n")
    }
}

#[test]
fn harness_replaces_paths() {
    let sb = Sandbox::new();
    let p = sb.proj.to_string_lossy().into_owned();
    let t = sb.tmp_path.to_string_lossy().into_owned();
    let scrubbed = sb.scrub(format!("{p}/x {t}/y").as_bytes());
    assert_eq!(scrubbed, b"<DIR>/x <TMP>/y");
}

#[test]
fn harness_times_out() {
    let sb = Sandbox::new();
    let start = std::time::Instant::now();
    let out = Shell::bash().run("sleep 30 & sleep 30", &sb.proj, None);
    let elapsed = start.elapsed();
    assert_eq!(out.status, Status::TimedOut);
    assert!(
        elapsed < std::time::Duration::from_secs(20),
        "timed-out run took {elapsed:?}"
    );
}
