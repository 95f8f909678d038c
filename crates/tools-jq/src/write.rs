//! Serialising values exactly as jq 1.6 prints them (`jv_dump_term`): number
//! formatting, string escaping, pretty-printing with indentation, sorted keys.

use crate::val::Val;

/// How values are laid out.
#[derive(Clone, Debug)]
pub struct Style {
    /// Indentation unit for pretty output; `None` prints compactly.
    pub indent: Option<Indent>,
    /// Sort object keys (`-S`).
    pub sort_keys: bool,
    /// Escape non-ASCII characters as `\uXXXX` (`-a`).
    pub ascii: bool,
}

/// One level of indentation.
#[derive(Clone, Copy, Debug)]
pub enum Indent {
    /// That many spaces.
    Spaces(usize),
    /// One tab.
    Tab,
}

impl Style {
    /// Compact, unsorted, UTF-8 output (what `tojson` and `tostring` use).
    pub const COMPACT: Style = Style {
        indent: None,
        sort_keys: false,
        ascii: false,
    };
}

/// Formats a number as jq 1.6 does: shortest round-trip digits, exponent form
/// when the decimal point is far away, `nan` as `null`, infinities clamped.
pub fn fmt_f64(out: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        out.extend_from_slice(b"null");
        return;
    }
    let d = d.clamp(-f64::MAX, f64::MAX);
    // Rust's `{:e}` yields the shortest digits that round-trip, like dtoa mode 0.
    let sci = format!("{:e}", d.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let n = digits.len() as i64;
    let decpt = exp + 1;
    if d.is_sign_negative() {
        out.push(b'-');
    }
    if decpt <= -4 || decpt > n + 15 {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.extend_from_slice(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.push(b'e');
        let e = decpt - 1;
        out.push(if e < 0 { b'-' } else { b'+' });
        out.extend_from_slice(format!("{:02}", e.abs()).as_bytes());
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
        out.extend_from_slice(&digits);
    } else {
        let dp = decpt as usize;
        if dp >= digits.len() {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat_n(b'0', dp - digits.len()));
        } else {
            let (int, frac) = digits.split_at(dp);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    }
}

/// Writes a JSON string literal with jq 1.6's escaping.
pub fn fmt_str(out: &mut Vec<u8>, s: &[u8], ascii: bool) {
    out.push(b'"');
    let text = String::from_utf8_lossy(s);
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c if ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                }
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn newline_indent(out: &mut Vec<u8>, style: &Style, level: usize) {
    if let Some(ind) = style.indent {
        out.push(b'\n');
        match ind {
            Indent::Spaces(n) => out.extend(std::iter::repeat_n(b' ', n * level)),
            Indent::Tab => out.extend(std::iter::repeat_n(b'\t', level)),
        }
    }
}

/// jq 1.6 replaces containers nested deeper than this when printing.
const MAX_PRINT_DEPTH: usize = 256;

/// Serialises `v` at nesting `level` into `out`.
pub fn write_val(out: &mut Vec<u8>, style: &Style, level: usize, v: &Val) {
    if level > MAX_PRINT_DEPTH && matches!(v, Val::Arr(_) | Val::Obj(_)) {
        out.extend_from_slice(b"<stripped: exceeds max depth>");
        return;
    }
    match v {
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(true) => out.extend_from_slice(b"true"),
        Val::Bool(false) => out.extend_from_slice(b"false"),
        Val::Num(n) => fmt_f64(out, *n),
        Val::Str(s) => fmt_str(out, s.as_bytes(), style.ascii),
        Val::Arr(a) => {
            if a.is_empty() {
                out.extend_from_slice(b"[]");
                return;
            }
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline_indent(out, style, level + 1);
                write_val(out, style, level + 1, x);
            }
            newline_indent(out, style, level);
            out.push(b']');
        }
        Val::Obj(o) => {
            if o.is_empty() {
                out.extend_from_slice(b"{}");
                return;
            }
            out.push(b'{');
            let mut entries: Vec<(&Val, &Val)> = o.iter().collect();
            if style.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline_indent(out, style, level + 1);
                match k {
                    Val::Str(s) => fmt_str(out, s.as_bytes(), style.ascii),
                    other => {
                        // jq keys are always strings; jaq allows others, so quote their JSON.
                        let mut tmp = Vec::new();
                        write_val(&mut tmp, &Style::COMPACT, 0, other);
                        fmt_str(out, &tmp, style.ascii);
                    }
                }
                out.push(b':');
                if style.indent.is_some() {
                    out.push(b' ');
                }
                write_val(out, style, level + 1, x);
            }
            newline_indent(out, style, level);
            out.push(b'}');
        }
    }
}

/// The compact JSON text of a value (`tojson`).
pub fn to_json(v: &Val) -> Vec<u8> {
    let mut out = Vec::new();
    write_val(&mut out, &Style::COMPACT, 0, v);
    out
}

/// `tostring`: strings unchanged, anything else as compact JSON.
pub fn to_string_bytes(v: &Val) -> Vec<u8> {
    match v {
        Val::Str(s) => s.as_bytes().to_vec(),
        _ => to_json(v),
    }
}

/// jq's standard output as C stdio buffers it when it is not a terminal:
/// written in whole blocks of 4096 bytes (a pipe's or file's `st_blksize`)
/// and the rest at exit, so messages on stderr (unbuffered) come before
/// outputs still in the buffer, as they do from jq 1.6 (`jq … 2>&1`).
pub struct BlockWriter<W: std::io::Write> {
    inner: W,
    buf: Vec<u8>,
}

/// glibc's buffer size for a pipe or a regular file.
const BLOCK: usize = 4096;

impl<W: std::io::Write> BlockWriter<W> {
    /// A writer buffering for `inner`.
    pub fn new(inner: W) -> Self {
        BlockWriter {
            inner,
            buf: Vec::with_capacity(BLOCK),
        }
    }
}

impl<W: std::io::Write> std::io::Write for BlockWriter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(BLOCK - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == BLOCK {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.write_all(&self.buf)?;
        self.buf.clear();
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(d: f64) -> String {
        let mut v = Vec::new();
        fmt_f64(&mut v, d);
        String::from_utf8(v).unwrap_or_default()
    }

    #[test]
    fn numbers_like_jq16() {
        assert_eq!(f(1.0), "1");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1e17), "1e+17");
        assert_eq!(f(1e15), "1000000000000000");
        assert_eq!(f(1e-5), "1e-05");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(f64::INFINITY), "1.7976931348623157e+308");
        assert_eq!(f(-0.0), "-0");
        assert_eq!(f(12345678901234567890.0), "12345678901234567000");
        assert_eq!(f(5e-324), "5e-324");
        assert_eq!(f(1.5e300), "1.5e+300");
    }

    #[test]
    fn block_writer_writes_whole_blocks() {
        use std::io::Write;
        let mut sink = Vec::new();
        let mut w = super::BlockWriter::new(&mut sink);
        w.write_all(&[b'a'; 4000]).unwrap();
        w.write_all(&[b'b'; 200]).unwrap();
        assert_eq!(w.inner.len(), 4096, "a full block goes out");
        w.flush().unwrap();
        drop(w);
        assert_eq!(sink.len(), 4200);
    }
}
