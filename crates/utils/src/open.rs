//! Opening a path that has been checked: the kernel resolves it again, so the
//! open itself must not land anywhere a check would have refused. A magic link
//! (`/proc/self/fd/N`, `/proc/self/cwd`, …) is never followed — a symlink flipped
//! between the check and the open cannot reach safesh's own protocol pipes,
//! label store or audit log — and a file on procfs is never returned (the
//! process's environment, memory, …). Descriptors are close-on-exec.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// procfs's `f_type` (`linux/magic.h`).
const PROC_SUPER_MAGIC: libc::c_long = 0x9fa0;

/// Opens `path` with `flags` (`O_RDONLY`, `O_WRONLY | O_CREAT | O_TRUNC`, …;
/// `O_CLOEXEC` is added) and `mode` for a created file, without following magic
/// links, and refuses a file on procfs.
pub fn open_path(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let flags = flags | libc::O_CLOEXEC;
    let mode = if flags & libc::O_CREAT != 0 { mode } else { 0 };
    let fd = match openat2_no_magic(&c, flags, mode) {
        Ok(fd) => fd,
        // A kernel before 5.6 (or a filter) without openat2: the plain open,
        // still checked for procfs below.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
            // SAFETY: `c` is a valid NUL-terminated path; the flags and mode
            // are plain integers.
            let fd = unsafe { libc::open(c.as_ptr(), flags, libc::c_uint::from(mode)) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            fd
        }
        Err(e) => return Err(e),
    };
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let file = unsafe { File::from_raw_fd(fd) };
    if on_procfs(&file) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{}: files under /proc cannot be opened", path.display()),
        ));
    }
    Ok(file)
}

/// [`open_path`] for reading.
pub fn open_read_only(path: &Path) -> io::Result<File> {
    open_path(path, libc::O_RDONLY, 0)
}

/// `openat2(AT_FDCWD, path, {flags, mode, RESOLVE_NO_MAGICLINKS})`.
fn openat2_no_magic(
    path: &CString,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<libc::c_int> {
    // SAFETY: an all-zero `open_how` is valid (no flags, no mode, no resolve).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = u64::from(mode);
    how.resolve = libc::RESOLVE_NO_MAGICLINKS;
    loop {
        // SAFETY: the pointers are valid for the call; the size is the struct's.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                libc::AT_FDCWD,
                path.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if r >= 0 {
            return libc::c_int::try_from(r).map_err(|_| io::Error::from_raw_os_error(libc::EBADF));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// True when `f` lives on procfs.
fn on_procfs(f: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero statfs is a valid out-buffer for fstatfs.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `f` is an open descriptor and `st` a valid out-buffer.
    let r = unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) };
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as libc::c_long;
    r == 0 && magic == PROC_SUPER_MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_links_and_procfs_are_not_opened() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let link = dir.path().join("l");
        if std::os::unix::fs::symlink("/proc/self/fd/1", &link).is_err() {
            return;
        }
        assert!(open_path(&link, libc::O_WRONLY, 0).is_err());
        assert!(open_path(Path::new("/dev/stdout"), libc::O_WRONLY, 0).is_err());
        assert!(open_path(Path::new("/proc/self/environ"), libc::O_RDONLY, 0).is_err());
        let file = dir.path().join("f");
        assert!(open_path(&file, libc::O_WRONLY | libc::O_CREAT, 0o644).is_ok());
        assert!(open_path(&file, libc::O_RDONLY, 0).is_ok());
    }
}
