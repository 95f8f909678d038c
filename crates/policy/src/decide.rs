//! The one decision function. The interpreter calls [`Policy::decide`] for every
//! command it is about to run (and `safesh check` / the pre-run pass call it for
//! every command they can see), with the argv as expanded and what the name
//! resolves to. Order: blocklist → nudge (unless forced) → not found → command
//! rules (allow, subcommands, flags, patterns) → built-in git rule → paths →
//! inner commands of wrappers.

use crate::blocklist;
use crate::config::{Allow, CommandRule, Config};
use crate::flags::{self, Knowledge};
use crate::nudge;
use crate::operands::{self, Access};
use crate::paths;
use crate::verdict::{ErrorCode, Refusal};
use crate::wrappers::{self, Inner};
use std::path::{Path, PathBuf};

/// What a command name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A shell function of the script.
    Function,
    /// A shell builtin.
    Builtin,
    /// An in-process utility.
    Utility,
    /// A program found on the trusted PATH or by path.
    External(PathBuf),
    /// Nothing of that name.
    NotFound,
}

/// One command to decide.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The expanded argv.
    pub argv: &'a [String],
    /// The working directory it would run in.
    pub cwd: &'a Path,
    /// What `argv[0]` resolves to.
    pub kind: Kind,
    /// `force`: override nudges (and nothing else).
    pub force: bool,
    /// False when the working directory may change before the command runs (the
    /// pre-run pass of a script that uses `cd`): relative paths are then left
    /// to the run-time decision.
    pub cwd_known: bool,
}

/// The verdict on one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// It may run.
    Allow,
    /// No such command: not a policy refusal (127 at run time, like bash).
    NotFound,
    /// Refused.
    Refuse(Refusal),
}

/// What the interpreter knows that the policy needs for inner commands.
pub trait Resolver {
    /// What `name` resolves to (for the inner command of a wrapper).
    fn kind(&self, name: &str) -> Kind;
    /// Decides shell text safesh would parse and run (`eval TEXT`, `trap TEXT`,
    /// `flock F -c TEXT`): the first refusal in it, if any. `None` also when the
    /// text cannot be decided now.
    fn check_script(&self, text: &str) -> Option<Refusal>;
    /// Refusals an in-process utility's own program text implies (awk
    /// `system()`, sed `e`: they would hand a string to a shell).
    fn check_utility(&self, argv: &[String]) -> Option<Refusal> {
        let _ = argv;
        None
    }
}

/// The policy: the merged config plus the roots made ready for checks.
#[derive(Clone, Debug)]
pub struct Policy {
    config: Config,
    read_roots: Vec<PathBuf>,
    write_roots: Vec<PathBuf>,
    /// The state dir, resolved (`None` without one).
    state_real: Option<PathBuf>,
    /// The one owner directory of spill files and job logs this session's
    /// commands may read (see [`Policy::set_state_scope`]).
    state_scope: Option<String>,
}

/// The running executable, resolved: Linux names it by its resolved path
/// already (`/proc/self/exe`); one that was deleted is not ours to resolve.
/// Read when first asked (a procfs lookup most starts do not need).
fn self_exe() -> Option<&'static Path> {
    static SELF_EXE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    SELF_EXE
        .get_or_init(|| {
            std::env::current_exe()
                .ok()
                .filter(|p| p.is_absolute() && !p.to_string_lossy().ends_with(" (deleted)"))
        })
        .as_deref()
}

/// Inner commands nest at most this deep (`env env env …`).
const MAX_WRAPPER_DEPTH: usize = 16;

impl Policy {
    /// Builds the policy from a merged config.
    pub fn new(config: Config) -> Self {
        // Each distinct path is resolved once (the project is usually both a
        // read and a write root): a resolution is a few system calls per start.
        let mut resolved: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut canon = |p: &Path| {
            if let Some((_, real)) = resolved.iter().find(|(q, _)| *q == p) {
                return real.clone();
            }
            let real = paths::canonicalize(p).unwrap_or_else(|_| paths::normalize(p));
            resolved.push((p.to_path_buf(), real.clone()));
            real
        };
        let write_roots: Vec<PathBuf> = config
            .sandbox
            .write
            .iter()
            .map(|e| canon(&e.path))
            .collect();
        let mut read_roots: Vec<PathBuf> =
            config.sandbox.read.iter().map(|e| canon(&e.path)).collect();
        for w in &write_roots {
            if !read_roots.contains(w) {
                read_roots.push(w.clone());
            }
        }
        let state_real = config
            .state_dir
            .as_deref()
            .map(|s| paths::resolve(Path::new("/"), s));
        Policy {
            config,
            read_roots,
            write_roots,
            state_real,
            state_scope: None,
        }
    }

    /// Names the owner directory (`spill/<scope>/…`, `jobs/<scope>/…` of the
    /// state dir) whose files this session's commands may read: a server
    /// session's own output. `None` (the default): none of them, so a path to
    /// another session's output is refused, however it was learned.
    pub fn set_state_scope(&mut self, scope: Option<String>) {
        self.state_scope = scope;
    }

    /// The merged config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Adds a directory commands may read and write (the session's private temp dir).
    pub fn add_write_root(&mut self, dir: &Path) {
        let p = paths::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.read_roots.push(p.clone());
        self.write_roots.push(p);
    }

    /// [`Policy::add_write_root`] for a path the caller knows is canonical
    /// (a directory it just made under a canonical parent): no resolution.
    pub fn add_canonical_write_root(&mut self, dir: &Path) {
        self.read_roots.push(dir.to_path_buf());
        self.write_roots.push(dir.to_path_buf());
    }

    /// The read roots (write roots included), canonical.
    pub fn read_roots(&self) -> &[PathBuf] {
        &self.read_roots
    }

    /// The write roots, canonical.
    pub fn write_roots(&self) -> &[PathBuf] {
        &self.write_roots
    }

    /// Finds an external program: a name with a `/` relative to `cwd`, otherwise
    /// on the trusted PATH from the config (never the script's `$PATH`).
    pub fn resolve_program(&self, name: &str, cwd: &Path) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let executable = |p: &Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if name.contains('/') {
            let p = paths::normalize(&cwd.join(name));
            return executable(&p).then_some(p);
        }
        if name.is_empty() {
            return None;
        }
        self.config
            .sandbox
            .path
            .iter()
            .map(|d| d.path.join(name))
            .find(|p| executable(p))
    }

    /// May `path` (relative to `cwd`) be read?
    pub fn check_read(&self, cwd: &Path, path: &Path) -> Result<(), Refusal> {
        self.check_read_resolved(cwd, path).map(|_| ())
    }

    /// [`Policy::check_read`], also returning the canonical path (every symlink
    /// followed, as [`paths::canonicalize`] gives it) when the check resolved an
    /// existing path; `None` for a device or a path that does not exist.
    pub fn check_read_resolved(&self, cwd: &Path, path: &Path) -> Result<Option<PathBuf>, Refusal> {
        let lexical = paths::normalize(&cwd.join(path));
        if paths::is_device(&lexical, false) {
            return Ok(None);
        }
        let (real, exists) = paths::resolve_known(cwd, path);
        if let Some(p) = paths::process_path_known(cwd, path, exists.then_some(real.as_path())) {
            return crate::own::process_path_verdict(path, p).map(|()| None);
        }
        if paths::is_device(&real, false) {
            return Ok(None);
        }
        if let Some(r) = crate::own::state_read_refusal(
            self.state_real.as_deref(),
            self.state_scope.as_deref(),
            path,
            &real,
        ) {
            return Err(r);
        }
        if self.read_roots.iter().any(|r| real.starts_with(r)) {
            return Ok(exists.then_some(real));
        }
        Err(self.path_refusal(path, &real, "sandbox.read", "reading", &self.read_roots))
    }

    /// May `path` (relative to `cwd`) be created, changed or removed?
    pub fn check_write(&self, cwd: &Path, path: &Path) -> Result<(), Refusal> {
        let lexical = paths::normalize(&cwd.join(path));
        if paths::is_device(&lexical, true) {
            return Ok(());
        }
        if let Some(p) = paths::process_path(cwd, path) {
            return crate::own::process_path_verdict(path, p);
        }
        let real = paths::resolve(cwd, path);
        if paths::is_device(&real, true) {
            return Ok(());
        }
        let state_real = self.state_real.as_deref().map(|s| (s, &real));
        for p in [&lexical, &real] {
            if let Some(why) = paths::protected_reason(
                p,
                self.config.home.as_deref(),
                self.config.state_dir.as_deref(),
            )
            .or_else(|| {
                // The state dir by its resolved path too (a symlinked HOME).
                state_real
                    .filter(|(s, real)| real.starts_with(s))
                    .map(|_| crate::own::STATE_WHY)
            }) {
                let mut r = Refusal::new(
                    ErrorCode::PathViolation,
                    format!("{} is protected: {why}", path.display()),
                )
                .rule("paths.protected")
                .suggest("leave this file alone; if it must change, ask the human to edit it");
                r.details.path = Some(p.display().to_string());
                return Err(r);
            }
        }
        if !self.write_roots.iter().any(|r| real.starts_with(r)) {
            return Err(self.path_refusal(
                path,
                &real,
                "sandbox.write",
                "writing",
                &self.write_roots,
            ));
        }
        // A second name (hard link) of a protected file writes that file.
        if let Ok(m) = std::fs::symlink_metadata(&real) {
            use std::os::unix::fs::MetadataExt;
            if m.is_file() && m.nlink() > 1 {
                self.check_linked(path, m.dev(), m.ino())?;
            }
        }
        Ok(())
    }

    /// Refuses a write to the file `(dev, ino)` (reached as `path`, with more
    /// than one name) when it is a protected file's inode
    /// ([`crate::protected::linked_reason`]). Callers holding the opened file
    /// ask this with its `fstat`, so the decision is on what was opened.
    pub fn check_linked(&self, path: &Path, dev: u64, ino: u64) -> Result<(), Refusal> {
        let Some(why) = crate::protected::linked_reason(
            dev,
            ino,
            self.config.home.as_deref(),
            self.config.state_dir.as_deref(),
            &self.write_roots,
        ) else {
            return Ok(());
        };
        let mut r = Refusal::new(
            ErrorCode::PathViolation,
            format!("{} is protected: {why}", path.display()),
        )
        .rule("paths.protected")
        .suggest("write a copy instead (cp, then edit the copy); protected files are the human's to change");
        r.details.path = Some(path.display().to_string());
        Err(r)
    }

    /// May `path` be removed or moved away? Like a write, and never a root itself
    /// (or a directory holding one).
    pub fn check_remove(&self, cwd: &Path, path: &Path) -> Result<(), Refusal> {
        self.check_write(cwd, path)?;
        let real = paths::resolve(cwd, path);
        if self.write_roots.iter().any(|r| r.starts_with(&real)) {
            let mut r = Refusal::new(
                ErrorCode::PathViolation,
                format!(
                    "{} is a write root itself; it cannot be removed or moved",
                    path.display()
                ),
            )
            .rule("paths.root")
            .suggest("remove what is inside it instead (e.g. rm -r dir/*)");
            r.details.path = Some(real.display().to_string());
            return Err(r);
        }
        Ok(())
    }

    fn path_refusal(
        &self,
        path: &Path,
        real: &Path,
        rule: &str,
        what: &str,
        roots: &[PathBuf],
    ) -> Refusal {
        let shown = if real != path {
            format!("{} (resolves to {})", path.display(), real.display())
        } else {
            path.display().to_string()
        };
        let mut r = Refusal::new(
            ErrorCode::PathViolation,
            format!("{what} {shown} is outside the {} roots", if rule == "sandbox.read" { "read" } else { "write" }),
        )
        .rule(rule)
        .suggest({
            let in_tmp = real.starts_with("/tmp") || real.starts_with("/var/tmp");
            let widen = format!(
                "use paths inside {}; to widen access the human adds the directory to [sandbox] {} in safesh.toml",
                roots.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
                if rule == "sandbox.read" { "read" } else { "write" }
            );
            // A new scratch file belongs in the session's temp dir; an existing
            // file under /tmp is someone's data, reached only by widening.
            if in_tmp && real.symlink_metadata().is_err() {
                "use \"$TMPDIR\" (a private temp dir for this session, also where mktemp puts files) instead of /tmp".to_string()
            } else if in_tmp {
                format!("{widen} (for scratch files use \"$TMPDIR\")")
            } else {
                widen
            }
        });
        r.details.path = Some(real.display().to_string());
        r.details.allowed = roots.iter().map(|p| p.display().to_string()).collect();
        r
    }

    /// Decides one command.
    pub fn decide(&self, req: &Request<'_>, resolver: &dyn Resolver) -> Decision {
        self.decide_at(req, resolver, 0)
    }

    fn decide_at(&self, req: &Request<'_>, resolver: &dyn Resolver, depth: usize) -> Decision {
        let Some(name) = req.argv.first() else {
            return Decision::Allow;
        };
        let base = name.rsplit('/').next().unwrap_or(name).to_string();
        let args = &req.argv[1..];

        if matches!(req.kind, Kind::Function) {
            return Decision::Allow; // its body is decided command by command
        }
        if matches!(req.kind, Kind::External(_) | Kind::NotFound)
            && let Some(r) = self.blocked(&base, &req.kind)
        {
            return Decision::Refuse(r);
        }
        if !req.force
            && let Some(r) = self.nudge(&base, args, &req.kind)
        {
            return Decision::Refuse(r);
        }
        let rules = self.rules_for_program(name, &base, &req.kind);
        match &req.kind {
            Kind::NotFound => return Decision::NotFound,
            Kind::Function => return Decision::Allow,
            Kind::Builtin => {}
            Kind::Utility => {
                if let Some(r) = self.apply_rules(&base, args, &rules, false) {
                    return Decision::Refuse(r);
                }
                if let Some(r) = resolver.check_utility(req.argv) {
                    return Decision::Refuse(r);
                }
                if let Some(r) = self.utility_paths(req) {
                    return Decision::Refuse(r);
                }
            }
            Kind::External(path) => {
                if rules.is_empty() || !rules.iter().any(|r| r.allow.is_some()) {
                    return Decision::Refuse(self.not_whitelisted(&base, path, None));
                }
                if let Some(r) = self.apply_rules(&base, args, &rules, true) {
                    return Decision::Refuse(r);
                }
                if base == "git" {
                    let parsed = flags::parse_for("git", args, &[]);
                    let sub = subcommand("git", args, &[]);
                    if let Some((flag, why)) = crate::git::check(&parsed, sub.as_deref()) {
                        let mut r = Refusal::new(ErrorCode::FlagNotAllowed, format!("git: {why}"))
                            .rule("builtin.git")
                            .command("git")
                            .suggest("run git without it; git may not be configured to run other programs");
                        r.details.flag = Some(flag);
                        return Decision::Refuse(r);
                    }
                }
                if let Some(r) = self.external_paths(req) {
                    return Decision::Refuse(r);
                }
            }
        }
        // Wrappers: the inner command is decided as if it were run directly.
        if matches!(req.kind, Kind::Builtin | Kind::Utility)
            && wrappers::WRAPPERS.contains(&base.as_str())
        {
            if depth >= MAX_WRAPPER_DEPTH {
                return Decision::Refuse(
                    Refusal::new(ErrorCode::Blocked, "wrappers nest too deep")
                        .rule("wrappers.depth")
                        .suggest("run the inner command directly"),
                );
            }
            for inner in wrappers::inner(req.argv) {
                match inner {
                    Inner::Argv(argv) => {
                        let Some(first) = argv.first() else { continue };
                        let kind = resolver.kind(first);
                        let sub = Request {
                            argv: &argv,
                            cwd: req.cwd,
                            kind,
                            force: req.force,
                            cwd_known: req.cwd_known,
                        };
                        if let Decision::Refuse(r) = self.decide_at(&sub, resolver, depth + 1) {
                            // xargs appends its input to the command: what depends on
                            // the whole argv (subcommand, required flags) is decided
                            // when xargs runs it; the rest holds now.
                            let needs_full_argv = r.details.rule.as_deref().is_some_and(|rule| {
                                rule.ends_with(".allow") || rule.ends_with(".require_flags")
                            });
                            if !(base == "xargs" && needs_full_argv) {
                                return Decision::Refuse(r);
                            }
                        }
                    }
                    Inner::Script(text) => {
                        if let Some(r) = resolver.check_script(&text) {
                            return Decision::Refuse(r);
                        }
                    }
                }
            }
        }
        Decision::Allow
    }

    fn blocked(&self, base: &str, kind: &Kind) -> Option<Refusal> {
        let mut names = vec![base.to_string()];
        let mut real = None;
        if let Kind::External(p) = kind
            && let Ok(c) = paths::canonicalize(p)
        {
            if let Some(b) = c.file_name().and_then(|b| b.to_str()) {
                names.push(b.to_string());
            }
            real = Some(c);
        }
        let is_self = real.is_some() && real.as_deref() == self_exe();
        let why = if is_self {
            Some(blocklist::Blocked::Safesh)
        } else {
            names.iter().find_map(|n| blocklist::check(n))
        }?;
        Some(
            Refusal::new(
                ErrorCode::Blocked,
                format!("`{base}` is blocked: {}", why.reason()),
            )
            .rule(why.rule())
            .command(base)
            .suggest(why.suggestion(base)),
        )
    }

    fn nudge(&self, base: &str, args: &[String], kind: &Kind) -> Option<Refusal> {
        let make = |message: &str, suggest: &str, rule: String| {
            Refusal::new(ErrorCode::Nudge, format!("`{base}`: {message}"))
                .rule(rule)
                .command(base)
                .suggest(format!("{suggest} (force overrides this advice)"))
        };
        for n in &self.config.nudges {
            if n.commands.iter().any(|c| c == base) {
                return Some(make(
                    &n.message,
                    &n.suggest,
                    format!("nudge ({})", n.origin),
                ));
            }
        }
        if matches!(kind, Kind::Function | Kind::Builtin) {
            return None;
        }
        for n in nudge::BUILTIN {
            if n.commands.contains(&base) {
                return Some(make(n.message, n.suggest, "nudge.builtin".into()));
            }
        }
        if base == "sleep"
            && let Some(secs) = nudge::sleep_seconds(args)
            && secs > nudge::LONG_SLEEP_SECS
        {
            return Some(make(
                &format!("sleeping {secs} s holds the whole request"),
                "start the wait as a background job (job_start) and poll it, or sleep in short steps while checking for the condition",
                "nudge.long-sleep".into(),
            ));
        }
        if base == "git" {
            let sub = subcommand("git", args, &[]);
            let parsed = flags::parse_for("git", args, &[]);
            let has = |names: &[&str]| {
                parsed
                    .flags
                    .iter()
                    .any(|f| names.contains(&f.name.as_str()))
            };
            match sub.as_deref() {
                Some("commit")
                    if !has(&[
                        "-m",
                        "--message",
                        "-F",
                        "--file",
                        "-C",
                        "--reuse-message",
                        "--no-edit",
                        "--fixup",
                        "--squash",
                    ]) =>
                {
                    return Some(make(
                        "git commit without a message opens an editor",
                        "pass the message: git commit -m 'message'",
                        "nudge.git-editor".into(),
                    ));
                }
                Some("rebase") if has(&["-i", "--interactive"]) => {
                    return Some(make(
                        "interactive rebase opens an editor",
                        "use non-interactive git commands (git rebase BRANCH, git commit --fixup)",
                        "nudge.git-editor".into(),
                    ));
                }
                Some("add" | "checkout" | "reset" | "restore" | "stash")
                    if has(&["-p", "--patch", "-i", "--interactive"]) =>
                {
                    return Some(make(
                        "interactive staging waits for keyboard input",
                        "name the files to add instead",
                        "nudge.git-interactive".into(),
                    ));
                }
                _ => {}
            }
        }
        None
    }

    /// The rules that apply: bare-name rules (for utilities, and for externals found
    /// on the trusted PATH), plus path and glob rules matching the program's path.
    pub(crate) fn rules_for_program(
        &self,
        name: &str,
        base: &str,
        kind: &Kind,
    ) -> Vec<&CommandRule> {
        let mut out = Vec::new();
        match kind {
            Kind::Utility => out.extend(self.config.rule_for_name(base)),
            Kind::External(path) => {
                if !name.contains('/') {
                    out.extend(self.config.rule_for_name(base));
                }
                out.extend(self.config.rules_for_path(path));
                if let Ok(c) = paths::canonicalize(path)
                    && &c != path
                {
                    for r in self.config.rules_for_path(&c) {
                        if !out.iter().any(|o| std::ptr::eq(*o, r)) {
                            out.push(r);
                        }
                    }
                }
            }
            _ => {}
        }
        out
    }

    fn not_whitelisted(&self, base: &str, path: &Path, denied_by: Option<&CommandRule>) -> Refusal {
        let allowed: Vec<String> = self
            .config
            .commands
            .iter()
            .filter(|r| matches!(r.allow, Some(Allow::All | Allow::Subcommands(_))))
            .map(|r| r.key.clone())
            .collect();
        let message = match denied_by {
            Some(r) => format!("`{base}` is denied by [commands.{}]", r.key),
            None => format!("`{base}` ({}) is not an allowed program", path.display()),
        };
        let mut r = Refusal::new(ErrorCode::CommandNotWhitelisted, message)
            .rule(denied_by.map_or("commands".to_string(), |d| format!("commands.{}", d.key)))
            .command(base)
            .suggest(if allowed.is_empty() {
                "use safesh's in-process utilities (cat grep sed awk jq find sort …); external programs must be allowed by the human in safesh.toml ([commands.NAME] allow = true)".to_string()
            } else {
                format!(
                    "use an allowed program ({}) or the in-process utilities; other programs must be allowed by the human in safesh.toml",
                    allowed.join(", ")
                )
            });
        r.details.path = Some(path.display().to_string());
        r.details.allowed = allowed;
        r
    }

    /// Allow lists, subcommands, denied and required flags, argument patterns.
    fn apply_rules(
        &self,
        base: &str,
        args: &[String],
        rules: &[&CommandRule],
        external: bool,
    ) -> Option<Refusal> {
        if rules.is_empty() {
            return None;
        }
        let value_flags: Vec<String> = rules
            .iter()
            .flat_map(|r| r.value_flags.iter().cloned())
            .collect();
        let knowledge = flags::knowledge(base);
        let sub = subcommand(base, args, &value_flags);
        // allow: a deny anywhere wins; otherwise any rule allowing this subcommand.
        if let Some(d) = rules.iter().find(|r| r.allow == Some(Allow::Deny)) {
            return Some(self.not_whitelisted(base, Path::new(base), Some(d)));
        }
        let allows: Vec<&Allow> = rules.iter().filter_map(|r| r.allow.as_ref()).collect();
        if external && !allows.is_empty() && !allows.iter().any(|a| matches!(a, Allow::All)) {
            let list: Vec<String> = allows
                .iter()
                .filter_map(|a| match a {
                    Allow::Subcommands(s) => Some(s.clone()),
                    _ => None,
                })
                .flatten()
                .collect();
            // `git --version`, `cargo -V`, `npm --help`: no subcommand, only a
            // question about the program itself.
            let info_only = sub.is_none()
                && !args.is_empty()
                && args
                    .iter()
                    .all(|a| matches!(a.as_str(), "--version" | "-V" | "--help" | "-h"));
            if !info_only && !sub.as_ref().is_some_and(|s| list.contains(s)) {
                let shown = sub.clone().unwrap_or_else(|| "(no subcommand)".into());
                let mut r = Refusal::new(
                    ErrorCode::CommandNotWhitelisted,
                    format!(
                        "`{base} {shown}` is not allowed; allowed: {base} {}",
                        list.join(", ")
                    ),
                )
                .rule(format!("commands.{base}.allow"))
                .command(format!("{base} {shown}"))
                .suggest(format!(
                    "use one of the allowed subcommands: {}",
                    list.join(", ")
                ));
                r.details.allowed = list;
                return Some(r);
            }
        }
        // Rules of the subcommand refine the command's.
        let mut all: Vec<(&CommandRule, String)> = Vec::new();
        for r in rules {
            all.push((r, format!("commands.{}", r.key)));
            if let Some(s) = &sub
                && let Some(sr) = r.subcommands.get(s)
            {
                if sr.allow == Some(Allow::Deny) {
                    return Some(
                        Refusal::new(
                            ErrorCode::CommandNotWhitelisted,
                            format!("`{base} {s}` is denied by [commands.{}.{s}]", r.key),
                        )
                        .rule(format!("commands.{}.{s}", r.key))
                        .command(format!("{base} {s}"))
                        .suggest("use another subcommand"),
                    );
                }
                all.push((sr, format!("commands.{}.{s}", r.key)));
            }
        }
        let parsed = flags::parse(
            args,
            &|f: &str| knowledge.value_flags.contains(&f) || value_flags.iter().any(|v| v == f),
            false,
        );
        for (rule, rule_name) in &all {
            for denied in &rule.deny_flags {
                // Single-dash long options (`-exec`, `-toolexec`) are matched whole.
                let single_dash_long = denied.len() > 2 && !denied.starts_with("--");
                let raw_hit = single_dash_long
                    && args.iter().take_while(|a| *a != "--").any(|a| {
                        a == denied
                            || a.strip_prefix(denied.as_str())
                                .is_some_and(|r| r.starts_with('='))
                    });
                let hit = if raw_hit {
                    Some(flags::FlagUse {
                        name: denied.clone(),
                        value: None,
                        index: 0,
                    })
                } else {
                    parsed
                        .flags
                        .iter()
                        .find(|f| flags::matches_denied(&f.name, denied, &knowledge))
                        .cloned()
                };
                if let Some(f) = hit {
                    let mut r = Refusal::new(
                        ErrorCode::FlagNotAllowed,
                        format!(
                            "`{base}`: flag {} is not allowed (denied: {denied})",
                            f.name
                        ),
                    )
                    .rule(format!("{rule_name}.deny_flags"))
                    .command(base)
                    .suggest(format!("run {base} without {}", f.name));
                    r.details.flag = Some(f.name.clone());
                    r.details.allowed =
                        vec![format!("any flag except {}", rule.deny_flags.join(", "))];
                    return Some(r);
                }
            }
            for required in &rule.require_flags {
                if !parsed
                    .flags
                    .iter()
                    .any(|f| flags::matches_required(&f.name, required, &knowledge))
                {
                    let mut r = Refusal::new(
                        ErrorCode::FlagNotAllowed,
                        format!("`{base}` must be run with {required}"),
                    )
                    .rule(format!("{rule_name}.require_flags"))
                    .command(base)
                    .suggest(format!("add {required}"));
                    r.details.flag = Some(required.clone());
                    r.details.allowed = rule.require_flags.clone();
                    return Some(r);
                }
            }
            for pat in &rule.arg_patterns {
                let values: Vec<&str> = if pat.flag == "*" {
                    parsed.operands.iter().map(|(_, o)| o.as_str()).collect()
                } else {
                    parsed
                        .flags
                        .iter()
                        .filter(|f| {
                            f.name == pat.flag
                                || flags::matches_required(&f.name, &pat.flag, &knowledge)
                        })
                        .map(|f| f.value.as_deref().unwrap_or(""))
                        .collect()
                };
                if let Some(bad) = values.iter().find(|v| !pat.regex.is_match(v)) {
                    let mut r = Refusal::new(
                        ErrorCode::FlagNotAllowed,
                        format!(
                            "`{base}`: argument `{bad}` does not match {} ({})",
                            pat.written, pat.flag
                        ),
                    )
                    .rule(format!("{rule_name}.arg_patterns"))
                    .command(base)
                    .suggest(format!("use a value matching {}", pat.written));
                    r.details.flag = Some(pat.flag.clone());
                    r.details.allowed = vec![pat.written.clone()];
                    return Some(r);
                }
            }
        }
        None
    }

    fn utility_paths(&self, req: &Request<'_>) -> Option<Refusal> {
        let base = req.argv.first()?.rsplit('/').next()?.to_string();
        let mut argv = req.argv.to_vec();
        argv[0] = base.clone();
        for (p, access) in operands::paths(&argv) {
            if !req.cwd_known && !p.starts_with('/') && !p.starts_with('~') {
                continue;
            }
            let path = expand_tilde(&p, self.config.home.as_deref());
            let r = match access {
                Access::Read => self.check_read(req.cwd, &path),
                Access::Write
                    if matches!(base.as_str(), "rm" | "rmdir" | "mv" | "unlink" | "shred") =>
                {
                    self.check_remove(req.cwd, &path)
                }
                Access::Write => self.check_write(req.cwd, &path),
            };
            if let Err(mut r) = r {
                r.details.command = Some(base.clone());
                return Some(r);
            }
        }
        None
    }

    /// Path arguments of an external program: anything that looks like a path
    /// leading elsewhere (absolute, `~`, `..`, or a symlink) must be inside the roots.
    fn external_paths(&self, req: &Request<'_>) -> Option<Refusal> {
        for a in req.argv.iter().skip(1) {
            let candidate = match a.split_once('=') {
                Some((k, v)) if k.starts_with('-') => v,
                _ => a.as_str(),
            };
            if candidate.contains("://") || candidate.is_empty() {
                continue;
            }
            let looks = candidate.starts_with('/')
                || candidate.starts_with('~')
                || Path::new(candidate)
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
                || std::fs::symlink_metadata(req.cwd.join(candidate))
                    .is_ok_and(|m| m.file_type().is_symlink());
            if !looks && !candidate.contains('/') && candidate != "safesh.toml" {
                continue;
            }
            // A path argument naming a protected file (`--output=.git/hooks/x`)
            // is refused whatever the program would do with it.
            if candidate.contains('/') || candidate == "safesh.toml" {
                let path = expand_tilde(candidate, self.config.home.as_deref());
                let real = paths::resolve(req.cwd, &path);
                // An existing safesh.toml of a root is bound read-only in the
                // sandbox (`Policy::profile`): naming it is a read
                // (`git diff --stat safesh.toml`), and the kernel refuses a write.
                let kept_read_only = real.file_name().is_some_and(|n| n == "safesh.toml")
                    && real.symlink_metadata().is_ok_and(|m| m.is_file())
                    && real.parent().is_some_and(|dir| {
                        dir == req.cwd || self.write_roots().iter().any(|w| w == dir)
                    });
                if kept_read_only {
                    continue;
                }
                if let Some(why) = paths::protected_reason(
                    &real,
                    self.config.home.as_deref(),
                    self.config.state_dir.as_deref(),
                )
                .filter(|_| !named_for_reading(&real))
                {
                    let mut r = Refusal::new(
                        ErrorCode::PathViolation,
                        format!("{candidate} is protected: {why}"),
                    )
                    .rule("paths.protected")
                    .suggest("leave this file alone; if it must change, ask the human to edit it");
                    r.details.path = Some(real.display().to_string());
                    r.details.command = req.argv.first().cloned();
                    return Some(r);
                }
            }
            if !req.cwd_known && !candidate.starts_with('/') && !candidate.starts_with('~') {
                continue;
            }
            let path = expand_tilde(candidate, self.config.home.as_deref());
            if let Err(mut r) = self.check_read(req.cwd, &path) {
                r.details.command = req.argv.first().cloned();
                return Some(r);
            }
        }
        None
    }
}

/// A protected path an external program may be given by name: an existing
/// repository (`git --git-dir=../other/.git log`) and the git worktree files
/// (`git diff docs/.gitattributes`). The sandbox keeps them (read-only binds
/// where they exist, the after-run walk where they do not); the argument alone
/// says nothing about a write.
fn named_for_reading(real: &Path) -> bool {
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("");
    (name == ".git" && real.is_dir()) || crate::protected::GIT_WORKTREE_FILES.contains(&name)
}

/// `~` and `~/x` with the configured home.
fn expand_tilde(p: &str, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(&rest[1..]),
        _ => PathBuf::from(p),
    }
}

/// The subcommand: the first operand after the program's global options.
pub fn subcommand(base: &str, args: &[String], value_flags: &[String]) -> Option<String> {
    let k: Knowledge = flags::knowledge(base);
    let parsed = flags::parse(
        args,
        &|f: &str| k.value_flags.contains(&f) || value_flags.iter().any(|v| v == f),
        true,
    );
    parsed.operands.first().map(|(_, s)| s.clone())
}

impl Config {
    /// Names of the external programs the config allows (for messages).
    pub fn allowed_programs(&self) -> Vec<String> {
        self.commands
            .iter()
            .filter(|r| matches!(r.allow, Some(Allow::All | Allow::Subcommands(_))))
            .map(|r| r.key.clone())
            .collect()
    }
}
