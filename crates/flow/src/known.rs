//! Known secret values: a backstop behind the label flow.
//!
//! Labels follow data through safesh, but bytes can reach a script from places
//! safesh never labelled: `git show HEAD~1:.env` prints a key committed before
//! safesh was used, from git's object store. So at the **sinks** (network egress,
//! what an external program is given, model-facing output) the bytes are also
//! searched for the values of the secrets safesh knows, and data containing one
//! gets that secret's label — the file's classification label or the variable's,
//! so token brokering (`may_flow_to`) still applies to a token found in data.
//!
//! Known values ([`KnownValues::build`]): each value of a dotenv-style secret file
//! (`KEY=value`, `export KEY=value`, quoted, `KEY: value`), each whole secret file
//! (trimmed, up to [`MAX_WHOLE_FILE`]), each secret environment value — of at least
//! [`MIN_KNOWN_LEN`] bytes — and their encodings ([`forms`]): hex (lower, upper)
//! and base64 (standard and URL-safe) at the three alignments a value can have
//! inside a longer base64 stream. Matching uses the store's
//! [`Redactor`](safesh_store::Redactor) (one Aho-Corasick automaton).
//!
//! Values live in memory only: nothing here writes or logs them (`Debug` shows a
//! count).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use safesh_label::Label;
use safesh_store::Redactor;
use std::collections::HashMap;
use std::fmt;

/// Shorter values are not searched for: they would match ordinary text.
pub const MIN_KNOWN_LEN: usize = 8;

/// A secret file longer than this (trimmed) is not a whole-file value (its
/// dotenv values still are): a stream keeps the longest value's length to find
/// one split across chunks.
pub const MAX_WHOLE_FILE: usize = 4096;

/// One secret safesh knows: where it comes from (its label) and its value.
pub struct KnownSecret {
    /// The label data containing it gets.
    pub label: Label,
    /// The value (at least [`MIN_KNOWN_LEN`] bytes to be searched for).
    pub value: Vec<u8>,
}

/// The values of `text` as a dotenv-style file gives them: `KEY=value`,
/// `export KEY=value`, `KEY: value`; quotes removed, an unquoted value's
/// ` # comment` dropped. Lines that are not assignments give nothing.
pub fn dotenv_values(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let line = line.strip_prefix(b"export ").unwrap_or(line).trim_ascii();
        let Some(sep) = line.iter().position(|&b| b == b'=' || b == b':') else {
            continue;
        };
        let key = line[..sep].trim_ascii();
        let is_key = !key.is_empty()
            && key
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !is_key {
            continue;
        }
        let value = line[sep + 1..].trim_ascii();
        let value = match value {
            [q @ (b'"' | b'\''), rest @ ..] => match rest.iter().position(|b| b == q) {
                Some(end) => &rest[..end],
                None => rest,
            },
            _ => match value.windows(2).position(|w| w == b" #") {
                Some(c) => value[..c].trim_ascii(),
                None => value,
            },
        };
        if !value.is_empty() && !is_setting(value) {
            out.push(value.to_vec());
        }
    }
    out
}

/// True for a dotenv value that is a setting rather than a secret: a short
/// lower-case word (`production`, `localhost`, `info_level`) or a number,
/// address, version or date (`127.0.0.1`, `0.0.0.0:8080`, `2026-01-01`). Dotenv
/// files mix settings with keys; searching for `production` would hide every
/// output that says it. (Reading the file itself is still labelled secret.)
fn is_setting(value: &[u8]) -> bool {
    let word = value.len() < 16
        && value
            .iter()
            .all(|&b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_' | b'.'));
    let number = value
        .iter()
        .all(|&b| b.is_ascii_digit() || matches!(b, b'.' | b':' | b'/' | b'-'));
    word || number
}

/// `value` and the encodings it may travel in: hex (lower and upper case) and
/// base64 (standard and URL-safe), each base64 form for the value starting at
/// offset 0, 1 or 2 (mod 3) of a longer encoded stream — only the characters
/// that depend on the value's bytes alone (the partial characters at both edges
/// are dropped).
pub fn forms(value: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![value.to_vec()];
    let lower: String = value.iter().map(|b| format!("{b:02x}")).collect();
    out.push(lower.to_ascii_uppercase().into_bytes());
    out.push(lower.into_bytes());
    for k in 0..3usize {
        let mut shifted = vec![0u8; k];
        shifted.extend_from_slice(value);
        // Character i holds bits [6i, 6i+6); the value's bits are [8k, 8(k+n)).
        let start = (8 * k).div_ceil(6);
        let end = 8 * shifted.len() / 6;
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let enc = engine.encode(&shifted);
            if let Some(part) = enc.as_bytes().get(start..end) {
                out.push(part.to_vec());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The secret values known to a session, ready to search for.
#[derive(Clone, Default)]
pub struct KnownValues {
    matcher: Redactor,
    /// Label by secret (the matcher's names are indices into it).
    labels: Vec<Label>,
}

impl KnownValues {
    /// The matcher for `secrets` (values under [`MIN_KNOWN_LEN`] bytes are
    /// left out), each searched for in every form of [`forms`].
    pub fn build(secrets: impl IntoIterator<Item = KnownSecret>) -> KnownValues {
        // One label per distinct value: two files with the same key join.
        let mut by_value: HashMap<Vec<u8>, Label> = HashMap::new();
        for s in secrets {
            if s.value.len() < MIN_KNOWN_LEN {
                continue;
            }
            by_value
                .entry(s.value)
                .and_modify(|l| l.join_assign(&s.label))
                .or_insert(s.label);
        }
        let mut labels = Vec::with_capacity(by_value.len());
        let mut patterns: Vec<(String, Vec<u8>)> = Vec::new();
        for (value, label) in by_value {
            let name = labels.len().to_string();
            labels.push(label);
            for f in forms(&value) {
                if f.len() >= MIN_KNOWN_LEN {
                    patterns.push((name.clone(), f));
                }
            }
        }
        // The automaton cannot fail on byte patterns of this size; should it,
        // nothing is searched (the labels still decide).
        let matcher = Redactor::new(patterns).unwrap_or_default();
        KnownValues { matcher, labels }
    }

    /// True when there is nothing to search for.
    pub fn is_empty(&self) -> bool {
        self.matcher.is_empty()
    }

    /// The longest form searched for (0 when none).
    pub fn max_len(&self) -> usize {
        self.matcher.max_len()
    }

    /// `text` with every known value (in any of its forms) replaced by
    /// `[secret]`: for text that is stored (the audit log), where a label cannot
    /// travel with it.
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.matcher.redact_with(text, |_| "[secret]".to_string())
    }

    /// The join of the labels of the known values occurring in `data`; `None`
    /// when none does.
    pub fn label_of(&self, data: &[u8]) -> Option<Label> {
        let names = self.matcher.occurring(data);
        let mut out: Option<Label> = None;
        for n in names {
            let Some(l) = n.parse::<usize>().ok().and_then(|i| self.labels.get(i)) else {
                continue;
            };
            match &mut out {
                Some(o) => o.join_assign(l),
                None => out = Some(l.clone()),
            }
        }
        out
    }

    /// [`KnownValues::label_of`] over several separate pieces (argv words,
    /// environment values, a request's URL, headers and body).
    pub fn label_of_all<'a>(&self, pieces: impl IntoIterator<Item = &'a [u8]>) -> Option<Label> {
        if self.is_empty() {
            return None;
        }
        pieces
            .into_iter()
            .filter_map(|p| self.label_of(p))
            .reduce(|a, b| a.join(&b))
    }
}

/// Never the values: how many secrets.
impl fmt::Debug for KnownValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KnownValues")
            .field("secrets", &self.labels.len())
            .finish()
    }
}

/// A stream searched chunk by chunk, holding back the bytes that may be the
/// start of a value split across chunks: a byte is released only once no value
/// that could contain it can still be completed by what follows (at the end of
/// the stream, everything is released). For each chunk: [`HoldBack::check`],
/// then [`HoldBack::release`] (or [`HoldBack::finish`] to take everything).
#[derive(Default)]
pub struct HoldBack {
    pending: Vec<u8>,
}

/// What [`HoldBack::check`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// The join of the labels of the known values in the chunk or spanning into
    /// it from the held bytes.
    pub label: Option<Label>,
    /// A value begins in the held bytes: they are part of it.
    pub from_held: bool,
}

impl HoldBack {
    /// The known values in `data` (the next chunk) and those that begin in the
    /// held bytes and end in `data`.
    pub fn check(&self, known: &KnownValues, data: &[u8]) -> Found {
        let mut found = Found {
            label: known.label_of(data),
            from_held: false,
        };
        if self.pending.is_empty() || known.is_empty() {
            return found;
        }
        let head = data
            .get(..known.max_len().saturating_sub(1))
            .unwrap_or(data);
        let mut window = Vec::with_capacity(self.pending.len() + head.len());
        window.extend_from_slice(&self.pending);
        window.extend_from_slice(head);
        if known
            .matcher
            .occurs_starting_before(&window, self.pending.len())
        {
            found.from_held = true;
            if let Some(l) = known.label_of(&window) {
                found.label = Some(match found.label {
                    Some(f) => f.join(&l),
                    None => l,
                });
            }
        }
        found
    }

    /// Takes `data` (already checked): the bytes that may go on now; the last
    /// bytes (the longest form less one) stay held.
    pub fn release(&mut self, known: &KnownValues, data: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(data);
        let keep = known.max_len().saturating_sub(1).min(self.pending.len());
        let release = self.pending.len() - keep;
        self.pending.drain(..release).collect()
    }

    /// The bytes still held (at the end of the stream, or to decide them now).
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Never the bytes held.
impl fmt::Debug for HoldBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HoldBack")
            .field("pending", &self.pending.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(values: &[&str]) -> KnownValues {
        KnownValues::build(values.iter().map(|v| KnownSecret {
            label: Label::secret("secret"),
            value: v.as_bytes().to_vec(),
        }))
    }

    #[test]
    fn dotenv_forms_are_parsed() {
        let text = b"# c\nAPI_KEY=sk-live-123\nexport B=\"quoted value\"\nC='Single9'\nD: Yaml-ish\nE=Plain2 # note\nnot a line\n";
        let v: Vec<String> = dotenv_values(text)
            .into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect();
        assert_eq!(
            v,
            [
                "sk-live-123",
                "quoted value",
                "Single9",
                "Yaml-ish",
                "Plain2"
            ]
        );
    }

    #[test]
    fn settings_are_not_known_values() {
        let text = b"NODE_ENV=production\nHOST=127.0.0.1\nPORT=0.0.0.0:8080\nDB=postgres://u:hunter22@db/x\nK=abcdefghijklmnopq\n";
        let v: Vec<String> = dotenv_values(text)
            .into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect();
        assert_eq!(v, ["postgres://u:hunter22@db/x", "abcdefghijklmnopq"]);
    }

    #[test]
    fn every_base64_alignment_and_hex_is_found() {
        let k = known(&["sk-live-0123456789abcdef"]);
        for prefix in ["", "x", "xy", "xyz"] {
            let data = format!("{prefix}sk-live-0123456789abcdef and more");
            for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                let enc = engine.encode(data.as_bytes());
                assert!(k.label_of(enc.as_bytes()).is_some(), "{prefix:?}");
            }
            let hex: String = data.bytes().map(|b| format!("{b:02x}")).collect();
            assert!(k.label_of(hex.as_bytes()).is_some());
            assert!(k.label_of(hex.to_uppercase().as_bytes()).is_some());
        }
        // Standard base64 with padding, value alone.
        let enc = base64::engine::general_purpose::STANDARD.encode("sk-live-0123456789abcdef\n");
        assert!(k.label_of(enc.as_bytes()).is_some());
    }

    #[test]
    fn short_values_and_near_misses_are_not_found() {
        let k = known(&["short7!", "longer-secret-1"]);
        assert!(k.label_of(b"a short7! here").is_none());
        assert!(k.label_of(b"longer-secret-2 longer-secre").is_none());
        assert!(k.label_of(b"x longer-secret-1 y").is_some());
    }

    #[test]
    fn a_value_split_across_chunks_is_held_back_and_found() {
        let k = known(&["0123456789abcdef"]);
        let mut h = HoldBack::default();
        let f = h.check(&k, b"hello 01234567");
        assert!(f.label.is_none());
        // Nothing that could start the value was released.
        assert_eq!(h.release(&k, b"hello 01234567"), b"");
        let f = h.check(&k, b"89abcdef tail");
        assert!(f.label.is_some() && f.from_held);
        // A value wholly inside the next chunk does not take the held bytes.
        let mut h = HoldBack::default();
        h.release(&k, b"1\n2\n");
        let f = h.check(&k, b"x0123456789abcdef\n");
        assert!(f.label.is_some() && !f.from_held);
        let mut h = HoldBack::default();
        let mut all = h.release(&k, &[b'a'; 100]);
        all.extend(h.finish());
        assert_eq!(all.len(), 100);
    }
}
