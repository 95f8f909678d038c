//! Placeholders for protected paths that do not exist yet: an empty read-only file, or
//! for a missing ancestor (`.git` of `.git/hooks`) a dangling symlink to
//! [`LINK_TARGET`], created on the host so that a read-only mount has a mount point.
//!
//! Why a symlink and not an empty directory: inside the run the link is covered by
//! `/dev/null` (a character device, so git keeps looking for a repository in the
//! parent directories exactly as if there were no `.git`, and nothing can be created
//! beneath it), and a symlink this short lives in its inode: creating and removing it
//! touches no data block, while a directory's block is discarded synchronously on
//! filesystems mounted with `discard` (about 3 ms per run on the CI machine).
//!
//! Removing one while another run still has it bound would silently detach that run's
//! mount (unlinking a mount point of another mount namespace is allowed), so:
//! - every run holds a shared `flock` on the directory of each protected path for its
//!   whole duration, and removes a placeholder only under an exclusive lock (taken
//!   without waiting: if another run holds the directory, it is left for that run);
//! - runs of this process count their users of each placeholder;
//! - placeholders carry the xattr `user.safesh.placeholder`, so the last run (of any
//!   process) can tell one from a user's own empty file. Without xattr support, only the
//!   runs of the creating process remove it.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

const XATTR: &std::ffi::CStr = c"user.safesh.placeholder";

/// Where a placeholder link points: a name nobody can create (procfs refuses new
/// top-level entries, even to root), so following it outside a run finds nothing.
pub(crate) const LINK_TARGET: &str = "/proc/.safesh-placeholder";

/// True when `p` is one of our placeholder links.
pub(crate) fn is_placeholder_link(p: &Path) -> bool {
    fs::read_link(p).is_ok_and(|t| t == Path::new(LINK_TARGET))
}

/// Users (runs of this process) of each placeholder.
static USERS: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());

fn users() -> MutexGuard<'static, BTreeMap<PathBuf, usize>> {
    USERS.lock().unwrap_or_else(|e| e.into_inner())
}

struct Held {
    path: PathBuf,
    lock: File,
    placeholder: bool,
}

/// The protected paths of one run (locks held until drop).
pub(crate) struct Placeholders {
    held: Vec<Held>,
}

fn marked(p: &Path) -> bool {
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    let mut v = [0u8; 4];
    // SAFETY: valid C strings and buffer.
    let r = unsafe { libc::lgetxattr(c.as_ptr(), XATTR.as_ptr(), v.as_mut_ptr().cast(), v.len()) };
    r >= 0
}

fn mark(p: &Path) {
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: valid C strings and buffer.
    unsafe { libc::lsetxattr(c.as_ptr(), XATTR.as_ptr(), b"1".as_ptr().cast(), 1, 0) };
}

fn flock(f: &File, op: libc::c_int) -> bool {
    // SAFETY: flock on an fd we own.
    unsafe { libc::flock(f.as_raw_fd(), op) == 0 }
}

impl Placeholders {
    pub(crate) fn new() -> Placeholders {
        Placeholders { held: Vec::new() }
    }

    /// Makes sure `p` (or its first missing ancestor) exists so that it can be bound
    /// read-only; returns the path to bind.
    pub(crate) fn ensure(&mut self, p: &Path) -> Option<PathBuf> {
        // The first missing component whose parent exists (or `p` itself).
        let mut target = p.to_path_buf();
        while target.symlink_metadata().is_err() {
            match target.parent() {
                Some(parent) if parent.symlink_metadata().is_err() => target = parent.to_path_buf(),
                _ => break,
            }
        }
        // Beneath a placeholder link (or any other non-directory) nothing can be
        // created: protecting that ancestor protects the path.
        if target.symlink_metadata().is_err()
            && let Some(parent) = target.parent()
            && parent.symlink_metadata().is_ok_and(|m| !m.is_dir())
        {
            target = parent.to_path_buf();
        }
        let parent = target.parent()?;
        let lock = File::open(parent).ok()?;
        flock(&lock, libc::LOCK_SH);
        let is_ancestor = target != p;
        let mut users = users();
        if target.symlink_metadata().is_err() {
            let created = if is_ancestor {
                std::os::unix::fs::symlink(LINK_TARGET, &target).is_ok()
            } else {
                fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o444)
                    .open(&target)
                    .is_ok()
            };
            if created {
                if !is_ancestor {
                    mark(&target);
                }
                users.insert(target.clone(), 0);
            }
        }
        let placeholder =
            users.contains_key(&target) || marked(&target) || is_placeholder_link(&target);
        if placeholder {
            *users.entry(target.clone()).or_insert(0) += 1;
        }
        drop(users);
        let exists = target.symlink_metadata().is_ok();
        self.held.push(Held {
            path: target.clone(),
            lock,
            placeholder,
        });
        exists.then_some(target)
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        // Our own shared locks first, or they would block our exclusive ones.
        for h in &self.held {
            flock(&h.lock, libc::LOCK_UN);
        }
        for h in self.held.drain(..).rev() {
            if !h.placeholder {
                continue;
            }
            let mut users = users();
            let n = users.entry(h.path.clone()).or_insert(1);
            *n = n.saturating_sub(1);
            if *n > 0 {
                continue; // another run of this process still has it bound
            }
            users.remove(&h.path);
            // Not while a run of another process holds the directory.
            if !flock(&h.lock, libc::LOCK_EX | libc::LOCK_NB) {
                continue;
            }
            // Our link, or an empty file (never a user's non-empty one).
            if is_placeholder_link(&h.path)
                || fs::symlink_metadata(&h.path).is_ok_and(|m| m.is_file() && m.len() == 0)
            {
                let _ = fs::remove_file(&h.path);
            }
            flock(&h.lock, libc::LOCK_UN);
        }
    }
}
