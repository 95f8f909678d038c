//! `tee`: copy standard input to standard output and to files.

use crate::common::usage;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult, WriteMode};
use std::io::Write;

const SPEC: Spec = Spec {
    flags: "aip",
    valued: "",
    long: &[
        ("append", false, "a"),
        ("ignore-interrupts", false, "i"),
        ("output-error", false, "p"),
    ],
    stop_at_operand: false,
};

/// Runs `tee`. A `-` operand is a file named `-`, as in GNU tee.
pub fn tee(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mode = if p.has("a") {
        WriteMode::Append
    } else {
        WriteMode::Truncate
    };
    let mut status = 0;
    let mut files: Vec<(String, Option<safesh_utils::WriteFile>)> = Vec::new();
    for name in &p.operands {
        match ctx.create(name, mode) {
            Ok(f) => files.push((name.clone(), Some(f))),
            Err(e) => {
                ctx.warn_io(name, &e);
                status = 1;
            }
        }
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut stdout_ok = true;
    loop {
        if ctx.host.cancelled() {
            return Ok(130);
        }
        let n = match ctx.stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                ctx.warn_io("standard input", &e);
                status = 1;
                break;
            }
        };
        let chunk = buf.get(..n).unwrap_or(&[]);
        if stdout_ok && let Err(e) = ctx.stdout.write_all(chunk).and_then(|_| ctx.stdout.flush()) {
            {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(141);
                }
                ctx.warn_io("standard output", &e);
                status = 1;
                stdout_ok = false;
            }
        }
        for (name, f) in files.iter_mut() {
            if let Some(file) = f
                && let Err(e) = file.write_all(chunk)
            {
                {
                    let msg = safesh_utils::io_error_text(&e);
                    let tool = ctx.name().to_string();
                    let _ = writeln!(ctx.stderr, "{tool}: {name}: {msg}");
                    status = 1;
                    *f = None;
                }
            }
        }
    }
    Ok(status)
}
