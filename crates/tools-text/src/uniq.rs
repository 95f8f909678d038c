//! `uniq`: report or omit repeated adjacent lines, comparing after skipping fields
//! (`-f`) and characters (`-s`), on at most `-w` characters, optionally ignoring case.

use crate::common::{BUF, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "cdDiuz",
    valued: "fsw",
    long: &[
        ("count", false, "c"),
        ("repeated", false, "d"),
        ("all-repeated", false, "D"),
        ("ignore-case", false, "i"),
        ("unique", false, "u"),
        ("zero-terminated", false, "z"),
        ("skip-fields", true, "f"),
        ("skip-chars", true, "s"),
        ("check-chars", true, "w"),
        ("group", false, "group"),
    ],
    stop_at_operand: false,
};

/// How `-D` / `--group` separate groups.
#[derive(Clone, Copy, PartialEq)]
enum Delimit {
    None,
    Prepend,
    Separate,
    Append,
    Both,
}

struct Opts {
    count: bool,
    repeated: bool,
    all_repeated: bool,
    unique: bool,
    icase: bool,
    skip_fields: u64,
    skip_chars: u64,
    check_chars: Option<u64>,
    delim: u8,
    delimit: Delimit,
    group: bool,
}

/// Splits `--all-repeated=X` / `--group=X` (optional values) off before parsing.
fn optional_values(args: &[String]) -> (Vec<String>, Option<(String, String)>) {
    let mut out = Vec::new();
    let mut special = None;
    for a in args {
        if let Some(v) = a.strip_prefix("--all-repeated=") {
            special = Some(("-D".to_string(), v.to_string()));
            out.push("-D".to_string());
        } else if let Some(v) = a.strip_prefix("--group=") {
            special = Some(("--group".to_string(), v.to_string()));
            out.push("--group".to_string());
        } else {
            out.push(a.clone());
        }
    }
    (out, special)
}

fn parse_num(ctx: &mut UtilCtx<'_>, v: &str, what: &str) -> Result<u64, i32> {
    match v.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => Ok(u64::MAX),
        Err(_) => {
            let name = ctx.name().to_string();
            let _ = writeln!(ctx.stderr, "{name}: {v}: invalid number of {what}");
            Err(1)
        }
    }
}

/// Runs `uniq`.
pub fn uniq(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let (argv, special) = optional_values(ctx.args());
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut o = Opts {
        count: p.has("c"),
        repeated: p.has("d"),
        all_repeated: p.has("D"),
        unique: p.has("u"),
        icase: p.has("i"),
        skip_fields: 0,
        skip_chars: 0,
        check_chars: None,
        delim: if p.has("z") { 0 } else { b'\n' },
        delimit: Delimit::None,
        group: p.has("group"),
    };
    if let Some((opt, v)) = special {
        let d = match (opt.as_str(), v.as_str()) {
            ("-D", "none") => Delimit::None,
            ("-D", "prepend") | ("--group", "prepend") => Delimit::Prepend,
            ("-D", "separate") | ("--group", "separate") => Delimit::Separate,
            ("--group", "append") => Delimit::Append,
            ("--group", "both") => Delimit::Both,
            _ => {
                let msg = format!("invalid argument '{v}' for '{opt}'");
                return Ok(usage(ctx, &msg, 1));
            }
        };
        o.delimit = d;
    } else if o.group {
        o.delimit = Delimit::Separate;
    }
    for (k, what) in [
        ("f", "fields to skip"),
        ("s", "bytes to skip"),
        ("w", "bytes to compare"),
    ] {
        if let Some(v) = p.value(k) {
            let n = match parse_num(ctx, v, what) {
                Ok(n) => n,
                Err(s) => return Ok(s),
            };
            match k {
                "f" => o.skip_fields = n,
                "s" => o.skip_chars = n,
                _ => o.check_chars = Some(n),
            }
        }
    }
    if o.group && (o.count || o.repeated || o.all_repeated || o.unique) {
        return Ok(usage(
            ctx,
            "--group is mutually exclusive with -c/-d/-D/-u",
            1,
        ));
    }
    if o.count && o.all_repeated {
        return Ok(usage(
            ctx,
            "printing all duplicated lines and repeat counts is meaningless",
            1,
        ));
    }
    if p.operands.len() > 2 {
        let msg = format!("extra operand '{}'", p.operands[2]);
        return Ok(usage(ctx, &msg, 1));
    }
    let input = p.operands.first().cloned().unwrap_or_else(|| "-".into());
    let output = p.operands.get(1).cloned();
    let r = run(ctx, &o, &input, output.as_deref());
    finish(ctx, r)
}

/// The part of `line` that is compared.
fn key<'l>(line: &'l [u8], o: &Opts) -> &'l [u8] {
    let blank = |b: u8| b == b' ' || b == b'\t';
    let mut i = 0;
    let n = line.len();
    for _ in 0..o.skip_fields {
        if i >= n {
            break;
        }
        while i < n && blank(line[i]) {
            i += 1;
        }
        while i < n && !blank(line[i]) {
            i += 1;
        }
    }
    i = n.min(i.saturating_add(usize::try_from(o.skip_chars).unwrap_or(usize::MAX)));
    let rest = &line[i..];
    match o.check_chars {
        Some(w) => &rest[..rest.len().min(usize::try_from(w).unwrap_or(usize::MAX))],
        None => rest,
    }
}

fn same(a: &[u8], b: &[u8], o: &Opts) -> bool {
    let (a, b) = (key(a, o), key(b, o));
    if o.icase {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

fn run(ctx: &mut UtilCtx<'_>, o: &Opts, input: &str, output: Option<&str>) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let reader = match open_input(&mut *ctx.stdin, host, &cwd, input) {
        Ok(r) => r,
        Err(e) => {
            warn_io(&mut *ctx.stderr, &name, input, &e);
            return Ok(1);
        }
    };
    let mut out: Box<dyn Write + '_> = match output {
        Some(path) if path != "-" => match crate::common::create_file(host, &cwd, path) {
            Ok(f) => Box::new(BufWriter::with_capacity(BUF, f)),
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, path, &e);
                return Ok(1);
            }
        },
        _ => Box::new(BufWriter::with_capacity(BUF, &mut *ctx.stdout)),
    };
    let mut r = BufReader::with_capacity(BUF, reader);
    let mut err = None;
    let res = if o.group {
        group_loop(&mut r, &mut *out, o, &mut err)
    } else {
        gnu_loop(&mut r, &mut *out, o, &mut err)
    };
    res?;
    out.flush()?;
    if let Some(e) = err {
        warn_io(&mut *ctx.stderr, &name, input, &e);
        return Ok(1);
    }
    Ok(0)
}

/// Reads the next line without its delimiter; false at the end (or on a read
/// error, which is stored in `err`).
fn next(r: &mut impl BufRead, line: &mut Vec<u8>, delim: u8, err: &mut Option<io::Error>) -> bool {
    line.clear();
    match r.read_until(delim, line) {
        Ok(0) => false,
        Ok(_) => {
            if line.last() == Some(&delim) {
                line.pop();
            }
            true
        }
        Err(e) => {
            *err = Some(e);
            false
        }
    }
}

/// GNU uniq's main loop: `prev` is written when a different line arrives (or on
/// every line with -D), with the number of matches seen so far deciding whether
/// it counts as unique, first repeated or later repeated.
fn gnu_loop(
    r: &mut impl BufRead,
    out: &mut dyn Write,
    o: &Opts,
    err: &mut Option<io::Error>,
) -> io::Result<()> {
    let output_unique = !(o.repeated || o.all_repeated);
    let first_repeated = !o.unique;
    let later_repeated = o.all_repeated;
    let write = |out: &mut dyn Write, line: &[u8], matched: bool, count: u64| -> io::Result<()> {
        let show = if count == 0 {
            output_unique
        } else if !matched {
            first_repeated
        } else {
            later_repeated
        };
        if !show {
            return Ok(());
        }
        if o.count {
            write!(out, "{:>7} ", count + 1)?;
        }
        line_out(out, line, o.delim)
    };
    let mut prev: Vec<u8> = Vec::new();
    let mut this: Vec<u8> = Vec::new();
    if !next(r, &mut prev, o.delim, err) {
        return Ok(());
    }
    let mut match_count: u64 = 0;
    let mut first_delimiter = true;
    while next(r, &mut this, o.delim, err) {
        let matched = same(&prev, &this, o);
        if matched {
            match_count = match_count.saturating_add(1);
        }
        if o.all_repeated && o.delimit != Delimit::None {
            if !matched {
                if match_count > 0 {
                    first_delimiter = false;
                }
            } else if match_count == 1
                && (o.delimit == Delimit::Prepend
                    || (o.delimit == Delimit::Separate && !first_delimiter))
            {
                out.write_all(&[o.delim])?;
            }
        }
        if !matched || later_repeated {
            write(out, &prev, matched, match_count)?;
            std::mem::swap(&mut prev, &mut this);
            if !matched {
                match_count = 0;
            }
        }
    }
    write(out, &prev, false, match_count)
}

/// `--group`: every line, with a delimiter line around groups.
fn group_loop(
    r: &mut impl BufRead,
    out: &mut dyn Write,
    o: &Opts,
    err: &mut Option<io::Error>,
) -> io::Result<()> {
    let mut prev: Vec<u8> = Vec::new();
    let mut this: Vec<u8> = Vec::new();
    let mut first = true;
    while next(r, &mut this, o.delim, err) {
        let new_group = first || !same(&prev, &this, o);
        if new_group {
            let sep = match o.delimit {
                Delimit::Prepend | Delimit::Both => true,
                Delimit::Separate | Delimit::Append => !first,
                Delimit::None => false,
            };
            if sep {
                out.write_all(&[o.delim])?;
            }
        }
        line_out(out, &this, o.delim)?;
        std::mem::swap(&mut prev, &mut this);
        first = false;
    }
    if !first && matches!(o.delimit, Delimit::Append | Delimit::Both) {
        out.write_all(&[o.delim])?;
    }
    Ok(())
}

fn line_out(out: &mut dyn Write, line: &[u8], delim: u8) -> io::Result<()> {
    out.write_all(line)?;
    out.write_all(&[delim])
}
