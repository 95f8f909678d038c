//! A change journal, kept by long-lived processes (the server and its
//! workers): inotify watches on every directory a save listed, so the next
//! save of the same root lists again only the directories where something
//! happened, and takes the rest from the checkpoint it saved (see
//! [`crate::delta`]).
//!
//! Why it is sound to skip a directory: inotify queues an event in the
//! writing syscall itself, before it returns, for every create, delete,
//! rename, write, truncate, chmod and close-after-write of a watched
//! directory's entries — through any mount of it (a sandbox's bind mounts
//! share the directory). So a directory without an event since its watch was
//! added (before it was listed) still holds what that listing saw. What it
//! cannot see, and how that is covered:
//! * a queue overflow, a watched directory moved or unmounted: the journal is
//!   dropped and the save walks everything;
//! * a file with more than one link can be written through a link outside
//!   the watched directories: directories holding one are listed at every save;
//! * writes through a shared mapping with no `write(2)` (the close of the
//!   writable descriptor is seen later): as with any file being written during
//!   a save, the save may keep the content from before — documented.
//!
//! A journal is used only by the process that made it, only against the
//! checkpoint its last save wrote (name and time), and only under the same
//! filter; anything else is a full walk, as a process without journals (the
//! CLI) always does.

use crate::store::Manifest;
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Whether this process keeps journals (see [`keep_journals`]).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The journals of this process, by store and root; a save takes its root's
/// out while it runs (so two saves never share one) and puts it back after.
static JOURNALS: Mutex<Option<HashMap<(PathBuf, PathBuf), Journal>>> = Mutex::new(None);

/// The manifest this process wrote last, per project dir (journal processes
/// only): the next save's previous checkpoint, not read back and decoded.
static WRITTEN: Mutex<Option<HashMap<PathBuf, Arc<Manifest>>>> = Mutex::new(None);

/// Keeps `m`, just written in `project_dir`, for [`recall`].
pub(crate) fn remember(project_dir: PathBuf, m: Arc<Manifest>) {
    if ENABLED.load(Ordering::Relaxed) {
        WRITTEN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(HashMap::new)
            .insert(project_dir, m);
    }
}

/// The manifest `name` created at `created_unix_ms` in `project_dir`, when it
/// is the one this process wrote there last.
pub(crate) fn recall(
    project_dir: &Path,
    name: &str,
    created_unix_ms: u64,
) -> Option<Arc<Manifest>> {
    let written = WRITTEN.lock().unwrap_or_else(PoisonError::into_inner);
    let m = written.as_ref()?.get(project_dir)?;
    (m.name == name && m.created_unix_ms == created_unix_ms).then(|| m.clone())
}

/// Turns journals on for this process: call it in a process that saves the
/// same project more than once (a server); a one-shot CLI save gains nothing
/// from watches it drops at exit.
pub fn keep_journals() {
    ENABLED.store(true, Ordering::Relaxed);
}

fn journals() -> std::sync::MutexGuard<'static, Option<HashMap<(PathBuf, PathBuf), Journal>>> {
    JOURNALS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a watch reports: every change to a directory's entries or to itself.
fn mask() -> WatchMask {
    WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::DONT_FOLLOW
        | WatchMask::ONLYDIR
}

/// The checkpoint a journal describes changes since, and under which filter.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Baseline {
    /// The checkpoint's name.
    pub name: String,
    /// Its creation time (a checkpoint replaced under the same name differs).
    pub created_unix_ms: u64,
    /// The caller's identity of the filter ([`crate::SaveRequest::journal`]).
    pub filter_key: String,
}

/// One root's journal.
pub(crate) struct Journal {
    inotify: Inotify,
    /// Watched directories (relative to the root, bytes; empty: the root).
    dirs: HashMap<WatchDescriptor, Vec<u8>>,
    /// The same, by directory.
    by_dir: HashSet<Vec<u8>>,
    /// Directories holding a file with more than one link: listed every save.
    pub linked: HashSet<Vec<u8>>,
    /// What it describes changes since; `None` until its first save ends.
    pub baseline: Option<Baseline>,
}

/// What happened since the baseline.
pub(crate) enum Changes {
    /// Directories to list again (relative, bytes), the rest unchanged.
    Dirs(HashSet<Vec<u8>>),
    /// The journal cannot say (overflow, a directory moved): walk everything.
    Unknown,
}

impl Journal {
    /// A journal for a save that walks `root` now; `None` when this process
    /// keeps none or inotify is not available (then no save uses one).
    pub(crate) fn start() -> Option<Journal> {
        if !ENABLED.load(Ordering::Relaxed) {
            return None;
        }
        Some(Journal {
            inotify: Inotify::init().ok()?,
            dirs: HashMap::new(),
            by_dir: HashSet::new(),
            linked: HashSet::new(),
            baseline: None,
        })
    }

    /// The journal of `root` in `store`, taken out of the registry (the
    /// caller puts it back with [`Journal::keep`]).
    pub(crate) fn take(store: &Path, root: &Path) -> Option<Journal> {
        if !ENABLED.load(Ordering::Relaxed) {
            return None;
        }
        journals()
            .as_mut()?
            .remove(&(store.to_path_buf(), root.to_path_buf()))
    }

    /// Puts the journal back for the next save of `root` in `store`.
    pub(crate) fn keep(self, store: &Path, root: &Path) {
        journals()
            .get_or_insert_with(HashMap::new)
            .insert((store.to_path_buf(), root.to_path_buf()), self);
    }

    /// A handle that adds watches from a walk's threads.
    pub(crate) fn watcher(&self) -> Watcher {
        Watcher {
            inner: Mutex::new(WatcherInner {
                watches: self.inotify.watches(),
                added: HashMap::new(),
                failed: false,
            }),
        }
    }

    /// Takes in what a walk's watcher added; `false` when a watch could not be
    /// added (then the journal must not be kept).
    pub(crate) fn absorb(&mut self, w: Watcher) -> bool {
        let inner = w.inner.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut ok = !inner.failed;
        for (wd, rel) in inner.added {
            self.by_dir.insert(rel.clone());
            // One directory at two paths (a bind mount inside the root): its
            // events would name one of them only.
            if self
                .dirs
                .insert(wd, rel.clone())
                .is_some_and(|was| was != rel)
            {
                ok = false;
            }
        }
        ok
    }

    /// How many directories are watched.
    pub(crate) fn watched(&self) -> usize {
        self.by_dir.len()
    }

    /// Whether `rel` is a directory watched since its listing and still there
    /// at the same path.
    pub(crate) fn watches(&self, rel: &[u8]) -> bool {
        self.by_dir.contains(rel)
    }

    /// Reads every event queued so far (each was queued by its syscall before
    /// that returned: nothing done before this call is missed).
    pub(crate) fn changes(&mut self) -> Changes {
        let mut dirty: HashSet<Vec<u8>> = self.linked.clone();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let events = match self.inotify.read_events(&mut buf) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => return Changes::Unknown,
            };
            for ev in events {
                if ev
                    .mask
                    .intersects(EventMask::Q_OVERFLOW | EventMask::MOVE_SELF | EventMask::UNMOUNT)
                {
                    return Changes::Unknown;
                }
                let Some(dir) = self.dirs.get(&ev.wd).cloned() else {
                    continue;
                };
                if ev.mask.contains(EventMask::IGNORED) {
                    // Removed (or its watch dropped): its parent saw the
                    // removal; without the root nothing is known.
                    if dir.is_empty() {
                        return Changes::Unknown;
                    }
                    self.dirs.remove(&ev.wd);
                    self.by_dir.remove(&dir);
                    continue;
                }
                match ev.name {
                    // An entry of the directory changed.
                    Some(_) => {
                        dirty.insert(dir);
                    }
                    // The directory itself (its mode): its parent lists it.
                    None => {
                        if ev.mask.contains(EventMask::DELETE_SELF) {
                            continue; // IGNORED follows.
                        }
                        if dir.is_empty() {
                            return Changes::Unknown;
                        }
                        dirty.insert(parent(&dir).to_vec());
                        dirty.insert(dir);
                    }
                }
            }
        }
        Changes::Dirs(dirty)
    }
}

/// The parent of a relative directory (`b""`: the root).
pub(crate) fn parent(rel: &[u8]) -> &[u8] {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(i) => &rel[..i],
        None => b"",
    }
}

/// Adds watches for a walk (from any of its threads).
pub(crate) struct Watcher {
    inner: Mutex<WatcherInner>,
}

struct WatcherInner {
    watches: Watches,
    added: HashMap<WatchDescriptor, Vec<u8>>,
    failed: bool,
}

impl Watcher {
    /// Watches the directory `rel` of `root`, before it is listed.
    pub(crate) fn add(&self, root: &Path, rel: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.failed {
            return;
        }
        let dir = root.join(OsStr::from_bytes(rel));
        match inner.watches.add(&dir, mask()) {
            Ok(wd) => {
                if inner.added.insert(wd, rel.to_vec()).is_some() {
                    inner.failed = true; // One directory at two paths.
                }
            }
            // (The watch limit, say: this journal is not kept.)
            Err(_) => inner.failed = true,
        }
    }
}
