//! Native filters with jq 1.6 behaviour: conversions and `@formats` that print
//! numbers like jq 1.6, order-preserving deletion, `input`/`inputs`, and
//! `debug`/`stderr`/`halt_error` writing to the utility's stderr.

use crate::engine::Jq;
use crate::read::{Reader, parse_number};
use crate::val::{Val, desc, kind, trunc};
use crate::write::{Style, to_json, to_string_bytes, write_val};
use jaq_core::box_iter::box_once;
use jaq_core::load::parse::Def;
use jaq_core::native::{Fun, bome, run, v};
use jaq_core::{Error, Exn, RunPtr, ValR};

/// Our definitions (prelude.jq), loaded after jaq's.
pub fn defs() -> impl Iterator<Item = Def<&'static str>> {
    jaq_core::load::parse(include_str!("prelude.jq"), |p| p.defs())
        .unwrap_or_default()
        .into_iter()
}

fn s(b: Vec<u8>) -> Val {
    Val::from(String::from_utf8_lossy(&b).into_owned())
}

fn err(msg: String) -> Error<Val> {
    Error::str(msg)
}

fn str_bytes(v: &Val) -> Option<&[u8]> {
    match v {
        Val::Str(b) => Some(b.as_bytes()),
        _ => None,
    }
}

fn fromjson(v: &Val) -> ValR<Val> {
    let Some(text) = str_bytes(v) else {
        return Err(err(format!("{} ({}) cannot be parsed", kind(v), trunc(v))));
    };
    let mut r = Reader::new(text.to_vec());
    let shown = String::from_utf8_lossy(text);
    match r.next_value() {
        Some(Ok(v)) => match r.next_value() {
            None => Ok(v),
            Some(_) => Err(err(format!(
                "Unexpected extra JSON values (while parsing '{shown}')"
            ))),
        },
        Some(Err(e)) => Err(err(format!("{e} (while parsing '{shown}')"))),
        None => Ok(Val::Null),
    }
}

fn tonumber(v: Val) -> ValR<Val> {
    match &v {
        Val::Num(_) => Ok(v),
        Val::Str(b) => {
            let t = b.to_string();
            match parse_number(t.trim().as_bytes()) {
                Some(f) => Ok(crate::read::num_val(f)),
                None => match fromjson(&v) {
                    Err(e) => Err(e),
                    Ok(_) => Err(err(format!("Cannot parse '{t}' as JSON"))),
                },
            }
        }
        _ => Err(err(format!(
            "{} ({}) cannot be parsed as a number",
            kind(&v),
            trunc(&v)
        ))),
    }
}

fn csv_tsv(v: &Val, tsv: bool) -> ValR<Val> {
    let Val::Arr(a) = v else {
        let what = if tsv { "tsv" } else { "csv" };
        return Err(err(format!(
            "{} ({}) cannot be {what}-formatted, only an array can be",
            kind(v),
            trunc(v)
        )));
    };
    let mut out = Vec::new();
    for (i, x) in a.iter().enumerate() {
        if i > 0 {
            out.push(if tsv { b'\t' } else { b',' });
        }
        match x {
            Val::Null => {}
            Val::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Val::Num(_) => write_val(&mut out, &Style::COMPACT, 0, x),
            Val::Str(b) => {
                if tsv {
                    for &c in b.as_bytes() {
                        match c {
                            b'\t' => out.extend_from_slice(b"\\t"),
                            b'\r' => out.extend_from_slice(b"\\r"),
                            b'\n' => out.extend_from_slice(b"\\n"),
                            b'\\' => out.extend_from_slice(b"\\\\"),
                            c => out.push(c),
                        }
                    }
                } else {
                    out.push(b'"');
                    for &c in b.as_bytes() {
                        if c == b'"' {
                            out.push(b'"');
                        }
                        out.push(c);
                    }
                    out.push(b'"');
                }
            }
            _ => {
                return Err(err(format!(
                    "{} ({}) is not valid in a csv row",
                    kind(x),
                    trunc(x)
                )));
            }
        }
    }
    Ok(s(out))
}

fn html(v: &Val) -> Val {
    let mut out = Vec::new();
    for c in to_string_bytes(v) {
        match c {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'\'' => out.extend_from_slice(b"&apos;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            c => out.push(c),
        }
    }
    s(out)
}

fn uri(v: &Val) -> Val {
    let mut out = Vec::new();
    for c in to_string_bytes(v) {
        if c.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&c) {
            out.push(c);
        } else {
            out.extend_from_slice(format!("%{c:02X}").as_bytes());
        }
    }
    s(out)
}

fn sh_one(out: &mut Vec<u8>, x: &Val) -> Result<(), Error<Val>> {
    match x {
        Val::Str(b) => {
            out.push(b'\'');
            for &c in b.as_bytes() {
                if c == b'\'' {
                    out.extend_from_slice(b"'\\''");
                } else {
                    out.push(c);
                }
            }
            out.push(b'\'');
            Ok(())
        }
        Val::Arr(_) | Val::Obj(_) => Err(err(format!(
            "{} ({}) can not be escaped for shell",
            kind(x),
            trunc(x)
        ))),
        _ => {
            write_val(out, &Style::COMPACT, 0, x);
            Ok(())
        }
    }
}

fn sh(v: &Val) -> ValR<Val> {
    let mut out = Vec::new();
    match v {
        Val::Arr(a) => {
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                sh_one(&mut out, x)?;
            }
        }
        x => sh_one(&mut out, x)?,
    }
    Ok(s(out))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(v: &Val) -> Val {
    let data = to_string_bytes(v);
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    s(out)
}

fn base64d(v: &Val) -> ValR<Val> {
    let data = to_string_bytes(v);
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in &data {
        if c == b'=' {
            break;
        }
        let Some(d) = B64.iter().position(|&x| x == c) else {
            return Err(err(format!(
                "{} ({}) is not valid base64 data",
                kind(v),
                trunc(v)
            )));
        };
        acc = (acc << 6) | d as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(Val::from(String::from_utf8_lossy(&out).into_owned()))
}

const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// `@base32` (jq 1.7): RFC 4648 with `=` padding, of the text of the input.
fn base32(v: &Val) -> Val {
    let data = to_string_bytes(v);
    let mut out = Vec::with_capacity(data.len().div_ceil(5) * 8);
    for chunk in data.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let n = block.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        // Characters that carry data: ceil(bits / 5).
        let used = (chunk.len() * 8).div_ceil(5);
        for k in 0..8 {
            if k < used {
                out.push(B32[((n >> (35 - 5 * k)) & 31) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    Val::from(String::from_utf8_lossy(&out).into_owned())
}

/// `@base32d` (jq 1.7): decodes up to the first `=`; anything outside the
/// alphabet is an error, like `@base64d`.
fn base32d(v: &Val) -> ValR<Val> {
    let data = to_string_bytes(v);
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u64, 0u32);
    for &c in &data {
        if c == b'=' {
            break;
        }
        let Some(d) = B32.iter().position(|&x| x == c) else {
            return Err(err(format!(
                "{} ({}) is not valid base32 data",
                kind(v),
                trunc(v)
            )));
        };
        acc = (acc << 5) | d as u64;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(Val::from(String::from_utf8_lossy(&out).into_owned()))
}

/// Index of an array element for path deletion, jq style (negative from the end).
fn arr_index(i: &Val, len: usize) -> Option<usize> {
    let Val::Num(n) = i else { return None };
    let f = n.floor();
    let idx = if f < 0.0 { len as f64 + f } else { f };
    (idx >= 0.0 && idx < len as f64).then_some(idx as usize)
}

/// The element range of a slice key `{"start": s, "end": e}` on an array of
/// `len` elements, as jq 1.6 clamps it (negative from the end, null = open).
fn slice_range(key: &Val, len: usize) -> Result<(usize, usize), Error<Val>> {
    let Val::Obj(o) = key else {
        return Err(err("Invalid slice".into()));
    };
    let bound = |name: &str, open: f64| -> Result<f64, Error<Val>> {
        match o.get(&Val::from(name.to_string())) {
            None | Some(Val::Null) => Ok(open),
            Some(Val::Num(n)) => Ok(*n),
            Some(_) => Err(err(
                "Start and end indices of an array slice must be numbers".into(),
            )),
        }
    };
    let n = len as f64;
    let clamp = |x: f64| {
        let x = if x < 0.0 { x + n } else { x };
        x.clamp(0.0, n)
    };
    let start = clamp(bound("start", 0.0)?).floor();
    let end = clamp(bound("end", n)?).ceil().max(start);
    Ok((start as usize, end as usize))
}

/// `delpaths(PATHS)` as jq 1.6 does it: the paths sorted, grouped by their
/// first key, and every deletion at one level applied at once against the
/// original container (so `del(.[:2], .[5:])` removes both ranges of the
/// array as it was, and `del(.[0], .[-1])` its two ends).
fn delpaths(v: Val, paths: &Val) -> ValR<Val> {
    let Val::Arr(list) = paths else {
        return Err(err("Paths must be specified as an array".to_string()));
    };
    let mut sorted: Vec<&[Val]> = Vec::with_capacity(list.len());
    for p in list.iter() {
        match p {
            Val::Arr(a) => sorted.push(a),
            other => {
                return Err(err(format!(
                    "Path must be specified as array, not {}",
                    kind(other)
                )));
            }
        }
    }
    sorted.sort();
    sorted.dedup();
    match sorted.first() {
        None => Ok(v),
        Some([]) => Ok(Val::Null),
        Some(_) => delpaths_sorted(v, &sorted, 0),
    }
}

fn delpaths_sorted(mut v: Val, paths: &[&[Val]], depth: usize) -> ValR<Val> {
    let mut whole = Vec::new();
    let mut i = 0;
    while i < paths.len() {
        let key = &paths[i][depth];
        let mut j = i;
        while j < paths.len() && paths[j].get(depth) == Some(key) {
            j += 1;
        }
        if paths[i].len() == depth + 1 {
            // The whole key goes: deeper deletions under it do not matter.
            whole.push(key.clone());
        } else {
            let sub = get_key(&v, key)?;
            if !matches!(sub, Val::Null) {
                let new = delpaths_sorted(sub, &paths[i..j], depth + 1)?;
                v = set_key(v, key, new)?;
            }
        }
        i = j;
    }
    dels(v, &whole)
}

/// `v[key]` for a deletion below `key` (a slice key gives the slice).
fn get_key(v: &Val, key: &Val) -> ValR<Val> {
    match (v, key) {
        (Val::Null, _) => Ok(Val::Null),
        (Val::Obj(o), Val::Str(_)) => Ok(o.get(key).cloned().unwrap_or(Val::Null)),
        (Val::Arr(a), Val::Num(_)) => {
            Ok(arr_index(key, a.len()).map_or(Val::Null, |i| a[i].clone()))
        }
        (Val::Arr(a), Val::Obj(_)) => {
            let (s, e) = slice_range(key, a.len())?;
            Ok(Val::from_iter(a[s..e].to_vec()))
        }
        _ => Err(err(format!("Cannot index {} with {}", kind(v), kind(key)))),
    }
}

/// `v` with `v[key]` replaced by `new` (a slice key splices `new` in).
fn set_key(v: Val, key: &Val, new: Val) -> ValR<Val> {
    match (v, key) {
        (Val::Arr(a), Val::Obj(_)) => {
            let (s, e) = slice_range(key, a.len())?;
            let Val::Arr(items) = new else {
                return Err(err(
                    "A slice of an array can only be assigned another array".into(),
                ));
            };
            let mut a = (*a).clone();
            a.splice(s..e, items.iter().cloned());
            Ok(Val::from_iter(a))
        }
        (v, _) => setpath(v, std::slice::from_ref(key), new),
    }
}

/// Deletes `keys` from `t` all at once (jq's `jv_dels`): for an array, every
/// index and slice is resolved against its original length.
fn dels(t: Val, keys: &[Val]) -> ValR<Val> {
    if keys.is_empty() {
        return Ok(t);
    }
    match t {
        Val::Null => Ok(Val::Null),
        Val::Arr(a) => {
            let len = a.len();
            let mut gone = vec![false; len];
            for k in keys {
                match k {
                    Val::Num(n) => {
                        let i = n.trunc();
                        let i = if i < 0.0 { len as f64 + i } else { i };
                        if i >= 0.0 && i < len as f64 {
                            gone[i as usize] = true;
                        }
                    }
                    Val::Obj(_) => {
                        let (s, e) = slice_range(k, len)?;
                        gone[s..e].iter_mut().for_each(|g| *g = true);
                    }
                    _ => {
                        return Err(err(format!("Cannot delete field at index of {}", kind(k))));
                    }
                }
            }
            Ok(Val::from_iter(
                a.iter()
                    .zip(gone)
                    .filter(|(_, g)| !g)
                    .map(|(x, _)| x.clone()),
            ))
        }
        Val::Obj(o) => {
            let mut m = (*o).clone();
            for k in keys {
                let Val::Str(_) = k else {
                    return Err(err(format!(
                        "Cannot delete field at object index of {}",
                        kind(k)
                    )));
                };
                m.shift_remove(k);
            }
            Ok(Val::obj(m))
        }
        other => Err(err(format!(
            "Cannot delete field at index of {}",
            kind(&other)
        ))),
    }
}

/// Deletes `path` from `v`, keeping the order of what remains.
fn delpath(v: Val, path: &[Val]) -> ValR<Val> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(Val::Null);
    };
    match v {
        Val::Null => Ok(Val::Null),
        Val::Obj(o) => {
            let Val::Str(_) = first else {
                return Err(err(format!(
                    "Cannot delete field at object index of {}",
                    kind(first)
                )));
            };
            let mut m = (*o).clone();
            if rest.is_empty() {
                m.shift_remove(first);
            } else if let Some(x) = m.get_mut(first) {
                *x = delpath(std::mem::take(x), rest)?;
            }
            Ok(Val::obj(m))
        }
        Val::Arr(a) if matches!(first, Val::Obj(_)) => {
            // A slice: `del(.[2:4])`, `del(.[-2:])`.
            let mut a = (*a).clone();
            let (start, end) = slice_range(first, a.len())?;
            if rest.is_empty() {
                a.drain(start..end);
            } else {
                let part = Val::from_iter(a[start..end].to_vec());
                let Val::Arr(kept) = delpath(part, rest)? else {
                    return Err(err(
                        "A slice of an array can only be assigned another array".into(),
                    ));
                };
                a.splice(start..end, kept.iter().cloned());
            }
            Ok(Val::from_iter(a))
        }
        Val::Arr(a) => {
            if !matches!(first, Val::Num(_)) {
                return Err(err(format!(
                    "Cannot delete field at index of {}",
                    kind(first)
                )));
            }
            let mut a = (*a).clone();
            if let Some(i) = arr_index(first, a.len()) {
                if rest.is_empty() {
                    a.remove(i);
                } else {
                    a[i] = delpath(std::mem::take(&mut a[i]), rest)?;
                }
            }
            Ok(Val::from_iter(a))
        }
        other => Err(err(format!(
            "Cannot delete field at index of {}",
            kind(&other)
        ))),
    }
}

/// Sets `path` in `v` to `x`, creating objects and arrays through nulls.
fn setpath(v: Val, path: &[Val], x: Val) -> ValR<Val> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(x);
    };
    match (v, first) {
        (Val::Null, Val::Str(_)) => setpath(Val::obj(crate::val::Map::default()), path, x),
        (Val::Null, Val::Num(_)) => setpath(Val::from_iter(Vec::new()), path, x),
        (Val::Obj(o), Val::Str(_)) => {
            let mut m = (*o).clone();
            let old = m.get(first).cloned().unwrap_or(Val::Null);
            let new = setpath(old, rest, x)?;
            m.insert(first.clone(), new);
            Ok(Val::obj(m))
        }
        (Val::Arr(a), Val::Num(n)) => {
            let mut a = (*a).clone();
            let f = n.floor();
            let idx = if f < 0.0 { a.len() as f64 + f } else { f };
            if idx < 0.0 {
                return Err(err("Out of bounds negative array index".to_string()));
            }
            if idx > crate::val::MAX_ARRAY_INDEX as f64 {
                return Err(err(crate::val::TOO_LARGE.to_string()));
            }
            let i = idx as usize;
            if i >= a.len() {
                a.resize(i + 1, Val::Null);
            }
            a[i] = setpath(std::mem::take(&mut a[i]), rest, x)?;
            Ok(Val::from_iter(a))
        }
        (v, k) => match (&v, str_bytes(k)) {
            (Val::Obj(_), None) => Err(err(format!("Cannot index object with {}", kind(k)))),
            (_, Some(k)) => Err(err(format!(
                "Cannot index {} with \"{}\"",
                kind(&v),
                String::from_utf8_lossy(k)
            ))),
            (_, None) => Err(err(format!("Cannot index {} with {}", kind(&v), kind(k)))),
        },
    }
}

fn num_pred(v: &Val, p: fn(f64) -> bool) -> ValR<Val> {
    match v {
        Val::Num(n) => Ok(Val::Bool(p(*n))),
        // jq 1.6 answers false for anything that is not a number.
        _ => Ok(Val::Bool(false)),
    }
}

/// `utf8bytelength`, with jq 1.6's error for anything but a string.
fn utf8bytelength(v: &Val) -> ValR<Val> {
    match v {
        Val::Str(s) => Ok(Val::from(s.len())),
        _ => Err(err(format!(
            "{} only strings have UTF-8 byte length",
            desc(v)
        ))),
    }
}

fn length(v: &Val) -> ValR<Val> {
    Ok(match v {
        Val::Null => Val::Num(0.0),
        Val::Bool(_) => return Err(err(format!("{} has no length", desc(v)))),
        Val::Num(n) => Val::Num(n.abs()),
        Val::Str(s) => Val::from(s.chars().count()),
        Val::Arr(a) => Val::from(a.len()),
        Val::Obj(o) => Val::from(o.len()),
    })
}

fn contains_top(a: &Val, b: &Val) -> Result<bool, Error<Val>> {
    if kind(a) != kind(b) {
        return Err(err(format!(
            "{} and {} cannot have their containment checked",
            desc(a),
            desc(b)
        )));
    }
    contains(a, b)
}

fn contains(a: &Val, b: &Val) -> Result<bool, Error<Val>> {
    Ok(match (a, b) {
        (Val::Obj(x), Val::Obj(y)) => {
            for (k, vy) in y.iter() {
                match x.get(k) {
                    Some(vx) if contains(vx, vy)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        (Val::Arr(x), Val::Arr(y)) => {
            for vy in y.iter() {
                let mut found = false;
                for vx in x.iter() {
                    if contains(vx, vy)? {
                        found = true;
                        break;
                    }
                }
                if !found {
                    return Ok(false);
                }
            }
            true
        }
        (Val::Str(x), Val::Str(y)) => x.contains(&**y),
        _ => kind(a) == kind(b) && a == b,
    })
}

fn has(v: &Val, k: &Val) -> ValR<Val> {
    match (v, k) {
        (Val::Obj(o), Val::Str(_)) => Ok(Val::Bool(o.contains_key(k))),
        (Val::Arr(a), Val::Num(n)) => Ok(Val::Bool(*n >= 0.0 && *n < a.len() as f64)),
        _ => Err(err(format!(
            "Cannot check whether {} has a {} key",
            kind(v),
            kind(k)
        ))),
    }
}

/// jq 1.6 `indices`: byte offsets in strings, element positions in arrays.
fn indices(v: &Val, x: &Val) -> ValR<Val> {
    match (v, x) {
        (Val::Null, _) | (_, Val::Null) => Ok(Val::Null),
        (Val::Str(s), Val::Str(t)) => {
            if t.is_empty() {
                return Ok(Val::Null);
            }
            let (s, t) = (s.as_bytes(), t.as_bytes());
            let hits = (0..s.len().saturating_sub(t.len() - 1))
                .filter(|&i| s[i..].starts_with(t))
                .map(Val::from);
            Ok(Val::from_iter(hits))
        }
        (Val::Arr(a), Val::Arr(b)) => Ok(crate::val::indices_arr(a, b)),
        (Val::Arr(a), x) => Ok(crate::val::indices_arr(a, std::slice::from_ref(x))),
        _ => Err(err(format!("Cannot index {} with {}", kind(v), kind(x)))),
    }
}

fn bsearch(v: &Val, x: &Val) -> ValR<Val> {
    match v {
        Val::Arr(a) => Ok(Val::from(match a.binary_search(x) {
            Ok(i) => i as isize,
            Err(i) => -1 - i as isize,
        })),
        _ => Err(err(format!("{} cannot be searched from", desc(v)))),
    }
}

/// jq 1.6 `range($from; $upto; $by)`, polling for cancellation.
fn range<'a>(
    env: &'a crate::engine::Env<'a>,
    from: Val,
    upto: Val,
    by: Val,
) -> jaq_core::ValXs<'a, Val> {
    let (Val::Num(x), Val::Num(to), Val::Num(by)) = (from, upto, by) else {
        return bome(Err(err("Range bounds must be numeric".to_string())));
    };
    let mut x = x;
    Box::new(std::iter::from_fn(move || {
        if env.tick() {
            return Some(Err(Exn::halt(130)));
        }
        let more = if by > 0.0 {
            x < to
        } else if by < 0.0 {
            x > to
        } else {
            false
        };
        more.then(|| {
            let v = Val::Num(x);
            x += by;
            Ok(v)
        })
    }))
}

/// A native filter before wrapping: name, parameters, implementation.
type NativeDef = (&'static str, Box<[jaq_core::Bind]>, RunPtr<Jq>);

/// Native filters of this crate.
pub fn funs() -> impl Iterator<Item = Fun<Jq>> {
    let fs: [NativeDef; 19] = [
        ("_jq_tostring", v(0), |cv| {
            bome(Ok(s(to_string_bytes(&cv.1))))
        }),
        ("_jq_tojson", v(0), |cv| bome(Ok(s(to_json(&cv.1))))),
        ("_jq_fromjson", v(0), |cv| bome(fromjson(&cv.1))),
        ("_jq_tonumber", v(0), |cv| bome(tonumber(cv.1))),
        ("_jq_csv", v(0), |cv| bome(csv_tsv(&cv.1, false))),
        ("_jq_tsv", v(0), |cv| bome(csv_tsv(&cv.1, true))),
        ("_jq_html", v(0), |cv| bome(Ok(html(&cv.1)))),
        ("_jq_uri", v(0), |cv| bome(Ok(uri(&cv.1)))),
        ("_jq_sh", v(0), |cv| bome(sh(&cv.1))),
        ("_jq_base64", v(0), |cv| bome(Ok(base64(&cv.1)))),
        ("_jq_base64d", v(0), |cv| bome(base64d(&cv.1))),
        ("_jq_base32", v(0), |cv| bome(Ok(base32(&cv.1)))),
        ("_jq_base32d", v(0), |cv| bome(base32d(&cv.1))),
        ("_jq_delpaths", v(1), |mut cv| {
            let p = cv.0.pop_var();
            bome(delpaths(cv.1, &p))
        }),
        ("_jq_delpath", v(1), |mut cv| {
            let p = cv.0.pop_var();
            let r = match &p {
                Val::Arr(a) => delpath(cv.1, a),
                _ => Err(err("Path must be specified as an array".to_string())),
            };
            bome(r)
        }),
        ("input", v(0), |cv| {
            let env = *cv.0.data();
            let next = env.inputs.borrow_mut().next_input();
            bome(match next {
                Some(Ok(v)) => Ok(v),
                Some(Err(e)) => Err(err(e)),
                None => Err(err("No more inputs".to_string())),
            })
        }),
        ("inputs", v(0), |cv| {
            let env = *cv.0.data();
            Box::new(std::iter::from_fn(move || {
                let next = env.inputs.borrow_mut().next_input()?;
                Some(next.map_err(|e| Exn::from(err(e))))
            }))
        }),
        ("_jq_debug", v(0), |cv| {
            let env = *cv.0.data();
            let mut buf = env.stderr.borrow_mut();
            buf.extend_from_slice(b"[\"DEBUG:\",");
            write_val(&mut buf, &Style::COMPACT, 0, &cv.1);
            buf.extend_from_slice(b"]\n");
            box_once(Ok(cv.1))
        }),
        ("_jq_stderr", v(0), |cv| {
            let env = *cv.0.data();
            write_val(&mut env.stderr.borrow_mut(), &Style::COMPACT, 0, &cv.1);
            box_once(Ok(cv.1))
        }),
    ];
    let halt: NativeDef = ("_jq_halt_msg", v(0), |cv| {
        let env = *cv.0.data();
        let mut buf = env.stderr.borrow_mut();
        match str_bytes(&cv.1) {
            Some(b) => buf.extend_from_slice(b),
            None => {
                write_val(&mut buf, &Style::COMPACT, 0, &cv.1);
                buf.push(b'\n');
            }
        }
        Box::new(std::iter::empty())
    });
    let set: NativeDef = ("_jq_setpath", v(2), |mut cv| {
        let x = cv.0.pop_var();
        let p = cv.0.pop_var();
        bome(match &p {
            Val::Arr(a) => setpath(cv.1, a, x),
            _ => Err(err("Path must be specified as an array".to_string())),
        })
    });
    let more: [NativeDef; 19] = [
        ("_jq_tick", v(0), |cv| {
            let env = *cv.0.data();
            if env.tick() {
                box_once(Err(Exn::halt(130)))
            } else {
                box_once(Ok(cv.1))
            }
        }),
        ("_jq_range", v(3), |mut cv| {
            let by = cv.0.pop_var();
            let upto = cv.0.pop_var();
            let from = cv.0.pop_var();
            let env = *cv.0.data();
            range(env, from, upto, by)
        }),
        ("get_search_list", v(0), |cv| {
            let env = *cv.0.data();
            bome(Ok(env.modules.search_list()))
        }),
        ("modulemeta", v(0), |cv| {
            let env = *cv.0.data();
            bome(env.modules.modulemeta(&cv.1).map_err(err))
        }),
        ("input_filename", v(0), |cv| {
            let env = *cv.0.data();
            let name = env.inputs.borrow().filename().map(str::to_string);
            bome(Ok(name.map_or(Val::Null, Val::from)))
        }),
        ("_jq_input_line", v(0), |cv| {
            let env = *cv.0.data();
            let line = env.inputs.borrow().line();
            bome(Ok(Val::from(line)))
        }),
        ("_jq_nan", v(0), |_| bome(Ok(Val::Num(f64::NAN)))),
        ("_jq_infinite", v(0), |_| bome(Ok(Val::Num(f64::INFINITY)))),
        ("_jq_isnan", v(0), |cv| bome(num_pred(&cv.1, f64::is_nan))),
        ("_jq_isinfinite", v(0), |cv| {
            bome(num_pred(&cv.1, f64::is_infinite))
        }),
        ("_jq_isnormal", v(0), |cv| {
            bome(num_pred(&cv.1, f64::is_normal))
        }),
        ("tojson", v(0), |cv| bome(Ok(s(to_json(&cv.1))))),
        ("fromjson", v(0), |cv| bome(fromjson(&cv.1))),
        ("length", v(0), |cv| bome(length(&cv.1))),
        ("_jq_utf8bytelength", v(0), |cv| bome(utf8bytelength(&cv.1))),
        ("contains", v(1), |mut cv| {
            let y = cv.0.pop_var();
            bome(contains_top(&cv.1, &y).map(Val::Bool))
        }),
        ("has", v(1), |mut cv| {
            let k = cv.0.pop_var();
            bome(has(&cv.1, &k))
        }),
        ("indices", v(1), |mut cv| {
            let x = cv.0.pop_var();
            bome(indices(&cv.1, &x))
        }),
        ("bsearch", v(1), |mut cv| {
            let x = cv.0.pop_var();
            bome(bsearch(&cv.1, &x))
        }),
    ];
    fs.into_iter().chain([halt, set]).chain(more).map(run::<Jq>)
}
