//! Sort keys: parsing `-k POS1[,POS2]` specs with per-key ordering flags, locating
//! a key inside a line (GNU begfield/limfield), and comparing two lines by keys.

use super::cmp::{self, is_blank};
use std::cmp::Ordering;

/// How a key's text is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kind {
    /// Byte order (after optional folding / ignoring).
    #[default]
    Text,
    /// `-n`.
    Numeric,
    /// `-g`.
    General,
    /// `-h`.
    Human,
    /// `-M`.
    Month,
    /// `-V`.
    Version,
}

/// Characters skipped when comparing text keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignore {
    /// `-d`: everything but letters, digits and blanks.
    NonDictionary,
    /// `-i`: non-printing characters.
    NonPrinting,
}

/// Ordering flags, global or per key.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    /// Key type.
    pub kind: Kind,
    /// `-d` / `-i`.
    pub ignore: Option<Ignore>,
    /// `-f`.
    pub fold: bool,
    /// `-b` at the key's start.
    pub skip_start_blanks: bool,
    /// `-b` at the key's end.
    pub skip_end_blanks: bool,
    /// `-r`.
    pub reverse: bool,
    /// Type flags given, as bits n=1 g=2 h=4 M=8 V=16 (for the incompatibility check).
    pub given: u8,
    /// `-R` (accepted, treated as a type flag for compatibility checks).
    pub random: bool,
}

impl Flags {
    /// True if no flag other than `-r` was given (GNU's default_key_compare).
    pub fn is_default(&self) -> bool {
        self.kind == Kind::Text
            && self.ignore.is_none()
            && !self.fold
            && !self.skip_start_blanks
            && !self.skip_end_blanks
            && !self.random
    }

    /// Applies one flag letter; false if it is not one.
    pub fn set(&mut self, c: char, at_end: bool) -> bool {
        let kind = match c {
            'b' => {
                if at_end {
                    self.skip_end_blanks = true;
                } else {
                    self.skip_start_blanks = true;
                }
                return true;
            }
            'd' => {
                self.ignore = Some(Ignore::NonDictionary);
                return true;
            }
            'i' => {
                if self.ignore.is_none() {
                    self.ignore = Some(Ignore::NonPrinting);
                }
                return true;
            }
            'f' => {
                self.fold = true;
                return true;
            }
            'r' => {
                self.reverse = true;
                return true;
            }
            'R' => {
                self.random = true;
                return true;
            }
            'n' => Kind::Numeric,
            'g' => Kind::General,
            'h' => Kind::Human,
            'M' => Kind::Month,
            'V' => Kind::Version,
            _ => return false,
        };
        self.given |= match kind {
            Kind::Numeric => 1,
            Kind::General => 2,
            Kind::Human => 4,
            Kind::Month => 8,
            _ => 16,
        };
        self.kind = kind;
        true
    }

    /// The option letters, if the combination is invalid (GNU: at most one of
    /// n, g, h, M and {V, R, d/i}).
    pub fn incompatible(&self) -> Option<String> {
        let other = self.given & 16 != 0 || self.random || self.ignore.is_some();
        if (self.given & 15).count_ones() + u32::from(other) <= 1 {
            return None;
        }
        let mut s = String::new();
        for (bit, c) in [(1, 'n'), (2, 'g'), (4, 'h'), (8, 'M'), (16, 'V')] {
            if self.given & bit != 0 {
                s.push(c);
            }
        }
        match self.ignore {
            Some(Ignore::NonDictionary) => s.push('d'),
            Some(Ignore::NonPrinting) => s.push('i'),
            None => {}
        }
        if self.random {
            s.push('R');
        }
        Some(s)
    }
}

/// One `-k` key (or the whole-line key built from global flags).
#[derive(Clone, Debug, Default)]
pub struct Key {
    /// Start field (0-based).
    pub sword: usize,
    /// Start character within the field (0-based).
    pub schar: usize,
    /// End field (0-based), `None` for the end of the line.
    pub eword: Option<usize>,
    /// End character (1-based count into the field; 0 = the field's end).
    pub echar: usize,
    /// Ordering flags.
    pub flags: Flags,
}

fn parse_field_count(s: &str) -> Result<(usize, &str), ()> {
    let nd = s.bytes().take_while(u8::is_ascii_digit).count();
    if nd == 0 {
        return Err(());
    }
    let mut v: usize = 0;
    for b in s[..nd].bytes() {
        v = v.saturating_mul(10).saturating_add(usize::from(b - b'0'));
    }
    Ok((v, &s[nd..]))
}

/// Parses a `-k` spec; errors are GNU-worded.
pub fn parse_key(spec: &str) -> Result<Key, String> {
    let bad = |why: &str| format!("invalid number {why}: invalid count at start of '{spec}'");
    let bad_spec = |why: &str| format!("{why}: invalid field specification '{spec}'");
    let mut k = Key::default();
    let (f, mut s) = parse_field_count(spec).map_err(|_| bad("at field start"))?;
    if f == 0 {
        return Err(bad_spec("field number is zero"));
    }
    k.sword = f - 1;
    if let Some(rest) = s.strip_prefix('.') {
        let (c, r) = parse_field_count(rest).map_err(|_| bad("after '.'"))?;
        if c == 0 {
            return Err(bad_spec("character offset is zero"));
        }
        k.schar = c - 1;
        s = r;
    }
    let mut chars = s.char_indices();
    let mut after = "";
    let mut has_end = false;
    for (i, c) in chars.by_ref() {
        if c == ',' {
            after = &s[i + 1..];
            has_end = true;
            break;
        }
        if !k.flags.set(c, false) {
            return Err(format!("invalid field specification '{spec}'"));
        }
    }
    if has_end {
        let (f, mut s) = parse_field_count(after).map_err(|_| bad("after ','"))?;
        if f == 0 {
            return Err(bad_spec("field number is zero"));
        }
        k.eword = Some(f - 1);
        if let Some(rest) = s.strip_prefix('.') {
            let (c, r) = parse_field_count(rest).map_err(|_| bad("after '.'"))?;
            k.echar = c;
            s = r;
        }
        for c in s.chars() {
            if !k.flags.set(c, true) {
                return Err(format!("invalid field specification '{spec}'"));
            }
        }
    }
    Ok(k)
}

/// Where `key` starts in `line` (GNU begfield).
pub fn begfield(line: &[u8], key: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let mut ptr = 0;
    let mut sword = key.sword;
    match tab {
        Some(t) => {
            while ptr < lim && sword > 0 {
                sword -= 1;
                ptr += memchr::memchr(t, &line[ptr..]).unwrap_or(lim - ptr);
                if ptr < lim {
                    ptr += 1;
                }
            }
        }
        None => {
            while ptr < lim && sword > 0 {
                sword -= 1;
                while ptr < lim && is_blank(line[ptr]) {
                    ptr += 1;
                }
                while ptr < lim && !is_blank(line[ptr]) {
                    ptr += 1;
                }
            }
        }
    }
    if key.flags.skip_start_blanks {
        while ptr < lim && is_blank(line[ptr]) {
            ptr += 1;
        }
    }
    lim.min(ptr.saturating_add(key.schar))
}

/// Where `key` ends in `line` (GNU limfield).
pub fn limfield(line: &[u8], key: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let Some(ew) = key.eword else { return lim };
    let echar = key.echar;
    let mut eword = if echar == 0 { ew + 1 } else { ew };
    let mut ptr = 0;
    match tab {
        Some(t) => {
            while ptr < lim && eword > 0 {
                eword -= 1;
                ptr += memchr::memchr(t, &line[ptr..]).unwrap_or(lim - ptr);
                if ptr < lim && (eword > 0 || echar > 0) {
                    ptr += 1;
                }
            }
        }
        None => {
            while ptr < lim && eword > 0 {
                eword -= 1;
                while ptr < lim && is_blank(line[ptr]) {
                    ptr += 1;
                }
                while ptr < lim && !is_blank(line[ptr]) {
                    ptr += 1;
                }
            }
        }
    }
    if echar != 0 {
        if key.flags.skip_end_blanks {
            while ptr < lim && is_blank(line[ptr]) {
                ptr += 1;
            }
        }
        ptr = lim.min(ptr.saturating_add(echar));
    }
    ptr
}

fn ignored(b: u8, ig: Option<Ignore>) -> bool {
    match ig {
        None => false,
        Some(Ignore::NonDictionary) => !(b.is_ascii_alphanumeric() || is_blank(b)),
        Some(Ignore::NonPrinting) => !(0x20..0x7f).contains(&b),
    }
}

/// Compares two key texts with ignore / fold rules.
fn text_cmp(a: &[u8], b: &[u8], f: &Flags) -> Ordering {
    if f.ignore.is_none() && !f.fold {
        return a.cmp(b);
    }
    let tr = |c: u8| if f.fold { c.to_ascii_uppercase() } else { c };
    let (mut i, mut j) = (0, 0);
    loop {
        while i < a.len() && ignored(a[i], f.ignore) {
            i += 1;
        }
        while j < b.len() && ignored(b[j], f.ignore) {
            j += 1;
        }
        if i >= a.len() || j >= b.len() {
            return (i < a.len()).cmp(&(j < b.len()));
        }
        let d = tr(a[i]).cmp(&tr(b[j]));
        if d != Ordering::Equal {
            return d;
        }
        i += 1;
        j += 1;
    }
}

/// A hash of `text` under this run's random salt (`-R`): equal keys hash equally,
/// different keys land in an order that changes from run to run.
fn random_hash(text: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    static STATE: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    STATE
        .get_or_init(std::collections::hash_map::RandomState::new)
        .hash_one(text)
}

/// Compares the key texts `a` and `b` by the key's type.
pub fn compare_text(a: &[u8], b: &[u8], f: &Flags) -> Ordering {
    if f.random {
        let d = random_hash(a).cmp(&random_hash(b));
        return if f.reverse { d.reverse() } else { d };
    }
    let d = match f.kind {
        Kind::Text => text_cmp(a, b, f),
        Kind::Numeric => cmp::numeric(a, b),
        Kind::General => cmp::general(a, b),
        Kind::Human => cmp::human(a, b),
        Kind::Month => cmp::month(a, b),
        Kind::Version => cmp::version(a, b),
    };
    if f.reverse { d.reverse() } else { d }
}

/// True when a key with these flags orders by `-n` alone, so that an
/// integer key can be compared as an `i64` ([`super::cmp::integer_key`]).
pub fn fast_numeric_key(f: &Flags) -> bool {
    f.kind == Kind::Numeric && !f.random && f.ignore.is_none() && !f.fold
}

/// The text of `key` in `line` (empty when the end precedes the start).
pub fn extract<'l>(line: &'l [u8], key: &Key, tab: Option<u8>) -> &'l [u8] {
    let lim = limfield(line, key, tab);
    let beg = begfield(line, key, tab);
    if lim <= beg { &[] } else { &line[beg..lim] }
}

/// Compares two lines by all keys in order (GNU keycompare).
pub fn keycompare(a: &[u8], b: &[u8], keys: &[Key], tab: Option<u8>) -> Ordering {
    for k in keys {
        let d = compare_text(extract(a, k, tab), extract(b, k, tab), &k.flags);
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let k = parse_key("2,2").unwrap();
        assert_eq!(extract(b"a b c", &k, None), b" b");
        assert_eq!(extract(b"a:b:c", &k, Some(b':')), b"b");
        let k = parse_key("2.2,3.1").unwrap();
        assert_eq!(extract(b"a:bx:cy", &k, Some(b':')), b"x:c");
        let k = parse_key("2nr").unwrap();
        assert!(k.flags.reverse && k.flags.kind == Kind::Numeric && k.eword.is_none());
        assert!(parse_key("0").is_err());
        assert!(parse_key("x").is_err());
    }
}
