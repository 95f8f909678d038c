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
