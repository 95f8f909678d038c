//! Shell quoting as bash's `printf %q` does it: backslashes for printable text,
//! `$'...'` when the text holds unprintable bytes.

/// Quotes `s` so bash reads it back as the same word.
pub fn shell_quote(s: &[u8]) -> Vec<u8> {
    if s.is_empty() {
        return b"''".to_vec();
    }
    if s.iter().any(|&b| !(0x20..0x7f).contains(&b)) {
        return ansi_c(s);
    }
    let mut out = Vec::with_capacity(s.len() * 2);
    for (i, &b) in s.iter().enumerate() {
        let prev = if i == 0 { None } else { s.get(i - 1).copied() };
        let quote = match b {
            b' ' | b'\t' | b'\n' | b'\'' | b'"' | b'\\' | b'|' | b'&' | b';' | b'(' | b')'
            | b'<' | b'>' | b'!' | b'{' | b'}' | b'*' | b'[' | b'?' | b']' | b'^' | b'$' | b'`'
            | b',' => true,
            b'~' => matches!(prev, None | Some(b'=' | b':')),
            b'#' => i == 0,
            _ => false,
        };
        if quote {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn ansi_c(s: &[u8]) -> Vec<u8> {
    let mut out = b"$'".to_vec();
    for &b in s {
        match b {
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            27 => out.extend_from_slice(b"\\E"),
            12 => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            11 => out.extend_from_slice(b"\\v"),
            b'\\' | b'\'' => {
                out.push(b'\\');
                out.push(b);
            }
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
        }
    }
    out.push(b'\'');
    out
}

/// Quotes `s` as coreutils `printf %q` does (gnulib's shell-escape style):
/// unquoted when nothing in it is special, else in single quotes with
/// unprintable bytes as `$'\NNN'` pieces, or in double quotes when a single
/// quote is the only reason to quote. `utf8`: the locale is UTF-8, so valid
/// printable multibyte characters stay as they are.
pub fn coreutils_quote(s: &[u8], utf8: bool) -> Vec<u8> {
    if !s.is_empty() && !needs_quotes(s, utf8) {
        return s.to_vec();
    }
    let mut pending = false;
    let first = quoted_pass(s, utf8, &mut pending);
    if !first.single_quote {
        return first.out;
    }
    if first.all_compatible {
        // Text a C string and a shell read alike: `"it's"`.
        let mut out = Vec::with_capacity(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s);
        out.push(b'"');
        return out;
    }
    // gnulib writes the text a second time without resetting its `$'…'`
    // state, so a string that ended inside one starts with an extra `''`.
    quoted_pass(s, utf8, &mut pending).out
}

/// One character of `s` at `i`: its length and whether it is printable.
fn char_at(s: &[u8], i: usize, utf8: bool) -> (usize, bool) {
    let b = s[i];
    if b < 0x80 || !utf8 {
        return (1, (0x20..0x7f).contains(&b));
    }
    let end = (i + 4).min(s.len());
    let valid = (2..=end - i).find_map(|n| {
        std::str::from_utf8(&s[i..i + n])
            .ok()
            .and_then(|t| t.chars().next())
            .map(|c| (n, c))
    });
    match valid {
        Some((n, c)) => (n, !c.is_control()),
        None => (1, false),
    }
}

/// True when `s` must be quoted: a shell-special character, a quote, a
/// backslash, an unprintable byte, or `#`/`~` first, or `{`/`}` alone.
fn needs_quotes(s: &[u8], utf8: bool) -> bool {
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let special = match b {
            b'{' | b'}' => s.len() == 1,
            b'#' | b'~' => i == 0,
            b' ' | b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>'
            | b'[' | b'^' | b'`' | b'|' | b'\'' | b'?' | b'\\' => true,
            _ => false,
        };
        if special {
            return true;
        }
        let (n, printable) = char_at(s, i, utf8);
        if !printable {
            return true;
        }
        i += n;
    }
    false
}

/// What one single-quoted pass wrote and saw.
struct Pass {
    out: Vec<u8>,
    /// The text has a `'`.
    single_quote: bool,
    /// Every character reads the same in C double quotes and in the shell.
    all_compatible: bool,
}

/// Writes `s` in single quotes, unprintable bytes as `$'\NNN'` (and `\n`,
/// `\t`, … by letter). `pending`: a `$'…'` piece is open.
fn quoted_pass(s: &[u8], utf8: bool, pending: &mut bool) -> Pass {
    let mut p = Pass {
        out: Vec::with_capacity(s.len() + 2),
        single_quote: false,
        all_compatible: true,
    };
    let out = &mut p.out;
    out.push(b'\'');
    // Opens a `$'…'` piece (if none is open) and writes a backslash.
    let start_escape = |out: &mut Vec<u8>, pending: &mut bool| {
        if !*pending {
            out.extend_from_slice(b"'$'");
            *pending = true;
        }
        out.push(b'\\');
    };
    // Closes an open `$'…'` piece before plain text.
    let end_escape = |out: &mut Vec<u8>, pending: &mut bool| {
        if *pending {
            out.extend_from_slice(b"''");
            *pending = false;
        }
    };
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let letter = match b {
            7 => Some(b'a'),
            8 => Some(b'b'),
            12 => Some(b'f'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            11 => Some(b'v'),
            _ => None,
        };
        if let Some(l) = letter {
            start_escape(out, pending);
            out.push(l);
            p.all_compatible = false;
            i += 1;
            continue;
        }
        if b == b'\'' {
            p.single_quote = true;
            out.extend_from_slice(b"'\\''");
            *pending = false;
            i += 1;
            continue;
        }
        let (n, printable) = char_at(s, i, utf8);
        if !printable {
            for &byte in &s[i..i + n] {
                start_escape(out, pending);
                out.extend_from_slice(&[
                    b'0' + (byte >> 6),
                    b'0' + ((byte >> 3) & 7),
                    b'0' + (byte & 7),
                ]);
            }
            p.all_compatible = false;
            i += n;
            continue;
        }
        let compatible = match b {
            b'{' | b'}' => s.len() == 1,
            b'#' | b'~' => i == 0,
            b' ' => true,
            b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>' | b'['
            | b'^' | b'`' | b'|' | b'?' | b'\\' => false,
            _ => true,
        };
        p.all_compatible &= compatible;
        end_escape(out, pending);
        out.extend_from_slice(&s[i..i + n]);
        i += n;
    }
    out.push(b'\'');
    p
}
