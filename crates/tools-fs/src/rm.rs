//! `rm`: remove files and (with `-r` or `-d`) directories. Interactive modes are
//! refused: there is nobody to answer the prompts.

use crate::common::{base_name, bpath, join_bytes, quote, read_dir_sorted, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Write;

const SPEC: Spec = Spec {
    flags: "fiIrRdv",
    valued: "",
    long: &[
        ("force", false, "f"),
        ("interactive", false, "i"),
        ("recursive", false, "r"),
        ("dir", false, "d"),
        ("verbose", false, "v"),
        ("preserve-root", false, "preserve-root"),
        ("no-preserve-root", false, "no-preserve-root"),
        ("one-file-system", false, "one-file-system"),
    ],
    stop_at_operand: false,
};

struct Opts {
    force: bool,
    recursive: bool,
    dir: bool,
    verbose: bool,
}

/// Removes `name` and everything under it as `rm -rf` would (each entry
/// resolved and checked on its own, removed from the directory checked): for
/// `mv` across filesystems, after the copy. False when something failed
/// (already reported).
pub(crate) fn remove_tree(
    ctx: &mut UtilCtx<'_>,
    name: &[u8],
) -> Result<bool, safesh_utils::Interrupt> {
    let o = Opts {
        force: true,
        recursive: true,
        dir: false,
        verbose: false,
    };
    let mut out = Vec::new();
    remove(ctx, name, &o, &mut out)
}

/// Runs `rm`.
pub fn rm(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.has("i") || p.has("I") {
        ctx.warn("interactive mode (-i, -I, --interactive) is not supported: there is no terminal to answer prompts");
        return Ok(1);
    }
    let o = Opts {
        force: p.has("f"),
        recursive: p.has("r") || p.has("R"),
        dir: p.has("d"),
        verbose: p.has("v"),
    };
    if p.operands.is_empty() {
        if o.force {
            return Ok(0);
        }
        return Ok(usage(ctx, "missing operand", 1));
    }
    let mut out = Vec::new();
    let mut status = 0;
    for name in &p.operands {
        let b = base_name(name.as_bytes());
        if b == b"." || b == b".." {
            ctx.warn(format_args!(
                "refusing to remove '.' or '..' directory: skipping {}",
                quote(name)
            ));
            status = 1;
            continue;
        }
        if o.recursive && !p.has("no-preserve-root") && is_root(&ctx.resolve(name)) {
            ctx.warn(format_args!(
                "it is dangerous to operate recursively on {}",
                quote(name)
            ));
            ctx.warn("use --no-preserve-root to override this failsafe");
            status = 1;
            continue;
        }
        if !remove(
            ctx,
            &safesh_utils::word_bytes::word_to_bytes(name),
            &o,
            &mut out,
        )? {
            status = 1;
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}

/// Removes one path; false when something failed (already reported).
fn remove(
    ctx: &mut UtilCtx<'_>,
    name: &[u8],
    o: &Opts,
    out: &mut Vec<u8>,
) -> Result<bool, safesh_utils::Interrupt> {
    if ctx.host.cancelled() {
        return Ok(false);
    }
    let shown = safesh_utils::word_bytes::word_from_bytes(name).into_owned();
    let path = bpath(name);
    // The entry removed is the one checked: resolved once without following
    // any symlink by name, removed from the directory held.
    let full = match ctx.resolve_write(&path, false) {
        Ok(f) => f,
        Err(e) => {
            if o.force && e.kind() == std::io::ErrorKind::NotFound {
                return Ok(true);
            }
            ctx.warn_io(format_args!("cannot remove {}", quote(&shown)), &e);
            return Ok(false);
        }
    };
    if !full.exists() {
        if o.force {
            return Ok(true);
        }
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        ctx.warn_io(format_args!("cannot remove {}", quote(&shown)), &e);
        return Ok(false);
    }
    if full.is_dir() {
        if !o.recursive {
            if o.dir {
                return Ok(rmdir(ctx, &full, &shown, o, out));
            }
            ctx.warn(format_args!(
                "cannot remove {}: Is a directory",
                quote(&shown)
            ));
            return Ok(false);
        }
        let names = match read_dir_sorted(ctx, &path) {
            Ok(n) => n,
            Err(e) => {
                ctx.warn_io(format_args!("cannot remove {}", quote(&shown)), &e);
                return Ok(false);
            }
        };
        let mut ok = true;
        for n in names {
            ok &= remove(ctx, &join_bytes(name, &n), o, out)?;
        }
        if !ok {
            return Ok(false);
        }
        return Ok(rmdir(ctx, &full, &shown, o, out));
    }
    match full.remove(false) {
        Ok(()) => {
            if o.verbose {
                let _ = writeln!(out, "removed {}", quote(&shown));
            }
            Ok(true)
        }
        Err(e) => {
            ctx.warn_io(format_args!("cannot remove {}", quote(&shown)), &e);
            Ok(false)
        }
    }
}

fn rmdir(
    ctx: &mut UtilCtx<'_>,
    full: &safesh_utils::beneath::Entry,
    shown: &str,
    o: &Opts,
    out: &mut Vec<u8>,
) -> bool {
    match full.remove(true) {
        Ok(()) => {
            if o.verbose {
                let _ = writeln!(out, "removed directory {}", quote(shown));
            }
            true
        }
        Err(e) => {
            ctx.warn_io(format_args!("cannot remove {}", quote(shown)), &e);
            false
        }
    }
}

/// True if `p` names the root directory once `.` and `..` are resolved
/// lexically (`/`, `//`, `/..`, `/tmp/..`); symlinks are not followed.
fn is_root(p: &std::path::Path) -> bool {
    use std::path::Component;
    let mut depth: usize = 0;
    for c in p.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => depth = depth.saturating_sub(1),
            Component::Normal(_) => depth += 1,
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::is_root;
    use std::path::Path;

    #[test]
    fn root_forms() {
        for p in ["/", "//", "/..", "/tmp/..", "/./"] {
            assert!(is_root(Path::new(p)), "{p}");
        }
        for p in ["/tmp", "/tmp/../etc", "/a/b/.."] {
            assert!(!is_root(Path::new(p)), "{p}");
        }
    }
}
