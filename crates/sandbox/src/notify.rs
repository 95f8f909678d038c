//! What a sandboxed program reads and executes by itself, observed exactly with
//! seccomp user notification.
//!
//! The program installs one more filter right before `execve` (after Landlock and the
//! other filters): `open`/`openat` unless write-only or `O_DIRECTORY`, `openat2`,
//! `execve`/`execveat` and the rename/link family return `SECCOMP_RET_USER_NOTIF`.
//! The filter's listener
//! fd travels to the parent over a socketpair (`SCM_RIGHTS`), and the program closes
//! its copy before `execve`, so nothing inside can answer for itself. A parent thread
//! receives each notification, reads the path from the program's memory
//! (`process_vm_readv`, then `SECCOMP_IOCTL_NOTIF_ID_VALID`), resolves it in the
//! program's own mount namespace (`notify_resolve.rs`), tells the [`Observer`] and
//! answers `SECCOMP_USER_NOTIF_FLAG_CONTINUE` (the kernel performs the call itself:
//! Landlock still decides access) or `EACCES` when the observer refuses.
//!
//! The observer hears of an access **before** the program can read a byte of it, so
//! a label it joins covers every output byte the program emits afterwards.
//!
//! Failures are never silent: when the filter cannot be installed (old kernel) the
//! observer is told of an unknown read before the program starts (the program waits
//! for the parent's go-ahead); when the notifier fails mid-run the listener is closed
//! (every later notified call fails with `ENOSYS`: the program can read nothing more)
//! and the observer is told of an unknown read. [`Observed`] says which happened.

use std::ffi::c_int;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use seccompiler::{BpfProgram, sock_filter};

use crate::notify_resolve::{Resolved, Resolver, Target};

/// What a program does with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    /// Opens it for reading, or renames / links it (its bytes get another name).
    Read,
    /// Executes it (`execve` / `execveat`).
    Exec,
    /// Renames a directory: every file beneath it gets a new name (`path` is the
    /// directory).
    MoveDir,
}

/// One access, reported before the kernel performs it.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// Read or execute.
    pub kind: AccessKind,
    /// The regular file it reaches (a host path, symlinks resolved), or `None` when it
    /// could not be determined (treat as "read something unknown").
    pub path: Option<&'a Path>,
    /// For an exec: the new program's arguments (`argv[0]` first), as passed.
    pub argv: &'a [String],
    /// For an exec: the caller's working directory (host path), when known.
    pub cwd: Option<&'a Path>,
}

/// Told of every file a sandboxed program reads or executes, in order, before the
/// kernel lets it happen.
pub trait Observer: Send + Sync {
    /// An access; `false` refuses it (the call fails with `EACCES`).
    fn access(&self, access: Access<'_>) -> bool;
    /// The egress proxy let a connection through (`what`: its log line, e.g.
    /// `allow CONNECT host:443`), before the program gets a byte of it.
    fn fetched(&self, what: &str) {
        let _ = what;
    }
}

/// How completely a run's reads were observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Observed {
    /// No observer was asked for.
    #[default]
    Off,
    /// Every open, exec, rename and link of the program's tree was reported.
    Complete,
    /// Not every access was reported (the observer was told of an unknown read).
    Incomplete(String),
}

/// The fd number of the notify socket in the sandbox's pid 1 and the program.
pub(crate) const FD_NOTIFY: c_int = 7;

/// Whether this kernel can observe reads (user notification with
/// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: Linux 5.5, `openat2`: 5.6).
pub fn available() -> bool {
    static CACHE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CACHE.get_or_init(|| {
        let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
            return false;
        };
        let mut parts = release.trim().split(['.', '-']);
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor) >= (5, 6) && crate::seccomp::available()
    })
}

// ---- the filter ------------------------------------------------------------------

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JA: u16 = 0x05;
const BPF_JSET_K: u16 = 0x45;
const BPF_AND_K: u16 = 0x54;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_NOTIFY: u32 = 0x7fc0_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: u32 = 0;

/// Offset of the low 32 bits of argument `i` in `struct seccomp_data`.
const fn arg_lo(i: u32) -> u32 {
    if cfg!(target_endian = "little") {
        16 + 8 * i
    } else {
        20 + 8 * i
    }
}

/// System calls that are always reported.
fn notified_syscalls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_openat2,
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_rename, libc::SYS_link]);
    v
}

enum Op {
    Stmt(u16, u32),
    /// `if A == k goto label` (else next).
    JeqTo(u32, usize),
    /// `if A == k next else goto label`.
    JneTo(u32, usize),
    Goto(usize),
    /// `if A & k goto label` (else next).
    JsetTo(u32, usize),
    Label(usize),
}

/// The notify filter: reads, executions, renames and links are reported; write-only
/// opens (not `O_PATH`), directory opens and everything else are allowed without a
/// round trip. A
/// foreign architecture is left to the main filter (which kills it).
pub(crate) fn filter() -> BpfProgram {
    const ALLOW: usize = 0;
    const NOTIFY: usize = 1;
    const OPENAT: usize = 2;
    const CHECK: usize = 3;
    #[cfg(target_arch = "x86_64")]
    const OPEN: usize = 4;
    let mut ops = vec![
        Op::Stmt(BPF_LD_W_ABS, 4),
        Op::JneTo(AUDIT_ARCH, ALLOW),
        Op::Stmt(BPF_LD_W_ABS, 0),
        Op::JeqTo(libc::SYS_openat as u32, OPENAT),
    ];
    #[cfg(target_arch = "x86_64")]
    ops.push(Op::JeqTo(libc::SYS_open as u32, OPEN));
    for nr in notified_syscalls() {
        ops.push(Op::JeqTo(nr as u32, NOTIFY));
    }
    ops.push(Op::Goto(ALLOW));
    ops.push(Op::Label(OPENAT));
    ops.push(Op::Stmt(BPF_LD_W_ABS, arg_lo(2)));
    ops.push(Op::Goto(CHECK));
    #[cfg(target_arch = "x86_64")]
    {
        ops.push(Op::Label(OPEN));
        ops.push(Op::Stmt(BPF_LD_W_ABS, arg_lo(1)));
    }
    ops.push(Op::Label(CHECK));
    // A directory (`O_DIRECTORY` fails on anything else) holds no bytes to read.
    ops.push(Op::JsetTo(libc::O_DIRECTORY as u32, ALLOW));
    ops.push(Op::Stmt(BPF_AND_K, (libc::O_ACCMODE | libc::O_PATH) as u32));
    ops.push(Op::JneTo(libc::O_WRONLY as u32, NOTIFY));
    ops.push(Op::Label(ALLOW));
    ops.push(Op::Stmt(BPF_RET_K, RET_ALLOW));
    ops.push(Op::Label(NOTIFY));
    ops.push(Op::Stmt(BPF_RET_K, RET_NOTIFY));
    assemble(&ops)
}

fn assemble(ops: &[Op]) -> BpfProgram {
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(l) => {
                at.insert(*l, n);
            }
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let here = out.len();
        // Jumps only go forward and the filter is short: offsets fit a u8.
        let off = |l: &usize| (at.get(l).copied().unwrap_or(here + 1) - here - 1) as u32;
        let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
        match op {
            Op::Stmt(code, k) => out.push(ins(*code, 0, 0, *k)),
            Op::JeqTo(k, l) => out.push(ins(BPF_JEQ_K, off(l) as u8, 0, *k)),
            Op::JneTo(k, l) => out.push(ins(BPF_JEQ_K, 0, off(l) as u8, *k)),
            Op::Goto(l) => out.push(ins(BPF_JA, 0, 0, off(l))),
            Op::JsetTo(k, l) => out.push(ins(BPF_JSET_K, off(l) as u8, 0, *k)),
            Op::Label(_) => {}
        }
    }
    out
}

/// Installs the notify filter and returns its listener fd, or an errno (child side,
/// no allocation).
///
/// # Safety
/// `prog` must point to a valid BPF program of `len` instructions.
pub(crate) unsafe fn install_listener(prog: *const sock_filter, len: usize) -> Result<c_int, i32> {
    let fprog = libc::sock_fprog {
        len: len as u16,
        filter: prog as *mut libc::sock_filter,
    };
    // SAFETY: fprog describes a live filter.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r < 0 {
        Err(crate::landlock::errno())
    } else {
        Ok(r as c_int)
    }
}

/// Sends `fd` over the socket `sock` (child side, no allocation). Returns 0 or an errno.
///
/// # Safety
/// Only in the forked child; `sock` and `fd` are open.
pub(crate) unsafe fn send_fd(sock: c_int, fd: c_int) -> i32 {
    // SAFETY: a msghdr over stack buffers, as sendmsg(2) takes it.
    unsafe {
        let mut byte = [b'f'];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut cbuf = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return libc::EINVAL;
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as _;
        std::ptr::copy_nonoverlapping(
            (&fd as *const c_int).cast::<u8>(),
            libc::CMSG_DATA(cmsg),
            std::mem::size_of::<c_int>(),
        );
        if libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) < 0 {
            crate::landlock::errno()
        } else {
            0
        }
    }
}

/// Child side, right before `execve`: installs the notify filter and hands its
/// listener to the parent; when that is impossible, says so and waits for the
/// parent's go-ahead (the observer must hear of it before the program runs).
///
/// # Safety
/// Only in the program's process, with [`FD_NOTIFY`] open.
pub(crate) unsafe fn child_setup(prog: &BpfProgram) {
    // SAFETY: raw system calls on our own fds and a prepared filter.
    unsafe {
        match install_listener(prog.as_ptr(), prog.len()) {
            Ok(listener) => {
                send_fd(FD_NOTIFY, listener);
                // Only the parent may answer: the program never holds the listener.
                libc::close(listener);
            }
            Err(_) => {
                let no = [b'n'];
                libc::write(FD_NOTIFY, no.as_ptr().cast(), 1);
                let mut ack = [0u8; 1];
                loop {
                    let r = libc::read(FD_NOTIFY, ack.as_mut_ptr().cast(), 1);
                    if r < 0 && crate::landlock::errno() == libc::EINTR {
                        continue;
                    }
                    break;
                }
            }
        }
        libc::close(FD_NOTIFY);
    }
}

// ---- the parent side -------------------------------------------------------------

/// The parent's notifier thread for one run.
pub(crate) struct Notifier {
    thread: std::thread::JoinHandle<Observed>,
    stop: Arc<AtomicBool>,
}

impl Notifier {
    /// Starts the thread that waits for the listener on `sock` and answers every
    /// notification.
    pub(crate) fn start(
        sock: OwnedFd,
        observer: Arc<dyn Observer>,
        resolver: Resolver,
    ) -> std::io::Result<Notifier> {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("sandbox-notify".into())
            .spawn(move || serve(sock, &*observer, &resolver, &stop2))?;
        Ok(Notifier { thread, stop })
    }

    /// After the tree is gone: stops the thread and says how complete the record is.
    pub(crate) fn finish(self) -> Observed {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .join()
            .unwrap_or_else(|_| Observed::Incomplete("the notifier thread panicked".into()))
    }
}

/// Receives the listener (or the child's "no listener"), then serves notifications
/// until no process uses the filter any more.
fn serve(
    sock: OwnedFd,
    observer: &dyn Observer,
    resolver: &Resolver,
    stop: &AtomicBool,
) -> Observed {
    let listener = match recv_listener(&sock) {
        Received::Listener(fd) => fd,
        Received::NoListener => {
            observer.access(Access {
                kind: AccessKind::Read,
                path: None,
                argv: &[],
                cwd: None,
            });
            // The program waits for this before it starts.
            // SAFETY: a one-byte write to our own socket.
            unsafe { libc::write(sock.as_raw_fd(), b"a".as_ptr().cast(), 1) };
            return Observed::Incomplete(
                "seccomp user notification is unavailable on this kernel".into(),
            );
        }
        Received::Nothing => {
            // The program never got as far as its execve (a setup failure is
            // reported by the run itself): it read nothing.
            return Observed::Complete;
        }
    };
    drop(sock);
    // Linux 6.6+: the program and this thread hand over on one CPU (a notified
    // call costs a direct switch, not two wake-ups). Older kernels: as before.
    let mut sync: u64 = 1; // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
    // SAFETY: NOTIF_SET_FLAGS reads the u64 we pass.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
            &mut sync as *mut u64,
        )
    };
    let mut failed: Option<String> = None;
    loop {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, 100) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            failed = Some(format!("poll: {}", std::io::Error::last_os_error()));
            break;
        }
        if r == 0 {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            continue;
        }
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP: no process uses the filter any more.
            break;
        }
        // SAFETY: a zeroed seccomp_notif is what NOTIF_RECV expects.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: NOTIF_RECV fills the struct we pass.
        let r = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                &mut req as *mut libc::seccomp_notif,
            )
        };
        if r < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                // The caller died or was interrupted before we took it.
                Some(libc::ENOENT) | Some(libc::EINTR) => continue,
                _ => {
                    failed = Some(format!("receive: {}", std::io::Error::last_os_error()));
                    break;
                }
            }
        }
        let answer = handle(listener.as_raw_fd(), &req, observer, resolver);
        let mut resp = libc::seccomp_notif_resp {
            id: req.id,
            val: 0,
            error: 0,
            flags: 0,
        };
        match answer {
            Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            Answer::Fail(e) => resp.error = -e,
            Answer::Gone => continue,
        }
        // SAFETY: NOTIF_SEND reads the response we pass.
        let r = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND as _,
                &mut resp as *mut libc::seccomp_notif_resp,
            )
        };
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
            failed = Some(format!("answer: {}", std::io::Error::last_os_error()));
            break;
        }
    }
    match failed {
        None => Observed::Complete,
        Some(why) => {
            // Closing the listener makes every later notified call fail (ENOSYS):
            // nothing more is read unobserved. What was in flight is unknown.
            drop(listener);
            observer.access(Access {
                kind: AccessKind::Read,
                path: None,
                argv: &[],
                cwd: None,
            });
            Observed::Incomplete(format!("the read observer failed: {why}"))
        }
    }
}

enum Received {
    Listener(OwnedFd),
    NoListener,
    Nothing,
}

fn recv_listener(sock: &OwnedFd) -> Received {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: a zeroed msghdr pointing at our buffers, as recvmsg(2) takes it.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    let n = loop {
        // SAFETY: recvmsg into the buffers above.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        break n;
    };
    if n <= 0 {
        return Received::Nothing;
    }
    // SAFETY: walking the control messages recvmsg filled in.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let mut fd: c_int = -1;
                std::ptr::copy_nonoverlapping(
                    libc::CMSG_DATA(c),
                    (&mut fd as *mut c_int).cast::<u8>(),
                    std::mem::size_of::<c_int>(),
                );
                if fd >= 0 {
                    return Received::Listener(OwnedFd::from_raw_fd(fd));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    if byte[0] == b'n' {
        Received::NoListener
    } else {
        Received::Nothing
    }
}

enum Answer {
    Continue,
    Fail(i32),
    /// The caller is gone: no answer.
    Gone,
}

/// What one notified call touches, by system call number and arguments.
struct Call {
    kind: AccessKind,
    dirfd: i64,
    path: u64,
    /// `O_CREAT` (the file may not exist yet).
    creat: bool,
    nofollow: bool,
    empty_path: bool,
    /// `openat2` with `RESOLVE_IN_ROOT`: resolved in a way we do not replay.
    foreign: bool,
    /// A rename: a directory source is reported too.
    moves: bool,
}

fn decode(req: &libc::seccomp_notif, pid: u32) -> Option<Call> {
    let a = req.data.args;
    let nr = req.data.nr as i64;
    let at = |kind, dirfd: u64, path: u64| Call {
        kind,
        dirfd: dirfd as i32 as i64,
        path,
        creat: false,
        nofollow: false,
        empty_path: false,
        foreign: false,
        moves: false,
    };
    let open_flags = |c: &mut Call, flags: u64| {
        c.creat = flags & (libc::O_CREAT as u64) != 0;
        c.nofollow = flags & (libc::O_NOFOLLOW as u64) != 0;
    };
    #[cfg(target_arch = "x86_64")]
    {
        if nr == libc::SYS_open {
            let mut c = at(AccessKind::Read, libc::AT_FDCWD as u64, a[0]);
            open_flags(&mut c, a[1]);
            return Some(c);
        }
        if nr == libc::SYS_rename || nr == libc::SYS_link {
            let mut c = at(AccessKind::Read, libc::AT_FDCWD as u64, a[0]);
            c.nofollow = true;
            c.moves = nr == libc::SYS_rename;
            return Some(c);
        }
    }
    if nr == libc::SYS_openat {
        let mut c = at(AccessKind::Read, a[0], a[1]);
        open_flags(&mut c, a[2]);
        Some(c)
    } else if nr == libc::SYS_openat2 {
        let mut c = at(AccessKind::Read, a[0], a[1]);
        let mut how = [0u8; 24];
        if a[3] >= 24 && crate::notify_resolve::read_mem(pid, a[2], &mut how) {
            let word = |i: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&how[i * 8..i * 8 + 8]);
                u64::from_ne_bytes(w)
            };
            open_flags(&mut c, word(0));
            c.foreign = word(2) & libc::RESOLVE_IN_ROOT != 0;
        } else {
            c.foreign = true;
        }
        Some(c)
    } else if nr == libc::SYS_execve {
        Some(at(AccessKind::Exec, libc::AT_FDCWD as u64, a[0]))
    } else if nr == libc::SYS_execveat {
        let mut c = at(AccessKind::Exec, a[0], a[1]);
        c.nofollow = a[4] & libc::AT_SYMLINK_NOFOLLOW as u64 != 0;
        c.empty_path = a[4] & libc::AT_EMPTY_PATH as u64 != 0;
        Some(c)
    } else if nr == libc::SYS_renameat || nr == libc::SYS_renameat2 {
        let mut c = at(AccessKind::Read, a[0], a[1]);
        c.nofollow = true;
        c.moves = true;
        Some(c)
    } else if nr == libc::SYS_linkat {
        let mut c = at(AccessKind::Read, a[0], a[1]);
        c.nofollow = a[4] & libc::AT_SYMLINK_FOLLOW as u64 == 0;
        c.empty_path = a[4] & libc::AT_EMPTY_PATH as u64 != 0;
        Some(c)
    } else {
        None
    }
}

fn id_valid(listener: RawFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: NOTIF_ID_VALID reads the u64 we pass.
    unsafe {
        libc::ioctl(
            listener,
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
            &mut id as *mut u64,
        ) == 0
    }
}

fn handle(
    listener: RawFd,
    req: &libc::seccomp_notif,
    observer: &dyn Observer,
    resolver: &Resolver,
) -> Answer {
    let tid = req.pid;
    let Some(call) = decode(req, tid) else {
        return Answer::Continue;
    };
    let path = crate::notify_resolve::read_path(tid, call.path);
    // The memory we read belonged to the caller only if it is still waiting.
    if !id_valid(listener, req.id) {
        return Answer::Gone;
    }
    let resolved = match (&path, call.foreign) {
        (Some(p), false) => resolver.resolve(&Target {
            tid,
            dirfd: call.dirfd,
            path: p,
            creat: call.creat,
            nofollow: call.nofollow,
            empty_path: call.empty_path,
            exec: call.kind == AccessKind::Exec,
            dirs: call.moves,
        }),
        _ => Resolved::Unknown,
    };
    // An exec's arguments and cwd: the observer checks the script files an
    // interpreter is started on, as for the program safesh starts itself.
    let mut argv = Vec::new();
    let mut cwd = None;
    if call.kind == AccessKind::Exec {
        let at = if req.data.nr as i64 == libc::SYS_execveat {
            req.data.args[2]
        } else {
            req.data.args[1]
        };
        match crate::notify_resolve::read_argv(tid, at) {
            Some(a) => argv = a,
            // The kernel would fail to read them too (EFAULT), unless they change
            // under us: never an unchecked exec.
            None => return Answer::Fail(libc::EFAULT),
        }
        if !id_valid(listener, req.id) {
            return Answer::Gone;
        }
        cwd = resolver.cwd(tid);
    }
    let report = |p: Option<&Path>, kind: AccessKind| {
        if observer.access(Access {
            kind,
            path: p,
            argv: &argv,
            cwd: cwd.as_deref(),
        }) {
            Answer::Continue
        } else {
            Answer::Fail(libc::EACCES)
        }
    };
    match resolved {
        // An exec of the dynamic loader runs its argument without executing it
        // (loader.rs): never, whatever the observer says (it is told, to report).
        Resolved::File(p) if call.kind == AccessKind::Exec && crate::loader::is_loader(&p) => {
            report(Some(&p), call.kind);
            Answer::Fail(libc::EACCES)
        }
        Resolved::File(p) => report(Some(&p), call.kind),
        Resolved::Dir(p) => report(Some(&p), AccessKind::MoveDir),
        Resolved::Nothing => Answer::Continue,
        Resolved::Fails(e) => Answer::Fail(e),
        // An exec of a file this side cannot name could be the loader: refused
        // (the observer still hears of it).
        Resolved::Unknown if call.kind == AccessKind::Exec => {
            report(None, call.kind);
            Answer::Fail(libc::EACCES)
        }
        Resolved::Unknown => report(None, call.kind),
    }
}

/// A path and the roots that say where the run's private `/tmp` lives.
pub(crate) struct TmpMap {
    /// The host dir mounted over `/tmp` inside (none: `/tmp` is the host's).
    pub(crate) private: Option<PathBuf>,
    /// Roots under the host's `/tmp` bound at their own path inside.
    pub(crate) bound: Vec<PathBuf>,
}

impl TmpMap {
    /// The host path of `inside` (a path as the program sees it).
    pub(crate) fn host(&self, inside: &Path) -> PathBuf {
        if let Some(private) = &self.private
            && let Ok(rest) = inside.strip_prefix("/tmp")
            && !self.bound.iter().any(|b| inside.starts_with(b))
        {
            return private.join(rest);
        }
        inside.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn filter_jumps_stay_inside() {
        let f = filter();
        for (i, ins) in f.iter().enumerate() {
            if ins.code == BPF_JEQ_K || ins.code == BPF_JSET_K {
                assert!(i + 1 + (ins.jt as usize) < f.len());
                assert!(i + 1 + (ins.jf as usize) < f.len());
            }
            if ins.code == BPF_JA {
                assert!(i + 1 + (ins.k as usize) < f.len());
            }
        }
        assert_eq!(f.last().unwrap().k, RET_NOTIFY);
    }

    #[test]
    fn private_tmp_maps_to_the_host_dir() {
        let m = TmpMap {
            private: Some(PathBuf::from("/dev/shm/s1")),
            bound: vec![PathBuf::from("/tmp/proj")],
        };
        assert_eq!(m.host(Path::new("/tmp/a")), Path::new("/dev/shm/s1/a"));
        assert_eq!(m.host(Path::new("/tmp/proj/x")), Path::new("/tmp/proj/x"));
        assert_eq!(m.host(Path::new("/work/x")), Path::new("/work/x"));
    }
}
