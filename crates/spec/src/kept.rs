//! Plans kept for `project.approve|reject|run {hash}`: one private file per plan
//! under the state dir (`STATE/plans/HASH.json`, mode 0600 in a 0700 directory),
//! so that another process — `safesh spec approve HASH`, a restarted server, the
//! CLI — finds a plan made over JSON-RPC. A kept plan expires ([`PLAN_TTL_MS`]);
//! its approval stays single use and bound to the hash (the approvals store).
//!
//! What is kept is what the plan was made from (the request's params, as JSON),
//! never the plan itself: using it plans again and compares hashes, so an edit
//! of the spec (or of the policy) since is `PLAN_CHANGED`, not a stale run.

use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How long a kept plan can be approved or run (24 hours).
pub const PLAN_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The kept plans of one state dir.
#[derive(Clone, Debug)]
pub struct PlanStore {
    dir: PathBuf,
    ttl_ms: u64,
}

/// Whether `hash` is a plan hash (64 lowercase hex digits): nothing else names
/// a file here.
pub fn is_plan_hash(hash: &str) -> bool {
    hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl PlanStore {
    /// The plans of `state_dir` (nothing is created until one is kept).
    pub fn new(state_dir: &Path) -> PlanStore {
        PlanStore {
            dir: state_dir.join("plans"),
            ttl_ms: PLAN_TTL_MS,
        }
    }

    /// The same store with another lifetime (tests).
    pub fn with_ttl_ms(mut self, ttl_ms: u64) -> PlanStore {
        self.ttl_ms = ttl_ms;
        self
    }

    fn file(&self, hash: &str) -> Option<PathBuf> {
        is_plan_hash(hash).then(|| self.dir.join(format!("{hash}.json")))
    }

    /// Keeps `record` for `hash` (replacing one kept before); it expires
    /// [`PLAN_TTL_MS`] from now.
    pub fn put(&self, hash: &str, record: &Value) -> std::io::Result<()> {
        let mut entry = record.clone();
        entry["kept_unix_ms"] = Value::from(now_ms());
        self.write(hash, &entry)?;
        self.sweep();
        Ok(())
    }

    /// Writes `entry` whole (a temporary file renamed), readable by its owner only.
    fn write(&self, hash: &str, entry: &Value) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let file = self.file(hash).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a plan hash")
        })?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let tmp = self.dir.join(format!(".{hash}.{}.tmp", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(entry.to_string().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &file)
    }

    /// The record kept for `hash`, unless there is none or it expired (an
    /// expired one is removed).
    pub fn get(&self, hash: &str) -> Option<Value> {
        let file = self.file(hash)?;
        let text = std::fs::read_to_string(&file).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let kept = v["kept_unix_ms"].as_u64().unwrap_or(0);
        if now_ms().saturating_sub(kept) > self.ttl_ms {
            let _ = std::fs::remove_file(&file);
            return None;
        }
        Some(v)
    }

    /// Changes the record kept for `hash` with `edit` (its expiry unchanged:
    /// an edit never extends a plan's life); `false` when there is none.
    pub fn update(&self, hash: &str, edit: impl FnOnce(&mut Value)) -> std::io::Result<bool> {
        let Some(mut v) = self.get(hash) else {
            return Ok(false);
        };
        let kept = v["kept_unix_ms"].clone();
        edit(&mut v);
        v["kept_unix_ms"] = kept;
        self.write(hash, &v)?;
        Ok(true)
    }

    /// Forgets the plan kept for `hash`.
    pub fn remove(&self, hash: &str) {
        if let Some(file) = self.file(hash) {
            let _ = std::fs::remove_file(file);
        }
    }

    /// Removes expired plans (best effort).
    fn sweep(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(hash) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            if is_plan_hash(hash) {
                let _ = self.get(hash);
            }
        }
    }
}
