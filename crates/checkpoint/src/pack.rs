//! Packs: the contents a save stores, back to back in one file
//! (`packs/<id>.pack`), with an index of where each content is
//! (`packs/<id>.idx`).
//!
//! Why packs and not one file per content: creating a file is the expensive
//! part of a save (an inode, a directory entry, a rename), far more than
//! reading and hashing 20 KiB. A save writes one pack however many files it
//! stores, as `tar -cf` writes one archive.
//!
//! Crash safety: the index is written last (to a temporary name, then
//! renamed) and is the pack's commit marker. A pack without an index is a save
//! that did not finish; nothing refers to it (its manifest is written after
//! the index) and the next sweep removes it. Nothing is fsynced: a process
//! killed at any point leaves the store readable; after a power loss the
//! newest contents may be lost, which a restore finds (it checks every
//! content's hash) and reports as damage rather than writing wrong bytes.

use crate::error::CheckpointError;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A content address: the sha256 of the bytes.
pub(crate) type Hash = [u8; 32];

/// First bytes of an index file.
const IDX_MAGIC: &[u8; 12] = b"SAFESH-IDX1\n";
/// One index record: hash, offset, length (little-endian).
const IDX_RECORD: usize = 32 + 8 + 8;
/// Bytes gathered before they are written to the pack: few enough that they
/// are still in the CPU's cache from being read and hashed when `pwrite`
/// copies them (at 4 MiB a first save of 200 MB took 240–400 ms of CPU, at
/// 256 KiB 240–250 ms, in turn on the benchmark machine).
const FLUSH_AT: usize = 256 << 10;
/// Bytes read from a file at a time.
const CHUNK: u64 = 1 << 20;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Where a content is: a pack (by its number in [`Index::packs`]), at `offset`,
/// `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub pack: usize,
    pub offset: u64,
    pub len: u64,
}

/// Every committed pack's index, merged.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// The packs, by number (their `.pack` paths).
    pub packs: Vec<PathBuf>,
    /// Where each content is (any one copy, when several packs hold it).
    pub at: HashMap<Hash, Location, ContentHash>,
}

/// Hashes content addresses for a map: a sha256 is uniform already, so a few
/// multiply rounds over its words suffice (SipHash per lookup was a tenth of
/// a save of an unchanged tree); a key per process keeps a tree made to
/// collide in one table from colliding in another.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContentHash(u64);

impl Default for ContentHash {
    fn default() -> Self {
        static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        ContentHash(*KEY.get_or_init(|| {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(0x5afe_5afe_u64)
        }))
    }
}

impl std::hash::BuildHasher for ContentHash {
    type Hasher = ContentHasher;
    fn build_hasher(&self) -> ContentHasher {
        ContentHasher(self.0)
    }
}

/// See [`ContentHash`].
pub(crate) struct ContentHasher(u64);

impl std::hash::Hasher for ContentHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0 ^ u64::from_le_bytes(w))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write(&n.to_le_bytes());
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Index {
    /// Reads every `*.idx` of `dir` (a missing dir is an empty index).
    pub(crate) fn load(dir: &Path) -> Result<Index, CheckpointError> {
        let mut index = Index::default();
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(index),
            Err(e) => return Err(CheckpointError::io("listing", dir, e)),
        };
        let mut idx_files: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect();
        // The same order in every process (which copy of a content is used).
        idx_files.sort();
        for idx in idx_files {
            let records = match read_idx(&idx) {
                Ok(r) => r,
                // Removed by a sweep since the listing: its pack went with it.
                Err(CheckpointError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    continue;
                }
                Err(e) => return Err(e),
            };
            let pack = index.packs.len();
            index.packs.push(idx.with_extension("pack"));
            for (hash, offset, len) in records {
                index
                    .at
                    .entry(hash)
                    .or_insert(Location { pack, offset, len });
            }
        }
        Ok(index)
    }
}

/// The records of one index file.
pub(crate) fn read_idx(path: &Path) -> Result<Vec<(Hash, u64, u64)>, CheckpointError> {
    let data = std::fs::read(path).map_err(|e| CheckpointError::io("reading", path, e))?;
    let damaged = |why: &str| CheckpointError::Damaged {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    let body = data
        .strip_prefix(IDX_MAGIC.as_slice())
        .ok_or_else(|| damaged("not a pack index"))?;
    if body.len() % IDX_RECORD != 0 {
        return Err(damaged("truncated pack index"));
    }
    Ok(body
        .chunks_exact(IDX_RECORD)
        .map(|r| {
            let mut hash = [0u8; 32];
            hash.copy_from_slice(&r[..32]);
            let word = |at: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&r[at..at + 8]);
                u64::from_le_bytes(w)
            };
            (hash, word(32), word(40))
        })
        .collect())
}

/// A pack being written by one save. Dropped without [`PackWriter::commit`],
/// its file is removed.
pub(crate) struct PackWriter {
    pack: PathBuf,
    file: File,
    /// Bytes already in the file.
    written: u64,
    /// Bytes gathered, not yet written: `buf[..filled]` (they follow `written`).
    /// Files are read straight into it (no copy in between); it is made once,
    /// [`FLUSH_AT`] + [`CHUNK`] long, so a read always has a chunk of room.
    buf: Vec<u8>,
    filled: usize,
    /// What it holds, in order.
    records: Vec<(Hash, u64, u64)>,
    /// The same, by hash (a content read twice in one save is stored once).
    holds: HashMap<Hash, (u64, u64)>,
    committed: bool,
}

impl PackWriter {
    /// A new, empty pack in `dir` (created 0700 when missing).
    pub(crate) fn create(dir: &Path) -> Result<PackWriter, CheckpointError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| CheckpointError::io("creating", dir, e))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!(
            "{nanos:x}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let pack = dir.join(format!("{id}.pack"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&pack)
            .map_err(|e| CheckpointError::io("creating", &pack, e))?;
        Ok(PackWriter {
            pack,
            file,
            written: 0,
            // (Zeroed memory from the allocator: pages are touched as they fill.)
            buf: vec![0; FLUSH_AT + CHUNK as usize],
            filled: 0,
            records: Vec::new(),
            holds: HashMap::new(),
            committed: false,
        })
    }

    fn end(&self) -> u64 {
        self.written + self.filled as u64
    }

    fn flush(&mut self) -> Result<(), CheckpointError> {
        if self.filled == 0 {
            return Ok(());
        }
        self.file
            .write_all_at(&self.buf[..self.filled], self.written)
            .map_err(|e| CheckpointError::io("writing", &self.pack, e))?;
        self.written += self.filled as u64;
        self.filled = 0;
        Ok(())
    }

    /// Streams `source` (named `what` in errors) into the pack and returns its
    /// hash and length. When `stored(hash)` says the content is stored already
    /// (or this pack holds it), its bytes are dropped again: each content is
    /// kept once. Memory stays bounded whatever the file's size.
    ///
    /// `expect` is the length `source` had when looked at (a file's `fstat`):
    /// reads ask for one byte more than is left of it, so a file that still
    /// has that length is read in one `read` (the short read is its end) where
    /// reading until a `read` gives 0 took two; a file that grew meanwhile is
    /// read on to its end.
    pub(crate) fn put(
        &mut self,
        source: &mut impl Read,
        what: &Path,
        expect: u64,
        stored: impl Fn(&Hash) -> bool,
    ) -> Result<(Hash, u64), CheckpointError> {
        let start = self.end();
        let mut hasher = Sha256::new();
        let mut got: u64 = 0;
        loop {
            if self.filled >= FLUSH_AT {
                self.flush()?;
            }
            let left = expect.saturating_sub(got);
            let want = if left > 0 { left + 1 } else { CHUNK }.min(CHUNK) as usize;
            let at = self.filled;
            let n = match source.read(&mut self.buf[at..at + want]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(CheckpointError::io("reading", what, e)),
            };
            if n == 0 {
                break;
            }
            hasher.update(&self.buf[at..at + n]);
            self.filled += n;
            got += n as u64;
            if n < want && got == expect {
                break;
            }
        }
        let hash: Hash = hasher.finalize().into();
        let len = self.end() - start;
        if stored(&hash) || self.holds.contains_key(&hash) {
            self.unwind(start)?;
        } else {
            self.records.push((hash, start, len));
            self.holds.insert(hash, (start, len));
        }
        Ok((hash, len))
    }

    /// Drops the bytes from `start` on (a content stored already).
    fn unwind(&mut self, start: u64) -> Result<(), CheckpointError> {
        if start >= self.written {
            self.filled = (start - self.written) as usize;
            return Ok(());
        }
        self.filled = 0;
        self.file
            .set_len(start)
            .map_err(|e| CheckpointError::io("truncating", &self.pack, e))?;
        self.written = start;
        Ok(())
    }

    /// Writes what is gathered and then the index (the commit marker).
    /// An empty pack is removed instead.
    pub(crate) fn commit(mut self) -> Result<(), CheckpointError> {
        if self.records.is_empty() {
            return Ok(()); // Drop removes the file.
        }
        self.flush()?;
        let mut idx = Vec::with_capacity(IDX_MAGIC.len() + self.records.len() * IDX_RECORD);
        idx.extend_from_slice(IDX_MAGIC);
        for (hash, offset, len) in &self.records {
            idx.extend_from_slice(hash);
            idx.extend_from_slice(&offset.to_le_bytes());
            idx.extend_from_slice(&len.to_le_bytes());
        }
        let dest = self.pack.with_extension("idx");
        let tmp = self.pack.with_extension("idx-tmp");
        if let Err(e) = std::fs::write(&tmp, &idx) {
            let _ = std::fs::remove_file(&tmp);
            return Err(CheckpointError::io("writing", &tmp, e));
        }
        std::fs::rename(&tmp, &dest).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            CheckpointError::io("storing", &dest, e)
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.pack);
        }
    }
}

/// Reads `len` bytes at `offset` of `file` (named `path` in errors).
pub(crate) fn read_at(
    file: &File,
    path: &Path,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, CheckpointError> {
    let n = usize::try_from(len).map_err(|_| CheckpointError::Damaged {
        path: path.to_path_buf(),
        why: format!("a content of {len} bytes"),
    })?;
    let mut data = vec![0u8; n];
    file.read_exact_at(&mut data, offset).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            CheckpointError::Damaged {
                path: path.to_path_buf(),
                why: format!("shorter than its index says ({len} bytes at {offset})"),
            }
        } else {
            CheckpointError::io("reading", path, e)
        }
    })?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contents larger than the buffer, stored twice and between smaller ones:
    /// each once in the pack (a repeat already written out is cut off again),
    /// every record's bytes where the index says.
    #[test]
    fn a_repeated_content_is_kept_once_even_past_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let small = b"small".to_vec();
        let mut w = PackWriter::create(dir.path()).unwrap();
        let what = Path::new("x");
        let mut put =
            |data: &[u8], expect: u64| w.put(&mut &data[..], what, expect, |_| false).unwrap();
        let (h_big, n) = put(&big, big.len() as u64);
        assert_eq!(n, big.len() as u64);
        let (h_small, _) = put(&small, 0); // (a wrong size is only a hint)
        assert_eq!(put(&big, big.len() as u64 - 1).0, h_big);
        assert_eq!(put(&small, small.len() as u64).0, h_small);
        let pack = w.pack.clone();
        w.commit().unwrap();
        let records = read_idx(&pack.with_extension("idx")).unwrap();
        assert_eq!(records.len(), 2);
        let file = File::open(&pack).unwrap();
        assert_eq!(
            file.metadata().unwrap().len(),
            (big.len() + small.len()) as u64
        );
        for (hash, offset, len) in records {
            let data = read_at(&file, &pack, offset, len).unwrap();
            let want: Hash = Sha256::digest(&data).into();
            assert_eq!(hash, want);
            assert!(data == big || data == small);
        }
    }
}
