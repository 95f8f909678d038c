//! What can go wrong with a checkpoint.

use std::path::PathBuf;

/// A checkpoint operation that failed; nothing half-done is left visible.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A name that cannot be a checkpoint name (a path, empty, too long).
    #[error("invalid checkpoint name {name:?}: {why}")]
    BadName {
        /// The name given.
        name: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// No checkpoint of that name for this project.
    #[error("no checkpoint named {0:?}")]
    NotFound(String),
    /// A checkpoint of that name exists already.
    #[error("a checkpoint named {0:?} exists already")]
    Exists(String),
    /// The tree holds more than the configured limit.
    #[error(
        "the tree holds {bytes} bytes in {files} files, over the checkpoint limit of {limit} bytes"
    )]
    TooLarge {
        /// Bytes of regular files seen.
        bytes: u64,
        /// Files seen.
        files: u64,
        /// `[checkpoints] max_bytes`.
        limit: u64,
    },
    /// A path outside the roots the checkpoint was made of.
    #[error("{0} is outside the checkpoint's roots")]
    Outside(PathBuf),
    /// A manifest or object that does not read back as written.
    #[error("the checkpoint store is damaged at {path}: {why}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// An I/O error on a path.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl CheckpointError {
    pub(crate) fn io(what: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        CheckpointError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}
