//! `which`: locate programs along `PATH` (the shell's `PATH`, from its environment).

use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn executable(ctx: &UtilCtx<'_>, p: &Path) -> bool {
    // A PATH entry outside the roots is skipped, not a reason to stop the script.
    if !ctx.host.may_read(&ctx.resolve(p)) {
        return false;
    }
    match std::fs::metadata(ctx.resolve(p)) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
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
