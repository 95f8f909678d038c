//! What changed between two checkpoints, or between a checkpoint and now.

use crate::error::CheckpointError;
use crate::store::{Manifest, RootSnapshot, Store};
use crate::tree::{Entry, Filter, Kind, RelPath, walk};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Paths added, removed and modified (absolute, sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// In the second, not the first.
    pub added: Vec<PathBuf>,
    /// In the first, not the second.
    pub removed: Vec<PathBuf>,
    /// In both, different (content, mode, kind or link target).
    pub modified: Vec<PathBuf>,
}

/// A file's content and label as a checkpoint holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedFile {
    /// The bytes.
    pub data: Vec<u8>,
    /// Its label at save time (JSON), if any.
    pub label: Option<String>,
}

impl Store {
    /// The difference from checkpoint `a` to checkpoint `b`, or to the tree now
    /// when `b` is `None` (its files hashed, not stored).
    pub fn diff(
        &self,
        project: &Path,
        a: &str,
        b: Option<&str>,
        filter: &Filter<'_>,
    ) -> Result<Diff, CheckpointError> {
        let first = self.load(project, a)?;
        let second = match b {
            Some(b) => self.load(project, b)?,
            None => current(&first, filter)?,
        };
        Ok(compare(&first, &second))
    }

    /// The saved content of `path` in checkpoint `name` (for a unified diff of
    /// one file); `None` when it holds no regular file there.
    pub fn content(
        &self,
        project: &Path,
        name: &str,
        path: &Path,
    ) -> Result<Option<SavedFile>, CheckpointError> {
        let m = self.load(project, name)?;
        let _lock = self.lock(false)?;
        for r in &m.roots {
            let Ok(rel) = path.strip_prefix(&r.root) else {
                continue;
            };
            let key = RelPath::from_os(rel.as_os_str());
            if let Some(Entry {
                kind: Kind::File {
                    hash, size, label, ..
                },
                ..
            }) = r.entries.iter().find(|e| e.path == key)
            {
                return Ok(Some(SavedFile {
                    data: self.objects().view()?.read(hash, *size)?,
                    label: label.clone(),
                }));
            }
        }
        Ok(None)
    }
}

/// The tree now, in the shape of a manifest over the same roots.
fn current(like: &Manifest, filter: &Filter<'_>) -> Result<Manifest, CheckpointError> {
    let mut roots = Vec::new();
    for r in &like.roots {
        // Files untouched since the save keep the saved hash (not read again).
        let saved: BTreeMap<&RelPath, (&crate::tree::Stamp, &String)> = r
            .entries
            .iter()
            .filter_map(|e| match (&e.kind, &e.stamp) {
                (Kind::File { hash, .. }, Some(s)) => Some((&e.path, (s, hash))),
                _ => None,
            })
            .collect();
        let entries = if r.root.is_dir() {
            walk(&r.root, filter, None)?
                .entries
                .into_iter()
                .map(|(path, kind, stamp)| {
                    let kind = match kind {
                        Kind::File { mode, size, .. } => Kind::File {
                            mode,
                            size,
                            hash: match saved.get(&path) {
                                Some((s, h)) if Some(**s) == stamp => (*h).clone(),
                                _ => crate::objects_hash_of(&r.root.join(path.to_path()))
                                    .unwrap_or_default(),
                            },
                            label: None,
                        },
                        k => k,
                    };
                    Entry { path, kind, stamp }
                })
                .collect()
        } else {
            Vec::new()
        };
        roots.push(RootSnapshot {
            root: r.root.clone(),
            entries,
        });
    }
    Ok(Manifest {
        name: "now".into(),
        created_unix_ms: 0,
        roots,
        extra: serde_json::Value::Null,
        label_epoch: None,
    })
}

fn same(a: &Kind, b: &Kind) -> bool {
    match (a, b) {
        (
            Kind::File {
                mode: m1, hash: h1, ..
            },
            Kind::File {
                mode: m2, hash: h2, ..
            },
        ) => m1 == m2 && h1 == h2,
        (a, b) => a == b,
    }
}

fn compare(a: &Manifest, b: &Manifest) -> Diff {
    let flat = |m: &Manifest| -> BTreeMap<PathBuf, Kind> {
        m.roots
            .iter()
            .flat_map(|r| {
                r.entries
                    .iter()
                    .map(|e| (r.root.join(e.path.to_path()), e.kind.clone()))
            })
            .collect()
    };
    let (x, y) = (flat(a), flat(b));
    let mut d = Diff::default();
    for (p, k) in &x {
        match y.get(p) {
            None => d.removed.push(p.clone()),
            Some(k2) if !same(k, k2) => d.modified.push(p.clone()),
            _ => {}
        }
    }
    d.added = y.keys().filter(|p| !x.contains_key(*p)).cloned().collect();
    d
}
