//! Config trust: a project config applies only once the human trusted its exact
//! content (`safesh trust`), recorded by hash in safesh's state.
//!
//! The record is `<state_dir>/trusted.json`, a plain JSON object mapping each
//! trusted file's canonical path to the sha256 (lowercase hex) of its bytes:
//! `{"/home/me/proj/safesh.toml": "ab12…"}`. Any edit changes the hash, so an
//! edited config is untrusted again until the human re-runs `safesh trust`.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file name of the trust record inside the state directory.
pub const TRUST_FILE: &str = "trusted.json";

/// The sha256 of `bytes`, lowercase hex.
pub fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Records `file`'s current content as trusted; returns its hash. Creates the
/// state directory if needed and keeps every other entry.
pub fn trust_file(state_dir: &Path, file: &Path) -> io::Result<String> {
    let canon = std::fs::canonicalize(file)?;
    let bytes = std::fs::read(&canon)?;
    let hash = hash_bytes(&bytes);
    let mut map = read_record(state_dir)?;
    map.insert(path_key(&canon), hash.clone());
    write_record(state_dir, &map)?;
    Ok(hash)
}

/// Forgets `file`; returns whether it was trusted. A file that no longer exists is
/// looked up by its path made absolute.
pub fn untrust_file(state_dir: &Path, file: &Path) -> io::Result<bool> {
    let canon = std::fs::canonicalize(file).unwrap_or_else(|_| absolute(file));
    let mut map = read_record(state_dir)?;
    let removed = map.remove(&path_key(&canon)).is_some();
    if removed {
        write_record(state_dir, &map)?;
    }
    Ok(removed)
}

/// Whether `bytes` (the content just read from `file`) is the content trusted for
/// `file`'s canonical path. Any error (no record, unreadable, bad JSON) means
/// untrusted: trust is never granted by accident.
pub fn is_trusted(state_dir: &Path, file: &Path, bytes: &[u8]) -> bool {
    let Ok(canon) = std::fs::canonicalize(file) else {
        return false;
    };
    let Ok(map) = read_record(state_dir) else {
        return false;
    };
    map.get(&path_key(&canon))
        .is_some_and(|h| *h == hash_bytes(bytes))
}

/// Every trusted path with its hash.
pub fn trusted_files(state_dir: &Path) -> io::Result<BTreeMap<String, String>> {
    read_record(state_dir)
}

fn path_key(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn read_record(state_dir: &Path) -> io::Result<BTreeMap<String, String>> {
    let path = state_dir.join(TRUST_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e),
    }
}

/// Writes the record atomically (temp file in the same directory, then rename), so
/// a concurrent reader sees the old or the new record, never half of one.
fn write_record(state_dir: &Path, map: &BTreeMap<String, String>) -> io::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    let json = serde_json::to_vec_pretty(map).map_err(io::Error::other)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = state_dir.join(format!(".{TRUST_FILE}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| {
        use std::os::unix::fs::OpenOptionsExt;
        // Only the user reads which configs they trusted.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&json)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, state_dir.join(TRUST_FILE))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
