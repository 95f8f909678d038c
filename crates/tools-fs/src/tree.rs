//! `tree`: list directory contents as an indented tree (tree 2.x output).

use crate::common::{bpath, join_bytes, read_dir_sorted, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "adfFlrUnN",
    valued: "LIP",
    long: &[
        ("noreport", false, "noreport"),
        ("dirsfirst", false, "dirsfirst"),
        ("charset", true, "charset"),
    ],
    stop_at_operand: false,
};

struct Opts {
    /// Escape non-printable bytes as `\ooo` (not `-N`); `utf8` keeps valid UTF-8.
    escape: bool,
    /// The locale's codeset is UTF-8.
    utf8: bool,
    /// Line-drawing strings: branch, last branch, continuation, blank.
    lines: [&'static str; 4],
    all: bool,
    dirs_only: bool,
    full: bool,
    classify: bool,
    follow: bool,
    level: Option<usize>,
    ignore: Vec<Vec<u8>>,
    only: Vec<Vec<u8>>,
    reverse: bool,
    dirsfirst: bool,
}

#[derive(Default)]
struct Counts {
    dirs: usize,
    files: usize,
}

/// Runs `tree`.
pub fn tree(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let level = match p.value("L") {
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                let _ = writeln!(ctx.stderr, "tree: Invalid level, must be greater than 0.");
                return Ok(1);
            }
        },
        None => None,
    };
    let split = |v: Vec<&str>| -> Vec<Vec<u8>> {
        v.iter()
            .flat_map(|s| s.split('|'))
            .map(|s| s.as_bytes().to_vec())
            .collect()
    };
    let utf8 = match p.value("charset") {
        Some(c) => c.to_ascii_lowercase().replace('-', "") == "utf8",
        None => {
            // Like tree: Unicode lines only when the locale's codeset is UTF-8.
            let loc = ["LC_ALL", "LC_CTYPE", "LANG"]
                .iter()
                .find_map(|k| ctx.env.get(k).filter(|v| !v.is_empty()))
                .map(|v| v.to_ascii_lowercase())
                .unwrap_or_default();
            loc.contains("utf-8") || loc.contains("utf8")
        }
    };
    let lines = if utf8 {
        ["├── ", "└── ", "│   ", "    "]
    } else {
        ["|-- ", "`-- ", "|   ", "    "]
    };
    let o = Opts {
        escape: !p.has("N"),
        utf8,
        lines,
        all: p.has("a"),
        dirs_only: p.has("d"),
        full: p.has("f"),
        classify: p.has("F"),
        follow: p.has("l"),
        level,
        ignore: split(p.values("I")),
        only: split(p.values("P")),
        reverse: p.has("r"),
        dirsfirst: p.has("dirsfirst"),
    };
    let roots: Vec<String> = if p.operands.is_empty() {
        vec![".".into()]
    } else {
        p.operands.clone()
    };
    let mut out = Vec::new();
    let mut c = Counts::default();
    let mut status = 0;
    for r in &roots {
        let full = match ctx.check_stat(r) {
            Ok(f) => f,
            Err(_) => {
                out.extend_from_slice(format!("{r}  [error opening dir]\n").as_bytes());
                status = 2;
                continue;
            }
        };
        let meta = ctx.stat(&full, true);
        if !meta.as_ref().is_ok_and(|m| m.is_dir()) {
            let what = if meta.is_ok() {
                ""
            } else {
                "  [error opening dir]"
            };
            out.extend_from_slice(format!("{r}{what}\n").as_bytes());
            if meta.is_err() {
                status = 2;
            } else {
                c.files += 1;
            }
            continue;
        }
        out.extend_from_slice(r.as_bytes());
        if o.classify && !r.ends_with('/') {
            out.push(b'/');
        }
        out.push(b'\n');
        let before = out.len();
        let mut sub = Counts::default();
        list(ctx, &mut out, r.as_bytes(), b"", 1, &o, &mut sub)?;
        if out.len() > before {
            // tree counts the root only when something was listed under it.
            c.dirs += 1;
        }
        c.dirs += sub.dirs;
        c.files += sub.files;
    }
    if !p.has("noreport") {
        let d = if c.dirs == 1 {
            "directory"
        } else {
            "directories"
        };
        if o.dirs_only {
            out.extend_from_slice(format!("\n{} {d}\n", c.dirs).as_bytes());
        } else {
            let f = if c.files == 1 { "file" } else { "files" };
            out.extend_from_slice(format!("\n{} {d}, {} {f}\n", c.dirs, c.files).as_bytes());
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}

/// Writes a name the way tree shows it: non-printable bytes as `\ooo`
/// (in a UTF-8 locale, valid multibyte characters stay as they are).
fn put_name(out: &mut Vec<u8>, name: &[u8], o: &Opts) {
    if !o.escape {
        out.extend_from_slice(name);
        return;
    }
    let mut rest = name;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &b""[..]),
            Err(e) => {
                let (v, b) = rest.split_at(e.valid_up_to());
                (std::str::from_utf8(v).unwrap_or(""), b)
            }
        };
        for c in valid.chars() {
            if c.is_ascii() && !c.is_ascii_control() || !c.is_ascii() && o.utf8 && !c.is_control() {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.extend_from_slice(format!("\\{b:03o}").as_bytes());
                }
            }
        }
        match bad.split_first() {
            Some((b, tail)) => {
                out.extend_from_slice(format!("\\{b:03o}").as_bytes());
                rest = tail;
            }
            None => rest = b"",
        }
    }
}

fn matches_any(pats: &[Vec<u8>], name: &[u8]) -> bool {
    pats.iter()
        .any(|p| crate::glob::fnmatch(p, name, false, false))
}

fn list(
    ctx: &mut UtilCtx<'_>,
    out: &mut Vec<u8>,
    dir: &[u8],
    prefix: &[u8],
    depth: usize,
    o: &Opts,
    c: &mut Counts,
) -> Result<(), safesh_utils::Interrupt> {
    if ctx.host.cancelled() {
        return Ok(());
    }
    let Ok(names) = read_dir_sorted(ctx, &bpath(dir)) else {
        return Ok(());
    };
    struct E {
        name: Vec<u8>,
        path: Vec<u8>,
        meta: Option<std::fs::Metadata>,
        target: Option<Vec<u8>>,
        target_meta: Option<std::fs::Metadata>,
    }
    let mut entries = Vec::new();
    for n in names {
        if !o.all && n.starts_with(b".") {
            continue;
        }
        if matches_any(&o.ignore, &n) {
            continue;
        }
        let path = join_bytes(dir, &n);
        let Ok(full) = ctx.check_stat(bpath(&path)) else {
            continue;
        };
        let meta = ctx.stat(&full, false).ok();
        let is_link = meta.as_ref().is_some_and(|m| m.file_type().is_symlink());
        let target_meta = if is_link {
            ctx.stat(&full, true).ok()
        } else {
            None
        };
        let target = if is_link {
            ctx.read_link(&full)
                .ok()
                .map(|t| t.as_os_str().as_bytes().to_vec())
        } else {
            None
        };
        let is_dir = meta.as_ref().is_some_and(|m| m.is_dir())
            || target_meta.as_ref().is_some_and(|m| m.is_dir());
        if o.dirs_only && !is_dir {
            continue;
        }
        if !o.only.is_empty() && !is_dir && !matches_any(&o.only, &n) {
            continue;
        }
        entries.push(E {
            name: n,
            path,
            meta,
            target,
            target_meta,
        });
    }
    if o.reverse {
        entries.reverse();
    }
    if o.dirsfirst {
        entries.sort_by_key(|e| !(e.meta.as_ref().is_some_and(|m| m.is_dir())));
    }
    let count = entries.len();
    for (i, e) in entries.iter().enumerate() {
        let last = i + 1 == count;
        out.extend_from_slice(prefix);
        out.extend_from_slice(if last { o.lines[1] } else { o.lines[0] }.as_bytes());
        put_name(out, if o.full { &e.path } else { &e.name }, o);
        let mode = e.meta.as_ref().map_or(0, |m| m.mode());
        if let Some(t) = &e.target {
            out.extend_from_slice(b" -> ");
            put_name(out, t, o);
            if o.classify
                && let Some(tm) = &e.target_meta
            {
                out.extend_from_slice(crate::ls::indicator(tm.mode(), true).as_bytes());
            }
        } else if o.classify {
            out.extend_from_slice(crate::ls::indicator(mode, true).as_bytes());
        }
        out.push(b'\n');
        let real_dir = e.meta.as_ref().is_some_and(|m| m.is_dir());
        let link_dir = e.target_meta.as_ref().is_some_and(|m| m.is_dir());
        if real_dir || link_dir {
            c.dirs += 1;
            if (real_dir || o.follow) && o.level.is_none_or(|l| depth < l) {
                let mut np = prefix.to_vec();
                np.extend_from_slice(if last { o.lines[3] } else { o.lines[2] }.as_bytes());
                list(ctx, out, &e.path, &np, depth + 1, o, c)?;
            }
        } else {
            c.files += 1;
        }
    }
    Ok(())
}
