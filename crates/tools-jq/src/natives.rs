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

fn err(msg: impl Into<String>) -> Error<Val> {
    Error::str(msg.into())
}

fn str_bytes(v: &Val) -> Option<&[u8]> {
    match v {
        Val::Str(b) => Some(b.as_bytes()),
        _ => None,
    }
}

/// jq's `type_error`: `kind (value) msg`.
fn type_error(v: &Val, msg: &str) -> Error<Val> {
    err(format!("{} {msg}", desc(v)))
}

/// jq's `type_error2`: `kind (value) and kind (value) msg`.
fn type_error2(a: &Val, b: &Val, msg: &str) -> Error<Val> {
    err(format!("{} and {} {msg}", desc(a), desc(b)))
}

fn fromjson(v: &Val) -> ValR<Val> {
    let Some(text) = str_bytes(v) else {
        return Err(type_error(v, "only strings can be parsed"));
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
        None => Err(err(format!(
            "Expected JSON value (while parsing '{shown}')"
        ))),
    }
}

/// jq 1.6's `tonumber`: a string is parsed as JSON; a parse error is the
/// error, any other value than a number is not a number.
fn tonumber(v: Val) -> ValR<Val> {
    match &v {
        Val::Num(_) => Ok(v),
        Val::Str(b) => match parse_number(b.trim_matches([' ', '\t', '\n', '\r']).as_bytes()) {
            Some(f) => Ok(crate::read::num_val(f)),
            None => match fromjson(&v)? {
                n @ Val::Num(_) => Ok(n),
                _ => Err(type_error(&v, "cannot be parsed as a number")),
            },
        },
        _ => Err(type_error(&v, "cannot be parsed as a number")),
    }
}

fn csv_tsv(v: &Val, tsv: bool) -> ValR<Val> {
    let Val::Arr(a) = v else {
        let what = if tsv { "tsv" } else { "csv" };
        return Err(type_error(
            v,
            &format!("cannot be {what}-formatted, only array"),
        ));
    };
    let mut out = Vec::new();
    for (i, x) in a.iter().enumerate() {
        if i > 0 {
            out.push(if tsv { b'\t' } else { b',' });
        }
        match x {
            Val::Null => {}
            // jq 1.6 leaves NaN out, as it does null.
            Val::Num(n) if n.is_nan() => {}
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

/// Text of bytes that may not be UTF-8, each bad sequence one U+FFFD as jq
/// 1.6's `jvp_utf8_next` reads it: a sequence cut short by a byte that does
/// not continue it ends before that byte; one cut short by the end of the
/// data takes the rest.
fn jq_lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let first = bytes[i];
        let len = match first {
            0x00..=0x7f => 1,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            // A continuation byte out of place, or a byte never used.
            _ => 0,
        };
        if len == 1 {
            out.push(char::from(first));
            i += 1;
            continue;
        }
        if len == 0 {
            out.push('\u{FFFD}');
            i += 1;
            continue;
        }
        if i + len > bytes.len() {
            out.push('\u{FFFD}');
            break;
        }
        let mut used = len;
        for k in 1..len {
            if bytes[i + k] & 0xc0 != 0x80 {
                used = k;
                break;
            }
        }
        match std::str::from_utf8(&bytes[i..i + used]) {
            Ok(s) if used == len => out.push_str(s),
            _ => out.push('\u{FFFD}'),
        }
        i += used;
    }
    out
}

/// `@base64d` as jq 1.6 decodes: of the input's text, up to the first `=`;
/// a lone trailing character is an error, and the decoded bytes are read as
/// UTF-8 with jq's replacement of bad sequences.
fn base64d(v: &Val) -> ValR<Val> {
    let text = match v {
        Val::Str(_) => v.clone(),
        _ => s(to_string_bytes(v)),
    };
    let data = to_string_bytes(&text);
    let mut out = Vec::new();
    let (mut code, mut n) = (0u32, 0);
    for &c in data.iter().take_while(|&&c| c != b'=') {
        let Some(d) = B64.iter().position(|&x| x == c) else {
            return Err(type_error(&text, "is not valid base64 data"));
        };
        code = (code << 6) | d as u32;
        n += 1;
        if n == 4 {
            out.extend_from_slice(&[(code >> 16) as u8, (code >> 8) as u8, code as u8]);
            (code, n) = (0, 0);
        }
    }
    match n {
        3 => out.extend_from_slice(&[(code >> 10) as u8, (code >> 2) as u8]),
        2 => out.push((code >> 4) as u8),
        1 => return Err(type_error(&text, "trailing base64 byte found")),
        _ => {}
    }
    Ok(Val::from(jq_lossy(&out)))
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
        return Err(err("Invalid slice"));
    };
    let bound = |name: &str, open: f64| -> Result<f64, Error<Val>> {
        match o.get(&Val::from(name.to_string())) {
            None | Some(Val::Null) => Ok(open),
            Some(Val::Num(n)) => Ok(*n),
            Some(_) => Err(err(
                "Start and end indices of an array slice must be numbers",
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
        _ => Err(crate::val::index_err(v, key)),
    }
}

/// `v` with `v[key]` replaced by `new` (a slice key splices `new` in).
fn set_key(v: Val, key: &Val, new: Val) -> ValR<Val> {
    match (v, key) {
        (Val::Arr(a), Val::Obj(_)) => {
            let (s, e) = slice_range(key, a.len())?;
            let Val::Arr(items) = new else {
                return Err(err(
                    "A slice of an array can only be assigned another array",
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
                        return Err(err(format!("Cannot delete {} element of array", kind(k))));
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
                    return Err(err(format!("Cannot delete {} field of object", kind(k))));
                };
                m.shift_remove(k);
            }
            Ok(Val::obj(m))
        }
        other => Err(err(format!("Cannot delete fields from {}", kind(&other)))),
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
        (v, k) => Err(crate::val::index_err(&v, k)),
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

/// jq 1.6's `jv_has`: anything of null is absent; an array index is
/// truncated toward zero (C's `(int)`).
fn has(v: &Val, k: &Val) -> ValR<Val> {
    match (v, k) {
        (Val::Null, _) => Ok(Val::Bool(false)),
        (Val::Obj(o), Val::Str(_)) => Ok(Val::Bool(o.contains_key(k))),
        (Val::Arr(a), Val::Num(n)) => {
            let i = *n as i32;
            Ok(Val::Bool(i >= 0 && (i as usize) < a.len()))
        }
        _ => Err(err(format!(
            "Cannot check whether {} has a {} key",
            kind(v),
            kind(k)
        ))),
    }
}

/// jq 1.6's `_strindices`: byte offsets of the non-overlapping occurrences
/// of `t` in `s` (jq loops forever on an empty `t`; here that is `null`).
fn strindices(s: &Val, t: &Val) -> ValR<Val> {
    let (Val::Str(s), Val::Str(t)) = (s, t) else {
        return Err(type_error2(s, t, "cannot be searched"));
    };
    if t.is_empty() {
        return Ok(Val::Null);
    }
    let (s, t) = (s.as_bytes(), t.as_bytes());
    let mut hits = Vec::new();
    let mut i = 0;
    while i + t.len() <= s.len() {
        if s[i..].starts_with(t) {
            hits.push(Val::from(i));
            i += t.len();
        } else {
            i += 1;
        }
    }
    Ok(Val::from_iter(hits))
}

/// jq 1.6 `range($from; $upto; $by)` on numbers, polling for cancellation:
/// upwards while below `$upto` when `$by > 0`, downwards while above it when
/// `$by < 0`, in jq's order of numbers (NaN below all: a NaN step counts as
/// negative).
fn range<'a>(
    env: &'a crate::engine::Env<'a>,
    from: Val,
    upto: Val,
    by: Val,
) -> jaq_core::ValXs<'a, Val> {
    use std::cmp::Ordering::{Greater, Less};
    let (Val::Num(x), Val::Num(to), Val::Num(by)) = (from, upto, by) else {
        return bome(Err(err("Range bounds must be numeric".to_string())));
    };
    let cmp = |a: f64, b: f64| Val::Num(a).cmp(&Val::Num(b));
    let (up, down) = (cmp(by, 0.0) == Greater, cmp(by, 0.0) == Less);
    let mut x = x;
    Box::new(std::iter::from_fn(move || {
        if env.tick() {
            return Some(Err(Exn::halt(130)));
        }
        let more = (up && cmp(x, to) == Less) || (down && cmp(x, to) == Greater);
        more.then(|| {
            let v = Val::Num(x);
            x += by;
            Ok(v)
        })
    }))
}

/// `keys` (sorted) and `keys_unsorted` of an object or array.
fn keys(v: &Val, sorted: bool) -> ValR<Val> {
    match v {
        Val::Obj(o) => {
            let mut ks: Vec<Val> = o.keys().cloned().collect();
            if sorted {
                ks.sort();
            }
            Ok(Val::from_iter(ks))
        }
        Val::Arr(a) => Ok(Val::from_iter((0..a.len()).map(Val::from))),
        _ => Err(type_error(v, "has no keys")),
    }
}

/// The positions of `keys` in sorted order, equal keys in their original
/// order (jq's `jv_sort` breaks ties by position).
fn sorted_positions(keys: &[Val]) -> Vec<usize> {
    let mut pos: Vec<usize> = (0..keys.len()).collect();
    pos.sort_by(|&i, &j| keys[i].cmp(&keys[j]));
    pos
}

fn sort(v: &Val) -> ValR<Val> {
    match v {
        Val::Arr(a) => {
            let mut a = (**a).clone();
            a.sort();
            Ok(Val::from_iter(a))
        }
        _ => Err(type_error(v, "cannot be sorted, as it is not an array")),
    }
}

/// The input and its keys (`map([f])`) when both are arrays of one length
/// (`_sort_by_impl`, `_group_by_impl`).
fn by_keys<'v>(v: &'v Val, keys: &'v Val) -> Result<(&'v [Val], &'v [Val]), Error<Val>> {
    match (v, keys) {
        (Val::Arr(a), Val::Arr(k)) if a.len() == k.len() => Ok((a, k)),
        _ => Err(type_error2(
            v,
            keys,
            "cannot be sorted, as they are not both arrays",
        )),
    }
}

fn sort_by_impl(v: &Val, keys: &Val) -> ValR<Val> {
    let (a, k) = by_keys(v, keys)?;
    Ok(Val::from_iter(
        sorted_positions(k).into_iter().map(|i| a[i].clone()),
    ))
}

fn group_by_impl(v: &Val, keys: &Val) -> ValR<Val> {
    let (a, k) = by_keys(v, keys)?;
    let mut groups: Vec<Val> = Vec::new();
    let mut group: Vec<Val> = Vec::new();
    let mut last: Option<&Val> = None;
    for i in sorted_positions(k) {
        if last.is_some_and(|l| *l != k[i]) {
            groups.push(Val::from_iter(std::mem::take(&mut group)));
        }
        last = Some(&k[i]);
        group.push(a[i].clone());
    }
    if !group.is_empty() {
        groups.push(Val::from_iter(group));
    }
    Ok(Val::from_iter(groups))
}

/// jq's `minmax_by`: the first smallest, or the last largest, by `keys`.
fn minmax_by(v: &Val, keys: &Val, is_min: bool) -> ValR<Val> {
    let (Val::Arr(a), Val::Arr(k)) = (v, keys) else {
        return Err(type_error2(v, keys, "cannot be iterated over"));
    };
    if a.len() != k.len() {
        return Err(type_error2(v, keys, "have wrong length"));
    }
    let mut best = 0;
    for i in 1..a.len() {
        if (k[i] < k[best]) == is_min {
            best = i;
        }
    }
    Ok(a.get(best).cloned().unwrap_or(Val::Null))
}

fn explode(v: &Val) -> ValR<Val> {
    match v {
        Val::Str(s) => Ok(Val::from_iter(s.chars().map(|c| Val::from(c as usize)))),
        _ => Err(err("explode input must be a string")),
    }
}

/// jq 1.6's `implode`: code points past U+10FFFF become U+FFFD. (jq aborts
/// on an element that is not a number; that is an error here, in jq 1.7's
/// words.)
fn implode(v: &Val) -> ValR<Val> {
    let Val::Arr(a) = v else {
        return Err(err("implode input must be an array"));
    };
    let mut out = String::with_capacity(a.len());
    for x in a.iter() {
        let Val::Num(n) = x else {
            return Err(err("Unicode codepoint must be numeric"));
        };
        let c = char::from_u32(*n as i32 as u32).unwrap_or('\u{FFFD}');
        out.push(c);
    }
    Ok(Val::from(out))
}

/// `ascii_downcase`/`ascii_upcase` (jq 1.6 defines them over `explode`, whence
/// the error).
fn ascii_case(v: &Val, upper: bool) -> ValR<Val> {
    match v {
        Val::Str(s) if upper => Ok(Val::from(s.to_ascii_uppercase())),
        Val::Str(s) => Ok(Val::from(s.to_ascii_lowercase())),
        _ => Err(err("explode input must be a string")),
    }
}

/// The checks jq 1.6's `_match_impl` makes before matching, in its order;
/// the modifiers as a string for jaq's regex functions.
fn regex_mode(input: &Val, re: &Val, mode: &Val) -> ValR<Val> {
    if !matches!(input, Val::Str(_)) {
        return Err(type_error(
            input,
            "cannot be matched, as it is not a string",
        ));
    }
    if !matches!(re, Val::Str(_)) {
        return Err(type_error(re, "is not a string"));
    }
    match mode {
        Val::Null => Ok(Val::from(String::new())),
        Val::Str(m) if m.chars().all(|c| "gilmnpsx".contains(c)) => Ok(mode.clone()),
        Val::Str(m) => Err(err(format!("{m} is not a valid modifier string"))),
        _ => Err(type_error(mode, "is not a string")),
    }
}

/// jaq's `matches` output (per match: the whole match, then each capture
/// that took part) as jq 1.6's match objects: a capture without a name has
/// `"name": null`, a zero-width match no captures, and a global search stops
/// at the end of a non-empty string (no empty match there after the first).
fn match_objects(found: &Val, s: &Val, mode: &Val) -> ValR<Val> {
    let Val::Arr(found) = found else {
        return Ok(Val::from_iter(std::iter::empty()));
    };
    let chars = match s {
        Val::Str(s) => s.chars().count(),
        _ => 0,
    };
    let global = matches!(mode, Val::Str(m) if m.contains('g'));
    let key = |k: &str| Val::from(k.to_string());
    let mut out = Vec::new();
    for (n, m) in found.iter().enumerate() {
        let Val::Arr(parts) = m else { continue };
        let Some(Val::Obj(whole)) = parts.first() else {
            continue;
        };
        let num = |o: &crate::val::Map, k: &str| match o.get(&key(k)) {
            Some(Val::Num(x)) => *x,
            _ => 0.0,
        };
        let (offset, length) = (num(whole, "offset"), num(whole, "length"));
        if global && n > 0 && chars > 0 && length == 0.0 && offset == chars as f64 {
            continue;
        }
        let captures = if length == 0.0 {
            Vec::new()
        } else {
            parts[1..]
                .iter()
                .map(|c| match c {
                    Val::Obj(o) if !o.contains_key(&key("name")) => {
                        let mut o = (**o).clone();
                        o.insert(key("name"), Val::Null);
                        Val::obj(o)
                    }
                    c => c.clone(),
                })
                .collect()
        };
        let mut obj = crate::val::Map::default();
        for k in ["offset", "length", "string"] {
            obj.insert(key(k), whole.get(&key(k)).cloned().unwrap_or(Val::Null));
        }
        obj.insert(key("captures"), Val::from_iter(captures));
        out.push(Val::obj(obj));
    }
    Ok(Val::from_iter(out))
}

/// The text of characters `from..to` of `s`.
fn char_slice(s: &str, from: usize, to: usize) -> Val {
    let mut idx = s.char_indices().map(|(i, _)| i).chain([s.len()]);
    let start = idx.nth(from).unwrap_or(s.len());
    let end = if to > from {
        idx.nth(to - from - 1).unwrap_or(s.len())
    } else {
        start
    };
    Val::from(s[start..end.max(start)].to_string())
}

/// The object of named captures a replacement sees (jq 1.6's `sub`).
fn capture_object(m: &Val) -> Val {
    let mut obj = crate::val::Map::default();
    let caps = match m {
        Val::Obj(o) => o.get(&Val::from("captures".to_string())).cloned(),
        _ => None,
    };
    if let Some(Val::Arr(caps)) = caps {
        for c in caps.iter() {
            if let Val::Obj(c) = c
                && let Some(name @ Val::Str(_)) = c.get(&Val::from("name".to_string()))
            {
                let string = c.get(&Val::from("string".to_string())).cloned();
                obj.insert(name.clone(), string.unwrap_or(Val::Null));
            }
        }
    }
    Val::obj(obj)
}

/// `sub`/`gsub` over the matches jq 1.6 finds: the text before each match
/// plus its replacement, then the rest. jq builds `$in[0:offset] + s +
/// (rest)`, evaluating the rest first, so the last match's replacements are
/// computed first and vary slowest; each replacement joins its text with
/// jq's `+` (null adds nothing, a non-string is an error).
fn substitute<'a>(
    input: &Val,
    run: impl Fn(Val) -> Result<Vec<Val>, jaq_core::Exn<'a, Val>>,
) -> Result<Vec<Val>, jaq_core::Exn<'a, Val>> {
    let (Val::Arr(pair), num) = (input, |m: &Val, k: &str| match m {
        Val::Obj(o) => match o.get(&Val::from(k.to_string())) {
            Some(Val::Num(n)) => *n as usize,
            _ => 0,
        },
        _ => 0,
    }) else {
        return Ok(Vec::new());
    };
    let (Some(Val::Str(s)), Some(Val::Arr(ms))) = (pair.first(), pair.get(1)) else {
        return Ok(Vec::new());
    };
    let end = |m: &Val| num(m, "offset") + num(m, "length");
    let Some(last) = ms.last() else {
        return Ok(vec![Val::Str(s.clone())]);
    };
    let total = s.chars().count();
    // Each combination: the pieces from the end of the text backwards.
    let mut combos: Vec<Vec<Val>> = vec![vec![char_slice(s, end(last), total)]];
    for j in (0..ms.len()).rev() {
        let from = if j == 0 { 0 } else { end(&ms[j - 1]) };
        let seg = char_slice(s, from, num(&ms[j], "offset"));
        let reps = run(capture_object(&ms[j]))?;
        let mut next = Vec::with_capacity(combos.len() * reps.len());
        for sfx in &combos {
            for r in &reps {
                let piece = (seg.clone() + r.clone()).map_err(jaq_core::Exn::from)?;
                let mut c = sfx.clone();
                c.push(piece);
                next.push(c);
            }
        }
        combos = next;
    }
    Ok(combos
        .into_iter()
        .map(|pieces| {
            let mut text = String::new();
            for p in pieces.iter().rev() {
                if let Val::Str(p) = p {
                    text.push_str(p);
                }
            }
            Val::from(text)
        })
        .collect())
}

/// `format($f)` (and `@f`): jq 1.6's formats, and jq 1.7's `base32`/`base32d`.
fn format(v: &Val, f: &Val) -> ValR<Val> {
    let Val::Str(name) = f else {
        return Err(type_error(f, "is not a valid format"));
    };
    match &**name {
        "text" => Ok(s(to_string_bytes(v))),
        "json" => Ok(s(to_json(v))),
        "csv" => csv_tsv(v, false),
        "tsv" => csv_tsv(v, true),
        "html" => Ok(html(v)),
        "uri" => Ok(uri(v)),
        "sh" => sh(v),
        "base64" => Ok(base64(v)),
        "base64d" => base64d(v),
        "base32" => Ok(base32(v)),
        "base32d" => base32d(v),
        _ => Err(err(format!("{name} is not a valid format"))),
    }
}

/// `halt_error($code)`: the input on stderr (a string as it is, null not at
/// all, anything else as JSON and a newline), then exit with `$code`.
fn halt_error<'a>(env: &crate::engine::Env<'_>, v: &Val, code: &Val) -> jaq_core::ValXs<'a, Val> {
    let Val::Num(code) = code else {
        return bome(Err(type_error(v, "halt_error/1: number required")));
    };
    let mut buf = env.stderr.borrow_mut();
    match v {
        Val::Str(b) => buf.extend_from_slice(b.as_bytes()),
        Val::Null => {}
        _ => {
            write_val(&mut buf, &Style::COMPACT, 0, v);
            buf.push(b'\n');
        }
    }
    box_once(Err(Exn::halt(*code as i32)))
}

/// jq 1.6's `builtins`, in its order.
const BUILTINS: &[&str] = &[
    "input_line_number/0",
    "input_filename/0",
    "now/0",
    "localtime/0",
    "gmtime/0",
    "mktime/0",
    "strflocaltime/1",
    "strftime/1",
    "strptime/1",
    "stderr/0",
    "debug/0",
    "modulemeta/0",
    "get_jq_origin/0",
    "get_prog_origin/0",
    "get_search_list/0",
    "halt_error/1",
    "halt/0",
    "env/0",
    "format/1",
    "error/1",
    "max/0",
    "min/0",
    "sort/0",
    "nan/0",
    "infinite/0",
    "isnormal/0",
    "isnan/0",
    "isinfinite/0",
    "type/0",
    "utf8bytelength/0",
    "length/0",
    "contains/1",
    "has/1",
    "delpaths/1",
    "getpath/1",
    "setpath/2",
    "implode/0",
    "explode/0",
    "split/1",
    "rtrimstr/1",
    "ltrimstr/1",
    "endswith/1",
    "startswith/1",
    "keys_unsorted/0",
    "keys/0",
    "tostring/0",
    "tonumber/0",
    "fromjson/0",
    "tojson/0",
    "lgamma_r/0",
    "modf/0",
    "frexp/0",
    "ldexp/2",
    "trunc/0",
    "significand/0",
    "scalbln/2",
    "scalb/2",
    "round/0",
    "rint/0",
    "nexttoward/2",
    "nextafter/2",
    "nearbyint/0",
    "logb/0",
    "log1p/0",
    "lgamma/0",
    "gamma/0",
    "fmod/2",
    "fmin/2",
    "fmax/2",
    "fma/3",
    "fdim/2",
    "fabs/0",
    "expm1/0",
    "exp10/0",
    "erfc/0",
    "erf/0",
    "drem/2",
    "copysign/2",
    "ceil/0",
    "yn/2",
    "jn/2",
    "y1/0",
    "y0/0",
    "tgamma/0",
    "tanh/0",
    "tan/0",
    "sqrt/0",
    "sinh/0",
    "sin/0",
    "remainder/2",
    "pow/2",
    "log2/0",
    "log10/0",
    "log/0",
    "j1/0",
    "j0/0",
    "hypot/2",
    "floor/0",
    "exp2/0",
    "exp/0",
    "cosh/0",
    "cos/0",
    "cbrt/0",
    "atanh/0",
    "atan2/2",
    "atan/0",
    "asinh/0",
    "asin/0",
    "acosh/0",
    "acos/0",
    "empty/0",
    "not/0",
    "path/1",
    "range/2",
    "halt_error/0",
    "error/0",
    "map/1",
    "select/1",
    "sort_by/1",
    "group_by/1",
    "unique/0",
    "unique_by/1",
    "max_by/1",
    "min_by/1",
    "add/0",
    "del/1",
    "map_values/1",
    "recurse/1",
    "recurse/2",
    "recurse/0",
    "recurse_down/0",
    "to_entries/0",
    "from_entries/0",
    "with_entries/1",
    "reverse/0",
    "indices/1",
    "index/1",
    "rindex/1",
    "paths/0",
    "paths/1",
    "any/2",
    "any/1",
    "any/0",
    "all/2",
    "all/1",
    "all/0",
    "isfinite/0",
    "arrays/0",
    "objects/0",
    "iterables/0",
    "booleans/0",
    "numbers/0",
    "normals/0",
    "finites/0",
    "strings/0",
    "nulls/0",
    "values/0",
    "scalars/0",
    "scalars_or_empty/0",
    "leaf_paths/0",
    "join/1",
    "flatten/1",
    "flatten/0",
    "range/1",
    "fromdateiso8601/0",
    "todateiso8601/0",
    "fromdate/0",
    "todate/0",
    "match/2",
    "match/1",
    "test/2",
    "test/1",
    "capture/2",
    "capture/1",
    "scan/1",
    "splits/2",
    "splits/1",
    "split/2",
    "sub/2",
    "sub/3",
    "gsub/3",
    "gsub/2",
    "range/3",
    "while/2",
    "until/2",
    "limit/2",
    "isempty/1",
    "first/1",
    "last/1",
    "nth/2",
    "first/0",
    "last/0",
    "nth/1",
    "combinations/0",
    "combinations/1",
    "transpose/0",
    "in/1",
    "inside/1",
    "input/0",
    "repeat/1",
    "inputs/0",
    "ascii_downcase/0",
    "ascii_upcase/0",
    "truncate_stream/1",
    "fromstream/1",
    "tostream/0",
    "bsearch/1",
    "walk/1",
    "INDEX/2",
    "INDEX/1",
    "JOIN/2",
    "JOIN/3",
    "JOIN/4",
    "IN/1",
    "IN/2",
    "pow10/0",
    "builtins/0",
];

/// A directory as jq 1.6 gives it (`realpath`), or as it is.
fn real_dir(p: &std::path::Path) -> Val {
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    Val::from(p.to_string_lossy().into_owned())
}

/// A native filter before wrapping: name, parameters, implementation.
type NativeDef = (&'static str, Box<[jaq_core::Bind]>, RunPtr<Jq>);

/// Native filters of this crate. Those named as builtins replace jaq's
/// natives and definitions of the same name and arity (engine.rs).
pub fn funs() -> impl Iterator<Item = Fun<Jq>> {
    let fs: [NativeDef; 18] = [
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
        // jq 1.6's `input` fails with "break" when the inputs are used up
        // (`inputs` stops on it).
        ("input", v(0), |cv| {
            let env = *cv.0.data();
            let next = env.inputs.borrow_mut().next_input();
            bome(match next {
                Some(Ok(v)) => Ok(v),
                Some(Err(e)) => Err(err(e)),
                None => Err(err("break".to_string())),
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
    let more: [NativeDef; 19] = [
        ("_jq_halt_error", v(1), |mut cv| {
            let code = cv.0.pop_var();
            let env = *cv.0.data();
            halt_error(env, &cv.1, &code)
        }),
        ("_jq_setpath", v(2), |mut cv| {
            let x = cv.0.pop_var();
            let p = cv.0.pop_var();
            bome(match &p {
                Val::Arr(a) => setpath(cv.1, a, x),
                _ => Err(err("Path must be specified as an array".to_string())),
            })
        }),
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
    ];
    let jq16: [NativeDef; 21] = [
        ("_strindices", v(1), |mut cv| {
            let t = cv.0.pop_var();
            bome(strindices(&cv.1, &t))
        }),
        ("_jq_keys", v(0), |cv| bome(keys(&cv.1, true))),
        ("_jq_keys_unsorted", v(0), |cv| bome(keys(&cv.1, false))),
        ("sort", v(0), |cv| bome(sort(&cv.1))),
        ("_sort_by_impl", v(1), |mut cv| {
            let k = cv.0.pop_var();
            bome(sort_by_impl(&cv.1, &k))
        }),
        ("_group_by_impl", v(1), |mut cv| {
            let k = cv.0.pop_var();
            bome(group_by_impl(&cv.1, &k))
        }),
        ("_jq_min", v(0), |cv| bome(minmax_by(&cv.1, &cv.1, true))),
        ("_jq_max", v(0), |cv| bome(minmax_by(&cv.1, &cv.1, false))),
        ("_min_by_impl", v(1), |mut cv| {
            let k = cv.0.pop_var();
            bome(minmax_by(&cv.1, &k, true))
        }),
        ("_max_by_impl", v(1), |mut cv| {
            let k = cv.0.pop_var();
            bome(minmax_by(&cv.1, &k, false))
        }),
        ("explode", v(0), |cv| bome(explode(&cv.1))),
        ("implode", v(0), |cv| bome(implode(&cv.1))),
        ("ascii_downcase", v(0), |cv| bome(ascii_case(&cv.1, false))),
        ("ascii_upcase", v(0), |cv| bome(ascii_case(&cv.1, true))),
        ("_jq_regex_mode", v(2), |mut cv| {
            let mode = cv.0.pop_var();
            let re = cv.0.pop_var();
            bome(regex_mode(&cv.1, &re, &mode))
        }),
        ("_jq_match_objects", v(2), |mut cv| {
            let mode = cv.0.pop_var();
            let s = cv.0.pop_var();
            bome(match_objects(&cv.1, &s, &mode))
        }),
        (
            "_jq_substitute",
            [jaq_core::Bind::Fun(())].into(),
            |mut cv| {
                let (f, fc) = cv.0.pop_fun();
                let run = |cap| f.run((fc.clone(), cap)).collect::<Result<Vec<_>, _>>();
                match substitute(&cv.1, run) {
                    Ok(outs) => Box::new(outs.into_iter().map(Ok)),
                    Err(e) => box_once(Err(e)),
                }
            },
        ),
        ("format", v(1), |mut cv| {
            let f = cv.0.pop_var();
            bome(format(&cv.1, &f))
        }),
        ("builtins", v(0), |_| {
            bome(Ok(Val::from_iter(
                BUILTINS.iter().map(|b| Val::from(b.to_string())),
            )))
        }),
        ("get_prog_origin", v(0), |cv| {
            let env = *cv.0.data();
            bome(Ok(real_dir(&env.modules.main_dir)))
        }),
        ("get_jq_origin", v(0), |_| {
            let dir = crate::modules::origin();
            bome(Ok(dir.as_deref().map_or(Val::Null, real_dir)))
        }),
    ];
    fs.into_iter()
        .chain(more)
        .chain(jq16)
        .map(run::<Jq>)
        .chain(crate::math::funs())
        .chain(crate::time::funs())
}
