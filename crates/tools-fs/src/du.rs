//! `du`: estimate file space usage. Entries are visited in name order (GNU
//! uses readdir order).

use crate::common::{bpath, human, join_bytes, quote, read_dir_sorted, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "ahcskbmxDLPlS0",
    valued: "dB",
    long: &[
        ("all", false, "a"),
        ("human-readable", false, "h"),
        ("total", false, "c"),
        ("summarize", false, "s"),
        ("bytes", false, "b"),
        ("max-depth", true, "d"),
        ("apparent-size", false, "apparent-size"),
        ("block-size", true, "B"),
        ("dereference", false, "L"),
        ("null", false, "0"),
        ("count-links", false, "l"),
        ("separate-dirs", false, "S"),
        ("one-file-system", false, "x"),
        ("si", false, "si"),
        ("inodes", false, "inodes"),
        ("exclude", true, "exclude"),
    ],
    stop_at_operand: false,
};

struct Opts {
    all: bool,
    apparent: bool,
    human: bool,
    block: u64,
    max_depth: Option<usize>,
    follow: bool,
    separate: bool,
    count_links: bool,
    end: u8,
    exclude: Vec<String>,
}

struct Walk<'c, 'a> {
    ctx: &'c mut UtilCtx<'a>,
    out: Vec<u8>,
    seen: HashSet<(u64, u64)>,
    status: i32,
}

/// Runs `du`.
pub fn du(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut block = 1024u64;
    let mut apparent = false;
    let mut human_on = false;
    for o in &p.opts {
        match o.name.as_str() {
            "b" => {
                block = 1;
                apparent = true;
                human_on = false;
            }
            "k" => {
                block = 1024;
                human_on = false;
            }
            "m" => {
                block = 1 << 20;
                human_on = false;
            }
            "h" => human_on = true,
            "apparent-size" => apparent = true,
            "B" => {
                let v = o.value.as_deref().unwrap_or("1024");
                block = match parse_block(v) {
                    Some(b) => b,
                    None => {
                        ctx.warn(format_args!("invalid -B argument {}", quote(v)));
                        return Ok(1);
                    }
                };
                human_on = false;
            }
            _ => {}
        }
    }
    let mut max_depth = None;
    if let Some(d) = p.value("d") {
        match d.parse::<usize>() {
            Ok(n) => max_depth = Some(n),
            Err(_) => {
                ctx.warn(format_args!("invalid maximum depth {}", quote(d)));
                return Ok(1);
            }
        }
    }
    if p.has("s") {
        if max_depth.is_some_and(|d| d > 0) {
            ctx.warn("cannot both summarize and show all entries");
            return Ok(1);
        }
        max_depth = Some(0);
    }
    if p.has("a") && p.has("s") {
        return Ok(usage(ctx, "cannot both summarize and show all entries", 1));
    }
    let o = Opts {
        all: p.has("a"),
        apparent,
        human: human_on,
        block,
        max_depth,
        follow: p.has("L"),
        separate: p.has("S"),
        count_links: p.has("l"),
        end: if p.has("0") { 0 } else { b'\n' },
        exclude: p.values("exclude").iter().map(|s| s.to_string()).collect(),
    };
    let ops: Vec<String> = if p.operands.is_empty() {
        vec![".".into()]
    } else {
        p.operands.clone()
    };
    let mut w = Walk {
        ctx,
        out: Vec::new(),
        seen: HashSet::new(),
        status: 0,
    };
    let mut total = 0u64;
    for op in &ops {
        if let Some(sz) = walk(
            &mut w,
            &safesh_utils::word_bytes::word_to_bytes(op),
            0,
            &o,
            true,
        )? {
            total += sz;
        }
    }
    if p.has("c") {
        let line = format!("{}\ttotal", show(total, &o));
        w.out.extend_from_slice(line.as_bytes());
        w.out.push(o.end);
    }
    let status = w.status;
    let out = std::mem::take(&mut w.out);
    if let Err(e) = w.ctx.stdout.write_all(&out) {
        return Ok(w.ctx.write_failed(&e));
    }
    Ok(status)
}

fn parse_block(v: &str) -> Option<u64> {
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, ""),
    };
    let n: u64 = if num.is_empty() { 1 } else { num.parse().ok()? };
    let mult: u64 = match unit {
        "" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "KB" | "kB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    let b = n.checked_mul(mult)?;
    (b > 0).then_some(b)
}

fn show(bytes: u64, o: &Opts) -> String {
    if o.human {
        human(bytes)
    } else {
        bytes.div_ceil(o.block).to_string()
    }
}

/// Walks one path; returns its size in bytes (None when it was skipped).
fn walk(
    w: &mut Walk<'_, '_>,
    path: &[u8],
    depth: usize,
    o: &Opts,
    top: bool,
) -> Result<Option<u64>, safesh_utils::Interrupt> {
    if w.ctx.host.cancelled() {
        w.status = 130;
        return Ok(None);
    }
    let shown = safesh_utils::word_bytes::word_from_bytes(path).into_owned();
    let full = match w.ctx.check_read(bpath(path)) {
        Ok(f) => f,
        Err(e) => {
            w.ctx
                .warn_io(format_args!("cannot access {}", quote(&shown)), &e);
            w.status = 1;
            return Ok(None);
        }
    };
    // Read from the entry checked (a symlink on the way is decided on).
    let m = w.ctx.stat(&full, o.follow);
    let m = match m {
        Ok(m) => m,
        Err(e) => {
            w.ctx
                .warn_io(format_args!("cannot access {}", quote(&shown)), &e);
            w.status = 1;
            return Ok(None);
        }
    };
    let name = crate::common::base_name(path);
    if !top
        && o.exclude
            .iter()
            .any(|pat| crate::glob::fnmatch(pat.as_bytes(), name, false, false))
    {
        return Ok(None);
    }
    let key = (m.dev(), m.ino());
    if (m.is_dir() || m.nlink() > 1) && !o.count_links && !w.seen.insert(key) {
        return Ok(None);
    }
    let own = if o.apparent {
        m.len()
    } else {
        m.blocks() * 512
    };
    let mut size = own;
    if m.is_dir() {
        let mut sub_total = 0u64;
        // What -S shows: the directory itself and its non-directory entries.
        let mut files_total = 0u64;
        match read_dir_sorted(w.ctx, &full) {
            Ok(names) => {
                for n in names {
                    let child = join_bytes(path, &n);
                    let child_is_dir = w
                        .ctx
                        .check_read(bpath(&child))
                        .and_then(std::fs::symlink_metadata)
                        .is_ok_and(|m| m.is_dir());
                    if let Some(s) = walk(w, &child, depth + 1, o, false)? {
                        sub_total += s;
                        if !child_is_dir {
                            files_total += s;
                        }
                    }
                }
            }
            Err(e) => {
                w.ctx
                    .warn_io(format_args!("cannot read directory {}", quote(&shown)), &e);
                w.status = 1;
            }
        }
        let shown_size = if o.separate {
            own + files_total
        } else {
            own + sub_total
        };
        size = own + sub_total;
        if o.max_depth.is_none_or(|d| depth <= d) {
            emit(w, shown_size, path, o);
        }
        return Ok(Some(size));
    }
    if (o.all || top) && o.max_depth.is_none_or(|d| depth <= d) {
        emit(w, size, path, o);
    }
    Ok(Some(size))
}

fn emit(w: &mut Walk<'_, '_>, size: u64, path: &[u8], o: &Opts) {
    w.out.extend_from_slice(show(size, o).as_bytes());
    w.out.push(b'\t');
    w.out.extend_from_slice(path);
    w.out.push(o.end);
}
