//! `tail`: the last N lines or bytes of each input, or everything from line/byte N
//! on. Following (`-f`, `-F`) is refused: a script must not block forever.

use crate::common::{BUF, Failure, Input, each_operand, finish, parse_count, read_some, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, Read, Seek, SeekFrom, Write};

const SPEC: Spec = Spec {
    flags: "fFqvz",
    valued: "cns",
    long: &[
        ("bytes", true, "c"),
        ("lines", true, "n"),
        ("follow", false, "f"),
        ("quiet", false, "q"),
        ("silent", false, "q"),
        ("verbose", false, "v"),
        ("zero-terminated", false, "z"),
        ("retry", false, "retry"),
        ("sleep-interval", true, "s"),
        ("pid", true, "pid"),
        ("max-unchanged-stats", true, "max-unchanged-stats"),
    ],
    stop_at_operand: false,
};

/// What to print of each input.
#[derive(Clone, Copy)]
enum Mode {
    LastLines(u64),
    LastBytes(u64),
    FromLine(u64),
    FromByte(u64),
}

/// Recognises the obsolete `tail [+-]N[bcl][f] [FILE]` form (one option, at most
/// one file), returning the mode and whether it asked to follow.
fn obsolete(args: &[String]) -> Option<(Mode, bool)> {
    let first = args.first()?;
    if args.len() > 2 || (args.len() == 2 && args[1].len() > 1 && args[1].starts_with('-')) {
        return None;
    }
    let from_start = match first.as_bytes().first()? {
        b'+' => true,
        b'-' => false,
        _ => return None,
    };
    let body = &first[1..];
    if !from_start
        && (body.is_empty() || body == "c" || !body.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    let nd = body.bytes().take_while(u8::is_ascii_digit).count();
    let (num, rest) = body.split_at(nd);
    let mut n = if num.is_empty() {
        10
    } else {
        parse_count(num)?
    };
    let mut bytes = false;
    let mut rest = rest.as_bytes();
    match rest.first() {
        Some(b'b') => {
            bytes = true;
            n = n.saturating_mul(512);
            rest = &rest[1..];
        }
        Some(b'c') => {
            bytes = true;
            rest = &rest[1..];
        }
        Some(b'l') => rest = &rest[1..],
        _ => {}
    }
    let follow = rest == b"f";
    if !rest.is_empty() && !follow {
        return None;
    }
    let mode = match (from_start, bytes) {
        (true, true) => Mode::FromByte(n),
        (true, false) => Mode::FromLine(n),
        (false, true) => Mode::LastBytes(n),
        (false, false) => Mode::LastLines(n),
    };
    Some((mode, follow))
}

const NO_FOLLOW: &str =
    "following files (-f/-F) is not supported in safesh; read the file again instead";

/// Runs `tail`.
pub fn tail(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let mut mode = Mode::LastLines(10);
    let mut headers: Option<bool> = None;
    let mut delim = b'\n';
    let files: Vec<String>;
    if let Some((m, follow)) = obsolete(ctx.args()) {
        if follow {
            let name = ctx.name().to_string();
            common_warn(ctx, &name, NO_FOLLOW);
            return Ok(1);
        }
        mode = m;
        files = ctx.args().get(1..).unwrap_or(&[]).to_vec();
    } else {
        if ctx.args().iter().any(|a| a.starts_with("--follow=")) {
            let name = ctx.name().to_string();
            common_warn(ctx, &name, NO_FOLLOW);
            return Ok(1);
        }
        let p = match args::parse(ctx.args(), &SPEC) {
            Ok(p) => p,
            Err(e) => return Ok(usage(ctx, &e, 1)),
        };
        for opt in &p.opts {
            let v = opt.value.as_deref().unwrap_or("");
            match opt.name.as_str() {
                "c" | "n" => {
                    let (plus, digits) = match v.strip_prefix('+') {
                        Some(d) => (true, d),
                        None => (false, v.strip_prefix('-').unwrap_or(v)),
                    };
                    let Some(n) = parse_count(digits) else {
                        let what = if opt.name == "c" { "bytes" } else { "lines" };
                        let name = ctx.name().to_string();
                        common_warn(ctx, &name, &format!("invalid number of {what}: '{v}'"));
                        return Ok(1);
                    };
                    mode = match (opt.name.as_str(), plus) {
                        ("c", false) => Mode::LastBytes(n),
                        ("c", true) => Mode::FromByte(n),
                        (_, false) => Mode::LastLines(n),
                        (_, true) => Mode::FromLine(n),
                    };
                }
                "f" | "F" => {
                    let name = ctx.name().to_string();
                    common_warn(ctx, &name, NO_FOLLOW);
                    return Ok(1);
                }
                "q" => headers = Some(false),
                "v" => headers = Some(true),
                "z" => delim = 0,
                _ => {}
            }
        }
        files = p.operands;
    }
    let files = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files
    };
    let show_headers = headers.unwrap_or(files.len() > 1);
    let r = run(ctx, mode, delim, show_headers, &files);
    match r {
        // The last lines of a stream would not fit its share of [limits] memory_mb.
        Err(e)
            if e.get_ref()
                .is_some_and(|i| i.is::<safesh_utils::ctx::MemoryLimit>()) =>
        {
            let budget = ctx.host.memory_budget();
            Err(safesh_utils::ctx::MemoryLimit::interrupt("tail", budget))
        }
        r => finish(ctx, r),
    }
}

fn common_warn(ctx: &mut UtilCtx<'_>, name: &str, msg: &str) {
    let _ = writeln!(ctx.stderr, "{name}: {msg}");
}

fn run(
    ctx: &mut UtilCtx<'_>,
    mode: Mode,
    delim: u8,
    show_headers: bool,
    files: &[String],
) -> io::Result<i32> {
    let budget = ctx.host.memory_budget();
    each_operand(ctx, files, show_headers, |input, mut out| match mode {
        Mode::LastLines(n) => last_lines(input, &mut out, n, delim, budget),
        Mode::LastBytes(n) => last_bytes(input, &mut out, n, budget),
        Mode::FromLine(n) => from_line(input, &mut out, n, delim),
        Mode::FromByte(n) => from_byte(input, &mut out, n),
    })
}

/// Copies the rest of `input` to `out`.
fn copy_rest(input: &mut impl Read, out: &mut impl Write, buf: &mut [u8]) -> Result<(), Failure> {
    loop {
        let got = read_some(input, buf)?;
        if got == 0 {
            return Ok(());
        }
        out.write_all(&buf[..got]).map_err(Failure::Write)?;
    }
}

fn from_line(
    input: &mut Input<'_>,
    out: &mut impl Write,
    n: u64,
    delim: u8,
) -> Result<(), Failure> {
    let mut skip = n.saturating_sub(1);
    let mut buf = vec![0u8; BUF];
    while skip > 0 {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            return Ok(());
        }
        for pos in memchr::memchr_iter(delim, &buf[..got]) {
            skip -= 1;
            if skip == 0 {
                out.write_all(&buf[pos + 1..got]).map_err(Failure::Write)?;
                break;
            }
        }
    }
    copy_rest(input, out, &mut buf)
}

fn from_byte(input: &mut Input<'_>, out: &mut impl Write, n: u64) -> Result<(), Failure> {
    let mut skip = n.saturating_sub(1);
    let mut buf = vec![0u8; BUF];
    while skip > 0 {
        let want = usize::try_from(skip).unwrap_or(usize::MAX).min(buf.len());
        let got = read_some(input, &mut buf[..want])?;
        if got == 0 {
            return Ok(());
        }
        skip -= got as u64;
    }
    copy_rest(input, out, &mut buf)
}

/// Size of a regular file behind `input`, positioned at its start, if seekable.
fn regular_size<'b>(input: &'b mut Input<'_>) -> Option<(u64, &'b mut std::fs::File)> {
    let f = input.file()?;
    let md = f.metadata().ok()?;
    if !md.is_file() {
        return None;
    }
    Some((md.len(), f))
}

/// What a stream's last lines or bytes would hold past `budget` (the
/// utility's memory budget): the tool stops (a `LIMIT_EXCEEDED`).
fn over_budget(budget: u64) -> Failure {
    Failure::Write(io::Error::other(safesh_utils::ctx::MemoryLimit {
        what: "tail".into(),
        budget,
    }))
}

fn last_bytes(
    input: &mut Input<'_>,
    out: &mut impl Write,
    n: u64,
    budget: u64,
) -> Result<(), Failure> {
    let mut buf = vec![0u8; BUF];
    if let Some((size, f)) = regular_size(input) {
        let start = size.saturating_sub(n);
        f.seek(SeekFrom::Start(start)).map_err(Failure::Read)?;
        return copy_rest(f, out, &mut buf);
    }
    let keep = usize::try_from(n).unwrap_or(usize::MAX);
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        pending.extend_from_slice(&buf[..got]);
        if pending.len() > keep.saturating_add(BUF) {
            let drop = pending.len() - keep;
            pending.drain(..drop);
        }
        if pending.len() as u64 > budget.saturating_add(BUF as u64) {
            return Err(over_budget(budget));
        }
    }
    let start = pending.len().saturating_sub(keep);
    out.write_all(&pending[start..]).map_err(Failure::Write)
}

/// Offset in `data` where its last `n` lines start (a final partial line counts).
fn tail_start(data: &[u8], n: u64, delim: u8) -> usize {
    if n == 0 {
        return data.len();
    }
    let mut end = data.len();
    if data.last() == Some(&delim) {
        end -= 1;
    }
    let mut left = n;
    for pos in memchr::memrchr_iter(delim, &data[..end]) {
        left -= 1;
        if left == 0 {
            return pos + 1;
        }
    }
    0
}

fn last_lines(
    input: &mut Input<'_>,
    out: &mut impl Write,
    n: u64,
    delim: u8,
    budget: u64,
) -> Result<(), Failure> {
    if let Some((size, f)) = regular_size(input) {
        return last_lines_seek(f, size, out, n, delim);
    }
    let mut buf = vec![0u8; BUF];
    let mut pending: Vec<u8> = Vec::new();
    let mut trim_at = 4 * BUF;
    loop {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        pending.extend_from_slice(&buf[..got]);
        if pending.len() > trim_at {
            let start = tail_start(&pending, n, delim);
            pending.drain(..start);
            trim_at = (pending.len() * 2).max(4 * BUF);
            if pending.len() as u64 > budget {
                return Err(over_budget(budget));
            }
        }
    }
    let start = tail_start(&pending, n, delim);
    out.write_all(&pending[start..]).map_err(Failure::Write)
}

/// Reads a regular file backwards in blocks until `n` lines are found, then copies
/// from there to the end.
fn last_lines_seek(
    f: &mut std::fs::File,
    size: u64,
    out: &mut impl Write,
    n: u64,
    delim: u8,
) -> Result<(), Failure> {
    let mut buf = vec![0u8; BUF];
    let mut pos = size;
    let mut left = n;
    let mut start = 0u64;
    let mut skip_last = true;
    if n == 0 {
        return Ok(());
    }
    'outer: while pos > 0 {
        let len = (BUF as u64).min(pos);
        pos -= len;
        let block = &mut buf[..len as usize];
        f.seek(SeekFrom::Start(pos)).map_err(Failure::Read)?;
        f.read_exact(block).map_err(Failure::Read)?;
        let mut end = block.len();
        if skip_last {
            skip_last = false;
            if block.last() == Some(&delim) {
                end -= 1;
            }
        }
        for i in memchr::memrchr_iter(delim, &block[..end]) {
            left -= 1;
            if left == 0 {
                start = pos + i as u64 + 1;
                break 'outer;
            }
        }
    }
    f.seek(SeekFrom::Start(start)).map_err(Failure::Read)?;
    copy_rest(f, out, &mut buf)
}
