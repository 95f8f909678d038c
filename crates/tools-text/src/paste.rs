//! `paste`: join corresponding lines of files (or all lines of each file with
//! `-s`), separated by a cycling list of delimiters.

use crate::common::{BUF, Input, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "sz",
    valued: "d",
    long: &[
        ("delimiters", true, "d"),
        ("serial", false, "s"),
        ("zero-terminated", false, "z"),
    ],
    stop_at_operand: false,
};

/// Decodes a delimiter list; `None` stands for the empty delimiter (`\0`).
fn delimiters(s: &str) -> Result<Vec<Option<u8>>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let Some(&n) = b.get(i + 1) else {
                return Err(format!(
                    "delimiter list ends with an unescaped backslash: {s}"
                ));
            };
            out.push(match n {
                b'0' => None,
                b'b' => Some(8),
                b'f' => Some(12),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'v' => Some(11),
                other => Some(other),
            });
            i += 2;
        } else {
            out.push(Some(b[i]));
            i += 1;
        }
    }
    if out.is_empty() {
        out.push(None);
    }
    Ok(out)
}

/// Runs `paste`.
pub fn paste(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let delims = match delimiters(p.value("d").unwrap_or("\t")) {
        Ok(d) => d,
        Err(e) => {
            let name = ctx.name().to_string();
            let _ = writeln!(ctx.stderr, "{name}: {e}");
            return Ok(1);
        }
    };
    let line_delim = if p.has("z") { 0 } else { b'\n' };
    let is_serial = p.has("s");
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    let r = if is_serial {
        serial(ctx, &delims, line_delim, &files)
    } else {
        parallel(ctx, &delims, line_delim, &files)
    };
    finish(ctx, r)
}

/// Reads one line (without its delimiter) into `line`; false at end of input.
fn next_line(r: &mut dyn BufRead, line: &mut Vec<u8>, delim: u8) -> io::Result<bool> {
    line.clear();
    let n = r.read_until(delim, line)?;
    if line.last() == Some(&delim) {
        line.pop();
    }
    Ok(n > 0)
}

fn put_delim(out: &mut impl Write, d: Option<u8>) -> io::Result<()> {
    match d {
        Some(c) => out.write_all(&[c]),
        None => Ok(()),
    }
}

fn serial(
    ctx: &mut UtilCtx<'_>,
    delims: &[Option<u8>],
    ld: u8,
    files: &[String],
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut line = Vec::new();
    for f in files {
        let input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        let mut r = BufReader::with_capacity(BUF, input);
        let mut first = true;
        let mut di = 0;
        loop {
            match next_line(&mut r, &mut line, ld) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    warn_io(&mut *ctx.stderr, &name, f, &e);
                    status = 1;
                    break;
                }
            }
            if !first {
                put_delim(&mut out, delims[di % delims.len()])?;
                di += 1;
            }
            first = false;
            out.write_all(&line)?;
        }
        out.write_all(&[ld])?;
    }
    out.flush()?;
    Ok(status)
}

fn parallel(
    ctx: &mut UtilCtx<'_>,
    delims: &[Option<u8>],
    ld: u8,
    files: &[String],
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut status = 0;
    // Open every file first, like GNU (a missing one fails the whole run).
    let mut opened: Vec<Option<BufReader<std::fs::File>>> = Vec::new();
    for f in files {
        if f == "-" {
            opened.push(None);
            continue;
        }
        match crate::common::open_file(host, &cwd, f) {
            Ok(file) => opened.push(Some(BufReader::with_capacity(BUF, file))),
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                return Ok(1);
            }
        }
    }
    let mut stdin = BufReader::with_capacity(BUF, Input::stdin(&mut *ctx.stdin, host));
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut done = vec![false; files.len()];
    let mut line = Vec::new();
    let mut row = Vec::new();
    loop {
        row.clear();
        let mut any = false;
        for (i, src) in opened.iter_mut().enumerate() {
            if i > 0
                && let Some(c) = delims[(i - 1) % delims.len()]
            {
                row.push(c);
            }
            if done[i] {
                continue;
            }
            let r: &mut dyn BufRead = match src {
                Some(r) => r,
                None => &mut stdin,
            };
            match next_line(r, &mut line, ld) {
                Ok(true) => {
                    any = true;
                    row.extend_from_slice(&line);
                }
                Ok(false) => done[i] = true,
                Err(e) => {
                    warn_io(&mut *ctx.stderr, &name, &files[i], &e);
                    status = 1;
                    done[i] = true;
                }
            }
        }
        if !any {
            break;
        }
        row.push(ld);
        out.write_all(&row)?;
    }
    out.flush()?;
    Ok(status)
}
