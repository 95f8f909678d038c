//! `nl`: number lines, by section (header, body, footer delimited by `\:\:\:`,
//! `\:\:`, `\:` lines), with GNU's styles, formats and the padding of unnumbered
//! lines (width plus separator length, in spaces).

use crate::common::{BUF, each_line, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::posix_regex::{Dialect, Options, Target, translate_with};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "p",
    valued: "bdfhilnsvw",
    long: &[
        ("body-numbering", true, "b"),
        ("section-delimiter", true, "d"),
        ("footer-numbering", true, "f"),
        ("header-numbering", true, "h"),
        ("line-increment", true, "i"),
        ("join-blank-lines", true, "l"),
        ("number-format", true, "n"),
        ("no-renumber", false, "p"),
        ("number-separator", true, "s"),
        ("starting-line-number", true, "v"),
        ("number-width", true, "w"),
    ],
    stop_at_operand: false,
};

#[derive(Clone)]
enum Style {
    All,
    NonEmpty,
    None,
    /// `pBRE`: lines matching the basic regular expression.
    Regex(regex::bytes::Regex),
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Left,
    Right,
    Zero,
}

struct Opts {
    styles: [Style; 3],
    format: Format,
    width: usize,
    sep: Vec<u8>,
    start: i64,
    incr: i64,
    join: u64,
    renumber: bool,
    delim: Vec<u8>,
}

fn style(s: &str) -> Result<Style, String> {
    match s {
        "a" => Ok(Style::All),
        "t" => Ok(Style::NonEmpty),
        "n" => Ok(Style::None),
        _ => {
            let Some(bre) = s.strip_prefix('p') else {
                return Err(String::new());
            };
            let mut opts = Options::new(Dialect::Basic);
            opts.target = Target::Bytes;
            let t = translate_with(bre, &opts)?;
            if t.backrefs {
                return Err("back-references are not supported".into());
            }
            regex::bytes::Regex::new(&t.pattern)
                .map(Style::Regex)
                .map_err(|e| e.to_string())
        }
    }
}

/// Runs `nl`.
pub fn nl(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut o = Opts {
        styles: [Style::None, Style::NonEmpty, Style::None],
        format: Format::Right,
        width: 6,
        sep: b"\t".to_vec(),
        start: 1,
        incr: 1,
        join: 1,
        renumber: !p.has("p"),
        delim: b"\\:".to_vec(),
    };
    for opt in &p.opts {
        let v = opt.value.as_deref().unwrap_or("");
        let bad = |what: &str| format!("invalid {what}: '{v}'");
        match opt.name.as_str() {
            n @ ("h" | "b" | "f") => {
                let i = match n {
                    "h" => 0,
                    "b" => 1,
                    _ => 2,
                };
                match style(v) {
                    Ok(s) => o.styles[i] = s,
                    Err(e) if !e.is_empty() => {
                        let name = ctx.name().to_string();
                        let _ = writeln!(ctx.stderr, "{name}: {e}");
                        return Ok(1);
                    }
                    Err(_) => {
                        let what = match n {
                            "h" => "header numbering style",
                            "b" => "body numbering style",
                            _ => "footer numbering style",
                        };
                        return Ok(usage(ctx, &bad(what), 1));
                    }
                }
            }
            "n" => {
                o.format = match v {
                    "ln" => Format::Left,
                    "rn" => Format::Right,
                    "rz" => Format::Zero,
                    _ => return Ok(usage(ctx, &bad("line numbering format"), 1)),
                }
            }
            "w" => match v.parse::<usize>() {
                Ok(w) if w > ctx.host.max_field_bytes() => {
                    let msg = format!(
                        "invalid line number field width: {v}: over the limit of {} bytes ([limits] string_bytes)",
                        ctx.host.max_field_bytes()
                    );
                    return Ok(usage(ctx, &msg, 1));
                }
                Ok(w) if w > 0 => o.width = w,
                _ => return Ok(usage(ctx, &bad("line number field width"), 1)),
            },
            "s" => o.sep = v.as_bytes().to_vec(),
            "v" => match v.parse::<i64>() {
                Ok(n) => o.start = n,
                Err(_) => return Ok(usage(ctx, &bad("starting line number"), 1)),
            },
            "i" => match v.parse::<i64>() {
                Ok(n) => o.incr = n,
                Err(_) => return Ok(usage(ctx, &bad("line number increment"), 1)),
            },
            "l" => match v.parse::<u64>() {
                Ok(n) if n > 0 => o.join = n,
                _ => return Ok(usage(ctx, &bad("line number of blank lines"), 1)),
            },
            "d" => {
                let mut d = v.as_bytes().to_vec();
                if d.len() == 1 {
                    d.push(b':');
                }
                o.delim = d;
            }
            _ => {}
        }
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
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut section = 1usize;
    let mut number = o.start;
    let mut blanks = 0u64;
    let header: Vec<u8> = o.delim.repeat(3);
    let body: Vec<u8> = o.delim.repeat(2);
    let pad = vec![b' '; o.width + o.sep.len()];
    for f in files {
        let input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        status |= each_line(input, &mut *ctx.stderr, &name, f, |line| {
            let (content, _) = crate::common::strip_delim(line, b'\n');
            let new_section = if o.delim.is_empty() {
                None
            } else if content == header.as_slice() {
                Some(0)
            } else if content == body.as_slice() {
                Some(1)
            } else if content == o.delim.as_slice() {
                Some(2)
            } else {
                None
            };
            if let Some(s) = new_section {
                section = s;
                if o.renumber {
                    number = o.start;
                }
                return out.write_all(b"\n");
            }
            let numbered = match &o.styles[section] {
                Style::All => {
                    if content.is_empty() {
                        blanks += 1;
                        if blanks >= o.join {
                            blanks = 0;
                            true
                        } else {
                            false
                        }
                    } else {
                        blanks = 0;
                        true
                    }
                }
                Style::NonEmpty => !content.is_empty(),
                Style::None => false,
                Style::Regex(re) => re.is_match(content),
            };
            if numbered {
                let w = o.width;
                let s = match o.format {
                    Format::Left => format!("{number:<w$}"),
                    Format::Right => format!("{number:>w$}"),
                    Format::Zero => format!("{number:0w$}"),
                };
                out.write_all(s.as_bytes())?;
                out.write_all(&o.sep)?;
                number = number.wrapping_add(o.incr);
            } else {
                out.write_all(&pad)?;
            }
            out.write_all(content)?;
            out.write_all(b"\n")
        })?;
    }
    out.flush()?;
    Ok(status)
}
