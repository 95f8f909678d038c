//! File mode specifications as `chmod`, `mkdir -m` and `find -perm` read them:
//! octal (`755`) or symbolic clauses (`u+x,go-w,a=r`, `g=u`, `+X`).

/// One symbolic action: an operator and what it applies.
#[derive(Clone, Debug)]
pub struct Action {
    op: u8,
    /// Permission bits named by letters (`rwxst`), not yet masked by `who`.
    bits: u32,
    /// `X`: execute only for directories or files already executable by someone.
    cond_x: bool,
    /// Copy from `u`, `g` or `o`.
    copy: Option<u8>,
}

#[derive(Clone, Debug)]
pub struct Clause {
    /// Bits the `ugoa` letters select; 0 means "none given" (umask applies).
    who: u32,
    actions: Vec<Action>,
}

/// A parsed mode.
#[derive(Clone, Debug)]
pub enum Mode {
    /// An absolute octal mode, with the number of digits given.
    Octal(u32, usize),
    /// Symbolic clauses.
    Symbolic(Vec<Clause>),
}

const ALL: u32 = 0o7777;

/// Parses a mode string; `None` when it is invalid.
pub fn parse(s: &str) -> Option<Mode> {
    if !s.is_empty() && s.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        let v = u32::from_str_radix(s, 8).ok()?;
        if v > 0o7777 {
            return None;
        }
        return Some(Mode::Octal(v, s.len()));
    }
    let mut clauses = Vec::new();
    for part in s.split(',') {
        let b = part.as_bytes();
        let mut i = 0;
        let mut who = 0u32;
        while let Some(&c) = b.get(i) {
            match c {
                b'u' => who |= 0o4700,
                b'g' => who |= 0o2070,
                b'o' => who |= 0o1007,
                b'a' => who |= 0o7777,
                _ => break,
            }
            i += 1;
        }
        let mut actions = Vec::new();
        if i >= b.len() {
            return None;
        }
        while let Some(&op) = b.get(i) {
            if !matches!(op, b'+' | b'-' | b'=') {
                return None;
            }
            i += 1;
            let mut act = Action {
                op,
                bits: 0,
                cond_x: false,
                copy: None,
            };
            if let Some(&c) = b.get(i)
                && matches!(c, b'u' | b'g' | b'o')
            {
                act.copy = Some(c);
                i += 1;
            } else {
                while let Some(&c) = b.get(i) {
                    match c {
                        b'r' => act.bits |= 0o444,
                        b'w' => act.bits |= 0o222,
                        b'x' => act.bits |= 0o111,
                        b'X' => act.cond_x = true,
                        b's' => act.bits |= 0o6000,
                        b't' => act.bits |= 0o1000,
                        _ => break,
                    }
                    i += 1;
                }
            }
            actions.push(act);
        }
        clauses.push(Clause { who, actions });
    }
    Some(Mode::Symbolic(clauses))
}

/// The process umask (read without changing it for longer than the call).
pub fn umask() -> u32 {
    // SAFETY: umask only swaps the process mask; we restore it at once.
    unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    }
}

/// Applies `mode` to `old` (the file's current permission bits and type bits
/// ignored); `is_dir` matters for `X` and octal modes on directories.
pub fn apply(mode: &Mode, old: u32, is_dir: bool, umask: u32) -> u32 {
    let old = old & ALL;
    match mode {
        Mode::Octal(v, digits) => {
            if is_dir && *digits < 5 {
                // GNU keeps set-user/group-ID on directories unless 5+ digits say otherwise.
                (*v & 0o1777) | (old & 0o6000) | (*v & 0o6000)
            } else {
                *v
            }
        }
        Mode::Symbolic(clauses) => {
            let mut m = old;
            for c in clauses {
                let (who, mask) = if c.who == 0 {
                    (ALL, !umask & ALL)
                } else {
                    (c.who, ALL)
                };
                for a in &c.actions {
                    let mut bits = if let Some(src) = a.copy {
                        let v = match src {
                            b'u' => (m >> 6) & 7,
                            b'g' => (m >> 3) & 7,
                            _ => m & 7,
                        };
                        v * 0o111
                    } else {
                        a.bits
                    };
                    if a.cond_x && (is_dir || m & 0o111 != 0) {
                        bits |= 0o111;
                    }
                    // Without `ugoa`, s and t follow the affected classes only.
                    let eff = bits & who & mask;
                    match a.op {
                        b'+' => m |= eff,
                        b'-' => m &= !eff,
                        _ => {
                            let clear = who;
                            let keep_special = if is_dir { 0o6000 & !bits } else { 0 };
                            m = (m & !(clear & !keep_special)) | eff;
                        }
                    }
                }
            }
            m
        }
    }
}
