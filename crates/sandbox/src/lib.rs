//! The safesh kernel sandbox: runs ONE external program from a [`Spec`].
//!
//! It knows nothing of safesh's policy or labels. [`run`] starts the program inside:
//!
//! - a new **pid namespace** whose pid 1 is a small helper (a forked copy of this process
//!   that never execs): when the program exits or is killed, pid 1 exits and the kernel
//!   kills every process left in the namespace (`setsid`'d and double-forked ones too);
//! - a new **mount namespace** (private propagation) with a fresh `/proc`, a private
//!   `/dev/shm`, the run's `tmp_dir` bound over `/tmp`, `hide` paths masked (files by
//!   `/dev/null`, directories by an empty read-only tmpfs) and `protect` paths bound
//!   read-only (a missing one gets an empty read-only placeholder, see below);
//! - a new **network namespace** unless the network is `On` (only `lo`, down), plus IPC
//!   and UTS namespaces; a user namespace only when not running as root;
//! - a per-run **cgroup** (v1 `memory` and `pids`) for memory and process limits, with
//!   RLIMIT_AS / RLIMIT_NPROC as the documented fallback; RLIMIT_FSIZE, RLIMIT_CPU,
//!   RLIMIT_CORE=0 and a bounded RLIMIT_NOFILE always;
//! - a new session (no controlling terminal), `PR_SET_PDEATHSIG`, fds 0, 1, 2 only,
//!   default signal dispositions, **no capabilities at all** (even as root: securebits
//!   lock uid 0 out of regaining them at execve), `PR_SET_NO_NEW_PRIVS`;
//! - **Landlock** (read: system dirs, `/etc` minus secrets such as `shadow` and ssh host
//!   keys, `/proc`, a few `/dev` nodes, the spec's `read`; write: `write`, `tmp_dir`;
//!   execute: only the program, its `#!` interpreter (and what `env` starts), the ELF
//!   loader, and `exec`), scoping abstract unix sockets and signals from ABI 6;
//! - **seccomp** (see `seccomp.rs`): no ptrace / process_vm_*, io_uring, mount API,
//!   new namespaces, keyctl, bpf, perf, modules, kexec, TIOCSTI/TIOCLINUX; `socket()` is
//!   refused for AF_UNIX in every mode (no connecting to host unix sockets such as
//!   docker's; `socketpair` still works), for every family when the network is off,
//!   and for all but AF_INET/AF_INET6 in host-list mode.
//!
//! Placeholders for missing `protect` paths are created on the host (an empty
//! read-only file, or an empty directory for a missing ancestor) because a mount needs a
//! mount point; they are removed after the run when no other run uses them (a shared
//! `flock` on their directory) and they are still empty. A protected path that is a
//! symlink gets `/dev/null` mounted over the link itself (it cannot be replaced). A
//! protected path outside every write root needs nothing (Landlock keeps it read-only).
//!
//! Host-list networking (`Network::Hosts`): a per-run [`safesh_egress`] proxy on the
//! host; a host thread joins the program's network namespace, brings `lo` up and serves
//! the loopback forwarder on `127.0.0.1:3128` there; `http_proxy`, `https_proxy`,
//! `all_proxy` (both cases) point at it, `no_proxy` is empty. DNS and direct
//! connections fail closed. The proxy's log comes back in [`Outcome::proxy_log`].
//!
//! # Known limits (documented, tested where they matter)
//!
//! - Landlock's EXECUTE right governs `execve`, not `mmap`: a program that runs
//!   arbitrary code (python) can map any readable ELF through the loader
//!   (`ld.so /bin/sh`). What it starts that way stays inside the same walls and cannot
//!   `execve` anything either (test `loader_trick_stays_inside_the_walls`).
//! - Masks are `/dev/null`: a write to a hidden file or to `/etc/shadow` succeeds and
//!   goes nowhere.
//! - A protected path under a *symlinked ancestor* is protected at the link's target;
//!   the ancestor link itself could be replaced.
//! - When a root lies under the host's `/tmp`, there is no private `/tmp` (Landlock
//!   rights flow down from ancestors, so a root mounted inside the writable private
//!   `/tmp` would become writable); programs get `TMPDIR` = `tmp_dir` and the host's
//!   `/tmp` stays unwritable unless a root says otherwise. `Outcome::warnings` says so.
//! - `Network::On` is the host's network (IP only: unix sockets are still refused).
//!   `Network::Hosts` needs root (the forwarder thread must join the namespace).
//! - Not root: a user namespace maps the caller to uid 0 inside; the cgroups are
//!   usually not writable then, so memory falls back to RLIMIT_AS (2x) and processes to
//!   RLIMIT_NPROC (per real uid, host-wide). Cgroup v2-only hosts: same fallback.
//! - If safesh itself is SIGKILLed mid-run, the tree dies (parent-death signal), but a
//!   per-run cgroup directory or an empty placeholder may be left behind.

#![warn(missing_docs)]

mod cgroup;
mod child;
mod exec;
mod landlock;
mod loader;
mod net;
mod notify;
mod notify_resolve;
mod placeholder;
mod probe;
mod realpath;
mod run;
mod seccomp;

use std::path::PathBuf;
use std::time::Duration;

pub use loader::is_loader;
pub use notify::{Access, AccessKind, Observed, Observer, available as reads_observable};
pub use probe::{Capabilities, Feature, probe};
pub use realpath::canonicalize;
pub use run::run;

/// What to run and inside which walls.
pub struct Spec {
    /// Absolute path to execve (already resolved).
    pub program: PathBuf,
    /// argv; `argv[0]` as the program should see it (the program path when empty).
    /// Each is a shell word: the escape code points of
    /// [`safesh_utils::word_bytes`] stand for the bytes they escape (a non-UTF-8
    /// file name reaches the program as its bytes); so do environment values.
    pub argv: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// The complete environment (nothing is inherited); `TMPDIR` is set to `tmp_dir`.
    pub env: Vec<(String, String)>,
    /// Readable roots (dirs or files), beyond the system dirs.
    pub read: Vec<PathBuf>,
    /// Readable and writable roots.
    pub write: Vec<PathBuf>,
    /// Extra executables (files, or dirs recursively) the program may start, beyond
    /// itself, its `#!` interpreter and the ELF loader. A missing one inside a write
    /// root is created as a directory (Landlock rules need an existing inode).
    pub exec: Vec<PathBuf>,
    /// Paths inside write roots that stay read-only whether they exist or not.
    pub protect: Vec<PathBuf>,
    /// Readable paths to mask (files → `/dev/null`, dirs → an empty read-only tmpfs).
    pub hide: Vec<PathBuf>,
    /// The run's private temp dir: `TMPDIR`, and mounted over `/tmp` (created if missing).
    pub tmp_dir: PathBuf,
    /// Network access.
    pub network: Network,
    /// Resource and time limits.
    pub limits: Limits,
    /// Standard input.
    pub stdin: Stdin,
    /// If Landlock is unavailable: run anyway (else [`SandboxError::Unavailable`]).
    pub allow_weaker: bool,
    /// Told the host pid of the sandbox's pid 1 once it exists (jobs report it; a
    /// signal to it reaches the whole tree, since pid 1 forwards TERM/INT).
    pub on_start: Option<StartHook>,
    /// Told of every file the program's tree opens for reading, renames, links or
    /// executes, before the kernel does it (seccomp user notification, see
    /// `notify.rs`); `None`: not observed (no notify filter at all).
    pub observer: Option<std::sync::Arc<dyn Observer>>,
}

/// A callback given the host pid of a run's pid 1 as soon as it is started.
pub type StartHook = std::sync::Arc<dyn Fn(u32) + Send + Sync>;

/// Resource and time limits of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock limit: SIGTERM to the tree, then SIGKILL after `kill_grace`.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Memory (memory cgroup; RLIMIT_AS of twice this as the fallback).
    pub memory_bytes: Option<u64>,
    /// Processes and threads of the tree (pids cgroup; RLIMIT_NPROC as the fallback,
    /// which does not bind root).
    pub processes: Option<u64>,
    /// Largest file the program may write (RLIMIT_FSIZE: SIGXFSZ / EFBIG).
    pub file_size_bytes: Option<u64>,
    /// CPU seconds (RLIMIT_CPU: SIGXCPU, SIGKILL one second later).
    pub cpu_seconds: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(30),
            kill_grace: Duration::from_secs(2),
            memory_bytes: None,
            processes: None,
            file_size_bytes: None,
            cpu_seconds: None,
        }
    }
}

/// Network access of the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// A new, empty network namespace; no sockets at all.
    Off,
    /// The host's network (unix sockets still refused).
    On,
    /// Only these hosts, through the egress proxy.
    Hosts(Vec<String>),
}

/// Standard input of the program.
pub enum Stdin {
    /// `/dev/null`.
    Null,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
    /// Pumped from this reader by a thread.
    Reader(Box<dyn std::io::Read + Send>),
    /// This descriptor itself (a file or pipe the caller owns a duplicate of): no
    /// pump thread.
    Fd(std::os::fd::OwnedFd),
}

/// Where output goes, as it arrives (bounded chunks, never the whole output in memory).
pub trait Output {
    /// A chunk of standard output.
    fn stdout(&mut self, data: &[u8]) -> std::io::Result<()>;
    /// A chunk of standard error.
    fn stderr(&mut self, data: &[u8]) -> std::io::Result<()>;
}

/// A limit the run ran into (as far as the kernel tells).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LimitHit {
    /// The memory cgroup refused memory or OOM-killed a process.
    Memory,
    /// The pids cgroup refused a fork.
    Processes,
    /// The program was killed by SIGXFSZ.
    FileSize,
    /// The program was killed by SIGXCPU (or SIGKILL after it).
    Cpu,
}

/// How the run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status when the program exited.
    pub status: Option<i32>,
    /// Signal when the program was killed.
    pub signal: Option<i32>,
    /// The timeout fired.
    pub timed_out: bool,
    /// `cancelled` returned true.
    pub cancelled: bool,
    /// Wall-clock time from start to the last byte of output.
    pub duration: Duration,
    /// One line per network attempt in host-list mode.
    pub proxy_log: Vec<String>,
    /// Limits the run ran into.
    pub limits_hit: Vec<LimitHit>,
    /// The output sink failed (e.g. BrokenPipe) and the tree was killed.
    pub output_closed: bool,
    /// Protections that were weaker than asked for on this run (fallbacks).
    pub warnings: Vec<String>,
    /// How completely the program's reads were reported to `Spec::observer`.
    pub observed: Observed,
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The host cannot enforce what the spec needs.
    #[error("sandbox unavailable: {0}")]
    Unavailable(String),
    /// Setting up the sandbox or starting the program failed.
    #[error("cannot start the program: {0}")]
    Spawn(String),
    /// An I/O error of the sandbox itself.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
