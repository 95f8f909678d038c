//! What this host can enforce, for `safesh doctor`.

use std::path::Path;

/// One protection: whether it is active here, and a one-line note.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Feature {
    /// Usable on this host.
    pub available: bool,
    /// One line for humans.
    pub note: String,
}

impl Feature {
    fn new(available: bool, note: impl Into<String>) -> Feature {
        Feature {
            available,
            note: note.into(),
        }
    }
}

/// What this host can enforce.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Capabilities {
    /// Landlock ABI version (0: unavailable).
    pub landlock_abi: u32,
    /// Landlock filesystem rules (and, from ABI 6, signal / abstract socket scoping).
    pub landlock: Feature,
    /// seccomp-bpf system call filtering.
    pub seccomp: Feature,
    /// User namespaces (used only when not running as root).
    pub user_ns: Feature,
    /// Pid namespaces (whole-tree kill).
    pub pid_ns: Feature,
    /// Network namespaces (network off / host lists).
    pub net_ns: Feature,
    /// Mount namespaces (private /tmp, protected and hidden paths).
    pub mount_ns: Feature,
    /// Memory limit through a cgroup.
    pub cgroup_memory: Feature,
    /// Process limit through a cgroup.
    pub cgroup_pids: Feature,
    /// Running as root (capabilities are dropped for the program; RLIMIT_NPROC would
    /// not bind).
    pub root: bool,
}

/// Tries to create a child in new namespaces of `flags`.
fn try_clone(flags: libc::c_int) -> Result<(), std::io::Error> {
    // SAFETY: fork-like clone; the child only calls _exit.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the child: exit at once.
        unsafe { libc::_exit(0) };
    }
    let mut st = 0;
    // SAFETY: reaping our child.
    unsafe { libc::waitpid(pid as libc::pid_t, &mut st, libc::__WALL) };
    Ok(())
}

fn ns(flags: libc::c_int, what: &str, root: bool) -> Feature {
    // As non-root, the other namespaces come with a user namespace.
    let flags = if root || flags == libc::CLONE_NEWUSER {
        flags
    } else {
        flags | libc::CLONE_NEWUSER
    };
    match try_clone(flags) {
        Ok(()) => Feature::new(true, format!("{what}: yes")),
        Err(e) => Feature::new(false, format!("{what}: cannot create ({e})")),
    }
}

fn cgroup(controller: &str, what: &str) -> Feature {
    match crate::cgroup::v1_base(controller) {
        Some(base) => {
            let probe = base.join(format!("safesh-probe-{}", std::process::id()));
            match std::fs::create_dir(&probe) {
                Ok(()) => {
                    let _ = std::fs::remove_dir(&probe);
                    Feature::new(
                        true,
                        format!("{what}: cgroup v1 {controller} at {}", base.display()),
                    )
                }
                Err(e) => Feature::new(
                    false,
                    format!(
                        "{what}: {} not writable ({e}); rlimit fallback",
                        base.display()
                    ),
                ),
            }
        }
        None if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() => Feature::new(
            false,
            format!("{what}: cgroup v2 only (not used yet); rlimit fallback"),
        ),
        None => Feature::new(
            false,
            format!("{what}: no {controller} cgroup; rlimit fallback"),
        ),
    }
}

/// What this host can enforce: Landlock ABI, seccomp, namespaces, cgroups.
pub fn probe() -> Capabilities {
    // SAFETY: no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let abi = crate::landlock::abi_version();
    let landlock = if abi == 0 {
        Feature::new(
            false,
            "Landlock: unavailable; external programs are refused unless allow_weaker",
        )
    } else {
        let scope = if abi >= 6 {
            ", signal and abstract-socket scoping"
        } else {
            ""
        };
        Feature::new(
            true,
            format!("Landlock ABI {abi}: filesystem read/write/execute rules{scope}"),
        )
    };
    let seccomp = if crate::seccomp::available() {
        Feature::new(
            true,
            "seccomp-bpf: syscall denylist (ptrace, mount, namespaces, sockets, ...)",
        )
    } else {
        Feature::new(false, "seccomp: unavailable")
    };
    Capabilities {
        landlock_abi: abi,
        landlock,
        seccomp,
        user_ns: ns(libc::CLONE_NEWUSER, "user namespace", root),
        pid_ns: ns(libc::CLONE_NEWPID, "pid namespace", root),
        net_ns: ns(libc::CLONE_NEWNET, "network namespace", root),
        mount_ns: ns(libc::CLONE_NEWNS, "mount namespace", root),
        cgroup_memory: cgroup("memory", "memory limit"),
        cgroup_pids: cgroup("pids", "process limit"),
        root,
    }
}
