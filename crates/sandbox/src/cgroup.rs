//! Per-run cgroups (v1 `memory` and `pids` controllers) for the memory and process
//! limits, which rlimits cannot express (RLIMIT_NPROC never binds root, RLIMIT_AS is not
//! memory).
//!
//! Creating and removing a memory cgroup costs about as much as the rest of a spawn,
//! so empty per-run cgroups are kept in a small pool and reused (limits rewritten,
//! counters compared against a snapshot); they are removed at exit. Leftovers of
//! killed safesh processes (`safesh-<pid>-<n>` whose pid is gone) are swept the first
//! time a process needs a cgroup.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);
/// Idle per-run cgroups, per controller (memory, pids).
static POOL: Mutex<[Vec<PathBuf>; 2]> = Mutex::new([Vec::new(), Vec::new()]);
const POOL_MAX: usize = 8;

fn slot(controller: &str) -> usize {
    usize::from(controller != "memory")
}

/// One controller's per-run directory, with the counter it had before the run.
struct Dir {
    controller: &'static str,
    path: PathBuf,
    before: u64,
}

/// The per-run cgroups; back to the pool (or removed) on drop.
#[derive(Default)]
pub(crate) struct RunCgroup {
    dirs: Vec<Dir>,
    /// Memory limit enforced by the memory cgroup.
    pub(crate) memory: bool,
    /// Process limit enforced by the pids cgroup.
    pub(crate) pids: bool,
}

/// The mount point of a v1 controller, if mounted where expected.
fn v1_root(controller: &str) -> Option<PathBuf> {
    let p = Path::new("/sys/fs/cgroup").join(controller);
    p.join("cgroup.procs").exists().then_some(p)
}

/// This process's cgroup path within a v1 hierarchy.
fn own_path(controller: &str) -> String {
    let Ok(s) = fs::read_to_string("/proc/self/cgroup") else {
        return "/".into();
    };
    for line in s.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = (parts.next(), parts.next(), parts.next());
        if let (Some(ctrls), Some(path)) = (ctrls, path)
            && ctrls.split(',').any(|c| c == controller)
        {
            return path.to_string();
        }
    }
    "/".into()
}

/// Where a v1 controller would put a per-run cgroup (for the probe).
pub(crate) fn v1_base(controller: &str) -> Option<PathBuf> {
    let root = v1_root(controller)?;
    Some(root.join(own_path(controller).trim_start_matches('/')))
}

/// Removes `safesh-<pid>-<n>` cgroups left by processes that are gone.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Some(pid) = name
            .strip_prefix("safesh-")
            .and_then(|r| r.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// A counter line (`oom_kill N`, `max N`) of a cgroup file.
fn counter(dir: &Path, file: &str, key: &str) -> u64 {
    fs::read_to_string(dir.join(file))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().parse().ok()))
        })
        .unwrap_or(0)
}

/// What a controller's counter of interest is.
fn counter_of(controller: &str, dir: &Path) -> u64 {
    if controller == "memory" {
        counter(dir, "memory.oom_control", "oom_kill ")
    } else {
        counter(dir, "pids.events", "max ")
    }
}

/// Writes the limit; false when the kernel refuses it.
fn set_limit(controller: &str, dir: &Path, value: u64) -> bool {
    if controller == "memory" {
        // memsw >= limit at every step: open memsw, set the limit, then memsw.
        let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), "-1");
        let ok = fs::write(dir.join("memory.limit_in_bytes"), value.to_string()).is_ok();
        let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), value.to_string());
        ok
    } else {
        // +1 for the sandbox's own init process.
        fs::write(dir.join("pids.max"), value.saturating_add(1).to_string()).is_ok()
    }
}

/// A per-run cgroup of `controller` with `value` as its limit: a pooled one, or new.
fn acquire(controller: &'static str, value: u64) -> Option<Dir> {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    let base = v1_base(controller)?;
    SWEPT.call_once(|| {
        for c in ["memory", "pids"] {
            if let Some(b) = v1_base(c) {
                sweep(&b);
            }
        }
        // SAFETY: registers a plain extern "C" function to run at normal exit.
        unsafe { libc::atexit(drain_pool) };
    });
    loop {
        let pooled = POOL.lock().unwrap_or_else(|e| e.into_inner())[slot(controller)].pop();
        let Some(path) = pooled else { break };
        if set_limit(controller, &path, value) {
            let before = counter_of(controller, &path);
            return Some(Dir {
                controller,
                path,
                before,
            });
        }
        let _ = fs::remove_dir(&path);
    }
    let name = format!(
        "safesh-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let path = base.join(name);
    fs::create_dir(&path).ok()?;
    if !set_limit(controller, &path, value) {
        let _ = fs::remove_dir(&path);
        return None;
    }
    Some(Dir {
        controller,
        path,
        before: 0,
    })
}

/// At exit: removes the idle pooled cgroups (never blocks on the pool's lock).
extern "C" fn drain_pool() {
    if let Ok(mut pool) = POOL.try_lock() {
        for idle in pool.iter_mut() {
            for p in idle.drain(..) {
                let _ = fs::remove_dir(p);
            }
        }
    }
}

impl RunCgroup {
    /// Gets the cgroups the limits need; what fails is left to the rlimit fallback.
    pub(crate) fn create(memory_bytes: Option<u64>, processes: Option<u64>) -> RunCgroup {
        let mut cg = RunCgroup::default();
        if let Some(bytes) = memory_bytes
            && let Some(d) = acquire("memory", bytes)
        {
            cg.dirs.push(d);
            cg.memory = true;
        }
        if let Some(n) = processes
            && let Some(d) = acquire("pids", n)
        {
            cg.dirs.push(d);
            cg.pids = true;
        }
        cg
    }

    /// Moves `pid` (and so its future descendants) into every per-run cgroup.
    pub(crate) fn attach(&self, pid: i32) -> std::io::Result<()> {
        for d in &self.dirs {
            fs::write(d.path.join("cgroup.procs"), pid.to_string())?;
        }
        Ok(())
    }

    fn hit(&self, controller: &str) -> bool {
        self.dirs
            .iter()
            .filter(|d| d.controller == controller)
            .any(|d| counter_of(controller, &d.path) > d.before)
    }

    /// Whether the memory limit killed a process (the cgroup's OOM killer ran). Mere
    /// reclaim at the limit (`memory.failcnt`, page cache) does not count.
    pub(crate) fn memory_hit(&self) -> bool {
        self.hit("memory")
    }

    /// Whether a fork was refused by the pids limit.
    pub(crate) fn pids_hit(&self) -> bool {
        self.hit("pids")
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        for d in self.dirs.drain(..) {
            // The tree is dead by now; a just-exited task may linger for a moment.
            let mut empty = false;
            for _ in 0..50 {
                if fs::read_to_string(d.path.join("cgroup.procs"))
                    .is_ok_and(|s| s.trim().is_empty())
                {
                    empty = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            if empty {
                let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
                let idle = &mut pool[slot(d.controller)];
                if idle.len() < POOL_MAX {
                    idle.push(d.path);
                    continue;
                }
            }
            let _ = fs::remove_dir(&d.path);
        }
    }
}
