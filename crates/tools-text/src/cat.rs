//! `cat`: concatenate files, optionally numbering lines, squeezing blank lines and
//! showing non-printing characters (GNU coreutils semantics; state such as the line
//! number and a pending partial line carries over from one file to the next).

use crate::common::{self, BUF, Failure, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

const SPEC: Spec = Spec {
    flags: "AbeEnstTuv",
    valued: "",
    long: &[
        ("show-all", false, "A"),
        ("number-nonblank", false, "b"),
        ("show-ends", false, "E"),
        ("number", false, "n"),
        ("squeeze-blank", false, "s"),
        ("show-tabs", false, "T"),
        ("show-nonprinting", false, "v"),
    ],
    stop_at_operand: false,
};

#[derive(Default)]
struct Opts {
    number: bool,
    nonblank: bool,
    squeeze: bool,
    ends: bool,
    tabs: bool,
    nonprinting: bool,
}

impl Opts {
    fn plain(&self) -> bool {
        !(self.number
            || self.nonblank
            || self.squeeze
            || self.ends
            || self.tabs
            || self.nonprinting)
    }
}

/// State that persists across input files, as in GNU cat.
struct State {
    line_no: u64,
    at_start: bool,
    blank_run: u32,
}

/// Runs `cat`.
pub fn cat(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut o = Opts::default();
    for opt in &p.opts {
        match opt.name.as_str() {
            "A" => (o.nonprinting, o.ends, o.tabs) = (true, true, true),
            "b" => o.nonblank = true,
            "e" => (o.nonprinting, o.ends) = (true, true),
            "E" => o.ends = true,
            "n" => o.number = true,
            "s" => o.squeeze = true,
            "t" => (o.nonprinting, o.tabs) = (true, true),
            "T" => o.tabs = true,
            "v" => o.nonprinting = true,
            _ => {}
        }
    }
    if o.nonblank {
        o.number = true;
    }
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    let r = run(ctx, &o, &files);
    finish(ctx, r)
}

fn run(ctx: &mut UtilCtx<'_>, o: &Opts, files: &[String]) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut status = 0;
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut st = State {
        line_no: 0,
        at_start: true,
        blank_run: 0,
    };
    for f in files {
        let input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        let res = if o.plain() {
            copy(input, &mut out)
        } else {
            lines(input, &mut out, o, &mut st)
        };
        match res {
            Ok(()) => {}
            Err(Failure::Read(e)) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
            }
            Err(Failure::Write(e)) => return Err(e),
        }
    }
    out.flush()?;
    Ok(status)
}

fn copy(mut input: impl Read, out: &mut impl Write) -> Result<(), Failure> {
    let mut buf = vec![0u8; BUF * 2];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Read(e)),
        };
        out.write_all(&buf[..n]).map_err(Failure::Write)?;
    }
}

fn lines(input: impl Read, out: &mut impl Write, o: &Opts, st: &mut State) -> Result<(), Failure> {
    let mut r = BufReader::with_capacity(BUF, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(Failure::Read)?;
        if n == 0 {
            return Ok(());
        }
        line_out(&line, out, o, st).map_err(Failure::Write)?;
    }
}

fn line_out(line: &[u8], out: &mut impl Write, o: &Opts, st: &mut State) -> io::Result<()> {
    let (content, has_nl) = common::strip_delim(line, b'\n');
    if st.at_start && content.is_empty() && has_nl {
        st.blank_run = st.blank_run.saturating_add(1);
        if o.squeeze && st.blank_run >= 2 {
            return Ok(());
        }
        if o.number && !o.nonblank {
            st.line_no += 1;
            write!(out, "{:>6}\t", st.line_no)?;
        }
        if o.ends {
            out.write_all(b"$")?;
        }
        return out.write_all(b"\n");
    }
    if !content.is_empty() {
        if st.at_start && o.number {
            st.line_no += 1;
            write!(out, "{:>6}\t", st.line_no)?;
        }
        st.at_start = false;
        if o.nonprinting || o.tabs {
            show(content, out, o)?;
        } else {
            out.write_all(content)?;
        }
    }
    if has_nl {
        st.at_start = true;
        st.blank_run = 0;
        if o.ends {
            out.write_all(b"$")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `content` with `-v` / `-T` notation (`^X`, `M-x`, `^?`, `^I`).
fn show(content: &[u8], out: &mut impl Write, o: &Opts) -> io::Result<()> {
    let mut tmp = Vec::with_capacity(content.len() + 16);
    for &b in content {
        if b == b'\t' {
            if o.tabs {
                tmp.extend_from_slice(b"^I");
            } else {
                tmp.push(b);
            }
            continue;
        }
        if !o.nonprinting {
            tmp.push(b);
            continue;
        }
        let mut c = b;
        if c >= 128 {
            tmp.extend_from_slice(b"M-");
            c -= 128;
        }
        if c < 32 {
            tmp.push(b'^');
            tmp.push(c + 64);
        } else if c == 127 {
            tmp.extend_from_slice(b"^?");
        } else {
            tmp.push(c);
        }
    }
    out.write_all(&tmp)
}
