use crate::{check, check_in};

/// Runs of spaces and tabs of every length around every stop, a lone space at
/// a stop, backspaces, a last line without a newline.
const T: &[u8] = b"        eight\n       seven\n         nine\n\t  \t mixed  x\na       b\nabcdefg h\nabcdefg  h\n   \t\tx  y      z\nab\x08   c        d\n                \n \n  trailing   ";

#[test]
fn leading_blanks_only_by_default() {
    check_in(&["unexpand"], T);
    check_in(&["unexpand", "--first-only"], T);
    check_in(&["unexpand", "-a"], T);
    check_in(&["unexpand", "--all"], T);
    check_in(&["unexpand", "-a", "--first-only"], T);
}

#[test]
fn stops() {
    for t in [
        "1", "2", "3", "4", "8", "2,5", "2,5,9", "3 7", "2,/5", "2,+5", "4,8,/3", "/4", "+3",
    ] {
        // `-t` also converts blanks after the first word; `--first-only` undoes it.
        check_in(&["unexpand", "-t", t], T);
        check_in(&["unexpand", "--first-only", "-t", t], T);
    }
    // The obsolete `-N` sets the stops without converting whole lines.
    check_in(&["unexpand", "-4"], T);
    check_in(&["unexpand", "-4", "-a"], T);
    check_in(&["unexpand", "-2,6"], T);
    check_in(&["unexpand", "-t", "2", "-t", "6"], T);
    check_in(&["unexpand", "--tabs=5"], T);
}

#[test]
fn errors() {
    for t in ["0", "4,2", "3,3", "a", "2,/3,5", "2,+3,9", "/0", ""] {
        check_in(&["unexpand", "-t", t], T);
    }
    check_in(&["unexpand", "-q"], T);
    check_in(&["unexpand", "-t"], T);
}

#[test]
fn files_are_one_stream() {
    let files = &[("a", &b"    "[..]), ("b", &b"    x\n        y\n"[..])];
    check(files, &["unexpand", "a", "b"], b"");
    check(
        files,
        &["unexpand", "-a", "a", "nosuch", "-", "b"],
        b"  \t  z\n",
    );
}

/// Pseudo-random runs of blanks, tabs, backspaces and words under every mode:
/// where a held blank becomes a tab is decided by what follows it.
#[test]
fn seeded_blank_runs() {
    let pieces: &[&[u8]] = &[
        b" ",
        b" ",
        b" ",
        b"\t",
        b"a",
        b"bc",
        b"\n",
        b"\x08",
        b"  ",
        b"        ",
    ];
    let modes: &[&[&str]] = &[
        &["unexpand"],
        &["unexpand", "-a"],
        &["unexpand", "-t", "1"],
        &["unexpand", "-a", "-t", "3,7,12"],
        &["unexpand", "-t", "3,7,/5"],
        &["unexpand", "-t", "2,5,+4"],
        &["unexpand", "-3"],
    ];
    let mut state: u64 = 0x5eed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for _ in 0..40 {
        let len = next() % 60;
        let input: Vec<u8> = (0..len)
            .flat_map(|_| pieces[next() % pieces.len()].iter().copied())
            .collect();
        let argv = modes[next() % modes.len()];
        check_in(argv, &input);
    }
}
