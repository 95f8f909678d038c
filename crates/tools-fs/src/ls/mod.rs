//! `ls`: list directory contents, one name per line (stdout is never a terminal
//! here), or in GNU's long format.

mod columns;
mod format;

pub use format::indicator;

use crate::common::{bpath, join_bytes, quote, read_dir_sorted, usage};
use format::{Entry, LongOpts, SortBy, TimeKind, TimeStyle};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "aAlRrtSUfhdFp1nogGLHBkCxiscu",
    valued: "ITw",
    long: &[
        ("all", false, "a"),
        ("almost-all", false, "A"),
        ("recursive", false, "R"),
        ("reverse", false, "r"),
        ("human-readable", false, "h"),
        ("directory", false, "d"),
        ("classify", false, "F"),
        ("numeric-uid-gid", false, "n"),
        ("dereference", false, "L"),
        ("dereference-command-line", false, "H"),
        ("no-group", false, "G"),
        ("ignore-backups", false, "B"),
        ("color", true, "color"),
        ("colour", true, "color"),
        ("sort", true, "sort"),
        ("ignore", true, "I"),
        ("width", true, "w"),
        ("tabsize", true, "T"),
        ("group-directories-first", false, "group-directories-first"),
        ("kibibytes", false, "k"),
        ("inode", false, "i"),
        ("time-style", true, "time-style"),
        ("full-time", false, "full-time"),
        ("time", true, "time"),
        ("size", false, "s"),
    ],
    stop_at_operand: false,
};

struct Opts {
    /// `--group-directories-first`.
    dirs_first: bool,
    /// 0: one per line, 1: `-C`, 2: `-x`.
    columns: u8,
    /// Line width for columns (`-w`, `COLUMNS`, else 80).
    width: usize,
    /// Tab stops (`-T`, default 8).
    tabsize: usize,
    all: bool,
    almost: bool,
    long: bool,
    recursive: bool,
    reverse: bool,
    sort: SortBy,
    dirs_self: bool,
    indicator: u8,
    deref: bool,
    deref_cmdline: bool,
    ignore_backups: bool,
    ignore: Vec<String>,
    lo: LongOpts,
}

/// Runs `ls`.
pub fn ls(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 2)),
    };
    let mut sort = SortBy::Name;
    let mut time_kind = TimeKind::Modify;
    let mut style = TimeStyle::default();
    let mut sort_given = false;
    // 0: one per line, 1: down columns (-C), 2: across (-x).
    let mut columns = 0u8;
    let mut long = false;
    let (mut owner, mut group) = (true, !p.has("G"));
    let mut indicator = 0u8;
    let mut all = false;
    let mut almost = false;
    for o in &p.opts {
        match o.name.as_str() {
            "t" => {
                sort = SortBy::Time;
                sort_given = true;
            }
            "S" => {
                sort = SortBy::Size;
                sort_given = true;
            }
            "c" => time_kind = TimeKind::Change,
            "u" => time_kind = TimeKind::Access,
            "time" => {
                time_kind = match o.value.as_deref() {
                    Some("ctime" | "status") => TimeKind::Change,
                    Some("atime" | "access" | "use") => TimeKind::Access,
                    _ => TimeKind::Modify,
                }
            }
            "full-time" => {
                long = true;
                columns = 0;
                style = TimeStyle::parse("full-iso").unwrap_or_default();
            }
            "time-style" => {
                let v = o.value.as_deref().unwrap_or("");
                match TimeStyle::parse(v) {
                    Some(s) => style = s,
                    None => {
                        ctx.warn(format_args!(
                            "invalid argument {} for 'time style'",
                            quote(v)
                        ));
                        let _ = ctx.stderr.write_all(b"Valid arguments are:\n  - [posix-]full-iso\n  - [posix-]long-iso\n  - [posix-]iso\n  - [posix-]locale\n  - +FORMAT (e.g., +%H:%M) for a 'date'-style format\nTry 'ls --help' for more information.\n");
                        return Ok(2);
                    }
                }
            }
            "U" => sort = SortBy::None,
            "f" => {
                sort = SortBy::None;
                all = true;
            }
            "sort" => {
                sort = match o.value.as_deref() {
                    Some("time") => SortBy::Time,
                    Some("size") => SortBy::Size,
                    Some("none") => SortBy::None,
                    _ => SortBy::Name,
                }
            }
            "l" | "n" => {
                long = true;
                columns = 0;
            }
            "g" => {
                long = true;
                owner = false;
            }
            "o" => {
                long = true;
                group = false;
            }
            "1" => {
                long = false;
                columns = 0;
            }
            "C" => {
                long = false;
                columns = 1;
            }
            "x" => {
                long = false;
                columns = 2;
            }
            "F" => indicator = 2,
            "p" => indicator = indicator.max(1),
            "a" => {
                all = true;
                almost = false;
            }
            "A" => {
                almost = true;
                all = false;
            }
            "color" => match o.value.as_deref() {
                Some(
                    "never" | "no" | "none" | "auto" | "tty" | "if-tty" | "always" | "yes"
                    | "force",
                ) => {}
                Some(v) => {
                    ctx.warn(format_args!("invalid argument {} for '--color'", quote(v)));
                    let _ = ctx.stderr.write_all(
                        b"Valid arguments are:\n  - 'always', 'yes', 'force'\n  - 'never', 'no', 'none'\n  - 'auto', 'tty', 'if-tty'\nTry 'ls --help' for more information.\n",
                    );
                    return Ok(1);
                }
                None => {}
            },
            _ => {}
        }
    }
    let now = jiff::Timestamp::now().as_second();
    // GNU: -c/-u sort by that time unless -l is given without -t.
    if time_kind != TimeKind::Modify && !sort_given && !long && sort == SortBy::Name {
        sort = SortBy::Time;
    }
    let env_cols = ctx
        .env
        .get("COLUMNS")
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|c| *c > 0);
    let width = match p.value("w") {
        Some(w) => match w.parse::<usize>() {
            Ok(0) => usize::MAX,
            Ok(n) => n,
            Err(_) => {
                ctx.warn(format_args!("invalid line width: {}", quote(w)));
                return Ok(2);
            }
        },
        None => env_cols.unwrap_or(80),
    };
    let tabsize = p.value("T").and_then(|t| t.parse().ok()).unwrap_or(8);
    let o = Opts {
        dirs_first: p.has("group-directories-first"),
        columns,
        width,
        tabsize,
        all,
        almost,
        long,
        recursive: p.has("R"),
        reverse: p.has("r"),
        sort,
        dirs_self: p.has("d"),
        indicator,
        deref: p.has("L"),
        deref_cmdline: p.has("H") || !(long || indicator == 2 || p.has("d")),
        ignore_backups: p.has("B"),
        ignore: p.values("I").iter().map(|s| s.to_string()).collect(),
        lo: LongOpts {
            inode: p.has("i"),
            size: p.has("s"),
            human: p.has("h"),
            numeric: p.has("n"),
            owner,
            group,
            indicator,
            tz: crate::common::local_tz(ctx),
            now,
            time: time_kind,
            style,
        },
    };
    let operands: Vec<String> = if p.operands.is_empty() {
        vec![".".into()]
    } else {
        p.operands.clone()
    };
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for op in &operands {
        let path = safesh_utils::word_bytes::word_to_bytes(op).into_owned();
        let e = match stat_entry(ctx, path.clone(), path, o.deref || o.deref_cmdline, o.deref) {
            Ok(e) => e,
            Err(err) => {
                ctx.warn_io(format_args!("cannot access {}", quote(op)), &err);
                status = 2;
                continue;
            }
        };
        let is_dir = e.meta.as_ref().is_some_and(|m| m.is_dir());
        if is_dir && !o.dirs_self {
            dirs.push(e)
        } else {
            files.push(e)
        }
    }
    order(&mut files, &o);
    order(&mut dirs, &o);
    let mut out = Vec::new();
    let mut printed = false;
    if !files.is_empty() {
        show_block(&mut out, &files, &o);
        printed = true;
    }
    let headers = operands.len() > 1 || o.recursive;
    for d in dirs {
        if ctx.host.cancelled() {
            return Ok(130);
        }
        let st = list_dir(ctx, &mut out, &d.path, &o, headers, &mut printed, true)?;
        status = status.max(st);
        if out.len() > 64 * 1024 {
            if let Err(e) = ctx.stdout.write_all(&out) {
                return Ok(ctx.write_failed(&e));
            }
            out.clear();
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}

/// Stats `path` into an entry; `follow` dereferences a symlink at the top.
fn stat_entry(
    ctx: &UtilCtx<'_>,
    name: Vec<u8>,
    path: Vec<u8>,
    follow: bool,
    deref_all: bool,
) -> std::io::Result<Entry> {
    // Metadata printed with a name: the name's label, not the contents'.
    let full = ctx.check_stat(bpath(&path))?;
    // Read from the entry checked (a flipped symlink on the way is decided on).
    let lmeta = ctx.stat(&full, false)?;
    let mut e = Entry {
        name,
        path,
        meta: Some(lmeta.clone()),
        target: None,
        target_meta: None,
    };
    if lmeta.file_type().is_symlink() {
        let tmeta = ctx.stat(&full, true).ok();
        if (follow || deref_all) && tmeta.is_some() {
            e.meta = tmeta;
            return Ok(e);
        }
        e.target = ctx
            .read_link(&full)
            .ok()
            .map(|t| t.as_os_str().as_bytes().to_vec());
        e.target_meta = tmeta;
    }
    Ok(e)
}

/// Sorts a listing, then moves directories (and links to them) first if asked.
fn order(entries: &mut [Entry], o: &Opts) {
    format::sort(entries, o.sort, o.reverse, o.lo.time);
    if o.dirs_first {
        let is_dir = |e: &Entry| {
            e.meta.as_ref().is_some_and(|m| m.is_dir())
                || e.target_meta.as_ref().is_some_and(|m| m.is_dir())
        };
        entries.sort_by_key(|e| !is_dir(e));
    }
}

fn show_block(out: &mut Vec<u8>, entries: &[Entry], o: &Opts) {
    if o.long {
        format::long_block(out, entries, &o.lo);
        return;
    }
    let pre = format::prefixes(entries, &o.lo);
    let names: Vec<Vec<u8>> = entries
        .iter()
        .zip(pre.iter())
        .map(|(e, pre)| {
            let mut n = pre.as_bytes().to_vec();
            n.extend_from_slice(&e.name);
            if o.indicator > 0 {
                let mode = e.meta.as_ref().map_or(0, |m| m.mode());
                n.extend_from_slice(format::indicator(mode, o.indicator == 2).as_bytes());
            }
            n
        })
        .collect();
    if o.columns > 0 {
        columns::layout(out, &names, o.width, o.tabsize, o.columns == 1);
        return;
    }
    for n in names {
        out.extend_from_slice(&n);
        out.push(b'\n');
    }
}

fn hidden(name: &[u8], o: &Opts) -> bool {
    if name.starts_with(b".") && !o.all && !o.almost {
        return true;
    }
    if o.ignore_backups && name.ends_with(b"~") {
        return true;
    }
    o.ignore
        .iter()
        .any(|pat| crate::glob::fnmatch(pat.as_bytes(), name, false, true))
}

/// Lists one directory (and, with `-R`, its subdirectories); returns the status.
fn list_dir(
    ctx: &mut UtilCtx<'_>,
    out: &mut Vec<u8>,
    dir: &[u8],
    o: &Opts,
    header: bool,
    printed: &mut bool,
    top: bool,
) -> Result<i32, safesh_utils::Interrupt> {
    let names = match read_dir_sorted(ctx, &bpath(dir)) {
        Ok(n) => n,
        Err(e) => {
            ctx.warn_io(
                format_args!(
                    "cannot open directory {}",
                    quote(&String::from_utf8_lossy(dir))
                ),
                &e,
            );
            return Ok(if top { 2 } else { 1 });
        }
    };
    if header {
        if *printed {
            out.push(b'\n');
        }
        out.extend_from_slice(dir);
        out.extend_from_slice(b":\n");
    }
    *printed = true;
    let mut entries = Vec::new();
    if o.all {
        for n in [&b"."[..], &b".."[..]] {
            let path = join_bytes(dir, n);
            // `..` of a listed root is outside the roots: listed by name with
            // its metadata (as GNU shows it), never a reason to stop the script.
            let e = if ctx.host.may_read(&ctx.resolve(bpath(&path))) {
                stat_entry(ctx, n.to_vec(), path, false, o.deref)
            } else {
                std::fs::symlink_metadata(ctx.resolve(bpath(&path))).map(|m| Entry {
                    name: n.to_vec(),
                    path,
                    meta: Some(m),
                    target: None,
                    target_meta: None,
                })
            };
            if let Ok(e) = e {
                entries.push(e);
            }
        }
    }
    let mut status = 0;
    for n in names {
        if hidden(&n, o) {
            continue;
        }
        let path = join_bytes(dir, &n);
        match stat_entry(ctx, n.clone(), path.clone(), false, o.deref) {
            Ok(e) => entries.push(e),
            Err(err) => {
                ctx.warn_io(
                    format_args!("cannot access {}", quote(&String::from_utf8_lossy(&path))),
                    &err,
                );
                status = 1;
                entries.push(Entry {
                    name: n,
                    path,
                    meta: None,
                    target: None,
                    target_meta: None,
                });
            }
        }
    }
    order(&mut entries, o);
    if o.long || o.lo.size {
        out.extend_from_slice(
            format!("total {}\n", format::total(&entries, o.lo.human)).as_bytes(),
        );
    }
    show_block(out, &entries, o);
    if o.recursive {
        for e in &entries {
            if ctx.host.cancelled() {
                return Ok(130);
            }
            if e.name == b"." || e.name == b".." {
                continue;
            }
            if e.meta.as_ref().is_some_and(|m| m.is_dir()) {
                let st = list_dir(ctx, out, &e.path, o, true, printed, false)?;
                status = status.max(st);
            }
        }
    }
    Ok(status)
}
