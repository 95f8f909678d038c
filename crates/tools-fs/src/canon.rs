//! Path canonicalization for `realpath` and `readlink -f/-e/-m`: resolve `.`,
//! `..` and symlinks component by component, with GNU's three existence modes.

use crate::common::bpath;
use safesh_utils::UtilCtx;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// How much of the path must exist.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Every component (`-e`).
    All,
    /// All but the last (`-f`, realpath's default).
    AllButLast,
    /// None (`-m`).
    Nothing,
}

fn split(p: &[u8]) -> Vec<Vec<u8>> {
    p.split(|&c| c == b'/')
        .filter(|c| !c.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// Canonicalizes `p` relative to the working directory; `resolve` false skips
/// symlink resolution (`realpath -s`).
pub fn canonicalize(
    ctx: &UtilCtx<'_>,
    p: &str,
    need: Need,
    resolve: bool,
) -> std::io::Result<Vec<u8>> {
    if p.is_empty() {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    let start = if p.starts_with('/') {
        Vec::new()
    } else {
        split(ctx.cwd.as_os_str().as_bytes())
    };
    let mut done: Vec<Vec<u8>> = start;
    let mut todo: Vec<Vec<u8>> = split(p.as_bytes());
    todo.reverse();
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == b"." {
            continue;
        }
        if c == b".." {
            done.pop();
            continue;
        }
        done.push(c);
        let cur = to_path(&done);
        let last = todo.is_empty();
        if ctx.check_stat(&cur).is_err() {
            return Err(std::io::ErrorKind::PermissionDenied.into());
        }
        // Looked at once, from the entry the walk reaches (no symlink followed
        // by name): when a directory on the way was flipped into a symlink
        // since it was looked at, that entry's real path is checked too.
        match look(ctx, &cur) {
            Ok((m, entry)) if m.st_mode & libc::S_IFMT == libc::S_IFLNK && resolve => {
                links += 1;
                if links > 40 {
                    return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = entry.read_link()?;
                let tb = target.as_os_str().as_bytes();
                done.pop();
                if tb.starts_with(b"/") {
                    done.clear();
                }
                let mut parts = split(tb);
                parts.reverse();
                todo.extend(parts);
            }
            Ok((m, _)) => {
                if !last && m.st_mode & libc::S_IFMT != libc::S_IFDIR {
                    if need == Need::Nothing {
                        continue;
                    }
                    return Err(std::io::Error::from_raw_os_error(libc::ENOTDIR));
                }
            }
            Err(e) => {
                let ok = match need {
                    Need::Nothing => true,
                    Need::AllButLast => last,
                    Need::All => false,
                };
                if !ok {
                    return Err(e);
                }
            }
        }
    }
    let mut out = Vec::new();
    for c in &done {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Ok(out)
}

/// The entry at `cur` (not following its final name) and its metadata, after
/// its canonical path passed the stat check when a symlink on the way makes it
/// another than `cur`.
fn look(
    ctx: &UtilCtx<'_>,
    cur: &std::path::Path,
) -> std::io::Result<(libc::stat, safesh_utils::beneath::Entry)> {
    use safesh_utils::beneath;
    let entry = beneath::resolve(cur, false)?;
    if entry.real() != beneath::lexical(cur) && ctx.check_stat(entry.real()).is_err() {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    if !entry.exists() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    Ok((entry.metadata()?, entry))
}

fn to_path(parts: &[Vec<u8>]) -> PathBuf {
    let mut v = Vec::new();
    for c in parts {
        v.push(b'/');
        v.extend_from_slice(c);
    }
    bpath(&v)
}

/// `path` relative to `base` (both canonical, absolute).
pub fn relative(path: &[u8], base: &[u8]) -> Vec<u8> {
    let a = split(path);
    let b = split(base);
    let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    let mut out: Vec<u8> = Vec::new();
    for _ in common..b.len() {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(b"..");
    }
    for c in a.iter().skip(common) {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}
