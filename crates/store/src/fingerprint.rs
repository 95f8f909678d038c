//! What a file looked like when safesh last wrote it.

use serde::{Deserialize, Serialize};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Identity and version of a file: enough to notice that it changed behind safesh's
/// back. Any write updates mtime and ctime; a replacement changes the inode.
///
/// Limit: timestamps come from the kernel's coarse clock (a few ms on ext4), so a
/// same-size overwrite within the same tick as safesh's own write can go unnoticed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
}

impl Fingerprint {
    /// Matches no file (no file has inode 0): the fingerprint of an entry recorded
    /// before its file was written.
    pub const NONE: Fingerprint = Fingerprint {
        dev: 0,
        ino: 0,
        size: 0,
        mtime_ns: 0,
        ctime_ns: 0,
    };

    /// The fingerprint of the file at `path` now (following symlinks).
    pub fn of(path: &Path) -> io::Result<Fingerprint> {
        let m = std::fs::metadata(path)?;
        Ok(Fingerprint {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }

    /// Same contents as far as a rename can tell: a rename changes the ctime of the
    /// renamed file, nothing else.
    pub fn same_ignoring_ctime(&self, other: &Fingerprint) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
    }
}

/// Seconds and nanoseconds as one ns count (saturating: dates past 2262 clamp).
fn ns(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}
