//! Backslash escapes as bash's `printf` (format and `%b`) and `echo -e` read them.

/// Which reader of escapes: they differ in octal forms, `\c` and `\?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The `printf` format string: `\NNN`, `\c` is literal.
    Format,
    /// A `%b` argument: `\0NNN` and `\NNN`, `\c` stops all output.
    Percent,
    /// `echo -e`: only `\0NNN`, `\c` stops all output.
    Echo,
}

/// What expanding a string found.
#[derive(Debug, Default)]
pub struct Expanded {
    /// True when `\c` asked to stop all output.
    pub stop: bool,
    /// Warnings to print (`missing hex digit for \x`).
    pub warnings: Vec<String>,
}

/// The byte of a one-letter escape both bash and coreutils read (`\n`,
/// `\t`, `\e`, `\\`, …).
fn letter_escape(c: u8) -> Option<u8> {
    match c {
        b'a' => Some(7),
        b'b' => Some(8),
        b'e' => Some(27),
        b'f' => Some(12),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(11),
        b'\\' => Some(b'\\'),
        _ => None,
    }
}

/// Reads up to `max` digits of `radix` from `s` starting at `i`.
fn digits(s: &[u8], i: usize, max: usize, radix: u32) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match s.get(i + n).and_then(|&b| (b as char).to_digit(radix)) {
            Some(d) => {
                v = v.wrapping_mul(radix).wrapping_add(d);
                n += 1;
            }
            None => break,
        }
    }
    (v, n)
}

/// Writes code point `cp` as bash does in the C locale: ASCII as the byte, anything
/// else as the `\uXXXX` / `\UXXXXXXXX` escape.
fn push_unicode(out: &mut Vec<u8>, cp: u32, utf8: bool) {
    if let Some(c) = char::from_u32(cp).filter(|_| utf8) {
        // A UTF-8 locale: the character's encoding (bash converts with iconv).
        let mut tmp = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    } else if cp < 0x80 {
        out.push(cp as u8);
    } else if cp <= 0xffff {
        out.extend_from_slice(format!("\\u{cp:04X}").as_bytes());
    } else {
        out.extend_from_slice(format!("\\U{cp:08X}").as_bytes());
    }
}

/// True when `s` has a `\u` or `\U` escape (only then is the locale looked
/// up, which records a read of `LC_ALL`/`LC_CTYPE`/`LANG`).
pub fn has_unicode_escape(s: &[u8]) -> bool {
    s.windows(2)
        .any(|w| w[0] == b'\\' && matches!(w[1], b'u' | b'U'))
}

/// Expands the escapes of `s` into `out`. `utf8`: the locale is UTF-8, so
/// `\uXXXX` and `\UXXXXXXXX` become the character (in the C locale bash
/// leaves those above ASCII as written).
pub fn expand(s: &[u8], mode: Mode, utf8: bool, out: &mut Vec<u8>) -> Expanded {
    let mut res = Expanded::default();
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b != b'\\' || i + 1 >= s.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        let simple = match c {
            b'E' => Some(27),
            b'\'' | b'"' | b'?' if mode == Mode::Format => Some(c),
            _ => letter_escape(c),
        };
        if let Some(v) = simple {
            out.push(v);
            continue;
        }
        match c {
            b'c' if mode != Mode::Format => {
                res.stop = true;
                return res;
            }
            b'0' if mode != Mode::Format => {
                let (v, n) = digits(s, i, 3, 8);
                out.push(v as u8);
                i += n;
            }
            b'0'..=b'7' if mode != Mode::Echo => {
                let (v, n) = digits(s, i - 1, 3, 8);
                out.push(v as u8);
                i += n - 1;
            }
            b'x' => {
                let (v, n) = digits(s, i, 2, 16);
                if n == 0 {
                    if mode != Mode::Echo {
                        res.warnings.push("missing hex digit for \\x".into());
                    }
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                    i += n;
                }
            }
            b'u' | b'U' => {
                let max = if c == b'u' { 4 } else { 8 };
                let (v, n) = digits(s, i, max, 16);
                if n == 0 {
                    if mode != Mode::Echo {
                        res.warnings
                            .push(format!("missing unicode digit for \\{}", c as char));
                    }
                    out.push(b'\\');
                    out.push(c);
                } else {
                    push_unicode(out, v, utf8);
                    i += n;
                }
            }
            _ => {
                out.push(b'\\');
                out.push(c);
            }
        }
    }
    res
}

/// What expanding a string as coreutils `printf` does found.
#[derive(Debug, Default)]
pub struct CoreutilsExpanded {
    /// `\c`: print nothing more.
    pub stop: bool,
    /// A malformed escape (`\x` without digits, `\u` short of four): the
    /// message; printing stops there with status 1.
    pub fatal: Option<String>,
}

/// Expands escapes as coreutils `printf` reads them: in the format
/// (`percent` false: `\NNN`) or in a `%b` argument (`\0NNN` and `\NNN`).
/// Unlike bash, `\c` ends all output in the format too, `\'` and `\?` stay
/// as written, and a malformed `\x`, `\u` or `\U` is an error.
pub fn expand_coreutils(
    s: &[u8],
    percent: bool,
    utf8: bool,
    out: &mut Vec<u8>,
) -> CoreutilsExpanded {
    let mut res = CoreutilsExpanded::default();
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b != b'\\' || i + 1 >= s.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        let simple = match c {
            b'"' => Some(c),
            _ => letter_escape(c),
        };
        if let Some(v) = simple {
            out.push(v);
            continue;
        }
        match c {
            b'c' => {
                res.stop = true;
                return res;
            }
            b'0'..=b'7' => {
                // `%b` reads `\0NNN`: the zero introduces up to three digits.
                let from = if percent && c == b'0' { i } else { i - 1 };
                let (v, n) = digits(s, from, 3, 8);
                out.push(v as u8);
                i = from + n;
            }
            b'x' => {
                let (v, n) = digits(s, i, 2, 16);
                if n == 0 {
                    res.fatal = Some("missing hexadecimal number in escape".into());
                    return res;
                }
                out.push(v as u8);
                i += n;
            }
            b'u' | b'U' => {
                let want = if c == b'u' { 4 } else { 8 };
                let (v, n) = digits(s, i, want, 16);
                if n < want {
                    res.fatal = Some("missing hexadecimal number in escape".into());
                    return res;
                }
                i += n;
                // C99's rule for universal character names: no controls or
                // basic characters (but `$ @ \``), no surrogates.
                let basic = v < 0xa0 && !matches!(v, 0x24 | 0x40 | 0x60);
                if basic || (0xd800..=0xdfff).contains(&v) || v > 0x10ffff {
                    res.fatal = Some(format!(
                        "invalid universal character name \\{}{v:0want$x}",
                        c as char
                    ));
                    return res;
                }
                push_unicode(out, v, utf8);
            }
            _ => {
                out.push(b'\\');
                out.push(c);
            }
        }
    }
    res
}
