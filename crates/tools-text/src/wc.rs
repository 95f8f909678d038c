//! `wc`: line, word, byte/char counts and maximum line width, with GNU's column
//! width rules (width from the total size of the named regular files, at least 7
//! when an input is not a regular file, 1 for a single count of a single input).

use crate::common::{BUF, Failure, Input, finish, open_input, read_some, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "clLmw",
    valued: "",
    long: &[
        ("bytes", false, "c"),
        ("chars", false, "m"),
        ("lines", false, "l"),
        ("max-line-length", false, "L"),
        ("words", false, "w"),
    ],
    stop_at_operand: false,
};

#[derive(Default, Clone, Copy)]
struct Counts {
    lines: u64,
    words: u64,
    /// Characters (`-m` in a UTF-8 locale; bytes otherwise).
    chars: u64,
    bytes: u64,
    max_len: u64,
}

#[derive(Clone, Copy)]
struct Which {
    lines: bool,
    words: bool,
    chars: bool,
    bytes: bool,
    max_len: bool,
    /// The locale is UTF-8: `-m` counts characters, not bytes.
    utf8: bool,
    /// The locale is UTF-8: words are made of characters (`日本語` is a word,
    /// U+3000 separates words); in the C locale bytes past ASCII are neither.
    utf8_words: bool,
}

impl Which {
    fn count(&self) -> usize {
        [self.lines, self.words, self.chars, self.bytes, self.max_len]
            .iter()
            .filter(|b| **b)
            .count()
    }
}

/// Byte classes for word counting in the C locale.
const WORD: u8 = 0;
const SPACE: u8 = 1;
const NEUTRAL: u8 = 2;

/// [`class`] of every byte.
static CLASS: [u8; 256] = {
    let mut t = [NEUTRAL; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = class(i as u8);
        i += 1;
    }
    t
};

const fn class(b: u8) -> u8 {
    match b {
        b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => SPACE,
        0x21..=0x7e => WORD,
        // Non-printable bytes neither start nor end a word in GNU wc's C locale.
        _ => NEUTRAL,
    }
}

/// Runs `wc`.
pub fn wc(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let mut w = Which {
        lines: p.has("l"),
        words: p.has("w"),
        chars: p.has("m"),
        bytes: p.has("c"),
        max_len: p.has("L"),
        utf8: false,
        utf8_words: false,
    };
    let utf8_locale = ctx.env.utf8_locale();
    w.utf8 = w.chars && utf8_locale;
    w.utf8_words = utf8_locale;
    if w.count() == 0 {
        (w.lines, w.words, w.bytes) = (true, true, true);
    }
    ctx.host.output_is_count();
    let r = run(ctx, w, &p.operands);
    finish(ctx, r)
}

fn run(ctx: &mut UtilCtx<'_>, w: Which, operands: &[String]) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let named = !operands.is_empty();
    let files: Vec<String> = if named {
        operands.to_vec()
    } else {
        vec!["-".to_string()]
    };
    let width = number_width(ctx, w, &files);
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut sum = Counts::default();
    for f in &files {
        let mut input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        let mut c = Counts::default();
        match count(&mut input, w, &mut c) {
            Ok(()) => {}
            Err(Failure::Read(e)) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
            }
            Err(Failure::Write(e)) => return Err(e),
        }
        sum.lines += c.lines;
        sum.words += c.words;
        sum.bytes += c.bytes;
        sum.chars += c.chars;
        sum.max_len = sum.max_len.max(c.max_len);
        print(&mut out, &c, w, width, named.then_some(f.as_str()))?;
    }
    if files.len() > 1 {
        print(&mut out, &sum, w, width, Some("total"))?;
    }
    out.flush()?;
    Ok(status)
}

/// GNU's compute_number_width: 1 for a single count of a single input; otherwise
/// the digits of the total size of the regular files, at least 7 if any input
/// is not a regular file (inputs that cannot be examined are left out).
fn number_width(ctx: &UtilCtx<'_>, w: Which, files: &[String]) -> usize {
    if files.len() == 1 && w.count() == 1 {
        return 1;
    }
    let mut min_width = 1;
    let mut regular_total: u64 = 0;
    for f in files {
        let md = if f == "-" {
            // An in-process stdin is a pipe or buffer, never a regular file.
            min_width = 7;
            continue;
        } else {
            ctx.check_read(f).and_then(|p| ctx.stat(p, true))
        };
        match md {
            Ok(md) if md.is_file() => regular_total += md.len(),
            Ok(_) => min_width = 7,
            Err(_) => {}
        }
    }
    let mut width = 1;
    while regular_total >= 10 {
        regular_total /= 10;
        width += 1;
    }
    width.max(min_width)
}

fn print(
    out: &mut impl Write,
    c: &Counts,
    w: Which,
    width: usize,
    label: Option<&str>,
) -> io::Result<()> {
    let mut line = String::new();
    let vals = [
        (w.lines, c.lines),
        (w.words, c.words),
        (w.chars, if w.utf8 { c.chars } else { c.bytes }),
        (w.bytes, c.bytes),
        (w.max_len, c.max_len),
    ];
    for (on, v) in vals {
        if on {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&format!("{v:>width$}"));
        }
    }
    if let Some(l) = label {
        line.push(' ');
        line.push_str(l);
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}

fn count(input: &mut Input<'_>, w: Which, c: &mut Counts) -> Result<(), Failure> {
    // Only the byte count: a regular file's size answers it.
    if !(w.lines || w.words || w.max_len || w.utf8)
        && let Some(f) = input.file()
        && let Ok(md) = f.metadata()
        && md.is_file()
        && md.len() > 0
    {
        c.bytes = md.len();
        return Ok(());
    }
    // Starts small and doubles while reads fill it: zeroing a 128 KiB buffer cost
    // more than counting a small input (and whether `calloc` zeroes depends on
    // the heap's history, which made runs differ).
    let mut buf = vec![0u8; 4096];
    let slow = w.words || w.max_len;
    let mut in_word = false;
    // The start of a UTF-8 character cut by the end of a read.
    let mut carry: Vec<u8> = Vec::new();
    let mut pos: u64 = 0;
    loop {
        let got = read_some(input, &mut buf)?;
        if got == 0 {
            break;
        }
        let full = got == buf.len();
        let chunk = &buf[..got];
        c.bytes += got as u64;
        // memchr's count is vectorised (AVX2 when the CPU has it); a plain
        // `filter().count()` costs several times GNU wc's whole run on big files.
        c.lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if w.utf8 {
            // Every byte but a UTF-8 continuation byte starts a character.
            c.chars += chunk
                .iter()
                .filter(|&&b| !(0x80..0xc0).contains(&b))
                .count() as u64;
        }
        if slow {
            if w.max_len {
                for &b in chunk {
                    match b {
                        b'\n' | b'\r' | 0x0c => {
                            c.max_len = c.max_len.max(pos);
                            pos = 0;
                        }
                        b'\t' => pos += 8 - pos % 8,
                        0x20..=0x7e => pos += 1,
                        _ => {}
                    }
                }
            }
            if w.words && w.utf8_words {
                words_utf8(chunk, &mut carry, &mut in_word, &mut c.words);
            } else if w.words {
                for &b in chunk {
                    match CLASS[usize::from(b)] {
                        WORD => {
                            c.words += u64::from(!in_word);
                            in_word = true;
                        }
                        SPACE => in_word = false,
                        _ => {}
                    }
                }
            }
        }
        if full && buf.len() < BUF * 2 {
            buf.resize(buf.len() * 2, 0);
        }
    }
    c.max_len = c.max_len.max(pos);
    Ok(())
}

/// Counts words in a UTF-8 locale as GNU wc 9 does: a printable character that
/// is not a space starts or continues a word, a space (ASCII, Unicode spaces and
/// the no-break spaces) ends it, anything else (controls, invalid bytes) does
/// neither. `carry` holds a character cut by the end of the previous chunk.
fn words_utf8(chunk: &[u8], carry: &mut Vec<u8>, in_word: &mut bool, words: &mut u64) {
    let joined;
    let data: &[u8] = if carry.is_empty() {
        chunk
    } else {
        carry.extend_from_slice(chunk);
        joined = std::mem::take(carry);
        &joined
    };
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b < 0x80 {
            match CLASS[usize::from(b)] {
                WORD => {
                    *words += u64::from(!*in_word);
                    *in_word = true;
                }
                SPACE => *in_word = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let len = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => {
                i += 1;
                continue;
            }
        };
        if i + len > data.len() {
            // Possibly cut by the read: decide with the next chunk.
            *carry = data[i..].to_vec();
            return;
        }
        match std::str::from_utf8(&data[i..i + len])
            .ok()
            .and_then(|s| s.chars().next())
        {
            Some(ch) if is_unicode_space(ch) => {
                *in_word = false;
                i += len;
            }
            // C1 controls are not printable.
            Some(ch) if (ch as u32) < 0xa0 => i += len,
            Some(_) => {
                *words += u64::from(!*in_word);
                *in_word = true;
                i += len;
            }
            None => i += 1,
        }
    }
}

/// The non-ASCII characters GNU wc treats as word separators in a UTF-8 locale
/// (glibc's `iswspace` plus the no-break spaces wc adds).
fn is_unicode_space(ch: char) -> bool {
    matches!(
        ch,
        '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}
