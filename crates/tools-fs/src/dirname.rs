//! `dirname`: strip the last component from file names.

use crate::common::usage;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};

const SPEC: Spec = Spec {
    flags: "z",
    valued: "",
    long: &[("zero", false, "z")],
    stop_at_operand: false,
};

/// The directory part of `p`, as POSIX `dirname` defines it.
pub fn dir_of(p: &[u8]) -> &[u8] {
    let mut end = p.len();
    while end > 1 && p.get(end - 1) == Some(&b'/') {
        end -= 1;
    }
    let t = p.get(..end).unwrap_or(p);
    let Some(slash) = t.iter().rposition(|&c| c == b'/') else {
        return b".";
    };
    let mut e = slash;
    while e > 0 && t.get(e - 1) == Some(&b'/') {
        e -= 1;
    }
    if e == 0 {
        return b"/";
    }
    t.get(..e).unwrap_or(b".")
}

/// Runs `dirname`.
pub fn dirname(ctx: &mut UtilCtx<'_>) -> UtilResult {
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
    let end = if p.has("z") { b'\0' } else { b'\n' };
    let mut out = Vec::new();
    for n in &p.operands {
        out.extend_from_slice(dir_of(&safesh_utils::word_bytes::word_to_bytes(n)));
        out.push(end);
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(0)
}
