//! The errors of the store and the audit log.

use std::io;
use std::path::PathBuf;

/// Why a state-store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or directory of the state dir could not be created, opened or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done (`opening`, `writing`…).
        what: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The label database exists but is not a readable SQLite database of ours.
    #[error(
        "label store {path} is corrupt or not a safesh label store ({detail}); \
         move it aside to start a new one (files safesh labeled lose their labels)"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the decoder said.
        detail: String,
    },
    /// Any other SQLite failure (busy past the timeout, disk full…).
    #[error("label store {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// Paths in the store must be absolute (the caller resolves them first).
    #[error("label store keys must be absolute paths, got {0}")]
    RelativePath(PathBuf),
    /// The operation needs a file that does not exist.
    #[error("{0}: no such file")]
    NotFound(PathBuf),
    /// A labeled file cannot be moved onto a directory: pass its final path.
    #[error("{0}: is a directory (pass the moved file's final path)")]
    IsDirectory(PathBuf),
    /// `write(2)` wrote only part of an audit line (disk full, quota).
    #[error("audit log {path}: short write ({written} of {len} bytes)")]
    ShortWrite {
        /// The audit log.
        path: PathBuf,
        /// Bytes written.
        written: usize,
        /// Bytes in the line.
        len: usize,
    },
    /// The secret values could not be compiled into a matcher (far too many).
    #[error("building the redactor: {0}")]
    Redactor(String),
    /// An entry could not be encoded as JSON (should not happen).
    #[error("encoding {what}: {source}")]
    Encode {
        /// What was encoded.
        what: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
}

impl StoreError {
    /// An I/O error about `path`.
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            what,
            path: path.into(),
            source,
        }
    }
}

impl StoreError {
    /// Whether this is SQLite reporting another process's lock.
    pub fn is_busy(&self) -> bool {
        matches!(self, StoreError::Sqlite { source, .. } if crate::busy::is_busy(source))
    }
}
