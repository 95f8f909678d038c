//! `basename`: strip directory and suffix from file names.

use crate::common::{base_name, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};

const SPEC: Spec = Spec {
    flags: "az",
    valued: "s",
    long: &[
        ("multiple", false, "a"),
        ("suffix", true, "s"),
        ("zero", false, "z"),
    ],
    stop_at_operand: false,
};

/// Runs `basename`.
pub fn basename(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut suffix = p.value("s").map(str::to_string);
    let multiple = p.has("a") || suffix.is_some();
    let end = if p.has("z") { b'\0' } else { b'\n' };
    let mut names = p.operands.clone();
    if names.is_empty() {
        return Ok(usage(ctx, "missing operand", 1));
    }
    if !multiple {
        if names.len() > 2 {
            let extra = names.get(2).cloned().unwrap_or_default();
            return Ok(usage(ctx, &format!("extra operand '{extra}'"), 1));
        }
        if names.len() == 2 {
            suffix = names.pop();
        }
    }
    let mut out = Vec::new();
    for n in &names {
        let n = safesh_utils::word_bytes::word_to_bytes(n);
        let mut b = base_name(&n).to_vec();
        if let Some(s) = &suffix {
            let s = safesh_utils::word_bytes::word_to_bytes(s);
            let s = s.as_ref();
            if !s.is_empty() && b.len() > s.len() && b.ends_with(s) && b != b"/" {
                b.truncate(b.len() - s.len());
            }
        }
        out.extend_from_slice(&b);
        out.push(end);
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(0)
}
