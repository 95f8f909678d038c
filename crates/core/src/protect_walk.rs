//! The second wall's half for names that do not exist yet (issue 15, items 2
//! and 3). Inside the sandbox the protected files of `safesh_policy::protected`
//! that exist are bound read-only, but the kernel cannot deny a name before it
//! exists in a new directory (`sub/.envrc`, `evil/{HEAD,config,objects,refs}`,
//! `.git/commondir`). So around every external run with write roots:
//!
//! 1. [`Snapshot::take`] walks the write roots and saves every protected file it
//!    finds (stamp, and the bytes of files up to [`MAX_SAVED`]);
//! 2. after the program exits (and everything it started: the sandbox kills its
//!    tree), [`Snapshot::revert`] walks again, removes the protected names it
//!    created, puts back what it changed or removed, and says so (warnings).
//!
//! The names are the one list (`safesh_policy::protected::reason`), so both walls
//! agree. Differences, by design: a new `safesh.toml` is left (inert until the
//! human trusts it); `.gitattributes` counts only for its filter/diff/merge lines
//! (the rest is ordinary); when the program is git itself, git's own writes
//! (the git list) are allowed — its arguments were decided by the git rule —
//! while the shell start-up files and user configuration still are not.
//!
//! Cost: two walks of the write roots per external run — one `readdir` per
//! directory and one `stat` for `HEAD` per directory, inside git directories
//! only the configuration members (not `objects/`, `refs/`, `logs/`). Past
//! [`MAX_DIRS`] directories the walk stops and says so.

use safesh_policy::protected;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The most directories one walk visits (the secret scan's 20,000 would be too
/// few here: a program could make that many to hide a name past them).
pub(crate) const MAX_DIRS: usize = 100_000;
/// The largest protected file whose bytes are saved (git config, hooks and
/// rc files are far smaller).
pub(crate) const MAX_SAVED: u64 = 1 << 20;

/// What identifies one version of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// What was there before the run.
#[derive(Debug)]
enum Saved {
    /// A file and its bytes (`None`: larger than [`MAX_SAVED`]).
    File(Option<Vec<u8>>),
    /// A symlink and its target.
    Link(PathBuf),
    /// A directory (its members are saved one by one).
    Dir,
}

#[derive(Debug)]
struct Entry {
    stamp: Stamp,
    saved: Saved,
    why: &'static str,
}

/// What the walk looks for.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    /// The configured `$HOME` (its user configuration is protected).
    pub home: Option<PathBuf>,
    /// The program is git itself: its own writes to the git list are allowed.
    pub git_program: bool,
    /// Paths the sandbox binds read-only: the program cannot change them, and a
    /// change seen there is the human's own (never reverted).
    pub bound: Vec<PathBuf>,
}

/// The protected files under the write roots before a run.
#[derive(Debug)]
pub(crate) struct Snapshot {
    walk: Walk,
    roots: Vec<PathBuf>,
    before: BTreeMap<PathBuf, Entry>,
    dormant: std::collections::BTreeSet<PathBuf>,
    /// False when the walk stopped at [`MAX_DIRS`].
    pub complete: bool,
}

/// A `.gitattributes` line naming a driver that runs a program.
fn driver_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut v: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| ["filter=", "diff=", "merge="].iter().any(|d| l.contains(d)))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

impl Walk {
    /// Why the walk watches `path` (`None`: it does not).
    fn watched(&self, path: &Path, is_dir: bool) -> Option<&'static str> {
        if self.bound.iter().any(|b| path.starts_with(b)) {
            return None;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "safesh.toml" {
            return None;
        }
        if name == ".gitattributes" {
            return (!self.git_program && !is_dir).then_some(
                "git attributes can name filter, diff and merge drivers that run programs",
            );
        }
        if protected::RC_FILES.contains(&name) {
            return Some("shell start-up files would run code in the human's next shell");
        }
        if let Some(why) = protected::home_reason(path, self.home.as_deref()) {
            return Some(why);
        }
        if self.git_program {
            return None;
        }
        // A `.git` directory is walked into (its members are watched); a `.git`
        // file or symlink points git at another repository.
        if name == ".git" && is_dir {
            return None;
        }
        protected::git_reason(path)
    }

    /// Every watched path under `roots`, with its metadata, in path order; and
    /// whether the walk saw everything.
    fn find(&self, roots: &[PathBuf]) -> Found {
        let mut found = BTreeMap::new();
        let mut dormant = std::collections::BTreeSet::new();
        let mut stack: Vec<PathBuf> = roots.to_vec();
        let mut visited = 0usize;
        while let Some(dir) = stack.pop() {
            if visited >= MAX_DIRS {
                return Found {
                    watched: found,
                    dormant,
                    complete: false,
                };
            }
            visited += 1;
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            // The entry types come with the listing (no `stat` per entry): a
            // `stat` only for what is watched (its stamp).
            let entries: Vec<(fs::DirEntry, bool)> = entries
                .flatten()
                .filter_map(|e| {
                    let ft = e.file_type().ok()?;
                    Some((e, ft.is_dir()))
                })
                .collect();
            let has = |n: &str, dir_only: bool| {
                entries
                    .iter()
                    .any(|(e, d)| e.file_name() == n && (!dir_only || *d))
            };
            let git_dir = dir.file_name() == Some(std::ffi::OsStr::new(".git"))
                || (has("HEAD", false)
                    && (has("commondir", false) || (has("objects", true) && has("refs", true))));
            for (e, is_dir) in entries {
                let path = e.path();
                if let Some(why) = self.watched(&path, is_dir) {
                    let Ok(meta) = fs::symlink_metadata(&path) else {
                        continue;
                    };
                    found.insert(path.clone(), (meta, why));
                } else if !git_dir
                    && protected::is_git_config_member(&e.file_name().to_string_lossy())
                {
                    dormant.insert(path.clone());
                }
                if !is_dir {
                    continue;
                }
                let name = e.file_name();
                let name = name.to_string_lossy();
                if !git_dir {
                    stack.push(path);
                } else if name == "objects" {
                    // Only `objects/info` (alternates) is configuration.
                    let info = path.join("info");
                    if info.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        stack.push(info);
                    }
                } else if protected::is_git_config_member(&name)
                    || name == "modules"
                    || name == "worktrees"
                    || dir
                        .file_name()
                        .is_some_and(|n| n == "modules" || n == "worktrees")
                {
                    stack.push(path);
                }
            }
        }
        Found {
            watched: found,
            dormant,
            complete: true,
        }
    }
}

/// What one walk found.
struct Found {
    /// Watched paths, in path order, with their metadata and why.
    watched: BTreeMap<PathBuf, (fs::Metadata, &'static str)>,
    /// Names git would read as configuration in directories that are not (yet)
    /// repositories: an ordinary `config` file.
    dormant: std::collections::BTreeSet<PathBuf>,
    /// False when the walk stopped at [`MAX_DIRS`].
    complete: bool,
}

/// The write roots to walk: existing directories, none beneath another.
fn walk_roots(write: &[PathBuf]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = write
        .iter()
        .filter_map(|w| fs::canonicalize(w).ok())
        .filter(|w| w.is_dir())
        .collect();
    v.sort();
    v.dedup();
    let all = v.clone();
    v.retain(|r| !all.iter().any(|o| o != r && r.starts_with(o)));
    v
}

impl Snapshot {
    /// Saves the protected files under the write roots `write`.
    pub(crate) fn take(walk: Walk, write: &[PathBuf]) -> Snapshot {
        let roots = walk_roots(write);
        let Found {
            watched,
            dormant,
            complete,
        } = walk.find(&roots);
        let mut before = BTreeMap::new();
        for (path, (meta, why)) in watched {
            let saved = if meta.file_type().is_symlink() {
                match fs::read_link(&path) {
                    Ok(t) => Saved::Link(t),
                    Err(_) => continue,
                }
            } else if meta.is_dir() {
                Saved::Dir
            } else if meta.len() <= MAX_SAVED {
                Saved::File(read_nofollow(&path))
            } else {
                Saved::File(None)
            };
            before.insert(
                path,
                Entry {
                    stamp: Stamp::of(&meta),
                    saved,
                    why,
                },
            );
        }
        Snapshot {
            walk,
            roots,
            before,
            dormant,
            complete,
        }
    }

    /// After the run: removes the protected names it created, puts back what it
    /// changed or removed. Returns one line per file (for the result's warnings).
    pub(crate) fn revert(&self, program: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.complete {
            notes.push(format!(
                "{program}: the walk for protected files stopped after {MAX_DIRS} directories; \
                 files beyond them were not checked"
            ));
        }
        let now = self.walk.find(&self.roots).watched;
        let mut removed: Vec<PathBuf> = Vec::new();
        // Markers (`HEAD`, `objects`, `refs`) last: a planted `config` goes
        // first, and a directory without it keeps its new `HEAD`.
        let mut order: Vec<(&PathBuf, &(fs::Metadata, &'static str))> = now.iter().collect();
        order.sort_by_key(|(p, _)| {
            let marker = p
                .file_name()
                .is_some_and(|n| n == "HEAD" || n == "objects" || n == "refs");
            (marker, p.to_path_buf())
        });
        for (path, (meta, why)) in order {
            if removed.iter().any(|r| path.starts_with(r)) {
                continue;
            }
            match self.before.get(path) {
                Some(old) if old.stamp == Stamp::of(meta) => {}
                Some(old) if matches!(old.saved, Saved::Dir) && meta.is_dir() => {}
                Some(old) => {
                    if is_attributes(path) && same_drivers(&old.saved, path) {
                        continue;
                    }
                    let r = self.restore(path, old);
                    notes.push(format!("{program}: {} {}: {}", r, self.show(path), old.why));
                    removed.push(path.clone());
                }
                // Still protected after what was reverted before it (a member
                // of a directory that is no longer a repository is ordinary).
                None if fs::symlink_metadata(path)
                    .ok()
                    .and_then(|m| self.walk.watched(path, m.is_dir()))
                    .is_none() => {}
                None => {
                    if is_attributes(path) && attribute_drivers(path).is_some_and(|d| d.is_empty())
                    {
                        continue;
                    }
                    let (gone, what) = self.remove_new(path);
                    notes.push(format!(
                        "{program}: removed {} it created: {why}",
                        self.show(&gone)
                    ));
                    if what {
                        removed.push(gone);
                    }
                }
            }
        }
        // Saved files no longer where they were (removed, renamed, or their
        // directory replaced).
        for (path, old) in &self.before {
            if now.contains_key(path) {
                continue;
            }
            let same = fs::symlink_metadata(path).is_ok_and(|m| Stamp::of(&m) == old.stamp);
            if same || matches!(old.saved, Saved::Dir) && path.is_dir() {
                continue;
            }
            // Removed along with its directory (`rm -rf vendor`): nothing was
            // planted, and a skeleton directory would only get in the way.
            if path
                .parent()
                .is_some_and(|d| fs::symlink_metadata(d).is_err())
            {
                continue;
            }
            let r = self.restore(path, old);
            notes.push(format!("{program}: {} {}: {}", r, self.show(path), old.why));
        }
        notes
    }

    /// `path` relative to its root, for messages.
    fn show(&self, path: &Path) -> String {
        self.roots
            .iter()
            .find_map(|r| path.strip_prefix(r).ok())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Removes a protected name the program created. A member of a directory
    /// that only the run turned into a repository (an ordinary `config` there
    /// before, `HEAD` new) costs the marker, not the user's file. Returns what
    /// was removed and whether it was a whole subtree.
    fn remove_new(&self, path: &Path) -> (PathBuf, bool) {
        if self.dormant.contains(path)
            && let Some(dir) = path.parent()
        {
            let head = dir.join("HEAD");
            if !self.dormant.contains(&head) && fs::symlink_metadata(&head).is_ok() {
                remove_any(&head);
                return (head, false);
            }
        }
        remove_any(path);
        (path.to_path_buf(), true)
    }

    /// Puts back `old` at `path`; says what was done.
    fn restore(&self, path: &Path, old: &Entry) -> &'static str {
        remove_any(path);
        if !self.parents_are_dirs(path) {
            return "could not restore (a parent directory was replaced)";
        }
        if let Some(parent) = path.parent() {
            let _ = fs::create_dir_all(parent);
        }
        let ok = match &old.saved {
            Saved::Dir => fs::create_dir(path).is_ok(),
            Saved::Link(target) => std::os::unix::fs::symlink(target, path).is_ok(),
            Saved::File(Some(bytes)) => write_new(path, bytes, old.stamp.mode),
            Saved::File(None) => false,
        };
        if ok {
            "restored"
        } else {
            "removed (its old content could not be restored)"
        }
    }

    /// True when no directory between the root and `path` is a symlink (a
    /// restore never writes through one).
    fn parents_are_dirs(&self, path: &Path) -> bool {
        let Some(root) = self.roots.iter().find(|r| path.starts_with(r)) else {
            return false;
        };
        let mut p = root.clone();
        let Ok(rest) = path.strip_prefix(root) else {
            return false;
        };
        let comps: Vec<_> = rest.components().collect();
        for c in comps.iter().take(comps.len().saturating_sub(1)) {
            p.push(c);
            match fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    // Something the program put in the way: it goes (the saved
                    // tree is put back beneath a real directory).
                    remove_any(&p);
                }
                Err(_) => {}
            }
        }
        true
    }
}

fn is_attributes(path: &Path) -> bool {
    path.file_name() == Some(std::ffi::OsStr::new(".gitattributes"))
}

/// The driver lines of a `.gitattributes` file (`None`: not a regular file, or
/// too large to read whole — counted as naming drivers).
fn attribute_drivers(path: &Path) -> Option<Vec<String>> {
    let bytes = read_nofollow(path)?;
    (bytes.len() as u64 <= MAX_SAVED).then(|| driver_lines(&bytes))
}

/// True when a changed `.gitattributes` names the same drivers as before.
fn same_drivers(old: &Saved, path: &Path) -> bool {
    match (old, attribute_drivers(path)) {
        (Saved::File(Some(before)), Some(now)) => {
            before.len() as u64 <= MAX_SAVED && driver_lines(before) == now
        }
        _ => false,
    }
}

fn read_nofollow(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut v = Vec::new();
    f.by_ref().take(MAX_SAVED + 1).read_to_end(&mut v).ok()?;
    Some(v)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> bool {
    use std::io::Write;
    let Ok(mut f) = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
    else {
        return false;
    };
    f.write_all(bytes).is_ok()
        && f.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
            .is_ok()
}

/// Removes a file, a symlink or a whole directory (never following a link).
fn remove_any(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = fs::canonicalize(d.path()).unwrap_or_else(|e| panic!("{e}"));
        (d, root)
    }

    fn w(p: &Path, s: &str) {
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        fs::write(p, s).unwrap_or_else(|e| panic!("{e}"));
    }

    fn walk() -> Walk {
        Walk {
            home: None,
            git_program: false,
            bound: Vec::new(),
        }
    }

    #[test]
    fn new_protected_names_go_and_changed_ones_come_back() {
        let (_d, root) = tmp();
        w(&root.join(".git/HEAD"), "ref: refs/heads/main\n");
        fs::create_dir_all(root.join(".git/objects")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join(".git/refs")).unwrap_or_else(|e| panic!("{e}"));
        w(&root.join(".git/config"), "[core]\n");
        w(&root.join("src/.envrc"), "ok\n");
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        w(&root.join(".git/commondir"), "../evil\n");
        w(&root.join(".git/config"), "[core]\nfsmonitor = x\n");
        w(&root.join("src/.envrc"), "evil\n");
        w(&root.join("a/.bashrc"), "evil\n");
        w(&root.join(".git/index"), "git's own\n");
        w(&root.join("notes.txt"), "ordinary\n");
        w(&root.join(".gitattributes"), "*.txt text\n");
        let notes = snap.revert("python3");
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(!root.join(".git/commondir").exists());
        assert!(!root.join("a/.bashrc").exists());
        assert_eq!(
            fs::read_to_string(root.join(".git/config")).ok().as_deref(),
            Some("[core]\n")
        );
        assert_eq!(
            fs::read_to_string(root.join("src/.envrc")).ok().as_deref(),
            Some("ok\n")
        );
        assert!(root.join(".git/index").exists());
        assert!(root.join("notes.txt").exists());
        assert!(root.join(".gitattributes").exists());
    }

    #[test]
    fn attributes_count_for_their_drivers() {
        let (_d, root) = tmp();
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        w(&root.join("sub/.gitattributes"), "*.c filter=evil\n");
        assert_eq!(snap.revert("python3").len(), 1);
        assert!(!root.join("sub/.gitattributes").exists());
    }

    #[test]
    fn attributes_that_cannot_be_read_whole_count_as_drivers() {
        let (_d, root) = tmp();
        w(&root.join("evil.txt"), "* filter=evil\n");
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        std::os::unix::fs::symlink("evil.txt", root.join(".gitattributes"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut big = "#".repeat(MAX_SAVED as usize + 10);
        big.push_str("\n* filter=evil\n");
        w(&root.join("sub/.gitattributes"), &big);
        let notes = snap.revert("python3");
        assert!(
            root.join(".gitattributes").symlink_metadata().is_err(),
            "{notes:?}"
        );
        assert!(!root.join("sub/.gitattributes").exists(), "{notes:?}");
        assert!(root.join("evil.txt").exists());
    }

    #[test]
    fn a_file_removed_with_its_directory_stays_removed() {
        let (_d, root) = tmp();
        w(&root.join("vendor/x/.envrc"), "theirs\n");
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        fs::remove_dir_all(root.join("vendor")).unwrap_or_else(|e| panic!("{e}"));
        assert!(snap.revert("python3").is_empty());
        assert!(!root.join("vendor").exists());
    }

    #[test]
    fn a_planted_bare_repository_loses_its_config() {
        let (_d, root) = tmp();
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        w(&root.join("evil/HEAD"), "ref: refs/heads/main\n");
        fs::create_dir_all(root.join("evil/objects")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join("evil/refs")).unwrap_or_else(|e| panic!("{e}"));
        w(&root.join("evil/config"), "[core]\nfsmonitor = x\n");
        let notes = snap.revert("python3");
        assert!(!root.join("evil/config").exists(), "{notes:?}");
        assert!(root.join("evil/HEAD").exists(), "{notes:?}");
    }

    #[test]
    fn an_ordinary_config_costs_the_new_marker_only() {
        let (_d, root) = tmp();
        w(&root.join("data/config"), "ordinary\n");
        fs::create_dir_all(root.join("data/objects")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join("data/refs")).unwrap_or_else(|e| panic!("{e}"));
        let snap = Snapshot::take(walk(), std::slice::from_ref(&root));
        w(&root.join("data/HEAD"), "ref: refs/heads/main\n");
        let notes = snap.revert("python3");
        assert!(root.join("data/config").exists(), "{notes:?}");
        assert!(!root.join("data/HEAD").exists(), "{notes:?}");
    }

    #[test]
    fn git_may_write_its_own_files() {
        let (_d, root) = tmp();
        let snap = Snapshot::take(
            Walk {
                home: None,
                git_program: true,
                bound: Vec::new(),
            },
            std::slice::from_ref(&root),
        );
        w(&root.join("x/.git/config"), "[core]\n");
        w(&root.join("x/.git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        w(&root.join(".envrc"), "evil\n");
        let notes = snap.revert("git");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(root.join("x/.git/config").exists());
        assert!(!root.join(".envrc").exists());
    }
}
