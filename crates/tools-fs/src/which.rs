//! `which`: locate programs along `PATH` (the shell's `PATH`, from its environment).

use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Whether `p` names an executable file.
///
/// Inside the roots the answer is decided on the entry the walk reaches
/// ([`UtilCtx::probe`]): a symlink there that leads outside the roots is
/// skipped, as a check by name cannot be answered about a file no check
/// covered. Outside them only the trusted PATH (`[sandbox] path`, which
/// [`safesh_utils::Host::may_read`] allows for this lookup) is looked in: the
/// human's own program directories, whose links go where system programs live.
/// Anything else is skipped, never a reason to stop the script.
fn executable(ctx: &UtilCtx<'_>, p: &Path) -> bool {
    let full = ctx.resolve(p);
    let runnable = |m: std::fs::Metadata| m.is_file() && m.permissions().mode() & 0o111 != 0;
    if ctx.host.may_stat(&full) {
        return ctx.probe(&full, true).is_some_and(runnable);
    }
    // Still decided on the entry reached: a link in a trusted directory that
    // leads anywhere `may_read` does not allow is skipped too.
    ctx.host.may_read(&full)
        && safesh_utils::beneath::metadata(&full, true, |real| {
            if ctx.host.may_read(real) {
                Ok(())
            } else {
                Err(std::io::ErrorKind::PermissionDenied.into())
            }
        })
        .is_ok_and(runnable)
}

/// Runs `which`.
pub fn which(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let mut all = false;
    let mut names = Vec::new();
    let mut opts_done = false;
    for a in ctx.args() {
        if !opts_done && a == "--" {
            opts_done = true;
        } else if !opts_done && a.starts_with('-') && a.len() > 1 {
            if a.bytes().skip(1).all(|c| c == b'a') {
                all = true;
            } else {
                let name = ctx.name().to_string();
                let _ = writeln!(ctx.stderr, "Usage: {name} [-a] args");
                return Ok(2);
            }
        } else {
            names.push(a.clone());
        }
    }
    if names.is_empty() {
        return Ok(1);
    }
    let path = ctx.env.get("PATH").cloned().unwrap_or_default();
    let mut out = Vec::new();
    let mut status = 0;
    for n in &names {
        let mut found = false;
        if n.contains('/') {
            if executable(ctx, Path::new(n)) {
                out.extend_from_slice(n.as_bytes());
                out.push(b'\n');
                found = true;
            }
        } else {
            for dir in path.split(':') {
                let dir = if dir.is_empty() { "." } else { dir };
                let cand = format!("{dir}/{n}");
                if executable(ctx, Path::new(&cand)) {
                    out.extend_from_slice(cand.as_bytes());
                    out.push(b'\n');
                    found = true;
                    if !all {
                        break;
                    }
                }
            }
        }
        if !found {
            status = 1;
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
