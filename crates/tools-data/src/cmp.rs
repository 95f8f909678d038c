//! `cmp` (GNU diffutils 3.8): first difference (`a b differ: char N, line M`),
//! `-l` every differing byte, `-b` the bytes themselves, `-s` status only,
//! `-i`/operand skips, `-n` limit; EOF reported on stderr.

use crate::out::Out;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{BufRead, BufReader, Read};

const SPEC: Spec = Spec {
    flags: "blsv",
    valued: "in",
    long: &[
        ("print-bytes", false, "b"),
        ("verbose", false, "l"),
        ("quiet", false, "s"),
        ("silent", false, "s"),
        ("ignore-initial", true, "i"),
        ("bytes", true, "n"),
    ],
    stop_at_operand: false,
};

fn fail(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    ctx.warn("Try 'cmp --help' for more information.");
    Ok(2)
}

/// Parses a byte count with GNU's optional suffixes (`k`, `K`, `kB`, `M`, ...).
fn parse_count(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = s[..digits].parse().ok()?;
    let mult: u64 = match &s[digits..] {
        "" => 1,
        "kB" | "KB" => 1000,
        "k" | "K" | "KiB" => 1024,
        "MB" => 1000 * 1000,
        "M" | "MiB" => 1 << 20,
        "GB" => 1000 * 1000 * 1000,
        "G" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// `cat -v`-style rendering of a byte, as `cmp -b` prints it.
fn show(c: u8) -> String {
    let mut s = String::new();
    let mut c = c;
    if c >= 128 {
        s.push_str("M-");
        c -= 128;
    }
    if c < 32 {
        s.push('^');
        s.push((c + 64) as char);
    } else if c == 127 {
        s.push_str("^?");
    } else {
        s.push(c as char);
    }
    s
}

/// Runs `cmp`.
pub fn cmp(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return fail(ctx, &e),
    };
    let ops = &p.operands;
    if ops.is_empty() {
        return fail(ctx, "missing operand after 'cmp'");
    }
    if ops.len() > 4 {
        return fail(ctx, &format!("invalid --ignore-initial value '{}'", ops[4]));
    }
    let mut skip = [0u64; 2];
    if let Some(v) = p.value("i") {
        let (a, b) = v.split_once(':').unwrap_or((v, v));
        match (parse_count(a), parse_count(b)) {
            (Some(a), Some(b)) => skip = [a, b],
            _ => return fail(ctx, &format!("invalid --ignore-initial value '{v}'")),
        }
    }
    for (k, slot) in skip.iter_mut().enumerate() {
        if let Some(s) = ops.get(2 + k) {
            match parse_count(s) {
                Some(n) => *slot = n,
                None => return fail(ctx, &format!("invalid --ignore-initial value '{s}'")),
            }
        }
    }
    let limit = match p.value("n") {
        Some(v) => match parse_count(v) {
            Some(n) => Some(n),
            None => return fail(ctx, &format!("invalid --bytes value '{v}'")),
        },
        None => None,
    };
    let names = [
        ops[0].clone(),
        ops.get(1).cloned().unwrap_or_else(|| "-".into()),
    ];
    let mode = if p.has("s") {
        Mode::Silent
    } else if p.has("l") || p.has("v") {
        Mode::All
    } else {
        Mode::First
    };
    let bytes = p.has("b");
    // GNU cmp says `char` in the C locale and `byte` in a multibyte one.
    let unit = if ctx.env.utf8_locale() {
        "byte"
    } else {
        "char"
    };
    // Open both (stdin at most once).
    let mut files: Vec<Option<std::fs::File>> = Vec::new();
    let mut sizes = [None, None];
    for (k, n) in names.iter().enumerate() {
        if n == "-" {
            files.push(None);
            continue;
        }
        match ctx.open(n) {
            Ok(f) => {
                sizes[k] = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                files.push(Some(f));
            }
            Err(e) => {
                if mode != Mode::Silent {
                    ctx.warn_io(n, &e);
                }
                return Ok(2);
            }
        }
    }
    if names[0] == names[1] {
        return Ok(0);
    }
    let mut width = 1;
    if mode == Mode::All {
        let mut max = limit.unwrap_or(u64::MAX);
        for k in 0..2 {
            if let Some(sz) = sizes[k] {
                max = max.min(sz.saturating_sub(skip[k]));
            }
        }
        while max >= 10 {
            max /= 10;
            width += 1;
        }
    }
    let mut stdin: Option<&mut dyn Read> = Some(&mut *ctx.stdin);
    let mut boxed: Vec<Box<dyn Read + '_>> = Vec::new();
    for f in files {
        boxed.push(match (f, stdin.take()) {
            (Some(f), back) => {
                stdin = back;
                Box::new(f)
            }
            (None, Some(s)) => Box::new(s),
            (None, None) => Box::new(std::io::empty()),
        });
    }
    let (Some(r1), Some(r0)) = (boxed.pop(), boxed.pop()) else {
        return Ok(2);
    };
    let mut readers = [
        BufReader::with_capacity(64 * 1024, r0),
        BufReader::with_capacity(64 * 1024, r1),
    ];
    let mut result = Compare::default();
    let mut lines_out = Vec::new();
    let outcome = compare(
        &mut readers,
        skip,
        limit,
        mode,
        bytes,
        width,
        &mut result,
        &mut lines_out,
    );
    drop(readers);
    drop(boxed);
    let _ = stdin;
    let mut out = Out::new(ctx);
    out.write(&lines_out);
    if let Err((k, e)) = outcome {
        out.flush();
        out.ctx().warn_io(&names[k], &e);
        return Ok(out.finish_with(2));
    }
    let status = match result.end {
        End::Same => 0,
        End::Differ => 1,
        End::Eof(k) => {
            if mode != Mode::Silent {
                let n = &names[k];
                let msg = if result.offset == 0 {
                    format!("EOF on {n} which is empty")
                } else if mode == Mode::All {
                    format!("EOF on {n} after byte {}", result.offset)
                } else if result.last == b'\n' {
                    format!(
                        "EOF on {n} after byte {}, line {}",
                        result.offset, result.newlines
                    )
                } else {
                    format!(
                        "EOF on {n} after byte {}, in line {}",
                        result.offset,
                        result.newlines + 1
                    )
                };
                out.warn(msg);
            }
            1
        }
    };
    if status == 1 && mode == Mode::First && matches!(result.end, End::Differ) {
        let (a, b) = result.diff;
        let line = if bytes {
            format!(
                "{} {} differ: byte {}, line {} is {a:3o} {} {b:3o} {}\n",
                names[0],
                names[1],
                result.offset,
                result.newlines + 1,
                show(a),
                show(b)
            )
        } else {
            format!(
                "{} {} differ: {unit} {}, line {}\n",
                names[0],
                names[1],
                result.offset,
                result.newlines + 1
            )
        };
        out.write(line.as_bytes());
    }
    Ok(out.finish_with(status))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    First,
    All,
    Silent,
}

#[derive(Default)]
enum End {
    #[default]
    Same,
    Differ,
    /// The given file (0 or 1) ended first.
    Eof(usize),
}

/// Where the comparison stopped.
#[derive(Default)]
struct Compare {
    end: End,
    /// Bytes compared equal before the stop (or the 1-based offset of the difference).
    offset: u64,
    newlines: u64,
    last: u8,
    diff: (u8, u8),
}

fn skip_bytes(r: &mut dyn BufRead, mut n: u64) -> std::io::Result<()> {
    while n > 0 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let k = (buf.len() as u64).min(n) as usize;
        r.consume(k);
        n -= k as u64;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn compare(
    readers: &mut [BufReader<Box<dyn Read + '_>>; 2],
    skip: [u64; 2],
    limit: Option<u64>,
    mode: Mode,
    bytes: bool,
    width: usize,
    res: &mut Compare,
    out: &mut Vec<u8>,
) -> Result<(), (usize, std::io::Error)> {
    for k in 0..2 {
        skip_bytes(&mut readers[k], skip[k]).map_err(|e| (k, e))?;
    }
    let mut remaining = limit.unwrap_or(u64::MAX);
    let mut any_diff = false;
    while remaining > 0 {
        let [r0, r1] = readers;
        let a = r0.fill_buf().map_err(|e| (0, e))?;
        let b = r1.fill_buf().map_err(|e| (1, e))?;
        if a.is_empty() || b.is_empty() {
            if a.is_empty() != b.is_empty() {
                res.end = End::Eof(if a.is_empty() { 0 } else { 1 });
                return Ok(());
            }
            break;
        }
        let n = a
            .len()
            .min(b.len())
            .min(remaining.min(usize::MAX as u64) as usize);
        let (a, b) = (&a[..n], &b[..n]);
        for i in 0..n {
            if a[i] != b[i] {
                let pos = res.offset + i as u64 + 1;
                match mode {
                    Mode::All => {
                        any_diff = true;
                        let line = if bytes {
                            format!(
                                "{pos:>width$} {:3o} {:<4} {:3o} {}\n",
                                a[i],
                                show(a[i]),
                                b[i],
                                show(b[i])
                            )
                        } else {
                            format!("{pos:>width$} {:3o} {:3o}\n", a[i], b[i])
                        };
                        out.extend_from_slice(line.as_bytes());
                    }
                    _ => {
                        res.newlines += memchr::memchr_iter(b'\n', &a[..i]).count() as u64;
                        res.offset = pos;
                        res.diff = (a[i], b[i]);
                        res.end = End::Differ;
                        return Ok(());
                    }
                }
            }
        }
        res.newlines += memchr::memchr_iter(b'\n', a).count() as u64;
        res.last = a[n - 1];
        res.offset += n as u64;
        remaining -= n as u64;
        r0.consume(n);
        r1.consume(n);
    }
    if any_diff {
        res.end = End::Differ;
    }
    Ok(())
}
