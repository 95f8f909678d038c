//! `printenv`: print the exported environment, or some of its variables.

use crate::common::usage;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};

const SPEC: Spec = Spec {
    flags: "0",
    valued: "",
    long: &[("null", false, "0")],
    stop_at_operand: false,
};

/// Runs `printenv`.
pub fn printenv(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 2)),
    };
    let end = if p.has("0") { b'\0' } else { b'\n' };
    let mut out = Vec::new();
    let mut status = 0;
    if p.operands.is_empty() {
        // The shell keeps its environment in a sorted map, so this is name order
        // rather than the process's environ order (see DIFFERENCES.md).
        for (k, v) in ctx.env.iter() {
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.as_bytes());
            out.push(end);
        }
    } else {
        for name in &p.operands {
            match ctx.env.get(name) {
                Some(v) if !name.contains('=') => {
                    out.extend_from_slice(v.as_bytes());
                    out.push(end);
                }
                _ => status = 1,
            }
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
