//! `mv`: move (rename) files, copying across file systems.

use crate::common::{quote, usage};
use crate::cp::{Opts, copy_one};
use crate::targets;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Write;

const SPEC: Spec = Spec {
    flags: "fnvTiu",
    valued: "t",
    long: &[
        ("force", false, "f"),
        ("no-clobber", false, "n"),
        ("verbose", false, "v"),
        ("no-target-directory", false, "T"),
        ("target-directory", true, "t"),
        ("interactive", false, "i"),
        ("update", false, "u"),
    ],
    stop_at_operand: false,
};

/// Runs `mv`.
pub fn mv(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    // -f after -i wins in GNU; an interactive mv we cannot serve.
    let interactive = p
        .opts
        .iter()
        .rev()
        .find(|o| o.name == "i" || o.name == "f" || o.name == "n")
        .is_some_and(|o| o.name == "i");
    if interactive {
        ctx.warn("interactive mode (-i) is not supported: there is no terminal to answer prompts");
        return Ok(1);
    }
    let pairs = match targets::pairs(ctx, &p.operands, p.value("t"), p.has("T")) {
        Ok(v) => v,
        Err((msg, hint)) => {
            if hint {
                return Ok(usage(ctx, &msg, 1));
            }
            ctx.warn(msg);
            return Ok(1);
        }
    };
    let mut out = Vec::new();
    let mut status = 0;
    for (src, dst) in pairs {
        let sfull = match ctx.check_write(&src) {
            Ok(f) => f,
            Err(e) => {
                ctx.warn_io(format_args!("cannot move {}", quote(&src)), &e);
                status = 1;
                continue;
            }
        };
        let smeta = match ctx.stat(&sfull, false) {
            Ok(m) => m,
            Err(e) => {
                ctx.warn_io(format_args!("cannot stat {}", quote(&src)), &e);
                status = 1;
                continue;
            }
        };
        let dfull = match ctx.check_write(&dst) {
            Ok(f) => f,
            Err(e) => {
                ctx.warn_io(
                    format_args!("cannot move {} to {}", quote(&src), quote(&dst)),
                    &e,
                );
                status = 1;
                continue;
            }
        };
        let dmeta = ctx.probe(&dfull, false);
        if let Some(dm) = &dmeta {
            use std::os::unix::fs::MetadataExt;
            if dm.dev() == smeta.dev() && dm.ino() == smeta.ino() {
                ctx.warn(format_args!(
                    "{} and {} are the same file",
                    quote(&src),
                    quote(&dst)
                ));
                status = 1;
                continue;
            }
            if p.has("n") {
                continue;
            }
            if p.has("u") && dm.mtime() >= smeta.mtime() {
                continue;
            }
            if dm.is_dir() && !smeta.is_dir() {
                ctx.warn(format_args!(
                    "cannot overwrite directory {} with non-directory",
                    quote(&dst)
                ));
                status = 1;
                continue;
            }
            if !dm.is_dir() && smeta.is_dir() {
                ctx.warn(format_args!(
                    "cannot overwrite non-directory {} with directory {}",
                    quote(&dst),
                    quote(&src)
                ));
                status = 1;
                continue;
            }
        }
        if smeta.is_dir() && targets::inside(ctx, &src, &dst) {
            ctx.warn(format_args!(
                "cannot move {} to a subdirectory of itself, {}",
                quote(&src),
                quote(&dst)
            ));
            status = 1;
            continue;
        }
        // Renamed between the entries checked: both resolved once without
        // following a symlink by name, the rename acting on the held directories.
        let renamed = ctx.resolve_write(&src, false).and_then(|from| {
            let to = ctx.resolve_write(&dst, false)?;
            from.rename_to(&to)?;
            Ok(from)
        });
        match renamed.map(|_| ()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                let o = Opts {
                    recursive: true,
                    preserve: true,
                    no_clobber: false,
                    force: true,
                    verbose: false,
                    deref: false,
                    update: false,
                };
                let mut scratch = Vec::new();
                if !copy_one(ctx, src.as_bytes(), dst.as_bytes(), &o, &mut scratch, true)? {
                    status = 1;
                    continue;
                }
                // Entry by entry, each one checked (not `remove_dir_all` by name).
                let removed = if smeta.is_dir() {
                    if crate::rm::remove_tree(ctx, src.as_bytes())? {
                        Ok(())
                    } else {
                        status = 1;
                        continue;
                    }
                } else {
                    ctx.resolve_write(&src, false).and_then(|e| e.remove(false))
                };
                if let Err(e) = removed {
                    ctx.warn_io(format_args!("cannot remove {}", quote(&src)), &e);
                    status = 1;
                    continue;
                }
            }
            Err(e) => {
                ctx.warn_io(
                    format_args!("cannot move {} to {}", quote(&src), quote(&dst)),
                    &e,
                );
                status = 1;
                continue;
            }
        }
        if p.has("v") {
            let _ = writeln!(out, "renamed {} -> {}", quote(&src), quote(&dst));
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
