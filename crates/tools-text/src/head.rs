//! `head`: the first (or all but the last) N lines or bytes of each input.

use crate::common::{BUF, Failure, each_operand, finish, parse_count, read_some, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::collections::VecDeque;
use std::io::{self, Read, Write};

const SPEC: Spec = Spec {
    flags: "qvz",
    valued: "cn",
    long: &[
        ("bytes", true, "c"),
        ("lines", true, "n"),
        ("quiet", false, "q"),
        ("silent", false, "q"),
        ("verbose", false, "v"),
        ("zero-terminated", false, "z"),
    ],
    stop_at_operand: false,
};

/// What to print of each input.
#[derive(Clone, Copy)]
enum Mode {
    Lines(u64),
    Bytes(u64),
    AllButLines(u64),
    AllButBytes(u64),
}

/// Rewrites the obsolete `-N[bkm][cl][qv]` first argument into modern options.
fn obsolete(args: &[String]) -> Vec<String> {
    let mut v = args.to_vec();
    let Some(first) = args.first() else {
        return v;
    };
    let b = first.as_bytes();
    if b.len() < 2 || b[0] != b'-' || !b[1].is_ascii_digit() {
        return v;
    }
    let body = &first[1..];
    let nd = body.bytes().take_while(u8::is_ascii_digit).count();
    let (num, mut rest) = body.split_at(nd);
    let mut count = num.to_string();
    if let Some(m) = rest.chars().next().filter(|c| "bkm".contains(*c)) {
        count.push(if m == 'b' {
            'b'
        } else {
            m.to_ascii_uppercase()
        });
        rest = &rest[1..];
    }
    let mut new = Vec::new();
    let mut unit = "-n";
    for c in rest.chars() {
        match c {
            'c' => unit = "-c",
            'l' => unit = "-n",
            'q' => new.push("-q".to_string()),
            'v' => new.push("-v".to_string()),
            'z' => new.push("-z".to_string()),
            _ => return v,
        }
    }
    new.insert(0, count);
    new.insert(0, unit.to_string());
    v.splice(0..1, new);
    v
}

/// Runs `head`.
pub fn head(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let argv = obsolete(ctx.args());
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut mode = Mode::Lines(10);
    let mut headers: Option<bool> = None;
    let mut delim = b'\n';
    for opt in &p.opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.name.as_str() {
            "c" | "n" => {
                let (neg, digits) = match v.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, v.strip_prefix('+').unwrap_or(v)),
                };
                let Some(n) = parse_count(digits) else {
                    let what = if opt.name == "c" { "bytes" } else { "lines" };
                    let name = ctx.name().to_string();
                    let _ = writeln!(ctx.stderr, "{name}: invalid number of {what}: '{v}'");
                    return Ok(1);
                };
                mode = match (opt.name.as_str(), neg) {
                    ("c", false) => Mode::Bytes(n),
                    ("c", true) => Mode::AllButBytes(n),
                    (_, false) => Mode::Lines(n),
                    (_, true) => Mode::AllButLines(n),
                };
            }
            "q" => headers = Some(false),
            "v" => headers = Some(true),
            "z" => delim = 0,
            _ => {}
        }
    }
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    let show_headers = headers.unwrap_or(files.len() > 1);
    let r = run(ctx, mode, delim, show_headers, &files);
    finish(ctx, r)
}

fn run(
    ctx: &mut UtilCtx<'_>,
    mode: Mode,
    delim: u8,
    show_headers: bool,
    files: &[String],
) -> io::Result<i32> {
    each_operand(ctx, files, show_headers, |input, mut out| match mode {
        Mode::Lines(n) => first_lines(input, &mut out, n, delim),
        Mode::Bytes(n) => first_bytes(input, &mut out, n),
        Mode::AllButLines(n) => all_but_lines(input, &mut out, n, delim),
        Mode::AllButBytes(n) => all_but_bytes(input, &mut out, n),
    })
}

fn first_lines(
    input: &mut impl Read,
    out: &mut impl Write,
    n: u64,
    delim: u8,
) -> Result<(), Failure> {
    let mut left = n;
    let mut buf = vec![0u8; BUF];
    while left > 0 {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        let chunk = &buf[..got];
        let mut end = got;
        for pos in memchr::memchr_iter(delim, chunk) {
            left -= 1;
            if left == 0 {
                end = pos + 1;
                break;
            }
        }
        out.write_all(&chunk[..end]).map_err(Failure::Write)?;
    }
    Ok(())
}

fn first_bytes(input: &mut impl Read, out: &mut impl Write, n: u64) -> Result<(), Failure> {
    let mut left = n;
    let mut buf = vec![0u8; BUF];
    while left > 0 {
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        let got = read_some(input, &mut buf[..want])?;
        if got == 0 {
            break;
        }
        out.write_all(&buf[..got]).map_err(Failure::Write)?;
        left -= got as u64;
    }
    Ok(())
}

/// Prints all but the last `n` lines: keeps the last `n` complete-or-partial lines
/// pending and writes a line out once more than `n` follow it.
fn all_but_lines(
    input: &mut impl Read,
    out: &mut impl Write,
    n: u64,
    delim: u8,
) -> Result<(), Failure> {
    let mut pending: Vec<u8> = Vec::new();
    let mut ends: VecDeque<usize> = VecDeque::new(); // end offsets (exclusive) of complete lines
    let mut written = 0usize;
    let mut buf = vec![0u8; BUF];
    loop {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        let base = pending.len();
        pending.extend_from_slice(&buf[..got]);
        for pos in memchr::memchr_iter(delim, &buf[..got]) {
            ends.push_back(base + pos + 1);
        }
        while ends.len() as u64 > n {
            let Some(e) = ends.pop_front() else { break };
            out.write_all(&pending[written..e])
                .map_err(Failure::Write)?;
            written = e;
        }
        if written > BUF && written * 2 > pending.len() {
            pending.drain(..written);
            for e in ends.iter_mut() {
                *e -= written;
            }
            written = 0;
        }
    }
    // A final partial line counts as a line.
    let partial = pending.len() > ends.back().copied().unwrap_or(written);
    let total = ends.len() as u64 + u64::from(partial);
    let mut to_emit = total.saturating_sub(n);
    for &e in &ends {
        if to_emit == 0 {
            break;
        }
        out.write_all(&pending[written..e])
            .map_err(Failure::Write)?;
        written = e;
        to_emit -= 1;
    }
    if to_emit > 0 && partial {
        out.write_all(&pending[written..]).map_err(Failure::Write)?;
    }
    Ok(())
}

fn all_but_bytes(input: &mut impl Read, out: &mut impl Write, n: u64) -> Result<(), Failure> {
    let keep = usize::try_from(n).unwrap_or(usize::MAX);
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; BUF];
    loop {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        pending.extend_from_slice(&buf[..got]);
        if pending.len() > keep.saturating_add(BUF) {
            let emit = pending.len() - keep;
            out.write_all(&pending[..emit]).map_err(Failure::Write)?;
            pending.drain(..emit);
        }
    }
    if pending.len() > keep {
        out.write_all(&pending[..pending.len() - keep])
            .map_err(Failure::Write)?;
    }
    Ok(())
}
