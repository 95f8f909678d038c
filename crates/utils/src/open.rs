//! Opening a path that has been checked: the kernel resolves it again, so the
//! open itself must not land anywhere a check would have refused. A magic link
//! (`/proc/self/fd/N`, `/proc/self/cwd`, …) is never followed — a symlink flipped
//! between the check and the open cannot reach safesh's own protocol pipes,
//! label store or audit log — and a file on procfs is never returned (the
//! process's environment, memory, …). Descriptors are close-on-exec.

use std::fs::File;
use std::io;
use std::path::Path;

/// Opens `path` with `flags` (`O_RDONLY`, `O_WRONLY | O_CREAT | O_TRUNC`, …;
/// `O_CLOEXEC` is added) and `mode` for a created file, resolved by
/// [`crate::beneath::resolve`] (no symlink followed by the kernel, no magic
/// link followed at all), and refuses a file on procfs. Callers that decided on
/// the name use [`open_decided`] so that the decision also holds for the file
/// actually opened.
pub fn open_path(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
    open_decided(path, flags, mode, |_| Ok(()))
}

/// [`open_path`] for a path already decided on by name: when the file the
/// walk reaches has another canonical path than the name's lexical form (a
/// symlink on the way), `decide` is asked about that canonical path before
/// anything is opened. A change between the walk and the open (a flipped
/// symlink) walks and decides again, a bounded number of times.
pub fn open_decided(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
    decide: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<File> {
    open_resolved(path, flags, mode, decide).map(|(f, _)| f)
}

/// [`open_decided`], also returning the canonical path of the file opened.
pub fn open_resolved(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
    mut decide: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<(File, std::path::PathBuf)> {
    let path = &absolute(path)?;
    // `O_CREAT | O_EXCL` does not follow a final symlink (the kernel fails).
    let follow = flags & (libc::O_CREAT | libc::O_EXCL) != (libc::O_CREAT | libc::O_EXCL);
    let lexical = crate::beneath::lexical(path);
    let mut last = None;
    for _ in 0..RETRIES {
        let entry = crate::beneath::resolve(path, follow)?;
        // No symlink on the way: the file reached is the one at the name's
        // lexical path, which the name's check covered (it checks the lexical
        // form and the resolved one; the directories on that path were real
        // ones when walked, and only a write root's can be made by a script).
        if entry.real() != lexical {
            decide(entry.real())?;
        }
        match entry.open(flags, mode) {
            Err(e) if crate::beneath::is_changed(&e) => last = Some(e),
            r => return r.map(|f| (f, entry.real().to_path_buf())),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ESTALE)))
}

/// Walks and decisions tried when the entry keeps changing under the open.
pub(crate) const RETRIES: usize = 8;

/// `path` made absolute against the working directory (the walk needs a start).
fn absolute(path: &Path) -> io::Result<std::path::PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// [`open_decided`] for reading.
pub fn open_read_decided(
    path: &Path,
    decide: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<File> {
    open_decided(path, libc::O_RDONLY, 0, decide)
}

/// [`open_path`] for reading.
pub fn open_read_only(path: &Path) -> io::Result<File> {
    open_path(path, libc::O_RDONLY, 0)
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
