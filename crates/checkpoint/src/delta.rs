//! A save's walk of a root from its journal ([`crate::journal`]): the
//! directories where something happened are listed again (and new ones walked
//! and watched); every other path is the previous checkpoint's entry, as a
//! full walk would have found it.

use crate::error::CheckpointError;
use crate::journal::{Changes, Journal, parent};
use crate::tree::{Entry, Filter, Kind, Part, Walked, list_dir, walk_under};
use std::collections::HashSet;
use std::path::Path;

/// The walk of `root` given the entries `before` (the journal's baseline) and
/// the directories `dirty` since. The second value: whether the journal can
/// be kept (every new directory got its watch).
pub(crate) fn walk_changed(
    root: &Path,
    filter: &Filter<'_>,
    before: &[Entry],
    journal: &mut Journal,
    dirty: HashSet<Vec<u8>>,
) -> Result<(Walked, bool), CheckpointError> {
    // Only directories still there (still watched at the same path) are
    // listed again; the others went with their parent's listing.
    let relist: HashSet<Vec<u8>> = dirty.into_iter().filter(|d| journal.watches(d)).collect();
    // Decided before any new watch: a directory removed and made again at the
    // same path keeps none of its old entries.
    let mut kept = Part::default();
    for e in before {
        let dir = parent(e.path.as_bytes());
        if relist.contains(dir) || !journal.watches(dir) {
            continue;
        }
        if let Kind::File { size, .. } = e.kind {
            kept.bytes += size;
            kept.files += 1;
        }
        kept.entries.push((e.path.clone(), e.kind.clone(), e.stamp));
    }
    let mut listed = Part::default();
    let mut new_dirs = Vec::new();
    for d in &relist {
        for sub in list_dir(root, d, filter, &mut listed)? {
            if !journal.watches(&sub) {
                new_dirs.push(sub);
            }
        }
    }
    let watcher = journal.watcher();
    let fresh = if new_dirs.is_empty() {
        None
    } else {
        Some(walk_under(root, new_dirs, filter, Some(&watcher))?)
    };
    let keep = journal.absorb(watcher);
    // Directories with a many-linked file: as found by this listing where
    // listed, else as before.
    let still: Vec<Vec<u8>> = journal
        .linked
        .iter()
        .filter(|d| !relist.contains(*d) && journal.watches(d))
        .cloned()
        .collect();
    journal.linked = still.into_iter().chain(listed.linked.drain(..)).collect();
    let mut parts = vec![kept, listed];
    if let Some(f) = fresh {
        journal.linked.extend(f.linked);
        parts.push(Part {
            entries: f.entries,
            bytes: f.bytes,
            files: f.files,
            linked: Vec::new(),
            dirs_listed: f.dirs_listed,
        });
    }
    Ok((Part::into_walked(parts), keep))
}

/// The checkpoint a save starts from, for its journals: name and time.
pub(crate) struct Previous<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its creation time.
    pub created_unix_ms: u64,
    /// Its entries of the root being walked.
    pub entries: &'a [Entry],
}

/// Walks `root` for a save: from its journal in this process when that
/// describes the changes since `previous` under the filter `filter_key`, else
/// every path (and, when journals are kept and `filter_key` is given, with
/// watches: a journal for the next save, given back).
pub(crate) fn walk_root(
    store_dir: &Path,
    root: &Path,
    filter: &Filter<'_>,
    filter_key: Option<&str>,
    previous: Option<&Previous<'_>>,
) -> Result<(Walked, Option<Journal>), CheckpointError> {
    let Some(key) = filter_key else {
        return Ok((crate::tree::walk(root, filter, None)?, None));
    };
    if let (Some(mut j), Some(prev)) = (Journal::take(store_dir, root), previous)
        && j.baseline.as_ref().is_some_and(|b| {
            b.name == prev.name && b.created_unix_ms == prev.created_unix_ms && b.filter_key == key
        })
        && let Changes::Dirs(dirty) = j.changes()
        // Most of many directories changed: the parallel walk is faster.
        && (dirty.len() <= 64 || dirty.len().saturating_mul(2) <= j.watched())
    {
        let (walked, keep) = walk_changed(root, filter, prev.entries, &mut j, dirty)?;
        return Ok((walked, keep.then_some(j)));
    }
    let Some(mut j) = Journal::start() else {
        return Ok((crate::tree::walk(root, filter, None)?, None));
    };
    let watcher = j.watcher();
    let walked = crate::tree::walk(root, filter, Some(&watcher))?;
    let keep = j.absorb(watcher);
    j.linked = walked.linked.iter().cloned().collect();
    Ok((walked, keep.then_some(j)))
}
