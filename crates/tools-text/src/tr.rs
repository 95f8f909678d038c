//! `tr`: translate, delete or squeeze bytes of stdin, with GNU set syntax
//! (ranges, escapes, `[:class:]`, `[=c=]`, `[c*n]` repeats).

use crate::common::{BUF, finish, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io;

const SPEC: Spec = Spec {
    flags: "cCdst",
    valued: "",
    long: &[
        ("complement", false, "c"),
        ("delete", false, "d"),
        ("squeeze-repeats", false, "s"),
        ("truncate-set1", false, "t"),
    ],
    stop_at_operand: false,
};

/// One element of a set as written.
#[derive(Debug, Clone, PartialEq)]
enum Elem {
    Char(u8),
    Range(u8, u8),
    Class(&'static str),
    /// `[c*n]`; `None` fills up to the length of set1.
    Repeat(u8, Option<usize>),
}

const CLASSES: &[&str] = &[
    "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space",
    "upper", "xdigit",
];

fn in_class(name: &str, b: u8) -> bool {
    match name {
        "alnum" => b.is_ascii_alphanumeric(),
        "alpha" => b.is_ascii_alphabetic(),
        "blank" => b == b' ' || b == b'\t',
        "cntrl" => b.is_ascii_control(),
        "digit" => b.is_ascii_digit(),
        "graph" => b.is_ascii_graphic(),
        "lower" => b.is_ascii_lowercase(),
        "print" => (0x20..0x7f).contains(&b),
        "punct" => b.is_ascii_punctuation(),
        "space" => matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'),
        "upper" => b.is_ascii_uppercase(),
        "xdigit" => b.is_ascii_hexdigit(),
        _ => false,
    }
}

/// Reads one possibly escaped character at `i`, returning it and the next index.
fn one_char(s: &[u8], i: usize, warnings: &mut Vec<String>) -> (u8, usize) {
    let c = s[i];
    if c != b'\\' {
        return (c, i + 1);
    }
    let Some(&n) = s.get(i + 1) else {
        warnings.push("warning: an unescaped backslash at end of string is not portable".into());
        return (b'\\', i + 1);
    };
    let simple = match n {
        b'a' => Some(7),
        b'b' => Some(8),
        b'f' => Some(12),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(11),
        _ => None,
    };
    if let Some(v) = simple {
        return (v, i + 2);
    }
    if (b'0'..=b'7').contains(&n) {
        let mut v: u32 = 0;
        let mut j = i + 1;
        while j < s.len() && j < i + 4 && (b'0'..=b'7').contains(&s[j]) {
            let nv = v * 8 + u32::from(s[j] - b'0');
            if nv > 255 {
                warnings.push(format!(
                    "warning: the ambiguous octal escape \\{} is being\n\tinterpreted as the 2-byte sequence \\0{}, {}",
                    String::from_utf8_lossy(&s[i + 1..i + 4]),
                    String::from_utf8_lossy(&s[i + 1..i + 3]),
                    char::from(s[i + 3])
                ));
                break;
            }
            v = nv;
            j += 1;
        }
        return (v as u8, j);
    }
    (n, i + 2)
}

/// Parses a set operand into elements.
fn parse_set(s: &[u8], warnings: &mut Vec<String>) -> Result<Vec<Elem>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'[' {
            // [:class:]
            if s.get(i + 1) == Some(&b':')
                && let Some(end) = find(s, i + 2, b":]")
            {
                let name = String::from_utf8_lossy(&s[i + 2..end]).into_owned();
                match CLASSES.iter().find(|c| **c == name) {
                    Some(c) => out.push(Elem::Class(c)),
                    None => return Err(format!("invalid character class '{name}'")),
                }
                i = end + 2;
                continue;
            }
            // [=c=]
            if s.get(i + 1) == Some(&b'=')
                && let Some(end) = find(s, i + 2, b"=]")
            {
                let body = &s[i + 2..end];
                let (c, next) = if body.is_empty() {
                    (0, 0)
                } else {
                    one_char(body, 0, warnings)
                };
                if body.is_empty() || next != body.len() {
                    return Err(format!(
                        "{}: equivalence class operand must be a single character",
                        String::from_utf8_lossy(body)
                    ));
                }
                out.push(Elem::Char(c));
                i = end + 2;
                continue;
            }
            // [c*n]
            if i + 1 < s.len() {
                let (c, j) = one_char(s, i + 1, warnings);
                if s.get(j) == Some(&b'*')
                    && let Some(close) = s[j + 1..].iter().position(|&b| b == b']')
                {
                    let digits = &s[j + 1..j + 1 + close];
                    if digits.iter().all(u8::is_ascii_digit) {
                        let txt = String::from_utf8_lossy(digits);
                        let n = if digits.is_empty() {
                            None
                        } else {
                            let radix = if digits[0] == b'0' { 8 } else { 10 };
                            match usize::from_str_radix(&txt, radix) {
                                Ok(0) => None,
                                Ok(n) => Some(n),
                                Err(_) => {
                                    return Err(format!(
                                        "invalid repeat count '{txt}' in [c*n] construct"
                                    ));
                                }
                            }
                        };
                        out.push(Elem::Repeat(c, n));
                        i = j + 2 + close;
                        continue;
                    }
                }
            }
        }
        let (c, j) = one_char(s, i, warnings);
        if s.get(j) == Some(&b'-') && j + 1 < s.len() {
            let (hi, k) = one_char(s, j + 1, warnings);
            if hi < c {
                return Err(format!(
                    "range-endpoints of '{}-{}' are in reverse collating sequence order",
                    show(c),
                    show(hi)
                ));
            }
            out.push(Elem::Range(c, hi));
            i = k;
        } else {
            out.push(Elem::Char(c));
            i = j;
        }
    }
    Ok(out)
}

fn show(c: u8) -> String {
    if (0x20..0x7f).contains(&c) {
        char::from(c).to_string()
    } else {
        format!("\\{c:03o}")
    }
}

fn find(s: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    s.get(from..)?
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| p + from)
}

/// Expands elements to bytes; `fill` is the length a `[c*]` fills up to. Also
/// returns where each `[:upper:]`/`[:lower:]` class starts.
fn expand(elems: &[Elem], fill: usize) -> (Vec<u8>, Vec<(usize, &'static str)>) {
    let fixed: usize = elems
        .iter()
        .map(|e| match e {
            Elem::Char(_) => 1,
            Elem::Range(a, b) => usize::from(b - a) + 1,
            Elem::Class(c) => (0..=255u8).filter(|b| in_class(c, *b)).count(),
            Elem::Repeat(_, Some(n)) => *n,
            Elem::Repeat(_, None) => 0,
        })
        .sum();
    let mut out = Vec::new();
    let mut cases = Vec::new();
    for e in elems {
        match e {
            Elem::Char(c) => out.push(*c),
            Elem::Range(a, b) => out.extend(*a..=*b),
            Elem::Class(c) => {
                if *c == "upper" || *c == "lower" {
                    cases.push((out.len(), *c));
                }
                out.extend((0..=255u8).filter(|b| in_class(c, *b)));
            }
            Elem::Repeat(c, Some(n)) => out.extend(std::iter::repeat_n(*c, *n)),
            Elem::Repeat(c, None) => {
                out.extend(std::iter::repeat_n(*c, fill.saturating_sub(fixed)));
            }
        }
    }
    (out, cases)
}

/// Runs `tr`.
pub fn tr(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let complement = p.has("c") || p.has("C");
    let delete = p.has("d");
    let squeeze = p.has("s");
    let truncate = p.has("t");
    let ops = &p.operands;
    let needed = if delete && squeeze || !delete && !squeeze {
        2
    } else {
        1
    };
    if ops.is_empty() {
        return Ok(usage(ctx, "missing operand", 1));
    }
    if (delete || !squeeze) && ops.len() < needed {
        let msg = if delete {
            format!(
                "missing operand after '{}'\nTwo strings must be given when both deleting and squeezing repeats.",
                ops[0]
            )
        } else {
            format!(
                "missing operand after '{}'\nTwo strings must be given when translating.",
                ops[0]
            )
        };
        return Ok(usage(ctx, &msg, 1));
    }
    let max = if squeeze && !delete { 2 } else { needed };
    if ops.len() > max {
        let mut msg = format!("extra operand '{}'", ops[max]);
        if delete && !squeeze {
            msg.push_str(
                "\nOnly one string may be given when deleting without squeezing repeated characters.",
            );
        }
        return Ok(usage(ctx, &msg, 1));
    }
    let mut warnings = Vec::new();
    let parsed: Result<Vec<Vec<Elem>>, String> = ops
        .iter()
        .map(|o| parse_set(o.as_bytes(), &mut warnings))
        .collect();
    let name = ctx.name().to_string();
    for w in &warnings {
        let _ = writeln!(ctx.stderr, "{name}: {w}");
    }
    let sets = match parsed {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(ctx.stderr, "{name}: {e}");
            return Ok(1);
        }
    };
    if sets[0].iter().any(|e| matches!(e, Elem::Repeat(_, None))) {
        let _ = writeln!(
            ctx.stderr,
            "{name}: the [c*] repeat construct may not appear in string1"
        );
        return Ok(1);
    }
    let (mut set1, cases1) = expand(&sets[0], 0);
    if complement {
        let mut member = [false; 256];
        for &b in &set1 {
            member[usize::from(b)] = true;
        }
        set1 = (0..=255u8).filter(|b| !member[usize::from(*b)]).collect();
    }
    let mut in1 = [false; 256];
    for &b in &set1 {
        in1[usize::from(b)] = true;
    }
    let translating = !delete && sets.len() == 2;
    let mut map: [u8; 256] = std::array::from_fn(|i| i as u8);
    let mut squeeze_set = [false; 256];
    if let Some(s2) = sets.get(1) {
        let (mut set2, cases2) = expand(s2, set1.len());
        if translating {
            if s2
                .iter()
                .any(|e| matches!(e, Elem::Class(c) if *c != "upper" && *c != "lower"))
            {
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: when translating, the only character classes that may appear in\nstring2 are 'upper' and 'lower'"
                );
                return Ok(1);
            }
            let aligned = cases2
                .iter()
                .all(|(pos, _)| !complement && cases1.iter().any(|(p1, _)| p1 == pos));
            if !aligned {
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: misaligned [:upper:] and/or [:lower:] construct"
                );
                return Ok(1);
            }
            if truncate {
                set1.truncate(set2.len());
            } else if set2.len() < set1.len() {
                let Some(&last) = set2.last() else {
                    let _ = writeln!(
                        ctx.stderr,
                        "{name}: when not truncating set1, string2 must be non-empty"
                    );
                    return Ok(1);
                };
                set2.resize(set1.len(), last);
            }
            for (a, b) in set1.iter().zip(set2.iter()) {
                map[usize::from(*a)] = *b;
            }
        }
        if squeeze {
            for &b in &set2 {
                squeeze_set[usize::from(b)] = true;
            }
        }
    } else if squeeze {
        squeeze_set = in1;
    }
    let job = Job {
        map,
        translating,
        delete: if delete { Some(in1) } else { None },
        squeeze: if squeeze { Some(squeeze_set) } else { None },
    };
    let r = run(ctx, &job);
    finish(ctx, r)
}

struct Job {
    map: [u8; 256],
    translating: bool,
    delete: Option<[bool; 256]>,
    squeeze: Option<[bool; 256]>,
}

fn run(ctx: &mut UtilCtx<'_>, job: &Job) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let mut buf = vec![0u8; BUF];
    let mut out_buf = Vec::with_capacity(BUF);
    let mut last: Option<u8> = None;
    loop {
        if ctx.host.cancelled() {
            ctx.stdout.flush()?;
            return Ok(130);
        }
        let n = match ctx.stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                crate::common::warn_io(&mut *ctx.stderr, &name, "read error", &e);
                ctx.stdout.write_all(&out_buf)?;
                return Ok(1);
            }
        };
        out_buf.clear();
        for &b in &buf[..n] {
            if let Some(del) = &job.delete
                && del[usize::from(b)]
            {
                continue;
            }
            let c = if job.translating {
                job.map[usize::from(b)]
            } else {
                b
            };
            if let Some(sq) = &job.squeeze
                && sq[usize::from(c)]
                && last == Some(c)
            {
                continue;
            }
            last = Some(c);
            out_buf.push(c);
        }
        ctx.stdout.write_all(&out_buf)?;
    }
    ctx.stdout.flush()?;
    Ok(0)
}
