//! Name-based checks decided on the entry reached. `[ -f x ]`, `[[ -d x ]]`,
//! `test`, `cd`, `pushd` and `pwd -P` look at a file by its name; checked by
//! name and then stat'ed by name, the path is resolved twice, and a symlink
//! flipped in between (`d` → the project, then `d` → outside) makes the stat
//! land where the check never looked: an outside file's existence, type, size
//! or times would show through the answer, and `cd` would accept a directory the
//! check did not cover. Here the name is checked ([`Shell::check_read_resolved`]),
//! then walked once without the kernel following any symlink
//! ([`safesh_utils::beneath`]), and when the entry reached has another canonical
//! path than the name's lexical one, that path is checked too, before anything
//! about it is looked at. The answer is the metadata of that entry.

use crate::error::Refusal;
use crate::interp::{Fd, Shell};
use safesh_policy::paths::ProcessPath;
use safesh_utils::beneath;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a name-based check found at a path.
pub(crate) enum Probe {
    /// An entry, with the metadata of the entry decided on.
    Entry(std::fs::Metadata),
    /// One of the script's descriptors (`/dev/stdin`, `/dev/fd/3`): a stream,
    /// readable (`true`) or writable (`false`).
    Descriptor {
        /// The descriptor is open for reading (else for writing).
        input: bool,
    },
    /// Nothing there (or a directory on the way is missing or not one).
    Missing,
}

impl Probe {
    /// The entry's metadata, when the probe found a file.
    pub(crate) fn meta(&self) -> Option<&std::fs::Metadata> {
        match self {
            Probe::Entry(m) => Some(m),
            _ => None,
        }
    }

    /// True when anything is there.
    pub(crate) fn exists(&self) -> bool {
        !matches!(self, Probe::Missing)
    }
}

impl Shell {
    /// `path` (relative to the cwd) made absolute.
    pub(crate) fn absolute(&self, path: &Path) -> PathBuf {
        // A path made from a word names the bytes the word stands for.
        let path = safesh_utils::word_bytes::unescape_path(path);
        let path = path.as_ref();
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// Looks at `path` (its final symlink followed with `follow`) for a check by
    /// name: refused when the name, or the entry the walk reaches, is outside
    /// the read roots (or safesh's own); otherwise what is there, decided on the
    /// entry reached (see the module docs).
    pub(crate) fn probe(&self, path: &Path, follow: bool) -> Result<Probe, Refusal> {
        let abs = self.absolute(path);
        if let Some(ProcessPath::Descriptor(n)) = self.descriptor_path(&abs) {
            return Ok(match self.fds.get(&n) {
                Some(Fd::In(_)) => Probe::Descriptor { input: true },
                Some(Fd::Out(_)) => Probe::Descriptor { input: false },
                None => Probe::Missing,
            });
        }
        // A program in the trusted PATH (`[ -x /usr/bin/python3 ]`): looking
        // is not reading data (as `which`); what such a name leads to outside
        // the read roots is quietly not there.
        if self.in_trusted_path(&abs) {
            let got = beneath::metadata(&abs, follow, |real| {
                if self.in_trusted_path(real) || self.check_read_resolved(real).is_ok() {
                    Ok(())
                } else {
                    Err(io::Error::from(io::ErrorKind::PermissionDenied))
                }
            });
            return Ok(got.map_or(Probe::Missing, Probe::Entry));
        }
        self.check_read_resolved(&abs)?;
        let refused: Mutex<Option<Refusal>> = Mutex::new(None);
        let got = beneath::metadata(&abs, follow, |real| {
            self.check_read_resolved(real).map(|_| ()).map_err(|r| {
                let msg = r.message.clone();
                *crate::io::lock(&refused) = Some(r);
                io::Error::new(io::ErrorKind::PermissionDenied, msg)
            })
        });
        if let Some(r) = crate::io::lock(&refused).take() {
            return Err(r);
        }
        Ok(match got {
            Ok(m) => Probe::Entry(m),
            Err(_) => Probe::Missing,
        })
    }

    /// True when `path` is an entry of a directory of the trusted PATH
    /// (`[sandbox] path`), where allowed programs come from.
    pub(crate) fn in_trusted_path(&self, path: &Path) -> bool {
        let Some(policy) = &self.shared.policy else {
            return false;
        };
        let dir = beneath::lexical(path);
        dir.parent().is_some_and(|dir| {
            policy
                .config()
                .sandbox
                .path
                .iter()
                .any(|p| p.path.as_path() == dir)
        })
    }

    /// The canonical path of the directory `path` names (every symlink on the
    /// way resolved by the walk, none followed by the kernel), refused when the
    /// name or that directory is outside the read roots: what `cd` and `pwd -P`
    /// decide on. `Ok(Err(e))` is the error to report (`No such file or
    /// directory`, `Not a directory`).
    pub(crate) fn resolve_dir(&self, path: &Path) -> Result<io::Result<PathBuf>, Refusal> {
        let abs = self.absolute(path);
        // (A descriptor name is refused here: `cd /dev/fd` would be the
        // process's own table, never the script's.)
        self.check_read_resolved(&abs)?;
        let entry = match beneath::resolve(&abs, true) {
            Ok(e) => e,
            Err(e) => return Ok(Err(e)),
        };
        if entry.real() != beneath::lexical(&abs) {
            self.check_read_resolved(entry.real())?;
        }
        if !entry.exists() {
            return Ok(Err(io::Error::from_raw_os_error(libc::ENOENT)));
        }
        if !entry.is_dir() {
            return Ok(Err(io::Error::from_raw_os_error(libc::ENOTDIR)));
        }
        Ok(Ok(entry.real().to_path_buf()))
    }
}
