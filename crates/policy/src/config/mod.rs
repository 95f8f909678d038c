//! The merged configuration: built-in defaults → `~/.config/safesh/config.toml` →
//! the project's `safesh.toml` (nearest walking up from the working directory, only
//! once trusted) → `--config FILE`. Allow- and deny-lists merge by union; a deny
//! always beats an allow. Every rule remembers the file (and line) it came from.
//!
//! `load` reads and merges the files; `schema` is the file format; `trust`
//! records which project configs the human has accepted; `show` renders the
//! merged result with provenance.

mod load;
mod platforms;
mod schema;
mod show;
mod tasks;
pub mod trust;
mod verify;

pub use load::{ConfigError, LoadOptions, find_project_file, load, state_dir, user_config_file};
pub use platforms::url_host;
pub use show::render;
pub use verify::{LlmSettings, VerifySettings};

use regex::Regex;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A glob checked at load time but compiled on first use: compiling a glob builds
/// a regex, and most runs never consult most globs (start-up stays fast).
/// A pattern made only of name characters, `*` and `?` (environment variable globs
/// such as `*_TOKEN`) is matched directly, without building a regex.
///
/// The built-in patterns are not even parsed until used
/// ([`LazyMatcher::deferred`]): parsing the two dozen built-in secret and
/// environment globs was a tenth of `safesh -c true`.
#[derive(Clone, Debug)]
pub struct LazyMatcher {
    pattern: String,
    literal_separator: bool,
    /// The parsed glob (`None`: it does not parse; only a deferred pattern can).
    glob: std::sync::OnceLock<Option<globset::Glob>>,
    simple: Option<Vec<u8>>,
    literals: Option<Literals>,
    compiled: std::sync::OnceLock<Option<globset::GlobMatcher>>,
}

/// Literal text any match must contain: a path that does not start with `prefix`,
/// end with `suffix` and contain every middle piece cannot match, and is rejected
/// without compiling the glob (most paths a run reads match no secret glob).
#[derive(Clone, Debug)]
struct Literals {
    prefix: Vec<u8>,
    middle: Vec<Vec<u8>>,
    /// Searchers for `middle`, built once on first need: building one costs
    /// more than the search, and the first build asks the CPU for its
    /// features (`cpuid`, a VM exit each under a hypervisor): a start that
    /// matches nothing past a prefix or suffix should not pay for it.
    finders: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>>,
    suffix: Vec<u8>,
}

impl Literals {
    /// For patterns made of literals, `*` and `?` only (classes, alternations and
    /// escapes get no prefilter).
    fn of(pattern: &str) -> Option<Literals> {
        if pattern.contains(['[', '{', '\\']) {
            return None;
        }
        let pieces: Vec<&str> = pattern.split(['*', '?']).collect();
        let (first, rest) = pieces.split_first()?;
        let (last, middle) = match rest.split_last() {
            Some((l, m)) => (*l, m),
            None => return None, // no wildcard at all: compile (rare)
        };
        // `**/` also matches no directory at all (`**/.env` matches `.env`): the
        // slashes next to a wildcard are not required.
        Some(Literals {
            prefix: first.trim_end_matches('/').as_bytes().to_vec(),
            middle: middle
                .iter()
                .map(|m| m.trim_matches('/'))
                .filter(|m| !m.is_empty())
                .map(|m| m.as_bytes().to_vec())
                .collect(),
            finders: std::sync::OnceLock::new(),
            suffix: last.trim_start_matches('/').as_bytes().to_vec(),
        })
    }

    fn may_match(&self, text: &[u8]) -> bool {
        text.starts_with(&self.prefix)
            && text.ends_with(&self.suffix)
            && (self.middle.is_empty()
                || self
                    .finders
                    .get_or_init(|| {
                        self.middle
                            .iter()
                            .map(|m| memchr::memmem::Finder::new(m).into_owned())
                            .collect()
                    })
                    .iter()
                    .all(|m| m.find(text).is_some()))
    }
}

impl LazyMatcher {
    /// Wraps a parsed glob.
    pub fn new(glob: globset::Glob) -> Self {
        let m = Self::deferred(glob.glob(), false);
        let _ = m.glob.set(Some(glob));
        m
    }

    /// A pattern safesh itself wrote (the built-in lists), parsed on first use
    /// (`*` stops at `/` with `literal_separator`, as in path globs). One that
    /// does not parse matches nothing; the built-in ones are tested to parse.
    pub fn deferred(pattern: &str, literal_separator: bool) -> Self {
        let simple = pattern
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*' | b'?'))
            .then(|| pattern.as_bytes().to_vec());
        LazyMatcher {
            pattern: pattern.to_string(),
            literal_separator,
            glob: std::sync::OnceLock::new(),
            simple,
            literals: Literals::of(pattern),
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// Whether `path` matches.
    pub fn is_match<P: AsRef<std::path::Path>>(&self, path: P) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let text = path.as_ref().as_os_str().as_bytes();
        // The literal prefix/suffix first: `*_KEY` rejects `PATH` in one compare.
        if let Some(l) = &self.literals
            && !l.may_match(text)
        {
            return false;
        }
        if let Some(p) = &self.simple {
            return wildcard(p, text);
        }
        self.compiled
            .get_or_init(|| self.glob().map(globset::Glob::compile_matcher))
            .as_ref()
            .is_some_and(|m| m.is_match(path))
    }

    /// The parsed glob (`None`: a deferred pattern that does not parse).
    pub fn glob(&self) -> Option<&globset::Glob> {
        self.glob
            .get_or_init(|| {
                globset::GlobBuilder::new(&self.pattern)
                    .literal_separator(self.literal_separator)
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// The pattern as written to the glob parser.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

/// `*` (any run) and `?` (one byte) against `text`, iteratively (no backtracking
/// blow-up: the last `*` is the only restart point).
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod wildcard_tests {
    #[test]
    fn wildcards_match_like_globs() {
        let m = |p: &str, t: &str| super::wildcard(p.as_bytes(), t.as_bytes());
        assert!(m("*_TOKEN", "GITHUB_TOKEN"));
        assert!(!m("*_TOKEN", "GITHUB_TOKENS"));
        assert!(m("AWS_*", "AWS_SECRET_ACCESS_KEY"));
        assert!(m("HOME", "HOME") && !m("HOME", "HOMEX"));
        assert!(m("a*b*c", "axxbyyc") && !m("a*b*c", "axxbyy"));
        assert!(m("?", "x") && !m("?", ""));
        assert!(m("*", ""));
    }
}

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file that declared it; `None` for built-in defaults.
    pub file: Option<PathBuf>,
    /// 1-based line in that file (0 for built-in).
    pub line: usize,
}

impl Origin {
    /// A built-in default.
    pub fn builtin() -> Self {
        Origin {
            file: None,
            line: 0,
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            None => f.write_str("built-in"),
            Some(p) => write!(f, "{}:{}", p.display(), self.line),
        }
    }
}

/// An absolute path (resolved against the declaring file, `~` expanded, symlinks
/// resolved where it exists) with its origin.
#[derive(Clone, Debug)]
pub struct PathEntry {
    /// The absolute path.
    pub path: PathBuf,
    /// As written in the config.
    pub written: String,
    /// Where it was declared.
    pub origin: Origin,
}

/// A path glob (`~/.rustup/toolchains/**`), made absolute against the declaring file.
#[derive(Clone, Debug)]
pub struct PathGlob {
    /// As written.
    pub written: String,
    /// The absolute pattern it was compiled from.
    pub pattern: String,
    /// Compiled matcher over absolute paths.
    pub matcher: LazyMatcher,
    /// Where it was declared.
    pub origin: Origin,
}

/// A name pattern (`*_TOKEN`, `AWS_*`) for environment variables.
#[derive(Clone, Debug)]
pub struct NameGlob {
    /// As written.
    pub written: String,
    /// Compiled matcher.
    pub matcher: LazyMatcher,
    /// Where it was declared.
    pub origin: Origin,
}

/// Network access for external programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    /// No network at all.
    Off,
    /// Unrestricted.
    On,
    /// Only these hosts (through the proxy).
    Hosts(Vec<String>),
}

/// `[sandbox]`.
#[derive(Clone, Debug)]
pub struct Sandbox {
    /// Read roots.
    pub read: Vec<PathEntry>,
    /// Write roots (also readable).
    pub write: Vec<PathEntry>,
    /// Network mode.
    pub network: Network,
    /// The trusted PATH for external programs, in order.
    pub path: Vec<PathEntry>,
    /// Accept a weaker sandbox when Landlock is unavailable (`allow_weaker = true`).
    pub allow_weaker: bool,
}

/// `[limits]`: every key optional; unset keys keep the built-in value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Per external command, ms.
    pub timeout_ms: Option<u64>,
    /// Per exec request, ms.
    pub script_timeout_ms: Option<u64>,
    /// Caps any timeout a request asks for, ms.
    pub max_timeout_ms: Option<u64>,
    /// Model-facing output cap in bytes.
    pub output_bytes: Option<u64>,
    /// Memory per external command, MiB.
    pub memory_mb: Option<u64>,
    /// Processes per external command tree.
    pub processes: Option<u64>,
    /// Largest file an external may write, MiB.
    pub file_size_mb: Option<u64>,
    /// Interpreter: loop iterations.
    pub loop_iterations: Option<u64>,
    /// Interpreter: function call depth.
    pub call_depth: Option<u64>,
    /// Interpreter: simple commands per request.
    pub commands: Option<u64>,
    /// Interpreter: `$(…)` nesting.
    pub substitution_depth: Option<u64>,
    /// Interpreter: words from one brace expansion.
    pub brace_expansion: Option<u64>,
    /// Interpreter: bytes in one string.
    pub string_bytes: Option<u64>,
    /// How long a request that needs an approval, with no channel that asks the
    /// human, waits for `safesh approve ID` before `APPROVAL_REQUIRED`, ms
    /// (default 0: it returns at once; the id stays valid for 5 minutes).
    pub approval_wait_ms: Option<u64>,
    /// Interpreter: bytes in one script (refused before parsing past it; 0 = none).
    pub script_bytes: Option<u64>,
}

/// `[env]`.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Variables external programs may receive.
    pub allow: Vec<NameGlob>,
    /// Variables never passed on, even if allowed.
    pub mask: Vec<NameGlob>,
}

/// How a `[commands.X]` rule names its program.
#[derive(Clone, Debug)]
pub enum NameMatcher {
    /// A bare name (`git`): matches the program of that name found on the trusted
    /// PATH, and the in-process utility of that name.
    Name(String),
    /// An exact absolute path (`"/usr/bin/true"`, `"./bin/tool"` made absolute).
    Path(PathBuf),
    /// A glob over absolute paths (`"./target/debug/*"` made absolute).
    Glob(Box<PathGlob>),
}

/// `allow = true | false | ["sub", …]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allow {
    /// Every subcommand.
    All,
    /// Denied (beats every allow from any layer).
    Deny,
    /// Only these subcommands.
    Subcommands(Vec<String>),
}

/// A regex an argument must match: for a flag's value (`"--output"`), or for
/// operands (`"*"`).
#[derive(Clone, Debug)]
pub struct ArgPattern {
    /// The flag whose value is checked, or `*` for operands.
    pub flag: String,
    /// As written.
    pub written: String,
    /// Compiled, anchored as written.
    pub regex: Regex,
    /// Where it was declared.
    pub origin: Origin,
}

/// A merged `[commands.NAME]` rule (and its `[commands.NAME.SUB]` refinements).
#[derive(Clone, Debug)]
pub struct CommandRule {
    /// The key as written (`git`, `"./target/debug/*"`).
    pub key: String,
    /// What it matches.
    pub matcher: NameMatcher,
    /// Merged allow: `Deny` if any layer denies; subcommand lists union; `All` if
    /// any layer says `true` (and none denies). `None` when no layer set it.
    pub allow: Option<Allow>,
    /// Denied flags (union).
    pub deny_flags: Vec<String>,
    /// Required flags (union): each must be present.
    pub require_flags: Vec<String>,
    /// Options that take a separate value (`-C dir`), so their value is not
    /// mistaken for a flag or an operand (union with built-in knowledge).
    pub value_flags: Vec<String>,
    /// Argument patterns (all must hold).
    pub arg_patterns: Vec<ArgPattern>,
    /// Subcommand rules, by subcommand name.
    pub subcommands: BTreeMap<String, CommandRule>,
    /// Profile: extra readable paths for this program (sandbox issue).
    pub read: Vec<PathGlob>,
    /// Profile: extra writable paths.
    pub write: Vec<PathGlob>,
    /// Profile: programs it may start.
    pub exec: Vec<PathGlob>,
    /// Profile: network for this program (overrides `[sandbox] network`).
    pub network: Option<Network>,
    /// Every place that declared part of this rule.
    pub origins: Vec<Origin>,
}

/// `[[nudge]]`.
#[derive(Clone, Debug)]
pub struct Nudge {
    /// Command names it applies to.
    pub commands: Vec<String>,
    /// Why.
    pub message: String,
    /// What to do instead.
    pub suggest: String,
    /// Where it was declared.
    pub origin: Origin,
}

/// `[labels.NAME]`: a named label (token brokering; used by the flow issue).
#[derive(Clone, Debug, Default)]
pub struct NamedLabel {
    /// Environment variables carrying it.
    pub env: Vec<String>,
    /// File globs carrying it.
    pub files: Vec<PathGlob>,
    /// Hosts it may flow to.
    pub may_flow_to: Vec<String>,
}

/// `[labels]`.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    /// Secret file globs (a leading `!` excludes), in order.
    pub secret: Vec<(bool, PathGlob)>,
    /// Named labels.
    pub named: BTreeMap<String, NamedLabel>,
    /// `redact`: whether output the model may not see is replaced by a placeholder
    /// in model-facing results (`None`: not set, which means yes).
    pub redact: Option<bool>,
}

impl Labels {
    /// Whether model-facing results redact secret output (default: yes).
    pub fn redacts(&self) -> bool {
        self.redact.unwrap_or(true)
    }
}

/// `[[rule]]`: an exchange rule at a commit point (the flow issue reads these).
#[derive(Clone, Debug)]
pub struct ExchangeRule {
    /// Its name.
    pub name: String,
    /// `network | exec | destructive | env`.
    pub commit_point: String,
    /// Conditions, as written (key → value), validated at load: keys
    /// `confidentiality` (`secret | public | LABEL`), `integrity`
    /// (`untrusted | network | sandboxed | trusted`), `pc`
    /// (`tainted | secret | untrusted`), `host` (glob; network only), `command`
    /// (glob) and `target` (glob; destructive and env only).
    pub when: BTreeMap<String, String>,
    /// `block | request-approval | warn | allow`.
    pub verdict: String,
    /// Where it was declared.
    pub origin: Origin,
}

/// `[[approval]]`: an action the human pre-granted in config. It authorizes
/// exactly `action` (the command text, compared byte for byte) and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreApproval {
    /// The exact action text (`rm -r build`).
    pub action: String,
    /// Only at this commit point (`network | exec | destructive | env`); any when unset.
    pub commit_point: Option<String>,
    /// Not valid from this time on; forever when unset.
    pub expires: Option<std::time::SystemTime>,
    /// Where it was declared.
    pub origin: Origin,
}

/// One config file that was considered.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Its path.
    pub path: PathBuf,
    /// `user`, `project` or `command-line`.
    pub layer: &'static str,
    /// False when it was ignored (an untrusted project config).
    pub applied: bool,
}

/// The merged configuration the policy decides with.
#[derive(Clone, Debug)]
pub struct Config {
    /// Files considered, in merge order.
    pub sources: Vec<SourceFile>,
    /// Warnings for the human (an untrusted config that was ignored, …).
    pub warnings: Vec<String>,
    /// The directory `.` meant for the built-in defaults (the working directory).
    pub base_dir: PathBuf,
    /// The user's home (`~`).
    pub home: Option<PathBuf>,
    /// safesh's state directory (`$XDG_STATE_HOME/safesh`).
    pub state_dir: Option<PathBuf>,
    /// `[sandbox]`.
    pub sandbox: Sandbox,
    /// `[limits]`.
    pub limits: Limits,
    /// `[env]`.
    pub env: Env,
    /// `[commands.*]`, merged by key.
    pub commands: Vec<CommandRule>,
    /// `[[nudge]]`, configured ones first, then the built-in ones.
    pub nudges: Vec<Nudge>,
    /// `[labels]`.
    pub labels: Labels,
    /// `[[rule]]`, in order.
    pub rules: Vec<ExchangeRule>,
    /// `[[approval]]` actions pre-granted by the human.
    pub approvals: Vec<PreApproval>,
    /// `[mcp] http_token_file`.
    pub mcp_token_file: Option<PathBuf>,
    /// `[checkpoints]`.
    pub checkpoints: Checkpoints,
    /// `[tasks]`, by name; a later layer's task replaces an earlier one of the same
    /// name (an untrusted project config adds none: it is not applied at all).
    pub tasks: BTreeMap<String, safesh_tasks::Task>,
    /// `[context]`: limits of the context store.
    pub context: ContextLimits,
    /// `[history]`: the persistent history.
    pub history: HistorySettings,
    /// `[platforms.NAME]` (and a trusted `.agsh/platforms.yaml`), by name.
    pub platforms: BTreeMap<String, PlatformConfig>,
    /// `[verify]`: how assertions are checked.
    pub verify: VerifySettings,
    /// `[llm]`: the LLM endpoint of `llm_judge`.
    pub llm: LlmSettings,
    /// `[spec] approval_mode`: when a project spec's plan needs a human's approval.
    pub spec_approval_mode: ApprovalMode,
}

/// `[spec] approval_mode`: when running a project spec's plan needs a human's
/// approval (bound to the plan's hash, single use).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Every run.
    Always,
    /// Every plan: an approved plan (same hash) runs once.
    Plan,
    /// Only plans with a write, network or destructive step (the default).
    #[default]
    Destructive,
    /// No approval, for specs trusted like a config (`safesh trust FILE`).
    Never,
}

impl ApprovalMode {
    /// The names, as written in the config.
    pub const NAMES: [&'static str; 4] = ["always", "plan", "destructive", "never"];

    /// Parses a config value.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "always" => ApprovalMode::Always,
            "plan" => ApprovalMode::Plan,
            "destructive" => ApprovalMode::Destructive,
            "never" => ApprovalMode::Never,
            _ => return None,
        })
    }

    /// The config value.
    pub fn name(self) -> &'static str {
        match self {
            ApprovalMode::Always => "always",
            ApprovalMode::Plan => "plan",
            ApprovalMode::Destructive => "destructive",
            ApprovalMode::Never => "never",
        }
    }
}

/// `[platforms.NAME]`: one platform's settings. A credential is never in
/// the config, only the name of the variable holding it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlatformConfig {
    /// The platform (`github`, `http`).
    pub name: String,
    /// The API's base URL; its host is reachable by this platform's commands
    /// (unless the network is off) and is where its token may flow.
    pub base_url: Option<String>,
    /// The environment variable holding the token.
    pub token_env: Option<String>,
    /// The owner of a repository named without one.
    pub default_owner: Option<String>,
    /// Hosts added to `[sandbox] network` (`[platforms.http]`).
    pub allowed_domains: Vec<String>,
    /// Where it was declared (each layer that did).
    pub origins: Vec<Origin>,
}

/// `[checkpoints]`: what a checkpoint leaves out and how many are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// Left out of every checkpoint (`target/`: a directory of that name at any
    /// depth; `.git/objects/`: that directory from the root; `*.log`-style names
    /// are not globs, just names). A later layer's list replaces an earlier one.
    pub exclude: Vec<String>,
    /// The most MiB of regular files one checkpoint may hold.
    pub max_mb: u64,
    /// Checkpoints kept per project (oldest go first).
    pub keep: u64,
    /// Checkpoints older than this many days go (0: no age limit).
    pub max_age_days: u64,
    /// A long-lived process (the server) keeps a change journal (inotify) per
    /// root, so a save lists again only directories where something changed.
    pub journal: bool,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints {
            exclude: ["target/", "node_modules/", ".git/objects/"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            max_mb: 1024,
            keep: 50,
            max_age_days: 30,
            journal: true,
        }
    }
}

/// `[context]`: every key optional; unset keys keep the built-in value
/// (`safesh_context::Limits`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextLimits {
    /// The largest value, in bytes of its JSON text.
    pub max_value_bytes: Option<u64>,
    /// The most keys in one scope.
    pub max_keys: Option<u64>,
}

/// `[history]`: every key optional; unset keys keep the built-in value
/// (10000 entries, persisted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistorySettings {
    /// Entries kept (the oldest are dropped).
    pub max_entries: Option<u64>,
    /// Whether entries are written to the state dir at all.
    pub persist: Option<bool>,
}

impl Config {
    /// The rule for a bare command name, if any.
    pub fn rule_for_name(&self, name: &str) -> Option<&CommandRule> {
        self.commands
            .iter()
            .find(|r| matches!(&r.matcher, NameMatcher::Name(n) if n == name))
    }

    /// The rules matching an absolute program path (path and glob rules).
    pub fn rules_for_path(&self, path: &std::path::Path) -> Vec<&CommandRule> {
        self.commands
            .iter()
            .filter(|r| match &r.matcher {
                NameMatcher::Name(_) => false,
                NameMatcher::Path(p) => p == path,
                NameMatcher::Glob(g) => g.matcher.is_match(path),
            })
            .collect()
    }
}

#[cfg(test)]
mod lazy_matcher_tests {
    use super::LazyMatcher;

    fn m(p: &str) -> LazyMatcher {
        LazyMatcher::new(globset::Glob::new(p).unwrap())
    }

    #[test]
    fn the_prefilter_never_rejects_a_match() {
        for (pat, yes, no) in [
            (
                "**/.env",
                vec![".env", "/p/.env", "a/b/.env"],
                vec!["/p/src/a.rs", "/p/x.env"],
            ),
            (
                "/p/**/.env.*",
                vec!["/p/.env.local", "/p/a/.env.x"],
                vec!["/p/.env", "/q/.env.x"],
            ),
            (
                "**/*.pem",
                vec!["k.pem", "/a/b/k.pem"],
                vec!["/a/k.pem.bak"],
            ),
            (
                "/root/.ssh/**",
                vec!["/root/.ssh/id_rsa", "/root/.ssh/a/b"],
                vec!["/root/x"],
            ),
            ("/p/*/x?z", vec!["/p/a/xyz"], vec!["/p/a/xz"]),
        ] {
            let g = m(pat);
            let compiled = globset::Glob::new(pat).unwrap().compile_matcher();
            for p in yes {
                assert!(compiled.is_match(p), "{pat} should match {p} (globset)");
                assert!(g.is_match(p), "{pat} must match {p}");
            }
            for p in no {
                assert_eq!(g.is_match(p), compiled.is_match(p), "{pat} vs {p}");
            }
        }
    }
}
