//! `comm`: lines unique to file 1, unique to file 2, and common, in three columns
//! (`-1 -2 -3` suppress, `--output-delimiter`, `--total`, `-z`), with GNU's order
//! check (warn once per file, fail at the end; fatal with `--check-order`).

use crate::out::Out;
use safesh_utils::args::{OrderCheck, Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{BufRead, BufReader, Read};

const SPEC: Spec = Spec {
    flags: "123z",
    valued: "",
    long: &[
        ("check-order", false, "check-order"),
        ("nocheck-order", false, "nocheck-order"),
        ("output-delimiter", true, "output-delimiter"),
        ("total", false, "total"),
        ("zero-terminated", false, "z"),
    ],
    stop_at_operand: false,
};

fn fail(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    ctx.warn("Try 'comm --help' for more information.");
    Ok(1)
}

/// One input: its reader, current and previous line.
struct Input<'r> {
    r: BufReader<Box<dyn Read + 'r>>,
    cur: Vec<u8>,
    prev: Vec<u8>,
    has: bool,
    warned: bool,
}

impl Input<'_> {
    /// Reads the next line (without its terminator) into `cur`, keeping the old one.
    fn advance(&mut self, delim: u8) -> std::io::Result<()> {
        std::mem::swap(&mut self.cur, &mut self.prev);
        self.cur.clear();
        let n = self.r.read_until(delim, &mut self.cur)?;
        if self.cur.last() == Some(&delim) {
            self.cur.pop();
        }
        self.has = n > 0;
        Ok(())
    }
}

/// Runs `comm`.
pub fn comm(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return fail(ctx, &e),
    };
    let show = [!p.has("1"), !p.has("2"), !p.has("3")];
    let delim = if p.has("z") { 0u8 } else { b'\n' };
    let check = OrderCheck::from_options(&p);
    let seps = p.values("output-delimiter");
    if seps.windows(2).any(|w| w[0] != w[1]) {
        ctx.warn("multiple output delimiters specified");
        return Ok(1);
    }
    let sep: Vec<u8> = match seps.first() {
        Some(&"") => vec![0],
        Some(s) => s.as_bytes().to_vec(),
        None => b"\t".to_vec(),
    };
    match p.operands.len() {
        0 => return fail(ctx, "missing operand"),
        1 => {
            let o = p.operands[0].clone();
            return fail(ctx, &format!("missing operand after '{o}'"));
        }
        2 => {}
        _ => {
            let o = p.operands[2].clone();
            return fail(ctx, &format!("extra operand '{o}'"));
        }
    }
    let names = [p.operands[0].clone(), p.operands[1].clone()];
    let mut files = Vec::new();
    for n in &names {
        if n == "-" {
            files.push(None);
            continue;
        }
        match ctx.open(n) {
            Ok(f) => files.push(Some(f)),
            Err(e) => {
                ctx.warn_io(n, &e);
                return Ok(1);
            }
        }
    }
    let mut stdin: Option<&mut dyn Read> = Some(&mut *ctx.stdin);
    let mut inputs: Vec<Input<'_>> = Vec::new();
    for f in files {
        let r: Box<dyn Read + '_> = match (f, stdin.take()) {
            (Some(f), back) => {
                stdin = back;
                Box::new(f)
            }
            (None, Some(s)) => Box::new(s),
            (None, None) => Box::new(std::io::empty()),
        };
        inputs.push(Input {
            r: BufReader::with_capacity(64 * 1024, r),
            cur: Vec::new(),
            prev: Vec::new(),
            has: false,
            warned: false,
        });
    }
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut totals = [0u64; 3];
    let mut seen_unpairable = false;
    let mut fatal: Option<String> = None;
    let mut io_err = None;
    for (k, inp) in inputs.iter_mut().enumerate() {
        if let Err(e) = inp.advance(delim) {
            io_err = Some((k, e));
        }
    }
    // Disjoint borrows: stdin is held by the inputs; stdout/stderr are written directly.
    let stdout = &mut *ctx.stdout;
    let stderr = &mut *ctx.stderr;
    let mut write_err = None;
    let mut warned_any = false;
    'outer: while io_err.is_none() && (inputs[0].has || inputs[1].has) {
        let order = match (inputs[0].has, inputs[1].has) {
            (false, _) => std::cmp::Ordering::Greater,
            (_, false) => std::cmp::Ordering::Less,
            _ => inputs[0].cur.cmp(&inputs[1].cur),
        };
        let col = match order {
            std::cmp::Ordering::Equal => 2,
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Greater => 1,
        };
        if col != 2 {
            seen_unpairable = true;
        }
        totals[col] += 1;
        if show[col] {
            for _ in show[..col].iter().filter(|s| **s) {
                buf.extend_from_slice(&sep);
            }
            let line = if col == 0 {
                &inputs[0].cur
            } else {
                &inputs[1].cur
            };
            buf.extend_from_slice(line);
            buf.push(delim);
        }
        let steps: &[usize] = match col {
            0 => &[0],
            1 => &[1],
            _ => &[0, 1],
        };
        for &k in steps {
            if let Err(e) = inputs[k].advance(delim) {
                io_err = Some((k, e));
                break 'outer;
            }
            let inp = &mut inputs[k];
            if inp.has && check.active(seen_unpairable) && !inp.warned && inp.prev > inp.cur {
                let msg = format!("file {} is not in sorted order", k + 1);
                if check == OrderCheck::Enabled {
                    fatal = Some(msg);
                    break 'outer;
                }
                inp.warned = true;
                warned_any = true;
                // Keep the warning in order with the output before it.
                if let Err(e) = stdout.write_all(&buf).and_then(|_| stdout.flush()) {
                    write_err = Some(e);
                    break 'outer;
                }
                buf.clear();
                let _ = writeln!(stderr, "comm: {msg}");
            }
        }
        if buf.len() >= 64 * 1024 {
            if let Err(e) = stdout.write_all(&buf) {
                write_err = Some(e);
                break;
            }
            buf.clear();
        }
    }
    drop(inputs);
    let _ = stdin;
    if let Some(e) = write_err {
        return Ok(ctx.write_failed(&e));
    }
    let mut out = Out::new(ctx);
    out.write(&buf);
    if let Some((k, e)) = io_err {
        out.flush();
        let n = names[k].clone();
        out.ctx().warn_io(n, &e);
        return Ok(out.finish_with(1));
    }
    if let Some(msg) = fatal {
        out.warn(msg);
        return Ok(out.finish_with(1));
    }
    if p.has("total") {
        let mut line = Vec::new();
        for t in totals {
            line.extend_from_slice(t.to_string().as_bytes());
            line.extend_from_slice(&sep);
        }
        line.extend_from_slice(b"total");
        line.push(delim);
        out.write(&line);
    }
    if warned_any {
        out.warn("input is not in sorted order");
        return Ok(out.finish_with(1));
    }
    Ok(out.finish())
}
