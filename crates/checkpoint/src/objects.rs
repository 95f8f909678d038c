//! File contents, stored once each under their sha256 (`objects/ab/cdef…`).
//! Written to a temporary name and renamed, so a reader (or a save killed half
//! way) never sees a partial object.

use crate::error::CheckpointError;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The content store under `dir`.
pub(crate) struct Objects {
    dir: PathBuf,
}

static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl Objects {
    pub(crate) fn new(dir: PathBuf) -> Objects {
        Objects { dir }
    }

    pub(crate) fn path(&self, hash: &str) -> PathBuf {
        let (a, b) = hash.split_at(2.min(hash.len()));
        self.dir.join(a).join(b)
    }

    pub(crate) fn has(&self, hash: &str) -> bool {
        self.path(hash).is_file()
    }

    /// Reads `file` whole, stores its content if new; returns its hash.
    pub(crate) fn put_file(&self, file: &Path) -> Result<String, CheckpointError> {
        let mut data = Vec::new();
        std::fs::File::open(file)
            .and_then(|mut f| f.read_to_end(&mut data))
            .map_err(|e| CheckpointError::io("reading", file, e))?;
        let hash = hex(&Sha256::digest(&data));
        if !self.has(&hash) {
            self.write(&hash, &data)?;
        }
        Ok(hash)
    }

    fn write(&self, hash: &str, data: &[u8]) -> Result<(), CheckpointError> {
        let dest = self.path(hash);
        let parent = dest.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(|e| CheckpointError::io("creating", parent, e))?;
        let tmp = parent.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            TMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(data));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(CheckpointError::io("writing", &tmp, e));
        }
        std::fs::rename(&tmp, &dest).map_err(|e| CheckpointError::io("storing", &dest, e))
    }

    /// The content stored under `hash`, checked against its size.
    pub(crate) fn read(&self, hash: &str, size: u64) -> Result<Vec<u8>, CheckpointError> {
        let p = self.path(hash);
        let data = std::fs::read(&p).map_err(|e| CheckpointError::io("reading", &p, e))?;
        if data.len() as u64 != size {
            return Err(CheckpointError::Damaged {
                path: p,
                why: format!("{} bytes where {size} were saved", data.len()),
            });
        }
        Ok(data)
    }

    /// Removes every object whose hash is not in `keep`.
    pub(crate) fn retain(&self, keep: &std::collections::HashSet<String>) {
        let Ok(dirs) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for d in dirs.flatten() {
            let prefix = d.file_name().to_string_lossy().into_owned();
            let Ok(files) = std::fs::read_dir(d.path()) else {
                continue;
            };
            for f in files.flatten() {
                let rest = f.file_name().to_string_lossy().into_owned();
                if rest.starts_with(".tmp-") || !keep.contains(&format!("{prefix}{rest}")) {
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
    }
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
