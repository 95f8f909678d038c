//! Finding the secret files an external program could open: every file under the
//! roots whose path the classification makes confidential, at any depth.
//!
//! The sandbox masks them (unless the program is given them by name), so a program
//! that opens `config/.env` by itself reads nothing. A walk on every spawn would
//! cost a `readdir` per directory of the tree; [`SecretScan`] remembers each
//! directory's entries and re-reads a directory only when its change time moved
//! (an entry created, removed or renamed in it changes it), so a repeat costs one
//! `stat` per directory. A directory changed within the last [`RACY`] is read
//! again next time too: a change in the same clock tick as our read would
//! otherwise go unseen.
//!
//! Not walked: `.git` (protected separately) and what lies past [`MAX_DIRS`]
//! directories (the scan says so: [`Scanned::complete`]).

use crate::classify::Classifier;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The most directories one scan visits.
pub const MAX_DIRS: usize = 20_000;
/// A directory changed more recently than this is read again on the next scan.
pub const RACY: Duration = Duration::from_secs(2);

/// Directory names never descended into.
const SKIP: &[&str] = &[".git"];

/// What is remembered of one directory.
#[derive(Debug, Clone)]
struct DirState {
    /// (dev, ino, ctime s, ctime ns, mtime s, mtime ns).
    stamp: (u64, u64, i64, i64, i64, i64),
    /// Read so close to a change that it must be read again.
    racy: bool,
    secrets: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
    /// The scan that last visited it.
    generation: u64,
}

/// The result of a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Confidential files (and symlinks to them), sorted.
    pub secrets: Vec<PathBuf>,
    /// False when the scan stopped at [`MAX_DIRS`].
    pub complete: bool,
}

/// A cache of directory listings for repeated scans of the same roots.
#[derive(Debug, Default)]
pub struct SecretScan {
    dirs: HashMap<PathBuf, DirState>,
    generation: u64,
}

fn stamp(m: &std::fs::Metadata) -> (u64, u64, i64, i64, i64, i64) {
    (
        m.dev(),
        m.ino(),
        m.ctime(),
        m.ctime_nsec(),
        m.mtime(),
        m.mtime_nsec(),
    )
}

/// True when the directory changed within [`RACY`] of now.
fn recently_changed(m: &std::fs::Metadata) -> bool {
    let changed = SystemTime::UNIX_EPOCH
        + Duration::new(
            u64::try_from(m.ctime()).unwrap_or(0),
            u32::try_from(m.ctime_nsec()).unwrap_or(0),
        );
    SystemTime::now()
        .duration_since(changed)
        .map_or(true, |age| age < RACY)
}

/// Whether the entry at `path` (a directory entry: its parent is resolved) is
/// confidential by the classification.
fn is_confidential(classifier: &Classifier, path: &Path, symlink: bool) -> bool {
    if symlink {
        // Where it points decides too.
        classifier.is_confidential_path(path)
    } else {
        classifier.is_confidential_resolved(path)
    }
}

impl SecretScan {
    /// An empty cache.
    pub fn new() -> Self {
        SecretScan::default()
    }

    fn read_dir(classifier: &Classifier, dir: &Path, meta: &std::fs::Metadata) -> DirState {
        let mut secrets = Vec::new();
        let mut subdirs = Vec::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                let p = e.path();
                if ft.is_dir() {
                    let skip = e.file_name().to_str().is_some_and(|n| SKIP.contains(&n));
                    if !skip {
                        subdirs.push(p);
                    }
                } else if is_confidential(classifier, &p, ft.is_symlink()) {
                    secrets.push(p);
                }
            }
        }
        DirState {
            stamp: stamp(meta),
            racy: recently_changed(meta),
            secrets,
            subdirs,
            generation: 0,
        }
    }

    /// The confidential files under `roots` (absolute, resolved directories),
    /// by `classifier`.
    pub fn scan(&mut self, classifier: &Classifier, roots: &[PathBuf]) -> Scanned {
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        let mut stack: Vec<PathBuf> = roots.to_vec();
        let mut secrets = Vec::new();
        let mut complete = true;
        let mut visited = 0usize;
        while let Some(dir) = stack.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&dir) else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            let state = match self.dirs.get_mut(&dir) {
                // Nested roots: already walked this time.
                Some(s) if s.generation == generation => continue,
                Some(s) if s.stamp == stamp(&meta) && !s.racy => s,
                _ => {
                    let fresh = Self::read_dir(classifier, &dir, &meta);
                    self.dirs.entry(dir).insert_entry(fresh).into_mut()
                }
            };
            visited += 1;
            state.generation = generation;
            secrets.extend(state.secrets.iter().cloned());
            stack.extend(state.subdirs.iter().cloned());
            if visited >= MAX_DIRS && !stack.is_empty() {
                complete = false;
                break;
            }
        }
        // Directories no longer under the roots are forgotten.
        self.dirs.retain(|_, s| s.generation == generation);
        secrets.sort();
        secrets.dedup();
        Scanned { secrets, complete }
    }
}
