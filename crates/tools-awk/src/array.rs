//! Awk associative arrays: insertion-ordered, with a fast hasher.

use crate::value::{Str, Value};
use std::collections::HashMap;

/// A fast non-cryptographic hasher (FxHash) for array keys: awk arrays are
/// hashed constantly and need no DoS resistance here.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

/// An associative array keeping insertion order. The bytes it holds are
/// counted against the run's memory budget ([`crate::budget`]).
#[derive(Default, Debug)]
pub struct Array {
    index: HashMap<Str, usize, FxBuild>,
    entries: Vec<Option<(Str, Value)>>,
    /// Bytes counted for the elements (see [`entry_bytes`]).
    bytes: u64,
}

/// The bytes one element is counted for: its key, its value's text and a
/// fixed overhead.
fn entry_bytes(k: &[u8], v: &Value) -> u64 {
    k.len() as u64 + value_bytes(v) + crate::budget::ENTRY_OVERHEAD
}

fn value_bytes(v: &Value) -> u64 {
    match v {
        Value::Str(s) | Value::StrNum(s) => s.len() as u64,
        Value::Num(_) | Value::Uninit => 0,
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        crate::budget::adjust(-(self.bytes as i64));
    }
}

impl Array {
    /// Counts `after - before` more bytes.
    fn count(&mut self, before: u64, after: u64) {
        self.bytes = (self.bytes + after).saturating_sub(before);
        crate::budget::adjust(after as i64 - before as i64);
    }

    /// The value at `k`.
    pub fn get(&self, k: &[u8]) -> Option<&Value> {
        let i = *self.index.get(k)?;
        self.entries.get(i)?.as_ref().map(|(_, v)| v)
    }
    /// Applies `f` to the element at `k` (created uninitialized if missing).
    pub fn update<T>(&mut self, k: Str, f: impl FnOnce(&mut Value) -> T) -> T {
        if let Some(&i) = self.index.get(&k)
            && let Some(Some(e)) = self.entries.get_mut(i)
        {
            let before = value_bytes(&e.1);
            let r = f(&mut e.1);
            let after = value_bytes(&e.1);
            self.count(before, after);
            return r;
        }
        let mut v = Value::Uninit;
        let r = f(&mut v);
        self.set(k, v);
        r
    }

    /// Inserts or replaces.
    pub fn set(&mut self, k: Str, v: Value) {
        if let Some(&i) = self.index.get(&k)
            && let Some(Some(e)) = self.entries.get_mut(i)
        {
            let (before, after) = (value_bytes(&e.1), value_bytes(&v));
            e.1 = v;
            self.count(before, after);
            return;
        }
        self.count(0, entry_bytes(&k, &v));
        self.index.insert(k.clone(), self.entries.len());
        self.entries.push(Some((k, v)));
    }
    /// True if present.
    pub fn contains(&self, k: &[u8]) -> bool {
        self.index.contains_key(k)
    }
    /// Removes `k`.
    pub fn remove(&mut self, k: &[u8]) {
        if let Some(i) = self.index.remove(k)
            && let Some(e) = self.entries.get_mut(i)
            && let Some((k, v)) = e.take()
        {
            self.count(entry_bytes(&k, &v), 0);
        }
        if self.index.is_empty() {
            self.entries.clear();
        } else if self.entries.len() > 32 && self.index.len() * 2 < self.entries.len() {
            self.entries.retain(Option::is_some);
            for (i, e) in self.entries.iter().enumerate() {
                if let Some((k, _)) = e {
                    self.index.insert(k.clone(), i);
                }
            }
        }
    }
    /// Removes everything.
    pub fn clear(&mut self) {
        self.index.clear();
        self.entries.clear();
        self.count(self.bytes, 0);
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.index.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    /// The keys, in insertion order.
    pub fn keys(&self) -> Vec<Str> {
        self.entries
            .iter()
            .filter_map(|e| e.as_ref().map(|(k, _)| k.clone()))
            .collect()
    }
}
