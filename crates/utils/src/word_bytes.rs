//! Words that carry arbitrary bytes: a reversible escape between the bytes of a
//! file name (or any other OS data) and the UTF-8 `String`s the interpreter's
//! words are.
//!
//! Every byte that is not part of valid UTF-8 becomes one code point of a
//! reserved range at the end of Unicode's last private-use plane:
//! byte `b` (0x80–0xFF) is `U+10FF00 + b`, i.e. U+10FF80–U+10FFFF. A name that
//! really holds a character of that range is escaped too, byte by byte (its
//! four UTF-8 bytes become four escape code points), so decoding is injective
//! and [`word_to_bytes`]`(`[`word_from_bytes`]`(b)) == b` for every `b`.
//!
//! Why an escape and not `Vec<u8>` words: the interpreter's words, patterns,
//! variables, arithmetic and every in-process utility's argv are `String`s;
//! one escaped code point per bad byte keeps string operations meaningful
//! (`${#f}` counts a bad byte as one character, `?` matches it, `${f%b}` strips
//! around it) and touches only the boundaries where words become bytes again:
//! paths, argv of external programs, environment, and output.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The first code point of the escape range (byte 0x80).
const FIRST: u32 = 0x10_FF80;
/// The offset from a byte to its escape code point.
const OFFSET: u32 = 0x10_FF00;

/// The escape code point of the byte `b` (0x80–0xFF).
pub fn escape_byte(b: u8) -> char {
    // 0x10FF80..=0x10FFFF are all valid scalar values (no surrogates).
    char::from_u32(OFFSET + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte a character escapes, when it is one of the escape code points.
pub fn escaped_byte(c: char) -> Option<u8> {
    let v = c as u32;
    if v >= FIRST {
        u8::try_from(v - OFFSET).ok()
    } else {
        None
    }
}

/// Whether `s` holds an escaped byte (and so differs from its bytes).
pub fn has_escapes(s: &str) -> bool {
    // Every escape code point is encoded F4 8F BE/BF xx.
    s.as_bytes()
        .windows(3)
        .any(|w| w[0] == 0xF4 && w[1] == 0x8F && (w[2] == 0xBE || w[2] == 0xBF))
}

/// The word for `bytes`: valid UTF-8 as it is, every other byte escaped.
pub fn word_from_bytes(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes)
        && !has_escapes(s)
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if escaped_byte(c).is_some() {
                // A literal escape code point: escape its own bytes, so that it
                // cannot be read back as the byte it would stand for.
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push(escape_byte(b));
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            out.push(escape_byte(b));
        }
    }
    Cow::Owned(out)
}

/// [`word_from_bytes`] of an owned buffer (no copy when it is plain UTF-8).
pub fn word_from_vec(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) if !has_escapes(&s) => s,
        Ok(s) => word_from_bytes(s.as_bytes()).into_owned(),
        Err(e) => word_from_bytes(e.as_bytes()).into_owned(),
    }
}

/// The word for an OS string (a file name, an argument, a path).
pub fn word_from_os(s: &OsStr) -> Cow<'_, str> {
    word_from_bytes(s.as_bytes())
}

/// The bytes a word stands for: escape code points back to their bytes.
pub fn word_to_bytes(s: &str) -> Cow<'_, [u8]> {
    if !has_escapes(s) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match escaped_byte(c) {
            Some(b) => out.push(b),
            None => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

/// The OS string a word stands for (an argument or environment value of an
/// external program).
pub fn word_to_os(s: &str) -> OsString {
    OsString::from_vec(word_to_bytes(s).into_owned())
}

/// The path a word names.
pub fn word_to_path(s: &str) -> PathBuf {
    PathBuf::from(word_to_os(s))
}

/// A path built from a word's UTF-8 text (`Path::new(word)`) back to the bytes
/// the word stands for. Paths that hold no escape are returned as they are.
pub fn unescape_path(p: &Path) -> Cow<'_, Path> {
    let b = p.as_os_str().as_bytes();
    match std::str::from_utf8(b) {
        Ok(s) if has_escapes(s) => Cow::Owned(word_to_path(s)),
        _ => Cow::Borrowed(p),
    }
}

/// A word as text for a reader (a refusal message, a JSON field): each
/// escaped byte shown as `\xNN`, as `$'\xNN'` would spell it.
pub fn shown(s: &str) -> Cow<'_, str> {
    if !has_escapes(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match escaped_byte(c) {
            Some(b) => out.push_str(&format!("\\x{b:02x}")),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The word for a path (a directory name shown to the script: `$PWD`, `dirs`).
pub fn word_from_path(p: &Path) -> Cow<'_, str> {
    word_from_os(p.as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).collect();
        let w = word_from_bytes(&all);
        assert_eq!(word_to_bytes(&w).as_ref(), all.as_slice());
        // ASCII stays itself; each high byte is one character.
        assert_eq!(w.chars().count(), 256);
    }

    #[test]
    fn plain_utf8_is_borrowed_and_unchanged() {
        let s = "héllo wörld ☃";
        assert!(matches!(word_from_bytes(s.as_bytes()), Cow::Borrowed(_)));
        assert!(matches!(word_to_bytes(s), Cow::Borrowed(_)));
    }

    #[test]
    fn a_literal_escape_code_point_in_a_name_round_trips() {
        // A name really holding U+10FF80 must not come back as the byte 0x80.
        let name = "a\u{10FF80}b".as_bytes().to_vec();
        let w = word_from_bytes(&name);
        assert_eq!(w.chars().count(), 6);
        assert_eq!(word_to_bytes(&w).as_ref(), name.as_slice());
        // And it differs from the word of the name holding the byte 0x80.
        assert_ne!(w, word_from_bytes(b"a\x80b"));
    }

    #[test]
    fn invalid_bytes_are_one_character_each() {
        let w = word_from_bytes(b"a\xffb\xc3");
        assert_eq!(w.chars().count(), 4);
        assert_eq!(word_to_bytes(&w).as_ref(), b"a\xffb\xc3");
        assert_eq!(
            unescape_path(Path::new(w.as_ref())).as_os_str().as_bytes(),
            b"a\xffb\xc3"
        );
    }

    #[test]
    fn shown_spells_escaped_bytes_as_hex() {
        assert_eq!(shown(&word_from_bytes(b"a\xffb")), "a\\xffb");
        assert!(matches!(shown("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn random_bytes_round_trip() {
        // A small deterministic generator: no dependency for a fuzz-like sweep.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..2000 {
            let len = (x % 12) as usize;
            let mut v = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                v.push(if x.is_multiple_of(3) {
                    0xF4
                } else {
                    (x >> 8) as u8
                });
            }
            let w = word_from_bytes(&v);
            assert_eq!(word_to_bytes(&w).as_ref(), v.as_slice(), "{v:x?}");
            x = x.wrapping_add(0x9E37_79B9);
        }
    }
}
