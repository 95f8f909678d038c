//! Pseudo-random inputs through option matrices, compared with the real tools.

use crate::check_in;

/// A small deterministic generator (no extra dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[(self.next() as usize) % v.len()]
    }
}

fn lines(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    let atoms = [
        "a", "B", "b", "10", "9", "-2", "1.5", "1K", "2M", "Jan", "feb", " ", "  ", "\t", "x1.2",
        "x1.10", "", "0", "-0", "Z", ",", ":", "é", "~", ".", "1e2", "abc", "ABC",
    ];
    let mut out = Vec::new();
    for _ in 0..n {
        let fields = 1 + r.next() % 4;
        for f in 0..fields {
            if f > 0 {
                out.extend_from_slice(r.pick(&[" ", "\t", ",", ":", "  "]).as_bytes());
            }
            for _ in 0..1 + r.next() % 2 {
                out.extend_from_slice(r.pick(&atoms).as_bytes());
            }
        }
        out.push(b'\n');
    }
    out
}

#[test]
fn sort_matrix() {
    let opts: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-r"],
        &["-f"],
        &["-b"],
        &["-d"],
        &["-h"],
        &["-g"],
        &["-M"],
        &["-V"],
        &["-u"],
        &["-s", "-k2,2"],
        &["-k2"],
        &["-k2,2n"],
        &["-k2,2nr", "-k1,1"],
        &["-k1.2,1.3"],
        &["-t,", "-k2,2"],
        &["-t:", "-k2n"],
        &["-t,", "-k2,2", "-u"],
        &["-k2b,2"],
        &["-bk2,2"],
        &["-k2.2b,3.1"],
        &["-nu"],
        &["-fu"],
        &["-k3,3", "-k1,1r"],
        &["-k2,2V"],
        &["-k2h"],
        &["-rk2,2"],
        &["-k1,1d"],
        &["-k1,1fr", "-s"],
    ];
    for seed in 1..4 {
        let input = lines(seed, 60);
        for o in opts {
            let mut argv = vec!["sort"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
    }
}

#[test]
fn uniq_cut_matrix() {
    for seed in 10..13 {
        let mut input = lines(seed, 60);
        // Sorting makes repeats adjacent so uniq has groups to find.
        let mut ls: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
        ls.sort();
        input = ls.join(&b'\n');
        for o in [
            &["-c"][..],
            &["-d"],
            &["-u"],
            &["-D"],
            &["-i"],
            &["-f1"],
            &["-s1"],
            &["-w1"],
            &["-ci", "-f1"],
        ] {
            let mut argv = vec!["uniq"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
        for o in [
            &["-f2"][..],
            &["-d,", "-f1,3"],
            &["-d:", "-f2-"],
            &["-d,", "-s", "-f2"],
            &["-c2-4"],
            &["-b1,3-"],
            &["-d", " ", "-f2", "--complement"],
        ] {
            let mut argv = vec!["cut"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
        for o in [
            &["a-z", "A-Z"][..],
            &["-s", " \t"],
            &["-d", "0-9"],
            &["-cs", "[:alnum:]", "\\n"],
            &[",:", ":,"],
        ] {
            let mut argv = vec!["tr"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
        for o in [&[][..], &["-L"], &["-w"], &["-l"]] {
            let mut argv = vec!["wc"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
    }
}

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n)
        .map(|_| match r.next() % 6 {
            0 => b'\n',
            1 => b' ',
            2 => (r.next() % 256) as u8,
            _ => b'a' + (r.next() % 5) as u8,
        })
        .collect()
}

#[test]
fn binary_inputs() {
    for seed in 20..24 {
        let input = bytes(seed, 3000);
        for argv in [
            &["cat", "-A"][..],
            &["cat", "-bs"],
            &["wc"],
            &["wc", "-L"],
            &["sort"],
            &["sort", "-n"],
            &["sort", "-f", "-k2"],
            &["uniq", "-c"],
            &["cut", "-c2-5,9"],
            &["cut", "-d", " ", "-f2,3"],
            &["tr", "-s", "a-e"],
            &["tr", "\\000-\\040", "_"],
            &["head", "-n", "-3"],
            &["tail", "-n", "4"],
            &["tac"],
            &["nl", "-ba"],
            &["paste", "-s", "-d", ",|"],
            &["paste", "-", "-", "-"],
            &["fold", "-w", "7"],
            &["fold", "-s", "-w", "11"],
            &["expand", "-t", "3,7,/4"],
            &["column", "-t"],
            &["column", "-t", "-s", ",:"],
            &["column", "-c", "60"],
        ] {
            check_in(argv, &input);
        }
    }
}

/// `join` on pseudo-random keyed lines: sorted inputs (every pairing,
/// unpaired, formats) and unsorted ones (the order checks).
#[test]
fn join_seeds() {
    for seed in 40..46 {
        let keyed = |seed: u64, sorted: bool| {
            let mut r = Rng(seed);
            let keys = ["a", "b", "b", "c", "d", "d", "e", "B", "", "10", "9"];
            let mut rows: Vec<String> = (0..12)
                .map(|i| {
                    let k = r.pick(&keys);
                    let extra = r.pick(&["x", "y z", "", "1 2 3"]);
                    format!("{k} {i} {extra}")
                })
                .collect();
            if sorted {
                rows.sort();
            }
            rows.join("\n").into_bytes()
        };
        for sorted in [true, false] {
            let files = [("a", keyed(seed, sorted)), ("b", keyed(seed + 100, sorted))];
            let files: Vec<(&str, &[u8])> = files.iter().map(|(n, d)| (*n, d.as_slice())).collect();
            for args in [
                &[][..],
                &["-a1", "-a2", "-e", "-", "-o", "auto"],
                &["-v1"],
                &["-v2", "-j2"],
                &["-1", "2", "-2", "1", "-a2"],
                &["-o", "0,1.2,2.3"],
                &["--check-order"],
                &["--nocheck-order", "-a1"],
            ] {
                let mut argv = vec!["join"];
                argv.extend_from_slice(args);
                argv.extend_from_slice(&["a", "b"]);
                crate::check(&files, &argv, b"");
            }
        }
    }
}

#[test]
fn more_sort_seeds() {
    for seed in 30..36 {
        let input = lines(seed, 40);
        for o in [
            &["-k2,3"][..],
            &["-k1.1,1.1", "-k2.1n"],
            &["-t", " ", "-k2,2", "-k3,3n"],
            &["-n", "-u", "-k1,1"],
            &["-g", "-r"],
            &["-h", "-s"],
            &["-d", "-f", "-r"],
            &["-i", "-k2"],
            &["-M", "-r"],
            &["-V", "-u"],
            &["-c"],
            &["-b", "-k2,2", "-u"],
            &["-t,", "-k1,1", "-k2n"],
        ] {
            let mut argv = vec!["sort"];
            argv.extend_from_slice(o);
            check_in(&argv, &input);
        }
    }
}
