//! `od` (GNU coreutils 9.1): offsets (`-A d|o|x|n`), output types (`-t` with
//! `d o u x` sizes 1/2/4/8, `f` sizes 4/8/16 (`F D L`), `c`, `a`, `z` trailer;
//! traditional `-a -b -B -c -d -D -e -f -F -h -H -i -I -l -L -o -O -s -x -X`), `-j`
//! skip, `-N` limit, `-w` width, `-v`, `*` for repeated lines, and the old-style
//! operands (`[FILE] [[+]OFFSET [[+]LABEL]]`, `--traditional`), `--endian`, and
//! `-S`/`--strings` (in `od_strings`).

use crate::out::Out;
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Read;

/// How one output type renders its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Signed,
    Unsigned,
    Octal,
    Hex,
    Char,
    Named,
    /// IEEE floats (4, 8 bytes) and the x87 `long double` (16 bytes, 10 used),
    /// printed as GNU does: the shortest `%g` that reads back as the same value.
    Float,
}

#[derive(Clone, Copy, Debug)]
struct Type {
    kind: Kind,
    size: usize,
    width: usize,
    trailer: bool,
}

impl Type {
    fn new(kind: Kind, size: usize) -> Type {
        let idx = size.trailing_zeros() as usize; // 1,2,4,8 -> 0..3
        let width = match kind {
            Kind::Signed => [4, 6, 11, 20][idx.min(3)],
            Kind::Unsigned => [3, 5, 10, 20][idx.min(3)],
            Kind::Octal => [3, 6, 11, 22][idx.min(3)],
            Kind::Hex => [2, 4, 8, 16][idx.min(3)],
            Kind::Char | Kind::Named => 3,
            // GNU's widths: FLT/DBL/LDBL_STRLEN_BOUND_L + 1 separator counted apart.
            Kind::Float => match size {
                4 => 15,
                8 => 24,
                _ => 29,
            },
        };
        Type {
            kind,
            size,
            width,
            trailer: false,
        }
    }
}

const NAMES: [&str; 33] = [
    "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr",
    "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc",
    "fs", "gs", "rs", "us", "sp",
];

/// Parses a `-t` type string (possibly several types, e.g. `x1z` or `d2o1`).
fn parse_types(s: &str, out: &mut Vec<Type>) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    if b.is_empty() {
        return Err(format!("invalid type string '{s}'"));
    }
    while i < b.len() {
        let kind = match b[i] {
            b'd' => Kind::Signed,
            b'u' => Kind::Unsigned,
            b'o' => Kind::Octal,
            b'x' => Kind::Hex,
            b'c' => Kind::Char,
            b'a' => Kind::Named,
            b'f' => Kind::Float,
            _ => return Err(format!("invalid type string '{s}'")),
        };
        i += 1;
        let mut size = 1;
        if kind == Kind::Float {
            size = 8;
            match b.get(i) {
                Some(b'F') => {
                    size = 4;
                    i += 1;
                }
                Some(b'D') => {
                    size = 8;
                    i += 1;
                }
                Some(b'L') => {
                    size = 16;
                    i += 1;
                }
                Some(c) if c.is_ascii_digit() => {
                    let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                    size = s[i..i + n].parse().unwrap_or(0);
                    i += n;
                    if ![4, 8, 16].contains(&size) {
                        return Err(format!(
                            "invalid type string '{s}';\nthis system doesn't provide a {size}-byte floating point type"
                        ));
                    }
                }
                _ => {}
            }
        }
        if matches!(
            kind,
            Kind::Signed | Kind::Unsigned | Kind::Octal | Kind::Hex
        ) {
            size = 4;
            match b.get(i) {
                Some(b'C') => {
                    size = 1;
                    i += 1;
                }
                Some(b'S') => {
                    size = 2;
                    i += 1;
                }
                Some(b'I') => {
                    size = 4;
                    i += 1;
                }
                Some(b'L') => {
                    size = 8;
                    i += 1;
                }
                Some(c) if c.is_ascii_digit() => {
                    let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                    size = s[i..i + n].parse().unwrap_or(0);
                    i += n;
                    if ![1, 2, 4, 8].contains(&size) {
                        return Err(format!(
                            "invalid type string '{s}';\nthis system doesn't provide a {size}-byte integral type"
                        ));
                    }
                }
                _ => {}
            }
        }
        let mut t = Type::new(kind, size);
        if b.get(i) == Some(&b'z') {
            t.trailer = true;
            i += 1;
        }
        out.push(t);
    }
    Ok(())
}

/// Parses a byte count: decimal, `0x` hex or `0` octal, with `b k m g` suffixes.
fn parse_count(s: &str) -> Option<u64> {
    let (digits, mult) = match s.as_bytes().last()? {
        b'b' if !s.starts_with("0x") => (&s[..s.len() - 1], 512),
        b'k' | b'K' => (&s[..s.len() - 1], 1024),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        b'g' | b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let v = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(h, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    v.checked_mul(mult)
}

struct Opts {
    radix: Option<u32>,
    skip: u64,
    limit: Option<u64>,
    types: Vec<Type>,
    verbose: bool,
    width: usize,
    files: Vec<String>,
    /// An option of the modern syntax was given (`-A -j -N -t -v -w`): operands
    /// are files only, unless `--traditional`.
    modern: bool,
    /// `--traditional`: `[FILE] [[+]OFFSET [[+]LABEL]]`.
    traditional: bool,
    /// The label of the first byte (`LABEL`), printed after the address.
    pseudo_start: Option<u64>,
    /// `-S N`/`--strings[=N]`: print NUL-terminated strings of at least N
    /// printable bytes instead of a dump.
    strings: Option<u64>,
    /// `--endian=big`: multi-byte elements are read big-endian.
    big_endian: bool,
}

fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        radix: Some(8),
        skip: 0,
        limit: None,
        types: Vec::new(),
        verbose: false,
        width: 16,
        files: Vec::new(),
        modern: false,
        traditional: false,
        pseudo_start: None,
        strings: None,
        big_endian: false,
    };
    let mut i = 0;
    let value = |name: &str, rest: &str, i: &mut usize| -> Result<String, String> {
        if !rest.is_empty() {
            return Ok(rest.to_string());
        }
        match args.get(*i) {
            Some(v) => {
                *i += 1;
                Ok(v.clone())
            }
            None => Err(format!("option requires an argument -- '{name}'")),
        }
    };
    let apply = |o: &mut Opts, key: char, v: Option<String>| -> Result<(), String> {
        o.modern = true;
        let v = v.unwrap_or_default();
        match key {
            'A' => {
                o.radix = match v.as_str() {
                    "d" => Some(10),
                    "o" => Some(8),
                    "x" => Some(16),
                    "n" => None,
                    _ => {
                        return Err(format!(
                            "invalid output address radix '{v}'; it must be one character from [doxn]"
                        ));
                    }
                }
            }
            'j' => o.skip = parse_count(&v).ok_or_else(|| format!("invalid -j argument '{v}'"))?,
            'N' => {
                o.limit = Some(parse_count(&v).ok_or_else(|| format!("invalid -N argument '{v}'"))?)
            }
            't' => parse_types(&v, &mut o.types)?,
            'S' => {
                o.strings = Some(if v.is_empty() {
                    3
                } else {
                    parse_count(&v).ok_or_else(|| format!("invalid -S argument '{v}'"))?
                })
            }
            'E' => {
                o.big_endian = match v.as_str() {
                    "big" => true,
                    "little" => false,
                    _ => {
                        return Err(format!(
                            "invalid argument '{v}' for '--endian'\nValid arguments are:\n  - 'big'\n  - 'little'"
                        ));
                    }
                }
            }
            'w' => {
                o.width = if v.is_empty() {
                    32
                } else {
                    match parse_count(&v) {
                        Some(n) if n > 0 => n as usize,
                        _ => return Err(format!("invalid -w argument '{v}'")),
                    }
                }
            }
            _ => {}
        }
        Ok(())
    };
    let mut only_files = false;
    while i < args.len() {
        let a = args[i].clone();
        i += 1;
        if only_files || a == "-" || !a.starts_with('-') {
            o.files.push(a);
            continue;
        }
        if a == "--" {
            only_files = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let table = [
                ("address-radix", 'A'),
                ("skip-bytes", 'j'),
                ("read-bytes", 'N'),
                ("format", 't'),
                ("output-duplicates", 'v'),
                ("width", 'w'),
                ("traditional", 'T'),
                ("strings", 'S'),
                ("endian", 'E'),
            ];
            let hits: Vec<_> = table.iter().filter(|(n, _)| n.starts_with(name)).collect();
            let [(full, key)] = hits[..] else {
                return Err(format!("unrecognized option '{a}'"));
            };
            match key {
                'v' => {
                    o.verbose = true;
                    o.modern = true;
                }
                'T' => o.traditional = true,
                'w' | 'S' => apply(&mut o, *key, inline)?,
                _ => {
                    let v = match inline {
                        Some(v) => v,
                        None => value(full, "", &mut i)
                            .map_err(|_| format!("option '--{full}' requires an argument"))?,
                    };
                    apply(&mut o, *key, Some(v))?;
                }
            }
            continue;
        }
        let body = &a[1..];
        for (k, c) in body.char_indices() {
            let rest = &body[k + c.len_utf8()..];
            let trad = match c {
                'a' => Some(Type::new(Kind::Named, 1)),
                'b' => Some(Type::new(Kind::Octal, 1)),
                'B' => Some(Type::new(Kind::Octal, 2)),
                'e' | 'F' => Some(Type::new(Kind::Float, 8)),
                'f' => Some(Type::new(Kind::Float, 4)),
                'h' => Some(Type::new(Kind::Hex, 2)),
                'H' => Some(Type::new(Kind::Hex, 4)),
                'I' | 'L' => Some(Type::new(Kind::Signed, 8)),
                'c' => Some(Type::new(Kind::Char, 1)),
                'd' => Some(Type::new(Kind::Unsigned, 2)),
                'o' => Some(Type::new(Kind::Octal, 2)),
                's' => Some(Type::new(Kind::Signed, 2)),
                'x' => Some(Type::new(Kind::Hex, 2)),
                'i' => Some(Type::new(Kind::Signed, 4)),
                'l' => Some(Type::new(Kind::Signed, 8)),
                'D' => Some(Type::new(Kind::Unsigned, 4)),
                'O' => Some(Type::new(Kind::Octal, 4)),
                'X' => Some(Type::new(Kind::Hex, 4)),
                _ => None,
            };
            if let Some(t) = trad {
                o.types.push(t);
                continue;
            }
            match c {
                'v' => {
                    o.verbose = true;
                    o.modern = true;
                }
                'w' => {
                    apply(&mut o, 'w', Some(rest.to_string()))?;
                    break;
                }
                'A' | 'j' | 'N' | 't' | 'S' => {
                    let v = value(&c.to_string(), rest, &mut i)?;
                    apply(&mut o, c, Some(v))?;
                    break;
                }
                _ => return Err(format!("invalid option -- '{c}'")),
            }
        }
    }
    if !o.modern || o.traditional {
        old_operands(&mut o);
        if o.traditional && o.files.len() > 1 {
            return Err(format!(
                "extra operand '{}'\ncompatibility mode supports at most one file",
                o.files[1]
            ));
        }
    }
    if o.strings.is_some() && !o.types.is_empty() {
        return Err("no type may be specified when dumping strings".into());
    }
    if o.types.is_empty() {
        o.types.push(Type::new(Kind::Octal, 2));
    }
    Ok(o)
}

/// GNU's reading of old-style operands: `+OFFSET` (or, with `--traditional`,
/// any OFFSET) as the bytes to skip, and with two offsets a label.
fn old_operands(o: &mut Opts) {
    let f = &o.files;
    match f.len() {
        1 => {
            if (o.traditional || f[0].starts_with('+'))
                && let Some(skip) = old_offset(&f[0])
            {
                o.skip = skip;
                o.files.clear();
            }
        }
        2 => {
            let second = &f[1];
            let candidate = o.traditional
                || second.starts_with('+')
                || second.bytes().next().is_some_and(|b| b.is_ascii_digit());
            if candidate && let Some(o2) = old_offset(second) {
                match old_offset(&f[0]).filter(|_| o.traditional) {
                    Some(o1) => {
                        o.skip = o1;
                        o.pseudo_start = Some(o2);
                        o.files.clear();
                    }
                    None => {
                        o.skip = o2;
                        o.files.truncate(1);
                    }
                }
            }
        }
        3 if o.traditional => {
            if let (Some(o1), Some(o2)) = (old_offset(&f[1]), old_offset(&f[2])) {
                o.skip = o1;
                o.pseudo_start = Some(o2);
                o.files.truncate(1);
            }
        }
        _ => {}
    }
}

/// GNU's `parse_old_offset`: an optional `+`, then octal, `0x` hex, or decimal
/// when the text holds a `.` (which GNU 9.1 then rejects as a suffix); `b`
/// multiplies by 512, `B` by 1024.
fn old_offset(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.is_empty() {
        return None;
    }
    let (radix, body) = if s.contains('.') {
        (10, s)
    } else if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else {
        (8, s)
    };
    let (digits, mult) = match body.as_bytes().last() {
        Some(b'b') if radix != 16 => (&body[..body.len() - 1], 512),
        Some(b'B') if radix != 16 => (&body[..body.len() - 1], 1024),
        _ => (body, 1),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()?.checked_mul(mult)
}

/// Renders one element (`size` bytes, little-endian) of type `t`.
fn render(t: &Type, bytes: &[u8]) -> String {
    let mut v: u64 = 0;
    for (k, b) in bytes.iter().enumerate().take(8) {
        v |= (*b as u64) << (8 * k);
    }
    let bits = t.size * 8;
    let w = t.width;
    match t.kind {
        Kind::Octal => format!("{v:0w$o}"),
        Kind::Hex => format!("{v:0w$x}"),
        Kind::Unsigned => format!("{v:w$}"),
        Kind::Signed => {
            let s = if bits == 64 {
                v as i64
            } else {
                ((v << (64 - bits)) as i64) >> (64 - bits)
            };
            format!("{s:w$}")
        }
        Kind::Char => {
            let c = bytes.first().copied().unwrap_or(0);
            let s = match c {
                0 => "\\0".to_string(),
                7 => "\\a".into(),
                8 => "\\b".into(),
                12 => "\\f".into(),
                b'\n' => "\\n".into(),
                b'\r' => "\\r".into(),
                b'\t' => "\\t".into(),
                11 => "\\v".into(),
                0x20..=0x7e => (c as char).to_string(),
                _ => format!("{c:03o}"),
            };
            format!("{s:>3}")
        }
        Kind::Float => crate::od_float::float_text(t.size, bytes),
        Kind::Named => {
            let c = bytes.first().copied().unwrap_or(0) & 0x7f;
            let s = match c {
                0..=32 => NAMES[c as usize].to_string(),
                127 => "del".into(),
                _ => (c as char).to_string(),
            };
            format!("{s:>3}")
        }
    }
}

fn lcm(a: usize, b: usize) -> usize {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Runs `od`.
pub fn od(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let o = match parse_args(ctx.args()) {
        Ok(o) => o,
        Err(e) => {
            ctx.warn(e);
            ctx.warn("Try 'od --help' for more information.");
            return Ok(1);
        }
    };
    let unit = o.types.iter().fold(1, |acc, t| lcm(acc, t.size));
    // GNU warns and falls back to one block of the widest type's multiple.
    let per_line = if o.width % unit != 0 {
        ctx.warn(format_args!(
            "warning: invalid width {}; using {unit} instead",
            o.width
        ));
        unit
    } else {
        o.width
    };
    // GNU's column alignment: every type's block is as wide as the widest one.
    let width_per_block = o
        .types
        .iter()
        .map(|t| (t.width + 1) * (per_line / t.size))
        .max()
        .unwrap_or(0);
    let files = if o.files.is_empty() {
        vec!["-".to_string()]
    } else {
        o.files.clone()
    };
    let mut status = 0;
    let mut data_src = Source {
        files,
        next: 0,
        cur: Cur::None,
        opened_any: false,
    };
    let mut out = Out::new(ctx);
    // Skip.
    let mut to_skip = o.skip;
    let mut scratch = vec![0u8; 64 * 1024];
    while to_skip > 0 {
        let want = (to_skip.min(scratch.len() as u64)) as usize;
        let n = data_src.read(out.ctx(), &mut scratch[..want], &mut status);
        if n == 0 {
            break;
        }
        to_skip -= n as u64;
    }
    if to_skip > 0 {
        out.warn("cannot skip past end of combined input");
        return Ok(out.finish_with(1));
    }
    if let Some(min) = o.strings {
        let end = o.limit.map(|n| o.skip.saturating_add(n));
        let mut st = crate::od_strings::Strings {
            src: &mut data_src,
            out: &mut out,
            status: &mut status,
        };
        st.dump(min, o.skip, end, |a| address(&o, a));
        return Ok(out.finish_with(status));
    }
    let mut offset = o.skip;
    let mut remaining = o.limit.unwrap_or(u64::MAX);
    let mut prev: Option<Vec<u8>> = None;
    let mut starred = false;
    let mut block = vec![0u8; per_line];
    let mut lines = 0u64;
    loop {
        let want = (per_line as u64).min(remaining) as usize;
        let mut got = 0;
        while got < want {
            let n = data_src.read(out.ctx(), &mut block[got..want], &mut status);
            if n == 0 {
                break;
            }
            got += n;
        }
        if got == 0 {
            break;
        }
        remaining -= got as u64;
        let data = &block[..got];
        if !o.verbose && got == per_line && prev.as_deref() == Some(data) {
            if !starred {
                out.write(b"*\n");
                starred = true;
            }
        } else {
            starred = false;
            let text = format_line(&o, offset, data, per_line, width_per_block);
            out.write(text.as_bytes());
            prev = Some(data.to_vec());
        }
        offset += got as u64;
        lines += 1;
        if lines.is_multiple_of(1024) && out.ctx().host.cancelled() {
            out.flush();
            return Ok(130);
        }
        if got < want {
            break;
        }
    }
    let end = address(&o, offset);
    // GNU prints nothing, not even the final offset, when no input opened.
    if !end.is_empty() && data_src.opened_any {
        out.write(format!("{end}\n").as_bytes());
    }
    Ok(out.finish_with(status))
}

/// The address column for `offset`: the offset in the `-A` radix, then the
/// label (`(LABEL)`) when old-style operands gave one.
fn address(o: &Opts, offset: u64) -> String {
    let std = o.radix.map(|r| fmt_offset(offset, r));
    match (std, o.pseudo_start) {
        (Some(s), Some(p)) => {
            let label = offset.wrapping_sub(o.skip).wrapping_add(p);
            format!("{s} ({})", fmt_offset(label, o.radix.unwrap_or(8)))
        }
        // GNU prints the offset itself in parentheses under `-An`.
        (None, Some(_)) => format!("({})", fmt_offset(offset, 8)),
        (Some(s), None) => s,
        (None, None) => String::new(),
    }
}

fn fmt_offset(off: u64, radix: u32) -> String {
    match radix {
        10 => format!("{off:07}"),
        16 => format!("{off:06x}"),
        _ => format!("{off:07o}"),
    }
}

fn format_line(o: &Opts, offset: u64, data: &[u8], per_line: usize, wpb: usize) -> String {
    let mut s = String::new();
    for (k, t) in o.types.iter().enumerate() {
        if k == 0 {
            s.push_str(&address(o, offset));
        } else if o.radix.is_some() || o.pseudo_start.is_some() {
            // GNU pads with the width of the plain offset, label or not.
            s.push_str(&" ".repeat(fmt_offset(0, o.radix.unwrap_or(8)).len()));
        }
        let fields = per_line / t.size;
        let present = data.len().div_ceil(t.size);
        let pad = wpb - t.width * fields;
        let mut pad_remaining = pad;
        for f in 0..present {
            let i = fields - f;
            let next_pad = pad * (i - 1) / fields;
            let adjusted = pad_remaining - next_pad + t.width;
            let start = f * t.size;
            let mut elem = [0u8; 16];
            let end = (start + t.size).min(data.len());
            elem[..end - start].copy_from_slice(&data[start..end]);
            if o.big_endian {
                // Zero-padded first, then swapped, as GNU does.
                elem[..t.size].reverse();
            }
            let text = render(t, &elem[..t.size]);
            s.push_str(&format!("{text:>adjusted$}"));
            pad_remaining = next_pad;
        }
        if t.trailer {
            let blank = (per_line - data.len()) / t.size;
            // The missing fields' share of the line, padding included.
            s.push_str(&" ".repeat(blank * t.width + pad_remaining));
            s.push_str("  >");
            for &b in data {
                s.push(if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                });
            }
            s.push('<');
        }
        s.push('\n');
    }
    s
}

/// The input being read.
pub(crate) enum Cur {
    None,
    File(std::fs::File),
    Stdin,
}

/// The inputs, read one after another as one stream.
pub(crate) struct Source {
    files: Vec<String>,
    next: usize,
    cur: Cur,
    /// Some input was opened.
    opened_any: bool,
}

impl Source {
    /// Reads into `buf` from the current input, moving on to the next at EOF;
    /// 0 means every input is exhausted. Open errors are reported and skipped.
    pub(crate) fn read(
        &mut self,
        ctx: &mut UtilCtx<'_>,
        buf: &mut [u8],
        status: &mut i32,
    ) -> usize {
        loop {
            let r = match &mut self.cur {
                Cur::None => {
                    let Some(name) = self.files.get(self.next).cloned() else {
                        return 0;
                    };
                    self.next += 1;
                    if name == "-" {
                        self.cur = Cur::Stdin;
                        self.opened_any = true;
                    } else {
                        match ctx.open(&name) {
                            Ok(f) => {
                                self.cur = Cur::File(f);
                                self.opened_any = true;
                            }
                            Err(e) => {
                                ctx.warn_io(&name, &e);
                                *status = 1;
                            }
                        }
                    }
                    continue;
                }
                Cur::File(f) => f.read(buf),
                Cur::Stdin => ctx.stdin.read(buf),
            };
            match r {
                Ok(0) => self.cur = Cur::None,
                Ok(n) => return n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let name = self
                        .files
                        .get(self.next.wrapping_sub(1))
                        .cloned()
                        .unwrap_or_default();
                    ctx.warn_io(&name, &e);
                    *status = 1;
                    self.cur = Cur::None;
                }
            }
        }
    }
}
