//! `rmdir`: remove empty directories (`-p` parents, `-v` verbose,
//! `--ignore-fail-on-non-empty`).

use crate::common::{quote, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult, io_error_text};

const SPEC: Spec = Spec {
    flags: "pv",
    valued: "",
    long: &[
        ("parents", false, "p"),
        ("verbose", false, "v"),
        (
            "ignore-fail-on-non-empty",
            false,
            "ignore-fail-on-non-empty",
        ),
    ],
    stop_at_operand: false,
};

/// Runs `rmdir`.
pub fn rmdir(ctx: &mut UtilCtx<'_>) -> UtilResult {
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
    let parents = p.has("p");
    let verbose = p.has("v");
    let ignore_non_empty = p.has("ignore-fail-on-non-empty");
    let mut status = 0;
    for op in &p.operands {
        let mut target = op.trim_end_matches('/').to_string();
        if target.is_empty() {
            target = op.clone();
        }
        loop {
            if verbose {
                let line = format!("rmdir: removing directory, {}\n", quote(&target));
                if let Err(e) = ctx.stdout.write_all(line.as_bytes()) {
                    return Ok(ctx.write_failed(&e));
                }
            }
            let removed = ctx
                .resolve_write(&target, false)
                .and_then(|e| e.remove(true));
            if let Err(e) = removed {
                let non_empty = e.raw_os_error() == Some(libc::ENOTEMPTY)
                    || e.raw_os_error() == Some(libc::EEXIST);
                if !(ignore_non_empty && non_empty) {
                    let msg = io_error_text(&e);
                    ctx.warn(format_args!("failed to remove {}: {msg}", quote(&target)));
                    status = 1;
                }
                break;
            }
            if !parents {
                break;
            }
            match target.rsplit_once('/') {
                Some((parent, _)) if !parent.is_empty() => {
                    target = parent.trim_end_matches('/').to_string()
                }
                _ => break,
            }
            if target.is_empty() {
                break;
            }
        }
    }
    let _ = ctx.stdout.flush();
    Ok(status)
}
