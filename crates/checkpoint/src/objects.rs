//! File contents, stored once each under their sha256: in packs
//! (`packs/<id>.pack` + `.idx`, see [`crate::pack`]), which every save since
//! the pack format writes, and as loose files (`objects/ab/cdef…`), which
//! stores made before it hold and which are still read and swept.

use crate::error::CheckpointError;
use crate::pack::{Hash, Index, Location, PackWriter, read_at, read_idx};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The content store: loose objects under `dir`, packs under `packs`.
pub(crate) struct Objects {
    dir: PathBuf,
    packs: PathBuf,
}

impl Objects {
    pub(crate) fn new(dir: PathBuf, packs: PathBuf) -> Objects {
        Objects { dir, packs }
    }

    fn loose_path(&self, hash: &str) -> PathBuf {
        let (a, b) = hash.split_at(2.min(hash.len()));
        self.dir.join(a).join(b)
    }

    /// True when the store may hold loose objects (made before packs): only
    /// then is a content looked for as a file of its own.
    fn has_loose(&self) -> bool {
        std::fs::read_dir(&self.dir).is_ok_and(|mut d| d.next().is_some())
    }

    /// What a save or restore needs: the packs' merged index, read now.
    pub(crate) fn view(&self) -> Result<View<'_>, CheckpointError> {
        Ok(View {
            objects: self,
            index: Index::load(&self.packs)?,
            loose: self.has_loose(),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A new pack for the contents of one save.
    pub(crate) fn new_pack(&self) -> Result<PackWriter, CheckpointError> {
        PackWriter::create(&self.packs)
    }

    /// Removes every content whose hash is not in `keep`: loose objects, packs
    /// nothing refers to, and a pack's dead contents once they are most of it
    /// (its live ones are copied to a new pack first). Also removes what saves
    /// that never finished left. The caller holds the exclusive lock.
    pub(crate) fn retain(&self, keep: &HashSet<String>) -> Result<(), CheckpointError> {
        self.retain_loose(keep);
        self.retain_packs(keep)
    }

    fn retain_loose(&self, keep: &HashSet<String>) {
        let Ok(dirs) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for d in dirs.flatten() {
            let prefix = d.file_name().to_string_lossy().into_owned();
            let Ok(files) = std::fs::read_dir(d.path()) else {
                continue;
            };
            for f in files.flatten() {
                let rest = f.file_name().to_string_lossy().into_owned();
                if rest.starts_with(".tmp-") || !keep.contains(&format!("{prefix}{rest}")) {
                    let _ = std::fs::remove_file(f.path());
                }
            }
            let _ = std::fs::remove_dir(d.path()); // When it is empty now.
        }
    }

    fn retain_packs(&self, keep: &HashSet<String>) -> Result<(), CheckpointError> {
        let Ok(rd) = std::fs::read_dir(&self.packs) else {
            return Ok(());
        };
        let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        // Unfinished saves: a pack without its index, a temporary index.
        for f in &files {
            let ext = f.extension().and_then(|x| x.to_str()).unwrap_or("");
            if ext == "idx-tmp" || (ext == "pack" && !f.with_extension("idx").exists()) {
                let _ = std::fs::remove_file(f);
            }
        }
        let idx_files: Vec<&PathBuf> = files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "idx"))
            .collect();
        // A damaged index keeps everything: never sweep on a guess.
        let mut indexes = Vec::new();
        for idx in idx_files {
            match read_idx(idx) {
                Ok(r) => indexes.push((idx, r)),
                Err(_) => return Ok(()),
            }
        }
        // Contents kept by an earlier pack (in name order) are dead in later ones.
        let mut kept: HashSet<Hash> = HashSet::new();
        for (idx, records) in indexes {
            let pack = idx.with_extension("pack");
            let total: u64 = records.iter().map(|r| r.2).sum();
            let live: Vec<&(Hash, u64, u64)> = records
                .iter()
                .filter(|(h, _, _)| !kept.contains(h) && keep.contains(&hex(h)))
                .collect();
            let live_bytes: u64 = live.iter().map(|r| r.2).sum();
            if live.is_empty() {
                // The index first: a pack without one is swept as unfinished.
                let _ = std::fs::remove_file(idx);
                let _ = std::fs::remove_file(&pack);
                continue;
            }
            if live_bytes.saturating_mul(2) < total {
                let file =
                    File::open(&pack).map_err(|e| CheckpointError::io("opening", &pack, e))?;
                let mut out = self.new_pack()?;
                for (_, offset, len) in &live {
                    let data = read_at(&file, &pack, *offset, *len)?;
                    out.put(&mut data.as_slice(), &pack, *len, |_| false)?;
                }
                out.commit()?;
                let _ = std::fs::remove_file(idx);
                let _ = std::fs::remove_file(&pack);
            }
            kept.extend(live.iter().map(|r| r.0));
        }
        Ok(())
    }
}

/// The store as one operation sees it: the packs' index and their open files.
/// `Sync`: a save's workers ask it what is stored already.
pub(crate) struct View<'a> {
    objects: &'a Objects,
    index: Index,
    loose: bool,
    open: Mutex<HashMap<usize, File>>,
}

impl View<'_> {
    /// True when the content `hash` (hex) is stored.
    pub(crate) fn has(&self, hash: &str) -> bool {
        parse_hex(hash).is_some_and(|h| self.has_hash(&h))
    }

    /// True when the content `hash` is stored.
    pub(crate) fn has_hash(&self, hash: &Hash) -> bool {
        self.index.at.contains_key(hash)
            || (self.loose && self.objects.loose_path(&hex(hash)).is_file())
    }

    /// The content stored under `hash` (hex), checked against its size and its
    /// hash (damage is an error, never wrong bytes).
    pub(crate) fn read(&self, hash: &str, size: u64) -> Result<Vec<u8>, CheckpointError> {
        let parsed = parse_hex(hash);
        let (data, path) = match parsed.and_then(|h| self.index.at.get(&h).copied()) {
            Some(at) => self.read_packed(at)?,
            None => {
                let p = self.objects.loose_path(hash);
                let data = std::fs::read(&p).map_err(|e| CheckpointError::io("reading", &p, e))?;
                (data, p)
            }
        };
        if data.len() as u64 != size {
            return Err(CheckpointError::Damaged {
                path,
                why: format!("{} bytes where {size} were saved", data.len()),
            });
        }
        if parsed != Some(Sha256::digest(&data).into()) {
            return Err(CheckpointError::Damaged {
                path,
                why: format!("the content saved as {hash} reads back different"),
            });
        }
        Ok(data)
    }

    fn read_packed(&self, at: Location) -> Result<(Vec<u8>, PathBuf), CheckpointError> {
        let path = self
            .index
            .packs
            .get(at.pack)
            .cloned()
            .unwrap_or_else(|| self.objects.packs.clone());
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let file = match open.entry(at.pack) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(File::open(&path).map_err(|e| CheckpointError::io("opening", &path, e))?)
            }
        };
        let data = read_at(file, &path, at.offset, at.len)?;
        Ok((data, path))
    }
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// A content address from its hex form (`None`: not one).
pub(crate) fn parse_hex(text: &str) -> Option<Hash> {
    // (By table: a save parses every reused file's hash, twice.)
    const NOT: u8 = 0xff;
    const DIGIT: [u8; 256] = {
        let mut t = [NOT; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    let mut bad = 0u8;
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let (hi, lo) = (DIGIT[usize::from(pair[0])], DIGIT[usize::from(pair[1])]);
        bad |= (hi | lo) & 0xf0;
        *o = (hi << 4) | (lo & 0x0f);
    }
    (bad == 0).then_some(out)
}

/// The content address of the bytes of `path` (hex), read in pieces, or
/// `None` when it cannot be read.
pub(crate) fn hash_file(path: &Path) -> Option<String> {
    let mut f = File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut f, &mut hasher).ok()?;
    Some(hex(&hasher.finalize()))
}
