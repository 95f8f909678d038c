//! Shell patterns (`case`, `[[ == ]]`, `${x#…}`, `${x/…}`) and pathname expansion.

use regex::Regex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// A compiled pattern: the `regex` crate, or `fancy-regex` for the extglob `!(…)`
/// form, which needs a look-ahead.
pub(crate) enum Matcher {
    Plain(Regex),
    Fancy(fancy_regex::Regex),
}

impl Matcher {
    fn is_match(&self, text: &str) -> bool {
        match self {
            Matcher::Plain(r) => r.is_match(text),
            Matcher::Fancy(r) => r.is_match(text).unwrap_or(false),
        }
    }
}

/// Compiled patterns by (pattern, case-insensitive, UTF-8 locale); `None` when
/// it does not compile.
type PatternCache = HashMap<(String, bool, bool), Option<Rc<Matcher>>>;

thread_local! {
    static CACHE: RefCell<PatternCache> = RefCell::new(HashMap::new());
}

/// Character classes that are wider than ASCII in a UTF-8 locale (glibc's
/// C.UTF-8 counts é as `alpha`; its digits stay ASCII), as regex classes.
const UNICODE_CLASSES: &[(&str, &str)] = &[
    ("[:alpha:]", "\\p{Alphabetic}"),
    ("[:alnum:]", "\\p{Alphabetic}0-9"),
    ("[:upper:]", "\\p{Uppercase}"),
    ("[:lower:]", "\\p{Lowercase}"),
];

/// Compiles a shell pattern to an anchored regex (cached per thread). `utf8`:
/// the locale is UTF-8, so the letter classes take non-ASCII letters.
fn compile(pattern: &str, icase: bool, utf8: bool) -> Option<Rc<Matcher>> {
    let key = (pattern.to_string(), icase, utf8);
    if let Some(r) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return r;
    }
    let pattern = &leading_bracket_escaped(pattern);
    let re =
        safesh_syntax::catch_quietly(|| brush_parser::pattern::pattern_to_regex_str(pattern, true))
            .ok()
            .and_then(|r| r.ok())
            .and_then(|mut body| {
                if utf8 {
                    for (class, unicode) in UNICODE_CLASSES {
                        body = body.replace(class, unicode);
                    }
                }
                let flags = if icase { "(?si)" } else { "(?s)" };
                let full = format!("{flags}^(?:{body})$");
                match Regex::new(&full) {
                    Ok(r) => Some(Rc::new(Matcher::Plain(r))),
                    Err(_) => fancy_regex::Regex::new(&full)
                        .ok()
                        .map(|r| Rc::new(Matcher::Fancy(r))),
                }
            });
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 4096 {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    re
}

/// A `]` first in a bracket expression (`[]a]`, `[!]]`) is a member, not the
/// end: escaped here for the pattern translator, which would end the set there.
fn leading_bracket_escaped(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("[]") && !pattern.contains("[!]") && !pattern.contains("[^]") {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 2);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '[' => {
                if let Some(&n @ ('!' | '^')) = chars.peek() {
                    out.push(n);
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// In the C locale bash reads strings as bytes: a character of several bytes
/// is that many characters to `?`, `*`, brackets and `${s:off:len}`. Each
/// such byte becomes one character here (its escape, as a byte that is not
/// UTF-8 already is: safesh_utils::word_bytes); [`whole`] joins them again.
pub(crate) fn bytewise(s: &str) -> std::borrow::Cow<'_, str> {
    use safesh_utils::word_bytes::{escape_byte, escaped_byte};
    if s.is_ascii() {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if c.is_ascii() || escaped_byte(c).is_some() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            out.extend(c.encode_utf8(&mut buf).bytes().map(escape_byte));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The word of a [`bytewise`] string: its bytes, characters again where
/// they are UTF-8.
pub(crate) fn whole(s: &str) -> String {
    use safesh_utils::word_bytes::{word_from_vec, word_to_bytes};
    if s.is_ascii() {
        return s.to_string();
    }
    word_from_vec(word_to_bytes(s).into_owned())
}

/// Whether a C-locale operation must go [`bytewise`].
fn needs_bytes(utf8: bool, a: &str, b: &str) -> bool {
    !utf8 && (!a.is_ascii() || !b.is_ascii())
}

/// True if `text` matches the whole shell `pattern`.
pub(crate) fn matches(pattern: &str, text: &str, icase: bool, utf8: bool) -> bool {
    if needs_bytes(utf8, pattern, text) {
        return matches_chars(&bytewise(pattern), &bytewise(text), icase, utf8);
    }
    matches_chars(pattern, text, icase, utf8)
}

fn matches_chars(pattern: &str, text: &str, icase: bool, utf8: bool) -> bool {
    match compile(pattern, icase, utf8) {
        Some(re) => re.is_match(text),
        None => unescape(pattern) == text,
    }
}

/// Removes backslash escapes from a pattern (its literal meaning).
pub(crate) fn unescape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut esc = false;
    for c in p.chars() {
        if esc {
            out.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// True if the pattern has an unescaped glob character (`[` only when a `]`
/// closes it, as bash decides: a lone `[` is an ordinary character).
pub(crate) fn has_glob(p: &str) -> bool {
    let mut esc = false;
    let chars: Vec<char> = p.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if matches!(c, '*' | '?')
            || (c == '[' && chars[i + 1..].iter().skip(1).any(|&d| d == ']'))
            || (matches!(c, '@' | '!' | '+') && chars.get(i + 1) == Some(&'('))
        {
            return true;
        }
    }
    false
}

fn boundaries(s: &str) -> Vec<usize> {
    let mut b: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    b.push(s.len());
    b
}

/// `${s#p}` / `${s##p}` / `${s%p}` / `${s%%p}`.
pub(crate) fn remove_affix(
    s: &str,
    pattern: &str,
    suffix: bool,
    largest: bool,
    utf8: bool,
) -> String {
    if needs_bytes(utf8, pattern, s) {
        let r = remove_affix_chars(&bytewise(s), &bytewise(pattern), suffix, largest, utf8);
        return whole(&r);
    }
    remove_affix_chars(s, pattern, suffix, largest, utf8)
}

fn remove_affix_chars(s: &str, pattern: &str, suffix: bool, largest: bool, utf8: bool) -> String {
    let b = boundaries(s);
    let Some(re) = compile(pattern, false, utf8) else {
        let lit = unescape(pattern);
        return if suffix {
            s.strip_suffix(lit.as_str()).unwrap_or(s).to_string()
        } else {
            s.strip_prefix(lit.as_str()).unwrap_or(s).to_string()
        };
    };
    if suffix {
        let iter: Box<dyn Iterator<Item = &usize>> = if largest {
            Box::new(b.iter())
        } else {
            Box::new(b.iter().rev())
        };
        for &i in iter {
            if re.is_match(&s[i..]) {
                return s[..i].to_string();
            }
        }
    } else {
        let iter: Box<dyn Iterator<Item = &usize>> = if largest {
            Box::new(b.iter().rev())
        } else {
            Box::new(b.iter())
        };
        for &i in iter {
            if re.is_match(&s[..i]) {
                return s[i..].to_string();
            }
        }
    }
    s.to_string()
}

/// Which occurrences `${s/p/r}` replaces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    First,
    All,
    Prefix,
    Suffix,
}

/// `${s/p/r}` and friends: longest match at the earliest position.
/// `rep` gives the replacement of each matched text.
pub(crate) fn replace(
    s: &str,
    pattern: &str,
    rep: &dyn Fn(&str) -> String,
    kind: Replace,
    (icase, utf8): (bool, bool),
) -> String {
    if needs_bytes(utf8, pattern, s) {
        // The replacement of a match sees (and gives) whole characters.
        let rep_bytes = |m: &str| bytewise(&rep(&whole(m))).into_owned();
        return whole(&replace_chars(
            &bytewise(s),
            &bytewise(pattern),
            &rep_bytes,
            kind,
            (icase, utf8),
        ));
    }
    replace_chars(s, pattern, rep, kind, (icase, utf8))
}

fn replace_chars(
    s: &str,
    pattern: &str,
    rep: &dyn Fn(&str) -> String,
    kind: Replace,
    (icase, utf8): (bool, bool),
) -> String {
    let b = boundaries(s);
    let Some(re) = compile(pattern, icase, utf8) else {
        return s.to_string();
    };
    match kind {
        Replace::Prefix => {
            for &i in b.iter().rev() {
                if re.is_match(&s[..i]) {
                    return format!("{}{}", rep(&s[..i]), &s[i..]);
                }
            }
            s.to_string()
        }
        Replace::Suffix => {
            for &i in b.iter() {
                if re.is_match(&s[i..]) {
                    return format!("{}{}", &s[..i], rep(&s[i..]));
                }
            }
            s.to_string()
        }
        Replace::First | Replace::All => {
            if pattern.is_empty() {
                return s.to_string();
            }
            let mut out = String::with_capacity(s.len());
            let mut k = 0;
            let mut replaced = false;
            while k < b.len() {
                let start = b[k];
                if replaced && kind == Replace::First {
                    out.push_str(&s[start..]);
                    return out;
                }
                let mut found = None;
                for j in (k..b.len()).rev() {
                    let end = b[j];
                    if end > start && re.is_match(&s[start..end]) {
                        found = Some(j);
                        break;
                    }
                }
                match found {
                    Some(j) => {
                        out.push_str(&rep(&s[start..b[j]]));
                        replaced = true;
                        k = j;
                    }
                    None => {
                        if k + 1 < b.len() {
                            out.push_str(&s[start..b[k + 1]]);
                        }
                        k += 1;
                    }
                }
            }
            out
        }
    }
}

/// `shopt` settings that change pathname expansion.
#[derive(Clone, Copy, Default)]
pub(crate) struct GlobOptions {
    /// Match names starting with `.` (never `.` and `..`).
    pub dotglob: bool,
    /// Case-insensitive matching.
    pub nocase: bool,
    /// `shopt -s globstar`: a `**` component matches any depth of directories.
    pub globstar: bool,
    /// The locale is UTF-8 (see [`compile`]).
    pub utf8: bool,
}

/// Directories below `disk` (and files too when `files`), depth first in name
/// order, as `(shown, disk)`; symlinks are not followed, as in bash 5.2.
fn descendants(
    shown: &str,
    disk: &Path,
    files: bool,
    dotglob: bool,
    checks: &mut Checks<'_>,
    depth: u32,
    out: &mut Vec<(String, std::path::PathBuf)>,
) {
    if depth > 64 || !(checks.list)(disk) {
        return;
    }
    let Ok(rd) = safesh_utils::beneath::read_dir_names(disk, |real| {
        if (checks.list)(real) {
            Ok(())
        } else {
            Err(std::io::ErrorKind::PermissionDenied.into())
        }
    }) else {
        return;
    };
    let mut names: Vec<String> = rd
        .into_iter()
        .map(|e| safesh_utils::word_bytes::word_from_os(&e).into_owned())
        .filter(|n| dotglob || !n.starts_with('.'))
        .collect();
    names.sort();
    for n in names {
        let d = disk.join(safesh_utils::word_bytes::word_to_path(&n));
        let is_dir = look(&d, false, checks.see).is_some_and(|m| m.is_dir());
        let s = if shown.is_empty() || shown.ends_with('/') {
            format!("{shown}{n}")
        } else {
            format!("{shown}/{n}")
        };
        if is_dir || files {
            out.push((s.clone(), d.clone()));
        }
        if is_dir {
            descendants(&s, &d, files, dotglob, checks, depth + 1, out);
        }
    }
}

/// What a walk of `**` asks before it reads a directory (`list`, which may
/// refuse the script) and before it takes an entry reached through a symlink
/// (`see`, quiet).
struct Checks<'a> {
    list: &'a mut dyn FnMut(&Path) -> bool,
    see: &'a mut dyn FnMut(&Path) -> bool,
}

/// The metadata of `d` for a match, decided on the entry reached: when a
/// symlink on the way makes it another than `d`, `may_see` is asked about its
/// canonical path (quietly: what may not be looked at is not there). A check by
/// name would follow a symlink out of the roots and tell whether a file exists
/// there (`echo */secret.txt` with `out -> /outside`).
fn look(
    d: &Path,
    follow: bool,
    may_see: &mut dyn FnMut(&Path) -> bool,
) -> Option<std::fs::Metadata> {
    safesh_utils::beneath::metadata(d, follow, |real| {
        if may_see(real) {
            Ok(())
        } else {
            Err(std::io::ErrorKind::PermissionDenied.into())
        }
    })
    .ok()
}

/// Pathname expansion of `pattern` (quoted characters escaped) relative to `cwd`:
/// sorted matches, or nothing. Directories `may_list` refuses are not read;
/// a match (or a directory on the way) is decided on the entry reached, and
/// one whose canonical path `may_see` refuses is not there.
pub(crate) fn glob(
    cwd: &Path,
    pattern: &str,
    opts: GlobOptions,
    may_list: &mut dyn FnMut(&Path) -> bool,
    may_see: &mut dyn FnMut(&Path) -> bool,
) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    let comps: Vec<&str> = pattern.split('/').collect();
    // (path as shown, path on disk)
    let mut current: Vec<(String, std::path::PathBuf)> = vec![if absolute {
        (String::new(), std::path::PathBuf::from("/"))
    } else {
        (String::new(), cwd.to_path_buf())
    }];
    let last = comps.len().saturating_sub(1);
    for (ci, comp) in comps.iter().enumerate() {
        if ci == 0 && absolute {
            continue;
        }
        let mut next = Vec::new();
        if comp.is_empty() {
            for (shown, disk) in current {
                next.push((format!("{shown}/"), disk));
            }
            current = next;
            continue;
        }
        if *comp == "**" && opts.globstar {
            for (shown, disk) in &current {
                // Zero directories: the directory itself (`d/**` lists `d/`).
                if ci != last {
                    next.push((shown.clone(), disk.clone()));
                } else if !shown.is_empty() {
                    let sep = if shown.ends_with('/') { "" } else { "/" };
                    next.push((format!("{shown}{sep}"), disk.clone()));
                }
                descendants(
                    shown,
                    disk,
                    ci == last,
                    opts.dotglob,
                    &mut Checks {
                        list: &mut *may_list,
                        see: &mut *may_see,
                    },
                    0,
                    &mut next,
                );
            }
            current = next;
            if current.is_empty() {
                return Vec::new();
            }
            continue;
        }
        for (shown, disk) in &current {
            let sep = if (shown.is_empty() && !absolute) || shown.ends_with('/') {
                ""
            } else {
                "/"
            };
            if !has_glob(comp) {
                let lit = unescape(comp);
                let d = disk.join(&lit);
                // A directory the pattern names (`out/*`, `/bin/b?sh`): where it
                // leads is checked like a listing (refused outside the roots).
                if ci == last || look(&d, true, may_list).is_some_and(|m| m.is_dir()) {
                    next.push((format!("{shown}{sep}{lit}"), d));
                }
                continue;
            }
            if !may_list(disk) {
                continue;
            }
            // Listed from the directory checked: a symlink on the way is
            // decided on too (a flip cannot list another directory).
            let Ok(rd) = safesh_utils::beneath::read_dir_names(disk, |real| {
                if may_list(real) {
                    Ok(())
                } else {
                    Err(std::io::ErrorKind::PermissionDenied.into())
                }
            }) else {
                continue;
            };
            let dot_ok = opts.dotglob || comp.starts_with('.') || comp.starts_with("\\.");
            let mut names: Vec<String> = rd
                .into_iter()
                .map(|e| safesh_utils::word_bytes::word_from_os(&e).into_owned())
                .filter(|n| dot_ok || !n.starts_with('.'))
                .filter(|n| n != "." && n != "..")
                .filter(|n| matches(comp, n, opts.nocase, opts.utf8))
                .collect();
            names.sort();
            for n in names {
                let d = disk.join(safesh_utils::word_bytes::word_to_path(&n));
                if ci != last && !look(&d, true, may_see).is_some_and(|m| m.is_dir()) {
                    continue;
                }
                next.push((format!("{shown}{sep}{n}"), d));
            }
        }
        current = next;
        if current.is_empty() {
            return Vec::new();
        }
    }
    let mut out: Vec<String> = current
        .into_iter()
        .filter(|(_, d)| look(d, false, may_see).is_some())
        .map(|(s, _)| s)
        .collect();
    out.sort();
    out
}
