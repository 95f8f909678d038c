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
