//! Shell glob matching (`*`, `?`, `[...]`) for grep's --include/--exclude.

/// True if `name` matches the glob `pat` (fnmatch without flags).
pub fn matches(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pat.len() {
            let c = pat[p];
            match c {
                b'*' => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                b'?' if n < name.len() => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' if n < name.len() => {
                    if let Some((ok, next)) = class(pat, p, name[n]) {
                        if ok {
                            p = next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pat.len() && n < name.len() && pat[p + 1] == name[n] => {
                    p += 2;
                    n += 1;
                    continue;
                }
                _ if n < name.len() && c == name[n] && c != b'?' && c != b'[' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        } else if n == name.len() {
            return true;
        }
        match star {
            Some((sp, sn)) if sn < name.len() => {
                star = Some((sp, sn + 1));
                p = sp + 1;
                n = sn + 1;
            }
            _ => return false,
        }
    }
}

/// Matches `c` against the bracket at `pat[p]`; returns (matched, index after `]`).
fn class(pat: &[u8], p: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = p + 1;
    let neg = matches!(pat.get(i), Some(b'!') | Some(b'^'));
    if neg {
        i += 1;
    }
    let mut ok = false;
    let mut first = true;
    loop {
        let &x = pat.get(i)?;
        if x == b']' && !first {
            return Some((ok != neg, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&h| h != b']') {
            let h = pat.get(i + 2).copied().unwrap_or(x);
            ok |= x <= c && c <= h;
            i += 3;
        } else {
            ok |= x == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches(b"*.rs", b"a.rs"));
        assert!(!matches(b"*.rs", b"a.rs.bak"));
        assert!(matches(b"a?c", b"abc"));
        assert!(matches(b"[ab]*", b"bx"));
        assert!(!matches(b"[!ab]*", b"bx"));
        assert!(matches(b"*", b""));
        assert!(matches(b"*a*b", b"xaxxb"));
    }
}
