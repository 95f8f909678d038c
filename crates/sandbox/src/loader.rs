//! The dynamic loader as a program (issue 15, item 3). `ld.so /usr/bin/perl`
//! runs perl by mapping it, not by executing it: Landlock's execute right sees
//! only the loader, which every dynamic program needs. So an `execve` of a
//! loader is refused inside the run (the exec notification of `notify.rs`), and
//! a loader is never the program of a run. The kernel opening a loader as a
//! program's ELF interpreter is not an `execve` and is untouched.
//!
//! A loader is known by its name (`ld-linux-x86-64.so.2`, `ld.so`, `ld64.so.1`,
//! `ld-musl-…`), by being one of this host's loaders (the `PT_INTERP` of common
//! programs and the `ld-*` files of the library dirs), or by being a copy of one
//! (same size and bytes: `cp /lib64/ld-linux-x86-64.so.2 target/x`).

use std::path::{Path, PathBuf};

/// The library dirs where a host's loaders live.
const LIB_DIRS: &[&str] = &[
    "/lib",
    "/lib64",
    "/lib32",
    "/usr/lib",
    "/usr/lib64",
    "/usr/lib32",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
];

/// True when `base` (a file name) names a dynamic loader.
pub(crate) fn is_loader_name(base: &str) -> bool {
    base.starts_with("ld.so")
        || base.starts_with("ld64.so")
        || (base.starts_with("ld-") && base.contains(".so"))
}

/// This host's loaders: (canonical path, size), found once per process.
fn host_loaders() -> &'static [(PathBuf, u64)] {
    static CACHE: std::sync::OnceLock<Vec<(PathBuf, u64)>> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| {
        let mut found: Vec<PathBuf> = Vec::new();
        for p in ["/proc/self/exe", "/usr/bin/env", "/usr/bin/python3"] {
            found.extend(crate::exec::closure(Path::new(p), None).into_iter().skip(1));
        }
        for d in LIB_DIRS {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            for e in entries.flatten() {
                if is_loader_name(&e.file_name().to_string_lossy()) {
                    found.push(e.path());
                }
            }
        }
        let mut v: Vec<(PathBuf, u64)> = found
            .into_iter()
            .filter_map(|p| crate::realpath::canonicalize(&p).ok())
            .filter_map(|p| {
                let m = std::fs::metadata(&p).ok()?;
                let len = m.len();
                m.is_file().then_some((p, len))
            })
            .collect();
        v.sort();
        v.dedup();
        v
    })
}

/// True when `path` (a host path) is a dynamic loader, or a copy of one.
pub fn is_loader(path: &Path) -> bool {
    if path
        .file_name()
        .is_some_and(|n| is_loader_name(&n.to_string_lossy()))
    {
        return true;
    }
    let Ok(real) = crate::realpath::canonicalize(path) else {
        return false;
    };
    if real
        .file_name()
        .is_some_and(|n| is_loader_name(&n.to_string_lossy()))
    {
        return true;
    }
    let Ok(meta) = std::fs::metadata(&real) else {
        return false;
    };
    let loaders = host_loaders();
    if loaders.iter().any(|(p, _)| *p == real) {
        return true;
    }
    // A copy: same size, then same bytes (loaders are a few hundred KiB).
    let same_size: Vec<&PathBuf> = loaders
        .iter()
        .filter(|(_, n)| *n == meta.len())
        .map(|(p, _)| p)
        .collect();
    if same_size.is_empty() {
        return false;
    }
    let Ok(bytes) = std::fs::read(&real) else {
        return false;
    };
    same_size
        .iter()
        .any(|p| std::fs::read(p).is_ok_and(|b| b == bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaders_by_name_path_and_copy() {
        assert!(is_loader_name("ld-linux-x86-64.so.2"));
        assert!(is_loader_name("ld.so"));
        assert!(!is_loader_name("ldd"));
        assert!(!is_loader_name("ld"));
        assert!(!is_loader(Path::new("/usr/bin/python3")));
        let Some((loader, _)) = host_loaders().first() else {
            return; // a static host
        };
        assert!(is_loader(loader));
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let copy = d.path().join("innocent");
        std::fs::copy(loader, &copy).unwrap_or_else(|e| panic!("{e}"));
        assert!(is_loader(&copy));
    }
}
