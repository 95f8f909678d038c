//! `mkdir`: make directories (`-p` parents, `-m` mode, `-v` verbose).

use crate::common::{quote, usage};
use crate::mode;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Write;

const SPEC: Spec = Spec {
    flags: "pvZ",
    valued: "m",
    long: &[
        ("parents", false, "p"),
        ("verbose", false, "v"),
        ("mode", true, "m"),
    ],
    stop_at_operand: false,
};

/// Runs `mkdir`.
pub fn mkdir(ctx: &mut UtilCtx<'_>) -> UtilResult {
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
    let m = match p.value("m") {
        Some(s) => match mode::parse(s) {
            Some(m) => Some(m),
            None => {
                ctx.warn("invalid mode");
                return Ok(1);
            }
        },
        None => None,
    };
    let parents = p.has("p");
    let verbose = p.has("v");
    let mut status = 0;
    let mut out = Vec::new();
    for name in &p.operands {
        let mut todo = Vec::new();
        if parents && ctx.probe(name, true).is_some_and(|m| m.is_dir()) {
            continue; // There already: nothing to make, nothing written.
        }
        if parents {
            // Create missing ancestors first, in order.
            let mut acc = String::new();
            let trimmed = name.trim_end_matches('/');
            let comps: Vec<&str> = trimmed.split('/').collect();
            for (i, c) in comps.iter().enumerate() {
                if i > 0 {
                    acc.push('/');
                }
                acc.push_str(c);
                if c.is_empty() || *c == "." || *c == ".." || i + 1 == comps.len() {
                    continue;
                }
                todo.push(acc.clone());
            }
            // Only what is missing below the deepest directory there: an
            // existing ancestor is never written (GNU mkdir -p), so one the
            // policy hides (outside the read roots) is no error.
            if let Some(deepest) = todo
                .iter()
                .rposition(|a| ctx.probe(a, true).is_some_and(|m| m.is_dir()))
            {
                todo.drain(..=deepest);
            }
        }
        let mut failed = false;
        for anc in &todo {
            let is_dir = || ctx.probe(anc, true).is_some_and(|m| m.is_dir());
            if is_dir() {
                continue;
            }
            // Created in the directory checked (no symlink followed by name).
            if let Err(e) = ctx
                .resolve_write(anc, false)
                .and_then(|e| e.create_dir(0o777))
            {
                if e.kind() == std::io::ErrorKind::AlreadyExists && is_dir() {
                    continue;
                }
                ctx.warn_io(format_args!("cannot create directory {}", quote(anc)), &e);
                failed = true;
                break;
            }
            if verbose {
                let _ = writeln!(out, "{}: created directory {}", ctx.name(), quote(anc));
            }
        }
        if failed {
            status = 1;
            continue;
        }
        if parents && ctx.probe(name, true).is_some_and(|m| m.is_dir()) {
            continue; // Made meanwhile.
        }
        let made = ctx.resolve_write(name, false).and_then(|e| {
            e.create_dir(0o777)?;
            Ok(e)
        });
        match made {
            Ok(entry) => {
                if let Some(m) = &m {
                    let um = mode::umask();
                    let newm = mode::apply(m, 0o777 & !um, true, um);
                    let _ = entry.set_mode(newm);
                }
                if verbose {
                    let _ = writeln!(out, "{}: created directory {}", ctx.name(), quote(name));
                }
            }
            Err(e) => {
                ctx.warn_io(format_args!("cannot create directory {}", quote(name)), &e);
                status = 1;
            }
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
