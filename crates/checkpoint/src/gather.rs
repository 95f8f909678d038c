//! Reading the files a save stores: on worker threads, each streaming its share
//! of the files into a pack of its own, while the caller's thread does the
//! rest of the save (the files' labels).
//!
//! Why threads: reading and hashing (sha256) are each about as costly as
//! `tar -cf` writing the same bytes; on two cores two workers hash while the
//! other reads and the caller labels. Each worker has its own pack (no lock on
//! the write path); a content two workers read is kept by the first to claim
//! it (a shared set), so each content is still stored once. The packs are
//! committed only when every worker succeeded: a failed save leaves no index,
//! and the next sweep removes its packs.

use crate::error::CheckpointError;
use crate::objects::{View, hex};
use crate::pack::{Hash, PackWriter};
use crate::store::Store;
use crate::tree::Stamp;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file to read: where it is, the stamp the walk saw, its size then.
pub(crate) struct ToRead {
    /// Absolute path.
    pub abs: PathBuf,
    /// What the walk saw (its inode must still be the file's).
    pub stamp: Option<Stamp>,
    /// Its size at the walk (to share the work by bytes).
    pub size: u64,
}

/// The hash (hex) and length of each file of a [`Gathering`], in its order.
pub(crate) type Read = Vec<(String, u64)>;

/// Files being read by workers; [`Gathering::finish`] waits for them.
pub(crate) struct Gathering<'scope> {
    workers: Vec<Worker<'scope>>,
}

/// A share being read on a thread, or read already (no thread could be made:
/// the caller's thread read it).
enum Worker<'scope> {
    Thread(std::thread::ScopedJoinHandle<'scope, Result<Done, CheckpointError>>),
    Done(Result<Done, CheckpointError>),
}

/// What one worker did: its pack (uncommitted) and its files' hashes.
type Done = (Option<PackWriter>, Read);

/// Most workers, whatever the cores (the disk is shared too).
const MAX_WORKERS: usize = 4;
/// Fewer bytes than this per worker: not worth a thread of its own.
const MIN_BYTES_PER_WORKER: u64 = 4 << 20;

impl<'scope> Gathering<'scope> {
    /// Starts reading `files` into new packs of `store` (contents `view` holds
    /// already are not stored again), on threads of `scope`.
    pub(crate) fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        store: &'env Store,
        view: &'env View<'env>,
        files: &'env [ToRead],
        claimed: &'env Mutex<HashSet<Hash>>,
    ) -> Gathering<'scope> {
        let total: u64 = files.iter().map(|f| f.size).sum();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cores
            .min(MAX_WORKERS)
            .min(usize::try_from(total / MIN_BYTES_PER_WORKER).unwrap_or(usize::MAX) + 1)
            .min(files.len())
            .max(1);
        // Contiguous shares of about equal bytes (a pack holds neighbours together).
        let mut shares = Vec::with_capacity(n);
        let (mut from, mut acc) = (0, 0u64);
        for (i, f) in files.iter().enumerate() {
            acc += f.size;
            let want = total.saturating_mul(shares.len() as u64 + 1) / n as u64;
            if acc >= want && shares.len() + 1 < n {
                shares.push(&files[from..=i]);
                from = i + 1;
            }
        }
        shares.push(&files[from..]);
        let workers = shares
            .into_iter()
            .map(|share| {
                let read = move || read_share(store, view, share, claimed);
                match std::thread::Builder::new()
                    .name("safesh-save".into())
                    .spawn_scoped(scope, read)
                {
                    Ok(t) => Worker::Thread(t),
                    Err(_) => Worker::Done(read()),
                }
            })
            .collect();
        Gathering { workers }
    }

    /// Waits for every worker; then commits their packs. The files' hashes and
    /// lengths, in the order they were given.
    pub(crate) fn finish(self) -> Result<Read, CheckpointError> {
        let mut packs = Vec::new();
        let mut read = Vec::new();
        let mut failed = None;
        for w in self.workers {
            let done = match w {
                Worker::Thread(t) => t.join(),
                Worker::Done(d) => Ok(d),
            };
            match done {
                Ok(Ok((pack, r))) => {
                    packs.extend(pack);
                    read.extend(r);
                }
                Ok(Err(e)) => {
                    failed.get_or_insert(e);
                }
                Err(_) => {
                    failed.get_or_insert(CheckpointError::io(
                        "saving",
                        Path::new("."),
                        std::io::Error::other("a worker thread panicked"),
                    ));
                }
            }
        }
        if let Some(e) = failed {
            return Err(e); // The packs drop uncommitted: removed.
        }
        for p in packs {
            p.commit()?;
        }
        Ok(read)
    }
}

fn read_share(
    store: &Store,
    view: &View<'_>,
    share: &[ToRead],
    claimed: &Mutex<HashSet<Hash>>,
) -> Result<Done, CheckpointError> {
    let mut pack: Option<PackWriter> = None;
    let mut out = Vec::with_capacity(share.len());
    // Stored already, or claimed by another worker (or this one) in this save.
    let stored = |h: &Hash| {
        view.has_hash(h) || !claimed.lock().unwrap_or_else(|p| p.into_inner()).insert(*h)
    };
    for f in share {
        let pack = match &mut pack {
            Some(p) => p,
            None => pack.insert(store.objects().new_pack()?),
        };
        out.push(store_file(pack, &f.abs, f.stamp, stored)?);
    }
    Ok((pack, out))
}

/// Streams the regular file `abs` into `pack`; its hash (hex) and the size
/// read. Opened without following a symlink, and refused when it is no longer
/// the file the walk saw (`stamp`'s inode): a path swapped during the save
/// never brings another file's bytes in.
fn store_file(
    pack: &mut PackWriter,
    abs: &Path,
    stamp: Option<Stamp>,
    stored: impl Fn(&Hash) -> bool,
) -> Result<(String, u64), CheckpointError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(abs)
        .map_err(|e| CheckpointError::io("reading", abs, e))?;
    let m = f
        .metadata()
        .map_err(|e| CheckpointError::io("inspecting", abs, e))?;
    if !m.is_file() || stamp.is_some_and(|s| s.ino != m.ino()) {
        return Err(CheckpointError::io(
            "saving",
            abs,
            std::io::Error::other("it was replaced during the save; save again"),
        ));
    }
    let (hash, len) = pack.put(&mut f, abs, m.len(), stored)?;
    Ok((hex(&hash), len))
}
