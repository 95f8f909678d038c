//! `find`: walk directory trees evaluating an expression per file. Entries are
//! visited in name order (GNU uses readdir order, which is unpredictable).

mod expr;
mod printf;

use crate::common::{bpath, group_name, join_bytes, read_dir_sorted, user_name};
use expr::{Exec, Expr, Globals, Parser, PermKind, Stamp};
use safesh_utils::{Interrupt, UtilCtx, UtilResult};
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

/// One file being looked at.
pub struct Node {
    /// The path as printed.
    pub path: Vec<u8>,
    /// The absolute path, for file operations.
    pub full: Vec<u8>,
    /// The starting point it was found under.
    pub start: Vec<u8>,
    /// Depth below the starting point.
    pub depth: usize,
    /// Its metadata (`lstat`, or `stat` when following links).
    pub meta: Metadata,
    /// For a symlink: its target, read from the link decided on.
    pub link: Option<Vec<u8>>,
    /// For a symlink: what it leads to (decided on), or the error (`ELOOP`).
    pub target: Option<std::io::Result<Metadata>>,
}

/// Pending `-exec ... {} +` arguments.
struct Batch {
    argv: Vec<String>,
    dir: Option<Vec<u8>>,
    items: Vec<String>,
    size: usize,
}

struct Run<'c, 'a> {
    ctx: &'c mut UtilCtx<'a>,
    out: Vec<u8>,
    status: i32,
    quit: bool,
    prune: bool,
    reference: (i64, i64),
    batches: Vec<Option<Batch>>,
    tz: jiff::tz::TimeZone,
    g: Globals,
    follow_cmdline: bool,
}

const BATCH_LIMIT: usize = 128 * 1024;

/// Runs `find`.
pub fn find(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, true) {
        return Ok(st);
    }
    let args: Vec<String> = ctx.args().to_vec();
    let mut i = 0;
    let mut follow = false;
    let mut follow_cmdline = false;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" => follow_cmdline = true,
            "-L" => follow = true,
            "-P" => {
                follow = false;
                follow_cmdline = false;
            }
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let mut starts: Vec<String> = Vec::new();
    while let Some(a) = args.get(i) {
        if (a.starts_with('-') && a.len() > 1) || a == "(" || a == "!" {
            break;
        }
        starts.push(a.clone());
        i += 1;
    }
    let expr_args = args.get(i..).unwrap_or(&[]);
    let lookup_ctx: &UtilCtx<'_> = ctx;
    let newer = |f: &str| -> Result<expr::Times, String> {
        let m = lookup_ctx
            .check_stat(f)
            .and_then(|full| lookup_ctx.stat(full, true))
            .map_err(|e| format!("'{f}': {}", safesh_utils::io_error_text(&e)))?;
        Ok((
            (m.mtime(), m.mtime_nsec()),
            (m.atime(), m.atime_nsec()),
            (m.ctime(), m.ctime_nsec()),
        ))
    };
    let mut parser = Parser::new(expr_args, &newer);
    parser.tz = crate::common::local_tz(ctx);
    let parsed = parser.parse_all();
    let mut g = std::mem::take(&mut parser.g);
    let e = match parsed {
        Ok(e) => e,
        Err(msg) => {
            ctx.warn(msg);
            return Ok(1);
        }
    };
    g.follow |= follow;
    let e = match e {
        None => Expr::Print,
        Some(e) if !g.has_action => Expr::And(Box::new(e), Box::new(Expr::Print)),
        Some(e) => e,
    };
    if starts.is_empty() {
        starts.push(".".into());
    }
    let tz = crate::common::local_tz(ctx);
    let now = jiff::Timestamp::now();
    let mut reference = (now.as_second(), i64::from(now.subsec_nanosecond()));
    if g.daystart {
        let z = now.to_zoned(tz.clone());
        if let Ok(mid) = z.start_of_day() {
            reference = (mid.timestamp().as_second() + 86400, 0);
        }
    }
    let batches = (0..g.batches).map(|_| None).collect();
    let mut run = Run {
        ctx,
        out: Vec::new(),
        status: 0,
        quit: false,
        prune: false,
        reference,
        batches,
        tz,
        g,
        follow_cmdline,
    };
    for s in &starts {
        if run.quit {
            break;
        }
        let full = run.ctx.resolve(s);
        let full = full.as_os_str().as_bytes().to_vec();
        let mut ancestors = Vec::new();
        // The starting point is a word: shown as the bytes it stands for.
        let shown = safesh_utils::word_bytes::word_to_bytes(s);
        visit(
            &mut run,
            &e,
            shown.to_vec(),
            full,
            &shown,
            0,
            &mut ancestors,
        )?;
    }
    for id in 0..run.batches.len() {
        flush_batch(&mut run, id)?;
    }
    let status = run.status;
    let out = std::mem::take(&mut run.out);
    if let Err(e) = run.ctx.stdout.write_all(&out) {
        return Ok(run.ctx.write_failed(&e));
    }
    Ok(status)
}

fn err_path(run: &mut Run<'_, '_>, path: &[u8], e: &std::io::Error) {
    let msg = safesh_utils::io_error_text(e);
    let name = run.ctx.name().to_string();
    let _ = writeln!(
        run.ctx.stderr,
        "{name}: '{}': {msg}",
        String::from_utf8_lossy(path)
    );
    run.status = 1;
}

fn visit(
    run: &mut Run<'_, '_>,
    e: &Expr,
    path: Vec<u8>,
    full: Vec<u8>,
    start: &[u8],
    depth: usize,
    ancestors: &mut Vec<(u64, u64)>,
) -> Result<(), Interrupt> {
    if run.ctx.host.cancelled() {
        run.quit = true;
        run.status = 130;
        return Ok(());
    }
    let fp = bpath(&full);
    if let Err(err) = run.ctx.check_stat(&fp) {
        err_path(run, &path, &err);
        return Ok(());
    }
    let follow = run.g.follow || (depth == 0 && run.follow_cmdline);
    // Read from the entry checked (a symlink on the way is decided on).
    let meta = match run.ctx.stat(&fp, false) {
        Ok(m) if follow && m.file_type().is_symlink() => run.ctx.stat(&fp, true).unwrap_or(m),
        Ok(m) => m,
        Err(err) => {
            err_path(run, &path, &err);
            return Ok(());
        }
    };
    let is_dir = meta.is_dir();
    let id = (meta.dev(), meta.ino());
    // A symlink's target and type are read here, from the link decided on,
    // not later by name (`-printf %l %Y`, `-ls`).
    let (link, target) = if meta.file_type().is_symlink() {
        (
            run.ctx
                .read_link(&fp)
                .ok()
                .map(|t| t.as_os_str().as_bytes().to_vec()),
            Some(run.ctx.stat(&fp, true)),
        )
    } else {
        (None, None)
    };
    let node = Node {
        path,
        full,
        start: start.to_vec(),
        depth,
        meta,
        link,
        target,
    };
    let in_range = depth >= run.g.mindepth;
    let mut pruned = false;
    if !run.g.depth_first && in_range {
        run.prune = false;
        eval(run, e, &node)?;
        pruned = run.prune;
        if run.quit {
            return Ok(());
        }
    }
    let descend = is_dir && run.g.maxdepth.is_none_or(|m| depth < m) && !pruned;
    if descend {
        if ancestors.contains(&id) {
            let name = run.ctx.name().to_string();
            let _ = writeln!(
                run.ctx.stderr,
                "{name}: File system loop detected; '{}' is part of the same file system loop.",
                String::from_utf8_lossy(&node.path)
            );
            run.status = 1;
        } else {
            match read_dir_sorted(run.ctx, &bpath(&node.full)) {
                Ok(names) => {
                    ancestors.push(id);
                    for n in names {
                        let cp = join_bytes(&node.path, &n);
                        let cf = join_bytes(&node.full, &n);
                        visit(run, e, cp, cf, start, depth + 1, ancestors)?;
                        if run.quit {
                            break;
                        }
                    }
                    ancestors.pop();
                }
                Err(err) => err_path(run, &node.path, &err),
            }
        }
        if run.quit {
            return Ok(());
        }
    }
    if run.g.depth_first && in_range {
        eval(run, e, &node)?;
    }
    if run.out.len() >= 64 * 1024 {
        flush_out(run);
    }
    Ok(())
}

fn flush_out(run: &mut Run<'_, '_>) {
    if run.out.is_empty() {
        return;
    }
    let out = std::mem::take(&mut run.out);
    if let Err(e) = run.ctx.stdout.write_all(&out) {
        let st = run.ctx.write_failed(&e);
        run.status = st;
        run.quit = true;
    }
}

fn stamp(m: &Metadata, s: Stamp) -> (i64, i64) {
    match s {
        Stamp::M => (m.mtime(), m.mtime_nsec()),
        Stamp::A => (m.atime(), m.atime_nsec()),
        Stamp::C => (m.ctime(), m.ctime_nsec()),
    }
}

fn name_of(path: &[u8]) -> &[u8] {
    let b = printf::base_with_slashes(path);
    if b == b"/" {
        return b;
    }
    let mut end = b.len();
    while end > 1 && b.get(end - 1) == Some(&b'/') {
        end -= 1;
    }
    b.get(..end).unwrap_or(b)
}

fn eval(run: &mut Run<'_, '_>, e: &Expr, n: &Node) -> Result<bool, Interrupt> {
    let m = &n.meta;
    Ok(match e {
        Expr::And(a, b) => eval(run, a, n)? && !run.quit && eval(run, b, n)?,
        Expr::Or(a, b) => eval(run, a, n)? || (!run.quit && eval(run, b, n)?),
        Expr::Comma(a, b) => {
            eval(run, a, n)?;
            !run.quit && eval(run, b, n)?
        }
        Expr::Not(a) => !eval(run, a, n)?,
        Expr::True => true,
        Expr::False => false,
        Expr::Name(p, icase) => crate::glob::fnmatch(p, name_of(&n.path), *icase, false),
        Expr::Path(p, icase) => crate::glob::fnmatch(p, &n.path, *icase, false),
        Expr::Regex(r) => r.is_match(&n.path),
        Expr::Type(letters, x) => {
            let mode = if *x {
                let other = run.ctx.stat(bpath(&n.full), !run.g.follow);
                other.map_or(m.mode(), |o| o.mode())
            } else {
                m.mode()
            };
            let c = match crate::common::type_char(mode) {
                '-' => b'f',
                c => c as u8,
            };
            letters.contains(&c)
        }
        Expr::Size(c, unit) => {
            let v = m.len().div_ceil(*unit);
            c.test(v as i64)
        }
        Expr::Time(s, c, unit) => {
            let (ts, tn) = stamp(m, *s);
            let diff = (run.reference.0 - ts) as f64 + (run.reference.1 - tn) as f64 / 1e9;
            c.test((diff / *unit as f64).floor() as i64)
        }
        Expr::Newer(s, t) => stamp(m, *s) > *t,
        Expr::Empty => {
            if m.is_dir() {
                run.ctx.list_dir(bpath(&n.full)).is_ok()
                    && safesh_utils::beneath::read_dir_names(&bpath(&n.full), |real| {
                        run.ctx.list_dir(real).map(|_| ())
                    })
                    .is_ok_and(|names| names.is_empty())
            } else {
                m.is_file() && m.len() == 0
            }
        }
        Expr::Perm(bits, kind) => {
            let mode = m.mode() & 0o7777;
            match kind {
                PermKind::Exact => mode == *bits,
                PermKind::All => mode & bits == *bits,
                PermKind::Any => *bits == 0 || mode & bits != 0,
            }
        }
        Expr::Links(c) => c.test(m.nlink() as i64),
        Expr::Inum(c) => c.test(m.ino() as i64),
        Expr::Uid(u) => m.uid() == *u,
        Expr::Gid(g) => m.gid() == *g,
        Expr::UserName(u) => {
            user_name(m.uid()) == *u || u.parse::<u32>().is_ok_and(|v| v == m.uid())
        }
        Expr::GroupName(g) => {
            group_name(m.gid()) == *g || g.parse::<u32>().is_ok_and(|v| v == m.gid())
        }
        Expr::Access(mode) => match std::ffi::CString::new(n.full.clone()) {
            // SAFETY: a valid C string; access only reads it.
            Ok(c) => unsafe { libc::access(c.as_ptr(), *mode) == 0 },
            Err(_) => false,
        },
        Expr::Print => {
            run.out.extend_from_slice(&n.path);
            run.out.push(b'\n');
            true
        }
        Expr::Print0 => {
            run.out.extend_from_slice(&n.path);
            run.out.push(0);
            true
        }
        Expr::Printf(f) => {
            let (text, _stop) = printf::expand(f, n, &run.tz);
            run.out.extend_from_slice(&text);
            true
        }
        Expr::Ls => {
            let line = ls_line(n, &run.tz, run.reference.0);
            run.out.extend_from_slice(&line);
            true
        }
        Expr::Delete => delete(run, n),
        Expr::Prune => {
            run.prune = true;
            true
        }
        Expr::Quit => {
            run.quit = true;
            true
        }
        Expr::Exec(x) => exec(run, x, n)?,
    })
}

fn ls_line(n: &Node, tz: &jiff::tz::TimeZone, now: i64) -> Vec<u8> {
    let m = &n.meta;
    let ts = jiff::Timestamp::new(m.mtime(), 0)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned(tz.clone());
    let recent = m.mtime() > now - 31_556_952 / 2 && m.mtime() <= now;
    let date = crate::strftime::format(if recent { "%b %e %H:%M" } else { "%b %e  %Y" }, &ts);
    let mut v = format!(
        "{:>9} {:>6} {} {:>3} {:<8} {:<8} {:>8} ",
        m.ino(),
        m.blocks().div_ceil(2),
        crate::common::mode_string(m.mode()),
        m.nlink(),
        user_name(m.uid()),
        group_name(m.gid()),
        m.len()
    )
    .into_bytes();
    v.extend(date);
    v.push(b' ');
    v.extend_from_slice(&n.path);
    if m.file_type().is_symlink()
        && let Some(t) = &n.link
    {
        v.extend_from_slice(b" -> ");
        v.extend_from_slice(t);
    }
    v.push(b'\n');
    v
}

fn delete(run: &mut Run<'_, '_>, n: &Node) -> bool {
    if n.path == b"." {
        return true;
    }
    let fp = bpath(&n.full);
    // Removed from the directory checked (no symlink followed by name).
    let r = run
        .ctx
        .resolve_write(&fp, false)
        .and_then(|e| e.remove(n.meta.is_dir()));
    match r {
        Ok(()) => true,
        Err(e) => {
            let msg = safesh_utils::io_error_text(&e);
            let name = run.ctx.name().to_string();
            let _ = writeln!(
                run.ctx.stderr,
                "{name}: cannot delete '{}': {msg}",
                String::from_utf8_lossy(&n.path)
            );
            run.status = 1;
            false
        }
    }
}

/// The directory and `./name` argument `-execdir` uses for a node.
fn execdir_parts(n: &Node) -> (Vec<u8>, Vec<u8>) {
    let full = &n.full;
    let cut = full.iter().rposition(|&c| c == b'/').unwrap_or(0);
    let dir = if cut == 0 {
        b"/".to_vec()
    } else {
        full.get(..cut).unwrap_or(b"/").to_vec()
    };
    let base = name_of(&n.path);
    let mut arg = b"./".to_vec();
    arg.extend_from_slice(if base == b"/" { b"." } else { base });
    if base == b"/" {
        return (b"/".to_vec(), b"/".to_vec());
    }
    (dir, arg)
}

fn exec(run: &mut Run<'_, '_>, x: &Exec, n: &Node) -> Result<bool, Interrupt> {
    let (cwd, item) = if x.dir {
        let (d, a) = execdir_parts(n);
        (bpath(&d), a)
    } else {
        (run.ctx.cwd.clone(), n.path.clone())
    };
    // A word: a name that is not UTF-8 reaches the command as its bytes.
    let item = safesh_utils::word_bytes::word_from_vec(item);
    if x.plus {
        let dir_key = x.dir.then(|| cwd.as_os_str().as_bytes().to_vec());
        let switch = match run.batches.get(x.id) {
            Some(Some(b)) => b.dir != dir_key || b.size + item.len() + 1 > BATCH_LIMIT,
            _ => false,
        };
        if switch {
            flush_batch(run, x.id)?;
        }
        if let Some(slot) = run.batches.get_mut(x.id) {
            let b = slot.get_or_insert_with(|| Batch {
                argv: x.argv.clone(),
                dir: dir_key,
                items: Vec::new(),
                size: 0,
            });
            b.size += item.len() + 1;
            b.items.push(item);
        }
        return Ok(true);
    }
    let argv: Vec<String> = x.argv.iter().map(|a| a.replace("{}", &item)).collect();
    let st = run_cmd(run, &argv, &cwd)?;
    Ok(st == 0)
}

fn run_cmd(
    run: &mut Run<'_, '_>,
    argv: &[String],
    cwd: &std::path::Path,
) -> Result<i32, Interrupt> {
    flush_out(run);
    let ctx = &mut *run.ctx;
    if let Some(name) = argv.first()
        && ctx.host.command_kind(name).is_none()
    {
        // GNU find says so and goes on: the `-exec` is false (`{} +`: status 1).
        let quoted = if ctx.env.utf8_locale() {
            format!("\u{2018}{name}\u{2019}")
        } else {
            format!("'{name}'")
        };
        ctx.warn(format_args!("{quoted}: No such file or directory"));
        return Ok(127);
    }
    ctx.host.run(
        argv,
        cwd,
        &mut *ctx.stdin,
        &mut *ctx.stdout,
        &mut *ctx.stderr,
    )
}

fn flush_batch(run: &mut Run<'_, '_>, id: usize) -> Result<(), Interrupt> {
    let Some(b) = run.batches.get_mut(id).and_then(Option::take) else {
        return Ok(());
    };
    let mut argv = b.argv.clone();
    argv.extend(b.items);
    let cwd = match &b.dir {
        Some(d) => bpath(d),
        None => run.ctx.cwd.clone(),
    };
    let st = run_cmd(run, &argv, &cwd)?;
    if st != 0 {
        run.status = 1;
    }
    Ok(())
}
