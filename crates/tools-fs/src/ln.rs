//! `ln`: make hard or symbolic links.

use crate::common::{base_name, bpath, join_bytes, quote, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Write;

const SPEC: Spec = Spec {
    flags: "sfnTvrLPb",
    valued: "t",
    long: &[
        ("symbolic", false, "s"),
        ("force", false, "f"),
        ("no-dereference", false, "n"),
        ("no-target-directory", false, "T"),
        ("target-directory", true, "t"),
        ("verbose", false, "v"),
        ("relative", false, "r"),
        ("logical", false, "L"),
        ("physical", false, "P"),
    ],
    stop_at_operand: false,
};

/// Runs `ln`.
pub fn ln(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let ops = p.operands.clone();
    let symbolic = p.has("s");
    let no_deref = p.has("n");
    let is_dir = |ctx: &UtilCtx<'_>, d: &str| {
        if no_deref
            && ctx
                .probe(d, false)
                .is_some_and(|m| m.file_type().is_symlink())
        {
            return false;
        }
        ctx.probe(d, true).is_some_and(|m| m.is_dir())
    };
    let mut pairs: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(t) = p.value("t") {
        if ops.is_empty() {
            return Ok(usage(ctx, "missing file operand", 1));
        }
        for s in &ops {
            pairs.push((s.clone(), join_bytes(t.as_bytes(), base_name(s.as_bytes()))));
        }
    } else {
        match ops.as_slice() {
            [] => return Ok(usage(ctx, "missing file operand", 1)),
            [one] => {
                if p.has("T") {
                    return Ok(usage(
                        ctx,
                        &format!("missing destination file operand after {}", quote(one)),
                        1,
                    ));
                }
                pairs.push((one.clone(), base_name(one.as_bytes()).to_vec()));
            }
            [src, dst] if p.has("T") || !is_dir(ctx, dst) => {
                pairs.push((src.clone(), dst.as_bytes().to_vec()))
            }
            _ => {
                let Some((dir, srcs)) = ops.split_last() else {
                    return Ok(1);
                };
                if p.has("T") {
                    return Ok(usage(
                        ctx,
                        &format!(
                            "extra operand {}",
                            quote(ops.get(2).map(String::as_str).unwrap_or(""))
                        ),
                        1,
                    ));
                }
                if !is_dir(ctx, dir) {
                    ctx.warn(format_args!("target {}: Not a directory", quote(dir)));
                    return Ok(1);
                }
                for s in srcs {
                    pairs.push((
                        s.clone(),
                        join_bytes(dir.as_bytes(), base_name(s.as_bytes())),
                    ));
                }
            }
        }
    }
    let mut status = 0;
    let mut out = Vec::new();
    for (src, dst) in pairs {
        let dst_s = String::from_utf8_lossy(&dst).into_owned();
        let dpath = bpath(&dst);
        let kind = if symbolic {
            "symbolic link"
        } else {
            "hard link"
        };
        let full = match ctx.check_write(&dpath) {
            Ok(f) => f,
            Err(e) => {
                ctx.warn_io(
                    format_args!("failed to create {kind} {}", quote(&dst_s)),
                    &e,
                );
                status = 1;
                continue;
            }
        };
        let existing = ctx.probe(&full, false);
        if p.has("f") && existing.is_some() {
            if existing.is_some_and(|m| m.is_dir()) {
                ctx.warn(format_args!(
                    "{}: cannot overwrite directory",
                    quote(&dst_s)
                ));
                status = 1;
                continue;
            }
            let _ = ctx
                .resolve_write(&full, false)
                .and_then(|e| e.remove(false));
        }
        let target = if symbolic && p.has("r") {
            relative_target(ctx, &src, &dst_s)
        } else {
            src.clone()
        };
        // Made in the directory checked, from the entry checked (no symlink
        // followed by name on either side).
        let r = ctx.resolve_write(&full, false).and_then(|to| {
            if symbolic {
                to.symlink(&safesh_utils::word_bytes::word_to_os(&target))
            } else {
                // A hard link is a second name for the file that can write it:
                // the file must be one the script may write (not a protected
                // name, not under a read-only root).
                ctx.resolve_write(&src, false)?.hard_link_to(&to)
            }
        });
        match r {
            Ok(()) => {
                if p.has("v") {
                    let _ = writeln!(out, "{} -> {}", quote(&dst_s), quote(&target));
                }
            }
            Err(e) => {
                if !symbolic
                    && e.kind() == std::io::ErrorKind::NotFound
                    && ctx.probe(&src, true).is_none()
                {
                    ctx.warn_io(format_args!("failed to access {}", quote(&src)), &e);
                } else {
                    ctx.warn_io(
                        format_args!("failed to create {kind} {}", quote(&dst_s)),
                        &e,
                    );
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

/// `ln -sr`: the target as a path relative to the link's directory (both
/// resolved as `realpath -m` would).
fn relative_target(ctx: &UtilCtx<'_>, target: &str, link: &str) -> String {
    use crate::canon::{Need, canonicalize, relative};
    let dir = crate::dirname::dir_of(link.as_bytes()).to_vec();
    let dir = String::from_utf8_lossy(&dir).into_owned();
    match (
        canonicalize(ctx, target, Need::Nothing, true),
        canonicalize(ctx, &dir, Need::Nothing, true),
    ) {
        (Ok(t), Ok(d)) => String::from_utf8_lossy(&relative(&t, &d)).into_owned(),
        _ => target.to_string(),
    }
}
