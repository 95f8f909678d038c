//! The compact binary form of a manifest's body (format `safesh-checkpoint-3`).
//!
//! Why not JSON: a save reads the newest manifest whole (to reuse its hashes)
//! and writes a new one, so for a 10,000-file tree the manifest's encoding was
//! most of a save of an unchanged tree (serde's flattened, internally tagged
//! entries go through a buffer each). Here an entry is a few fixed-size
//! fields and two length-prefixed strings, read without a parser.
//!
//! Layout (integers little-endian; `str` is a u32 length and the bytes):
//! `name: str, created_unix_ms: u64, extra: str (JSON), roots: u32`, then per
//! root `root: str, entries: u32`, then per entry `path` (u8 0 = UTF-8 text, 1
//! = raw bytes; str), a kind byte and its fields: 0 dir `mode: u32`; 1 file
//! `mode: u32, size: u64, hash: [u8; 32], label` (u8 0 = none, 1 = str); 2
//! symlink `target` (as `path`); then the stamp (u8 0 = none, 1 = `ino: u64,
//! size: u64, mtime_ns: i128, ctime_ns: i128`).

use crate::objects::{hex, parse_hex};
use crate::store::{Manifest, RootSnapshot};
use crate::tree::{Entry, Kind, RelPath, Stamp};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Why a body could not be read (or written: a hash that is not one).
pub(crate) type Why = String;

/// Appends `m`'s binary form to `out`.
pub(crate) fn encode(m: &Manifest, out: &mut Vec<u8>) -> Result<(), Why> {
    put_str(out, m.name.as_bytes());
    out.extend_from_slice(&m.created_unix_ms.to_le_bytes());
    let extra = serde_json::to_vec(&m.extra).map_err(|e| e.to_string())?;
    put_str(out, &extra);
    put_len(out, m.roots.len());
    for r in &m.roots {
        put_str(out, r.root.as_os_str().as_bytes());
        put_len(out, r.entries.len());
        for e in &r.entries {
            put_path(out, &e.path);
            match &e.kind {
                Kind::Dir { mode } => {
                    out.push(0);
                    out.extend_from_slice(&mode.to_le_bytes());
                }
                Kind::File {
                    mode,
                    size,
                    hash,
                    label,
                } => {
                    out.push(1);
                    out.extend_from_slice(&mode.to_le_bytes());
                    out.extend_from_slice(&size.to_le_bytes());
                    let h = parse_hex(hash).ok_or_else(|| format!("{hash:?} is not a hash"))?;
                    out.extend_from_slice(&h);
                    match label {
                        None => out.push(0),
                        Some(l) => {
                            out.push(1);
                            put_str(out, l.as_bytes());
                        }
                    }
                }
                Kind::Symlink { target } => {
                    out.push(2);
                    put_path(out, target);
                }
            }
            match &e.stamp {
                None => out.push(0),
                Some(s) => {
                    out.push(1);
                    out.extend_from_slice(&s.ino.to_le_bytes());
                    out.extend_from_slice(&s.size.to_le_bytes());
                    out.extend_from_slice(&s.mtime_ns.to_le_bytes());
                    out.extend_from_slice(&s.ctime_ns.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

/// A manifest from its binary form (all of `body`, nothing after it).
pub(crate) fn decode(body: &[u8]) -> Result<Manifest, Why> {
    let mut r = Reader { rest: body };
    let name = r.text()?;
    let created_unix_ms = r.u64()?;
    let extra = serde_json::from_slice(r.str()?).map_err(|e| e.to_string())?;
    let n_roots = r.len()?;
    let mut roots = Vec::with_capacity(n_roots.min(1024));
    for _ in 0..n_roots {
        let root = PathBuf::from(OsStr::from_bytes(r.str()?));
        let n = r.len()?;
        // (A count is never trusted for an allocation larger than the input.)
        let mut entries = Vec::with_capacity(n.min(r.rest.len() / 8));
        for _ in 0..n {
            let path = r.path()?;
            let kind = match r.u8()? {
                0 => Kind::Dir { mode: r.u32()? },
                1 => Kind::File {
                    mode: r.u32()?,
                    size: r.u64()?,
                    hash: hex(r.take(32)?),
                    label: match r.u8()? {
                        0 => None,
                        _ => Some(r.text()?),
                    },
                },
                2 => Kind::Symlink { target: r.path()? },
                k => return Err(format!("unknown entry kind {k}")),
            };
            let stamp = match r.u8()? {
                0 => None,
                _ => Some(Stamp {
                    ino: r.u64()?,
                    size: r.u64()?,
                    mtime_ns: r.i128()?,
                    ctime_ns: r.i128()?,
                }),
            };
            entries.push(Entry { path, kind, stamp });
        }
        roots.push(RootSnapshot { root, entries });
    }
    if !r.rest.is_empty() {
        return Err(format!("{} bytes after the manifest", r.rest.len()));
    }
    Ok(Manifest {
        name,
        created_unix_ms,
        roots,
        extra,
        label_epoch: None,
    })
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    // Lengths past 4 GiB do not occur (a manifest is read whole); saturate.
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len());
    out.extend_from_slice(s);
}

fn put_path(out: &mut Vec<u8>, p: &RelPath) {
    match p {
        RelPath::Text(s) => {
            out.push(0);
            put_str(out, s.as_bytes());
        }
        RelPath::Bytes { bytes } => {
            out.push(1);
            put_str(out, bytes);
        }
    }
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Why> {
        if self.rest.len() < n {
            return Err("it ends too early".to_string());
        }
        let (a, b) = self.rest.split_at(n);
        self.rest = b;
        Ok(a)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], Why> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, Why> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, Why> {
        Ok(u32::from_le_bytes(self.fixed()?))
    }

    fn u64(&mut self) -> Result<u64, Why> {
        Ok(u64::from_le_bytes(self.fixed()?))
    }

    fn i128(&mut self) -> Result<i128, Why> {
        Ok(i128::from_le_bytes(self.fixed()?))
    }

    fn len(&mut self) -> Result<usize, Why> {
        usize::try_from(self.u32()?).map_err(|e| e.to_string())
    }

    fn str(&mut self) -> Result<&'a [u8], Why> {
        let n = self.len()?;
        self.take(n)
    }

    fn text(&mut self) -> Result<String, Why> {
        String::from_utf8(self.str()?.to_vec()).map_err(|e| e.to_string())
    }

    fn path(&mut self) -> Result<RelPath, Why> {
        match self.u8()? {
            0 => Ok(RelPath::Text(self.text()?)),
            1 => Ok(RelPath::Bytes {
                bytes: self.str()?.to_vec(),
            }),
            t => Err(format!("unknown path form {t}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind_and_rejects_truncation() {
        let m = Manifest {
            name: "c1".into(),
            created_unix_ms: 1_700_000_000_123,
            roots: vec![RootSnapshot {
                root: PathBuf::from(OsStr::from_bytes(b"/p/r\xff")),
                entries: vec![
                    Entry {
                        path: RelPath::Text("d".into()),
                        kind: Kind::Dir { mode: 0o755 },
                        stamp: None,
                    },
                    Entry {
                        path: RelPath::Bytes {
                            bytes: b"d/\xfe".to_vec(),
                        },
                        kind: Kind::File {
                            mode: 0o600,
                            size: 3,
                            hash: hex(&[7u8; 32]),
                            label: Some("{\"c\":\"secret\"}".into()),
                        },
                        stamp: Some(Stamp {
                            ino: 9,
                            size: 3,
                            mtime_ns: -5,
                            ctime_ns: 1 << 70,
                        }),
                    },
                    Entry {
                        path: RelPath::Text("l".into()),
                        kind: Kind::Symlink {
                            target: RelPath::Text("../x".into()),
                        },
                        stamp: None,
                    },
                ],
            }],
            extra: serde_json::json!({"context": {"project": [1]}}),
            label_epoch: None,
        };
        let mut out = Vec::new();
        encode(&m, &mut out).unwrap();
        let back = decode(&out).unwrap();
        assert_eq!(back.name, m.name);
        assert_eq!(back.created_unix_ms, m.created_unix_ms);
        assert_eq!(back.extra, m.extra);
        assert_eq!(back.roots[0].root, m.roots[0].root);
        assert_eq!(back.roots[0].entries, m.roots[0].entries);
        for cut in [1, out.len() / 2, out.len() - 1] {
            assert!(decode(&out[..cut]).is_err(), "cut at {cut}");
        }
        out.push(0);
        assert!(decode(&out).is_err());
    }
}
