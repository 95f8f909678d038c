//! Files written in-process, bound by `[limits] file_size_mb` as an external
//! program is by `RLIMIT_FSIZE`: no write makes a file larger than the limit.
//! The bytes up to the limit are written, then the write fails and the host
//! hears of it ([`FileLimit::hit`]) to stop the script with `LIMIT_EXCEEDED`.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::sync::Arc;

/// The largest size a file written in-process may reach, and what to do when a
/// write would pass it.
#[derive(Clone)]
pub struct FileLimit {
    /// The limit in bytes.
    pub bytes: u64,
    /// Called once a write would pass the limit: records the refusal and
    /// returns the error the write fails with.
    pub hit: Arc<dyn Fn() -> io::Error + Send + Sync>,
}

impl std::fmt::Debug for FileLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLimit")
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl FileLimit {
    /// How many of `want` bytes may still be written to `file` (opened with
    /// `O_APPEND` when `append`): the limit minus where the write would start.
    pub fn room(&self, file: &mut File, append: bool, want: usize) -> io::Result<usize> {
        let at = if append {
            file.metadata()?.len()
        } else {
            file.stream_position()?
        };
        let left = self.bytes.saturating_sub(at);
        Ok(usize::try_from(left).unwrap_or(usize::MAX).min(want))
    }

    /// Writes what fits of `buf` to `file`; fails through [`FileLimit::hit`]
    /// when nothing more fits.
    pub fn write(&self, file: &mut File, append: bool, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.room(file, append, buf.len())?;
        if n == 0 {
            return Err((self.hit)());
        }
        file.write(&buf[..n])
    }
}

/// A file a utility opened for writing ([`crate::open_write`]): writes go
/// through the host's file size limit. The [`File`] itself is reachable only
/// for metadata and permissions, never for writing around the limit.
#[derive(Debug)]
pub struct WriteFile {
    file: File,
    append: bool,
    limit: Option<FileLimit>,
}

impl WriteFile {
    /// `file`, opened with `O_APPEND` when `append`, bound by `limit`.
    pub fn new(file: File, append: bool, limit: Option<FileLimit>) -> WriteFile {
        WriteFile {
            file,
            append,
            limit,
        }
    }

    /// The open file, for metadata and permissions.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Sets the file's permissions.
    pub fn set_permissions(&self, perm: std::fs::Permissions) -> io::Result<()> {
        self.file.set_permissions(perm)
    }

    /// The file's metadata.
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.file.metadata()
    }
}

impl Write for WriteFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &self.limit {
            Some(l) => l.write(&mut self.file, self.append, buf),
            None => self.file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn writes_stop_at_the_limit_and_say_so() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let p = dir.path().join("f");
        let Ok(f) = File::create(&p) else {
            return;
        };
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let limit = FileLimit {
            bytes: 10,
            hit: Arc::new(move || {
                h.fetch_add(1, Ordering::Relaxed);
                io::Error::from_raw_os_error(libc::EFBIG)
            }),
        };
        let mut w = WriteFile::new(f, false, Some(limit.clone()));
        assert!(w.write_all(b"0123456").is_ok());
        assert!(w.write_all(b"789abc").is_err());
        assert_eq!(std::fs::read(&p).ok().as_deref(), Some(&b"0123456789"[..]));
        assert_eq!(hits.load(Ordering::Relaxed), 1);
        // Appending to a file already at the limit writes nothing.
        let Ok(f) = std::fs::OpenOptions::new().append(true).open(&p) else {
            return;
        };
        let mut w = WriteFile::new(f, true, Some(limit));
        assert!(w.write_all(b"x").is_err());
        assert_eq!(std::fs::metadata(&p).map(|m| m.len()).ok(), Some(10));
    }
}
