//! `canonicalize` in three system calls.
//!
//! glibc's `realpath` (behind `std::fs::canonicalize`) calls `readlink` on every
//! component of every path; building one spec canonicalizes dozens of paths, which
//! made it hundreds of calls per run. Opening the path with `O_PATH` lets the kernel
//! resolve it once, and `/proc/self/fd/N` names the result.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The absolute path `p` resolves to, with every symlink followed (like
/// `std::fs::canonicalize`; an error when it does not exist).
pub fn canonicalize(p: impl AsRef<Path>) -> io::Result<PathBuf> {
    let p = p.as_ref();
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return std::fs::canonicalize(p);
    };
    // SAFETY: a valid C string; the fd is closed below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let link = format!("/proc/self/fd/{fd}");
    let resolved = std::fs::read_link(&link);
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };
    match resolved {
        // `/proc` missing or an odd result (a deleted file): the slow, exact way.
        Ok(r) if r.is_absolute() && !r.as_os_str().as_bytes().ends_with(b" (deleted)") => Ok(r),
        _ => std::fs::canonicalize(p),
    }
}
