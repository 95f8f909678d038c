//! jq 1.6's value model for jaq: every number is a double, object keys are
//! strings kept in insertion order, indexing and updating follow jq 1.6
//! (`null` grows into objects and arrays, fractional indices are floored,
//! out-of-range assignments pad with nulls), and errors carry jq's wording.

use crate::write::{Style, write_val};
use jaq_core::box_iter::box_once;
use jaq_core::path::Opt;
use jaq_core::{Error, Exn, ValR, ValX, val};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// An order-preserving map from string values to values.
pub type Map = jaq_json::Map<Val, Val>;

/// A jq value.
#[derive(Clone, Debug, Default)]
pub enum Val {
    /// `null`
    #[default]
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number (always a double, as in jq 1.6).
    Num(f64),
    /// A string (valid UTF-8).
    Str(Rc<str>),
    /// An array.
    Arr(Rc<Vec<Val>>),
    /// An object.
    Obj(Rc<Map>),
}

type R = ValR<Val>;

/// An error with a plain message.
pub fn err(msg: impl Into<String>) -> Error<Val> {
    Error::new(Val::from(msg.into()))
}

/// jq's name for a value's kind.
pub fn kind(v: &Val) -> &'static str {
    match v {
        Val::Null => "null",
        Val::Bool(_) => "boolean",
        Val::Num(_) => "number",
        Val::Str(_) => "string",
        Val::Arr(_) => "array",
        Val::Obj(_) => "object",
    }
}

/// jq's short rendering of a value inside error messages (`jv_dump_string_trunc`).
pub fn trunc(v: &Val) -> String {
    let j = v.to_string();
    if j.len() > 14 {
        let mut cut = 11;
        while !j.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &j[..cut])
    } else {
        j
    }
}

/// `kind (value)` as in jq's messages.
pub fn desc(v: &Val) -> String {
    format!("{} ({})", kind(v), trunc(v))
}

/// jq 1.6's error for indexing `t` with `k`.
pub(crate) fn index_err(t: &Val, k: &Val) -> Error<Val> {
    match (t, k) {
        (Val::Obj(_), _) => err(format!("Cannot index object with {}", kind(k))),
        (_, Val::Str(s)) => err(format!("Cannot index {} with string \"{s}\"", kind(t))),
        _ => err(format!("Cannot index {} with {}", kind(t), kind(k))),
    }
}

fn iter_err(v: &Val) -> Error<Val> {
    err(format!("Cannot iterate over {}", desc(v)))
}

fn binop_err(l: &Val, r: &Val, what: &str) -> Error<Val> {
    err(format!("{} and {} {what}", desc(l), desc(r)))
}

/// Resolves a slice bound pair against `len` the way jq 1.6 does.
fn slice_bounds(
    start: Option<&Val>,
    end: Option<&Val>,
    len: usize,
) -> Result<(usize, usize), Error<Val>> {
    let num = |v: Option<&Val>, dflt: f64| match v {
        None | Some(Val::Null) => Ok(dflt),
        Some(Val::Num(n)) => Ok(*n),
        Some(_) => Err(err(
            "Start and end indices of an array slice must be numbers",
        )),
    };
    let len_f = len as f64;
    let mut s = num(start, 0.0)?;
    let mut e = num(end, len_f)?;
    if s < 0.0 {
        s += len_f;
    }
    if e < 0.0 {
        e += len_f;
    }
    s = s.clamp(0.0, len_f);
    e = e.min(len_f);
    if e < s {
        e = s;
    }
    let si = s as usize;
    let ei = if e > e.trunc() {
        e as usize + 1
    } else {
        e as usize
    };
    Ok((si, ei.min(len)))
}

/// Byte offset of the `n`th character of `s` (or its length).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Truncates an array index (C's `(int)` cast) and makes negative ones count
/// from the end.
fn abs_index(n: f64, len: usize) -> f64 {
    let f = n.trunc();
    if f < 0.0 { f + len as f64 } else { f }
}

fn first<'a>(mut it: impl Iterator<Item = ValX<'a, Val>>) -> Result<Option<Val>, Exn<'a, Val>> {
    it.next().transpose()
}

impl Val {
    /// A string value.
    pub fn str(s: impl Into<Rc<str>>) -> Self {
        Val::Str(s.into())
    }

    /// An object value.
    pub fn obj(m: Map) -> Self {
        Val::Obj(Rc::new(m))
    }

    fn slice(self, start: Option<&Val>, end: Option<&Val>) -> R {
        match &self {
            Val::Null => Ok(Val::Null),
            Val::Arr(a) => {
                let (s, e) = slice_bounds(start, end, a.len())?;
                Ok(Val::from_iter(a[s..e].iter().cloned()))
            }
            Val::Str(t) => {
                let (s, e) = slice_bounds(start, end, t.chars().count())?;
                let (bs, be) = (char_offset(t, s), char_offset(t, e));
                Ok(Val::str(&t[bs..be]))
            }
            _ => Err(err(format!("Cannot index {} with object", kind(&self)))),
        }
    }

    fn slice_obj(o: &Map) -> (Option<&Val>, Option<&Val>) {
        let get = |k: &str| o.get(&Val::str(k));
        (get("start"), get("end"))
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut out = Vec::new();
        write_val(&mut out, &Style::COMPACT, 0, self);
        f.write_str(&String::from_utf8_lossy(&out))
    }
}

impl From<bool> for Val {
    fn from(b: bool) -> Self {
        Val::Bool(b)
    }
}

impl From<isize> for Val {
    fn from(i: isize) -> Self {
        Val::Num(i as f64)
    }
}

impl From<usize> for Val {
    fn from(i: usize) -> Self {
        Val::Num(i as f64)
    }
}

impl From<f64> for Val {
    fn from(f: f64) -> Self {
        Val::Num(f)
    }
}

impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::Str(s.into())
    }
}

impl From<val::Range<Val>> for Val {
    fn from(r: val::Range<Val>) -> Self {
        // jq 1.6 writes both bounds, null when open: `{"start":1,"end":null}`.
        let mut m = Map::default();
        m.insert(Val::str("start"), r.start.unwrap_or(Val::Null));
        m.insert(Val::str("end"), r.end.unwrap_or(Val::Null));
        Val::obj(m)
    }
}

impl FromIterator<Val> for Val {
    fn from_iter<T: IntoIterator<Item = Val>>(iter: T) -> Self {
        Val::Arr(Rc::new(iter.into_iter().collect()))
    }
}

fn kind_rank(v: &Val) -> u8 {
    match v {
        Val::Null => 0,
        Val::Bool(false) => 1,
        Val::Bool(true) => 2,
        Val::Num(_) => 3,
        Val::Str(_) => 4,
        Val::Arr(_) => 5,
        Val::Obj(_) => 6,
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    // jq 1.6 sorts nan below every number; keep the order total.
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

impl Ord for Val {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Val::Num(a), Val::Num(b)) => cmp_f64(*a, *b),
            (Val::Str(a), Val::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Val::Arr(a), Val::Arr(b)) => {
                crate::engine::check_stack();
                a.iter().cmp(b.iter())
            }
            (Val::Obj(a), Val::Obj(b)) => {
                crate::engine::check_stack();
                let mut ka: Vec<&Val> = a.keys().collect();
                let mut kb: Vec<&Val> = b.keys().collect();
                ka.sort();
                kb.sort();
                ka.cmp(&kb).then_with(|| {
                    let va = ka.iter().map(|k| a.get(*k));
                    let vb = kb.iter().map(|k| b.get(*k));
                    va.cmp(vb)
                })
            }
            _ => kind_rank(self).cmp(&kind_rank(other)),
        }
    }
}

impl PartialOrd for Val {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Val {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // jq compares numbers as doubles: nan is unequal to itself.
            (Val::Num(a), Val::Num(b)) => a == b,
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}

impl Eq for Val {}

impl Hash for Val {
    fn hash<H: Hasher>(&self, state: &mut H) {
        kind_rank(self).hash(state);
        match self {
            Val::Num(n) => {
                let n = if *n == 0.0 { 0.0 } else { *n };
                n.to_bits().hash(state)
            }
            Val::Str(s) => s.hash(state),
            Val::Arr(a) => {
                crate::engine::check_stack();
                a.iter().for_each(|x| x.hash(state))
            }
            Val::Obj(o) => o.len().hash(state),
            Val::Null | Val::Bool(_) => {}
        }
    }
}

impl std::ops::Add for Val {
    type Output = R;
    fn add(self, rhs: Self) -> R {
        match (self, rhs) {
            (Val::Null, x) | (x, Val::Null) => Ok(x),
            (Val::Num(a), Val::Num(b)) => Ok(Val::Num(a + b)),
            (Val::Str(a), Val::Str(b)) => Ok(Val::from(format!("{a}{b}"))),
            (Val::Arr(mut a), Val::Arr(b)) => {
                Rc::make_mut(&mut a).extend(b.iter().cloned());
                Ok(Val::Arr(a))
            }
            (Val::Obj(mut a), Val::Obj(b)) => {
                let m = Rc::make_mut(&mut a);
                for (k, v) in b.iter() {
                    m.insert(k.clone(), v.clone());
                }
                Ok(Val::Obj(a))
            }
            (l, r) => Err(binop_err(&l, &r, "cannot be added")),
        }
    }
}

impl std::ops::Sub for Val {
    type Output = R;
    fn sub(self, rhs: Self) -> R {
        match (self, rhs) {
            (Val::Num(a), Val::Num(b)) => Ok(Val::Num(a - b)),
            (Val::Arr(mut a), Val::Arr(b)) => {
                Rc::make_mut(&mut a).retain(|x| !b.contains(x));
                Ok(Val::Arr(a))
            }
            (l, r) => Err(binop_err(&l, &r, "cannot be subtracted")),
        }
    }
}

fn deep_merge(a: &mut Rc<Map>, b: &Map) {
    crate::engine::check_stack();
    let m = Rc::make_mut(a);
    for (k, v) in b.iter() {
        match (m.get_mut(k), v) {
            (Some(Val::Obj(x)), Val::Obj(y)) => deep_merge(x, y),
            _ => {
                m.insert(k.clone(), v.clone());
            }
        }
    }
}

impl std::ops::Mul for Val {
    type Output = R;
    fn mul(self, rhs: Self) -> R {
        match (self, rhs) {
            (Val::Num(a), Val::Num(b)) => Ok(Val::Num(a * b)),
            (Val::Str(s), Val::Num(n)) | (Val::Num(n), Val::Str(s)) => {
                // jq 1.6: (int)(n - 1) extra copies; nothing left means null.
                let extra = (n - 1.0) as i64;
                if extra < 0 || n <= 0.0 {
                    Ok(Val::Null)
                } else {
                    Ok(Val::from(s.repeat(extra as usize + 1)))
                }
            }
            (Val::Obj(mut a), Val::Obj(b)) => {
                deep_merge(&mut a, &b);
                Ok(Val::Obj(a))
            }
            (l, r) => Err(binop_err(&l, &r, "cannot be multiplied")),
        }
    }
}

impl std::ops::Div for Val {
    type Output = R;
    fn div(self, rhs: Self) -> R {
        match (self, rhs) {
            (Val::Num(a), Val::Num(b)) => {
                if b == 0.0 {
                    Err(binop_err(
                        &Val::Num(a),
                        &Val::Num(b),
                        "cannot be divided because the divisor is zero",
                    ))
                } else {
                    Ok(Val::Num(a / b))
                }
            }
            (Val::Str(a), Val::Str(b)) => Ok(split(&a, &b)),
            (l, r) => Err(binop_err(&l, &r, "cannot be divided")),
        }
    }
}

/// `"a,b" / ","`: jq 1.6 gives `[]` for an empty input.
pub fn split(a: &str, b: &str) -> Val {
    if a.is_empty() {
        return Val::from_iter(std::iter::empty());
    }
    if b.is_empty() {
        return Val::from_iter(a.chars().map(|c| Val::from(c.to_string())));
    }
    Val::from_iter(a.split(b).map(Val::str))
}

impl std::ops::Rem for Val {
    type Output = R;
    fn rem(self, rhs: Self) -> R {
        match (self, rhs) {
            (Val::Num(a), Val::Num(b)) => {
                let (x, y) = (a as i64, b as i64);
                if y == 0 {
                    Err(binop_err(
                        &Val::Num(a),
                        &Val::Num(b),
                        "cannot be divided (remainder) because the divisor is zero",
                    ))
                } else {
                    Ok(Val::Num(x.wrapping_rem(y) as f64))
                }
            }
            (l, r) => Err(binop_err(&l, &r, "cannot be divided (remainder)")),
        }
    }
}

impl std::ops::Neg for Val {
    type Output = R;
    fn neg(self) -> R {
        match self {
            Val::Num(n) => Ok(Val::Num(-n)),
            v => Err(err(format!("{} cannot be negated", desc(&v)))),
        }
    }
}

/// The largest array index an assignment may create. Growing an array past
/// it would allocate gigabytes (jq 1.6 tries and dies; jq 1.7 stops at
/// 2^29 - 1 with the same message).
pub const MAX_ARRAY_INDEX: usize = (1 << 24) - 1;

/// The error for an index past [`MAX_ARRAY_INDEX`].
pub const TOO_LARGE: &str = "Array index too large";

impl jaq_core::ValT for Val {
    fn from_num(n: &str) -> R {
        n.parse::<f64>()
            .map(Val::Num)
            .map_err(|_| err(format!("Invalid numeric literal {n}")))
    }

    fn from_map<I: IntoIterator<Item = (Self, Self)>>(iter: I) -> R {
        let mut m = Map::default();
        for (k, v) in iter {
            if !matches!(k, Val::Str(_)) {
                return Err(err(format!(
                    "Object keys must be strings, not {}",
                    kind(&k)
                )));
            }
            m.insert(k, v);
        }
        Ok(Val::obj(m))
    }

    fn key_values(self) -> Box<dyn Iterator<Item = Result<(Val, Val), Error<Val>>>> {
        match self {
            Val::Arr(a) => {
                let v = Rc::try_unwrap(a).unwrap_or_else(|a| (*a).clone());
                Box::new(
                    v.into_iter()
                        .enumerate()
                        .map(|(i, x)| Ok((Val::from(i), x))),
                )
            }
            Val::Obj(o) => {
                let v: Vec<_> = o.iter().map(|(k, x)| (k.clone(), x.clone())).collect();
                Box::new(v.into_iter().map(Ok))
            }
            v => box_once(Err(iter_err(&v))),
        }
    }

    fn values(self) -> Box<dyn Iterator<Item = R>> {
        match self {
            Val::Arr(a) => {
                let v = Rc::try_unwrap(a).unwrap_or_else(|a| (*a).clone());
                Box::new(v.into_iter().map(Ok))
            }
            Val::Obj(o) => {
                let v: Vec<_> = o.values().cloned().collect();
                Box::new(v.into_iter().map(Ok))
            }
            v => box_once(Err(iter_err(&v))),
        }
    }

    fn index(self, index: &Self) -> R {
        match (&self, index) {
            (Val::Null, Val::Str(_) | Val::Num(_) | Val::Null) => Ok(Val::Null),
            (Val::Obj(o), Val::Str(_)) => Ok(o.get(index).cloned().unwrap_or(Val::Null)),
            (Val::Arr(a), Val::Num(n)) => {
                // jq 1.6 yields null for fractional indices.
                let i = abs_index(*n, a.len());
                if n.fract() == 0.0 && i >= 0.0 && i < a.len() as f64 {
                    Ok(a[i as usize].clone())
                } else {
                    Ok(Val::Null)
                }
            }
            (Val::Arr(a), Val::Arr(b)) => Ok(indices_arr(a, b)),
            (Val::Null | Val::Arr(_) | Val::Str(_), Val::Obj(o)) => {
                let (s, e) = Val::slice_obj(o);
                self.clone().slice(s, e)
            }
            _ => Err(index_err(&self, index)),
        }
    }

    fn range(self, range: val::Range<&Self>) -> R {
        self.slice(range.start, range.end)
    }

    fn map_values<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        match self {
            // `null | .[] |= f` fails in jq 1.6 (`path(.[])` of null does).
            Val::Null => opt.fail(Val::Null, |v| Exn::from(iter_err(&v))),
            Val::Arr(a) => {
                // jq 1.6 visits the original indices while deleting in place,
                // so a deletion shifts the next element past its visit.
                let n = a.len();
                let mut cur: Vec<Val> = a.iter().cloned().collect();
                for p in 0..n {
                    let Some(x) = cur.get(p).cloned() else { break };
                    match first(f(x))? {
                        Some(y) => cur[p] = y,
                        None => {
                            cur.remove(p);
                        }
                    }
                }
                Ok(Val::from_iter(cur))
            }
            Val::Obj(o) => {
                let mut m = Map::default();
                for (k, x) in o.iter() {
                    if let Some(y) = first(f(x.clone()))? {
                        m.insert(k.clone(), y);
                    }
                }
                Ok(Val::obj(m))
            }
            v => opt.fail(v, |v| Exn::from(iter_err(&v))),
        }
    }

    fn map_index<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        index: &Self,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        match (self, index) {
            (Val::Null, Val::Str(_)) => Val::obj(Map::default()).map_index(index, opt, f),
            (Val::Null, Val::Num(_)) => Val::from_iter(std::iter::empty()).map_index(index, opt, f),
            (Val::Obj(mut o), Val::Str(_)) => {
                let old = o.get(index).cloned().unwrap_or(Val::Null);
                let m = Rc::make_mut(&mut o);
                match first(f(old))? {
                    Some(y) => {
                        m.insert(index.clone(), y);
                    }
                    None => {
                        m.shift_remove(index);
                    }
                }
                Ok(Val::Obj(o))
            }
            (Val::Arr(mut a), Val::Num(n)) => {
                let i = abs_index(*n, a.len());
                if i < 0.0 {
                    return opt.fail(Val::Arr(a), |_| {
                        Exn::from(err("Out of bounds negative array index"))
                    });
                }
                if i > MAX_ARRAY_INDEX as f64 {
                    return opt.fail(Val::Arr(a), |_| Exn::from(err(TOO_LARGE)));
                }
                let i = i as usize;
                let v = Rc::make_mut(&mut a);
                let old = v.get(i).cloned().unwrap_or(Val::Null);
                match first(f(old))? {
                    Some(y) => {
                        if i >= v.len() {
                            v.resize(i + 1, Val::Null);
                        }
                        v[i] = y;
                    }
                    None => {
                        if i < v.len() {
                            v.remove(i);
                        }
                    }
                }
                Ok(Val::Arr(a))
            }
            (v @ (Val::Null | Val::Arr(_)), Val::Obj(o)) => {
                let (s, e) = Val::slice_obj(o);
                v.map_range(s..e, opt, f)
            }
            (v, _) => {
                let e = index_err(&v, index);
                opt.fail(v, |_| Exn::from(e))
            }
        }
    }

    fn map_range<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        range: val::Range<&Self>,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        let a = match self {
            Val::Null => Rc::new(Vec::new()),
            Val::Arr(a) => a,
            v => {
                let e = err(format!(
                    "Cannot update field at object index of {}",
                    kind(&v)
                ));
                return opt.fail(v, |_| Exn::from(e));
            }
        };
        let (s, e) = slice_bounds(range.start, range.end, a.len())?;
        let slice = Val::from_iter(a[s..e].iter().cloned());
        let mut a = a;
        match first(f(slice))? {
            Some(Val::Arr(y)) => {
                Rc::make_mut(&mut a).splice(s..e, y.iter().cloned());
                Ok(Val::Arr(a))
            }
            Some(y) => Err(Exn::from(err(format!(
                "A slice of an array can only be assigned another array, not {}",
                kind(&y)
            )))),
            None => {
                Rc::make_mut(&mut a).drain(s..e);
                Ok(Val::Arr(a))
            }
        }
    }

    fn as_bool(&self) -> bool {
        !matches!(self, Val::Null | Val::Bool(false))
    }

    fn into_string(self) -> Self {
        match self {
            Val::Str(_) => self,
            v => Val::from(v.to_string()),
        }
    }

    /// jq 1.6's `jv_identical` (which decides whether a non-path expression
    /// inside `path(…)` left the path intact): the same string, array or object
    /// in memory, a number with the same bits, the same `null`/`true`/`false`.
    fn identical(&self, other: &Self) -> bool {
        match (self, other) {
            (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Num(a), Val::Num(b)) => a.to_bits() == b.to_bits(),
            (Val::Str(a), Val::Str(b)) => Rc::ptr_eq(a, b),
            (Val::Arr(a), Val::Arr(b)) => Rc::ptr_eq(a, b),
            (Val::Obj(a), Val::Obj(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Positions where array `b` occurs in array `a` (jq's `.[[...]]`).
pub fn indices_arr(a: &[Val], b: &[Val]) -> Val {
    if b.is_empty() {
        return Val::from_iter(std::iter::empty());
    }
    let hits = a
        .windows(b.len())
        .enumerate()
        .filter(|(_, w)| *w == b)
        .map(|(i, _)| Val::from(i));
    Val::from_iter(hits)
}

impl jaq_std::ValT for Val {
    fn into_seq<S: FromIterator<Self>>(self) -> Result<S, Self> {
        match self {
            Val::Arr(a) => Ok(a.iter().cloned().collect()),
            v => Err(v),
        }
    }

    fn is_int(&self) -> bool {
        matches!(self, Val::Num(n) if n.fract() == 0.0)
    }

    fn as_isize(&self) -> Option<isize> {
        match self {
            Val::Num(n) if n.fract() == 0.0 && n.abs() < 9.2e18 => Some(*n as isize),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn is_utf8_str(&self) -> bool {
        matches!(self, Val::Str(_))
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Val::Str(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    fn as_sub_str(&self, sub: &[u8]) -> Self {
        Val::from(String::from_utf8_lossy(sub).into_owned())
    }

    fn from_utf8_bytes(b: impl AsRef<[u8]> + Send + 'static) -> Self {
        Val::from(String::from_utf8_lossy(b.as_ref()).into_owned())
    }
}
