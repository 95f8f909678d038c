//! Classification: which files and environment variables are secret.
//!
//! **Files.** `[labels] secret` is an ordered list of globs; the built-in list
//! (`.env`, `.env.*`, `!.env.example`, `**/*.pem`, `**/*.key`, `**/id_rsa`,
//! `**/id_ed25519`, `**/id_ecdsa`, `~/.ssh/**`, `~/.aws/**`) always comes first and
//! each config layer appends to it. Like `.gitignore`, the **last** matching
//! pattern decides, and a leading `!` makes a match *not* secret, so a config can
//! exclude a built-in default (`"!**/test-fixtures/*.pem"`). Patterns (resolved by
//! the policy crate when the config is loaded):
//! * a pattern without `/` (`.env`) matches that name at any depth, anywhere;
//! * a pattern starting with `**` matches anywhere;
//! * any other relative pattern (`secrets/**`) is anchored at the directory of the
//!   config file that declared it (the project root for `safesh.toml`);
//! * `~/…` is under the home directory; absolute patterns are absolute;
//! * `*` does not cross `/`; `**` does.
//!
//! A path is checked as given (made absolute against the project directory,
//! `.`/`..` removed) and, when it exists, with its symlinks resolved: it is
//! secret if either form is, so a symlink to `.env` is as secret as `.env`.
//!
//! **Named labels.** `[labels.NAME] files = [...]` (same glob rules, anchored at
//! the declaring file) and `env = [...]` (variable names; `*` and `?` allowed)
//! carry the confidentiality atom `Secret(NAME)`.
//!
//! **Environment.** A variable named by a label's `env` gets that label only; a
//! variable matching an `[env] mask` pattern (built in: `*_KEY`, `*_SECRET`,
//! `*_TOKEN`, `*_PASSWORD`, `AWS_*`) and named by no label is generic `secret`.
//! A named label wins over the mask so that a brokered token (`GITHUB_TOKEN` with
//! `may_flow_to = ["api.github.com"]`) can still reach its host.

use crate::hosts::{FlowDenied, HostPolicy};
use crate::redact;
use globset::{GlobBuilder, GlobMatcher};
use safesh_label::Label;
use safesh_policy::config::{Config, LazyMatcher, NameGlob, PathGlob};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The generic secret class of secret files and masked variables.
pub const SECRET: &str = "secret";

/// A variable-name pattern from a label's `env`.
#[derive(Clone, Debug)]
enum EnvName {
    Exact(String),
    Glob(GlobMatcher),
}

impl EnvName {
    fn new(written: &str) -> Self {
        if !written.contains(['*', '?', '[']) {
            return EnvName::Exact(written.to_string());
        }
        match GlobBuilder::new(written).literal_separator(false).build() {
            Ok(g) => EnvName::Glob(g.compile_matcher()),
            // Not a valid glob: the name as written.
            Err(_) => EnvName::Exact(written.to_string()),
        }
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            EnvName::Exact(e) => e == name,
            EnvName::Glob(g) => g.is_match(name),
        }
    }
}

#[derive(Clone, Debug)]
struct Named {
    name: String,
    files: Vec<PathGlob>,
    env: Vec<EnvName>,
}

/// Maps paths and variable names to labels (see the module docs).
#[derive(Clone, Debug)]
pub struct Classifier {
    base: PathBuf,
    home: Option<PathBuf>,
    secret: Vec<(bool, LazyMatcher)>,
    named: Vec<Named>,
    masks: Vec<NameGlob>,
    hosts: HostPolicy,
    /// Labels already computed, by normalized path (with the canonical form they
    /// were computed for): a label is a pure function of the two paths and the
    /// config, and a run reads the same files again and again (`grep -r`, `find`
    /// then `xargs`). Shared by clones (same config).
    /// (Keyed by the path's bytes: hashing a `Path` walks its components.)
    cache: Arc<Mutex<LabelCache>>,
}

/// Computed file labels: normalized path (bytes) → (canonical form, label).
type LabelCache = HashMap<Vec<u8>, (Option<PathBuf>, Label), BuildHasherDefault<PathHasher>>;

/// A multiply-rotate hash over 8-byte words (SipHash costs more than the rest of
/// a cache hit). Paths that collide on purpose only slow the cache down, which is
/// bounded by [`CACHE_ENTRIES`].
#[derive(Default)]
struct PathHasher(u64);

impl Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Entries kept in [`Classifier`]'s cache before it starts over.
const CACHE_ENTRIES: usize = 4096;

impl Classifier {
    /// From the merged config (`[labels]`, `[labels.NAME]`, `[env] mask`).
    pub fn from_config(config: &Config) -> Self {
        Classifier {
            base: config.base_dir.clone(),
            home: config.home.clone(),
            secret: config
                .labels
                .secret
                .iter()
                .map(|(include, g)| (*include, g.matcher.clone()))
                .collect(),
            named: config
                .labels
                .named
                .iter()
                .map(|(name, l)| Named {
                    name: name.clone(),
                    files: l.files.clone(),
                    env: l.env.iter().map(|e| EnvName::new(e)).collect(),
                })
                .collect(),
            masks: config.env.mask.clone(),
            hosts: HostPolicy::from_config(config),
            cache: Arc::default(),
        }
    }

    /// The forms of `path` that are checked: as given (absolute, normalized)
    /// and, when it exists, canonical.
    fn candidates(&self, path: &Path) -> Vec<PathBuf> {
        let abs = normalize(&self.base.join(path));
        let mut out = vec![abs.clone()];
        if let Ok(c) = safesh_policy::paths::canonicalize(&abs)
            && c != abs
        {
            out.push(c);
        }
        out
    }

    fn secret_match(&self, path: &Path) -> bool {
        // Last match wins (gitignore).
        self.secret
            .iter()
            .rev()
            .find(|(_, m)| m.is_match(path))
            .is_some_and(|(include, _)| *include)
    }

    /// Whether the file is secret (generic `[labels] secret`). The sandbox hides
    /// these from external programs.
    pub fn is_secret_path(&self, path: &Path) -> bool {
        self.candidates(path).iter().any(|p| self.secret_match(p))
    }

    /// Whether reading the file gives confidential bytes by the classification:
    /// secret, or matched by a named label's `files`.
    pub fn is_confidential_path(&self, path: &Path) -> bool {
        self.candidates(path)
            .iter()
            .any(|p| self.confidential_match(p))
    }

    /// [`Classifier::is_confidential_path`] for a path already absolute and
    /// resolved (a directory walk's entry that is not a symlink): no lookup.
    pub fn is_confidential_resolved(&self, path: &Path) -> bool {
        self.confidential_match(path)
    }

    fn confidential_match(&self, path: &Path) -> bool {
        self.secret_match(path)
            || self
                .named
                .iter()
                .any(|n| n.files.iter().any(|g| g.matcher.is_match(path)))
    }

    /// The named labels whose `files` match the path.
    pub fn named_for_path(&self, path: &Path) -> Vec<&str> {
        let cands = self.candidates(path);
        self.named
            .iter()
            .filter(|n| {
                n.files
                    .iter()
                    .any(|g| cands.iter().any(|c| g.matcher.is_match(c)))
            })
            .map(|n| n.name.as_str())
            .collect()
    }

    /// The label of bytes read from the file at `path` (relative paths are
    /// relative to the project directory): its file origin, joined with
    /// `secret` when it is a secret file and with each named label whose `files`
    /// match.
    pub fn path_label(&self, path: &Path) -> Label {
        self.path_label_resolved(path, None)
    }

    /// [`Classifier::path_label`] when the caller already resolved the path:
    /// `real` is what [`safesh_policy::paths::canonicalize`] gives for it (the
    /// path exists), so it is not resolved a second time. `None`: resolve here.
    pub fn path_label_resolved(&self, path: &Path, real: Option<&Path>) -> Label {
        let abs = absolute_normalized(&self.base, path);
        let canonical = match real {
            Some(r) => (r != abs.as_ref()).then_some(Cow::Borrowed(r)),
            None => safesh_policy::paths::canonicalize(&abs)
                .ok()
                .filter(|c| c != abs.as_ref())
                .map(Cow::Owned),
        };
        let lock = || self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((c, l)) = lock().get(abs.as_os_str().as_bytes())
            && c.as_deref() == canonical.as_deref()
        {
            return l.clone();
        }
        let label = self.classify(&abs, canonical.as_deref());
        let mut cache = lock();
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        if cache.capacity() == 0 {
            cache.reserve(256);
        }
        cache.insert(
            abs.as_os_str().as_bytes().to_vec(),
            (canonical.map(Cow::into_owned), label.clone()),
        );
        label
    }

    /// The label of `abs` (absolute, normalized) whose canonical form, when it
    /// exists and differs, is `canonical`.
    fn classify(&self, abs: &Path, canonical: Option<&Path>) -> Label {
        let cands = std::iter::once(abs).chain(canonical);
        let mut label = Label::from_file(abs.to_string_lossy().into_owned());
        if cands.clone().any(|p| self.secret_match(p)) {
            label = label.join(&Label::secret(SECRET));
        }
        for n in &self.named {
            if n.files
                .iter()
                .any(|g| cands.clone().any(|c| g.matcher.is_match(c)))
            {
                label = label.join(&Label::secret(n.name.as_str()));
            }
        }
        label
    }

    /// The label of environment variable `name` when it is secret: the named
    /// labels listing it, else generic `secret` when a mask matches; `None` for
    /// an ordinary variable.
    pub fn env_label(&self, name: &str) -> Option<Label> {
        // Every variable of the environment is asked at session start, and most
        // match nothing: decide before building any label.
        let mut named = self
            .named
            .iter()
            .filter(|n| n.env.iter().any(|e| e.matches(name)))
            .map(|n| n.name.as_str())
            .peekable();
        if named.peek().is_some() {
            return Some(named.fold(Label::from_env(name), |l, n| l.join(&Label::secret(n))));
        }
        self.masks
            .iter()
            .any(|m| m.matcher.is_match(name))
            .then(|| Label::from_env(name).join(&Label::secret(SECRET)))
    }

    /// The may-flow-to rules of the named labels.
    pub fn hosts(&self) -> &HostPolicy {
        &self.hosts
    }

    /// Whether data labeled `data` may be sent to `host` (see [`crate::hosts`]).
    pub fn flows_to_host(&self, data: &Label, host: &str) -> Result<(), FlowDenied> {
        self.hosts.flows_to_host(data, host)
    }

    /// `None` when output labeled `label` may be shown to the model; otherwise
    /// the placeholder to show instead (see [`crate::redact`]).
    /// True for an origin that is itself a secret: a confidential file (by the
    /// configured patterns) or a secret variable. The only file and variable
    /// origins named to the model for hidden data — any other path in a secret
    /// label may have been built from the secret.
    pub fn is_secret_origin(&self, atom: &safesh_label::Atom) -> bool {
        match atom {
            safesh_label::Atom::File(p) => self.is_confidential_path(Path::new(&**p)),
            safesh_label::Atom::Env(n) => self.env_label(n).is_some_and(|l| l.is_secret()),
            _ => false,
        }
    }

    /// The placeholder for hidden output (see [`redact::summary`]); `None` when
    /// output labeled `label` may be shown to the model.
    pub fn redaction_summary(&self, label: &Label, lines: usize) -> Option<String> {
        let secret_origin = |a: &safesh_label::Atom| self.is_secret_origin(a);
        redact::summary(
            &self.hosts,
            label,
            lines,
            &self.base,
            self.home.as_deref(),
            &secret_origin,
        )
    }
}

/// `base.join(path)`, `.` and `..` removed; borrowed when `path` already is
/// absolute and normalized (the common case: a utility's resolved path).
fn absolute_normalized<'a>(base: &Path, path: &'a Path) -> Cow<'a, Path> {
    if safesh_policy::paths::is_normalized_absolute(path) {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(normalize(&base.join(path)))
    }
}

/// Removes `.` and `..` lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
