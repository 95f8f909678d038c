//! A snapshot of one root: every directory, regular file and symlink under it,
//! minus the excluded and protected paths, never following symlinks.

use crate::error::CheckpointError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What one path is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A directory and its permission bits.
    Dir {
        /// Permission bits (`0o7777`).
        mode: u32,
    },
    /// A regular file.
    File {
        /// Permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
        /// Content address (sha256, hex).
        hash: String,
        /// Its label at save time (JSON, as the label store writes it), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// A symbolic link and where it points (never followed).
    Symlink {
        /// The target, as stored in the link (bytes, see [`RelPath`]).
        target: RelPath,
    },
}

/// A path relative to a root, kept exactly: UTF-8 text when it is, the raw bytes
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RelPath {
    /// A path that is valid UTF-8.
    Text(String),
    /// A path that is not.
    Bytes {
        /// Its bytes.
        bytes: Vec<u8>,
    },
}

impl RelPath {
    /// From an OS path.
    pub fn from_os(p: &OsStr) -> RelPath {
        match p.to_str() {
            Some(s) => RelPath::Text(s.to_string()),
            None => RelPath::Bytes {
                bytes: p.as_bytes().to_vec(),
            },
        }
    }

    /// As an OS path.
    pub fn to_path(&self) -> PathBuf {
        match self {
            RelPath::Text(s) => PathBuf::from(s),
            RelPath::Bytes { bytes } => PathBuf::from(OsStr::from_bytes(bytes)),
        }
    }

    /// For display (lossy for non-UTF-8 names).
    pub fn display(&self) -> String {
        self.to_path().to_string_lossy().into_owned()
    }
}

/// The identity of a file's content at save time, to skip re-reading unchanged
/// files on the next save.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Inode number.
    pub ino: u64,
    /// Size.
    pub size: u64,
    /// Modification time (ns since the epoch).
    pub mtime_ns: i128,
    /// Change time (ns since the epoch).
    pub ctime_ns: i128,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }
}

/// One path of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative to the root.
    pub path: RelPath,
    /// What it is.
    #[serde(flatten)]
    pub kind: Kind,
    /// For regular files: the stamp the hash was taken at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
}

/// What a walk leaves out.
pub struct Filter<'a> {
    /// `[checkpoints] exclude`: `name/` excludes a directory of that name at any
    /// depth; `a/b/` (with an inner slash) the directory at that path from the
    /// root; a pattern without a trailing slash, files or directories of that
    /// name at any depth.
    pub exclude: &'a [String],
    /// Paths never saved, restored or removed (safesh's config, protected paths,
    /// the session's temp dir), by absolute path.
    pub protected: &'a dyn Fn(&Path) -> bool,
}

impl Filter<'_> {
    fn excluded(&self, rel: &Path, is_dir: bool) -> bool {
        let text = rel.to_string_lossy();
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        self.exclude.iter().any(|pat| match pat.strip_suffix('/') {
            Some(dir) if dir.contains('/') => is_dir && text == dir,
            Some(dir) => is_dir && name == dir,
            None => name == pat.as_str(),
        })
    }
}

/// A walk's result: entries by relative path, and the bytes of regular files.
pub(crate) struct Walked {
    pub entries: BTreeMap<RelPath, (Kind, Option<Stamp>, std::fs::Metadata)>,
    pub bytes: u64,
    pub files: u64,
}

/// Walks `root` (which must be a directory) without following symlinks.
pub(crate) fn walk(root: &Path, filter: &Filter<'_>) -> Result<Walked, CheckpointError> {
    let mut out = Walked {
        entries: BTreeMap::new(),
        bytes: 0,
        files: 0,
    };
    let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd = std::fs::read_dir(&dir).map_err(|e| CheckpointError::io("listing", &dir, e))?;
        for ent in rd {
            let ent = ent.map_err(|e| CheckpointError::io("listing", &dir, e))?;
            let rel_child = rel.join(ent.file_name());
            let abs = root.join(&rel_child);
            if (filter.protected)(&abs) {
                continue;
            }
            // (From the directory's fd: no path resolved again; never follows.)
            let m = ent
                .metadata()
                .map_err(|e| CheckpointError::io("inspecting", &abs, e))?;
            let ft = m.file_type();
            if filter.excluded(&rel_child, ft.is_dir()) {
                continue;
            }
            let key = RelPath::from_os(rel_child.as_os_str());
            let mode = m.permissions().mode() & 0o7777;
            if ft.is_dir() {
                stack.push(rel_child);
                out.entries.insert(key, (Kind::Dir { mode }, None, m));
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&abs)
                    .map_err(|e| CheckpointError::io("reading the link", &abs, e))?;
                out.entries.insert(
                    key,
                    (
                        Kind::Symlink {
                            target: RelPath::from_os(target.as_os_str()),
                        },
                        None,
                        m,
                    ),
                );
            } else if ft.is_file() {
                out.bytes += m.size();
                out.files += 1;
                let stamp = Stamp::of(&m);
                out.entries.insert(
                    key,
                    (
                        Kind::File {
                            mode,
                            size: m.size(),
                            hash: String::new(),
                            label: None,
                        },
                        Some(stamp),
                        m,
                    ),
                );
            }
            // Sockets, fifos and devices are not project content.
        }
    }
    Ok(out)
}
