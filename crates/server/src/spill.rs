//! Bounds on the files that hold full outputs: spill files (`<state>/spill`) and
//! job logs (`<state>/jobs`), each under its owner's directory
//! ([`crate::owner::scope_dir`]). One file holds at most
//! [`Settings::spill_max_bytes`] (the writer stops there and says so; totals
//! still count every byte); before a new one is opened, files past the
//! retention are removed, and then the oldest until both directories together
//! leave room for one more full file under [`Settings::spill_total_bytes`].

use crate::settings::Settings;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A full-output file at most this large by default (64 MiB).
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Spill files and job logs together at most this large by default (1 GiB).
pub const DEFAULT_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// How much the full-output files may hold.
#[derive(Clone, Debug)]
pub struct SpillLimits {
    /// Bytes one file keeps.
    pub max_bytes: u64,
    /// Bytes all of them keep together (spill files and job logs).
    pub total_bytes: u64,
    /// Files older than this are removed.
    pub retention: Duration,
    /// The directories that share `total_bytes` (`spill`, `jobs`).
    pub roots: Vec<PathBuf>,
}

impl SpillLimits {
    /// The limits of `settings`.
    pub fn of(settings: &Settings) -> SpillLimits {
        SpillLimits {
            max_bytes: settings.spill_max_bytes,
            total_bytes: settings.spill_total_bytes,
            retention: settings.spill_retention,
            roots: vec![settings.spill_dir(), settings.jobs_dir()],
        }
    }
}

/// Before a new file: removes expired files, then the oldest ones until one
/// more full file fits.
pub fn make_room(settings: &Settings) {
    make_room_in(&SpillLimits::of(settings));
}

/// [`make_room`] for explicit limits.
pub fn make_room_in(limits: &SpillLimits) {
    let now = SystemTime::now();
    let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    for root in &limits.roots {
        collect(root, 0, &mut files);
    }
    let mut total = 0u64;
    files.retain(|(modified, size, path)| {
        let age = now.duration_since(*modified).unwrap_or_default();
        if age > limits.retention {
            let _ = std::fs::remove_file(path);
            return false;
        }
        total = total.saturating_add(*size);
        true
    });
    let budget = limits.total_bytes.saturating_sub(limits.max_bytes);
    if total > budget {
        files.sort_by_key(|(modified, _, _)| *modified);
        for (_, size, path) in files {
            if total <= budget {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }
    // Owner directories left empty go too (one per session or connection).
    for root in &limits.roots {
        if let Ok(entries) = std::fs::read_dir(root) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        }
    }
}

/// Regular files under `dir` (and one level of owner directories), with
/// their modification time and size; symlinks are not followed.
fn collect(dir: &Path, depth: usize, out: &mut Vec<(SystemTime, u64, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() && depth == 0 {
            collect(&e.path(), depth + 1, out);
        } else if meta.is_file() {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push((modified, meta.len(), e.path()));
        }
    }
}

/// Opens a new spill file (mode 0600) after making room for it (expired and,
/// past the total, the oldest files removed: [`make_room_in`]).
pub fn open(dir: &Path, limits: &SpillLimits) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    make_room_in(limits);
    let path = dir.join(format!("{}.log", crate::ids::unique("out")));
    let open = || {
        crate::settings::private_dir(dir)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
    };
    // Another request's sweep may remove the (empty) owner dir in between.
    let f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => open()?,
        r => r?,
    };
    Ok((path, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_files_go_until_one_more_fits() {
        let d = tempfile::tempdir().expect("tempdir");
        let owner = d.path().join("spill").join("c-1");
        std::fs::create_dir_all(&owner).expect("mkdir");
        for (i, name) in ["a", "b", "c"].iter().enumerate() {
            std::fs::write(owner.join(name), vec![b'x'; 100]).expect("write");
            let t = SystemTime::now() - Duration::from_secs(100 - i as u64);
            let f = std::fs::File::options()
                .write(true)
                .open(owner.join(name))
                .expect("open");
            f.set_modified(t).expect("mtime");
        }
        make_room_in(&SpillLimits {
            max_bytes: 100,
            total_bytes: 300,
            retention: Duration::from_secs(3600),
            roots: vec![d.path().join("spill"), d.path().join("jobs")],
        });
        assert!(!owner.join("a").exists(), "the oldest file went");
        assert!(owner.join("b").exists() && owner.join("c").exists());
    }
}
