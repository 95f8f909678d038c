//! Resolving a notified call's path as the program sees it: in its own mount
//! namespace (`/proc/TID/root`, `openat2(RESOLVE_IN_ROOT)`), from its cwd or dirfd,
//! symlinks followed (the file a link points to is what gets read).
//!
//! The answer is a host path (the run's private `/tmp` mapped back to the session's
//! temp dir). A hidden file is a `/dev/null` mount inside, so it resolves to a device
//! and reports nothing: the program cannot read it.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::notify::TmpMap;

/// One call's path and how the kernel will resolve it.
pub(crate) struct Target<'a> {
    /// The calling thread (host tid).
    pub(crate) tid: u32,
    /// `AT_FDCWD` or a descriptor of the caller.
    pub(crate) dirfd: i64,
    /// The path bytes, as read from the caller's memory.
    pub(crate) path: &'a [u8],
    /// The call may create the file.
    pub(crate) creat: bool,
    /// A symlink at the end is not followed.
    pub(crate) nofollow: bool,
    /// `AT_EMPTY_PATH`: an empty path means `dirfd` itself.
    pub(crate) empty_path: bool,
    /// An exec: always resolved (the observer looks at what starts, wherever).
    pub(crate) exec: bool,
    /// A rename: a directory is reported as [`Resolved::Dir`].
    pub(crate) dirs: bool,
}

/// What a path reaches.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A regular file (host path).
    File(PathBuf),
    /// A directory being renamed (host path).
    Dir(PathBuf),
    /// Nothing with content: a directory, device, pipe, socket, symlink itself, a new
    /// file, or a system file no label can exist on.
    Nothing,
    /// The call fails as it would in the program's view (`ENOENT`, `ENOTDIR`):
    /// answered with this errno, so the kernel never resolves it differently.
    Fails(i32),
    /// Could not tell: the caller is told of an unknown read.
    Unknown,
}

/// Resolves paths for one run.
pub(crate) struct Resolver {
    /// Host directories whose files no label can be on (system dirs outside every
    /// root): absolute, clean paths under them are skipped without a lookup.
    pub(crate) system: Vec<PathBuf>,
    /// Every root of the run (canonical): a system prefix holding one is not skipped.
    pub(crate) roots: Vec<PathBuf>,
    /// The private `/tmp`.
    pub(crate) tmp: TmpMap,
    /// The program's root, opened once: every process of the sandbox shares it
    /// (`chroot`, `pivot_root`, `unshare` and `setns` are refused by seccomp).
    pub(crate) root: std::cell::OnceCell<OwnedFd>,
}

/// Reads `buf.len()` bytes at `addr` of process `pid`.
pub(crate) fn read_mem(pid: u32, addr: u64, buf: &mut [u8]) -> bool {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: both iovecs describe valid ranges (ours is `buf`; the remote one is
    // checked by the kernel).
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    n == buf.len() as isize
}

/// The NUL-terminated string at `addr` in process `pid` (at most `PATH_MAX` bytes),
/// read page by page (the string may end right before an unmapped page).
pub(crate) fn read_path(pid: u32, addr: u64) -> Option<Vec<u8>> {
    read_cstr(pid, addr, libc::PATH_MAX as usize)
}

/// Most arguments of an exec looked at, and the longest one (the kernel's
/// `MAX_ARG_STRLEN`).
const MAX_ARGS: usize = 4096;
const MAX_ARG: usize = 128 * 1024;

/// The `NULL`-terminated `argv` array at `addr` in process `pid`.
pub(crate) fn read_argv(pid: u32, addr: u64) -> Option<Vec<String>> {
    let mut out = Vec::new();
    if addr == 0 {
        return Some(out);
    }
    for i in 0..MAX_ARGS as u64 {
        let mut ptr = [0u8; 8];
        if !read_mem(pid, addr + 8 * i, &mut ptr) {
            return None;
        }
        let p = u64::from_ne_bytes(ptr);
        if p == 0 {
            return Some(out);
        }
        let arg = read_cstr(pid, p, MAX_ARG)?;
        out.push(String::from_utf8_lossy(&arg).into_owned());
    }
    None
}

fn read_cstr(pid: u32, addr: u64, max: usize) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let max_len = max;
    if addr == 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max_len {
        let room = (PAGE - at % PAGE) as usize;
        let mut chunk = vec![0u8; room.min(max_len - out.len())];
        if !read_mem(pid, at, &mut chunk) {
            return None;
        }
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Some(out);
        }
        out.extend_from_slice(&chunk);
        at += chunk.len() as u64;
    }
    None
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn open_path(at: libc::c_int, path: &[u8], flags: libc::c_int) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    // SAFETY: a valid C string; the new fd is ours.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(errno())
    } else {
        // SAFETY: a new fd nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

fn openat2_in_root(root: &OwnedFd, path: &[u8], nofollow: bool) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    // SAFETY: open_how is plain data.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = libc::RESOLVE_IN_ROOT;
    // SAFETY: a valid dirfd, C string and open_how of the size we pass.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        Err(errno())
    } else {
        // SAFETY: a new fd nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
    }
}

fn readlink(path: &str) -> Option<Vec<u8>> {
    std::fs::read_link(path)
        .ok()
        .map(|p| p.into_os_string().into_vec())
}

use std::os::unix::ffi::OsStringExt;

/// No `.` or `..` component and no empty one: a textual prefix test is exact.
fn is_clean(p: &[u8]) -> bool {
    p.split(|&b| b == b'/')
        .skip(1)
        .all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// `/proc/self…`, `/proc/thread-self…`, `/dev/fd…`, `/dev/std*`: the caller's own
/// entries, which the parent reaches as `/proc/TID/…` (the sandbox's procfs has no
/// `self` for a reader outside its pid namespace).
fn own_proc(abs: &[u8], tid: u32) -> Option<Vec<u8>> {
    let me = format!("/proc/{tid}");
    for (prefix, to) in [
        (&b"/proc/self"[..], String::new()),
        (b"/proc/thread-self", String::new()),
        (b"/dev/fd", "/fd".into()),
        (b"/dev/stdin", "/fd/0".into()),
        (b"/dev/stdout", "/fd/1".into()),
        (b"/dev/stderr", "/fd/2".into()),
    ] {
        if let Some(rest) = abs.strip_prefix(prefix)
            && (rest.is_empty() || rest[0] == b'/')
        {
            let mut out = me.clone().into_bytes();
            out.extend_from_slice(to.as_bytes());
            out.extend_from_slice(rest);
            return Some(out);
        }
    }
    None
}

impl Resolver {
    /// The working directory of `tid` (host path).
    pub(crate) fn cwd(&self, tid: u32) -> Option<PathBuf> {
        let inside = readlink(&format!("/proc/{tid}/cwd"))?;
        if inside.first() != Some(&b'/') || inside.ends_with(b" (deleted)") {
            return None;
        }
        Some(self.tmp.host(Path::new(OsStr::from_bytes(&inside))))
    }

    fn skipped(&self, abs: &[u8]) -> bool {
        if !is_clean(abs) {
            return false;
        }
        let p = Path::new(OsStr::from_bytes(abs));
        self.system.iter().any(|s| p.starts_with(s)) && !self.roots.iter().any(|r| p.starts_with(r))
    }

    /// What the call's path reaches.
    pub(crate) fn resolve(&self, t: &Target<'_>) -> Resolved {
        let tid = t.tid;
        if t.path.is_empty() {
            if !t.empty_path || t.dirfd < 0 {
                return Resolved::Fails(libc::ENOENT);
            }
            let fd = format!("/proc/{tid}/fd/{}", t.dirfd);
            return match open_path(libc::AT_FDCWD, fd.as_bytes(), libc::O_PATH) {
                Ok(fd) => self.classify(&fd, t.dirs),
                Err(_) => Resolved::Unknown,
            };
        }
        if t.path[0] != b'/'
            && let Some(r) = self.beneath(t)
        {
            return r;
        }
        let abs: Vec<u8> = if t.path[0] == b'/' {
            t.path.to_vec()
        } else {
            let base = if t.dirfd == libc::AT_FDCWD as i64 {
                readlink(&format!("/proc/{tid}/cwd"))
            } else {
                readlink(&format!("/proc/{tid}/fd/{}", t.dirfd))
            };
            let Some(mut base) = base else {
                return Resolved::Unknown;
            };
            if base.first() != Some(&b'/') || base.ends_with(b" (deleted)") {
                return Resolved::Unknown;
            }
            base.push(b'/');
            base.extend_from_slice(t.path);
            base
        };
        if !t.exec && self.skipped(&abs) {
            return Resolved::Nothing;
        }
        if let Some(host) = own_proc(&abs, tid) {
            let mut flags = libc::O_PATH;
            if t.nofollow {
                flags |= libc::O_NOFOLLOW;
            }
            return match open_path(libc::AT_FDCWD, &host, flags) {
                Ok(fd) => self.classify(&fd, t.dirs),
                Err(e) if matches!(e, libc::ENOENT | libc::ENOTDIR) && !t.creat => {
                    Resolved::Fails(e)
                }
                Err(_) => Resolved::Unknown,
            };
        }
        let root = match self.root.get() {
            Some(r) => r,
            None => match open_path(
                libc::AT_FDCWD,
                format!("/proc/{tid}/root").as_bytes(),
                libc::O_PATH | libc::O_DIRECTORY,
            ) {
                Ok(r) => self.root.get_or_init(|| r),
                Err(_) => return Resolved::Unknown,
            },
        };
        match openat2_in_root(root, &abs, t.nofollow) {
            Ok(fd) => self.classify(&fd, t.dirs),
            Err(libc::ENOENT) if t.creat => {
                // A new file holds nothing yet, unless the name is a link this view
                // cannot follow (then the program may reach something else).
                match openat2_in_root(root, &abs, true) {
                    Err(libc::ENOENT) => Resolved::Nothing,
                    _ => Resolved::Unknown,
                }
            }
            Err(e @ (libc::ENOENT | libc::ENOTDIR)) if !t.creat => Resolved::Fails(e),
            Err(_) => Resolved::Unknown,
        }
    }

    /// The common case, cheaply: a relative path that stays beneath its start
    /// directory (`RESOLVE_BENEATH`: no absolute symlink, no `..` above it) resolves
    /// from the program's own cwd or dirfd, in its mount namespace, exactly as the
    /// kernel will. `None`: anything else (then the full resolution decides).
    fn beneath(&self, t: &Target<'_>) -> Option<Resolved> {
        let base = if t.dirfd == libc::AT_FDCWD as i64 {
            format!("/proc/{}/cwd", t.tid)
        } else {
            format!("/proc/{}/fd/{}", t.tid, t.dirfd)
        };
        let dir = open_path(
            libc::AT_FDCWD,
            base.as_bytes(),
            libc::O_PATH | libc::O_DIRECTORY,
        )
        .ok()?;
        let c = CString::new(t.path).ok()?;
        let mut flags = libc::O_PATH | libc::O_CLOEXEC;
        if t.nofollow {
            flags |= libc::O_NOFOLLOW;
        }
        // SAFETY: open_how is plain data.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = flags as u64;
        how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: a valid dirfd, C string and open_how of the size we pass.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: a new fd nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        Some(self.classify(&fd, t.dirs))
    }

    /// A resolved descriptor: its host path when it is a regular file.
    fn classify(&self, fd: &OwnedFd, dirs: bool) -> Resolved {
        // SAFETY: fstat into a zeroed buffer on our own fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
            return Resolved::Unknown;
        }
        let dir = dirs && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG && !dir {
            return Resolved::Nothing;
        }
        let Some(inside) = readlink(&format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
            return Resolved::Unknown;
        };
        if inside.first() != Some(&b'/') || inside.ends_with(b" (deleted)") {
            return Resolved::Unknown;
        }
        let host = self.tmp.host(Path::new(OsStr::from_bytes(&inside)));
        if dir {
            Resolved::Dir(host)
        } else {
            Resolved::File(host)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn self_references_become_the_callers_proc_dir() {
        assert_eq!(own_proc(b"/dev/stdin", 42).unwrap(), b"/proc/42/fd/0");
        assert_eq!(own_proc(b"/proc/self/fd/3", 42).unwrap(), b"/proc/42/fd/3");
        assert_eq!(own_proc(b"/dev/fd/3", 42).unwrap(), b"/proc/42/fd/3");
        assert!(own_proc(b"/proc/selfish", 42).is_none());
        assert!(own_proc(b"/work/x", 42).is_none());
    }

    #[test]
    fn only_clean_paths_take_the_fast_way() {
        assert!(is_clean(b"/usr/lib/x.so"));
        assert!(!is_clean(b"/usr/../work/x"));
        assert!(!is_clean(b"/usr//x"));
        let r = Resolver {
            system: vec![PathBuf::from("/usr")],
            roots: vec![PathBuf::from("/usr/local/proj")],
            tmp: TmpMap {
                private: None,
                bound: vec![],
            },
            root: std::cell::OnceCell::new(),
        };
        assert!(r.skipped(b"/usr/lib/x.so"));
        assert!(!r.skipped(b"/usr/local/proj/x"));
        assert!(!r.skipped(b"/usr/../work/x"));
    }
}
