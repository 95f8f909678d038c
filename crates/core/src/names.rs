//! Name labels: a directory entry created by a word that was secret or untrusted
//! (`touch "$(cat .env)"`, `mkdir "$(curl …)"`) keeps that word's label as the
//! label of its NAME, persisted in the label store by the entry's identity
//! (`safesh_store::LabelStore::record_name`). What prints names — listings
//! (`Host::list_dir`, `Host::check_stat`), globs, `pwd`/`$PWD`/`dirs`,
//! `realpath` — joins the labels of the names it prints, never the labels of the
//! files' contents.
//!
//! Cost: the labels are read from the store once and cached, re-read only when
//! another process committed (`PRAGMA data_version`); with no name labeled
//! anywhere (the usual case) every lookup returns at once, without a `stat`.

use crate::flow::Flow;
use crate::interp::Shell;
use crate::io::lock;
use safesh_label::Label;
use std::collections::HashMap;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An entry's identity: (device, inode), not followed.
pub(crate) type EntryId = (u64, u64);

/// Name labels by entry identity.
pub(crate) type NameMap = HashMap<EntryId, Label>;

/// The process's view of the name labels.
#[derive(Default)]
pub(crate) struct NameCache {
    /// The store's `data_version` when `merged` was built (`None`: not read yet).
    version: Option<i64>,
    /// Names this process labeled (exact even without a store).
    own: NameMap,
    /// `own` joined with the store's rows.
    merged: Arc<NameMap>,
}

/// Worth labeling a name: the word was secret, or not to be trusted.
pub(crate) fn worth_labeling(l: &Label) -> bool {
    !l.confidentiality.is_public() || !safesh_flow::trust::is_trusted(l)
}

impl Flow {
    /// Records that the entry at `path` was created by a word labeled `label`
    /// (nothing when the word was public and trusted).
    pub(crate) fn record_name(&self, path: &Path, label: &Label) {
        if !worth_labeling(label) {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let id = (meta.dev(), meta.ino());
        {
            let mut cache = lock(&self.names);
            let new = cache
                .own
                .get(&id)
                .map_or_else(|| label.clone(), |old| old.join(label));
            cache.own.insert(id, new.clone());
            let merged = Arc::make_mut(&mut cache.merged);
            let joined = merged.get(&id).map_or(new.clone(), |m| m.join(&new));
            merged.insert(id, joined);
        }
        if let Some(store) = self.store_for_names(true) {
            let _ = store.record_name(path, label);
        }
    }

    /// Every name label known (this process's and the store's), current.
    pub(crate) fn name_labels(&self) -> Arc<NameMap> {
        let mut cache = lock(&self.names);
        if let Some(store) = self.store_for_names(false)
            && let Ok(v) = store.data_version()
            && cache.version != Some(v)
        {
            let mut map = cache.own.clone();
            for (id, l) in store.name_labels().unwrap_or_default() {
                let joined = map.get(&id).map_or(l.clone(), |o| o.join(&l));
                map.insert(id, joined);
            }
            cache.version = Some(v);
            cache.merged = Arc::new(map);
        }
        cache.merged.clone()
    }
}

/// The name label of the entry at `path` (not followed), if any.
pub(crate) fn entry_label(names: &NameMap, path: &Path) -> Option<Label> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    names.get(&(meta.dev(), meta.ino())).cloned()
}

impl Shell {
    /// The name labels, or `None` when no name is labeled (nothing to look up).
    pub(crate) fn names(&self) -> Option<Arc<NameMap>> {
        if cfg!(feature = "untracked") {
            return None;
        }
        let names = self.shared.flow.as_ref()?.name_labels();
        (!names.is_empty()).then_some(names)
    }

    /// Records `label` (the label of the word that named it, with the PC) as the
    /// name label of the entry at `path`, just created.
    pub(crate) fn record_name(&self, path: &Path, label: &Label) {
        if let Some(flow) = &self.shared.flow {
            flow.record_name(&crate::host::normalize(&self.cwd.join(path)), label);
        }
    }

    /// The join of the name labels of every component of `path` (what `pwd`,
    /// `realpath` print).
    pub(crate) fn path_names_label(&self, path: &Path) -> Label {
        let Some(names) = self.names() else {
            return Label::empty();
        };
        let path = self.cwd.join(path);
        path.ancestors()
            .filter_map(|p| entry_label(&names, p))
            .fold(Label::empty(), |a, l| a.join(&l))
    }
}

/// The join of the name labels of `dir`'s entries: one `readdir`, the inode of
/// each entry from it, no query.
pub(crate) fn dir_entries_label(names: &NameMap, dir: &Path) -> Label {
    let Ok(meta) = std::fs::metadata(dir) else {
        return Label::empty();
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Label::empty();
    };
    let dev = meta.dev();
    let mut out = Label::empty();
    for e in rd.flatten() {
        if let Some(l) = names.get(&(dev, e.ino())) {
            out = out.join(l);
        }
    }
    out
}

/// The paths that creating `path` would add: itself and each missing ancestor.
pub(crate) fn missing_components(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in path.ancestors() {
        if p.as_os_str().is_empty() || std::fs::symlink_metadata(p).is_ok() {
            break;
        }
        out.push(p.to_path_buf());
    }
    out
}
