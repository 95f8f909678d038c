//! Landlock through raw system calls.
//!
//! The ruleset is built in the parent (allocation is fine there) from host paths: Landlock
//! ties rules to inodes, so they hold in the child's mount namespace too. The child adds
//! the few rules for objects it mounts itself (`/proc`, `/dev/shm`) with
//! [`add_path_rule_raw`], which does not allocate, then calls [`restrict_self`].

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// `LANDLOCK_ACCESS_FS_*` bits.
pub(crate) mod fs {
    pub const EXECUTE: u64 = 1 << 0;
    pub const WRITE_FILE: u64 = 1 << 1;
    pub const READ_FILE: u64 = 1 << 2;
    pub const READ_DIR: u64 = 1 << 3;
    pub const REMOVE_DIR: u64 = 1 << 4;
    pub const REMOVE_FILE: u64 = 1 << 5;
    pub const MAKE_CHAR: u64 = 1 << 6;
    pub const MAKE_DIR: u64 = 1 << 7;
    pub const MAKE_REG: u64 = 1 << 8;
    pub const MAKE_SOCK: u64 = 1 << 9;
    pub const MAKE_FIFO: u64 = 1 << 10;
    pub const MAKE_BLOCK: u64 = 1 << 11;
    pub const MAKE_SYM: u64 = 1 << 12;
    pub const REFER: u64 = 1 << 13;
    pub const TRUNCATE: u64 = 1 << 14;
    pub const IOCTL_DEV: u64 = 1 << 15;

    /// Rights that make sense on a regular file (Landlock rejects the others there).
    pub const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    /// Read a tree.
    pub const READ: u64 = READ_FILE | READ_DIR;
    /// Read and change a tree (no device nodes).
    pub const WRITE: u64 = READ
        | WRITE_FILE
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_SYM
        | REFER
        | TRUNCATE;
    /// Start a program (and read it: scripts and the loader need that).
    pub const EXEC: u64 = EXECUTE | READ_FILE | READ_DIR;
    /// `/dev/null`, `/dev/zero`, `/dev/full`.
    pub const DEV_RW: u64 = READ_FILE | WRITE_FILE | TRUNCATE;
}

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_int = 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version of the running kernel, 0 when Landlock is unavailable.
pub(crate) fn abi_version() -> u32 {
    // SAFETY: the documented version query: NULL attr, size 0, the VERSION flag.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if r < 0 { 0 } else { r as u32 }
}

/// The filesystem rights handled for an ABI.
pub(crate) fn handled_fs(abi: u32) -> u64 {
    let mut h = (1u64 << 13) - 1;
    if abi >= 2 {
        h |= fs::REFER;
    }
    if abi >= 3 {
        h |= fs::TRUNCATE;
    }
    if abi >= 5 {
        h |= fs::IOCTL_DEV;
    }
    h
}

/// A ruleset under construction (an fd, closed on drop).
pub(crate) struct Ruleset {
    fd: OwnedFd,
    handled: u64,
}

impl Ruleset {
    /// A new ruleset handling every filesystem right of `abi` and, from ABI 6, scoping
    /// abstract unix sockets and signals to the sandbox.
    pub(crate) fn new(abi: u32) -> std::io::Result<Ruleset> {
        let handled = handled_fs(abi);
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: 0,
            scoped: if abi >= 6 {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        };
        let size = if abi >= 6 {
            24
        } else if abi >= 4 {
            16
        } else {
            8
        };
        // SAFETY: attr is a valid RulesetAttr and `size` never exceeds its size.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                size as usize,
                0u32,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel returned a new fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(r as i32) };
        Ok(Ruleset { fd, handled })
    }

    /// The raw fd (for the child).
    pub(crate) fn raw(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Allows `access` beneath `path` (a file gets only file rights). A missing path is
    /// skipped (Ok(false)).
    pub(crate) fn allow(&mut self, path: &Path, access: u64) -> std::io::Result<bool> {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return Ok(false);
        };
        // SAFETY: fd is a ruleset fd we own; c is a valid C string.
        let r = unsafe { add_path_rule_raw(self.raw(), &c, access & self.handled) };
        match r {
            0 => Ok(true),
            e if e == libc::ENOENT || e == libc::ENOTDIR || e == libc::ELOOP => Ok(false),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }
}

/// Adds a path-beneath rule without allocating (usable in the forked child). Returns 0 or
/// an errno. Files get only file rights.
///
/// # Safety
/// `ruleset_fd` must be a Landlock ruleset fd.
pub(crate) unsafe fn add_path_rule_raw(ruleset_fd: i32, path: &CStr, access: u64) -> i32 {
    // SAFETY: path is a valid C string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return errno();
    }
    // SAFETY: a zeroed stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open, st is a valid buffer.
    let mut access = access;
    if unsafe { libc::fstat(fd, &mut st) } == 0 && (st.st_mode & libc::S_IFMT) != libc::S_IFDIR {
        access &= fs::FILE_RIGHTS;
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    let r = if access == 0 {
        0
    } else {
        // SAFETY: attr is a valid path-beneath attribute; fds are open.
        unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset_fd,
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        }
    };
    let e = if r < 0 { errno() } else { 0 };
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    e
}

/// Enforces the ruleset on the calling thread (needs no_new_privs). Returns 0 or an errno.
///
/// # Safety
/// `ruleset_fd` must be a Landlock ruleset fd.
pub(crate) unsafe fn restrict_self(ruleset_fd: i32) -> i32 {
    // SAFETY: documented call with a ruleset fd and no flags.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset_fd, 0u32) };
    if r < 0 { errno() } else { 0 }
}

pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[allow(dead_code)]
const _UNUSED: u64 = fs::MAKE_CHAR | fs::MAKE_BLOCK;
