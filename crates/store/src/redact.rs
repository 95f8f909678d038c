//! Hiding secret values in text written to the audit log.

use crate::error::StoreError;
use aho_corasick::AhoCorasick;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Values shorter than this are not redacted: they would match everywhere and
/// reveal little on their own.
pub const MIN_SECRET_LEN: usize = 4;

/// Replaces every occurrence of registered secret values with `[secret:NAME]`.
///
/// Occurrences that overlap or nest (one secret inside or across another) are
/// merged into one replacement naming every secret involved, so no byte of any
/// occurrence is left in clear. Cheap to clone (shared automaton).
#[derive(Clone, Default)]
pub struct Redactor {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    automaton: AhoCorasick,
    /// Names of each pattern, by pattern index (one value may have several names).
    names: Vec<Vec<String>>,
    /// The longest value.
    max_len: usize,
}

impl Redactor {
    /// A redactor for these `(name, value)` pairs (values of secret environment
    /// variables, contents of small secret files). Values under
    /// [`MIN_SECRET_LEN`] bytes are ignored.
    pub fn new<N, V>(secrets: impl IntoIterator<Item = (N, V)>) -> Result<Self, StoreError>
    where
        N: Into<String>,
        V: AsRef<[u8]>,
    {
        let mut by_value: BTreeMap<Vec<u8>, Vec<String>> = BTreeMap::new();
        for (name, value) in secrets {
            let value = value.as_ref();
            if value.len() < MIN_SECRET_LEN {
                continue;
            }
            let names = by_value.entry(value.to_vec()).or_default();
            let name = name.into();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if by_value.is_empty() {
            return Ok(Redactor::default());
        }
        let (values, names): (Vec<_>, Vec<_>) = by_value.into_iter().unzip();
        let max_len = values.iter().map(Vec::len).max().unwrap_or(0);
        // A contiguous NFA, never a DFA: the set is built once per request that
        // reaches a sink (known secret values, in every encoding), and building a
        // DFA costs more than all the searches of a request.
        let automaton = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(&values)
            .map_err(|e| StoreError::Redactor(e.to_string()))?;
        Ok(Redactor {
            inner: Some(Arc::new(Inner {
                automaton,
                names,
                max_len,
            })),
        })
    }

    /// True when no secret is registered.
    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    /// The length of the longest registered value (0 when none): a stream scanned
    /// chunk by chunk keeps this many bytes less one to find a value split
    /// across two chunks.
    pub fn max_len(&self) -> usize {
        self.inner.as_ref().map_or(0, |i| i.max_len)
    }

    /// True when a registered value occurs in `data` starting before byte `before`
    /// (a value that begins in the part of a stream already seen).
    pub fn occurs_starting_before(&self, data: &[u8], before: usize) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        inner
            .automaton
            .find_overlapping_iter(data)
            .any(|m| m.start() < before)
    }

    /// The names of the secrets whose values occur in `data` (each once, in no
    /// particular order); empty when none does. One pass without allocation when
    /// nothing matches (the common case).
    pub fn occurring(&self, data: &[u8]) -> Vec<&str> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        if !inner.automaton.is_match(data) {
            return Vec::new();
        }
        let mut names: Vec<&str> = Vec::new();
        for m in inner.automaton.find_overlapping_iter(data) {
            push_names(&mut names, inner, m.pattern().as_usize());
        }
        names
    }

    /// `text` with every secret value replaced by `[secret:NAME]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redact_with(text, |names| format!("[secret:{}]", names.join(",")))
    }

    /// `text` with every secret value (overlapping ones merged) replaced by what
    /// `render` makes of the names of the secrets involved.
    pub fn redact_with<'a>(
        &self,
        text: &'a str,
        render: impl Fn(&[&str]) -> String,
    ) -> Cow<'a, str> {
        let Some(inner) = &self.inner else {
            return Cow::Borrowed(text);
        };
        // Overlapping search: every occurrence, even one straddling another.
        let mut hits: Vec<(usize, usize, usize)> = inner
            .automaton
            .find_overlapping_iter(text)
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            .collect();
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        hits.sort_unstable();
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(text.len());
        let mut pos = 0;
        let mut i = 0;
        while let Some(&(start, mut end, pattern)) = hits.get(i) {
            let mut names: Vec<&str> = Vec::new();
            push_names(&mut names, inner, pattern);
            i += 1;
            // Merge every later hit that starts inside this span.
            while let Some(&(s, e, p)) = hits.get(i) {
                if s >= end {
                    break;
                }
                end = end.max(e);
                push_names(&mut names, inner, p);
                i += 1;
            }
            out.extend_from_slice(bytes.get(pos..start).unwrap_or_default());
            out.extend_from_slice(render(&names).as_bytes());
            pos = end;
        }
        out.extend_from_slice(bytes.get(pos..).unwrap_or_default());
        // A non-UTF-8 secret value may have cut a character in two.
        Cow::Owned(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

fn push_names<'a>(names: &mut Vec<&'a str>, inner: &'a Inner, pattern: usize) {
    for name in inner.names.get(pattern).into_iter().flatten() {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
}

/// Shows the names only: a redactor must never print the values it hides.
impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .inner
            .iter()
            .flat_map(|i| i.names.iter().flatten())
            .map(String::as_str)
            .collect();
        f.debug_struct("Redactor").field("secrets", &names).finish()
    }
}
