//! `readlink`: print a symlink's target, or a canonical file name (`-f -e -m`).

use crate::canon::{Need, canonicalize};
use crate::common::usage;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::ffi::OsStrExt;

const SPEC: Spec = Spec {
    flags: "femnqsvz",
    valued: "",
    long: &[
        ("canonicalize", false, "f"),
        ("canonicalize-existing", false, "e"),
        ("canonicalize-missing", false, "m"),
        ("no-newline", false, "n"),
        ("quiet", false, "q"),
        ("silent", false, "s"),
        ("verbose", false, "v"),
        ("zero", false, "z"),
    ],
    stop_at_operand: false,
};

/// Runs `readlink`.
pub fn readlink(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.operands.is_empty() {
        return Ok(usage(ctx, "missing operand", 1));
    }
    let need = p.opts.iter().rev().find_map(|o| match o.name.as_str() {
        "f" => Some(Need::AllButLast),
        "e" => Some(Need::All),
        "m" => Some(Need::Nothing),
        _ => None,
    });
    let verbose = p.has("v") && !p.has("q") && !p.has("s");
    let mut no_newline = p.has("n");
    if no_newline && p.operands.len() > 1 {
        ctx.warn("ignoring --no-newline with multiple arguments");
        no_newline = false;
    }
    let end: &[u8] = if p.has("z") {
        b"\0"
    } else if no_newline {
        b""
    } else {
        b"\n"
    };
    let mut out = Vec::new();
    let mut status = 0;
    for name in &p.operands {
        let r = match need {
            Some(n) => canonicalize(ctx, name, n, true),
            None => ctx
                .check_stat(name)
                .and_then(|full| ctx.read_link(full))
                .map(|t| t.as_os_str().as_bytes().to_vec()),
        };
        match r {
            Ok(v) => {
                out.extend_from_slice(&v);
                out.extend_from_slice(end);
            }
            Err(e) => {
                if verbose {
                    ctx.warn_io(name, &e);
                }
                status = 1;
            }
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
