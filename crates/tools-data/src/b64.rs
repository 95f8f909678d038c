//! `base64`: encode (wrapped at 76 columns, `-w N`, `-w 0`) or decode (`-d`,
//! `-i` to skip garbage), from files or stdin, streaming.

use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::Read;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const SPEC: Spec = Spec {
    flags: "di",
    valued: "w",
    long: &[
        ("decode", false, "d"),
        ("ignore-garbage", false, "i"),
        ("wrap", true, "w"),
    ],
    stop_at_operand: false,
};

fn usage_error(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    ctx.warn("Try 'base64 --help' for more information.");
    Ok(1)
}

/// Runs `base64`.
pub fn base64(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return usage_error(ctx, &e),
    };
    let wrap = match p.value("w") {
        None => 76,
        Some(w) => match w.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                ctx.warn(format_args!("invalid wrap size: '{w}'"));
                return Ok(1);
            }
        },
    };
    if p.operands.len() > 1 {
        let extra = p.operands[1].clone();
        return usage_error(ctx, &format!("extra operand '{extra}'"));
    }
    let name = p.operands.first().cloned().unwrap_or_else(|| "-".into());
    let mut file = None;
    if name != "-" {
        match ctx.open(&name) {
            Ok(f) => file = Some(f),
            Err(e) => {
                ctx.warn_io(&name, &e);
                return Ok(1);
            }
        }
    }
    let decode = p.has("d");
    let garbage = p.has("i");
    // Disjoint borrows of the context's streams: input from the file or stdin,
    // output straight to stdout in large blocks.
    let input: &mut dyn Read = match file.as_mut() {
        Some(f) => f,
        None => &mut *ctx.stdin,
    };
    let stdout = &mut *ctx.stdout;
    let mut block = vec![0u8; 48 * 1024];
    let mut enc = Encoder {
        col: 0,
        wrap,
        pending: Vec::new(),
    };
    let mut dec = Decoder {
        group: [0; 4],
        n: 0,
        pad: 0,
    };
    let mut produced = Vec::with_capacity(96 * 1024);
    let mut invalid = false;
    let mut read_err = None;
    let mut write_err = None;
    loop {
        let n = match input.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                read_err = Some(e);
                break;
            }
        };
        let data = &block[..n];
        if decode {
            invalid = !dec.feed(data, garbage, &mut produced);
        } else {
            enc.feed(data, &mut produced);
        }
        if let Err(e) = stdout.write_all(&produced) {
            write_err = Some(e);
            break;
        }
        produced.clear();
        if invalid {
            break;
        }
    }
    if write_err.is_none() && read_err.is_none() && !invalid {
        if decode {
            invalid = !dec.finish(&mut produced);
        } else {
            enc.finish(&mut produced);
        }
        if let Err(e) = stdout.write_all(&produced).and_then(|_| stdout.flush()) {
            write_err = Some(e);
        }
    }
    if let Some(e) = write_err {
        return Ok(ctx.write_failed(&e));
    }
    if let Some(e) = read_err {
        ctx.warn_io(&name, &e);
        return Ok(1);
    }
    if invalid {
        ctx.warn("invalid input");
        return Ok(1);
    }
    Ok(0)
}

struct Encoder {
    col: usize,
    wrap: usize,
    pending: Vec<u8>,
}

impl Encoder {
    fn emit(&mut self, text: &[u8], out: &mut Vec<u8>) {
        if self.wrap == 0 {
            out.extend_from_slice(text);
            return;
        }
        for &c in text {
            out.push(c);
            self.col += 1;
            if self.col == self.wrap {
                out.push(b'\n');
                self.col = 0;
            }
        }
    }

    fn feed(&mut self, data: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(data);
        let whole = self.pending.len() / 3 * 3;
        let mut text = Vec::with_capacity(whole / 3 * 4);
        for g in self.pending[..whole].chunks_exact(3) {
            encode_group(g, &mut text);
        }
        self.pending.drain(..whole);
        self.emit(&text, out);
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        let mut text = Vec::new();
        if !self.pending.is_empty() {
            let g = std::mem::take(&mut self.pending);
            encode_group(&g, &mut text);
        }
        self.emit(&text, out);
        if self.wrap > 0 && self.col > 0 {
            out.push(b'\n');
        }
    }
}

fn encode_group(g: &[u8], out: &mut Vec<u8>) {
    let b0 = g.first().copied().unwrap_or(0) as usize;
    let b1 = g.get(1).copied().unwrap_or(0) as usize;
    let b2 = g.get(2).copied().unwrap_or(0) as usize;
    out.push(ALPHABET[b0 >> 2]);
    out.push(ALPHABET[((b0 & 3) << 4) | (b1 >> 4)]);
    out.push(if g.len() > 1 {
        ALPHABET[((b1 & 15) << 2) | (b2 >> 6)]
    } else {
        b'='
    });
    out.push(if g.len() > 2 { ALPHABET[b2 & 63] } else { b'=' });
}

fn value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

struct Decoder {
    group: [u8; 4],
    n: usize,
    /// Padding characters seen in the current group.
    pad: usize,
}

impl Decoder {
    /// Emits the bytes the first `n` sextets of the group hold.
    fn flush_partial(&mut self, out: &mut Vec<u8>) {
        let g = self.group;
        if self.n >= 2 {
            out.push((g[0] << 2) | (g[1] >> 4));
        }
        if self.n >= 3 {
            out.push((g[1] << 4) | (g[2] >> 2));
        }
        if self.n >= 4 {
            out.push((g[2] << 6) | g[3]);
        }
        self.n = 0;
        self.pad = 0;
    }

    /// Decodes `data`; false on invalid input (after emitting what was decodable).
    fn feed(&mut self, data: &[u8], garbage: bool, out: &mut Vec<u8>) -> bool {
        for &c in data {
            if c == b'\n' {
                continue;
            }
            if c == b'=' {
                // Padding is only valid after 2 or 3 sextets.
                // (`-i` does not skip it: it is part of the alphabet.)
                if self.n + self.pad < 2 || self.n + self.pad >= 4 {
                    self.flush_partial(out);
                    return false;
                }
                self.pad += 1;
                if self.n + self.pad == 4 {
                    self.flush_partial(out);
                }
                continue;
            }
            let Some(v) = value(c) else {
                if garbage {
                    continue;
                }
                self.flush_partial(out);
                return false;
            };
            if self.pad > 0 {
                // Data after an incomplete padding (`YQ=x`).
                self.flush_partial(out);
                return false;
            }
            self.group[self.n] = v;
            self.n += 1;
            if self.n == 4 {
                self.flush_partial(out);
            }
        }
        true
    }

    /// Ends the input: an incomplete group is an error.
    fn finish(&mut self, out: &mut Vec<u8>) -> bool {
        let ok = self.n == 0 && self.pad == 0;
        self.flush_partial(out);
        ok
    }
}
