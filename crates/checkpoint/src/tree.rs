//! A snapshot of one root: every directory, regular file and symlink under it,
//! minus the excluded and protected paths, never following symlinks.

use crate::error::CheckpointError;
use crate::journal::Watcher;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

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

    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            RelPath::Text(s) => s.as_bytes(),
            RelPath::Bytes { bytes } => bytes,
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
    /// (`Sync`: a walk asks from several threads.)
    pub protected: &'a (dyn Fn(&Path) -> bool + Sync),
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

/// A walk's result: entries sorted by relative path, and the bytes of regular
/// files.
pub(crate) struct Walked {
    /// Every path kept, sorted (each once).
    pub entries: Vec<(RelPath, Kind, Option<Stamp>)>,
    pub bytes: u64,
    pub files: u64,
    /// Directories listed that hold a file with more than one link (a
    /// journal lists them at every save: a write through another link is
    /// not seen in them).
    pub linked: Vec<Vec<u8>>,
    /// Directories listed.
    pub dirs_listed: u64,
}

impl Walked {
    /// The entries by path.
    pub(crate) fn by_path(&self) -> BTreeMap<&RelPath, (&Kind, Option<Stamp>)> {
        self.entries.iter().map(|(p, k, s)| (p, (k, *s))).collect()
    }
}

/// Most threads a walk uses, whatever the cores.
const MAX_WALKERS: usize = 4;

/// Directories left to list, shared by a walk's threads.
struct Queue {
    /// Relative paths (bytes; empty: the root) not yet taken.
    dirs: Vec<Vec<u8>>,
    /// Directories being listed now (their subdirectories may still come).
    busy: usize,
    /// The first error: every thread stops.
    failed: Option<CheckpointError>,
}

struct Shared {
    queue: Mutex<Queue>,
    more: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next directory to list; `None` when all are listed (or one failed).
    fn take(&self) -> Option<Vec<u8>> {
        let mut q = self.lock();
        loop {
            if q.failed.is_some() {
                return None;
            }
            if let Some(d) = q.dirs.pop() {
                q.busy += 1;
                return Some(d);
            }
            if q.busy == 0 {
                return None;
            }
            q = self.more.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// A directory is listed: its subdirectories (or its error) join the queue.
    fn done(&self, found: Result<Vec<Vec<u8>>, CheckpointError>) {
        let mut q = self.lock();
        q.busy -= 1;
        match found {
            Ok(dirs) => q.dirs.extend(dirs),
            Err(e) => {
                q.failed.get_or_insert(e);
            }
        }
        self.more.notify_all();
    }
}

/// What one thread of a walk found.
#[derive(Default)]
pub(crate) struct Part {
    pub entries: Vec<(RelPath, Kind, Option<Stamp>)>,
    pub bytes: u64,
    pub files: u64,
    pub linked: Vec<Vec<u8>>,
    pub dirs_listed: u64,
}

impl Part {
    /// The walked result of parts: entries sorted.
    pub(crate) fn into_walked(parts: Vec<Part>) -> Walked {
        let mut out = Walked {
            entries: Vec::with_capacity(parts.iter().map(|p| p.entries.len()).sum()),
            bytes: 0,
            files: 0,
            linked: Vec::new(),
            dirs_listed: 0,
        };
        for p in parts {
            out.dirs_listed += p.dirs_listed;
            out.entries.extend(p.entries);
            out.bytes += p.bytes;
            out.files += p.files;
            out.linked.extend(p.linked);
        }
        // (Each path is found once: no two entries are equal.)
        out.entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Walks `root` (which must be a directory) without following symlinks.
///
/// On up to [`MAX_WALKERS`] threads, directories taken from a shared queue:
/// the walk is one `statx` per path (a save of an unchanged tree is mostly
/// this), and the kernel's work for them spreads over the cores. The result
/// does not depend on the threads: it is sorted. With a `watcher`, each
/// directory is watched before it is listed.
pub(crate) fn walk(
    root: &Path,
    filter: &Filter<'_>,
    watcher: Option<&Watcher>,
) -> Result<Walked, CheckpointError> {
    walk_under(root, vec![Vec::new()], filter, watcher)
}

/// Walks the directories `starts` of `root` (relative, bytes; `b""`: the
/// root) and everything under them: their entries, not themselves.
pub(crate) fn walk_under(
    root: &Path,
    starts: Vec<Vec<u8>>,
    filter: &Filter<'_>,
    watcher: Option<&Watcher>,
) -> Result<Walked, CheckpointError> {
    let shared = Shared {
        queue: Mutex::new(Queue {
            dirs: starts,
            busy: 0,
            failed: None,
        }),
        more: Condvar::new(),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WALKERS);
    let walk_part = || {
        let mut part = Part::default();
        while let Some(rel) = shared.take() {
            if let Some(w) = watcher {
                w.add(root, &rel);
            }
            shared.done(list_dir(root, &rel, filter, &mut part));
        }
        part
    };
    let parts: Vec<Part> = std::thread::scope(|scope| {
        // (A thread that cannot be made is no error: the others walk it all.)
        let others: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("safesh-walk".into())
                    .spawn_scoped(scope, walk_part)
                    .ok()
            })
            .collect();
        let mut parts = vec![walk_part()];
        for t in others {
            match t.join() {
                Ok(p) => parts.push(p),
                Err(_) => {
                    shared.lock().failed.get_or_insert(CheckpointError::io(
                        "listing",
                        root,
                        std::io::Error::other("a walker thread panicked"),
                    ));
                }
            }
        }
        parts
    });
    if let Some(e) = shared.lock().failed.take() {
        return Err(e);
    }
    Ok(Part::into_walked(parts))
}

/// Lists the directory `rel` of `root` into `part`; its subdirectories (to list).
pub(crate) fn list_dir(
    root: &Path,
    rel: &[u8],
    filter: &Filter<'_>,
    part: &mut Part,
) -> Result<Vec<Vec<u8>>, CheckpointError> {
    let dir = root.join(OsStr::from_bytes(rel));
    part.dirs_listed += 1;
    let rd = std::fs::read_dir(&dir).map_err(|e| CheckpointError::io("listing", &dir, e))?;
    let mut subdirs = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| CheckpointError::io("listing", &dir, e))?;
        let name = ent.file_name();
        let mut rel_child = Vec::with_capacity(rel.len() + 1 + name.len());
        if !rel.is_empty() {
            rel_child.extend_from_slice(rel);
            rel_child.push(b'/');
        }
        rel_child.extend_from_slice(name.as_bytes());
        let abs = dir.join(&name);
        if (filter.protected)(&abs) {
            continue;
        }
        // (From the directory's fd: no path resolved again; never follows.)
        let m = ent
            .metadata()
            .map_err(|e| CheckpointError::io("inspecting", &abs, e))?;
        let ft = m.file_type();
        if filter.excluded(Path::new(OsStr::from_bytes(&rel_child)), ft.is_dir()) {
            continue;
        }
        let mode = m.permissions().mode() & 0o7777;
        let (kind, stamp) = if ft.is_dir() {
            subdirs.push(rel_child.clone());
            (Kind::Dir { mode }, None)
        } else if ft.is_symlink() {
            let target = std::fs::read_link(&abs)
                .map_err(|e| CheckpointError::io("reading the link", &abs, e))?;
            let target = RelPath::from_os(target.as_os_str());
            (Kind::Symlink { target }, None)
        } else if ft.is_file() {
            if m.nlink() > 1 && part.linked.last().is_none_or(|d| d.as_slice() != rel) {
                part.linked.push(rel.to_vec());
            }
            part.bytes += m.size();
            part.files += 1;
            let kind = Kind::File {
                mode,
                size: m.size(),
                hash: String::new(),
                label: None,
            };
            (kind, Some(Stamp::of(&m)))
        } else {
            // Sockets, fifos and devices are not project content.
            continue;
        };
        let path = match String::from_utf8(rel_child) {
            Ok(text) => RelPath::Text(text),
            Err(e) => RelPath::Bytes {
                bytes: e.into_bytes(),
            },
        };
        part.entries.push((path, kind, stamp));
    }
    Ok(subdirs)
}
