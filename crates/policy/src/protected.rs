//! The one list of protected names, used by both walls: the in-process refusal
//! ([`reason`], through `Policy::check_write` / `check_remove`) and the sandbox
//! (read-only binds of the ones that exist, [`existing_at`]; the after-run walk
//! of `safesh-core`'s `protect_walk.rs` for the ones a program creates, which
//! asks [`reason`] / [`git_reason`] of every name it finds).
//!
//! What is on it: files that make code run in the human's next shell, session or
//! git command — shell start-up files (by name, anywhere: `.envrc` works in any
//! directory), user configuration under `$HOME`, safesh's config and state, and
//! everything git reads as configuration or runs ([`git_reason`]).

use std::ffi::OsStr;
use std::path::{Component, Path};
use std::sync::OnceLock;

/// Shell and session start-up files, protected by name wherever they are: writing
/// one plants code in the human's next shell (`.envrc`: direnv, in any directory).
pub const RC_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".inputrc",
    ".envrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    ".pam_environment",
];

/// User configuration under `$HOME` that runs code or grants access (a path and
/// everything beneath it).
pub const HOME_PATHS: &[&str] = &[
    ".config/safesh",
    ".config/fish",
    ".config/git",
    ".config/autostart",
    ".config/environment.d",
    ".config/systemd",
    ".ssh/authorized_keys",
    ".ssh/config",
    ".ssh/rc",
    ".ssh/environment",
    ".gitconfig",
];

/// Files in the project root git reads as settings: `.gitmodules` (submodule
/// URLs and paths) and `.gitattributes` (filter/diff/merge drivers).
pub const GIT_WORKTREE_FILES: &[&str] = &[".gitmodules", ".gitattributes"];

/// Members of a git directory git reads as configuration or runs (a name and
/// everything beneath it): `config`, `config.worktree` and any other `config*`
/// are matched by prefix. `modules/X` and `worktrees/X` are git directories of
/// their own: their members are protected the same way.
/// The state of a rebase or cherry-pick in progress is there too: its todo list
/// takes `exec` lines, run by the human's `git rebase --continue`.
const GIT_DIR_MEMBERS: &[&str] = &[
    "commondir",
    "hooks",
    "info",
    "gitdir",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
];

/// Why a name is protected (`None`: it is not). `home` and `state` are the
/// configured `$HOME` and safesh's state dir.
pub fn reason(path: &Path, home: Option<&Path>, state: Option<&Path>) -> Option<&'static str> {
    Checker::new(home, state).reason(path)
}

/// [`reason`] for many paths: `$HOME` resolved once, not once a path (a
/// checkpoint's walk asks for every file of the tree), and its protected
/// members joined once, when a path under it is first asked about (a project
/// under `$HOME` cost 11 joins a path).
#[derive(Clone, Debug)]
pub struct Checker<'a> {
    state: Option<&'a Path>,
    /// `$HOME` as configured and as resolved (a symlinked home), each with its
    /// [`HOME_PATHS`] beneath it.
    homes: Vec<(std::path::PathBuf, OnceLock<Vec<std::path::PathBuf>>)>,
}

impl<'a> Checker<'a> {
    /// The checks of [`reason`] for this `home` and `state`, `home` resolved now.
    pub fn new(home: Option<&Path>, state: Option<&'a Path>) -> Checker<'a> {
        let mut homes = Vec::new();
        if let Some(home) = home {
            homes.push(home.to_path_buf());
            homes.extend(std::fs::canonicalize(home).ok());
        }
        let homes = homes.into_iter().map(|h| (h, OnceLock::new())).collect();
        Checker { state, homes }
    }

    /// Why `path` is protected (see [`reason`]).
    pub fn reason(&self, path: &Path) -> Option<&'static str> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "safesh.toml" {
            return Some("safesh config files can only be changed by the human");
        }
        if RC_FILES.contains(&name) {
            return Some("shell start-up files would run code in the human's next shell");
        }
        if let Some(state) = self.state
            && path.starts_with(state)
        {
            return Some(
                "safesh's own state (audit log, labels, trust) cannot be written by commands",
            );
        }
        if let Some(why) = self.home_reason(path) {
            return Some(why);
        }
        if name == ".gitattributes" {
            return Some(
                "git attributes can name filter, diff and merge drivers that run programs",
            );
        }
        git_reason(path)
    }

    fn home_reason(&self, path: &Path) -> Option<&'static str> {
        // (Only a path under a home can be under one of its members.)
        let under = |(h, members): &(std::path::PathBuf, OnceLock<Vec<std::path::PathBuf>>)| {
            path.starts_with(h)
                && members
                    .get_or_init(|| HOME_PATHS.iter().map(|p| h.join(p)).collect())
                    .iter()
                    .any(|m| path.starts_with(m))
        };
        self.homes
            .iter()
            .any(under)
            .then_some("user configuration that runs code or grants access is protected")
    }
}

/// Why `path` is user configuration under `home`.
pub fn home_reason(path: &Path, home: Option<&Path>) -> Option<&'static str> {
    Checker::new(home, None).home_reason(path)
}

fn normal_components(path: &Path) -> Vec<&OsStr> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The absolute path of `comps` (normal components from the root).
fn joined(comps: &[&OsStr]) -> std::path::PathBuf {
    let mut dir = std::path::PathBuf::from("/");
    dir.extend(comps);
    dir
}

/// True when git would take `dir` for a repository: `HEAD`, and `objects/` +
/// `refs/` (or a `commondir` that supplies them).
pub fn is_repository(dir: &Path) -> bool {
    dir.join("HEAD").symlink_metadata().is_ok()
        && (dir.join("commondir").symlink_metadata().is_ok()
            || (dir.join("objects").is_dir() && dir.join("refs").is_dir()))
}

/// True when `name` (a member of a git directory) is configuration git reads or
/// runs: `config*`, `commondir`, `hooks`, `info`, `gitdir`, and the state of a
/// rebase or cherry-pick in progress.
pub fn is_git_config_member(name: &str) -> bool {
    name.starts_with("config") || GIT_DIR_MEMBERS.contains(&name)
}

/// Why `path` is something git reads as configuration or runs: `.gitmodules`, a
/// `.git` file or directory itself, and beneath any git directory (named `.git`,
/// or one git would take for a repository, and `modules/X`, `worktrees/X`
/// beneath one) `config*`, `commondir`, `hooks/`, `info/`, `gitdir` and
/// `objects/info/` (alternates). Creating
/// the last of `HEAD`/`objects`/`refs`/`commondir` that turns a directory holding
/// such members into a repository is protected too (the order of the writes
/// does not matter). `.gitattributes` is left to the caller: in-process it is
/// refused whole ([`reason`]), the after-run walk looks at its driver lines.
pub fn git_reason(path: &Path) -> Option<&'static str> {
    let comps = normal_components(path);
    let name = comps.last().and_then(|n| n.to_str()).unwrap_or("");
    if name == ".gitmodules" {
        return Some("`.gitmodules` tells git where submodules come from");
    }
    if name == ".git" {
        return Some("a `.git` file or directory decides which repository and config git uses");
    }
    // Which components are git directories: `.git`, the per-submodule and
    // per-worktree dirs beneath one (`modules/X`, `worktrees/X`), or a
    // directory shaped like a repository (looked at only when a configuration
    // member follows it).
    let mut git_dir: Vec<bool> = Vec::with_capacity(comps.len());
    for (i, c) in comps.iter().enumerate() {
        let nested = i >= 2
            && git_dir[i - 2]
            && matches!(comps[i - 1].to_str(), Some("modules" | "worktrees"));
        let named = *c == ".git" || nested;
        git_dir.push(named);
        let Some(rest) = comps.get(i + 1..).filter(|r| !r.is_empty()) else {
            break;
        };
        let member = rest[0].to_str().unwrap_or("");
        let config_member = is_git_config_member(member)
            || (member == "objects" && rest.get(1).is_some_and(|n| *n == "info"));
        // (The directory's path is built only for a configuration member.)
        if config_member && (named || is_repository(&joined(&comps[..=i]))) {
            return Some(match member {
                "hooks" => "git hooks run code on the next git command",
                "objects" => "alternates make git read objects from another repository",
                "commondir" | "gitdir" => {
                    "it points git at another repository, whose config git then runs"
                }
                "info" => "git reads info/ (attributes, exclude) as configuration",
                "rebase-merge" | "rebase-apply" | "sequencer" => {
                    "a rebase's todo list runs its `exec` lines on `git rebase --continue`"
                }
                _ => "git's config can make git run programs",
            });
        }
    }
    // The marker that would turn a directory holding git configuration into a
    // repository (`config` planted first, then `HEAD`, `objects`, `refs`).
    if matches!(name, "HEAD" | "objects" | "refs" | "commondir")
        && let Some(parent) = path.parent()
        && parent.file_name() != Some(OsStr::new(".git"))
        && would_be_repository(parent, name)
        && holds_git_config(parent)
    {
        return Some("this would make git read configuration planted in this directory");
    }
    None
}

/// True when `dir` is a repository once `adding` exists in it.
fn would_be_repository(dir: &Path, adding: &str) -> bool {
    let has = |n: &str| n == adding || dir.join(n).symlink_metadata().is_ok();
    has("HEAD") && (has("commondir") || (has("objects") && has("refs")))
}

/// True when `dir` holds a member git would read as configuration.
fn holds_git_config(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        is_git_config_member(&n)
    }) || dir.join("objects/info").symlink_metadata().is_ok()
}

/// The protected files of the list that exist at `root` (the names, the git
/// worktree files unless `git_writes` — git's own checkout writes them), plus
/// the [`HOME_PATHS`] when `root` is `home`: the sandbox binds them read-only.
/// The ones that do not exist are left to the after-run walk (a placeholder
/// would show up in every program's view of the project).
pub fn existing_at(root: &Path, home: Option<&Path>, git_writes: bool) -> Vec<std::path::PathBuf> {
    let mut names: Vec<&str> = RC_FILES.to_vec();
    if !git_writes {
        names.extend(GIT_WORKTREE_FILES);
    }
    if home == Some(root) {
        names.extend(HOME_PATHS);
        names.push(".ssh");
    }
    names
        .into_iter()
        .map(|n| root.join(n))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

/// Files beneath a protected directory looked at for [`linked_reason`].
const LINKED_SCAN: usize = 512;

/// Why the file `(dev, ino)` — one with more than one name — is protected: it
/// is the inode of a protected file under `home`, `state` or a write root (a
/// hard link made to `~/.bashrc`, `.git/config`, `safesh.toml` … would be a
/// second, unprotected name to write it by). `None`: no protected file has it.
pub fn linked_reason(
    dev: u64,
    ino: u64,
    home: Option<&Path>,
    state: Option<&Path>,
    roots: &[std::path::PathBuf],
) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    let same = |p: &Path| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.dev() == dev && m.ino() == ino)
    };
    // Files under `dir` (a few levels, a bounded number).
    let under = |dir: &Path| {
        let mut left = LINKED_SCAN;
        let mut stack = vec![(dir.to_path_buf(), 0u8)];
        while let Some((d, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                if same(&d) {
                    return true;
                }
                continue;
            };
            for e in rd.flatten() {
                if left == 0 {
                    return false;
                }
                left -= 1;
                let p = e.path();
                match e.file_type() {
                    Ok(t) if t.is_dir() && depth < 3 => stack.push((p, depth + 1)),
                    Ok(t) if t.is_file() && same(&p) => return true,
                    _ => {}
                }
            }
        }
        false
    };
    let mut places: Vec<std::path::PathBuf> = roots.to_vec();
    places.extend(home.map(Path::to_path_buf));
    for root in &places {
        let named = RC_FILES
            .iter()
            .chain(GIT_WORKTREE_FILES)
            .chain(&["safesh.toml"])
            .any(|n| same(&root.join(n)));
        if named {
            return Some(
                "it is a hard link to a protected file (a shell start-up file, safesh.toml or git settings)",
            );
        }
        let git = root.join(".git");
        if git.is_dir() && git_member_has(dev, ino, &git) {
            return Some("it is a hard link to a file git reads as configuration or runs");
        }
    }
    if let Some(h) = home
        && HOME_PATHS.iter().any(|p| under(&h.join(p)))
    {
        return Some("it is a hard link to user configuration that runs code or grants access");
    }
    if let Some(s) = state
        && under(s)
    {
        return Some("it is a hard link to safesh's own state");
    }
    None
}

/// True when a member of git dir `git` that git reads as configuration or runs
/// (not its objects, index, refs or logs: git hard-links objects between
/// clones itself) is the inode `(dev, ino)`.
fn git_member_has(dev: u64, ino: u64, git: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let same = |p: &Path| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.dev() == dev && m.ino() == ino)
    };
    let Ok(rd) = std::fs::read_dir(git) else {
        return false;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        let protected = is_git_config_member(&name) || GIT_DIR_MEMBERS.contains(&name.as_ref());
        if !protected {
            continue;
        }
        if same(&p) {
            return true;
        }
        if p.is_dir()
            && std::fs::read_dir(&p)
                .is_ok_and(|rd| rd.flatten().take(LINKED_SCAN).any(|e| same(&e.path())))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_checker_answers_as_reason_for_a_symlinked_home() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = d.path().join("real-home");
        std::fs::create_dir_all(real.join(".ssh")).unwrap_or_else(|e| panic!("{e}"));
        let link = d.path().join("home");
        std::os::unix::fs::symlink(&real, &link).unwrap_or_else(|e| panic!("{e}"));
        let state = d.path().join("state");
        let checker = Checker::new(Some(&link), Some(&state));
        for path in [
            real.join(".ssh/config"),
            link.join(".ssh/authorized_keys"),
            real.join(".config/git/config"),
            real.join("proj/.bashrc"),
            real.join("proj/safesh.toml"),
            state.join("labels.db"),
            real.join("proj/.git/hooks/pre-commit"),
            // Benign neighbours.
            real.join("proj/src/main.rs"),
            real.join(".sshx/config"),
            real.join(".config/gitx"),
        ] {
            assert_eq!(
                checker.reason(&path),
                reason(&path, Some(&link), Some(&state)),
                "{}",
                path.display()
            );
        }
        assert!(checker.reason(&real.join(".ssh/config")).is_some());
        assert!(checker.reason(&real.join("proj/src/main.rs")).is_none());
        assert!(checker.reason(&real.join(".sshx/config")).is_none());
    }

    #[test]
    fn git_members_beneath_git_dirs() {
        let p = |s: &str| git_reason(Path::new(s));
        assert!(p("/p/.git/commondir").is_some());
        assert!(p("/p/.git/config.worktree").is_some());
        assert!(p("/p/.git/modules/sub/hooks/post-checkout").is_some());
        assert!(p("/p/.git/modules/sub/config").is_some());
        assert!(p("/p/.git/worktrees/w/gitdir").is_some());
        assert!(p("/p/.git/info/attributes").is_some());
        assert!(p("/p/.git/objects/info/alternates").is_some());
        assert!(p("/p/.git/rebase-merge/git-rebase-todo").is_some());
        assert!(p("/p/sub/.git").is_some());
        assert!(p("/p/.gitmodules").is_some());
        assert!(p("/p/.git/HEAD").is_none());
        assert!(p("/p/.git/modules/sub/HEAD").is_none());
        assert!(p("/p/.git/modules/sub/objects/ab/cd").is_none());
        assert!(p("/p/.git/worktrees/w/index").is_none());
        assert!(p("/p/.git/index").is_none());
        assert!(p("/p/.git/objects/ab/cdef").is_none());
        assert!(p("/p/.git/refs/heads/main").is_none());
        assert!(p("/p/config/app.toml").is_none());
    }

    #[test]
    fn bare_repositories_in_any_order() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let evil = d.path().join("evil");
        std::fs::create_dir_all(evil.join("objects")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(evil.join("refs")).unwrap_or_else(|e| panic!("{e}"));
        // Not a repository yet: an ordinary `config` file.
        assert!(git_reason(&evil.join("config")).is_none());
        std::fs::write(evil.join("config"), "x").unwrap_or_else(|e| panic!("{e}"));
        // HEAD would make it one, with that config.
        assert!(git_reason(&evil.join("HEAD")).is_some());
        std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(git_reason(&evil.join("config")).is_some());
        assert!(git_reason(&evil.join("hooks/fsmonitor")).is_some());
        assert!(git_reason(&evil.join("description")).is_none());
    }

    #[test]
    fn home_configuration_by_its_resolved_path() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = std::fs::canonicalize(d.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(real.join("h")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(real.join("h"), real.join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let home = real.join("link");
        assert!(home_reason(&real.join("h/.config/git/config"), Some(&home)).is_some());
        assert!(home_reason(&home.join(".config/autostart/x.desktop"), Some(&home)).is_some());
        assert!(home_reason(&real.join("h/.config/app/x"), Some(&home)).is_none());
    }

    #[test]
    fn existing_names_only() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join(".envrc"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join(".gitmodules"), "x").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            existing_at(d.path(), None, false),
            vec![d.path().join(".envrc"), d.path().join(".gitmodules")]
        );
        assert_eq!(
            existing_at(d.path(), None, true),
            vec![d.path().join(".envrc")]
        );
    }
}
