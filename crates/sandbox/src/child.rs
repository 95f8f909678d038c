//! The code that runs after `clone`: the sandbox's pid 1 and the program's process.
//!
//! Everything here runs in a copy of a (possibly multi-threaded) process, so it only
//! makes raw system calls on data prepared by the parent: no allocation, no locks, no
//! panics. Failures are reported as `[stage, errno, detail]` on the error pipe (fd 5),
//! which closes on a successful `execve`.

use std::ffi::{CString, c_char, c_int};

use crate::landlock;

/// Fixed fd numbers inside the sandbox's pid 1.
pub(crate) const FD_SYNC: c_int = 3;
pub(crate) const FD_STATUS: c_int = 4;
pub(crate) const FD_ERR: c_int = 5;
pub(crate) const FD_RULESET: c_int = 6;

/// Setup stages, for error messages.
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub(crate) enum Stage {
    Fds = 1,
    UserNs,
    Sync,
    Mount,
    Fork,
    Session,
    Chdir,
    Rlimit,
    Landlock,
    Capabilities,
    NoNewPrivs,
    Seccomp,
    Exec,
}

impl Stage {
    pub(crate) fn from_u32(v: u32) -> Option<Stage> {
        use Stage::*;
        [
            Fds,
            UserNs,
            Sync,
            Mount,
            Fork,
            Session,
            Chdir,
            Rlimit,
            Landlock,
            Capabilities,
            NoNewPrivs,
            Seccomp,
            Exec,
        ]
        .into_iter()
        .find(|s| *s as u32 == v)
    }
}

/// A mount step of pid 1.
pub(crate) enum Mount {
    /// `mount --make-rprivate /`.
    Private,
    /// A bind mount, optionally remounted read-only.
    Bind {
        src: CString,
        dst: CString,
        ro: bool,
    },
    /// A fresh tmpfs.
    Tmpfs {
        dst: CString,
        data: CString,
        ro: bool,
    },
    /// A procfs for the new pid namespace over `/proc`.
    Proc,
    /// Mounts `src` over the symlink `link` itself (not its target), read-only.
    OverLink { src: CString, link: CString },
    /// A best-effort write of a small value into a file (a sysctl).
    WriteFile { path: CString, value: &'static [u8] },
}

/// Everything the child needs, prepared by the parent.
pub(crate) struct Plan {
    pub(crate) program: CString,
    pub(crate) argv: Vec<*const c_char>,
    pub(crate) envp: Vec<*const c_char>,
    pub(crate) _store: Vec<CString>,
    pub(crate) cwd: CString,
    pub(crate) mounts: Vec<Mount>,
    pub(crate) rlimits: Vec<(c_int, libc::rlimit)>,
    pub(crate) landlock: bool,
    pub(crate) child_rules: Vec<(CString, u64)>,
    pub(crate) filters: Vec<seccompiler::BpfProgram>,
    /// The read-observing filter, installed last with a listener sent to the parent
    /// over [`crate::notify::FD_NOTIFY`] (none: reads are not observed).
    pub(crate) notify: Option<seccompiler::BpfProgram>,
    pub(crate) cap_last: c_int,
    /// `(path, content)` for setgroups, uid_map, gid_map when a user namespace is used.
    pub(crate) userns_maps: Vec<(CString, Vec<u8>)>,
    /// The stack the program's process starts on (before its execve).
    /// Uninitialised: a stack needs no zeroing (and zeroing it costs a memset per run).
    pub(crate) stack: Box<[std::mem::MaybeUninit<u8>]>,
}

/// The parent's fds the child starts from.
pub(crate) struct ChildFds {
    pub(crate) stdin: c_int,
    pub(crate) stdout: c_int,
    pub(crate) stderr: c_int,
    pub(crate) sync_r: c_int,
    pub(crate) status_w: c_int,
    pub(crate) err_w: c_int,
    /// -1 when Landlock is not used.
    pub(crate) ruleset: c_int,
    /// The socket to hand the notify listener over; -1 when reads are not observed.
    pub(crate) notify: c_int,
}

fn errno() -> i32 {
    landlock::errno()
}

/// Reports a failure on the error pipe and exits.
///
/// # Safety
/// Only in the forked child.
unsafe fn fail(stage: Stage, err: i32, detail: u32) -> ! {
    let mut msg = [0u8; 12];
    msg[0..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    msg[4..8].copy_from_slice(&err.to_ne_bytes());
    msg[8..12].copy_from_slice(&detail.to_ne_bytes());
    // SAFETY: writing a stack buffer to our error pipe, then exiting without unwinding.
    unsafe {
        libc::write(FD_ERR, msg.as_ptr().cast(), msg.len());
        libc::_exit(127)
    }
}

/// Writes a whole buffer to a path (no allocation). Returns 0 or an errno.
///
/// # Safety
/// Only in the forked child.
unsafe fn write_file(path: &CString, data: &[u8]) -> i32 {
    // SAFETY: valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return errno();
        }
        let r = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = if r < 0 { errno() } else { 0 };
        libc::close(fd);
        e
    }
}

extern "C" fn forward_term(_sig: c_int) {
    // SAFETY: kill is async-signal-safe; -1 = every process of this pid namespace but us.
    unsafe {
        libc::kill(-1, libc::SIGTERM);
    }
}

/// Moves the fds to 0..=7 and closes every other fd.
///
/// # Safety
/// Only in the forked child.
unsafe fn remap(fds: &ChildFds) -> Result<(), i32> {
    let src = [
        fds.stdin,
        fds.stdout,
        fds.stderr,
        fds.sync_r,
        fds.status_w,
        fds.err_w,
        fds.ruleset,
        fds.notify,
    ];
    let mut tmp = [-1 as c_int; 8];
    for (i, &fd) in src.iter().enumerate() {
        if fd < 0 {
            continue;
        }
        // SAFETY: duplicating an fd we inherited, to a number >= 8.
        let t = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 8) };
        if t < 0 {
            return Err(errno());
        }
        tmp[i] = t;
    }
    for (i, &t) in tmp.iter().enumerate() {
        if t < 0 {
            continue;
        }
        let flags = if i < 3 { 0 } else { libc::O_CLOEXEC };
        // SAFETY: t >= 8 differs from i.
        if unsafe { libc::dup3(t, i as c_int, flags) } < 0 {
            return Err(errno());
        }
    }
    // SAFETY: closes every fd from 8 up (the temporaries and everything inherited).
    if unsafe { libc::syscall(libc::SYS_close_range, 8u32, u32::MAX, 0u32) } < 0 {
        // Old kernels: close one by one.
        for fd in 8..4096 {
            // SAFETY: closing fds we own (or EBADF).
            unsafe { libc::close(fd) };
        }
    }
    Ok(())
}

/// The sandbox's pid 1: mounts, forks the program, waits for it, reports its status.
///
/// # Safety
/// Only right after `clone` in the child; never returns.
pub(crate) unsafe fn pid1(plan: &Plan, fds: &ChildFds) -> ! {
    // SAFETY: raw system calls on data the parent prepared; see the module docs.
    unsafe {
        if let Err(e) = remap(fds) {
            // The error pipe may not be at FD_ERR yet: write to the original one.
            let mut msg = [0u8; 12];
            msg[0..4].copy_from_slice(&(Stage::Fds as u32).to_ne_bytes());
            msg[4..8].copy_from_slice(&e.to_ne_bytes());
            libc::write(fds.err_w, msg.as_ptr().cast(), msg.len());
            libc::_exit(127);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        for (path, content) in &plan.userns_maps {
            let e = write_file(path, content);
            if e != 0 {
                fail(Stage::UserNs, e, 0);
            }
        }
        // Wait for the parent (cgroup attach, network setup).
        let mut go = [0u8; 1];
        loop {
            let r = libc::read(FD_SYNC, go.as_mut_ptr().cast(), 1);
            if r == 1 {
                break;
            }
            if r < 0 && errno() == libc::EINTR {
                continue;
            }
            libc::_exit(125);
        }
        for (i, m) in plan.mounts.iter().enumerate() {
            let e = do_mount(m);
            if e != 0 {
                fail(Stage::Mount, e, i as u32);
            }
        }
        // Signals: defaults, nothing blocked, SIGTERM forwarded to the whole namespace.
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = forward_term as extern "C" fn(c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());

        // vfork-style (shared memory, we sleep until it execs or dies): no second copy
        // of the parent's page tables. It runs on its own stack and writes nothing we
        // read later.
        let stack = plan.stack.as_ptr() as usize + plan.stack.len();
        let stack = (stack & !15) as *mut libc::c_void;
        let pid = libc::clone(
            program_entry,
            stack,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (plan as *const Plan).cast_mut().cast(),
        );
        if pid < 0 {
            fail(Stage::Fork, errno(), 0);
        }
        // Only the program holds the stdio pipes and the error pipe now.
        for fd in [
            0,
            1,
            2,
            FD_ERR,
            FD_SYNC,
            FD_RULESET,
            crate::notify::FD_NOTIFY,
        ] {
            libc::close(fd);
        }
        let mut status: c_int = 0;
        let mut got = false;
        loop {
            let mut st: c_int = 0;
            let r = libc::waitpid(-1, &mut st, libc::__WALL);
            if r == pid {
                status = st;
                got = true;
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                break;
            }
        }
        if got {
            libc::write(FD_STATUS, (&status as *const c_int).cast(), 4);
        }
        // Exiting kills every process left in the namespace.
        libc::_exit(0)
    }
}

/// One mount step; 0 or an errno.
///
/// # Safety
/// Only in pid 1.
unsafe fn do_mount(m: &Mount) -> i32 {
    let null = std::ptr::null::<c_char>();
    // SAFETY: valid C strings or NULL, as mount(2) takes them.
    unsafe {
        let r = match m {
            Mount::Private => libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ),
            Mount::Bind { src, dst, ro } => {
                let r = libc::mount(
                    src.as_ptr(),
                    dst.as_ptr(),
                    null,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                );
                if r == 0 && *ro { remount_ro(dst) } else { r }
            }
            Mount::Tmpfs { dst, data, ro } => {
                let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
                if *ro {
                    flags |= libc::MS_RDONLY | libc::MS_NOEXEC;
                }
                libc::mount(
                    c"tmpfs".as_ptr(),
                    dst.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    data.as_ptr().cast(),
                )
            }
            Mount::Proc => libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ),
            Mount::OverLink { src, link } => {
                // The new mount API: move_mount does not follow a symlink at the target
                // (no MOVE_MOUNT_T_SYMLINKS), so the link itself becomes the mount point.
                const OPEN_TREE_CLONE: libc::c_uint = 1;
                const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
                const MOUNT_ATTR_RDONLY: u64 = 1;
                #[repr(C)]
                struct MountAttr {
                    attr_set: u64,
                    attr_clr: u64,
                    propagation: u64,
                    userns_fd: u64,
                }
                let fd = libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    src.as_ptr(),
                    OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
                ) as c_int;
                if fd < 0 {
                    return errno();
                }
                let attr = MountAttr {
                    attr_set: MOUNT_ATTR_RDONLY,
                    attr_clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                let mut r = libc::syscall(
                    libc::SYS_mount_setattr,
                    fd,
                    c"".as_ptr(),
                    libc::AT_EMPTY_PATH,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                );
                if r == 0 {
                    r = libc::syscall(
                        libc::SYS_move_mount,
                        fd,
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        link.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    );
                }
                let e = if r < 0 { errno() } else { 0 };
                libc::close(fd);
                return e;
            }
            Mount::WriteFile { path, value } => {
                write_file(path, value);
                0
            }
        };
        if r < 0 { errno() } else { 0 }
    }
}

/// Remounts a bind mount read-only, keeping the flags a user namespace may have locked.
///
/// # Safety
/// Only in pid 1.
unsafe fn remount_ro(dst: &CString) -> c_int {
    // SAFETY: valid C string and out-buffer.
    unsafe {
        let mut sv: libc::statvfs = std::mem::zeroed();
        let mut keep: libc::c_ulong = 0;
        if libc::statvfs(dst.as_ptr(), &mut sv) == 0 {
            for (st, ms) in [
                (libc::ST_NOSUID, libc::MS_NOSUID),
                (libc::ST_NODEV, libc::MS_NODEV),
                (libc::ST_NOEXEC, libc::MS_NOEXEC),
                (libc::ST_NOATIME, libc::MS_NOATIME),
                (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
                (libc::ST_RELATIME, libc::MS_RELATIME),
            ] {
                if sv.f_flag & st != 0 {
                    keep |= ms;
                }
            }
        }
        libc::mount(
            std::ptr::null(),
            dst.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep,
            std::ptr::null(),
        )
    }
}

extern "C" fn program_entry(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `arg` is the plan pid 1 passed to clone; it outlives this process (we
    // exec or exit, never return).
    unsafe { program(&*(arg as *const Plan)) }
}

/// The program's process: session, limits, capabilities, Landlock, seccomp, execve.
///
/// # Safety
/// Only in the process pid 1 forked; never returns.
unsafe fn program(plan: &Plan) -> ! {
    // SAFETY: raw system calls on prepared data; see the module docs.
    unsafe {
        if libc::setsid() < 0 {
            fail(Stage::Session, errno(), 0);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        libc::close(FD_SYNC);
        libc::close(FD_STATUS);
        if libc::chdir(plan.cwd.as_ptr()) < 0 {
            fail(Stage::Chdir, errno(), 0);
        }
        for (i, (res, lim)) in plan.rlimits.iter().enumerate() {
            let r = libc::syscall(
                libc::SYS_prlimit64,
                0,
                *res,
                lim as *const libc::rlimit,
                std::ptr::null_mut::<libc::rlimit>(),
            );
            if r < 0 {
                fail(Stage::Rlimit, errno(), i as u32);
            }
        }
        if plan.landlock {
            for (i, (path, access)) in plan.child_rules.iter().enumerate() {
                let e = landlock::add_path_rule_raw(FD_RULESET, path, *access);
                if e != 0 && e != libc::ENOENT {
                    fail(Stage::Landlock, e, i as u32);
                }
            }
        }
        drop_capabilities(plan.cap_last);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
            fail(Stage::NoNewPrivs, errno(), 0);
        }
        if plan.landlock {
            let e = landlock::restrict_self(FD_RULESET);
            if e != 0 {
                fail(Stage::Landlock, e, u32::MAX);
            }
            libc::close(FD_RULESET);
        }
        for (i, f) in plan.filters.iter().enumerate() {
            let e = crate::seccomp::install_raw(f.as_ptr(), f.len());
            if e != 0 {
                fail(Stage::Seccomp, e, i as u32);
            }
        }
        // Last: from here on every open, exec, rename and link is reported to the
        // parent (the execve below included) before the kernel performs it.
        if let Some(f) = &plan.notify {
            crate::notify::child_setup(f);
        }
        libc::execve(
            plan.program.as_ptr(),
            plan.argv.as_ptr(),
            plan.envp.as_ptr(),
        );
        fail(Stage::Exec, errno(), 0)
    }
}

/// Drops every capability for good: securebits so that uid 0 regains none at execve,
/// an empty bounding set, no ambient capabilities, empty sets.
///
/// # Safety
/// Only in the program's process.
unsafe fn drop_capabilities(cap_last: c_int) {
    const SECBITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl/capset with valid arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_SECUREBITS, SECBITS, 0, 0, 0) < 0 {
            fail(Stage::Capabilities, errno(), 1);
        }
        for cap in 0..=cap_last {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) < 0
                && errno() != libc::EINVAL
            {
                fail(Stage::Capabilities, errno(), 2);
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        let hdr = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &hdr as *const Header, data.as_ptr()) < 0 {
            fail(Stage::Capabilities, errno(), 3);
        }
    }
}
