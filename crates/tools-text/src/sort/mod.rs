//! `sort`: reads the inputs into one buffer, sorts slices of it by GNU's rules
//! (keys, then the whole line as a last resort unless `-s`/`-u`; C-locale byte
//! order) and writes them out, or checks order with `-c` / `-C`. Past the
//! memory budget (the host's share of `[limits] memory_mb`, or a smaller `-S`)
//! sorted runs are spilled to disk and merged (`spill.rs`).

mod cmp;
mod key;
mod spill;

use crate::common::{BUF, finish, open_input, usage, warn_io};
use key::{Flags, Key};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult, WriteMode};
use std::cmp::Ordering;
use std::io::{self, BufWriter, Read, Write};

const SPEC: Spec = Spec {
    flags: "bcCdfghiMmnRrsuVz",
    valued: "kotST",
    long: &[
        ("ignore-leading-blanks", false, "b"),
        ("check", false, "c"),
        ("dictionary-order", false, "d"),
        ("ignore-case", false, "f"),
        ("general-numeric-sort", false, "g"),
        ("human-numeric-sort", false, "h"),
        ("ignore-nonprinting", false, "i"),
        ("month-sort", false, "M"),
        ("merge", false, "m"),
        ("numeric-sort", false, "n"),
        ("random-sort", false, "R"),
        ("reverse", false, "r"),
        ("stable", false, "s"),
        ("unique", false, "u"),
        ("version-sort", false, "V"),
        ("zero-terminated", false, "z"),
        ("key", true, "k"),
        ("output", true, "o"),
        ("field-separator", true, "t"),
        ("buffer-size", true, "S"),
        ("temporary-directory", true, "T"),
        ("parallel", true, "parallel"),
        ("sort", true, "sort"),
        ("random-source", true, "random-source"),
        ("compress-program", true, "compress-program"),
        ("debug", false, "debug"),
        ("files0-from", true, "files0-from"),
    ],
    stop_at_operand: false,
};

/// Everything that decides the order.
struct Config {
    keys: Vec<Key>,
    tab: Option<u8>,
    reverse: bool,
    unique: bool,
    stable: bool,
}

impl Config {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        if !self.keys.is_empty() {
            let d = key::keycompare(a, b, &self.keys, self.tab);
            if d != Ordering::Equal || self.unique || self.stable {
                return d;
            }
        }
        let d = a.cmp(b);
        if self.reverse { d.reverse() } else { d }
    }

    /// [`Config::compare`] for (line, first key text) pairs, keys non-empty.
    fn compare_with_first(&self, a: &(&[u8], &[u8]), b: &(&[u8], &[u8])) -> Ordering {
        if self.keys.is_empty() {
            return self.compare(a.0, b.0);
        }
        let d = key::compare_text(a.1, b.1, &self.keys[0].flags);
        self.after_first(a.0, b.0, d)
    }

    /// Completes a comparison of lines `a` and `b` whose first keys compared
    /// as `d`: the other keys, then the whole lines unless `-s`/`-u`.
    fn after_first(&self, a: &[u8], b: &[u8], mut d: Ordering) -> Ordering {
        if d == Ordering::Equal {
            d = key::keycompare(a, b, self.keys.get(1..).unwrap_or(&[]), self.tab);
        }
        if d != Ordering::Equal || self.unique || self.stable {
            return d;
        }
        let d = a.cmp(b);
        if self.reverse { d.reverse() } else { d }
    }
}

/// How `-c`/`-C` report.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    No,
    Diagnose,
    Quiet,
}

/// Runs `sort`.
pub fn sort(ctx: &mut UtilCtx<'_>) -> UtilResult {
    // `--check=WHEN` takes an optional value, which the shared parser cannot express.
    let argv: Vec<String> = ctx
        .args()
        .iter()
        .map(|a| match a.as_str() {
            "--check=quiet" | "--check=silent" => "-C".to_string(),
            "--check=diagnose-first" => "-c".to_string(),
            _ => a.clone(),
        })
        .collect();
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 2)),
    };
    let mut g = Flags::default();
    let mut keys = Vec::new();
    let mut tab = None;
    let mut check = Check::No;
    let mut unique = false;
    let mut stable = false;
    let mut delim = b'\n';
    let mut output = None;
    let mut buffer = None;
    for o in &p.opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.name.as_str() {
            "c" => check = Check::Diagnose,
            "C" => check = Check::Quiet,
            "u" => unique = true,
            "s" => stable = true,
            "z" => delim = 0,
            "S" => buffer = spill::parse_buffer_size(v),
            "m" | "T" | "parallel" | "debug" | "random-source" | "compress-program" => {}
            "o" => output = Some(v.to_string()),
            "t" => {
                let b = v.as_bytes();
                let t = match b {
                    [] => return Ok(usage(ctx, "empty tab", 2)),
                    [c] => *c,
                    b"\\0" => 0,
                    _ => {
                        let name = ctx.name().to_string();
                        let _ = writeln!(ctx.stderr, "{name}: multi-character tab '{v}'");
                        return Ok(2);
                    }
                };
                if tab.is_some_and(|old| old != t) {
                    let name = ctx.name().to_string();
                    let _ = writeln!(ctx.stderr, "{name}: incompatible tabs");
                    return Ok(2);
                }
                tab = Some(t);
            }
            "k" => match key::parse_key(v) {
                Ok(k) => keys.push(k),
                Err(e) => {
                    let name = ctx.name().to_string();
                    let _ = writeln!(ctx.stderr, "{name}: {e}");
                    return Ok(2);
                }
            },
            "sort" => {
                let c = match v {
                    "numeric" => 'n',
                    "general-numeric" => 'g',
                    "human-numeric" => 'h',
                    "month" => 'M',
                    "version" => 'V',
                    "random" => 'R',
                    _ => {
                        let msg = format!("invalid argument '{v}' for '--sort'");
                        return Ok(usage(ctx, &msg, 2));
                    }
                };
                g.set(c, false);
            }
            "files0-from" => {
                let name = ctx.name().to_string();
                let _ = writeln!(ctx.stderr, "{name}: --files0-from is not supported");
                return Ok(2);
            }
            name => {
                for c in name.chars() {
                    g.set(c, false);
                    if c == 'b' {
                        g.skip_end_blanks = true;
                    }
                }
            }
        }
    }
    for k in &mut keys {
        if k.flags.is_default() && !k.flags.reverse {
            k.flags = g;
        }
    }
    if keys.is_empty() && !g.is_default() {
        keys.push(Key {
            flags: g,
            ..Key::default()
        });
    }
    for f in std::iter::once(&g).chain(keys.iter().map(|k| &k.flags)) {
        if let Some(letters) = f.incompatible() {
            let name = ctx.name().to_string();
            let _ = writeln!(ctx.stderr, "{name}: options '-{letters}' are incompatible");
            return Ok(2);
        }
    }
    let cfg = Config {
        keys,
        tab,
        reverse: g.reverse,
        unique,
        stable,
    };
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    if check != Check::No && files.len() > 1 {
        let msg = format!("extra operand '{}' not allowed with -c", files[1]);
        return Ok(usage(ctx, &msg, 2));
    }
    let budget = ctx.host.memory_budget().min(buffer.unwrap_or(u64::MAX));
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let r = run(ctx, &cfg, check, delim, &files, output.as_deref(), budget);
    finish(ctx, r)
}

fn run(
    ctx: &mut UtilCtx<'_>,
    cfg: &Config,
    check: Check,
    delim: u8,
    files: &[String],
    output: Option<&str>,
    budget: usize,
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    if check != Check::No {
        return check_stream(ctx, cfg, check, delim, &files[0]);
    }
    // Spilling needs a disk-backed dir from the host.
    let spill_dir = host.spill_dir();
    let mut runs: Vec<std::fs::File> = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut lines_held = 0usize;
    for f in files {
        let read = open_input(&mut *ctx.stdin, host, &cwd, f).and_then(|mut i| {
            // Reserve a regular file's size up front instead of growing by
            // doubling (up to the budget).
            // Small budgets read in small steps, so that each run fits.
            let step = (budget / 4).clamp(512, BUF);
            if let Some(md) = i.file().and_then(|f| f.metadata().ok()) {
                // Room for the last read's step too, so the buffer is never
                // reallocated (copied) at the end.
                let size = usize::try_from(md.len()).unwrap_or(0).saturating_add(step);
                data.reserve(size.min(budget.saturating_add(BUF)));
            }
            let mut got = 0usize;
            loop {
                let len = data.len();
                data.resize(len + step, 0);
                let n = match i.read(&mut data[len..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                    Err(e) => {
                        data.truncate(len);
                        return Err(e);
                    }
                };
                data.truncate(len + n);
                if n == 0 {
                    break;
                }
                got += n;
                lines_held += memchr::memchr_iter(delim, &data[len..]).count();
                let Some(dir) = &spill_dir else { continue };
                if data.len() + lines_held.saturating_mul(spill::line_cost(cfg)) <= budget {
                    continue;
                }
                // Past the budget: the complete lines so far become a sorted run
                // on disk (a single line longer than the budget stays whole).
                let Some(cut) = memchr::memrchr(delim, &data).map(|p| p + 1) else {
                    continue;
                };
                let rest = data.split_off(cut);
                runs.push(spill::spill_run(&data, cfg, delim, dir)?);
                data = rest;
                data.reserve(BUF);
                lines_held = 0;
                if host.cancelled() {
                    return Err(spill::cancelled());
                }
            }
            if got > 0 && !data.is_empty() && data.last() != Some(&delim) {
                data.push(delim);
                lines_held += 1;
            }
            Ok(())
        });
        if let Err(e) = read {
            if host.cancelled() {
                return Err(e);
            }
            let what = if f == "-" { "-" } else { f.as_str() };
            let _ = writeln!(
                ctx.stderr,
                "{name}: cannot read: {what}: {}",
                safesh_utils::io_error_text(&e)
            );
            return Ok(2);
        }
    }
    if !runs.is_empty()
        && let Some(dir) = &spill_dir
        && !data.is_empty()
    {
        runs.push(spill::spill_run(&data, cfg, delim, dir)?);
    }
    let mut out: Box<dyn Write + '_> = match output {
        Some(path) => match ctx.create(path, WriteMode::Truncate) {
            Ok(f) => Box::new(BufWriter::with_capacity(BUF, f)),
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, &format!("open failed: {path}"), &e);
                return Ok(2);
            }
        },
        None => Box::new(BufWriter::with_capacity(BUF, &mut *ctx.stdout)),
    };
    match &spill_dir {
        Some(dir) if !runs.is_empty() => {
            let stop = || host.cancelled();
            spill::merge(runs, cfg, delim, dir, &mut out, &stop)?;
        }
        _ => sort_write(&data, cfg, delim, &mut out)?,
    }
    out.flush()?;
    Ok(0)
}

/// Sorts the lines of `data` (each ended by `delim`) and writes them to `out`
/// (the first of equal lines only, with `-u`). The two halves are sorted on
/// two threads and merged straight into `out`, so besides `data` only one
/// row per line is held: a slice (no keys), a slice and the first key's
/// integer value (a plain `-n` first key), or a slice and the first key's text.
fn sort_write(data: &[u8], cfg: &Config, delim: u8, out: &mut dyn Write) -> io::Result<()> {
    let lines = || {
        let mut start = 0;
        memchr::memchr_iter(delim, data).map(move |pos| {
            let l = &data[start..pos];
            start = pos + 1;
            l
        })
    };
    let stable = cfg.stable || cfg.unique;
    let Some(first) = cfg.keys.first() else {
        // Whole lines: equal lines are identical, so an unstable sort gives
        // the same output faster.
        let rows: Vec<&[u8]> = lines().collect();
        return if cfg.reverse {
            sorted_out(rows, |a, b| b.cmp(a), false, |r| r, cfg, delim, out)
        } else {
            sorted_out(rows, |a, b| a.cmp(b), false, |r| r, cfg, delim, out)
        };
    };
    if key::fast_numeric_key(&first.flags) {
        let rows: Vec<(i64, &[u8])> = lines()
            .map(|l| (cmp::integer_key(key::extract(l, first, cfg.tab)), l))
            .collect();
        let compare = |a: &(i64, &[u8]), b: &(i64, &[u8])| {
            if a.0 != cmp::NOT_INTEGER && b.0 != cmp::NOT_INTEGER {
                let d = a.0.cmp(&b.0);
                let d = if first.flags.reverse { d.reverse() } else { d };
                return cfg.after_first(a.1, b.1, d);
            }
            let (ka, kb) = (
                key::extract(a.1, first, cfg.tab),
                key::extract(b.1, first, cfg.tab),
            );
            cfg.compare_with_first(&(a.1, ka), &(b.1, kb))
        };
        return sorted_out(rows, compare, stable, |r| r.1, cfg, delim, out);
    }
    // Locate the first key once per line rather than at every comparison.
    let rows: Vec<(&[u8], &[u8])> = lines()
        .map(|l| (l, key::extract(l, first, cfg.tab)))
        .collect();
    sorted_out(
        rows,
        |a, b| cfg.compare_with_first(a, b),
        stable,
        |r| r.0,
        cfg,
        delim,
        out,
    )
}

/// Below this many items a second thread does not pay for itself.
const PAR_MIN: usize = 1 << 16;

/// Sorts `rows` by `cmp` — the two halves on two threads (the machine has two
/// cores, like the GNU sort it is measured against) — and writes their lines
/// (`line`) in merged order. The merge prefers the left half on ties, so a
/// stable sort stays stable.
fn sorted_out<T, F>(
    mut rows: Vec<T>,
    cmp: F,
    stable: bool,
    line: impl Fn(&T) -> &[u8],
    cfg: &Config,
    delim: u8,
    out: &mut dyn Write,
) -> io::Result<()>
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let one = |part: &mut [T]| {
        if stable {
            part.sort_by(&cmp);
        } else {
            part.sort_unstable_by(&cmp);
        }
    };
    let mut mid = rows.len();
    if rows.len() >= PAR_MIN {
        let half = rows.len() / 2;
        let (left, right) = rows.split_at_mut(half);
        let split = std::thread::scope(|s| {
            let spawned = std::thread::Builder::new().spawn_scoped(s, || one(left));
            one(right);
            spawned.is_ok_and(|h| h.join().is_ok())
        });
        if split {
            mid = half;
        } else {
            // No second thread was available: sort everything here.
            one(&mut rows);
        }
    } else {
        one(&mut rows);
    }
    let (l, r) = rows.split_at(mid);
    let mut w = Emit {
        prev: None,
        cfg,
        delim,
        out,
    };
    let (mut i, mut j) = (0, 0);
    while i < l.len() && j < r.len() {
        if cmp(&r[j], &l[i]) == Ordering::Less {
            w.line(line(&r[j]))?;
            j += 1;
        } else {
            w.line(line(&l[i]))?;
            i += 1;
        }
    }
    for x in l[i..].iter().chain(&r[j..]) {
        w.line(line(x))?;
    }
    Ok(())
}

/// Writes sorted lines, each followed by the delimiter (with `-u`, the first
/// of equal lines only).
struct Emit<'c, 'o, 'l> {
    prev: Option<&'l [u8]>,
    cfg: &'c Config,
    delim: u8,
    out: &'o mut dyn Write,
}

impl<'l> Emit<'_, '_, 'l> {
    fn line(&mut self, l: &'l [u8]) -> io::Result<()> {
        if self.cfg.unique {
            if let Some(p) = self.prev
                && self.cfg.compare(p, l) == Ordering::Equal
            {
                return Ok(());
            }
            self.prev = Some(l);
        }
        self.out.write_all(l)?;
        self.out.write_all(&[self.delim])
    }
}

/// `-c` / `-C`: reads `file` line by line, holding two lines, and stops at the
/// first disorder (as GNU sort does): checking needs no memory budget.
fn check_stream(
    ctx: &mut UtilCtx<'_>,
    cfg: &Config,
    check: Check,
    delim: u8,
    file: &str,
) -> io::Result<i32> {
    use std::io::BufRead;
    let name = ctx.name().to_string();
    let (host, cwd) = (ctx.host, ctx.cwd.clone());
    let mut disorder = None;
    let read = open_input(&mut *ctx.stdin, host, &cwd, file).and_then(|i| {
        let mut r = io::BufReader::with_capacity(BUF, i);
        let (mut prev, mut cur) = (Vec::new(), Vec::new());
        let mut n = 0usize;
        loop {
            cur.clear();
            if r.read_until(delim, &mut cur)? == 0 {
                return Ok(());
            }
            if cur.last() == Some(&delim) {
                cur.pop();
            }
            n += 1;
            if n > 1 {
                let d = cfg.compare(&prev, &cur);
                if d == Ordering::Greater || (cfg.unique && d == Ordering::Equal) {
                    disorder = Some((n, cur));
                    return Ok(());
                }
            }
            std::mem::swap(&mut prev, &mut cur);
        }
    });
    if let Err(e) = read {
        if host.cancelled() {
            return Err(e);
        }
        let _ = writeln!(
            ctx.stderr,
            "{name}: cannot read: {file}: {}",
            safesh_utils::io_error_text(&e)
        );
        return Ok(2);
    }
    let Some((line_no, line)) = disorder else {
        return Ok(0);
    };
    if check == Check::Diagnose {
        let _ = write!(ctx.stderr, "{name}: {file}:{line_no}: disorder: ");
        let _ = ctx.stderr.write_all(&line);
        let _ = ctx
            .stderr
            .write_all(&[if delim == 0 { b'\n' } else { delim }]);
    }
    Ok(1)
}
