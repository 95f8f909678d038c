//! [`AtomSet`]: the set type of a label's origins and integrity.
//!
//! A sorted, deduplicated vector. Label sets are small and mostly grow at the end
//! (a command reading files in order), where an insert is a push; a `BTreeSet`
//! searched every node from the left with a string comparison per key and
//! allocated a whole node for a single atom.

use crate::Atom;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A set of [`Atom`]s in ascending order (the order of `Atom`'s `Ord`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AtomSet(Vec<Atom>);

impl AtomSet {
    /// The empty set.
    pub const fn new() -> Self {
        AtomSet(Vec::new())
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the set has no atom.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The atoms in ascending order.
    pub fn iter(&self) -> std::slice::Iter<'_, Atom> {
        self.0.iter()
    }

    /// The smallest atom.
    pub fn first(&self) -> Option<&Atom> {
        self.0.first()
    }

    /// The largest atom.
    pub fn last(&self) -> Option<&Atom> {
        self.0.last()
    }

    /// True if `atom` is in the set.
    pub fn contains(&self, atom: &Atom) -> bool {
        self.0.binary_search(atom).is_ok()
    }

    /// Adds `atom`; false when it was there already. Past the largest atom it is
    /// a push.
    pub fn insert(&mut self, atom: Atom) -> bool {
        match self.0.last().map(|l| l.cmp(&atom)) {
            None | Some(Ordering::Less) => {
                self.0.push(atom);
                true
            }
            Some(Ordering::Equal) => false,
            Some(Ordering::Greater) => match self.0.binary_search(&atom) {
                Ok(_) => false,
                Err(i) => {
                    self.0.insert(i, atom);
                    true
                }
            },
        }
    }

    /// Removes `atom`; false when it was not there.
    pub fn remove(&mut self, atom: &Atom) -> bool {
        match self.0.binary_search(atom) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Keeps only the atoms for which `keep` is true.
    pub fn retain(&mut self, keep: impl FnMut(&Atom) -> bool) {
        self.0.retain(keep);
    }

    /// True when every atom of `self` is in `other` (one merge walk).
    pub fn is_subset(&self, other: &AtomSet) -> bool {
        if self.0.len() > other.0.len() {
            return false;
        }
        let mut theirs = other.0.iter();
        'mine: for a in &self.0 {
            for b in theirs.by_ref() {
                match b.cmp(a) {
                    Ordering::Less => continue,
                    Ordering::Equal => continue 'mine,
                    Ordering::Greater => return false,
                }
            }
            return false;
        }
        true
    }

    /// The atoms in either set, in ascending order (a merge).
    pub fn union<'a>(&'a self, other: &'a AtomSet) -> impl Iterator<Item = &'a Atom> + 'a {
        Union {
            a: self.0.iter().peekable(),
            b: other.0.iter().peekable(),
        }
    }

    /// The atoms in both sets, in ascending order.
    pub fn intersection<'a>(&'a self, other: &'a AtomSet) -> impl Iterator<Item = &'a Atom> + 'a {
        self.0.iter().filter(move |a| other.contains(a))
    }

    /// `self ∪ other` as a set.
    pub fn union_set(&self, other: &AtomSet) -> AtomSet {
        let mut v = Vec::with_capacity(self.0.len() + other.0.len());
        v.extend(self.union(other).cloned());
        AtomSet(v)
    }

    /// Adds every atom of `other` (appending when they all sort after `self`'s).
    pub fn extend_from(&mut self, other: &AtomSet) {
        match (self.0.last(), other.0.first()) {
            (_, None) => {}
            (None, _) => self.0.clone_from(&other.0),
            (Some(l), Some(f)) if l < f => self.0.extend(other.0.iter().cloned()),
            _ => {
                for a in &other.0 {
                    self.insert(a.clone());
                }
            }
        }
    }
}

/// Merge of two ascending slices, without duplicates.
struct Union<'a> {
    a: std::iter::Peekable<std::slice::Iter<'a, Atom>>,
    b: std::iter::Peekable<std::slice::Iter<'a, Atom>>,
}

impl<'a> Iterator for Union<'a> {
    type Item = &'a Atom;
    fn next(&mut self) -> Option<&'a Atom> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Less => self.a.next(),
                Ordering::Greater => self.b.next(),
                Ordering::Equal => {
                    self.b.next();
                    self.a.next()
                }
            },
            (Some(_), None) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

/// Printed like a set (`{a, b}`), as the `BTreeSet` it replaces was.
impl fmt::Debug for AtomSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(&self.0).finish()
    }
}

impl FromIterator<Atom> for AtomSet {
    fn from_iter<I: IntoIterator<Item = Atom>>(iter: I) -> Self {
        let mut v: Vec<Atom> = iter.into_iter().collect();
        if !v.windows(2).all(|w| w[0] < w[1]) {
            v.sort();
            v.dedup();
        }
        AtomSet(v)
    }
}

impl<const N: usize> From<[Atom; N]> for AtomSet {
    fn from(atoms: [Atom; N]) -> Self {
        atoms.into_iter().collect()
    }
}

impl Extend<Atom> for AtomSet {
    fn extend<I: IntoIterator<Item = Atom>>(&mut self, iter: I) {
        for a in iter {
            self.insert(a);
        }
    }
}

impl IntoIterator for AtomSet {
    type Item = Atom;
    type IntoIter = std::vec::IntoIter<Atom>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a AtomSet {
    type Item = &'a Atom;
    type IntoIter = std::slice::Iter<'a, Atom>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Serialized as a sequence in ascending order (as the `BTreeSet` was).
impl Serialize for AtomSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Read back in any order, with duplicates dropped.
impl<'de> Deserialize<'de> for AtomSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Atom>::deserialize(d).map(|v| v.into_iter().collect())
    }
}
