//! Putting a project back as a checkpoint saw it: contents, modes and symlinks
//! come back, files created since go, each file replaced atomically (written
//! beside it, then renamed over it). Excluded and protected paths are never
//! touched; nothing outside the checkpoint's roots is.

use crate::error::CheckpointError;
use crate::objects::View;
use crate::store::{Manifest, Store};
use crate::tree::{Filter, Kind, RelPath, walk};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What a restore changed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Restored {
    /// Files and links written back (with the label each had at save time).
    pub written: Vec<(PathBuf, Option<String>)>,
    /// Paths removed (created after the checkpoint).
    pub removed: Vec<PathBuf>,
    /// Paths that were already as saved.
    pub unchanged: u64,
}

impl Store {
    /// Restores checkpoint `name` of `project`; every root it holds must be one
    /// of `allowed_roots` (the current write roots).
    pub fn restore(
        &self,
        project: &Path,
        name: &str,
        allowed_roots: &[PathBuf],
        filter: &Filter<'_>,
    ) -> Result<Restored, CheckpointError> {
        let m = self.load(project, name)?;
        for r in &m.roots {
            if !allowed_roots.iter().any(|a| r.root.starts_with(a)) {
                return Err(CheckpointError::Outside(r.root.clone()));
            }
        }
        // No sweep removes (or repacks) a content while it is read back.
        let _lock = self.lock(false)?;
        let view = self.objects().view()?;
        let mut out = Restored::default();
        for r in &m.roots {
            self.restore_root(&m, &r.root, filter, &view, &mut out)?;
        }
        Ok(out)
    }

    fn restore_root(
        &self,
        m: &Manifest,
        root: &Path,
        filter: &Filter<'_>,
        view: &View<'_>,
        out: &mut Restored,
    ) -> Result<(), CheckpointError> {
        let snap = m
            .roots
            .iter()
            .find(|r| r.root == root)
            .map(|r| &r.entries[..])
            .unwrap_or_default();
        let want: BTreeMap<&RelPath, &Kind> = snap.iter().map(|e| (&e.path, &e.kind)).collect();
        std::fs::create_dir_all(root).map_err(|e| CheckpointError::io("creating", root, e))?;
        let walked = walk(root, filter, None)?;
        let now = walked.by_path();
        // 1. Remove what was not there (deepest first), and what changed kind.
        let mut gone: Vec<(&RelPath, &Kind)> = now
            .iter()
            .filter(|(p, (k, _))| match want.get(*p) {
                None => true,
                Some(w) => std::mem::discriminant(*w) != std::mem::discriminant(*k),
            })
            .map(|(p, (k, _))| (*p, *k))
            .collect();
        gone.sort_by_key(|(p, _)| std::cmp::Reverse(p.to_path().components().count()));
        for (p, k) in gone {
            let abs = root.join(p.to_path());
            let r = match k {
                Kind::Dir { .. } => match std::fs::remove_dir(&abs) {
                    // Excluded or protected content inside stays, and so does its dir.
                    Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => continue,
                    other => other,
                },
                _ => std::fs::remove_file(&abs),
            };
            match r {
                Ok(()) => out.removed.push(abs),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CheckpointError::io("removing", &abs, e)),
            }
        }
        // 2. Directories (parents first: the map is sorted), writable for now.
        for (p, k) in &want {
            if let Kind::Dir { .. } = k {
                let abs = root.join(p.to_path());
                if !abs.is_dir() {
                    std::fs::create_dir(&abs)
                        .map_err(|e| CheckpointError::io("creating", &abs, e))?;
                }
                // (Only when needed: a chmod is a change a journal sees.)
                if current_mode(&abs).is_none_or(|m| m & 0o700 != 0o700) {
                    let _ = std::fs::set_permissions(&abs, std::fs::Permissions::from_mode(0o700));
                }
            }
        }
        // 3. Files and links.
        for e in snap {
            let abs = root.join(e.path.to_path());
            if (filter.protected)(&abs) {
                continue;
            }
            let current = now.get(&e.path).map(|(k, _)| *k);
            // Untouched since the save (same inode, size and times): as saved.
            let untouched = e.stamp.is_some() && now.get(&e.path).and_then(|(_, s)| *s) == e.stamp;
            match &e.kind {
                Kind::File {
                    mode,
                    size,
                    hash,
                    label,
                } => {
                    let same = matches!(current, Some(Kind::File { mode: m2, size: s2, .. })
                        if m2 == mode && s2 == size)
                        && (untouched
                            || crate::objects_hash_of(&abs).as_deref() == Some(hash.as_str()));
                    if same {
                        out.unchanged += 1;
                        continue;
                    }
                    let data = view.read(hash, *size)?;
                    replace_with(&abs, |tmp| {
                        use std::io::Write;
                        let mut f = std::fs::OpenOptions::new()
                            .write(true)
                            .create_new(true)
                            .open(tmp)?;
                        f.write_all(&data)?;
                        f.set_permissions(std::fs::Permissions::from_mode(*mode))
                    })?;
                    out.written.push((abs, label.clone()));
                }
                Kind::Symlink { target } => {
                    if matches!(current, Some(Kind::Symlink { target: t }) if t == target) {
                        out.unchanged += 1;
                        continue;
                    }
                    replace_with(&abs, |tmp| {
                        std::os::unix::fs::symlink(target.to_path(), tmp)
                    })?;
                    out.written.push((abs, None));
                }
                Kind::Dir { .. } => {}
            }
        }
        // 4. Directory modes last, deepest first (a read-only dir was filled first).
        for (p, k) in want.iter().rev() {
            if let Kind::Dir { mode } = k {
                let abs = root.join(p.to_path());
                if current_mode(&abs) != Some(*mode) {
                    std::fs::set_permissions(&abs, std::fs::Permissions::from_mode(*mode))
                        .map_err(|e| CheckpointError::io("setting the mode of", &abs, e))?;
                }
            }
        }
        Ok(())
    }
}

/// Makes `dest` by building a temporary sibling with `make`, then renaming it
/// over `dest` (atomic for readers of `dest`).
fn replace_with(
    dest: &Path,
    make: impl Fn(&Path) -> std::io::Result<()>,
) -> Result<(), CheckpointError> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dest.with_file_name(format!(".{name}.safesh-restore-{}", std::process::id()));
    // `make` creates `tmp` exclusively (never through a planted link); one
    // left by a killed restore is removed and the make tried again.
    let mut made = make(&tmp);
    if made
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::AlreadyExists)
    {
        let _ = std::fs::remove_file(&tmp);
        made = make(&tmp);
    }
    if let Err(e) = made {
        let _ = std::fs::remove_file(&tmp);
        return Err(CheckpointError::io("writing", &tmp, e));
    }
    std::fs::rename(&tmp, dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CheckpointError::io("replacing", dest, e)
    })
}

/// The permission bits of the directory at `abs` (not following a link).
fn current_mode(abs: &Path) -> Option<u32> {
    let m = std::fs::symlink_metadata(abs).ok()?;
    m.is_dir().then_some(m.permissions().mode() & 0o7777)
}
