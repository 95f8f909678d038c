//! `chmod`: change file mode bits (octal or symbolic, `-R`, `-v`, `-c`, `-f`).

use crate::common::{bpath, join_bytes, mode_string, quote, read_dir_sorted, usage};
use crate::mode::{self, Mode};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Write;

struct Opts {
    recursive: bool,
    verbose: bool,
    changes: bool,
    silent: bool,
    mode: Mode,
    umask: u32,
}

/// Runs `chmod`. Arguments like `-w` or `-x` are modes, not options, as in GNU.
pub fn chmod(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let args: Vec<String> = ctx.args().to_vec();
    let (mut recursive, mut verbose, mut changes, mut silent) = (false, false, false, false);
    let mut rest = Vec::new();
    let mut done = false;
    for a in &args {
        if done {
            rest.push(a.clone());
            continue;
        }
        match a.as_str() {
            "--" => done = true,
            "--recursive" => recursive = true,
            "--verbose" => verbose = true,
            "--changes" => changes = true,
            "--silent" | "--quiet" => silent = true,
            "--preserve-root" | "--no-preserve-root" => {}
            s if s.starts_with("--") => {
                return Ok(usage(ctx, &format!("unrecognized option '{s}'"), 1));
            }
            s if s.starts_with('-')
                && s.len() > 1
                && s[1..].bytes().all(|c| b"Rvcf".contains(&c)) =>
            {
                for c in s[1..].bytes() {
                    match c {
                        b'R' => recursive = true,
                        b'v' => verbose = true,
                        b'c' => changes = true,
                        _ => silent = true,
                    }
                }
            }
            s if s.starts_with('-')
                && s.len() > 1
                && s[1..]
                    .bytes()
                    .all(|c| b"rwxXstugoa=+-,01234567".contains(&c)) =>
            {
                rest.push(a.clone())
            }
            s if s.starts_with('-') && s.len() > 1 => {
                let c = s.chars().nth(1).unwrap_or('-');
                return Ok(usage(ctx, &format!("invalid option -- '{c}'"), 1));
            }
            _ => rest.push(a.clone()),
        }
    }
    let Some((spec, files)) = rest.split_first() else {
        return Ok(usage(ctx, "missing operand", 1));
    };
    if files.is_empty() {
        return Ok(usage(
            ctx,
            &format!("missing operand after {}", quote(spec)),
            1,
        ));
    }
    let Some(m) = mode::parse(spec) else {
        return Ok(usage(ctx, &format!("invalid mode: {}", quote(spec)), 1));
    };
    let o = Opts {
        recursive,
        verbose,
        changes,
        silent,
        mode: m,
        umask: mode::umask(),
    };
    let mut out = Vec::new();
    let mut status = 0;
    for f in files {
        if !change(
            ctx,
            &safesh_utils::word_bytes::word_to_bytes(f),
            &o,
            &mut out,
            true,
        ) {
            status = 1;
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}

fn change(ctx: &mut UtilCtx<'_>, name: &[u8], o: &Opts, out: &mut Vec<u8>, top: bool) -> bool {
    if ctx.host.cancelled() {
        return false;
    }
    let shown = safesh_utils::word_bytes::word_from_bytes(name).into_owned();
    let path = bpath(name);
    // The file changed is the one checked: resolved once, no symlink followed
    // by name (one met during -R traversal is not followed at all: GNU -P).
    let full = match ctx.resolve_write(&path, top) {
        Ok(f) => f,
        Err(e) => {
            if !o.silent {
                ctx.warn_io(
                    format_args!("changing permissions of {}", quote(&shown)),
                    &e,
                );
            }
            return false;
        }
    };
    if !top && full.is_symlink() {
        return true;
    }
    let st = match full.metadata() {
        Ok(m) => m,
        Err(e) => {
            if !o.silent {
                ctx.warn_io(format_args!("cannot access {}", quote(&shown)), &e);
            }
            return false;
        }
    };
    let st_mode = st.st_mode;
    let is_dir = st_mode & libc::S_IFMT == libc::S_IFDIR;
    let old = st_mode & 0o7777;
    let new = mode::apply(&o.mode, old, is_dir, o.umask);
    let mut ok = true;
    if let Err(e) = full.set_mode(new) {
        if !o.silent {
            ctx.warn_io(
                format_args!("changing permissions of {}", quote(&shown)),
                &e,
            );
        }
        ok = false;
    } else if o.verbose || (o.changes && old != new) {
        let olds = mode_string(old | (st_mode & libc::S_IFMT));
        let news = mode_string(new | (st_mode & libc::S_IFMT));
        if old == new {
            let _ = writeln!(
                out,
                "mode of {} retained as {:04o} ({})",
                quote(&shown),
                new,
                &news[1..]
            );
        } else {
            let _ = writeln!(
                out,
                "mode of {} changed from {:04o} ({}) to {:04o} ({})",
                quote(&shown),
                old,
                &olds[1..],
                new,
                &news[1..]
            );
        }
    }
    if o.recursive && is_dir {
        match read_dir_sorted(ctx, &path) {
            Ok(names) => {
                for n in names {
                    ok &= change(ctx, &join_bytes(name, &n), o, out, false);
                }
            }
            Err(e) => {
                if !o.silent {
                    ctx.warn_io(format_args!("cannot read directory {}", quote(&shown)), &e);
                }
                ok = false;
            }
        }
    }
    ok
}
