//! Awk associative arrays, laid out as mawk 1.3.4 lays them out (`array.c`),
//! because `for (k in a)` visits keys in that layout's order and scripts print
//! in that order: a table of buckets, each holding a list of nodes reachable
//! by string (hashed with FNV-1, most recently used first) and a list
//! reachable by integer (`ival & hmask`); a table doubles past 12 nodes per
//! bucket; `split()` fills a plain vector that turns into a table on the first
//! access it cannot serve. Every lookup moves the node it finds to the front
//! of the list it searched, as mawk does, so the order depends on the access
//! history exactly as there. The bytes held are counted against the run's
//! memory budget ([`crate::budget`]).

use crate::value::{Str, Value};

/// A subscript: its text, and the integer mawk keys it by when it is a
/// number with an integral value in int range (`a[1]`, not `a["1"]`).
#[derive(Clone, Debug)]
pub struct Key {
    /// The subscript as a string (what `for (k in a)` yields).
    pub bytes: Str,
    /// The integer key, for numeric subscripts.
    pub ival: Option<i32>,
}

impl Key {
    /// A string subscript.
    pub fn str(bytes: Str) -> Key {
        Key { bytes, ival: None }
    }

    /// An integer subscript.
    pub fn int(i: i32) -> Key {
        Key {
            bytes: std::rc::Rc::from(i.to_string().as_bytes()),
            ival: Some(i),
        }
    }
}

const NIL: u32 = u32::MAX;
/// mawk's `NOT_AN_IVALUE`: a node reachable only by string.
const NO_IVAL: i32 = i32::MIN;
const STARTING_HMASK: u32 = 63;
const MAX_AVE_LIST_LENGTH: usize = 12;

fn hmask_to_limit(hmask: u32) -> usize {
    (hmask as usize + 1) * MAX_AVE_LIST_LENGTH
}

/// mawk's `hash2`: FNV-1 over the key bytes.
fn fnv1(s: &[u8]) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for &c in s {
        h ^= c as u32;
        h = h.wrapping_mul(16_777_619);
    }
    h
}

#[derive(Debug)]
struct Node {
    slink: u32,
    ilink: u32,
    sval: Option<Str>,
    hval: u32,
    ival: i32,
    val: Value,
}

/// What a lookup found: a cell of a split vector or a table node.
#[derive(Clone, Copy)]
enum Slot {
    Cell(usize),
    Node(u32),
}

/// An awk array.
#[derive(Default, Debug)]
pub struct Array {
    /// `split()`'s vector (mawk's `AY_SPLIT`), when `split` is set.
    cells: Vec<Value>,
    split: bool,
    /// A table exists (`AY_INT` and/or `AY_STR`).
    table: Vec<(u32, u32)>,
    has_int: bool,
    has_str: bool,
    hmask: u32,
    limit: usize,
    size: usize,
    nodes: Vec<Node>,
    free: Vec<u32>,
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

    fn node(&self, p: u32) -> Option<&Node> {
        self.nodes.get(p as usize)
    }

    fn node_mut(&mut self, p: u32) -> Option<&mut Node> {
        self.nodes.get_mut(p as usize)
    }

    fn slink(&self, p: u32) -> u32 {
        self.node(p).map_or(NIL, |n| n.slink)
    }

    fn ilink(&self, p: u32) -> u32 {
        self.node(p).map_or(NIL, |n| n.ilink)
    }

    fn set_slink(&mut self, p: u32, to: u32) {
        if let Some(n) = self.node_mut(p) {
            n.slink = to;
        }
    }

    fn set_ilink(&mut self, p: u32, to: u32) {
        if let Some(n) = self.node_mut(p) {
            n.ilink = to;
        }
    }

    fn head(&self, i: u32) -> (u32, u32) {
        self.table.get(i as usize).copied().unwrap_or((NIL, NIL))
    }

    fn bucket(&mut self, i: u32) -> &mut (u32, u32) {
        let i = i as usize;
        if i >= self.table.len() {
            self.table.resize(i + 1, (NIL, NIL));
        }
        &mut self.table[i]
    }

    fn alloc(&mut self, n: Node) -> u32 {
        match self.free.pop() {
            Some(p) => {
                if let Some(slot) = self.node_mut(p) {
                    *slot = n;
                }
                p
            }
            None => {
                self.nodes.push(n);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    fn make_empty_table(&mut self, int: bool) {
        self.hmask = STARTING_HMASK;
        self.limit = hmask_to_limit(STARTING_HMASK);
        self.table = vec![(NIL, NIL); STARTING_HMASK as usize + 1];
        self.has_int = int;
        self.has_str = !int;
    }

    /// `split()`'s vector becomes a table of integer-keyed nodes.
    fn convert_split_array_to_table(&mut self) {
        self.hmask = STARTING_HMASK;
        self.limit = hmask_to_limit(STARTING_HMASK);
        while self.size > self.limit {
            self.hmask = (self.hmask << 1) + 1;
            self.limit = hmask_to_limit(self.hmask);
        }
        self.table = vec![(NIL, NIL); self.hmask as usize + 1];
        let cells = std::mem::take(&mut self.cells);
        let mut j: u32 = 1;
        for (i, val) in cells.into_iter().enumerate() {
            let head = self.bucket(j).1;
            let p = self.alloc(Node {
                slink: NIL,
                ilink: head,
                sval: None,
                hval: 0,
                ival: (i + 1) as i32,
                val,
            });
            self.bucket(j).1 = p;
            j = (j + 1) & self.hmask;
        }
        self.split = false;
        self.has_int = true;
        self.has_str = false;
    }

    fn double_the_hash_table(&mut self) {
        let old = self.hmask;
        let new = (old << 1) + 1;
        self.table.resize(new as usize + 1, (NIL, NIL));
        // Split each list in two, keeping the relative order of both halves.
        for i in 0..=old {
            let j = i + old + 1;
            if self.has_str {
                let (mut keep, mut moved) = (Vec::new(), Vec::new());
                self.walk(self.head(i).0, true, |p, n| {
                    if n.hval & new != i {
                        moved.push(p);
                    } else {
                        keep.push(p);
                    }
                });
                self.bucket(i).0 = self.relink(&keep, true);
                self.bucket(j).0 = self.relink(&moved, true);
            }
            if self.has_int {
                let (mut keep, mut moved) = (Vec::new(), Vec::new());
                self.walk(self.head(i).1, false, |p, n| {
                    if (n.ival as u32) & new != i {
                        moved.push(p);
                    } else {
                        keep.push(p);
                    }
                });
                self.bucket(i).1 = self.relink(&keep, false);
                self.bucket(j).1 = self.relink(&moved, false);
            }
        }
        self.hmask = new;
        self.limit = hmask_to_limit(new);
    }

    /// Calls `f` on each node of a list. Bounded by the node count: a list
    /// can never be longer, so a damaged one cannot loop forever.
    fn walk(&self, mut p: u32, by_str: bool, mut f: impl FnMut(u32, &Node)) {
        let mut steps = 0;
        while let Some(n) = self.node(p) {
            steps += 1;
            if steps > self.nodes.len() {
                break;
            }
            f(p, n);
            p = if by_str { n.slink } else { n.ilink };
        }
    }

    /// Chains `list` in order; returns its head.
    fn relink(&mut self, list: &[u32], by_str: bool) -> u32 {
        let mut next = NIL;
        for &p in list.iter().rev() {
            if by_str {
                self.set_slink(p, next);
            } else {
                self.set_ilink(p, next);
            }
            next = p;
        }
        next
    }

    /// Gives every integer-keyed node its string, making the table
    /// searchable by string.
    fn add_string_associations(&mut self) {
        if !self.split && !self.has_int && !self.has_str {
            self.make_empty_table(false);
            return;
        }
        if self.split {
            self.convert_split_array_to_table();
        }
        for i in 0..=self.hmask {
            let mut list = Vec::new();
            self.walk(self.head(i).1, false, |p, _| list.push(p));
            for p in list {
                let Some(n) = self.node_mut(p) else { continue };
                let s: Str = std::rc::Rc::from(n.ival.to_string().as_bytes());
                let h = fnv1(&s);
                n.sval = Some(s);
                n.hval = h;
                let b = h & self.hmask;
                let head = self.bucket(b).0;
                self.set_slink(p, head);
                self.bucket(b).0 = p;
            }
        }
        self.has_str = true;
    }

    fn find_by_sval(&mut self, s: &Str, create: bool) -> Option<u32> {
        let hval = fnv1(s);
        if !self.has_str {
            self.add_string_associations();
        }
        let mut indx = hval & self.hmask;
        let mut p = self.bucket(indx).0;
        let mut q = NIL;
        let mut steps = 0;
        loop {
            steps += 1;
            let Some(n) = self.node(p).filter(|_| steps <= self.nodes.len() + 1) else {
                if !create {
                    return None;
                }
                p = self.alloc(Node {
                    slink: NIL,
                    ilink: NIL,
                    sval: Some(s.clone()),
                    hval,
                    ival: NO_IVAL,
                    val: Value::Uninit,
                });
                self.count(0, entry_bytes(s, &Value::Uninit));
                self.size += 1;
                if self.size > self.limit {
                    self.double_the_hash_table();
                    indx = hval & self.hmask;
                }
                break;
            };
            if n.hval == hval && n.sval.as_deref() == Some(&s[..]) {
                if q == NIL {
                    return Some(p);
                }
                let after = n.slink;
                self.set_slink(q, after);
                break;
            }
            q = p;
            p = n.slink;
        }
        let head = self.bucket(indx).0;
        self.set_slink(p, head);
        self.bucket(indx).0 = p;
        Some(p)
    }

    fn find_by_ival(&mut self, ival: i32, create: bool) -> Option<u32> {
        let mut indx = (ival as u32) & self.hmask;
        let mut p = self.bucket(indx).1;
        let mut q = NIL;
        let mut steps = 0;
        loop {
            steps += 1;
            let Some(n) = self.node(p).filter(|_| steps <= self.nodes.len() + 1) else {
                if self.has_str {
                    // mawk keeps `indx` from before a doubling here: the node
                    // then sits in another bucket's list, as in mawk.
                    let s: Str = std::rc::Rc::from(ival.to_string().as_bytes());
                    p = self.find_by_sval(&s, create)?;
                } else if create {
                    p = self.alloc(Node {
                        slink: NIL,
                        ilink: NIL,
                        sval: None,
                        hval: 0,
                        ival,
                        val: Value::Uninit,
                    });
                    let digits = ival.to_string().len();
                    self.count(0, entry_bytes(&vec![0; digits], &Value::Uninit));
                    self.size += 1;
                    if self.size > self.limit {
                        self.double_the_hash_table();
                        indx = (ival as u32) & self.hmask;
                    }
                } else {
                    return None;
                }
                if let Some(n) = self.node_mut(p) {
                    n.ival = ival;
                }
                self.has_int = true;
                break;
            };
            if n.ival == ival {
                if q == NIL {
                    return Some(p);
                }
                let after = n.ilink;
                self.set_ilink(q, after);
                break;
            }
            q = p;
            p = n.ilink;
        }
        let head = self.bucket(indx).1;
        self.set_ilink(p, head);
        self.bucket(indx).1 = p;
        Some(p)
    }

    /// mawk's `array_find`.
    fn find(&mut self, k: &Key, create: bool) -> Option<Slot> {
        if self.size == 0 && !create {
            return None;
        }
        match k.ival {
            Some(i) => {
                if self.split {
                    if i >= 1 && (i as usize) <= self.size {
                        return Some(Slot::Cell(i as usize - 1));
                    }
                    if !create {
                        return None;
                    }
                    self.convert_split_array_to_table();
                } else if !self.has_int && !self.has_str {
                    self.make_empty_table(true);
                }
                self.find_by_ival(i, create).map(Slot::Node)
            }
            None => self.find_by_sval(&k.bytes, create).map(Slot::Node),
        }
    }

    fn value_mut(&mut self, s: Slot) -> Option<&mut Value> {
        match s {
            Slot::Cell(i) => self.cells.get_mut(i),
            Slot::Node(p) => self.node_mut(p).map(|n| &mut n.val),
        }
    }

    /// The value at `k` (created uninitialized if missing, as a reference
    /// does in awk).
    pub fn get(&mut self, k: &Key) -> Value {
        self.update(k, |v| v.clone())
    }

    /// Applies `f` to the element at `k` (created uninitialized if missing).
    pub fn update<T>(&mut self, k: &Key, f: impl FnOnce(&mut Value) -> T) -> T {
        let slot = self.find(k, true);
        let Some(v) = slot.and_then(|s| self.value_mut(s)) else {
            // Unreachable: a creating lookup always yields a slot.
            return f(&mut Value::Uninit);
        };
        let before = value_bytes(v);
        let r = f(v);
        let after = value_bytes(v);
        self.count(before, after);
        r
    }

    /// Inserts or replaces.
    pub fn set(&mut self, k: &Key, v: Value) {
        self.update(k, |x| *x = v);
    }

    /// True if present (`k in a`; reorders like any lookup).
    pub fn contains(&mut self, k: &Key) -> bool {
        self.find(k, false).is_some()
    }

    fn free_node(&mut self, p: u32) {
        if let Some(n) = self.node_mut(p) {
            let val = std::mem::replace(&mut n.val, Value::Uninit);
            let key = n.sval.take();
            let klen = key.as_ref().map_or(n.ival.to_string().len(), |s| s.len());
            n.slink = NIL;
            n.ilink = NIL;
            n.ival = NO_IVAL;
            self.count(entry_bytes(&vec![0; klen], &val), 0);
            self.free.push(p);
        }
        self.size = self.size.saturating_sub(1);
        if self.size == 0 {
            self.clear();
        }
    }

    /// Removes `p` from bucket `b`'s string list (`by_str`) or integer list
    /// (by walking it).
    fn unlink(&mut self, b: u32, p: u32, by_str: bool) {
        let mut prev = NIL;
        let mut found = false;
        let head = self.head(b);
        self.walk(if by_str { head.0 } else { head.1 }, by_str, |x, _| {
            if !found {
                if x == p {
                    found = true;
                } else {
                    prev = x;
                }
            }
        });
        if !found {
            return;
        }
        let next = if by_str { self.slink(p) } else { self.ilink(p) };
        match (prev == NIL, by_str) {
            (true, true) => self.bucket(b).0 = next,
            (true, false) => self.bucket(b).1 = next,
            (false, true) => self.set_slink(prev, next),
            (false, false) => self.set_ilink(prev, next),
        }
    }

    /// Removes `k` (mawk's `array_delete`).
    pub fn remove(&mut self, k: &Key) {
        if self.size == 0 {
            return;
        }
        if let Some(i) = k.ival {
            if self.split {
                if i >= 1 && (i as usize) <= self.size {
                    self.convert_split_array_to_table();
                } else {
                    return;
                }
            }
            let Some(p) = self.find_by_ival(i, false) else {
                return;
            };
            // The lookup moved it to the front of its integer list.
            let b = (i as u32) & self.hmask;
            self.bucket(b).1 = self.ilink(p);
            if let Some(n) = self.node(p)
                && n.sval.is_some()
            {
                let sb = n.hval & self.hmask;
                self.unlink(sb, p, true);
            }
            self.free_node(p);
            return;
        }
        let Some(p) = self.find_by_sval(&k.bytes, false) else {
            return;
        };
        let Some(n) = self.node(p) else { return };
        let (hval, ival) = (n.hval, n.ival);
        // The lookup moved it to the front of its string list.
        let b = hval & self.hmask;
        self.bucket(b).0 = self.slink(p);
        if ival != NO_IVAL {
            self.unlink((ival as u32) & self.hmask, p, false);
        }
        self.free_node(p);
    }

    /// Removes everything.
    pub fn clear(&mut self) {
        let bytes = self.bytes;
        self.count(bytes, 0);
        self.cells = Vec::new();
        self.split = false;
        self.table = Vec::new();
        self.has_int = false;
        self.has_str = false;
        self.hmask = 0;
        self.limit = 0;
        self.size = 0;
        self.nodes = Vec::new();
        self.free = Vec::new();
    }

    /// `split()`'s result: elements 1..=n, held as mawk holds them.
    pub fn load(&mut self, vals: Vec<Value>) {
        self.clear();
        let bytes: u64 = vals
            .iter()
            .enumerate()
            .map(|(i, v)| entry_bytes(&vec![0; (i + 1).to_string().len()], v))
            .sum();
        self.count(0, bytes);
        self.size = vals.len();
        self.cells = vals;
        self.split = !self.cells.is_empty();
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.size
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// The keys in mawk's `for (k in a)` order (`array_loop_vector`).
    pub fn keys(&mut self) -> Vec<Str> {
        if self.size == 0 {
            return Vec::new();
        }
        if !self.has_str {
            self.add_string_associations();
        }
        let mut out = Vec::with_capacity(self.size);
        for i in 0..=self.hmask {
            self.walk(self.head(i).0, true, |_, n| {
                if let Some(s) = &n.sval {
                    out.push(s.clone());
                }
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Array, Key};
    use crate::value::Value;
    use std::rc::Rc;

    fn keys(a: &mut Array) -> String {
        let k: Vec<String> = a
            .keys()
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        k.join(" ")
    }

    #[test]
    fn mawk_orders() {
        let mut a = Array::default();
        for k in ["a", "b", "c"] {
            a.set(&Key::str(Rc::from(k.as_bytes())), Value::Uninit);
        }
        assert_eq!(keys(&mut a), "c b a");
        let mut a = Array::default();
        for i in 1..=12 {
            a.set(&Key::int(i), Value::Uninit);
        }
        assert_eq!(keys(&mut a), "3 10 8 6 5 2 11 1 4 12 9 7");
    }

    #[test]
    fn delete_and_reinsert() {
        let mut a = Array::default();
        for i in 0..2000 {
            a.set(&Key::int(i), Value::Num(i as f64));
        }
        for i in (0..2000).step_by(3) {
            a.remove(&Key::int(i));
        }
        assert_eq!(a.len(), 2000 - 667);
        assert!(!a.contains(&Key::int(3)));
        assert!(a.contains(&Key::str(Rc::from(&b"4"[..]))));
        assert_eq!(a.keys().len(), a.len());
    }
}
