//! `rev`: reverse the characters of each line, as util-linux does: characters of
//! the locale (UTF-8 or single bytes); a line that is not valid text in it (any
//! byte past 0x7f in the C locale, bad UTF-8 in a UTF-8 one) ends that file
//! with an error, status 1, as util-linux's `fgetws` does.

use crate::common::{BUF, Input, finish, open_file, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "0",
    valued: "",
    long: &[("zero", false, "0")],
    stop_at_operand: false,
};

/// Runs `rev`.
pub fn rev(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let delim = if p.has("0") { 0 } else { b'\n' };
    let r = run(ctx, delim, &p.operands);
    finish(ctx, r)
}

/// Reverses `line` into `out`; false when it is not text in the locale.
fn reverse_into(line: &[u8], utf8: bool, out: &mut Vec<u8>) -> bool {
    if !utf8 {
        if !line.is_ascii() {
            return false;
        }
        out.extend(line.iter().rev());
        return true;
    }
    match std::str::from_utf8(line) {
        Ok(s) => {
            for c in s.chars().rev() {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
            true
        }
        Err(_) => false,
    }
}

/// util-linux reads lines as C wide strings: a line ends at its first NUL, and
/// a line cut short that way (no newline) is joined with the next line(s)
/// until one ends with a newline or the input ends.
fn cut_at_nul(r: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<()> {
    if let Some(i) = memchr::memchr(0, line) {
        line.truncate(i);
    }
    while !line.is_empty() && line.last() != Some(&b'\n') {
        let before = line.len();
        if r.read_until(b'\n', line)? == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(0, &line[before..]) {
            line.truncate(before + i);
        }
    }
    Ok(())
}

fn run(ctx: &mut UtilCtx<'_>, delim: u8, files: &[String]) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let utf8 = ctx.env.utf8_locale();
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut line = Vec::new();
    let mut rev = Vec::new();
    let stdin_only = [String::new()];
    let list = if files.is_empty() {
        &stdin_only[..]
    } else {
        files
    };
    for f in list {
        // util-linux rev has no `-` operand: only an absent file list means stdin.
        let opened = if files.is_empty() {
            Ok(Input::stdin(&mut *ctx.stdin, host))
        } else {
            open_file(host, &cwd, f).map(|file| Input::from_file(file, host))
        };
        let input = match opened {
            Ok(i) => i,
            Err(e) => {
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: cannot open {f}: {}",
                    safesh_utils::io_error_text(&e)
                );
                status = 1;
                continue;
            }
        };
        let mut r = BufReader::with_capacity(BUF, input);
        let mut lineno = 0u64;
        loop {
            line.clear();
            match r.read_until(delim, &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    let _ = writeln!(
                        ctx.stderr,
                        "{name}: {f}: {}",
                        safesh_utils::io_error_text(&e)
                    );
                    status = 1;
                    break;
                }
            }
            if delim == b'\n'
                && let Err(e) = cut_at_nul(&mut r, &mut line)
            {
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: {f}: {}",
                    safesh_utils::io_error_text(&e)
                );
                status = 1;
                break;
            }
            let (content, has) = crate::common::strip_delim(&line, delim);
            rev.clear();
            lineno += 1;
            if !reverse_into(content, utf8, &mut rev) {
                out.flush()?;
                let shown = if files.is_empty() { "stdin" } else { f };
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: {shown}: {lineno}: Invalid or incomplete multibyte or wide character"
                );
                status = 1;
                break;
            }
            if has {
                rev.push(delim);
            }
            out.write_all(&rev)?;
        }
    }
    out.flush()?;
    Ok(status)
}
