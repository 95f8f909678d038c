//! The session's known secret values (`safesh_flow::known`), searched for at the
//! sinks only — network egress (`Shell::egress`), what an external program is
//! given (`external.rs`: argv, environment, stdin) and model-facing output (a
//! [`StreamConsumer`](crate::io::StreamConsumer) gets a [`KnownSource`]) — never
//! on in-process pipes, so `cat` and `grep` cost nothing more.
//!
//! The set is built lazily, the first time a sink is reached, from the secret
//! files under the working directory and the write roots (the classification's
//! walk, `SecretScan`, plus what the label store records as confidential) and the
//! secret variables of the environment; it is kept in the [`Flow`] and rebuilt
//! only when one of those files changes (device, inode, size, mtime, ctime) or a
//! secret variable's value does. Values stay in memory: never written, never
//! logged.

use crate::flow::Flow;
use crate::interp::Shell;
use crate::io::lock;
use safesh_flow::known::{KnownSecret, KnownValues, MAX_WHOLE_FILE, dotenv_values};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most bytes read from one secret file.
const MAX_READ: u64 = 1 << 20;

/// How long a [`KnownSource`] trusts its set before looking at the files again.
const RECHECK: Duration = Duration::from_millis(250);

/// What a built set was built from: each secret file's identity and times, and
/// the secret variables' values.
pub(crate) struct KnownCache {
    files: Vec<(PathBuf, FileStamp)>,
    env: Vec<(String, String)>,
    values: Arc<KnownValues>,
}

/// (dev, ino, size, mtime s, mtime ns, ctime s, ctime ns).
type FileStamp = (u64, u64, u64, i64, i64, i64, i64);

fn file_stamp(m: &std::fs::Metadata) -> FileStamp {
    (
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// Up to [`MAX_READ`] bytes of a regular file (never blocks on a FIFO swapped in).
fn read_secret(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut out = Vec::new();
    f.take(MAX_READ).read_to_end(&mut out).ok()?;
    Some(out)
}

impl Flow {
    /// `text` with the known secret values found so far (the set the last sink
    /// built) replaced by `[secret]`: the audit log's backstop behind withheld
    /// words, for a value whose label was lost on the way.
    pub(crate) fn redact_known(&self, text: String) -> String {
        match lock(&self.known).as_ref() {
            Some(c) if !c.values.is_empty() => c.values.redact(&text).into_owned(),
            _ => text,
        }
    }

    /// The known secret values for files under `roots` and the variables `env`
    /// (only those the classification makes secret count).
    pub(crate) fn known_values(
        &self,
        roots: &[PathBuf],
        env: &[(String, String)],
    ) -> Arc<KnownValues> {
        // A label store that cannot be asked refuses reads of labelled data on
        // its own; the backstop then knows the classified files it can find.
        let files = self
            .confidential_files(roots)
            .map(|(f, _)| f)
            .unwrap_or_default();
        let files: Vec<(PathBuf, FileStamp)> = files
            .into_iter()
            .filter_map(|p| {
                let m = std::fs::metadata(&p).ok()?;
                m.is_file().then(|| (p, file_stamp(&m)))
            })
            .collect();
        let env: Vec<(String, String)> = env
            .iter()
            .filter(|(k, v)| {
                v.len() >= safesh_flow::known::MIN_KNOWN_LEN && self.env_label(k).is_some()
            })
            .cloned()
            .collect();
        let mut cache = lock(&self.known);
        if let Some(c) = &*cache
            && c.files == files
            && c.env == env
        {
            return c.values.clone();
        }
        let mut secrets = Vec::new();
        for (p, _) in &files {
            let Some(bytes) = read_secret(p) else {
                continue;
            };
            let label = self.file_label(p, None);
            let whole = bytes.trim_ascii();
            if whole.len() <= MAX_WHOLE_FILE {
                secrets.push(KnownSecret {
                    label: label.clone(),
                    value: whole.to_vec(),
                });
            }
            for value in dotenv_values(&bytes) {
                secrets.push(KnownSecret {
                    label: label.clone(),
                    value,
                });
            }
        }
        for (k, v) in &env {
            if let Some(label) = self.env_label(k) {
                secrets.push(KnownSecret {
                    label,
                    value: v.clone().into_bytes(),
                });
            }
        }
        let values = Arc::new(KnownValues::build(secrets));
        *cache = Some(KnownCache {
            files,
            env,
            values: values.clone(),
        });
        values
    }
}

/// The known secret values of a request, for a sink outside the interpreter
/// (model-facing output): looked at again at most every [`RECHECK`].
#[derive(Clone)]
pub struct KnownSource {
    flow: Arc<Flow>,
    /// The working directory and the write roots, resolved on the first
    /// [`KnownSource::get`]: most requests write nothing that needs the set.
    roots: Arc<std::sync::OnceLock<Vec<PathBuf>>>,
    cwd: PathBuf,
    write_roots: Vec<PathBuf>,
    env: Vec<(String, String)>,
    last: Arc<Mutex<Option<Checked>>>,
}

/// A set and when it was last looked at.
type Checked = (Instant, Arc<KnownValues>);

impl KnownSource {
    /// The current set (empty when nothing is known).
    pub fn get(&self) -> Arc<KnownValues> {
        let mut last = lock(&self.last);
        if let Some((at, v)) = &*last
            && at.elapsed() < RECHECK
        {
            return v.clone();
        }
        let roots = self
            .roots
            .get_or_init(|| resolve_roots(&self.cwd, &self.write_roots));
        let v = self.flow.known_values(roots, &self.env);
        *last = Some((Instant::now(), v.clone()));
        v
    }
}

/// Never the values.
impl std::fmt::Debug for KnownSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownSource")
            .field("roots", &self.roots)
            .finish()
    }
}

impl Shell {
    /// Where secret files are looked for: the working directory and the write
    /// roots (as for the files hidden from externals).
    fn known_roots(&self) -> Vec<PathBuf> {
        resolve_roots(&self.cwd, self.write_roots())
    }

    /// The policy's write roots (none without a policy).
    fn write_roots(&self) -> &[PathBuf] {
        self.shared.policy.as_ref().map_or(&[], |p| p.write_roots())
    }

    /// The exported variables (the secret ones among them are known values).
    fn known_env(&self) -> Vec<(String, String)> {
        self.vars.environment().into_iter().collect()
    }

    /// The known secret values now; `None` when there are none (or no flow).
    pub(crate) fn known_values(&self) -> Option<Arc<KnownValues>> {
        if cfg!(feature = "untracked") {
            return None;
        }
        let flow = self.shared.flow.as_ref()?;
        let k = flow.known_values(&self.known_roots(), &self.known_env());
        (!k.is_empty()).then_some(k)
    }

    /// A source of the known values for a sink outside the interpreter.
    pub(crate) fn known_source(&self) -> Option<KnownSource> {
        if cfg!(feature = "untracked") {
            return None;
        }
        Some(KnownSource {
            flow: self.shared.flow.clone()?,
            roots: Arc::default(),
            cwd: self.cwd.clone(),
            write_roots: self.write_roots().to_vec(),
            env: self.known_env(),
            last: Arc::default(),
        })
    }
}

/// Where secret files are looked for, resolved: `cwd` and the write roots
/// that are directories, symlinks followed, each once.
fn resolve_roots(cwd: &std::path::Path, write_roots: &[PathBuf]) -> Vec<PathBuf> {
    let resolve =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut roots = vec![resolve(cwd)];
    roots.extend(
        write_roots
            .iter()
            .filter(|w| w.is_dir())
            .map(|w| resolve(w)),
    );
    roots.sort();
    roots.dedup();
    roots
}
