//! `realpath`: print the resolved absolute (or relative) file name.

use crate::canon::{Need, canonicalize, relative};
use crate::common::usage;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};

const SPEC: Spec = Spec {
    flags: "emsqzLP",
    valued: "",
    long: &[
        ("canonicalize-existing", false, "e"),
        ("canonicalize-missing", false, "m"),
        ("strip", false, "s"),
        ("no-symlinks", false, "s"),
        ("quiet", false, "q"),
        ("zero", false, "z"),
        ("logical", false, "L"),
        ("physical", false, "P"),
        ("relative-to", true, "relative-to"),
        ("relative-base", true, "relative-base"),
    ],
    stop_at_operand: false,
};

/// Runs `realpath`.
pub fn realpath(ctx: &mut UtilCtx<'_>) -> UtilResult {
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
    let need = if p.has("e") {
        Need::All
    } else if p.has("m") {
        Need::Nothing
    } else {
        Need::AllButLast
    };
    let resolve = !p.has("s");
    let end = if p.has("z") { b'\0' } else { b'\n' };
    let base_of = |ctx: &mut UtilCtx<'_>, opt: &str| -> Result<Option<Vec<u8>>, ()> {
        match p.value(opt) {
            None => Ok(None),
            Some(d) => match canonicalize(ctx, d, need, resolve) {
                Ok(v) => Ok(Some(v)),
                Err(e) => {
                    ctx.warn_io(d, &e);
                    Err(())
                }
            },
        }
    };
    let Ok(rel_to) = base_of(ctx, "relative-to") else {
        return Ok(1);
    };
    let Ok(rel_base) = base_of(ctx, "relative-base") else {
        return Ok(1);
    };
    let mut out = Vec::new();
    let mut status = 0;
    for name in &p.operands {
        match canonicalize(ctx, name, need, resolve) {
            Ok(r) => {
                let under = |b: &Vec<u8>| {
                    r == *b
                        || b.as_slice() == b"/"
                        || r.starts_with(b) && r.get(b.len()) == Some(&b'/')
                };
                let shown = match (&rel_to, &rel_base) {
                    (Some(t), Some(b)) if under(b) && (t == b || t.starts_with(b)) => {
                        relative(&r, t)
                    }
                    (Some(t), None) => relative(&r, t),
                    (None, Some(b)) if under(b) => relative(&r, b),
                    _ => r,
                };
                out.extend_from_slice(&shown);
                out.push(end);
            }
            Err(e) => {
                if !p.has("q") {
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
