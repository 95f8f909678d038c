//! Where sessions make their private temp dirs.
//!
//! `TMPDIR` when the human set one; otherwise `/dev/shm` when it is a tmpfs, else the
//! system temp dir. Each external run creates (and the session later removes) mount
//! points inside the session's dir, and on a disk filesystem mounted with `discard`
//! every directory removed costs a synchronous discard (about 3 ms on the CI
//! machine, more than the whole sandboxed spawn); on tmpfs it costs microseconds.

use std::path::PathBuf;

/// The directory under which a session's temp dir is created.
pub(crate) fn base() -> PathBuf {
    if std::env::var_os("TMPDIR").is_some_and(|v| !v.is_empty()) {
        return std::env::temp_dir();
    }
    let shm = std::path::Path::new("/dev/shm");
    if is_writable_tmpfs(shm) {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// [`base`], canonical, resolved once per process (the environment's `TMPDIR`
/// is read at the first session; a process does not change it afterwards).
pub(crate) fn canonical_base() -> PathBuf {
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let b = base();
        std::fs::canonicalize(&b).unwrap_or(b)
    })
    .clone()
}

/// Set by a long-lived server process: its sessions' dirs go in a directory
/// of its own (see [`use_process_dir`]).
static PROCESS_DIR_WANTED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// This process's own directory under [`canonical_base`], once made.
static PROCESS_DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

/// Makes the sessions of this process create their temp dirs inside one
/// directory of the process's own (named like a session dir, so
/// [`sweep_dead`] removes it with everything inside when the process was
/// killed). A server's sessions are made and removed at every request:
/// `mkdir`/`rmdir` lock the parent directory, and 100 worker processes
/// sharing `/dev/shm` spun on that lock. Call [`remove_process_dir`] at the
/// end. A process that makes one session (the CLI) does not: one more
/// `mkdir` would be all it got.
pub fn use_process_dir() {
    PROCESS_DIR_WANTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Removes the directory [`use_process_dir`] made (what sessions left in it
/// too); nothing when there is none.
pub fn remove_process_dir() {
    if let Some(Some(dir)) = PROCESS_DIR.get()
        && std::fs::remove_dir(dir).is_err()
    {
        remove_tree(dir);
    }
}

/// Where a session's temp dir is made: the process's own directory when
/// [`use_process_dir`] asked for one (and it could be made), else
/// [`canonical_base`]. Canonical either way.
pub(crate) fn session_parent() -> PathBuf {
    if PROCESS_DIR_WANTED.load(std::sync::atomic::Ordering::Relaxed)
        && let Some(dir) = PROCESS_DIR.get_or_init(|| make_unique_dir(&canonical_base()))
    {
        return dir.clone();
    }
    canonical_base()
}

/// Makes a new directory `safesh-<pid>-<n>-<hex>` (mode 0700) under `base`:
/// the name [`sweep_dead`] knows. `mkdir` never follows a symlink in the last
/// component, so the path is canonical when `base` is.
pub(crate) fn make_unique_dir(base: &std::path::Path) -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..16 {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("safesh-{}-{n}-{nanos:x}", std::process::id()));
        if std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok() {
            return Some(dir);
        }
    }
    None
}

fn is_writable_tmpfs(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string and an out-buffer of the right type.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0;
    // SAFETY: a valid C string.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    ok && st.f_type as i64 == TMPFS_MAGIC && writable
}

/// The owning pid in a session temp dir's name (`safesh-<pid>-<n>-<hex>`,
/// made by `make_private_temp_dir` in session.rs), or `None` for any other name.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("safesh-")?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse::<i32>().ok().filter(|p| *p > 0)?;
    let n = parts.next()?;
    let hex = parts.next()?;
    let ok = parts.next().is_none()
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then_some(pid)
}

/// True when no process has this pid (a live one, even another user's, keeps
/// its dirs: `kill(pid, 0)` fails with `ESRCH` only for a dead pid).
fn pid_is_dead(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Removes the session temp dirs that killed safesh processes left behind (a
/// `kill -9` skips their cleanup; on `/dev/shm` they hold RAM). Only ours: a
/// directory (not a symlink) named like one, owned by this user, whose owning
/// pid is dead; under every place a session dir may be made (`TMPDIR`,
/// `/dev/shm`, the system temp dir). Returns the dirs removed.
pub fn sweep_dead() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut bases = vec![base(), PathBuf::from("/dev/shm"), std::env::temp_dir()];
    bases.sort();
    bases.dedup();
    let mut removed = Vec::new();
    for b in bases {
        let Ok(entries) = std::fs::read_dir(&b) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().and_then(owner_pid) else {
                continue;
            };
            let path = e.path();
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if !meta.is_dir()
                || meta.uid() != uid
                || pid == std::process::id() as i32
                || !pid_is_dead(pid)
            {
                continue;
            }
            if remove_tree(&path) {
                removed.push(path);
            }
        }
    }
    removed
}

/// Removes `dir` and everything in it; a program may have left a directory
/// without write permission, so directories are made writable and it is tried
/// again. Symlinks are removed, never followed.
fn remove_tree(dir: &std::path::Path) -> bool {
    if std::fs::remove_dir_all(dir).is_ok() {
        return true;
    }
    fn open_up(d: &std::path::Path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(d) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path());
                }
            }
        }
    }
    open_up(dir);
    std::fs::remove_dir_all(dir).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_have_an_owner() {
        assert_eq!(owner_pid("safesh-123-4-1a2b"), Some(123));
        for other in [
            "safesh-x-4-1a",
            "safesh-123",
            "safesh-123-4-1a-x",
            "other-123-4-1a",
            "safesh-0-1-1",
            "safesh-123-4-zz",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }
}
