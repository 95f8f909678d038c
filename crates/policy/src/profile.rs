//! What an allowed external program may touch when it runs: the roots, plus the
//! per-command profile of its rule (`[commands.cargo] read/write/exec/network`),
//! the protected paths the sandbox must keep read-only inside the write roots, and
//! its limits. Plain data: the interpreter turns it into a sandbox spec.

use crate::config::{Network, PathGlob};
use crate::decide::{Kind, Policy};
use std::path::{Path, PathBuf};

/// The sandbox profile of one external command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Readable roots (directories or files).
    pub read: Vec<PathBuf>,
    /// Writable roots.
    pub write: Vec<PathBuf>,
    /// Programs (files or directories) it may start besides itself.
    pub exec: Vec<PathBuf>,
    /// Network access.
    pub network: Network,
    /// Paths inside the write roots that must stay read-only.
    pub protect: Vec<PathBuf>,
    /// Per-command timeout, ms.
    pub timeout_ms: u64,
    /// Memory, MiB.
    pub memory_mb: Option<u64>,
    /// Processes in its tree.
    pub processes: Option<u64>,
    /// Largest file it may write, MiB.
    pub file_size_mb: Option<u64>,
    /// Run with a weaker sandbox where Landlock is missing.
    pub allow_weaker: bool,
}

/// Built-in per-command timeout when the config sets none (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Built-in cap on any requested timeout (ms).
pub const DEFAULT_MAX_TIMEOUT_MS: u64 = 600_000;

/// The fixed part of a glob: `~/.rustup/toolchains/**` → `~/.rustup/toolchains`.
fn glob_base(g: &PathGlob) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in Path::new(&g.pattern).components() {
        let s = c.as_os_str().to_string_lossy();
        if s.contains(['*', '?', '[', '{']) {
            break;
        }
        out.push(c.as_os_str());
    }
    out
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

impl Policy {
    /// The profile for running `program` (resolved from `name`) with `argv` in `cwd`.
    pub fn profile(&self, name: &str, program: &Path, argv: &[String], cwd: &Path) -> Profile {
        let config = self.config();
        let mut p = Profile {
            read: Vec::new(),
            write: Vec::new(),
            exec: Vec::new(),
            network: config.sandbox.network.clone(),
            protect: Vec::new(),
            timeout_ms: config.limits.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).min(
                config
                    .limits
                    .max_timeout_ms
                    .unwrap_or(DEFAULT_MAX_TIMEOUT_MS),
            ),
            memory_mb: config.limits.memory_mb,
            processes: config.limits.processes,
            file_size_mb: config.limits.file_size_mb,
            allow_weaker: config.sandbox.allow_weaker,
        };
        for r in self.read_roots() {
            push_unique(&mut p.read, r.clone());
        }
        for w in self.write_roots() {
            push_unique(&mut p.write, w.clone());
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        for rule in self.rules_for_program(name, base, &Kind::External(program.to_path_buf())) {
            for g in &rule.read {
                push_unique(&mut p.read, glob_base(g));
            }
            for g in &rule.write {
                push_unique(&mut p.write, glob_base(g));
            }
            for g in &rule.exec {
                push_unique(&mut p.exec, glob_base(g));
            }
            if let Some(n) = &rule.network {
                p.network = n.clone();
            }
        }
        self.startable_programs(cwd, &mut p.exec);
        // Protected paths inside each write root (the sandbox keeps them read-only
        // whether they exist or not). git may write its own config in the
        // operations that must (init, clone, remote, push -u, config of safe keys:
        // the policy refused the dangerous ones).
        let sub = crate::decide::subcommand(base, &argv[1.min(argv.len())..], &[]);
        let git_writes_config = base == "git"
            && matches!(
                sub.as_deref(),
                Some(
                    "init"
                        | "clone"
                        | "remote"
                        | "push"
                        | "config"
                        | "branch"
                        | "checkout"
                        | "switch"
                        | "fetch"
                        | "pull"
                        | "submodule"
                )
            );
        // `git init` / `git clone` create a repository (hooks from git's own
        // templates; `--template` is refused by the git rule).
        let git_creates_repo = base == "git" && matches!(sub.as_deref(), Some("init" | "clone"));
        let mut roots: Vec<PathBuf> = p.write.clone();
        push_unique(&mut roots, cwd.to_path_buf());
        for root in &roots {
            // An existing safesh.toml stays read-only. A missing one gets no
            // placeholder (it would show up in the program's view of the project): a
            // config a program plants is inert until the human trusts it.
            let config_file = root.join("safesh.toml");
            if config_file.symlink_metadata().is_ok() {
                push_unique(&mut p.protect, config_file);
            }
            if git_creates_repo {
                continue;
            }
            push_unique(&mut p.protect, root.join(".git/hooks"));
            if !git_writes_config {
                push_unique(&mut p.protect, root.join(".git/config"));
            }
            // The rest of what git reads as configuration, where it exists (git
            // itself maintains worktrees/, modules/, info/).
            if base != "git" {
                for m in [
                    "commondir",
                    "config.worktree",
                    "info",
                    "modules",
                    "worktrees",
                    "objects/info",
                ] {
                    let path = root.join(".git").join(m);
                    if path.symlink_metadata().is_ok() {
                        push_unique(&mut p.protect, path);
                    }
                }
            }
        }
        if let Some(state) = &config.state_dir {
            push_unique(&mut p.protect, state.clone());
        }
        // The one list of protected names (crate::protected): the ones that exist
        // are bound read-only at each root (and at $HOME when a write root holds
        // it); the ones a program creates are found and reverted by the after-run
        // walk. git's own checkout writes `.gitattributes` / `.gitmodules`.
        let home = config.home.as_deref();
        let mut bind_roots = roots.clone();
        if let Some(home) = home
            && p.write.iter().any(|w| home.starts_with(w))
        {
            push_unique(&mut bind_roots, home.to_path_buf());
            // safesh's user config layer stays read-only whether it exists or not.
            push_unique(&mut p.protect, home.join(".config/safesh"));
        }
        for root in &bind_roots {
            for path in crate::protected::existing_at(root, home, base == "git") {
                push_unique(&mut p.protect, path);
            }
        }
        p
    }
}

impl Policy {
    /// The programs any program may start (`make` running a recipe's `python3`):
    /// those the config allows with no restriction on their arguments. A program
    /// whose rule restricts its argv (`git` with `deny_flags`, subcommand lists,
    /// argument patterns) could be started with any argv from inside, so only a
    /// profile's own `exec` lists it.
    fn startable_programs(&self, cwd: &Path, exec: &mut Vec<PathBuf>) {
        use crate::config::{Allow, NameMatcher};
        for rule in &self.config().commands {
            let unrestricted = rule.allow == Some(Allow::All)
                && rule.deny_flags.is_empty()
                && rule.require_flags.is_empty()
                && rule.arg_patterns.is_empty()
                && rule.subcommands.is_empty();
            if !unrestricted {
                continue;
            }
            let path = match &rule.matcher {
                NameMatcher::Name(n) => match self.resolve_program(n, cwd) {
                    Some(p) => p,
                    None => continue,
                },
                NameMatcher::Path(p) => p.clone(),
                NameMatcher::Glob(g) => glob_base(g),
            };
            // Landlock decides on the file itself: the link's target too.
            if let Ok(real) = std::fs::canonicalize(&path)
                && real != path
            {
                push_unique(exec, real);
            }
            push_unique(exec, path);
        }
    }
}
