//! Opening what was checked. A path checked by name and then opened by name is
//! resolved twice: a symlink flipped in between (`d` → the project, then `d` →
//! outside) makes the open land where the check never looked. Here the path is
//! walked once, one component at a time relative to the directory already held
//! (`openat(dirfd, name, O_PATH | O_NOFOLLOW)`), symlinks are read from the link
//! that was opened (`readlinkat(fd, "")`) and spliced in by us, never followed by
//! the kernel. The walk gives an [`Entry`]: the parent directory held open, the
//! final name, and the canonical path of what will be touched ([`Entry::real`]),
//! on which the caller decides. Every operation then acts relative to the held
//! directory without following the final name ([`Entry::open`] also checks that
//! the file it opened is the one that was resolved), so no flip after the walk
//! reaches anything the decision did not cover.
//!
//! This is an fd-relative walk rather than `openat2(RESOLVE_BENEATH)` from a
//! root's fd: it works on every kernel, gives the canonical path that the
//! decision (roots, protected names, classification) needs, and allows a symlink
//! from one allowed root into another (the target is decided like any path).
//! Links stored on procfs (`/proc/self/fd/N`, `/proc/self/cwd`) are magic: they are
//! never followed, and a final file on procfs is never opened.

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// Symlinks one resolution may follow (the kernel's `MAXSYMLINKS`).
const MAX_LINKS: u32 = 40;

/// procfs's `f_type` (`linux/magic.h`).
const PROC_SUPER_MAGIC: libc::c_long = 0x9fa0;

/// The error an operation returns when the entry changed between the walk and
/// the operation (a name replaced by a symlink or by another file): the caller
/// walks and decides again ([`is_changed`]).
fn changed() -> io::Error {
    io::Error::from_raw_os_error(libc::ESTALE)
}

/// True for the error of an operation that found the entry changed since it was
/// resolved; walking and deciding again is the answer.
pub fn is_changed(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ESTALE)
}

/// An entry reached by [`resolve`]: its parent directory (held open), its name
/// there, and its canonical path.
#[derive(Debug)]
pub struct Entry {
    dir: OwnedFd,
    name: CString,
    real: PathBuf,
    /// `(st_dev, st_ino, st_mode)` of the entry when it existed at the walk.
    id: Option<(u64, u64, u32)>,
}

/// Resolves the absolute `path` without letting the kernel follow any symlink:
/// intermediate symlinks are always followed (by us), the final one only with
/// `follow_final` (a trailing `/` also follows it). A missing final component
/// is not an error (the entry may be created); a missing directory is.
pub fn resolve(path: &Path, follow_final: bool) -> io::Result<Entry> {
    if !path.is_absolute() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let bytes = path.as_os_str().as_bytes();
    let trailing_slash = bytes.len() > 1 && bytes.ends_with(b"/");
    let follow_final = follow_final || trailing_slash;
    let mut queue: VecDeque<OsString> = components(path);
    let root = open_at(libc::AT_FDCWD, c"/", libc::O_PATH | libc::O_DIRECTORY)?;
    // The directories walked so far, each with its name (the root has none).
    let mut stack: Vec<(OwnedFd, OsString)> = vec![(root, OsString::new())];
    let mut links = 0u32;
    while let Some(comp) = queue.pop_front() {
        if comp == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let cur = stack.last().map(|(fd, _)| fd.as_raw_fd()).unwrap_or(-1);
        let cname = cstring(&comp)?;
        let last = queue.is_empty();
        if !last {
            match open_at(
                cur,
                &cname,
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_DIRECTORY,
            ) {
                Ok(fd) => {
                    stack.push((fd, comp));
                    continue;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {}
                Err(e) => return Err(e),
            }
        }
        let fd = match open_at(cur, &cname, libc::O_PATH | libc::O_NOFOLLOW) {
            Ok(fd) => fd,
            Err(e) if last && e.raw_os_error() == Some(libc::ENOENT) => {
                let (dir, real) = top(&stack, Some(&comp))?;
                return Ok(Entry {
                    dir,
                    name: cname,
                    real,
                    id: None,
                });
            }
            Err(e) => return Err(e),
        };
        let st = fstat(fd.as_raw_fd())?;
        let is_link = st.st_mode & libc::S_IFMT == libc::S_IFLNK;
        if is_link && (!last || follow_final) {
            links += 1;
            if links > MAX_LINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            // A magic link is not a name: it is never followed.
            if on_procfs(fd.as_raw_fd()) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{}: links under /proc are not followed", path.display()),
                ));
            }
            let target = read_link(fd.as_raw_fd())?;
            let target = Path::new(&target);
            if target.is_absolute() {
                stack.truncate(1);
            }
            for c in components(target).into_iter().rev() {
                queue.push_front(c);
            }
            continue;
        }
        if !last {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        if trailing_slash && st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        let (dir, real) = top(&stack, Some(&comp))?;
        return Ok(Entry {
            dir,
            name: cname,
            real,
            id: Some((st.st_dev, st.st_ino, st.st_mode)),
        });
    }
    // The path ended at a directory reached by `..` (or is `/`): the entry is
    // that directory itself, as `.` of it.
    let (dir, real) = top(&stack, None)?;
    let st = fstat(dir.as_raw_fd())?;
    Ok(Entry {
        dir,
        name: c".".into(),
        real,
        id: Some((st.st_dev, st.st_ino, st.st_mode)),
    })
}

/// The lexical form of an absolute path (`.` and empty components dropped, `..`
/// applied): what [`Entry::real`] is when no symlink was on the way.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

impl Entry {
    /// The canonical path of the entry (no symlink, no `.` or `..`): what a
    /// decision about this access must be made on.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// True when the entry existed when it was resolved.
    pub fn exists(&self) -> bool {
        self.id.is_some()
    }

    /// The entry's `st_mode` (type and permission bits) when it was resolved.
    pub fn mode(&self) -> Option<u32> {
        self.id.map(|(_, _, mode)| mode)
    }

    /// True when the entry was a directory when it was resolved.
    pub fn is_dir(&self) -> bool {
        self.id
            .is_some_and(|(_, _, mode)| mode & libc::S_IFMT == libc::S_IFDIR)
    }

    /// True when the entry was a regular file when it was resolved.
    pub fn is_file(&self) -> bool {
        self.id
            .is_some_and(|(_, _, mode)| mode & libc::S_IFMT == libc::S_IFREG)
    }

    /// True when the entry itself is a symlink (resolved without following it).
    pub fn is_symlink(&self) -> bool {
        self.id
            .is_some_and(|(_, _, mode)| mode & libc::S_IFMT == libc::S_IFLNK)
    }

    /// Opens the entry with `flags` (`O_CLOEXEC` and `O_NOFOLLOW` are added;
    /// `mode` for a created file). The file opened must be the one resolved: a
    /// missing entry is created exclusively, an existing one must keep its
    /// device and inode; otherwise the error satisfies [`is_changed`]. `O_TRUNC`
    /// is applied only after that check. A file on procfs is refused.
    pub fn open(&self, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
        let trunc = flags & libc::O_TRUNC != 0;
        let mut flags = (flags & !libc::O_TRUNC) | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        if self.id.is_some() {
            if flags & libc::O_EXCL != 0 {
                return Err(io::Error::from_raw_os_error(libc::EEXIST));
            }
            flags &= !libc::O_CREAT;
        } else if flags & libc::O_CREAT != 0 {
            flags |= libc::O_EXCL;
        }
        let fd = match open_at_mode(self.dir.as_raw_fd(), &self.name, flags, mode) {
            Ok(fd) => fd,
            // The name appeared, vanished or became a symlink since the walk.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EEXIST | libc::ELOOP | libc::ENOENT)
                ) && (self.id.is_some() || flags & libc::O_CREAT != 0) =>
            {
                return Err(
                    if e.raw_os_error() == Some(libc::ENOENT) && self.id.is_none() {
                        e
                    } else {
                        changed()
                    },
                );
            }
            Err(e) => return Err(e),
        };
        if let Some((dev, ino, _)) = self.id {
            let st = fstat(fd.as_raw_fd())?;
            if st.st_dev != dev || st.st_ino != ino {
                return Err(changed());
            }
        }
        if on_procfs(fd.as_raw_fd()) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{}: files under /proc cannot be opened",
                    self.real.display()
                ),
            ));
        }
        let file = File::from(fd);
        // (As the kernel's O_TRUNC: only a regular file is truncated; a device
        // or a FIFO is opened as it is.)
        if trunc && self.is_file() {
            file.set_len(0)?;
        }
        Ok(file)
    }

    /// Removes the entry's name (`unlinkat`; a directory with `dir`). The name is
    /// removed from the directory that was resolved, whatever it names now.
    pub fn remove(&self, dir: bool) -> io::Result<()> {
        let flag = if dir { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: a held directory fd and a NUL-terminated name.
        cvt(unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), flag) })
    }

    /// Creates a directory at the entry's name.
    pub fn create_dir(&self, mode: libc::mode_t) -> io::Result<()> {
        // SAFETY: a held directory fd and a NUL-terminated name.
        cvt(unsafe { libc::mkdirat(self.dir.as_raw_fd(), self.name.as_ptr(), mode) })
    }

    /// Renames this entry to `to` (`renameat`; neither name is followed).
    pub fn rename_to(&self, to: &Entry) -> io::Result<()> {
        // SAFETY: held directory fds and NUL-terminated names.
        cvt(unsafe {
            libc::renameat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                to.dir.as_raw_fd(),
                to.name.as_ptr(),
            )
        })
    }

    /// Makes a hard link to this entry (not followed) at `to`.
    pub fn hard_link_to(&self, to: &Entry) -> io::Result<()> {
        // SAFETY: held directory fds and NUL-terminated names.
        cvt(unsafe {
            libc::linkat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                to.dir.as_raw_fd(),
                to.name.as_ptr(),
                0,
            )
        })
    }

    /// Creates a symlink holding `target` at the entry's name.
    pub fn symlink(&self, target: &OsStr) -> io::Result<()> {
        let t = cstring(target)?;
        // SAFETY: a held directory fd and NUL-terminated strings.
        cvt(unsafe { libc::symlinkat(t.as_ptr(), self.dir.as_raw_fd(), self.name.as_ptr()) })
    }

    /// Reads the entry's symlink target.
    pub fn read_link(&self) -> io::Result<OsString> {
        let fd = open_at(
            self.dir.as_raw_fd(),
            &self.name,
            libc::O_PATH | libc::O_NOFOLLOW,
        )?;
        read_link(fd.as_raw_fd())
    }

    /// Changes the entry's permission bits. The entry (resolved with its final
    /// symlink followed, or a symlink's target never) is the file changed: it is
    /// held (`O_PATH | O_NOFOLLOW`, same inode as resolved) and changed through
    /// its descriptor.
    pub fn set_mode(&self, mode: libc::mode_t) -> io::Result<()> {
        let fd = open_at(
            self.dir.as_raw_fd(),
            &self.name,
            libc::O_PATH | libc::O_NOFOLLOW,
        )?;
        let st = fstat(fd.as_raw_fd())?;
        if let Some((dev, ino, _)) = self.id
            && (st.st_dev != dev || st.st_ino != ino)
        {
            return Err(changed());
        }
        if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            // (Linux has no permission bits on a symlink to change.)
            return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        }
        // The descriptor's own name in procfs is the file held, whatever its path
        // names now (`fchmod` does not take an `O_PATH` descriptor).
        let by_fd = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a NUL-terminated path.
        match cvt(unsafe { libc::chmod(by_fd.as_ptr(), mode) }) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                // No procfs: the name, checked just above not to be a symlink.
                // SAFETY: a held directory fd and a NUL-terminated name.
                cvt(unsafe { libc::fchmodat(self.dir.as_raw_fd(), self.name.as_ptr(), mode, 0) })
            }
            r => r,
        }
    }

    /// Sets the entry's access and modification times (`utimensat` without
    /// following the name: the entry is what was resolved).
    pub fn set_times(&self, times: [libc::timespec; 2]) -> io::Result<()> {
        // SAFETY: a held directory fd, a NUL-terminated name, two timespecs.
        cvt(unsafe {
            libc::utimensat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                times.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        })
    }

    /// Changes the entry's owner and group (`fchownat` without following the
    /// name: the entry is what was resolved).
    pub fn chown(&self, uid: u32, gid: u32) -> io::Result<()> {
        // SAFETY: a held directory fd and a NUL-terminated name.
        cvt(unsafe {
            libc::fchownat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                uid,
                gid,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        })
    }

    /// The entry's metadata, without following its name.
    pub fn metadata(&self) -> io::Result<libc::stat> {
        let fd = open_at(
            self.dir.as_raw_fd(),
            &self.name,
            libc::O_PATH | libc::O_NOFOLLOW,
        )?;
        fstat(fd.as_raw_fd())
    }
}

/// The entry names of the directory `path` (without `.` and `..`, unsorted),
/// read from the directory the walk reached: when that is another than the
/// name says (a symlink on the way), `decide` is asked about its canonical
/// path first. A listing by name checked and then reopened by name would list
/// whatever a flipped symlink points at then.
pub fn read_dir_names(
    path: &Path,
    mut decide: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<Vec<OsString>> {
    let lexical = lexical(path);
    let mut last = None;
    for _ in 0..crate::open::RETRIES {
        let entry = resolve(path, true)?;
        if entry.real() != lexical {
            decide(entry.real())?;
        }
        match entry.open(libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            Ok(dir) => return list(OwnedFd::from(dir)),
            Err(e) if is_changed(&e) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(changed))
}

/// The metadata of the entry at `path` (its final symlink followed with
/// `follow`), read from the entry the walk reached: when that is another than
/// the name says (a symlink on the way), `decide` is asked about its canonical
/// path first. A stat by name after a check by name would show a flipped
/// symlink's target (an outside file's size, times, owner).
pub fn metadata(
    path: &Path,
    follow: bool,
    mut decide: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<std::fs::Metadata> {
    let lexical = lexical(path);
    let mut last = None;
    for _ in 0..crate::open::RETRIES {
        let entry = resolve(path, follow)?;
        if entry.real() != lexical {
            decide(entry.real())?;
        }
        if !entry.exists() {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        // (Metadata only: held with O_PATH, the entry resolved or nothing.)
        let fd = match open_at(
            entry.dir.as_raw_fd(),
            &entry.name,
            libc::O_PATH | libc::O_NOFOLLOW,
        ) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                last = Some(changed());
                continue;
            }
            Err(e) => return Err(e),
        };
        let st = fstat(fd.as_raw_fd())?;
        match entry.id {
            Some((dev, ino, _)) if st.st_dev == dev && st.st_ino == ino => {
                return File::from(fd).metadata();
            }
            _ => last = Some(changed()),
        }
    }
    Err(last.unwrap_or_else(changed))
}

/// The names in the open directory `fd` (consumed).
fn list(fd: OwnedFd) -> io::Result<Vec<OsString>> {
    use std::os::fd::IntoRawFd;
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` is an open directory descriptor, owned from here by the
    // DIR stream (closed by closedir below, or here when fdopendir fails).
    let dir = unsafe { libc::fdopendir(raw) };
    if dir.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `raw` is still ours to close.
        unsafe { libc::close(raw) };
        return Err(e);
    }
    let mut names = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; cleared to tell the end from an error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `dir` is a valid DIR stream until closedir.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            let e = io::Error::last_os_error();
            break if e.raw_os_error().unwrap_or(0) == 0 {
                Ok(())
            } else {
                Err(e)
            };
        }
        // SAFETY: `ent` points at a dirent whose d_name is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
        if name != b"." && name != b".." {
            names.push(OsString::from_vec(name.to_vec()));
        }
    };
    // SAFETY: `dir` is a valid DIR stream, closed once.
    unsafe { libc::closedir(dir) };
    result.map(|()| names)
}

/// The components of a path as the walk takes them (`.` and empty ones dropped).
fn components(p: &Path) -> VecDeque<OsString> {
    p.as_os_str()
        .as_bytes()
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(|c| OsString::from_vec(c.to_vec()))
        .collect()
}

/// The top directory of the walk (duplicated) and the canonical path of `name`
/// in it (of the directory itself without a name).
fn top(stack: &[(OwnedFd, OsString)], name: Option<&OsString>) -> io::Result<(OwnedFd, PathBuf)> {
    let mut real = PathBuf::from("/");
    for (_, n) in stack.iter().skip(1) {
        real.push(n);
    }
    if let Some(n) = name {
        real.push(n);
    }
    let fd = stack
        .last()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?
        .0
        .try_clone()?;
    Ok((fd, real))
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn cvt(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn open_at(dir: RawFd, name: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    open_at_mode(dir, name, flags, 0)
}

fn open_at_mode(
    dir: RawFd,
    name: &std::ffi::CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    loop {
        // SAFETY: `dir` is a held directory fd (or AT_FDCWD) and `name` is
        // NUL-terminated; the flags and mode are plain integers.
        let fd = unsafe {
            libc::openat(
                dir,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                libc::c_uint::from(mode),
            )
        };
        if fd >= 0 {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `st` a valid out-buffer.
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

/// The target of the symlink held by `fd` (an `O_PATH | O_NOFOLLOW` descriptor).
fn read_link(fd: RawFd) -> io::Result<OsString> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `fd` is open; the empty path names it; `buf` is writable for its length.
    let n = unsafe { libc::readlinkat(fd, c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

/// True when `fd` lives on procfs.
pub(crate) fn on_procfs(fd: RawFd) -> bool {
    // SAFETY: an all-zero statfs is a valid out-buffer for fstatfs.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor and `st` a valid out-buffer.
    let r = unsafe { libc::fstatfs(fd, &mut st) };
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as libc::c_long;
    r == 0 && magic == PROC_SUPER_MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    #[test]
    fn symlinks_resolve_to_their_canonical_path() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let Ok(base) = dir.path().canonicalize() else {
            return;
        };
        let a = base.join("a");
        let _ = std::fs::create_dir_all(a.join("b"));
        let _ = std::fs::write(a.join("b/f"), "x");
        let _ = symlink("a/b", base.join("rel"));
        let _ = symlink(a.join("b"), base.join("abs"));
        let _ = symlink("f", a.join("b/lf"));
        for p in ["rel/f", "abs/f", "abs/lf", "a/b/../b/f", "rel/../b/f"] {
            let e = resolve(&base.join(p), true);
            assert_eq!(
                e.as_ref().map(|e| e.real().to_path_buf()).ok(),
                Some(a.join("b/f")),
                "{p}"
            );
        }
        let mut s = String::new();
        let r = resolve(&base.join("rel/lf"), true)
            .and_then(|e| e.open(libc::O_RDONLY, 0))
            .and_then(|mut f| f.read_to_string(&mut s));
        assert!(r.is_ok());
        assert_eq!(s, "x");
        // Not following the final link: the link itself.
        let e = resolve(&base.join("abs/lf"), false);
        assert!(e.is_ok_and(|e| e.is_symlink() && e.real() == a.join("b/lf")));
        // A missing final name resolves (to be created); a missing directory does not.
        let e = resolve(&base.join("rel/new"), true);
        assert!(e.is_ok_and(|e| !e.exists() && e.real() == a.join("b/new")));
        assert!(resolve(&base.join("nope/new"), true).is_err());
        assert_eq!(lexical(Path::new("/x/./y/../z/")), PathBuf::from("/x/z"));
    }

    #[test]
    fn a_name_replaced_after_the_walk_is_not_opened() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let f = dir.path().join("f");
        let outside = dir.path().join("outside");
        let _ = std::fs::write(&f, "in");
        let _ = std::fs::write(&outside, "out");
        let Ok(e) = resolve(&f, true) else {
            return;
        };
        // Flip after the decision: `f` becomes a symlink to another file.
        let _ = std::fs::remove_file(&f);
        let _ = symlink(&outside, &f);
        let r = e.open(libc::O_WRONLY | libc::O_APPEND, 0);
        assert!(r.as_ref().is_err_and(is_changed), "{r:?}");
        // A file created in between is not taken either (exclusive create).
        let _ = std::fs::remove_file(&f);
        let Ok(e) = resolve(&f, true) else {
            return;
        };
        let _ = std::fs::write(&f, "other");
        let r = e.open(libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
        assert!(r.as_ref().is_err_and(is_changed), "{r:?}");
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some("out")
        );
        assert_eq!(std::fs::read_to_string(&f).ok().as_deref(), Some("other"));
        // Truncation happens only on the file resolved.
        let Ok(e) = resolve(&f, true) else {
            return;
        };
        let r = e
            .open(libc::O_WRONLY | libc::O_TRUNC, 0)
            .and_then(|mut w| w.write_all(b"new"));
        assert!(r.is_ok());
        assert_eq!(std::fs::read_to_string(&f).ok().as_deref(), Some("new"));
    }

    #[test]
    fn listings_are_of_the_directory_decided_on() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let Ok(base) = dir.path().canonicalize() else {
            return;
        };
        let _ = std::fs::create_dir_all(base.join("in"));
        let _ = std::fs::create_dir_all(base.join("out"));
        let _ = std::fs::write(base.join("in/a"), "");
        let _ = std::fs::write(base.join("out/secret"), "");
        let _ = symlink(base.join("out"), base.join("d"));
        let got = read_dir_names(&base.join("d"), |real| {
            if real.starts_with(base.join("out")) {
                Err(io::Error::from(io::ErrorKind::PermissionDenied))
            } else {
                Ok(())
            }
        });
        assert!(got.is_err());
        let got = read_dir_names(&base.join("in"), |_| Ok(()));
        assert_eq!(got.ok(), Some(vec![OsString::from("a")]));
    }

    #[test]
    fn procfs_links_are_not_followed() {
        assert!(resolve(Path::new("/proc/self/fd/1"), true).is_err());
        assert!(resolve(Path::new("/proc/self/cwd/x"), true).is_err());
        let e = resolve(Path::new("/proc/self/environ"), true);
        assert!(e.is_err() || e.is_ok_and(|e| e.open(libc::O_RDONLY, 0).is_err()));
    }
}
