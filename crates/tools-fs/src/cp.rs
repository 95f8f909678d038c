//! `cp`: copy files and directories.

use crate::common::{bpath, join_bytes, quote, read_dir_sorted, usage};
use crate::targets;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult, WriteMode};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const SPEC: Spec = Spec {
    flags: "rRapfnvTdLPHiux",
    valued: "t",
    long: &[
        ("recursive", false, "r"),
        ("archive", false, "a"),
        ("force", false, "f"),
        ("no-clobber", false, "n"),
        ("verbose", false, "v"),
        ("no-target-directory", false, "T"),
        ("target-directory", true, "t"),
        ("no-dereference", false, "P"),
        ("dereference", false, "L"),
        ("interactive", false, "i"),
        ("update", false, "u"),
        ("preserve", true, "preserve"),
    ],
    stop_at_operand: false,
};

/// How a copy behaves (shared with `mv`'s cross-device fallback).
pub(crate) struct Opts {
    /// Copy directories (`-r`, `-R`, `-a`).
    pub recursive: bool,
    /// Keep mode, ownership and times (`-p`, `-a`).
    pub preserve: bool,
    /// Never overwrite (`-n`).
    pub no_clobber: bool,
    /// Remove a destination that cannot be opened (`-f`).
    pub force: bool,
    /// Report each copy (`-v`).
    pub verbose: bool,
    /// Follow symlinks in sources (the default without `-r`/`-P`/`-d`).
    pub deref: bool,
    /// Copy only when the source is newer (`-u`).
    pub update: bool,
}

/// Runs `cp`.
pub fn cp(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.has("i") {
        ctx.warn("interactive mode (-i) is not supported: there is no terminal to answer prompts");
        return Ok(1);
    }
    let recursive = p.has("r") || p.has("R") || p.has("a");
    let o = Opts {
        recursive,
        preserve: p.has("p") || p.has("a") || p.has("preserve"),
        no_clobber: p.has("n"),
        force: p.has("f"),
        verbose: p.has("v"),
        deref: p.has("L") || !(recursive || p.has("P") || p.has("d") || p.has("a")),
        update: p.has("u"),
    };
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
        if !copy_one(
            ctx,
            &safesh_utils::word_bytes::word_to_bytes(&src),
            &safesh_utils::word_bytes::word_to_bytes(&dst),
            &o,
            &mut out,
            true,
        )? {
            status = 1;
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}

/// Copies `src` to `dst`; false when it failed (already reported).
pub(crate) fn copy_one(
    ctx: &mut UtilCtx<'_>,
    src: &[u8],
    dst: &[u8],
    o: &Opts,
    out: &mut Vec<u8>,
    top: bool,
) -> Result<bool, safesh_utils::Interrupt> {
    if ctx.host.cancelled() {
        return Ok(false);
    }
    let ss = safesh_utils::word_bytes::word_from_bytes(src).into_owned();
    let ds = safesh_utils::word_bytes::word_from_bytes(dst).into_owned();
    // `cp /dev/stdin f`: the script's stream (never the process's), copied as
    // a file's contents.
    if let Some(from) = ctx.host.open_descriptor(&ctx.resolve(bpath(src)), false) {
        let r = from.and_then(|mut from| {
            let mut to = ctx.create(bpath(dst), WriteMode::Truncate)?;
            std::io::copy(&mut from, &mut to).map(|_| ())
        });
        if let Err(e) = r {
            ctx.warn_io(format_args!("cannot copy {}", quote(&ss)), &e);
            return Ok(false);
        }
        return Ok(true);
    }
    let sfull = match ctx.check_read(bpath(src)) {
        Ok(f) => f,
        Err(e) => {
            ctx.warn_io(format_args!("cannot stat {}", quote(&ss)), &e);
            return Ok(false);
        }
    };
    // Decided on the entry reached (a symlink on the way flipped outside is
    // checked, not followed by name).
    let smeta = ctx.stat(&sfull, o.deref);
    let smeta = match smeta {
        Ok(m) => m,
        Err(e) => {
            ctx.warn_io(format_args!("cannot stat {}", quote(&ss)), &e);
            return Ok(false);
        }
    };
    let dfull = ctx.resolve(bpath(dst));
    let dmeta = ctx.probe(&dfull, false);
    if smeta.is_dir() {
        if !o.recursive {
            ctx.warn(format_args!(
                "-r not specified; omitting directory {}",
                quote(&ss)
            ));
            return Ok(false);
        }
        if top && targets::inside(ctx, &ss, &ds) {
            // GNU copies part of the tree (in readdir order) before giving up;
            // we refuse up front (see DIFFERENCES.md).
            ctx.warn(format_args!(
                "cannot copy a directory, {}, into itself, {}",
                quote(&ss),
                quote(&ds)
            ));
            return Ok(false);
        }
        match &dmeta {
            Some(m) if !m.is_dir() => {
                ctx.warn(format_args!(
                    "cannot overwrite non-directory {} with directory {}",
                    quote(&ds),
                    quote(&ss)
                ));
                return Ok(false);
            }
            Some(_) => {}
            None => {
                // Made in the directory checked (no symlink followed by name).
                if let Err(e) = ctx
                    .resolve_write(&dfull, false)
                    .and_then(|e| e.create_dir(0o777))
                {
                    ctx.warn_io(format_args!("cannot create directory {}", quote(&ds)), &e);
                    return Ok(false);
                }
                if o.verbose {
                    out.extend_from_slice(&safesh_utils::word_bytes::word_to_bytes(&format!(
                        "{} -> {}\n",
                        quote(&ss),
                        quote(&ds)
                    )));
                }
            }
        }
        let mut ok = true;
        match read_dir_sorted(ctx, &sfull) {
            Ok(names) => {
                for n in names {
                    ok &= copy_one(
                        ctx,
                        &join_bytes(src, &n),
                        &join_bytes(dst, &n),
                        o,
                        out,
                        false,
                    )?;
                }
            }
            Err(e) => {
                ctx.warn_io(format_args!("cannot access {}", quote(&ss)), &e);
                ok = false;
            }
        }
        let mode = if o.preserve || dmeta.is_none() {
            smeta.mode()
                & 0o7777
                & if o.preserve {
                    0o7777
                } else {
                    !crate::mode::umask()
                }
        } else {
            dmeta.as_ref().map_or(0o755, |m| m.mode() & 0o7777)
        };
        let _ = ctx
            .resolve_write(&dfull, true)
            .and_then(|e| e.set_mode(mode));
        if o.preserve {
            preserve_times(ctx, &dfull, &smeta);
        }
        return Ok(ok);
    }
    if let Some(dm) = &dmeta {
        if dm.dev() == smeta.dev() && dm.ino() == smeta.ino() {
            ctx.warn(format_args!(
                "{} and {} are the same file",
                quote(&ss),
                quote(&ds)
            ));
            return Ok(false);
        }
        if o.no_clobber {
            return Ok(true);
        }
        if o.update && dm.mtime() >= smeta.mtime() {
            return Ok(true);
        }
        if dm.is_dir() {
            ctx.warn(format_args!(
                "cannot overwrite directory {} with non-directory",
                quote(&ds)
            ));
            return Ok(false);
        }
    }
    if smeta.file_type().is_symlink() {
        let r = safesh_utils::resolve_read(ctx.host, &sfull, false).and_then(|from| {
            let t = from.read_link()?;
            let to = ctx.resolve_write(&dfull, false)?;
            if dmeta.is_some() {
                to.remove(false)?;
            }
            to.symlink(&t)
        });
        if let Err(e) = r {
            ctx.warn_io(
                format_args!("cannot create symbolic link {}", quote(&ds)),
                &e,
            );
            return Ok(false);
        }
    } else {
        let r = (|| -> std::io::Result<()> {
            let mut from = ctx.open(&sfull)?;
            let mut to = match ctx.create(&dfull, WriteMode::Truncate) {
                Ok(f) => f,
                Err(e) if o.force && dmeta.is_some() => {
                    let _ = e;
                    ctx.resolve_write(&dfull, false)?.remove(false)?;
                    ctx.create(&dfull, WriteMode::Truncate)?
                }
                Err(e) => return Err(e),
            };
            std::io::copy(&mut from, &mut to)?;
            if o.preserve || dmeta.is_none() {
                let mask = if o.preserve {
                    0o7777
                } else {
                    !crate::mode::umask() & 0o777
                };
                to.set_permissions(std::fs::Permissions::from_mode(smeta.mode() & mask))?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            ctx.warn_io(
                format_args!("cannot create regular file {}", quote(&ds)),
                &e,
            );
            return Ok(false);
        }
    }
    if o.preserve {
        preserve_times(ctx, &dfull, &smeta);
        // (Failure, not root, is ignored like GNU -p does for ownership.)
        let _ = ctx
            .resolve_write(&dfull, false)
            .and_then(|e| e.chown(smeta.uid(), smeta.gid()));
    }
    if o.verbose {
        out.extend_from_slice(&safesh_utils::word_bytes::word_to_bytes(&format!(
            "{} -> {}\n",
            quote(&ss),
            quote(&ds)
        )));
    }
    Ok(true)
}

/// Gives the entry checked at `dst` (no symlink followed by name) the times of `m`.
fn preserve_times(ctx: &UtilCtx<'_>, dst: &std::path::Path, m: &std::fs::Metadata) {
    let times = [
        libc::timespec {
            tv_sec: m.atime() as libc::time_t,
            tv_nsec: m.atime_nsec() as libc::c_long,
        },
        libc::timespec {
            tv_sec: m.mtime() as libc::time_t,
            tv_nsec: m.mtime_nsec() as libc::c_long,
        },
    ];
    let _ = ctx
        .resolve_write(dst, false)
        .and_then(|e| e.set_times(times));
}
