//! `cut`: select bytes, characters (bytes in the C locale) or delimited fields of
//! each line, by a list of positions and ranges, optionally complemented.

use crate::common::{BUF, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

const SPEC: Spec = Spec {
    flags: "nsz",
    valued: "bcdf",
    long: &[
        ("bytes", true, "b"),
        ("characters", true, "c"),
        ("delimiter", true, "d"),
        ("fields", true, "f"),
        ("only-delimited", false, "s"),
        ("zero-terminated", false, "z"),
        ("complement", false, "complement"),
        ("output-delimiter", true, "output-delimiter"),
    ],
    stop_at_operand: false,
};

/// Inclusive 1-based ranges, sorted, overlapping ones merged (adjacent ones kept
/// apart, as GNU does: they matter for `--output-delimiter`).
type Ranges = Vec<(u64, u64)>;

/// Parses a GNU cut list (`1,3-5,7-`, `-3`; blanks also separate items).
fn parse_list(s: &str, fields: bool) -> Result<Ranges, String> {
    let mut v: Ranges = Vec::new();
    for item in s.split([',', ' ', '\t']) {
        if item.is_empty() {
            continue;
        }
        let num = |t: &str| -> Result<u64, String> {
            if t.bytes().all(|b| b.is_ascii_digit()) {
                let n = t.parse::<u64>().unwrap_or(u64::MAX);
                if n == 0 {
                    Err("fields and positions are numbered from 1".to_string())
                } else {
                    Ok(n)
                }
            } else if fields {
                Err(format!("invalid field value '{t}'"))
            } else {
                Err(format!("invalid byte/character position '{t}'"))
            }
        };
        let (lo, hi) = match item.split_once('-') {
            None => {
                let n = num(item)?;
                (n, n)
            }
            Some(("", "")) => return Err("invalid range with no endpoint: -".to_string()),
            Some(("", h)) => (1, num(h)?),
            Some((l, "")) => (num(l)?, u64::MAX),
            Some((l, h)) => {
                let (l, h) = (num(l)?, num(h)?);
                if l > h {
                    return Err("invalid decreasing range".to_string());
                }
                (l, h)
            }
        };
        v.push((lo, hi));
    }
    if v.is_empty() {
        return Err("missing list of positions".to_string());
    }
    v.sort_unstable();
    let mut merged: Ranges = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    Ok(merged)
}

fn complement(r: &Ranges) -> Ranges {
    let mut out = Vec::new();
    let mut next = 1u64;
    for &(lo, hi) in r {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi.saturating_add(1);
        if hi == u64::MAX {
            return out;
        }
    }
    out.push((next, u64::MAX));
    out
}

enum Mode {
    Bytes,
    Fields { delim: u8, only_delimited: bool },
}

/// Runs `cut`.
pub fn cut(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let lists: Vec<&str> = ["b", "c", "f"].into_iter().filter(|k| p.has(k)).collect();
    let kind = match lists.as_slice() {
        [] => {
            return Ok(usage(
                ctx,
                "you must specify a list of bytes, characters, or fields",
                1,
            ));
        }
        [k] => *k,
        _ => return Ok(usage(ctx, "only one type of list may be specified", 1)),
    };
    let fields = kind == "f";
    let list = p.value(kind).unwrap_or("");
    let mut ranges = match parse_list(list, fields) {
        Ok(r) => r,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.has("complement") {
        ranges = complement(&ranges);
    }
    let delim = match p.value("d") {
        None => b'\t',
        Some(d) => match d.as_bytes() {
            [] => 0,
            [c] => *c,
            _ => return Ok(usage(ctx, "the delimiter must be a single character", 1)),
        },
    };
    if !fields && p.has("d") {
        return Ok(usage(
            ctx,
            "an input delimiter may be specified only when operating on fields",
            1,
        ));
    }
    if !fields && p.has("s") {
        return Ok(usage(
            ctx,
            "suppressing non-delimited lines makes sense\n\tonly when operating on fields",
            1,
        ));
    }
    // GNU writes a NUL byte for an empty --output-delimiter.
    let out_delim: Option<Vec<u8>> = p.value("output-delimiter").map(|s| {
        if s.is_empty() {
            vec![0]
        } else {
            s.as_bytes().to_vec()
        }
    });
    let mode = if fields {
        Mode::Fields {
            delim,
            only_delimited: p.has("s"),
        }
    } else {
        Mode::Bytes
    };
    let line_delim = if p.has("z") { 0 } else { b'\n' };
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    let r = run(
        ctx,
        &mode,
        &ranges,
        out_delim.as_deref(),
        line_delim,
        &files,
    );
    finish(ctx, r)
}

fn run(
    ctx: &mut UtilCtx<'_>,
    mode: &Mode,
    ranges: &Ranges,
    out_delim: Option<&[u8]>,
    line_delim: u8,
    files: &[String],
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    for f in files {
        let input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        match cut_stream(input, &mut out, mode, ranges, out_delim, line_delim) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
            }
            Err(e) => return Err(e),
        }
    }
    out.flush()?;
    Ok(status)
}

/// Outer error: write failure; inner error: read failure.
fn cut_stream(
    input: impl Read,
    out: &mut impl Write,
    mode: &Mode,
    ranges: &Ranges,
    out_delim: Option<&[u8]>,
    line_delim: u8,
) -> io::Result<io::Result<()>> {
    let mut r = BufReader::with_capacity(BUF, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(line_delim, &mut line) {
            Ok(0) => return Ok(Ok(())),
            Ok(_) => {}
            Err(e) => return Ok(Err(e)),
        }
        if line.last() == Some(&line_delim) {
            line.pop();
        }
        match mode {
            Mode::Bytes => cut_bytes(&line, out, ranges, out_delim)?,
            Mode::Fields {
                delim,
                only_delimited,
            } => {
                if memchr::memchr(*delim, &line).is_none() {
                    if !only_delimited {
                        out.write_all(&line)?;
                        out.write_all(&[line_delim])?;
                    }
                    continue;
                }
                let od = out_delim.unwrap_or(std::slice::from_ref(delim));
                cut_fields(&line, out, ranges, *delim, od)?;
            }
        }
        out.write_all(&[line_delim])?;
    }
}

fn cut_bytes(
    line: &[u8],
    out: &mut impl Write,
    ranges: &Ranges,
    od: Option<&[u8]>,
) -> io::Result<()> {
    let len = line.len() as u64;
    let mut printed = false;
    for &(lo, hi) in ranges {
        if lo > len {
            break;
        }
        let (s, e) = ((lo - 1) as usize, hi.min(len) as usize);
        if printed && let Some(d) = od {
            out.write_all(d)?;
        }
        out.write_all(&line[s..e])?;
        printed = true;
    }
    Ok(())
}

fn cut_fields(
    line: &[u8],
    out: &mut impl Write,
    ranges: &Ranges,
    delim: u8,
    od: &[u8],
) -> io::Result<()> {
    let max = ranges.last().map_or(0, |r| r.1);
    let mut ri = 0;
    let mut idx: u64 = 0;
    let mut start = 0;
    let mut printed = false;
    let mut ends = memchr::memchr_iter(delim, line);
    loop {
        idx += 1;
        if idx > max {
            break;
        }
        let end = ends.next();
        let field = &line[start..end.unwrap_or(line.len())];
        while ri < ranges.len() && ranges[ri].1 < idx {
            ri += 1;
        }
        if ranges.get(ri).is_some_and(|r| r.0 <= idx) {
            if printed {
                out.write_all(od)?;
            }
            out.write_all(field)?;
            printed = true;
        }
        match end {
            Some(e) => start = e + 1,
            None => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(
            parse_list("1,3-5,7-", true).unwrap(),
            vec![(1, 1), (3, 5), (7, u64::MAX)]
        );
        assert_eq!(parse_list("-3,2-4", false).unwrap(), vec![(1, 4)]);
        assert_eq!(parse_list("1,2", false).unwrap(), vec![(1, 1), (2, 2)]);
        assert!(parse_list("0", true).is_err());
        assert!(parse_list("3-1", true).is_err());
        assert_eq!(complement(&vec![(2, 3)]), vec![(1, 1), (4, u64::MAX)]);
    }
}
