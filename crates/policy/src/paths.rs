//! Paths: resolution (`..`, symlinks — like `realpath -m`), the read and write
//! roots, and protected paths that no command may write whether or not they exist.

use std::path::{Component, Path, PathBuf};

/// Resolves `path` (relative to `cwd`) the way the kernel would: symlinks of
/// existing components are followed, `..` applies to the resolved parent, and the
/// part that does not exist yet is kept as written (normalized).
pub fn resolve(cwd: &Path, path: &Path) -> PathBuf {
    resolve_known(cwd, path).0
}

/// [`resolve`], also saying whether the path exists: `true` when the result is
/// [`canonicalize`]'s (the kernel resolved every component), so a caller that
/// needs the canonical form of the same path need not resolve it again.
pub fn resolve_known(cwd: &Path, path: &Path) -> (PathBuf, bool) {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    // An existing path: the kernel resolves it in one go.
    if let Ok(p) = canonicalize(&joined) {
        return (p, true);
    }
    let mut out = PathBuf::from("/");
    let mut pending: Vec<std::ffi::OsString> = joined
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    let mut exists = true;
    while let Some(c) = pending.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        out.push(&c);
        if !exists {
            continue;
        }
        match std::fs::symlink_metadata(&out) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > 40 {
                    exists = false;
                    continue;
                }
                let Ok(target) = std::fs::read_link(&out) else {
                    continue;
                };
                follow_link(&mut out, &target, &mut pending);
            }
            Ok(_) => {}
            Err(_) => exists = false,
        }
    }
    (out, false)
}

/// The absolute path an existing `p` resolves to, every symlink followed.
///
/// glibc's `realpath` (`std::fs::canonicalize`) calls `readlink` on every
/// component, about 0.6 µs each; opened with `O_PATH` instead, the kernel
/// resolves the path once and `/proc/self/fd/N` names the result, at a fixed
/// ~4.3 µs (three calls, one a procfs lookup, dearer still the first time a
/// process looks in its own `/proc`). A short path goes the first way.
pub fn canonicalize(p: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    /// Up to this many components, `realpath` is the cheaper way.
    const SHORT: usize = 6;
    if p.components().nth(SHORT).is_none() {
        return std::fs::canonicalize(p);
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(p)?;
    match std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
        Ok(r) if r.is_absolute() && !r.to_string_lossy().ends_with(" (deleted)") => Ok(r),
        // No /proc, or a file deleted meanwhile: the slow, exact way.
        _ => std::fs::canonicalize(p),
    }
}

/// [`normalize`], borrowing `p` when it is absolute and normalized already (the
/// common case: a path a utility resolved against its cwd).
pub fn normalize_cow(p: &Path) -> std::borrow::Cow<'_, Path> {
    if is_normalized_absolute(p) {
        std::borrow::Cow::Borrowed(p)
    } else {
        std::borrow::Cow::Owned(normalize(p))
    }
}

/// True when `p` is absolute and `normalize(p) == p`: no empty, `.` or `..`
/// component and no trailing `/` (except the root itself).
pub fn is_normalized_absolute(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    if b.first() != Some(&b'/') {
        return false;
    }
    if b.len() == 1 {
        return true;
    }
    // Segment by segment, jumping between slashes (this runs for every file a
    // utility reads: a byte-wise split cost more than the label lookup).
    let mut start = 1;
    for end in memchr::memchr_iter(b'/', &b[1..])
        .map(|i| i + 1)
        .chain(std::iter::once(b.len()))
    {
        let seg = &b[start..end];
        if seg.is_empty() || seg == b"." || seg == b".." {
            return false;
        }
        start = end + 1;
    }
    true
}

/// Lexical normalization (`a/./b/../c` → `a/c`), no disk access.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Device files any command may read. `/dev/stdin`, `/dev/stdout`, `/dev/stderr`
/// and `/dev/fd/N` are not devices: they name descriptors ([`process_path`]).
/// `/dev/tty` is not here: a script has no terminal of its own, and the human's
/// is where approvals are typed.
const READABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
];

/// Device files any command may write.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/full"];

/// Whether `p` is a standard device any command may use.
pub fn is_device(p: &Path, write: bool) -> bool {
    let list = if write {
        WRITABLE_DEVICES
    } else {
        READABLE_DEVICES
    };
    list.iter().any(|d| p == Path::new(d))
}

/// What a path names when it leads into the running process itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessPath {
    /// Descriptor `N` (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`,
    /// `/proc/<pid>/task/<tid>/fd/N`, or a symlink to one): in a script this is
    /// the script's descriptor `N`, never the process's own.
    Descriptor(i32),
    /// Anything else under `/proc/self` (the process's memory, environment,
    /// `fdinfo`, `cwd`, `root`, ...): never reachable from a script.
    OwnProcess,
}

/// Whether `path` (relative to `cwd`) leads into this process: one of its
/// descriptors, or another entry of its `/proc` directory. Symlinks are followed
/// (`/dev/stdout` → `/proc/self/fd/1`, a project symlink to `/dev/fd/3`) except
/// the kernel's magic links below `/proc/<pid>/` (`fd/N`, `cwd`, `root`, `exe`),
/// whose targets are the process's own objects and are never opened by name.
pub fn process_path(cwd: &Path, path: &Path) -> Option<ProcessPath> {
    process_path_known(cwd, path, None)
}

/// [`process_path`] given `canonical`, the path's [`canonicalize`]d form when the
/// caller has it already (it saves resolving the path twice).
pub fn process_path_known(
    cwd: &Path,
    path: &Path,
    canonical: Option<&Path>,
) -> Option<ProcessPath> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let lexical = normalize(&joined);
    // The names bash itself emulates, whatever the system's `/dev` holds.
    match lexical.to_str() {
        Some("/dev/stdin") => return Some(ProcessPath::Descriptor(0)),
        Some("/dev/stdout") => return Some(ProcessPath::Descriptor(1)),
        Some("/dev/stderr") => return Some(ProcessPath::Descriptor(2)),
        _ => {}
    }
    if let Ok(rest) = lexical.strip_prefix("/dev/fd") {
        return Some(descriptor_in(rest));
    }
    // Only a path under `/proc` or through a symlink can end in the process:
    // one that resolves to itself (a plain file) costs one resolution.
    if !lexical.starts_with("/proc") {
        let plain = match canonical {
            Some(real) => real == lexical,
            None => canonicalize(&joined).is_ok_and(|real| real == lexical),
        };
        if plain {
            return None;
        }
    }
    classify_proc(&resolve_no_magic(&joined))
}

/// `rest` of `/dev/fd/<rest>` or `/proc/<pid>/fd/<rest>`: a descriptor number,
/// or (the directory itself, `fd/x/y`) the process.
fn descriptor_in(rest: &Path) -> ProcessPath {
    let mut comps = rest.components();
    match (comps.next(), comps.next()) {
        (Some(Component::Normal(n)), None) => n
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            .filter(|n| *n >= 0)
            .map_or(ProcessPath::OwnProcess, ProcessPath::Descriptor),
        _ => ProcessPath::OwnProcess,
    }
}

/// Classifies a path resolved by [`resolve_no_magic`].
fn classify_proc(p: &Path) -> Option<ProcessPath> {
    if let Ok(rest) = p.strip_prefix("/dev/fd") {
        return Some(descriptor_in(rest));
    }
    let rest = p.strip_prefix("/proc").ok()?;
    let mut comps = rest.components().filter_map(|c| match c {
        Component::Normal(s) => s.to_str(),
        _ => Some(""),
    });
    let first = comps.next()?;
    if !is_own_process(first) {
        return None;
    }
    let tail: Vec<&str> = comps.collect();
    let fd_tail = match tail.as_slice() {
        ["fd", rest @ ..] => Some(rest),
        ["task", tid, "fd", rest @ ..] if is_own_thread(tid) => Some(rest),
        _ => None,
    };
    match fd_tail {
        Some([n]) => Some(
            n.parse::<i32>()
                .ok()
                .filter(|n| *n >= 0)
                .map_or(ProcessPath::OwnProcess, ProcessPath::Descriptor),
        ),
        _ => Some(ProcessPath::OwnProcess),
    }
}

/// `/proc/<name>` is this process: `self`, `thread-self`, its pid or one of its
/// threads' ids (reachable as `/proc/<tid>` though not listed).
fn is_own_process(name: &str) -> bool {
    if matches!(name, "self" | "thread-self") {
        return true;
    }
    name.parse::<u32>().is_ok_and(|n| n == std::process::id()) || is_own_thread(name)
}

/// `name` is the id of one of this process's threads.
fn is_own_thread(name: &str) -> bool {
    name.parse::<u32>().is_ok()
        && Path::new("/proc/self/task")
            .join(name)
            .symlink_metadata()
            .is_ok()
}

/// Resolves `joined` (absolute) like [`resolve`], following ordinary symlinks
/// (`/dev/stdout`, `/dev/fd`, `/proc/self`, a project's own) but not the magic
/// links below `/proc/<pid>/`, which stay as written.
fn resolve_no_magic(joined: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: Vec<std::ffi::OsString> = joined
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(c) = pending.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        out.push(&c);
        // `/proc/<x>/<y>…`: a magic link (or a plain entry) of a process.
        if out.starts_with("/proc") && out.components().count() > 3 {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&out) else {
            continue;
        };
        if !m.file_type().is_symlink() {
            continue;
        }
        links += 1;
        if links > 40 {
            break;
        }
        let Ok(target) = std::fs::read_link(&out) else {
            continue;
        };
        follow_link(&mut out, &target, &mut pending);
    }
    out
}

/// Why a path is protected: the one list of [`crate::protected`], shared with
/// the sandbox (read-only binds and the after-run walk).
pub fn protected_reason(
    path: &Path,
    home: Option<&Path>,
    state: Option<&Path>,
) -> Option<&'static str> {
    crate::protected::reason(path, home, state)
}

/// Replaces the last component of `out` (a symlink) by its `target`: the
/// target's components are pushed on `pending` to be walked next (an absolute
/// target restarts from `/`).
fn follow_link(out: &mut PathBuf, target: &Path, pending: &mut Vec<std::ffi::OsString>) {
    out.pop();
    if target.is_absolute() {
        *out = PathBuf::from("/");
    }
    for tc in target.components().rev() {
        match tc {
            Component::Normal(s) => pending.push(s.to_os_string()),
            Component::ParentDir => pending.push("..".into()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_symlinks_then_dotdot() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = std::fs::canonicalize(d.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("a/b")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root.join("a/b"), root.join("l"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resolve(&root, Path::new("l/../x")), root.join("a/x"));
        assert_eq!(
            resolve(&root, Path::new("nope/../../y")),
            root.parent().unwrap_or(&root).join("y")
        );
        assert_eq!(
            resolve(&root, Path::new("/etc/../etc/passwd")),
            PathBuf::from("/etc/passwd")
        );
    }

    #[test]
    fn descriptor_names_and_own_process_paths() {
        use ProcessPath::{Descriptor, OwnProcess};
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = std::fs::canonicalize(d.path()).unwrap_or_else(|e| panic!("{e}"));
        let pp = |s: &str| process_path(&root, Path::new(s));
        assert_eq!(pp("/dev/stdin"), Some(Descriptor(0)));
        assert_eq!(pp("/dev/stdout"), Some(Descriptor(1)));
        assert_eq!(pp("/dev/stderr"), Some(Descriptor(2)));
        assert_eq!(pp("/dev/fd/3"), Some(Descriptor(3)));
        assert_eq!(pp("/proc/self/fd/1"), Some(Descriptor(1)));
        assert_eq!(pp("/proc/thread-self/fd/7"), Some(Descriptor(7)));
        let pid = std::process::id();
        assert_eq!(pp(&format!("/proc/{pid}/fd/4")), Some(Descriptor(4)));
        assert_eq!(
            pp(&format!("/proc/{pid}/task/{pid}/fd/5")),
            Some(Descriptor(5))
        );
        assert_eq!(pp("/proc/self/environ"), Some(OwnProcess));
        assert_eq!(pp("/proc/self/fdinfo/1"), Some(OwnProcess));
        assert_eq!(pp("/proc/self/mem"), Some(OwnProcess));
        assert_eq!(pp("/proc/self/cwd/x"), Some(OwnProcess));
        assert_eq!(pp("/proc/self/fd"), Some(OwnProcess));
        assert_eq!(pp("/dev/fd/x"), Some(OwnProcess));
        assert_eq!(pp("/dev/null"), None);
        assert_eq!(pp("/proc/1/status"), None);
        assert_eq!(pp("plain.txt"), None);
        // A project symlink to a descriptor name, or into /proc/self.
        std::os::unix::fs::symlink("/proc/self/fd/1", root.join("out"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/dev/fd", root.join("fds")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/proc/self", root.join("me")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pp("out"), Some(Descriptor(1)));
        assert_eq!(pp("fds/2"), Some(Descriptor(2)));
        assert_eq!(pp("me/fd/0"), Some(Descriptor(0)));
        assert_eq!(pp("me/environ"), Some(OwnProcess));
        assert!(!is_device(Path::new("/dev/stdout"), true));
        assert!(is_device(Path::new("/dev/null"), true));
    }

    #[test]
    fn protected_paths() {
        let p = |s: &str| {
            protected_reason(
                Path::new(s),
                Some(Path::new("/h")),
                Some(Path::new("/h/.local/state/safesh")),
            )
        };
        assert!(p("/p/safesh.toml").is_some());
        assert!(p("/p/.git/hooks/pre-commit").is_some());
        assert!(p("/p/.git/hooks").is_some());
        assert!(p("/p/.git/config").is_some());
        assert!(p("/p/.git").is_some());
        assert!(p("/p/.git/objects/ab").is_none());
        assert!(p("/h/.bashrc").is_some());
        assert!(p("/h/.local/state/safesh/audit.log").is_some());
        assert!(p("/p/src/main.rs").is_none());
    }
}
