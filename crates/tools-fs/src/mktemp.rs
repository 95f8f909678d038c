//! `mktemp`: create a uniquely named temporary file or directory.

use crate::common::{quote, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult, WriteMode};
use std::os::unix::fs::PermissionsExt;

const SPEC: Spec = Spec {
    flags: "duqt",
    valued: "p",
    long: &[
        ("directory", false, "d"),
        ("dry-run", false, "u"),
        ("quiet", false, "q"),
        ("tmpdir", true, "p"),
        ("suffix", true, "suffix"),
    ],
    stop_at_operand: false,
};

const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn random_bytes(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    // SAFETY: the buffer is valid for `n` bytes.
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), n, 0) };
    if got < 0 || got as usize != n {
        // Fall back on the clock: names need only be unlikely to collide.
        let t = jiff::Timestamp::now().as_nanosecond() as u64;
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (t.rotate_left((i * 7) as u32) ^ (i as u64 * 0x9e37_79b9)) as u8;
        }
    }
    buf
}

/// Runs `mktemp`.
pub fn mktemp(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.operands.len() > 1 {
        return Ok(usage(ctx, "too many templates", 1));
    }
    let quiet = p.has("q");
    let given = p.operands.first().cloned();
    let suffix = p.value("suffix").unwrap_or("").to_string();
    let tmpdir = p
        .value("p")
        .map(str::to_string)
        .or_else(|| ctx.env.get("TMPDIR").filter(|s| !s.is_empty()).cloned())
        .unwrap_or_else(|| "/tmp".to_string());
    let (template, in_tmp) = match &given {
        None => ("tmp.XXXXXXXXXX".to_string(), true),
        Some(t) => (t.clone(), p.has("t") || p.has("p")),
    };
    if in_tmp && given.is_some() && p.has("t") && template.contains('/') {
        if !quiet {
            ctx.warn(format_args!(
                "invalid template, {}, contains directory separator",
                quote(&template)
            ));
        }
        return Ok(1);
    }
    let xs = template.bytes().rev().take_while(|&c| c == b'X').count();
    if xs < 3 {
        if !quiet {
            ctx.warn(format_args!(
                "too few X's in template {}",
                quote(&format!("{template}{suffix}"))
            ));
        }
        return Ok(1);
    }
    let prefix = &template[..template.len() - xs];
    let dir_prefix = if in_tmp {
        if tmpdir.ends_with('/') {
            tmpdir.clone()
        } else {
            format!("{tmpdir}/")
        }
    } else {
        String::new()
    };
    for _ in 0..100 {
        if ctx.host.cancelled() {
            return Ok(130);
        }
        let rnd: String = random_bytes(xs)
            .iter()
            .map(|b| {
                CHARS
                    .get(usize::from(*b) % CHARS.len())
                    .copied()
                    .unwrap_or(b'X') as char
            })
            .collect();
        let name = format!("{dir_prefix}{prefix}{rnd}{suffix}");
        let made = if p.has("u") {
            if ctx.probe(&name, false).is_some() {
                Err(std::io::ErrorKind::AlreadyExists.into())
            } else {
                Ok(())
            }
        } else if p.has("d") {
            ctx.resolve_write(&name, false)
                .and_then(|e| e.create_dir(0o700))
        } else {
            ctx.create(&name, WriteMode::CreateNew)
                .and_then(|f| f.set_permissions(std::fs::Permissions::from_mode(0o600)))
        };
        match made {
            Ok(()) => {
                if let Err(e) = writeln!(ctx.stdout, "{name}") {
                    return Ok(ctx.write_failed(&e));
                }
                return Ok(0);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                if !quiet {
                    let what = if p.has("d") { "directory" } else { "file" };
                    let shown = format!("{dir_prefix}{template}{suffix}");
                    ctx.warn_io(
                        format_args!("failed to create {what} via template {}", quote(&shown)),
                        &e,
                    );
                }
                return Ok(1);
            }
        }
    }
    ctx.warn("too many attempts");
    Ok(1)
}
