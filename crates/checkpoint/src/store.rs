//! The checkpoint store: `<state>/checkpoints/{packs,objects,projects/<key>/<name>.json,lock}`.
//! Saves (and restores) hold a shared `flock` on `lock`, the sweep of
//! unreferenced contents an exclusive one, so a sweep never removes what a
//! concurrent save or restore relies on. A save writes its contents to one new
//! pack, commits the pack (its index), then writes its manifest to a temporary
//! name and renames it: a save killed half way leaves the previous state
//! readable.
//!
//! A manifest file is one line of [`Summary`] (with a format tag) and then the
//! manifest, so listing checkpoints reads a few hundred bytes of each, not every
//! path it holds. (Manifests written before that are one JSON document; they
//! are still read.)

use crate::delta::{Previous, walk_root};
use crate::error::CheckpointError;
use crate::gather::{Gathering, ToRead};
use crate::journal::Baseline;
use crate::objects::{Objects, hex};
use crate::tree::{Entry, Filter, Kind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// One root of a checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RootSnapshot {
    /// The root (absolute).
    pub root: PathBuf,
    /// Its paths, sorted.
    pub entries: Vec<Entry>,
}

/// A saved checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Its name.
    pub name: String,
    /// When it was saved (ms since the epoch).
    pub created_unix_ms: u64,
    /// The roots it holds.
    pub roots: Vec<RootSnapshot>,
    /// What the caller saved with it (the context store's scopes).
    #[serde(default)]
    pub extra: serde_json::Value,
    /// What the files' labels were computed under: the sha256 (hex) of
    /// [`SaveRequest::label_epoch`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_epoch: Option<String>,
}

/// A checkpoint as listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Its name.
    pub name: String,
    /// When it was saved (ms since the epoch).
    pub created_unix_ms: u64,
    /// Regular files in it.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Limits and exclusions (`[checkpoints]`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Excluded paths (see [`Filter::exclude`]).
    pub exclude: Vec<String>,
    /// The most bytes of regular files a checkpoint may hold.
    pub max_bytes: u64,
    /// How many checkpoints of a project are kept (oldest go first).
    pub keep: usize,
    /// Checkpoints older than this many days go (0: no age limit).
    pub max_age_days: u64,
    /// Whether a process that keeps journals uses them (`[checkpoints] journal`).
    pub journal: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            exclude: ["target/", "node_modules/", ".git/objects/"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            max_bytes: 1 << 30,
            keep: 50,
            max_age_days: 30,
            journal: true,
        }
    }
}

/// What a save did.
#[derive(Clone, Debug, Serialize)]
pub struct Saved {
    /// The checkpoint.
    #[serde(flatten)]
    pub summary: Summary,
    /// Files whose content was read (the rest were unchanged since the last save).
    pub files_read: u64,
    /// Directories listed: every one, or with a change journal (a server's
    /// saves after its first) only those where something changed.
    pub dirs_listed: u64,
    /// A checkpoint of that name was replaced.
    pub replaced: bool,
    /// Checkpoints removed by retention.
    pub expired: Vec<String>,
}

/// What to save.
pub struct SaveRequest<'a> {
    /// The project (its checkpoints are listed together).
    pub project: &'a Path,
    /// The roots to save (absolute directories).
    pub roots: &'a [PathBuf],
    /// The name; a generated one when `None`. An existing one is replaced.
    pub name: Option<&'a str>,
    /// What is left out.
    pub filter: &'a Filter<'a>,
    /// A file's label to keep with it (JSON text), if any.
    pub label_of: &'a dyn Fn(&Path) -> Option<String>,
    /// Everything a file's label depends on besides the file itself (its
    /// path, inode, size and times), as text; `None`: not known. When it
    /// equals the newest checkpoint's, a file unchanged since that checkpoint
    /// keeps the label saved there and `label_of` is not asked for it. (Kept
    /// as its sha256: a manifest holds no more of it.)
    pub label_epoch: Option<&'a str>,
    /// Saved with the checkpoint and given back as is (the context store's scopes).
    pub extra: serde_json::Value,
    /// Everything [`SaveRequest::filter`] depends on, as text, when a change
    /// journal may be used (see [`crate::keep_journals`]): a journal made
    /// under another filter is not used. `None`: every path is walked.
    pub journal: Option<&'a str>,
}

/// The store.
pub struct Store {
    dir: PathBuf,
    objects: Objects,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Holds a `flock` until dropped.
pub(crate) struct Lock(std::fs::File);

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by self.0 and open.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl Store {
    /// The store under `state_dir` (created 0700 when missing).
    pub fn open(state_dir: &Path) -> Result<Store, CheckpointError> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = state_dir.join("checkpoints");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join("objects"))
            .map_err(|e| CheckpointError::io("creating", &dir, e))?;
        Ok(Store {
            objects: Objects::new(dir.join("objects"), dir.join("packs")),
            dir,
        })
    }

    pub(crate) fn lock(&self, exclusive: bool) -> Result<Lock, CheckpointError> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = self.dir.join("lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&p)
            .map_err(|e| CheckpointError::io("opening", &p, e))?;
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        // SAFETY: a valid open fd; flock has no memory effects.
        if unsafe { libc::flock(f.as_raw_fd(), op) } != 0 {
            return Err(CheckpointError::io(
                "locking",
                &p,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Lock(f))
    }

    pub(crate) fn objects(&self) -> &Objects {
        &self.objects
    }

    fn project_dir(&self, project: &Path) -> PathBuf {
        let key = hex(&Sha256::digest(project.as_os_str().as_encoded_bytes()));
        self.dir.join("projects").join(&key[..24])
    }

    fn manifest_path(&self, project: &Path, name: &str) -> PathBuf {
        self.project_dir(project).join(format!("{name}.json"))
    }

    /// The checkpoint `name` of `project`.
    pub fn load(&self, project: &Path, name: &str) -> Result<Manifest, CheckpointError> {
        crate::name::check(name)?;
        let p = self.manifest_path(project, name);
        let text = match std::fs::read(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::NotFound(name.to_string()));
            }
            Err(e) => return Err(CheckpointError::io("reading", &p, e)),
        };
        parse(&text).map_err(|why| CheckpointError::Damaged { path: p, why })
    }

    /// The summary of checkpoint `name` from its first line (the whole
    /// manifest only for the older form).
    fn load_summary(&self, project: &Path, name: &str) -> Result<Summary, CheckpointError> {
        use std::io::Read;
        let p = self.manifest_path(project, name);
        let mut head = Vec::with_capacity(HEADER_MAX);
        let read =
            std::fs::File::open(&p).and_then(|f| f.take(HEADER_MAX as u64).read_to_end(&mut head));
        match read {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::NotFound(name.to_string()));
            }
            Err(e) => return Err(CheckpointError::io("reading", &p, e)),
        }
        if let Some(at) = head.iter().position(|&b| b == b'\n')
            && let Ok(h) = serde_json::from_slice::<Header>(&head[..at])
            && (h.format == FORMAT || h.format == FORMAT_JSON)
        {
            return Ok(h.summary);
        }
        Ok(summary(&self.load(project, name)?))
    }

    /// The checkpoints of `project`, oldest first.
    pub fn list(&self, project: &Path) -> Result<Vec<Summary>, CheckpointError> {
        let mut out = Vec::new();
        for name in self.names(project)? {
            match self.load_summary(project, &name) {
                Ok(s) => out.push(s),
                // Deleted since the listing (retention in another process).
                Err(CheckpointError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        out.sort_by(|a, b| (a.created_unix_ms, &a.name).cmp(&(b.created_unix_ms, &b.name)));
        Ok(out)
    }

    /// The names of `project`'s checkpoints (its manifests).
    fn names(&self, project: &Path) -> Result<Vec<String>, CheckpointError> {
        let dir = self.project_dir(project);
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CheckpointError::io("listing", &dir, e)),
        };
        Ok(rd
            .flatten()
            .filter_map(|f| {
                let name = f.file_name().to_string_lossy().into_owned();
                let stem = name.strip_suffix(".json")?;
                crate::name::check(stem).is_ok().then(|| stem.to_string())
            })
            .collect())
    }

    /// Removes the checkpoint `name` (its contents go at the next sweep).
    pub fn delete(&self, project: &Path, name: &str) -> Result<(), CheckpointError> {
        crate::name::check(name)?;
        let p = self.manifest_path(project, name);
        match std::fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(CheckpointError::NotFound(name.to_string()))
            }
            Err(e) => Err(CheckpointError::io("removing", &p, e)),
        }
    }

    /// Saves the roots of `req.project` (see [`SaveRequest`]). Files unchanged
    /// since the newest checkpoint (same inode, size and times) are not read again.
    pub fn save(
        &self,
        req: &SaveRequest<'_>,
        settings: &Settings,
    ) -> Result<Saved, CheckpointError> {
        let SaveRequest {
            project,
            roots,
            name,
            filter,
            label_of,
            extra,
            label_epoch,
            journal,
        } = req;
        let (project, filter, label_of) = (*project, *filter, *label_of);
        let name = match name {
            Some(n) => {
                crate::name::check(n)?;
                n.to_string()
            }
            None => crate::name::generated(u128::from(now_ms())),
        };
        // (Read before the walk: a journal describes the changes since it.)
        let previous = self.newest(project)?;
        let journal_key = journal.filter(|_| settings.journal);
        let mut journals = Vec::new();
        let mut walked = Vec::with_capacity(roots.len());
        for r in roots.iter() {
            let prev = previous.as_ref().map(|m| Previous {
                name: &m.name,
                created_unix_ms: m.created_unix_ms,
                entries: m
                    .roots
                    .iter()
                    .find(|s| &s.root == r)
                    .map_or(&[], |s| &s.entries),
            });
            let (w, j) = walk_root(&self.dir, r, filter, journal_key, prev.as_ref())?;
            journals.extend(j.map(|j| (r, j)));
            walked.push((r.clone(), w));
        }
        let (bytes, files) = walked
            .iter()
            .fold((0, 0), |(b, f), (_, w)| (b + w.bytes, f + w.files));
        let dirs_listed = walked.iter().map(|(_, w)| w.dirs_listed).sum();
        if bytes > settings.max_bytes {
            return Err(CheckpointError::TooLarge {
                bytes,
                files,
                limit: settings.max_bytes,
            });
        }
        // From here to the manifest: no sweep removes a content this save uses.
        let lock = self.lock(false)?;
        // Labels are reused only under the same epoch (see SaveRequest).
        let label_epoch = label_epoch.map(|e| hex(&Sha256::digest(e.as_bytes())));
        let same_labels = label_epoch.is_some()
            && previous.as_ref().and_then(|m| m.label_epoch.as_deref()) == label_epoch.as_deref();
        let view = self.objects.view()?;
        // Each path's entry; a file's hash (and label) from the previous save
        // when its stamp is the same, else read (by workers, see crate::gather)
        // into `to_read`.
        let mut snaps = Vec::with_capacity(walked.len());
        let mut to_read: Vec<ToRead> = Vec::new();
        let mut pending: Vec<(usize, usize)> = Vec::new();
        // Files whose label is still to be asked for: (root, entry).
        let mut to_label: Vec<(usize, usize)> = Vec::new();
        for (root, w) in walked {
            // Both sides are sorted by path: matched by one merge, no hashing.
            let before: &[Entry] = previous
                .iter()
                .flat_map(|m| &m.roots)
                .find(|r| r.root == root)
                .map_or(&[], |r| &r.entries);
            let mut at = 0;
            let mut entries = Vec::with_capacity(w.entries.len());
            for (path, mut kind, stamp) in w.entries {
                if let Kind::File {
                    size, hash, label, ..
                } = &mut kind
                {
                    while at < before.len() && before[at].path < path {
                        at += 1;
                    }
                    let known = before
                        .get(at)
                        .filter(|b| b.path == path && b.stamp.is_some() && b.stamp == stamp);
                    match known.map(|b| &b.kind) {
                        Some(Kind::File {
                            hash: h, label: l, ..
                        }) if view.has(h) => {
                            hash.clone_from(h);
                            if same_labels {
                                label.clone_from(l);
                            } else {
                                to_label.push((snaps.len(), entries.len()));
                            }
                        }
                        _ => {
                            pending.push((snaps.len(), entries.len()));
                            to_label.push((snaps.len(), entries.len()));
                            to_read.push(ToRead {
                                abs: root.join(path.to_path()),
                                stamp,
                                size: *size,
                            });
                        }
                    }
                }
                entries.push(Entry { path, kind, stamp });
            }
            snaps.push(RootSnapshot { root, entries });
        }
        let files_read = to_read.len() as u64;
        let claimed = Mutex::new(HashSet::new());
        let read = std::thread::scope(|scope| {
            let gathering = (!to_read.is_empty())
                .then(|| Gathering::start(scope, self, &view, &to_read, &claimed));
            // Meanwhile, here: the labels not reused (the caller's lookup need
            // not be thread-safe).
            for &(r, i) in &to_label {
                if let Some(snap) = snaps.get_mut(r)
                    && let Some(Entry {
                        path,
                        kind: Kind::File { label, .. },
                        ..
                    }) = snap.entries.get_mut(i)
                {
                    *label = label_of(&snap.root.join(path.to_path()));
                }
            }
            gathering.map_or(Ok(Vec::new()), Gathering::finish)
        })?;
        for ((r, i), (h, len)) in pending.into_iter().zip(read) {
            if let Some(Entry {
                kind: Kind::File { hash, size, .. },
                ..
            }) = snaps.get_mut(r).and_then(|s| s.entries.get_mut(i))
            {
                *hash = h;
                *size = len;
            }
        }
        // Strictly after the newest one, so the order of saves is the order of
        // times even within one millisecond (retention drops the oldest).
        let after = previous.as_ref().map_or(0, |m| m.created_unix_ms + 1);
        let manifest = Manifest {
            name: name.clone(),
            created_unix_ms: now_ms().max(after),
            roots: snaps,
            extra: extra.clone(),
            label_epoch,
        };
        let replaced = self.manifest_path(project, &name).exists();
        self.write_manifest(project, &manifest)?;
        drop(lock);
        let summary = summary(&manifest);
        if let Some(key) = journal_key {
            for (root, mut j) in journals {
                j.baseline = Some(Baseline {
                    name: manifest.name.clone(),
                    created_unix_ms: manifest.created_unix_ms,
                    filter_key: key.to_string(),
                });
                j.keep(&self.dir, root);
            }
            // The next save's `previous`, without reading it back.
            crate::journal::remember(self.project_dir(project), Arc::new(manifest));
        }
        let expired = self.expire(project, settings, &name)?;
        Ok(Saved {
            summary,
            files_read,
            dirs_listed,
            replaced,
            expired,
        })
    }

    /// The newest checkpoint of `project` (found by the summaries; only it is
    /// read whole).
    fn newest(&self, project: &Path) -> Result<Option<Arc<Manifest>>, CheckpointError> {
        let Some(newest) = self.list(project)?.pop() else {
            return Ok(None);
        };
        let dir = self.project_dir(project);
        if let Some(m) = crate::journal::recall(&dir, &newest.name, newest.created_unix_ms) {
            return Ok(Some(m));
        }
        match self.load(project, &newest.name) {
            Ok(m) => Ok(Some(Arc::new(m))),
            // Gone since (retention elsewhere): nothing to reuse is still correct.
            Err(CheckpointError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write_manifest(&self, project: &Path, m: &Manifest) -> Result<(), CheckpointError> {
        let dir = self.project_dir(project);
        std::fs::create_dir_all(&dir).map_err(|e| CheckpointError::io("creating", &dir, e))?;
        let dest = self.manifest_path(project, &m.name);
        let tmp = dir.join(format!(".tmp-{}-{}", m.name, std::process::id()));
        let damaged = |e: serde_json::Error| CheckpointError::Damaged {
            path: dest.clone(),
            why: e.to_string(),
        };
        let mut text = serde_json::to_vec(&Header {
            format: FORMAT.to_string(),
            summary: summary(m),
            label_epoch: m.label_epoch.clone(),
        })
        .map_err(damaged)?;
        text.push(b'\n');
        crate::codec::encode(m, &mut text).map_err(|why| CheckpointError::Damaged {
            path: dest.clone(),
            why,
        })?;
        // Not fsynced, as the contents are not (see crate::pack).
        if let Err(e) = std::fs::write(&tmp, &text) {
            let _ = std::fs::remove_file(&tmp);
            return Err(CheckpointError::io("writing", &tmp, e));
        }
        std::fs::rename(&tmp, &dest).map_err(|e| CheckpointError::io("storing", &dest, e))
    }

    /// Applies retention to `project` (never removing `keep_name`), then sweeps
    /// contents no checkpoint of any project uses.
    fn expire(
        &self,
        project: &Path,
        settings: &Settings,
        keep_name: &str,
    ) -> Result<Vec<String>, CheckpointError> {
        let mut list = self.list(project)?;
        let now = now_ms();
        let max_age = settings.max_age_days.saturating_mul(86_400_000);
        let mut expired = Vec::new();
        let mut count = list.len();
        list.retain(|s| s.name != keep_name);
        for s in list {
            let too_old = max_age > 0 && now.saturating_sub(s.created_unix_ms) > max_age;
            if (count > settings.keep.max(1) || too_old) && self.delete(project, &s.name).is_ok() {
                expired.push(s.name);
                count -= 1;
            }
        }
        if !expired.is_empty() {
            self.sweep()?;
        }
        Ok(expired)
    }

    /// Removes contents no checkpoint refers to (exclusive lock: no save runs).
    pub fn sweep(&self) -> Result<(), CheckpointError> {
        let _lock = self.lock(true)?;
        let mut keep = HashSet::new();
        let projects = self.dir.join("projects");
        for p in std::fs::read_dir(&projects).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(p.path()).into_iter().flatten().flatten() {
                // Only manifests (a killed save's temporary file is not one).
                let name = f.file_name();
                let name = name.to_string_lossy();
                if !name.ends_with(".json") || name.starts_with('.') {
                    continue;
                }
                let Ok(text) = std::fs::read(f.path()) else {
                    continue;
                };
                let Ok(m) = parse(&text) else {
                    // A damaged manifest keeps everything: never sweep on a guess.
                    return Ok(());
                };
                for e in m.roots.iter().flat_map(|r| &r.entries) {
                    if let Kind::File { hash, .. } = &e.kind {
                        keep.insert(hash.clone());
                    }
                }
            }
        }
        self.objects.retain(&keep)
    }
}

/// The format tag of a manifest's first line: the body after it is binary
/// (see [`crate::codec`]).
const FORMAT: &str = "safesh-checkpoint-3";
/// The tag of manifests whose body is JSON (still read).
const FORMAT_JSON: &str = "safesh-checkpoint-2";

/// A manifest file's manifest: after its summary line, the binary body (format
/// 3) or JSON (format 2); a file without a summary line is the oldest form,
/// one JSON document (compact JSON holds no raw newline).
fn parse(text: &[u8]) -> Result<Manifest, String> {
    let Some(at) = text.iter().position(|&b| b == b'\n') else {
        return serde_json::from_slice(text).map_err(|e| e.to_string());
    };
    let (head, body) = (&text[..at], &text[at + 1..]);
    let header: Header = serde_json::from_slice(head).map_err(|e| e.to_string())?;
    match header.format.as_str() {
        FORMAT => crate::codec::decode(body).map(|m| Manifest {
            label_epoch: header.label_epoch,
            ..m
        }),
        FORMAT_JSON => serde_json::from_slice(body).map_err(|e| e.to_string()),
        other => Err(format!("unknown manifest format {other:?}")),
    }
}

/// The most bytes of a manifest read to find its summary line.
const HEADER_MAX: usize = 4096;

/// A manifest's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    #[serde(flatten)]
    summary: Summary,
    /// [`Manifest::label_epoch`] (the body's encoding has no room for it;
    /// readers that do not know it skip it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label_epoch: Option<String>,
}

fn summary(m: &Manifest) -> Summary {
    let (files, bytes) = m
        .roots
        .iter()
        .flat_map(|r| &r.entries)
        .fold((0, 0), |(f, b), e| match &e.kind {
            Kind::File { size, .. } => (f + 1, b + size),
            _ => (f, b),
        });
    Summary {
        name: m.name.clone(),
        created_unix_ms: m.created_unix_ms,
        files,
        bytes,
    }
}
