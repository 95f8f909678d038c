//! The parent side of a run: prepare, clone, feed, pump, reap, clean up.

use std::ffi::{CString, c_int};
use std::fs::{self, File};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cgroup::RunCgroup;
use crate::child::{self, ChildFds, Mount, Plan, Stage};
use crate::landlock::{self, Ruleset, fs as ll};
use crate::placeholder::Placeholders;
use crate::{LimitHit, Network, Outcome, Output, SandboxError, Spec, Stdin};

/// System directories every program may read (missing ones are skipped).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/sys/devices/system/cpu",
];

/// Host secrets under `/etc`, masked in the sandbox although `/etc` is readable
/// (files by `/dev/null`, directories by an empty tmpfs). Missing ones are skipped.
const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/etc/credstore",
    "/etc/credstore.encrypted",
];

/// The masks for host secrets: [`ETC_SECRETS`] plus the ssh host private keys.
/// Shells a program could start through the ELF loader (`ld.so /bin/sh`), which
/// Landlock's execute right does not see: unless the program may execute a shell
/// anyway (it is one, its `#!` interpreter is one, or its profile's `exec` lists one)
/// they read as empty inside the sandbox.
const SHELLS: &[&str] = &[
    "/usr/bin/sh",
    "/usr/bin/bash",
    "/usr/bin/dash",
    "/usr/bin/rbash",
    "/usr/bin/zsh",
    "/usr/bin/ksh",
    "/usr/bin/mksh",
    "/usr/bin/fish",
    "/usr/bin/tcsh",
    "/usr/bin/csh",
    "/usr/bin/busybox",
    "/bin/sh",
    "/bin/bash",
    "/bin/dash",
    "/bin/rbash",
    "/bin/zsh",
    "/bin/ksh",
    "/bin/mksh",
    "/bin/busybox",
    "/bin/csh",
    "/bin/tcsh",
];

fn shells_to_hide(spec: &Spec, path_var: Option<&str>) -> Vec<PathBuf> {
    let allowed: Vec<PathBuf> = crate::exec::closure(&spec.program, path_var)
        .iter()
        .filter_map(|p| crate::realpath::canonicalize(p).ok())
        .collect();
    let exec_roots: Vec<PathBuf> = spec
        .exec
        .iter()
        .map(|e| {
            crate::realpath::canonicalize(abs(e, &spec.cwd)).unwrap_or_else(|_| abs(e, &spec.cwd))
        })
        .collect();
    // The shells on this host, resolved once per process.
    static SHELL_PATHS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let shells = SHELL_PATHS.get_or_init(|| {
        let mut v: Vec<PathBuf> = Vec::new();
        for s in SHELLS {
            if let Ok(c) = crate::realpath::canonicalize(s)
                && !v.contains(&c)
            {
                v.push(c);
            }
        }
        v
    });
    shells
        .iter()
        .filter(|c| !allowed.contains(c) && !exec_roots.iter().any(|e| c.starts_with(e)))
        .cloned()
        .collect()
}

fn etc_secrets() -> Vec<PathBuf> {
    static CACHE: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    CACHE.get_or_init(find_etc_secrets).clone()
}

fn find_etc_secrets() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ETC_SECRETS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    if let Ok(entries) = fs::read_dir("/etc/ssh") {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().ends_with("_key") {
                v.push(e.path());
            }
        }
    }
    v
}

fn cstr(p: &Path) -> Result<CString, SandboxError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Spawn(format!("path contains NUL: {}", p.display())))
}

/// A shell word as the C string it stands for (escaped bytes back to bytes).
fn cstring(s: &str) -> Result<CString, SandboxError> {
    CString::new(safesh_utils::word_bytes::word_to_bytes(s).into_owned())
        .map_err(|_| SandboxError::Spawn(format!("string contains NUL: {s:?}")))
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is a valid 2-int buffer.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn socketpair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is a valid 2-int buffer.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whether a root (canonical) lies strictly under the host's `/tmp`, outside the
/// private temp dir.
/// The roots (and cwd, program) that live under the host's `/tmp`, outermost only,
/// and whether every one of them is writable anyway (inside a write root).
fn roots_under_tmp(spec: &Spec) -> (Vec<PathBuf>, bool) {
    let tmp_canon =
        crate::realpath::canonicalize(&spec.tmp_dir).unwrap_or_else(|_| spec.tmp_dir.clone());
    let canon = |p: &PathBuf| crate::realpath::canonicalize(abs(p, &spec.cwd)).ok();
    let writable: Vec<PathBuf> = spec.write.iter().filter_map(canon).collect();
    let mut found: Vec<PathBuf> = spec
        .read
        .iter()
        .chain(&spec.write)
        .chain(&spec.exec)
        .chain([&spec.cwd, &spec.program])
        .filter_map(canon)
        .filter(|p| p.starts_with("/tmp") && p != Path::new("/tmp") && !p.starts_with(&tmp_canon))
        .collect();
    found.sort();
    found.dedup();
    let outer: Vec<PathBuf> = found
        .iter()
        .filter(|p| !found.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect();
    let all_writable = found
        .iter()
        .all(|p| writable.iter().any(|w| p.starts_with(w)));
    (outer, all_writable)
}

/// `p` with its longest existing prefix canonicalized (symlinks resolved).
fn canonical_prefix(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(c) = crate::realpath::canonicalize(&cur) {
            return rest.iter().rev().fold(c, |acc, r| acc.join(r));
        }
        match (cur.file_name().map(|n| n.to_os_string()), cur.parent()) {
            (Some(n), Some(parent)) => {
                rest.push(n);
                cur = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

fn abs(p: &Path, cwd: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Builds the Landlock ruleset for a spec (host side).
fn ruleset(spec: &Spec, abi: u32, env_path: Option<&str>) -> Result<Ruleset, SandboxError> {
    let mut rs = Ruleset::new(abi)?;
    for d in SYSTEM_READ {
        rs.allow(Path::new(d), ll::READ)?;
    }
    // /etc/resolv.conf may point outside /etc.
    if let Ok(target) = crate::realpath::canonicalize("/etc/resolv.conf") {
        rs.allow(&target, ll::READ_FILE)?;
    }
    for d in ["/dev/null", "/dev/zero", "/dev/full"] {
        rs.allow(Path::new(d), ll::DEV_RW)?;
    }
    for d in ["/dev/urandom", "/dev/random"] {
        rs.allow(Path::new(d), ll::READ_FILE)?;
    }
    for p in &spec.read {
        rs.allow(&abs(p, &spec.cwd), ll::READ)?;
    }
    for p in &spec.write {
        rs.allow(&abs(p, &spec.cwd), ll::WRITE)?;
    }
    rs.allow(&spec.tmp_dir, ll::WRITE)?;
    for p in crate::exec::closure(&spec.program, env_path) {
        rs.allow(&p, ll::EXEC)?;
    }
    for p in &spec.exec {
        let p = abs(p, &spec.cwd);
        // A missing exec dir inside a write root (e.g. `target/` before the first
        // build) is created, so that the rule has an inode to hold on to.
        if p.symlink_metadata().is_err() {
            let canon = canonical_prefix(&p);
            let in_write_root = spec
                .write
                .iter()
                .filter_map(|w| crate::realpath::canonicalize(abs(w, &spec.cwd)).ok())
                .any(|w| canon.starts_with(&w));
            if in_write_root {
                let _ = fs::create_dir_all(&p);
            }
        }
        if p.is_dir() {
            rs.allow(&p, ll::EXEC)?;
        } else {
            for q in crate::exec::closure(&p, env_path) {
                rs.allow(&q, ll::EXEC)?;
            }
        }
    }
    // Loaders for the programs of `exec` dirs: the loaders this host uses.
    if spec.exec.iter().any(|p| abs(p, &spec.cwd).is_dir()) {
        for p in crate::exec::closure(Path::new("/proc/self/exe"), None)
            .into_iter()
            .skip(1)
        {
            rs.allow(&p, ll::EXEC)?;
        }
    }
    Ok(rs)
}

/// The parent side of one run.
///
/// Runs the program to completion (or timeout / cancel), pumping output. `cancelled` is
/// polled about every 20 ms; when true, the whole process tree is killed (SIGKILL).
/// If the output sink returns an error, the tree is killed and the run returns with
/// `output_closed` set.
pub fn run(
    mut spec: Spec,
    out: &mut dyn Output,
    cancelled: &dyn Fn() -> bool,
) -> Result<Outcome, SandboxError> {
    let start = Instant::now();
    let mut warnings = Vec::new();
    // The loader runs whatever it is given, past the execute right (loader.rs).
    if crate::loader::is_loader(&abs(&spec.program, &spec.cwd)) {
        return Err(SandboxError::Spawn(format!(
            "{} is the dynamic loader: it would run programs the run may not execute",
            spec.program.display()
        )));
    }

    let abi = landlock::abi_version();
    if abi == 0 {
        if !spec.allow_weaker {
            return Err(SandboxError::Unavailable(
                "Landlock is not available on this kernel (needs Linux 5.13+ with landlock in the LSM list)".into(),
            ));
        }
        warnings.push("Landlock unavailable: filesystem rules not enforced (allow_weaker)".into());
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut egress = match &spec.network {
        Network::Hosts(_) if !root => {
            return Err(SandboxError::Unavailable(
                "network host lists need root (the proxy's forwarder joins the sandbox's network namespace)".into(),
            ));
        }
        Network::Hosts(hosts) => Some(
            crate::net::Egress::start(hosts)
                .map_err(|e| SandboxError::Spawn(format!("cannot start the egress proxy: {e}")))?,
        ),
        _ => None,
    };
    if let (Some(eg), Some(obs)) = (&egress, &spec.observer) {
        let obs = obs.clone();
        eg.on_allow(Box::new(move |what| obs.fetched(what)));
    }
    if !spec.program.is_absolute() {
        return Err(SandboxError::Spawn(format!(
            "program path is not absolute: {}",
            spec.program.display()
        )));
    }
    if !spec.cwd.is_absolute() {
        return Err(SandboxError::Spawn(format!(
            "cwd is not absolute: {}",
            spec.cwd.display()
        )));
    }
    if !spec.tmp_dir.exists() {
        fs::create_dir_all(&spec.tmp_dir)?;
    }

    // Environment: exactly the spec's, TMPDIR pointing at the private temp dir.
    // A private /tmp. Roots that live under the host's /tmp are bound into it at the
    // same paths — only when they are writable anyway: Landlock rights flow down from
    // ancestors, so a read-only root inside the writable private /tmp would become
    // writable (then /tmp stays the host's and programs get TMPDIR).
    let (tmp_roots, tmp_roots_writable) = roots_under_tmp(&spec);
    let private_tmp = Path::new("/tmp").is_dir() && tmp_roots_writable;
    let tmp_str = if private_tmp {
        "/tmp".to_string()
    } else {
        spec.tmp_dir.to_string_lossy().into_owned()
    };
    let mut env: Vec<(String, String)> = spec
        .env
        .iter()
        .filter(|(k, _)| k != "TMPDIR")
        .cloned()
        .collect();
    env.push(("TMPDIR".into(), tmp_str));
    if egress.is_some() {
        let proxy = crate::net::proxy_env();
        env.retain(|(k, _)| !proxy.iter().any(|(p, _)| p == k));
        env.extend(proxy);
    }
    let env_path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());

    let filters = crate::seccomp::build(&spec.network).map_err(SandboxError::Spawn)?;
    let rules = if abi > 0 {
        Some(ruleset(&spec, abi, env_path.as_deref())?)
    } else {
        None
    };

    // Mounts of pid 1.
    let mut placeholders = Placeholders::new();
    let mut mounts = vec![Mount::Private, Mount::Proc];
    let mut child_rules = vec![(cstr(Path::new("/proc"))?, ll::READ)];
    // A private /tmp, unless a root lives under the host's /tmp: Landlock rights flow
    // down from ancestors, so such a root mounted inside the writable private /tmp would
    // become writable. Then /tmp stays the host's (writable only where a root says so)
    // and programs get TMPDIR.
    if private_tmp {
        // Bind each root into the private dir first; the recursive bind of the
        // private dir over /tmp then carries them to their usual paths.
        for r in &tmp_roots {
            let Ok(rel) = r.strip_prefix("/tmp") else {
                continue;
            };
            let mountpoint = spec.tmp_dir.join(rel);
            if r.is_dir() {
                fs::create_dir_all(&mountpoint)?;
            } else {
                if let Some(parent) = mountpoint.parent() {
                    fs::create_dir_all(parent)?;
                }
                if !mountpoint.exists() {
                    fs::File::create(&mountpoint)?;
                }
            }
            mounts.push(Mount::Bind {
                src: cstr(r)?,
                dst: cstr(&mountpoint)?,
                ro: false,
            });
        }
        mounts.push(Mount::Bind {
            src: cstr(&spec.tmp_dir)?,
            dst: cstr(Path::new("/tmp"))?,
            ro: false,
        });
    } else {
        warnings.push("a read-only root lives under /tmp: no private /tmp (TMPDIR only)".into());
    }
    // A private /dev/shm, after the /tmp binds: the session's temp dir may live in
    // the host's /dev/shm (core puts it on tmpfs), and it is hidden from then on.
    if Path::new("/dev/shm").is_dir() {
        mounts.push(Mount::Tmpfs {
            dst: cstr(Path::new("/dev/shm"))?,
            data: cstring("mode=1777,size=64m")?,
            ro: false,
        });
        child_rules.push((cstr(Path::new("/dev/shm"))?, ll::WRITE));
    }
    let hide: Vec<PathBuf> = etc_secrets()
        .into_iter()
        .chain(spec.hide.iter().map(|h| abs(h, &spec.cwd)))
        .chain(shells_to_hide(&spec, env_path.as_deref()))
        .collect();
    for h in &hide {
        let h = h.clone();
        match fs::metadata(&h) {
            Ok(m) if m.is_dir() => mounts.push(Mount::Tmpfs {
                dst: cstr(&h)?,
                data: cstring("size=4k,mode=0555")?,
                ro: true,
            }),
            // No read-only remount: what is written to /dev/null is discarded, and a
            // mount point cannot be removed or replaced (one mount call less each).
            Ok(_) => mounts.push(Mount::Bind {
                src: cstr(Path::new("/dev/null"))?,
                dst: cstr(&h)?,
                ro: false,
            }),
            Err(_) => {}
        }
    }
    let write_roots: Vec<PathBuf> = spec
        .write
        .iter()
        .chain([&spec.tmp_dir])
        .map(|w| {
            crate::realpath::canonicalize(abs(w, &spec.cwd)).unwrap_or_else(|_| abs(w, &spec.cwd))
        })
        .collect();
    let mut bound_parents = std::collections::HashSet::new();
    let mut protected_targets: Vec<PathBuf> = Vec::new();
    let tmp_dir_canon =
        crate::realpath::canonicalize(&spec.tmp_dir).unwrap_or_else(|_| spec.tmp_dir.clone());
    for p in &spec.protect {
        let p = abs(p, &spec.cwd);
        // The private temp dir is the program's scratch space (and is /tmp inside).
        if private_tmp && canonical_prefix(&p).starts_with(&tmp_dir_canon) {
            continue;
        }
        // Outside every write root Landlock already keeps it read-only: no placeholder
        // on the host there.
        // The link itself lives where its parent is, wherever it points.
        let canon = match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => canonical_prefix(parent).join(name),
            _ => canonical_prefix(&p),
        };
        if !write_roots.iter().any(|w| canon.starts_with(w)) {
            continue;
        }
        if p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            // Binding the path would follow the link and leave the link replaceable:
            // cover the link itself (it then reads as empty, cannot be replaced).
            mounts.push(Mount::OverLink {
                src: cstr(Path::new("/dev/null"))?,
                link: cstr(&p)?,
            });
            continue;
        }
        if let Some(target) = placeholders.ensure(&p) {
            if protected_targets.contains(&target) {
                continue; // `.git/config` beneath the `.git` placeholder
            }
            if crate::placeholder::is_placeholder_link(&target) {
                mounts.push(Mount::OverLink {
                    src: cstr(Path::new("/dev/null"))?,
                    link: cstr(&target)?,
                });
                protected_targets.push(target.clone());
                continue;
            }
            // The directory holding a protected path (`.git` for `.git/hooks`) is
            // bound onto itself first: a mount point cannot be renamed away and
            // replaced by one the program controls (`mv .git x; mkdir -p .git/hooks`).
            if let Some(parent) = target.parent()
                && parent.is_dir()
                && !protected_targets.iter().any(|t| parent.starts_with(t))
                && !write_roots.iter().any(|w| w == parent)
                && write_roots.iter().any(|w| parent.starts_with(w))
                && bound_parents.insert(parent.to_path_buf())
            {
                mounts.push(Mount::Bind {
                    src: cstr(parent)?,
                    dst: cstr(parent)?,
                    ro: false,
                });
            }
            mounts.push(Mount::Bind {
                src: cstr(&target)?,
                dst: cstr(&target)?,
                ro: true,
            });
            protected_targets.push(target.clone());
        } else {
            return Err(SandboxError::Spawn(format!(
                "cannot protect {}",
                p.display()
            )));
        }
    }
    // memfds default to non-executable inside (the sysctl is per pid namespace).
    if Path::new("/proc/sys/vm/memfd_noexec").exists() {
        mounts.push(Mount::WriteFile {
            path: cstr(Path::new("/proc/sys/vm/memfd_noexec"))?,
            value: b"2",
        });
    }

    // Limits.
    let l = &spec.limits;
    let cg = RunCgroup::create(l.memory_bytes, l.processes);
    let mut rlimits: Vec<(c_int, libc::rlimit)> = vec![(libc::RLIMIT_CORE as c_int, rl(0, 0))];
    let mut nofile = rl(0, 0);
    // SAFETY: getrlimit into a valid buffer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut nofile) };
    let cap = nofile.rlim_max.min(65536);
    rlimits.push((
        libc::RLIMIT_NOFILE as c_int,
        rl(nofile.rlim_cur.min(cap), cap),
    ));
    if let Some(n) = l.file_size_bytes {
        rlimits.push((libc::RLIMIT_FSIZE as c_int, rl(n, n)));
    }
    if let Some(n) = l.cpu_seconds {
        rlimits.push((libc::RLIMIT_CPU as c_int, rl(n, n.saturating_add(1))));
    }
    if let Some(n) = l.memory_bytes
        && !cg.memory
    {
        let v = n.saturating_mul(2);
        rlimits.push((libc::RLIMIT_AS as c_int, rl(v, v)));
        warnings.push("memory limit: no writable memory cgroup, RLIMIT_AS (2x) instead".into());
    } else {
        // A worker process bounds its own address space with a soft RLIMIT_AS
        // (safesh_server::worker_main); the program gets the hard limit back, and
        // its memory limit is the cgroup's (a runtime that reserves a large
        // address space, like V8 or the JVM, must not fail on the worker's).
        let mut as_ = rl(0, 0);
        // SAFETY: getrlimit into a valid buffer.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut as_) } == 0 {
            rlimits.push((libc::RLIMIT_AS as c_int, rl(as_.rlim_max, as_.rlim_max)));
        }
    }
    if let Some(n) = l.processes
        && !cg.pids
    {
        rlimits.push((libc::RLIMIT_NPROC as c_int, rl(n, n)));
        warnings.push(
            "process limit: no writable pids cgroup, RLIMIT_NPROC instead (never binds uid 0 of the host)"
                .into(),
        );
    }

    // argv / envp.
    let mut store: Vec<CString> = Vec::new();
    let argv_src: Vec<String> = if spec.argv.is_empty() {
        vec![spec.program.to_string_lossy().into_owned()]
    } else {
        spec.argv.clone()
    };
    for a in &argv_src {
        store.push(cstring(a)?);
    }
    let argc = store.len();
    for (k, v) in &env {
        if k.is_empty() || k.contains('=') {
            continue;
        }
        store.push(cstring(&format!("{k}={v}"))?);
    }
    let mut argv: Vec<*const libc::c_char> = store[..argc].iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = store[argc..].iter().map(|c| c.as_ptr()).collect();
    envp.push(std::ptr::null());

    let mut userns_maps = Vec::new();
    if !root {
        // SAFETY: no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        userns_maps.push((cstring("/proc/self/setgroups")?, b"deny".to_vec()));
        userns_maps.push((
            cstring("/proc/self/uid_map")?,
            format!("0 {uid} 1").into_bytes(),
        ));
        userns_maps.push((
            cstring("/proc/self/gid_map")?,
            format!("0 {gid} 1").into_bytes(),
        ));
    }
    let cap_last: c_int = fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40);

    // Observing reads: a socketpair for the notify listener, and how to resolve
    // paths as the program sees them.
    let mut observed_upfront = None;
    let notify = match &spec.observer {
        Some(obs) if crate::notify::available() => {
            let (parent, child) = socketpair()?;
            let canon = |p: &Path| {
                crate::realpath::canonicalize(abs(p, &spec.cwd))
                    .unwrap_or_else(|_| abs(p, &spec.cwd))
            };
            let roots: Vec<PathBuf> = spec
                .read
                .iter()
                .chain(&spec.write)
                .chain(&spec.exec)
                .chain([&spec.cwd, &spec.tmp_dir])
                .map(|p| canon(p))
                .collect();
            let resolver = crate::notify_resolve::Resolver {
                system: SYSTEM_READ.iter().map(PathBuf::from).collect(),
                roots,
                tmp: crate::notify::TmpMap {
                    private: private_tmp.then(|| canon(&spec.tmp_dir)),
                    bound: tmp_roots.clone(),
                },
                root: std::cell::OnceCell::new(),
            };
            Some((parent, child, obs.clone(), resolver))
        }
        Some(obs) => {
            // Unobservable here: the observer hears of an unknown read before the
            // program exists.
            obs.access(crate::Access {
                kind: crate::AccessKind::Read,
                path: None,
                argv: &[],
                cwd: None,
            });
            observed_upfront = Some(crate::Observed::Incomplete(
                "seccomp user notification needs Linux 5.6".into(),
            ));
            None
        }
        None => None,
    };

    let plan = Plan {
        program: cstr(&spec.program)?,
        argv,
        envp,
        _store: store,
        cwd: cstr(&spec.cwd)?,
        mounts,
        rlimits,
        landlock: rules.is_some(),
        child_rules,
        filters: filters.programs,
        notify: notify.as_ref().map(|_| crate::notify::filter()),
        cap_last,
        userns_maps,
        stack: Box::new_uninit_slice(256 * 1024),
    };

    // Pipes.
    let stdin_spec = std::mem::replace(&mut spec.stdin, Stdin::Null);
    let (stdin_r, stdin_w, stdin_feed) = match stdin_spec {
        Stdin::Null => (OwnedFd::from(File::open("/dev/null")?), None, None),
        Stdin::Fd(fd) => (fd, None, None),
        feed => {
            let (r, w) = pipe()?;
            (r, Some(w), Some(feed))
        }
    };
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (sync_r, sync_w) = pipe()?;
    let (status_r, status_w) = pipe()?;
    let (fail_r, fail_w) = pipe()?;
    let fds = ChildFds {
        stdin: stdin_r.as_raw_fd(),
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        sync_r: sync_r.as_raw_fd(),
        status_w: status_w.as_raw_fd(),
        err_w: fail_w.as_raw_fd(),
        ruleset: rules.as_ref().map(|r| r.raw()).unwrap_or(-1),
        notify: notify.as_ref().map(|n| n.1.as_raw_fd()).unwrap_or(-1),
    };

    let mut flags =
        libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    // Network off needs no namespace of its own: seccomp refuses socket() outright
    // (socketpair stays), so there is nothing to reach and nothing to meet; a fresh
    // network namespace per run (or even one per process) costs more than the rest of
    // the sandbox. A host list gets one: its only way out is the proxy forwarder.
    if matches!(spec.network, Network::Hosts(_)) {
        flags |= libc::CLONE_NEWNET;
    }
    if !root {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: a fork-like clone (no new stack: the child gets a copy-on-write copy of
    // ours). The child only runs `child::pid1`, which never returns.
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
    if pid == 0 {
        // SAFETY: we are the freshly cloned child.
        unsafe { child::pid1(&plan, &fds) };
    }
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        return Err(SandboxError::Unavailable(format!(
            "cannot create the namespaces: {e}"
        )));
    }
    let pid = pid as libc::pid_t;
    drop((stdin_r, out_w, err_w, sync_r, status_w, fail_w));
    drop(rules);
    let notifier = match notify {
        Some((parent, child, obs, resolver)) => {
            drop(child);
            Some(crate::notify::Notifier::start(parent, obs, resolver)?)
        }
        None => None,
    };

    let mut tree = Tree { pid, reaped: None };
    if let Some(hook) = &spec.on_start {
        hook(pid as u32);
    }
    if let Err(e) = cg.attach(pid) {
        tree.kill(libc::SIGKILL);
        tree.wait_blocking();
        return Err(SandboxError::Spawn(format!(
            "cannot enter the run's cgroup: {e}"
        )));
    }
    if let Some(eg) = egress.as_mut()
        && let Err(e) = eg.attach(pid)
    {
        tree.kill(libc::SIGKILL);
        tree.wait_blocking();
        return Err(SandboxError::Spawn(format!(
            "cannot set up the sandbox's network: {e}"
        )));
    }
    let mut sync_w = File::from(sync_w);
    if sync_w.write_all(b"g").is_err() {
        tree.kill(libc::SIGKILL);
        tree.wait_blocking();
        return Err(SandboxError::Spawn(
            "the sandbox init died during setup".into(),
        ));
    }
    drop(sync_w);

    if let (Some(w), Some(feed)) = (stdin_w, stdin_feed) {
        let reader: Box<dyn std::io::Read + Send> = match feed {
            Stdin::Bytes(b) => Box::new(std::io::Cursor::new(b)),
            Stdin::Reader(r) => r,
            Stdin::Null | Stdin::Fd(_) => Box::new(std::io::empty()),
        };
        let _ = std::thread::Builder::new()
            .name("sandbox-stdin".into())
            .spawn(move || {
                let mut reader = reader;
                let mut w = File::from(w);
                let _ = std::io::copy(&mut reader, &mut w);
            });
    }

    let mut outcome = Outcome {
        warnings,
        ..Outcome::default()
    };
    pump(
        &mut tree,
        out_r,
        err_r,
        &spec.limits,
        out,
        cancelled,
        &mut outcome,
    );
    outcome.duration = start.elapsed();
    outcome.observed = match (notifier, observed_upfront) {
        (Some(n), _) => n.finish(),
        (None, Some(o)) => o,
        (None, None) => crate::Observed::Off,
    };
    if let Some(eg) = egress.take() {
        outcome.proxy_log = eg.finish();
    }

    // Why did it end?
    if let Some(e) = read_failure(&fail_r) {
        return Err(e);
    }
    let mut st = [0u8; 4];
    let n = read_nb(&status_r, &mut st);
    if n == 4 {
        let s = i32::from_ne_bytes(st);
        if libc::WIFEXITED(s) {
            outcome.status = Some(libc::WEXITSTATUS(s));
        } else if libc::WIFSIGNALED(s) {
            outcome.signal = Some(libc::WTERMSIG(s));
        }
    } else if let Some(s) = tree.reaped {
        if libc::WIFSIGNALED(s) {
            outcome.signal = Some(libc::WTERMSIG(s));
        } else if libc::WIFEXITED(s) && libc::WEXITSTATUS(s) != 0 {
            return Err(SandboxError::Spawn(format!(
                "the sandbox init failed ({})",
                libc::WEXITSTATUS(s)
            )));
        }
    }
    if cg.memory_hit() {
        outcome.limits_hit.push(LimitHit::Memory);
    }
    if cg.pids_hit() {
        outcome.limits_hit.push(LimitHit::Processes);
    }
    match outcome.signal {
        Some(libc::SIGXFSZ) => outcome.limits_hit.push(LimitHit::FileSize),
        Some(libc::SIGXCPU) => outcome.limits_hit.push(LimitHit::Cpu),
        _ => {}
    }
    drop(cg);
    drop(placeholders);
    Ok(outcome)
}

fn rl(cur: u64, max: u64) -> libc::rlimit {
    libc::rlimit {
        rlim_cur: cur as libc::rlim_t,
        rlim_max: max as libc::rlim_t,
    }
}

/// The sandbox's pid 1 as seen from the parent.
struct Tree {
    pid: libc::pid_t,
    reaped: Option<c_int>,
}

impl Tree {
    fn kill(&self, sig: c_int) {
        if self.reaped.is_none() {
            // SAFETY: our unreaped child: the pid cannot have been recycled.
            unsafe { libc::kill(self.pid, sig) };
        }
    }

    fn try_wait(&mut self) -> bool {
        if self.reaped.is_some() {
            return true;
        }
        let mut st: c_int = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG | libc::__WALL) };
        if r == self.pid {
            self.reaped = Some(st);
            true
        } else {
            false
        }
    }

    fn wait_blocking(&mut self) {
        while self.reaped.is_none() {
            let mut st: c_int = 0;
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut st, libc::__WALL) };
            if r == self.pid {
                self.reaped = Some(st);
            } else if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                self.reaped = Some(0);
            }
        }
    }
}

/// Pumps stdout/stderr into `out` until the tree is gone and both pipes are closed;
/// enforces the timeout and cancellation.
fn pump(
    tree: &mut Tree,
    out_r: OwnedFd,
    err_r: OwnedFd,
    limits: &crate::Limits,
    out: &mut dyn Output,
    cancelled: &dyn Fn() -> bool,
    outcome: &mut Outcome,
) {
    let start = Instant::now();
    let deadline = start.checked_add(limits.timeout);
    let mut term_at: Option<Instant> = None;
    let mut killed = false;
    let mut open = [Some(out_r), Some(err_r)];
    let mut buf = vec![0u8; 64 * 1024];
    let mut gone_at: Option<Instant> = None;
    // SAFETY: pidfd_open on our own unreaped child; the new fd is ours.
    let pidfd = unsafe {
        let r = libc::syscall(libc::SYS_pidfd_open, tree.pid, 0u32);
        (r >= 0).then(|| OwnedFd::from_raw_fd(r as c_int))
    };
    loop {
        let done = tree.try_wait();
        if done && open.iter().all(Option::is_none) {
            break;
        }
        if done {
            // Nothing in the namespace is alive; give stray copies of the pipes a moment.
            let t = *gone_at.get_or_insert_with(Instant::now);
            if t.elapsed() > Duration::from_secs(1) {
                break;
            }
        }
        let mut pfds: Vec<libc::pollfd> = Vec::with_capacity(3);
        let mut which = Vec::with_capacity(3);
        for (i, fd) in open.iter().enumerate() {
            if let Some(fd) = fd {
                pfds.push(libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
                which.push(i);
            }
        }
        // The pidfd wakes us the moment pid 1 exits.
        if let (Some(fd), false) = (&pidfd, done) {
            pfds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            which.push(usize::MAX);
        }
        let mut wait =
            Duration::from_millis(if pidfd.is_some() || open.iter().any(Option::is_some) {
                20
            } else {
                2
            });
        if let Some(d) = deadline
            && term_at.is_none()
        {
            wait = wait.min(d.saturating_duration_since(Instant::now()));
        }
        // SAFETY: pfds is a valid array of pollfd.
        let r = unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                wait.as_millis() as c_int,
            )
        };
        if r > 0 {
            for (k, p) in pfds.iter().enumerate() {
                if p.revents == 0 {
                    continue;
                }
                let i = which[k];
                if i == usize::MAX {
                    continue; // pid 1 exited: reaped at the top of the loop
                }
                // SAFETY: reading into our buffer from an fd we own.
                let n = unsafe { libc::read(p.fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    if n == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                    {
                        open[i] = None;
                    }
                    continue;
                }
                let data = &buf[..n as usize];
                let res = if i == 0 {
                    out.stdout(data)
                } else {
                    out.stderr(data)
                };
                if res.is_err() {
                    outcome.output_closed = true;
                    tree.kill(libc::SIGKILL);
                    killed = true;
                    open = [None, None];
                    break;
                }
            }
        }
        if !killed && cancelled() {
            outcome.cancelled = true;
            tree.kill(libc::SIGKILL);
            killed = true;
        }
        if let Some(d) = deadline {
            let now = Instant::now();
            if term_at.is_none() && now >= d && !tree.try_wait() {
                outcome.timed_out = true;
                tree.kill(libc::SIGTERM);
                term_at = Some(now);
            }
        }
        if let Some(t) = term_at
            && !killed
            && t.elapsed() >= limits.kill_grace
        {
            tree.kill(libc::SIGKILL);
            killed = true;
        }
    }
    tree.wait_blocking();
}

fn read_nb(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    // SAFETY: set O_NONBLOCK on our own fd, then read into a valid buffer.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        let n = libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        if n < 0 { 0 } else { n as usize }
    }
}

/// A setup failure the child reported, if any.
fn read_failure(fd: &OwnedFd) -> Option<SandboxError> {
    let mut msg = [0u8; 12];
    if read_nb(fd, &mut msg) != 12 {
        return None;
    }
    let word = |i: usize| [msg[i], msg[i + 1], msg[i + 2], msg[i + 3]];
    let stage = Stage::from_u32(u32::from_ne_bytes(word(0)));
    let errno = i32::from_ne_bytes(word(4));
    let detail = u32::from_ne_bytes(word(8));
    let err = std::io::Error::from_raw_os_error(errno);
    let what = match stage {
        Some(Stage::Mount) => format!("mount step {detail}"),
        Some(s) => format!("{s:?}").to_lowercase(),
        None => "setup".into(),
    };
    Some(match stage {
        Some(Stage::Landlock) | Some(Stage::Seccomp) | Some(Stage::UserNs) => {
            SandboxError::Unavailable(format!("{what}: {err}"))
        }
        _ => SandboxError::Spawn(format!("{what}: {err}")),
    })
}

#[allow(dead_code)]
const _FD: c_int = child::FD_SYNC;
