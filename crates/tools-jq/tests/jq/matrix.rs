//! Builtins × input types against the real jq 1.6: every filter of
//! `tests/data/builtin_matrix.txt` on every input there, comparing stdout,
//! stderr and the exit status. (`bench/jq_matrix.sh` runs the same matrix
//! through the safesh binary, one case per process, and counts differences.)
//!
//! jq 1.6 takes about 14 ms to start, so a filter runs once on all the inputs
//! (one per line: an error names its line, and each input's run is
//! independent); only when that differs is each input run alone, to name the
//! cases. Filters that read further inputs or stop the run are always run per
//! input.

use crate::both;
use safesh_utils::testing::Output;
use std::path::Path;

/// How a filter of the matrix is run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// All inputs in one process.
    Together,
    /// Each input in its own process (`input`, `halt`, …).
    Alone,
    /// Each input alone; cases where jq 1.6 dies of a signal (an assertion)
    /// are skipped, as safesh reports an error instead.
    Crashes,
}

struct Matrix {
    inputs: Vec<String>,
    filters: Vec<(String, Mode)>,
    excluded: usize,
}

fn load() -> Matrix {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/builtin_matrix.txt");
    let text = std::fs::read_to_string(path).expect("builtin_matrix.txt");
    let mut m = Matrix {
        inputs: Vec::new(),
        filters: Vec::new(),
        excluded: 0,
    };
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(input) = line.strip_prefix("<\t") {
            m.inputs.push(input.to_string());
            continue;
        }
        let (filter, directive) = line.split_once('\t').unwrap_or((line, ""));
        let mode = match directive {
            "" => Mode::Together,
            "alone" => Mode::Alone,
            d if d.starts_with("crash: ") => Mode::Crashes,
            d if d.starts_with("1.7: ") => {
                m.excluded += 1;
                continue;
            }
            d => panic!("unknown directive {d:?} for {filter}"),
        };
        m.filters.push((filter.to_string(), mode));
    }
    m
}

/// Stdout, stderr and status as one line, newlines shown as `~`.
fn shown(o: &Output) -> String {
    format!(
        "{}{}rc={}",
        o.out(),
        String::from_utf8_lossy(&o.stderr),
        o.status
    )
    .replace('\n', "~")
}

fn same(a: &Output, b: &Output) -> bool {
    (a.status, &a.stdout, &a.stderr) == (b.status, &b.stdout, &b.stderr)
}

/// Runs `filter` on each input alone; the differing cases, as
/// `DIFF [input | filter]` blocks.
fn per_input(filter: &str, mode: Mode, inputs: &[String], dir: &Path) -> Vec<String> {
    let mut diffs = Vec::new();
    for input in inputs {
        let (ours, real) = both(&["-c", filter], &format!("{input}\n"), dir);
        // 128: the real jq died of a signal (run_real's code for it).
        if mode == Mode::Crashes && real.status == 128 {
            continue;
        }
        if !same(&ours, &real) {
            diffs.push(format!(
                "DIFF [{input} | {filter}]\n  jq:    {}\n  ours:  {}",
                shown(&real),
                shown(&ours)
            ));
        }
    }
    diffs
}

/// The differing cases of one filter.
fn check_filter(filter: &str, mode: Mode, inputs: &[String], dir: &Path) -> Vec<String> {
    if mode == Mode::Together {
        let all: String = inputs.iter().map(|i| format!("{i}\n")).collect();
        let (ours, real) = both(&["-c", filter], &all, dir);
        if same(&ours, &real) {
            return Vec::new();
        }
        let diffs = per_input(filter, mode, inputs, dir);
        if diffs.is_empty() {
            // Each input alone agrees, together they do not.
            return vec![format!(
                "DIFF [all inputs | {filter}]\n  jq:    {}\n  ours:  {}",
                shown(&real),
                shown(&ours)
            )];
        }
        return diffs;
    }
    per_input(filter, mode, inputs, dir)
}

#[test]
fn builtin_matrix_matches_jq_1_6() {
    let m = load();
    assert!(
        m.inputs.len() >= 10 && m.filters.len() >= 200,
        "matrix too small"
    );
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let chunk = m.filters.len().div_ceil(threads);
    let diffs: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = m
            .filters
            .chunks(chunk)
            .map(|part| {
                let inputs = &m.inputs;
                s.spawn(move || {
                    let dir = tempfile::tempdir().expect("tempdir");
                    part.iter()
                        .flat_map(|(f, mode)| check_filter(f, *mode, inputs, dir.path()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("matrix thread"))
            .collect()
    });
    println!(
        "jq builtin matrix: {} filters x {} inputs ({} excluded as jq 1.7+): {} differences",
        m.filters.len(),
        m.inputs.len(),
        m.excluded,
        diffs.len()
    );
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
