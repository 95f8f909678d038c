//! The file format of `safesh.toml`: the built-in defaults, and parsing one file
//! into a [`Layer`] (validated, paths resolved, globs and regexes compiled), with
//! every problem reported as `file:line:column`.
//!
//! Parsing walks toml's spanned document tree (`toml::de::DeTable`) by hand rather
//! than deriving serde structs: that is what lets every error and every origin
//! point at the exact key or value.

use super::load::{ConfigError, LoadOptions};
use super::*;
use globset::GlobBuilder;
use std::ops::Range;
use std::path::{Component, Path};
use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

pub(crate) type Key<'i> = Spanned<DeString<'i>>;
pub(crate) type Val<'i> = Spanned<DeValue<'i>>;

/// Built-in `[env] allow`.
pub(crate) const ENV_ALLOW: &[&str] = &["HOME", "PATH", "LANG", "LC_ALL", "TERM", "USER", "TZ"];
/// Built-in `[env] mask`.
pub(crate) const ENV_MASK: &[&str] = &["*_KEY", "*_SECRET", "*_TOKEN", "*_PASSWORD", "AWS_*"];
/// Built-in `[labels] secret` (DESIGN.md).
pub(crate) const SECRET: &[&str] = &[
    ".env",
    ".env.*",
    "!.env.example",
    "**/*.pem",
    "**/*.key",
    "**/id_rsa",
    "**/id_ed25519",
    "**/id_ecdsa",
    "~/.ssh/**",
    "~/.aws/**",
];
/// Built-in trusted PATH.
pub(crate) const PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

const TOP: &str = "the top level";
const TOP_KEYS: &[&str] = &[
    "sandbox",
    "limits",
    "env",
    "commands",
    "nudge",
    "labels",
    "rule",
    "approval",
    "mcp",
    "checkpoints",
    "tasks",
    "context",
    "history",
    "platforms",
    "verify",
    "llm",
    "spec",
];
const SANDBOX_KEYS: &[&str] = &["read", "write", "path", "network", "allow_weaker"];
pub(crate) const LIMIT_KEYS: &[&str] = &[
    "timeout_ms",
    "script_timeout_ms",
    "max_timeout_ms",
    "output_bytes",
    "memory_mb",
    "processes",
    "file_size_mb",
    "loop_iterations",
    "call_depth",
    "commands",
    "substitution_depth",
    "brace_expansion",
    "string_bytes",
    "approval_wait_ms",
    "script_bytes",
];
const ENV_KEYS: &[&str] = &["allow", "mask"];
const RULE_KEYS: &[&str] = &[
    "allow",
    "deny_flags",
    "require_flags",
    "value_flags",
    "arg_patterns",
    "read",
    "write",
    "exec",
    "network",
];
const NUDGE_KEYS: &[&str] = &["commands", "message", "suggest"];
const LABELS_KEYS: &[&str] = &["secret", "redact"];
const LABEL_KEYS: &[&str] = &["env", "files", "may_flow_to"];
const XRULE_KEYS: &[&str] = &["name", "commit_point", "when", "verdict"];
const COMMIT_POINTS: &[&str] = &["network", "exec", "destructive", "env"];
const VERDICTS: &[&str] = &["block", "request-approval", "warn", "allow"];
const APPROVAL_KEYS: &[&str] = &["action", "commit_point", "expires"];
/// Keys of `[[rule]] when`, with the commit points each applies to.
const WHEN_KEYS: &[(&str, &[&str])] = &[
    ("confidentiality", COMMIT_POINTS),
    ("integrity", COMMIT_POINTS),
    ("pc", COMMIT_POINTS),
    ("host", &["network"]),
    ("command", COMMIT_POINTS),
    ("target", &["destructive", "env"]),
];
const WHEN_INTEGRITY: &[&str] = &["untrusted", "network", "sandboxed", "trusted"];
const WHEN_PC: &[&str] = &["tainted", "secret", "untrusted"];
const MCP_KEYS: &[&str] = &["http_token_file"];
const CHECKPOINT_KEYS: &[&str] = &["exclude", "max_mb", "keep", "max_age_days", "journal"];
const CONTEXT_KEYS: &[&str] = &["max_value_bytes", "max_keys"];
const HISTORY_KEYS: &[&str] = &["max_entries", "persist"];
const SPEC_KEYS: &[&str] = &["approval_mode"];

/// One config file (or the built-in defaults), parsed and validated, before merging.
#[derive(Debug, Default)]
pub(crate) struct Layer {
    pub read: Vec<PathEntry>,
    pub write: Vec<PathEntry>,
    pub path: Vec<PathEntry>,
    pub network: Option<Network>,
    pub allow_weaker: Option<bool>,
    pub limits: Limits,
    pub env: Env,
    pub commands: Vec<CommandRule>,
    pub nudges: Vec<Nudge>,
    pub labels: Labels,
    pub rules: Vec<ExchangeRule>,
    pub approvals: Vec<PreApproval>,
    pub mcp_token_file: Option<PathBuf>,
    pub checkpoint_exclude: Option<Vec<String>>,
    pub checkpoint_max_mb: Option<u64>,
    pub checkpoint_keep: Option<u64>,
    pub checkpoint_max_age_days: Option<u64>,
    pub checkpoint_journal: Option<bool>,
    pub tasks: Vec<safesh_tasks::Task>,
    pub context: ContextLimits,
    pub history: HistorySettings,
    pub platforms: Vec<crate::config::PlatformConfig>,
    pub verify: crate::config::VerifySettings,
    pub llm: crate::config::LlmSettings,
    pub spec_approval_mode: Option<crate::config::ApprovalMode>,
}

/// The built-in defaults: read and write the working directory, the standard
/// trusted PATH, no network, a small env allow-list, the usual secret masks and
/// secret files. No command rules: no external program is allowed.
pub(crate) fn builtin(opts: &LoadOptions) -> Config {
    let home = opts.home.as_deref();
    let base = resolve_path(&opts.cwd, home, ".").unwrap_or_else(|_| opts.cwd.clone());
    let entry = |p: PathBuf, written: &str| PathEntry {
        path: p,
        written: written.to_string(),
        origin: Origin::builtin(),
    };
    let names = |list: &[&str]| -> Vec<NameGlob> {
        list.iter()
            .map(|w| NameGlob {
                written: w.to_string(),
                matcher: LazyMatcher::deferred(w, false),
                origin: Origin::builtin(),
            })
            .collect()
    };
    let secret = SECRET
        .iter()
        .filter_map(|w| {
            let (include, pat) = match w.strip_prefix('!') {
                Some(rest) => (false, rest),
                None => (true, *w),
            };
            // Without a home there is no `~`: skip those entries.
            let g = path_glob_as(&base, home, pat, true, Parse::Deferred).ok()?;
            Some((
                include,
                PathGlob {
                    written: w.to_string(),
                    pattern: g.0,
                    matcher: g.1,
                    origin: Origin::builtin(),
                },
            ))
        })
        .collect();
    Config {
        sources: Vec::new(),
        warnings: Vec::new(),
        base_dir: base.clone(),
        home: opts.home.clone(),
        state_dir: None,
        sandbox: Sandbox {
            read: vec![entry(base.clone(), ".")],
            write: vec![entry(base.clone(), ".")],
            network: Network::Off,
            path: PATH.iter().map(|p| entry(PathBuf::from(p), p)).collect(),
            allow_weaker: false,
        },
        limits: Limits::default(),
        env: Env {
            allow: names(ENV_ALLOW),
            mask: names(ENV_MASK),
        },
        commands: Vec::new(),
        nudges: Vec::new(),
        labels: Labels {
            secret,
            named: BTreeMap::new(),
            redact: None,
        },
        rules: Vec::new(),
        approvals: Vec::new(),
        mcp_token_file: None,
        checkpoints: crate::config::Checkpoints::default(),
        tasks: BTreeMap::new(),
        context: ContextLimits::default(),
        history: HistorySettings::default(),
        platforms: BTreeMap::new(),
        verify: crate::config::VerifySettings::default(),
        llm: crate::config::LlmSettings::default(),
        spec_approval_mode: crate::config::ApprovalMode::default(),
    }
}

// ---------------------------------------------------------------------------
// Paths and globs

/// `written` made absolute: `~` and `~/x` against `home`, relative paths against
/// `base`; `.` and `..` removed lexically. Symlinks are not resolved.
pub(crate) fn expand_path(
    base: &Path,
    home: Option<&Path>,
    written: &str,
) -> Result<PathBuf, String> {
    if written.is_empty() {
        return Err("empty path".into());
    }
    let p = if written == "~" || written.starts_with("~/") {
        let Some(h) = home else {
            return Err(format!(
                "`{written}` uses `~` but no home directory is known"
            ));
        };
        h.join(written.trim_start_matches('~').trim_start_matches('/'))
    } else if written.starts_with('~') {
        return Err(format!(
            "`{written}`: only `~` and `~/…` are supported, not `~user`"
        ));
    } else {
        base.join(written)
    };
    Ok(normalize(&p))
}

/// Removes `.` and `..` components without touching the file system.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolves symlinks in the longest existing prefix of the absolute path `p`, so a
/// path that does not exist yet (`target` before a build) still names the place
/// the kernel will use.
pub(crate) fn canonicalize_existing(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let mut rest = Vec::new();
    let mut cur = p;
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(mut c) = std::fs::canonicalize(parent) {
            for n in rest.iter().rev() {
                c.push(n);
            }
            return c;
        }
        cur = parent;
    }
    p.to_path_buf()
}

/// [`expand_path`] then [`canonicalize_existing`].
pub(crate) fn resolve_path(
    base: &Path,
    home: Option<&Path>,
    written: &str,
) -> Result<PathBuf, String> {
    Ok(canonicalize_existing(&expand_path(base, home, written)?))
}

fn has_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// A path glob made absolute: the literal leading components are resolved like a
/// path (so a symlinked project root matches the real paths), the rest is kept.
/// A pattern starting with `**` matches anywhere; with `bare_name_anywhere`, a
/// pattern without `/` (`.env`) matches that name at any depth. Returns the
/// absolute pattern and its matcher.
pub(crate) fn path_glob(
    base: &Path,
    home: Option<&Path>,
    written: &str,
    bare_name_anywhere: bool,
) -> Result<(String, LazyMatcher), String> {
    path_glob_as(base, home, written, bare_name_anywhere, Parse::Now)
}

/// When a glob's pattern is parsed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parse {
    /// At load: a user's pattern, whose error must name its line.
    Now,
    /// On first use: a built-in pattern (tested to parse).
    Deferred,
}

/// [`path_glob`], parsed when `parse` says.
pub(crate) fn path_glob_as(
    base: &Path,
    home: Option<&Path>,
    written: &str,
    bare_name_anywhere: bool,
    parse: Parse,
) -> Result<(String, LazyMatcher), String> {
    if written.is_empty() {
        return Err("empty pattern".into());
    }
    let pattern = if written.starts_with("**") {
        written.to_string()
    } else if bare_name_anywhere && !written.contains('/') {
        format!("**/{written}")
    } else {
        let parts: Vec<&str> = written.split('/').collect();
        let split = parts
            .iter()
            .position(|c| has_meta(c))
            .unwrap_or(parts.len());
        let mut prefix = parts[..split].join("/");
        if prefix.is_empty() && !written.starts_with('/') {
            prefix = ".".into();
        } else if prefix.is_empty() {
            prefix = "/".into();
        }
        let abs = resolve_path(base, home, &prefix)?;
        let abs = globset::escape(&abs.to_string_lossy());
        let rest = parts[split..].join("/");
        if rest.is_empty() {
            abs
        } else if abs.ends_with('/') {
            format!("{abs}{rest}")
        } else {
            format!("{abs}/{rest}")
        }
    };
    if parse == Parse::Deferred {
        let m = LazyMatcher::deferred(&pattern, true);
        return Ok((pattern, m));
    }
    let glob = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("bad glob `{written}`: {}", e.kind()))?;
    Ok((pattern, LazyMatcher::new(glob)))
}

fn name_glob(written: &str) -> Result<LazyMatcher, String> {
    if written.is_empty() {
        return Err("empty name pattern".into());
    }
    GlobBuilder::new(written)
        .build()
        .map(LazyMatcher::new)
        .map_err(|e| format!("bad glob `{written}`: {}", e.kind()))
}

// ---------------------------------------------------------------------------
// Parsing

/// What parsing one file needs: the file (for errors and origins), its text (for
/// line/column), the directory relative paths are relative to, and `~`.
pub(crate) struct Cx<'a> {
    pub file: &'a Path,
    pub text: &'a str,
    pub base: &'a Path,
    pub home: Option<&'a Path>,
}

impl Cx<'_> {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn pos(&self, off: usize) -> (usize, usize) {
        let mut off = off.min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.text[..off];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    pub fn err(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        let (line, column) = self.pos(span.start);
        ConfigError::Invalid {
            path: self.file.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    pub(crate) fn origin(&self, span: Range<usize>) -> Origin {
        Origin {
            file: Some(self.file.to_path_buf()),
            line: self.pos(span.start).0,
        }
    }
}

pub(crate) fn key_str<'a>(k: &'a Key<'_>) -> &'a str {
    k.get_ref().as_ref()
}

/// Entries in source order (the map itself is sorted by name).
pub(crate) fn entries<'b, 'i>(t: &'b DeTable<'i>) -> Vec<(&'b Key<'i>, &'b Val<'i>)> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

fn article(t: &str) -> &'static str {
    match t {
        "array" => "an array",
        "integer" => "an integer",
        "table" => "a table",
        "string" => "a string",
        "boolean" => "a boolean",
        "float" => "a float",
        _ => "a datetime",
    }
}

pub(crate) fn unknown(cx: &Cx, k: &Key, section: &str, expected: &[&str]) -> ConfigError {
    cx.err(
        k.span(),
        format!(
            "unknown key `{}` {} {section}; expected one of: {}",
            key_str(k),
            if section == TOP { "at" } else { "in" },
            expected.join(", ")
        ),
    )
}

pub(crate) fn wrong_type(cx: &Cx, k: &str, section: &str, v: &Val, expected: &str) -> ConfigError {
    cx.err(
        v.span(),
        format!(
            "`{k}` {} {section} must be {expected}, found {}",
            if section == TOP { "at" } else { "in" },
            article(v.get_ref().type_str())
        ),
    )
}

pub(crate) fn as_table<'b, 'i>(
    cx: &Cx,
    k: &str,
    section: &str,
    v: &'b Val<'i>,
) -> Result<&'b DeTable<'i>, ConfigError> {
    v.get_ref()
        .as_table()
        .ok_or_else(|| wrong_type(cx, k, section, v, "a table"))
}

pub(crate) fn as_bool(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<bool, ConfigError> {
    v.get_ref()
        .as_bool()
        .ok_or_else(|| wrong_type(cx, k, section, v, "a boolean (true or false)"))
}

pub(crate) fn as_string(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<String, ConfigError> {
    v.get_ref()
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| wrong_type(cx, k, section, v, "a string"))
}

/// An array of strings, each with its span.
pub(crate) fn as_strings(
    cx: &Cx,
    k: &str,
    section: &str,
    v: &Val,
) -> Result<Vec<(String, Range<usize>)>, ConfigError> {
    let arr = v
        .get_ref()
        .as_array()
        .ok_or_else(|| wrong_type(cx, k, section, v, "an array of strings"))?;
    arr.iter()
        .map(|item| match item.get_ref().as_str() {
            Some(s) => Ok((s.to_string(), item.span())),
            None => Err(cx.err(
                item.span(),
                format!(
                    "`{k}` in {section} must be an array of strings, found {} in it",
                    article(item.get_ref().type_str())
                ),
            )),
        })
        .collect()
}

pub(crate) fn as_u64(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<u64, ConfigError> {
    v.get_ref()
        .as_integer()
        .and_then(|i| u64::from_str_radix(i.as_str(), i.radix()).ok())
        .ok_or_else(|| wrong_type(cx, k, section, v, "a non-negative integer"))
}

fn paths(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<Vec<PathEntry>, ConfigError> {
    as_strings(cx, k, section, v)?
        .into_iter()
        .map(|(w, span)| {
            let path = resolve_path(cx.base, cx.home, &w).map_err(|m| cx.err(span.clone(), m))?;
            Ok(PathEntry {
                path,
                written: w,
                origin: cx.origin(span),
            })
        })
        .collect()
}

fn one_path_glob(
    cx: &Cx,
    w: &str,
    span: Range<usize>,
    bare_name_anywhere: bool,
) -> Result<PathGlob, ConfigError> {
    let (pattern, matcher) =
        path_glob(cx.base, cx.home, w, bare_name_anywhere).map_err(|m| cx.err(span.clone(), m))?;
    Ok(PathGlob {
        written: w.to_string(),
        pattern,
        matcher,
        origin: cx.origin(span),
    })
}

fn path_globs(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<Vec<PathGlob>, ConfigError> {
    as_strings(cx, k, section, v)?
        .into_iter()
        .map(|(w, span)| one_path_glob(cx, &w, span, false))
        .collect()
}

fn name_globs(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<Vec<NameGlob>, ConfigError> {
    as_strings(cx, k, section, v)?
        .into_iter()
        .map(|(w, span)| {
            let matcher = name_glob(&w).map_err(|m| cx.err(span.clone(), m))?;
            Ok(NameGlob {
                written: w,
                matcher,
                origin: cx.origin(span),
            })
        })
        .collect()
}

fn network(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<Network, ConfigError> {
    match v.get_ref() {
        DeValue::Boolean(true) => Ok(Network::On),
        DeValue::Boolean(false) => Ok(Network::Off),
        DeValue::Array(_) => {
            let hosts = as_strings(cx, k, section, v)?;
            for (h, span) in &hosts {
                if h.is_empty() || h.contains(['/', ' ']) {
                    return Err(cx.err(
                        span.clone(),
                        format!("`{k}` in {section}: `{h}` is not a host name"),
                    ));
                }
            }
            Ok(Network::Hosts(hosts.into_iter().map(|(h, _)| h).collect()))
        }
        _ => Err(wrong_type(
            cx,
            k,
            section,
            v,
            "true, false or an array of host names",
        )),
    }
}

/// Parses one config file.
pub(crate) fn parse_file(cx: &Cx) -> Result<Layer, ConfigError> {
    let doc = DeTable::parse(cx.text).map_err(|e| {
        cx.err(
            e.span().unwrap_or(0..0),
            format!("invalid TOML: {}", e.message().trim()),
        )
    })?;
    let mut layer = Layer::default();
    for (k, v) in entries(doc.get_ref()) {
        let name = key_str(k);
        match name {
            "sandbox" => sandbox(cx, as_table(cx, name, TOP, v)?, &mut layer)?,
            "limits" => limits(cx, as_table(cx, name, TOP, v)?, &mut layer.limits)?,
            "env" => {
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    match key_str(k) {
                        "allow" => layer.env.allow = name_globs(cx, "allow", "[env]", v)?,
                        "mask" => layer.env.mask = name_globs(cx, "mask", "[env]", v)?,
                        _ => return Err(unknown(cx, k, "[env]", ENV_KEYS)),
                    }
                }
            }
            "commands" => {
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    let key = key_str(k);
                    let section = format!("[commands.{}]", quote_key(key));
                    let t = v.get_ref().as_table().ok_or_else(|| {
                        wrong_type(cx, key, "[commands]", v, "a table (`[commands.NAME]`)")
                    })?;
                    let matcher = command_matcher(cx, key, k.span())?;
                    layer
                        .commands
                        .push(rule(cx, key, k.span(), matcher, t, &section)?);
                }
            }
            "nudge" => {
                for t in array_of_tables(cx, name, v)? {
                    layer.nudges.push(nudge(cx, t)?);
                }
            }
            "labels" => labels(cx, as_table(cx, name, TOP, v)?, &mut layer.labels)?,
            "rule" => {
                for t in array_of_tables(cx, name, v)? {
                    layer.rules.push(xrule(cx, t)?);
                }
            }
            "approval" => {
                for t in array_of_tables(cx, name, v)? {
                    layer.approvals.push(approval(cx, t)?);
                }
            }
            "mcp" => {
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    match key_str(k) {
                        "http_token_file" => {
                            let w = as_string(cx, "http_token_file", "[mcp]", v)?;
                            layer.mcp_token_file = Some(
                                resolve_path(cx.base, cx.home, &w)
                                    .map_err(|m| cx.err(v.span(), m))?,
                            );
                        }
                        _ => return Err(unknown(cx, k, "[mcp]", MCP_KEYS)),
                    }
                }
            }
            "checkpoints" => {
                const S: &str = "[checkpoints]";
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    match key_str(k) {
                        "exclude" => {
                            let list = as_strings(cx, "exclude", S, v)?;
                            layer.checkpoint_exclude =
                                Some(list.into_iter().map(|(s, _)| s).collect());
                        }
                        "max_mb" => layer.checkpoint_max_mb = Some(as_u64(cx, "max_mb", S, v)?),
                        "keep" => layer.checkpoint_keep = Some(as_u64(cx, "keep", S, v)?),
                        "max_age_days" => {
                            layer.checkpoint_max_age_days = Some(as_u64(cx, "max_age_days", S, v)?)
                        }
                        "journal" => layer.checkpoint_journal = Some(as_bool(cx, "journal", S, v)?),
                        _ => return Err(unknown(cx, k, S, CHECKPOINT_KEYS)),
                    }
                }
            }
            "tasks" => layer.tasks = super::tasks::parse(cx, as_table(cx, name, TOP, v)?)?,
            "context" => {
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    let key = key_str(k);
                    let slot = match key {
                        "max_value_bytes" => &mut layer.context.max_value_bytes,
                        "max_keys" => &mut layer.context.max_keys,
                        _ => return Err(unknown(cx, k, "[context]", CONTEXT_KEYS)),
                    };
                    *slot = Some(as_u64(cx, key, "[context]", v)?);
                }
            }
            "history" => {
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    match key_str(k) {
                        "max_entries" => {
                            layer.history.max_entries =
                                Some(as_u64(cx, "max_entries", "[history]", v)?)
                        }
                        "persist" => {
                            layer.history.persist = Some(as_bool(cx, "persist", "[history]", v)?)
                        }
                        _ => return Err(unknown(cx, k, "[history]", HISTORY_KEYS)),
                    }
                }
            }
            "platforms" => {
                layer.platforms = super::platforms::parse(cx, as_table(cx, name, TOP, v)?)?
            }
            "verify" => layer.verify = super::verify::parse_verify(cx, v)?,
            "llm" => layer.llm = super::verify::parse_llm(cx, v)?,
            "spec" => {
                const S: &str = "[spec]";
                for (k, v) in entries(as_table(cx, name, TOP, v)?) {
                    match key_str(k) {
                        "approval_mode" => {
                            let m = as_string(cx, "approval_mode", S, v)?;
                            let Some(mode) = crate::config::ApprovalMode::parse(&m) else {
                                return Err(cx.err(
                                    v.span(),
                                    format!(
                                        "`approval_mode` in {S} must be one of: {}; found `{m}`",
                                        crate::config::ApprovalMode::NAMES.join(", ")
                                    ),
                                ));
                            };
                            layer.spec_approval_mode = Some(mode);
                        }
                        _ => return Err(unknown(cx, k, S, SPEC_KEYS)),
                    }
                }
            }
            _ => return Err(unknown(cx, k, TOP, TOP_KEYS)),
        }
    }
    Ok(layer)
}

fn quote_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// `[[name]]`: an array of tables, each with its span.
fn array_of_tables<'b, 'i>(
    cx: &Cx,
    name: &str,
    v: &'b Val<'i>,
) -> Result<Vec<Spanned<&'b DeTable<'i>>>, ConfigError> {
    let arr = v.get_ref().as_array().ok_or_else(|| {
        wrong_type(
            cx,
            name,
            TOP,
            v,
            &format!("an array of tables (`[[{name}]]`)"),
        )
    })?;
    arr.iter()
        .map(|item| match item.get_ref().as_table() {
            Some(t) => Ok(Spanned::new(item.span(), t)),
            None => Err(wrong_type(
                cx,
                name,
                TOP,
                item,
                &format!("an array of tables (`[[{name}]]`)"),
            )),
        })
        .collect()
}

fn sandbox(cx: &Cx, t: &DeTable, layer: &mut Layer) -> Result<(), ConfigError> {
    const S: &str = "[sandbox]";
    for (k, v) in entries(t) {
        match key_str(k) {
            "read" => layer.read = paths(cx, "read", S, v)?,
            "write" => layer.write = paths(cx, "write", S, v)?,
            "path" => layer.path = paths(cx, "path", S, v)?,
            "network" => layer.network = Some(network(cx, "network", S, v)?),
            "allow_weaker" => layer.allow_weaker = Some(as_bool(cx, "allow_weaker", S, v)?),
            _ => return Err(unknown(cx, k, S, SANDBOX_KEYS)),
        }
    }
    Ok(())
}

fn limits(cx: &Cx, t: &DeTable, l: &mut Limits) -> Result<(), ConfigError> {
    for (k, v) in entries(t) {
        let name = key_str(k);
        let slot = match name {
            "timeout_ms" => &mut l.timeout_ms,
            "script_timeout_ms" => &mut l.script_timeout_ms,
            "max_timeout_ms" => &mut l.max_timeout_ms,
            "output_bytes" => &mut l.output_bytes,
            "memory_mb" => &mut l.memory_mb,
            "processes" => &mut l.processes,
            "file_size_mb" => &mut l.file_size_mb,
            "loop_iterations" => &mut l.loop_iterations,
            "call_depth" => &mut l.call_depth,
            "commands" => &mut l.commands,
            "substitution_depth" => &mut l.substitution_depth,
            "brace_expansion" => &mut l.brace_expansion,
            "string_bytes" => &mut l.string_bytes,
            "approval_wait_ms" => &mut l.approval_wait_ms,
            "script_bytes" => &mut l.script_bytes,
            _ => return Err(unknown(cx, k, "[limits]", LIMIT_KEYS)),
        };
        *slot = Some(as_u64(cx, name, "[limits]", v)?);
    }
    Ok(())
}

fn command_matcher(cx: &Cx, key: &str, span: Range<usize>) -> Result<NameMatcher, ConfigError> {
    if key.is_empty() {
        return Err(cx.err(span, "empty command name in [commands]"));
    }
    if !key.contains('/') {
        return Ok(NameMatcher::Name(key.to_string()));
    }
    if has_meta(key) {
        let g = one_path_glob(cx, key, span, false)?;
        Ok(NameMatcher::Glob(Box::new(g)))
    } else {
        let p = resolve_path(cx.base, cx.home, key).map_err(|m| cx.err(span, m))?;
        Ok(NameMatcher::Path(p))
    }
}

/// An empty rule for `key`.
pub(crate) fn empty_rule(key: &str, matcher: NameMatcher, origin: Origin) -> CommandRule {
    CommandRule {
        key: key.to_string(),
        matcher,
        allow: None,
        deny_flags: Vec::new(),
        require_flags: Vec::new(),
        value_flags: Vec::new(),
        arg_patterns: Vec::new(),
        subcommands: BTreeMap::new(),
        read: Vec::new(),
        write: Vec::new(),
        exec: Vec::new(),
        network: None,
        origins: vec![origin],
    }
}

fn flags(cx: &Cx, k: &str, section: &str, v: &Val) -> Result<Vec<String>, ConfigError> {
    let list = as_strings(cx, k, section, v)?;
    for (f, span) in &list {
        if !f.starts_with('-') || f == "-" {
            return Err(cx.err(
                span.clone(),
                format!("`{k}` in {section}: `{f}` is not a flag (flags start with `-`, e.g. `-f` or `--force`)"),
            ));
        }
    }
    Ok(list.into_iter().map(|(f, _)| f).collect())
}

fn rule(
    cx: &Cx,
    key: &str,
    key_span: Range<usize>,
    matcher: NameMatcher,
    t: &DeTable,
    section: &str,
) -> Result<CommandRule, ConfigError> {
    let mut r = empty_rule(key, matcher, cx.origin(key_span));
    for (k, v) in entries(t) {
        let name = key_str(k);
        // A table is a subcommand rule even under a key name (`[commands.docker.network]`):
        // no rule key but `arg_patterns` takes a table.
        if name != "arg_patterns"
            && let Some(sub) = v.get_ref().as_table()
        {
            let sub_section = format!("{}.{}]", section.trim_end_matches(']'), quote_key(name));
            let sr = rule(
                cx,
                name,
                k.span(),
                NameMatcher::Name(name.to_string()),
                sub,
                &sub_section,
            )?;
            r.subcommands.insert(name.to_string(), sr);
            continue;
        }
        match name {
            "allow" => {
                r.allow = Some(match v.get_ref() {
                    DeValue::Boolean(true) => Allow::All,
                    DeValue::Boolean(false) => Allow::Deny,
                    DeValue::Array(_) => Allow::Subcommands(
                        as_strings(cx, name, section, v)?
                            .into_iter()
                            .map(|(s, _)| s)
                            .collect(),
                    ),
                    _ => {
                        return Err(wrong_type(
                            cx,
                            name,
                            section,
                            v,
                            "true, false or an array of subcommand names",
                        ));
                    }
                })
            }
            "deny_flags" => r.deny_flags = flags(cx, name, section, v)?,
            "require_flags" => r.require_flags = flags(cx, name, section, v)?,
            "value_flags" => r.value_flags = flags(cx, name, section, v)?,
            "arg_patterns" => {
                for (fk, fv) in entries(as_table(cx, name, section, v)?) {
                    let flag = key_str(fk);
                    if flag != "*" && !flag.starts_with('-') {
                        return Err(cx.err(
                            fk.span(),
                            format!("`arg_patterns` in {section}: key `{flag}` must be a flag (`--output`) or `*` (operands)"),
                        ));
                    }
                    let written = as_string(cx, flag, &format!("{section} arg_patterns"), fv)?;
                    let regex = regex::Regex::new(&written).map_err(|e| {
                        cx.err(
                            fv.span(),
                            format!("bad regex for `{flag}` in {section} arg_patterns: {e}"),
                        )
                    })?;
                    r.arg_patterns.push(ArgPattern {
                        flag: flag.to_string(),
                        written,
                        regex,
                        origin: cx.origin(fk.span()),
                    });
                }
            }
            "read" => r.read = path_globs(cx, name, section, v)?,
            "write" => r.write = path_globs(cx, name, section, v)?,
            "exec" => r.exec = path_globs(cx, name, section, v)?,
            "network" => r.network = Some(network(cx, name, section, v)?),
            _ => return Err(unknown(cx, k, section, RULE_KEYS)),
        }
    }
    Ok(r)
}

fn nudge(cx: &Cx, t: Spanned<&DeTable>) -> Result<Nudge, ConfigError> {
    const S: &str = "[[nudge]]";
    let (mut commands, mut message, mut suggest) = (None, None, String::new());
    for (k, v) in entries(t.get_ref()) {
        match key_str(k) {
            "commands" => {
                commands = Some(
                    as_strings(cx, "commands", S, v)?
                        .into_iter()
                        .map(|(s, _)| s)
                        .collect(),
                )
            }
            "message" => message = Some(as_string(cx, "message", S, v)?),
            "suggest" => suggest = as_string(cx, "suggest", S, v)?,
            _ => return Err(unknown(cx, k, S, NUDGE_KEYS)),
        }
    }
    Ok(Nudge {
        commands: commands.ok_or_else(|| cx.err(t.span(), "[[nudge]] needs `commands`"))?,
        message: message.ok_or_else(|| cx.err(t.span(), "[[nudge]] needs `message`"))?,
        suggest,
        origin: cx.origin(t.span()),
    })
}

fn labels(cx: &Cx, t: &DeTable, labels: &mut Labels) -> Result<(), ConfigError> {
    for (k, v) in entries(t) {
        let name = key_str(k);
        if name == "secret" {
            for (w, span) in as_strings(cx, name, "[labels]", v)? {
                let (include, pat) = match w.strip_prefix('!') {
                    Some(rest) => (false, rest),
                    None => (true, w.as_str()),
                };
                let mut g = one_path_glob(cx, pat, span, true)?;
                g.written = w.clone();
                labels.secret.push((include, g));
            }
            continue;
        }
        if name == "redact" && v.get_ref().as_table().is_none() {
            labels.redact = Some(as_bool(cx, "redact", "[labels]", v)?);
            continue;
        }
        let Some(lt) = v.get_ref().as_table() else {
            return Err(unknown(cx, k, "[labels]", LABELS_KEYS));
        };
        if name == "public" || !is_label_name(name) {
            return Err(cx.err(
                k.span(),
                format!("`[labels.{}]`: a label name is letters, digits, `_` and `-`, and not `public` or `secret`", quote_key(name)),
            ));
        }
        let section = format!("[labels.{}]", quote_key(name));
        let mut label = NamedLabel::default();
        for (k, v) in entries(lt) {
            match key_str(k) {
                "env" => {
                    label.env = as_strings(cx, "env", &section, v)?
                        .into_iter()
                        .map(|(s, _)| s)
                        .collect()
                }
                "files" => label.files = path_globs(cx, "files", &section, v)?,
                "may_flow_to" => {
                    label.may_flow_to = as_strings(cx, "may_flow_to", &section, v)?
                        .into_iter()
                        .map(|(s, _)| s)
                        .collect()
                }
                _ => return Err(unknown(cx, k, &section, LABEL_KEYS)),
            }
        }
        labels.named.insert(name.to_string(), label);
    }
    Ok(())
}

fn xrule(cx: &Cx, t: Spanned<&DeTable>) -> Result<ExchangeRule, ConfigError> {
    const S: &str = "[[rule]]";
    let (mut name, mut commit_point, mut verdict) = (None, None, None);
    let mut when_spans = Vec::new();
    let one_of = |k: &str, v: &Val, allowed: &[&str]| -> Result<String, ConfigError> {
        let s = as_string(cx, k, S, v)?;
        if allowed.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(cx.err(
                v.span(),
                format!(
                    "`{k}` in {S} must be one of: {}; found `{s}`",
                    allowed.join(", ")
                ),
            ))
        }
    };
    for (k, v) in entries(t.get_ref()) {
        match key_str(k) {
            "name" => name = Some(as_string(cx, "name", S, v)?),
            "commit_point" => commit_point = Some(one_of("commit_point", v, COMMIT_POINTS)?),
            "verdict" => verdict = Some(one_of("verdict", v, VERDICTS)?),
            "when" => {
                for (wk, wv) in entries(as_table(cx, "when", S, v)?) {
                    let value = as_string(cx, key_str(wk), "[[rule]] when", wv)?;
                    when_spans.push((key_str(wk).to_string(), wk.span(), value, wv.span()));
                }
            }
            _ => return Err(unknown(cx, k, S, XRULE_KEYS)),
        }
    }
    let missing = |what: &str| cx.err(t.span(), format!("{S} needs `{what}`"));
    let name = name.ok_or_else(|| missing("name"))?;
    let commit_point = commit_point.ok_or_else(|| missing("commit_point"))?;
    let mut when = BTreeMap::new();
    for (key, key_span, value, value_span) in when_spans {
        check_when(cx, &commit_point, &key, key_span, &value, value_span)?;
        when.insert(key, value);
    }
    Ok(ExchangeRule {
        name,
        commit_point,
        when,
        verdict: verdict.ok_or_else(|| missing("verdict"))?,
        origin: cx.origin(t.span()),
    })
}

/// A label name: what `[labels.NAME]` and `when.confidentiality` accept.
fn is_label_name(s: &str) -> bool {
    !s.is_empty()
        && s != "secret"
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Validates one `when` condition of a `[[rule]]` at `commit_point` (the meaning of
/// each key is documented in the safesh-flow crate, which evaluates them).
fn check_when(
    cx: &Cx,
    commit_point: &str,
    key: &str,
    key_span: Range<usize>,
    value: &str,
    value_span: Range<usize>,
) -> Result<(), ConfigError> {
    const S: &str = "[[rule]] when";
    let Some((_, points)) = WHEN_KEYS.iter().find(|(k, _)| *k == key) else {
        let keys: Vec<&str> = WHEN_KEYS.iter().map(|(k, _)| *k).collect();
        return Err(cx.err(
            key_span,
            format!(
                "unknown key `{key}` in {S}; expected one of: {}",
                keys.join(", ")
            ),
        ));
    };
    if !points.contains(&commit_point) {
        return Err(cx.err(
            key_span,
            format!(
                "`{key}` in {S} applies only to commit_point {}, not `{commit_point}`",
                points.join(" or ")
            ),
        ));
    }
    let one_of = |allowed: &[&str]| {
        if allowed.contains(&value) {
            Ok(())
        } else {
            Err(cx.err(
                value_span.clone(),
                format!(
                    "`{key}` in {S} must be one of: {}; found `{value}`",
                    allowed.join(", ")
                ),
            ))
        }
    };
    match key {
        "confidentiality" => {
            if value == "secret" || value == "public" || is_label_name(value) {
                Ok(())
            } else {
                Err(cx.err(
                    value_span,
                    format!("`confidentiality` in {S} must be `secret`, `public` or a label name; found `{value}`"),
                ))
            }
        }
        "integrity" => one_of(WHEN_INTEGRITY),
        "pc" => one_of(WHEN_PC),
        _ => GlobBuilder::new(value)
            .literal_separator(false)
            .build()
            .map(|_| ())
            .map_err(|e| {
                cx.err(
                    value_span,
                    format!("bad glob `{value}` for `{key}` in {S}: {}", e.kind()),
                )
            }),
    }
}

/// `[[approval]]`: an exact action text, optionally limited to one commit point
/// and to a time (`expires = 2026-12-31T00:00:00Z`, or a date: its start, UTC).
fn approval(cx: &Cx, t: Spanned<&DeTable>) -> Result<PreApproval, ConfigError> {
    const S: &str = "[[approval]]";
    let (mut action, mut commit_point, mut expires) = (None, None, None);
    for (k, v) in entries(t.get_ref()) {
        match key_str(k) {
            "action" => {
                let a = as_string(cx, "action", S, v)?;
                if a.trim().is_empty() {
                    return Err(cx.err(v.span(), "`action` in [[approval]] must not be empty"));
                }
                action = Some(a);
            }
            "commit_point" => {
                let p = as_string(cx, "commit_point", S, v)?;
                if !COMMIT_POINTS.contains(&p.as_str()) {
                    return Err(cx.err(
                        v.span(),
                        format!(
                            "`commit_point` in {S} must be one of: {}; found `{p}`",
                            COMMIT_POINTS.join(", ")
                        ),
                    ));
                }
                commit_point = Some(p);
            }
            "expires" => {
                let when = v
                    .get_ref()
                    .as_datetime()
                    .and_then(datetime_to_system)
                    .ok_or_else(|| {
                        wrong_type(
                            cx,
                            "expires",
                            S,
                            v,
                            "a date (2026-12-31) or a date-time with offset (2026-12-31T18:00:00Z)",
                        )
                    })?;
                expires = Some(when);
            }
            _ => return Err(unknown(cx, k, S, APPROVAL_KEYS)),
        }
    }
    Ok(PreApproval {
        action: action.ok_or_else(|| cx.err(t.span(), "[[approval]] needs `action`"))?,
        commit_point,
        expires,
        origin: cx.origin(t.span()),
    })
}

/// A TOML date or offset date-time as a point in time; `None` for local times.
fn datetime_to_system(d: &toml::value::Datetime) -> Option<std::time::SystemTime> {
    let date = d.date?;
    let (secs_in_day, offset_min) = match (d.time, d.offset) {
        (None, None) => (0, 0),
        (Some(t), Some(o)) => {
            let off = match o {
                toml::value::Offset::Z => 0,
                toml::value::Offset::Custom { minutes } => i64::from(minutes),
            };
            let s = i64::from(t.hour) * 3600
                + i64::from(t.minute) * 60
                + i64::from(t.second.unwrap_or(0));
            (s, off)
        }
        _ => return None,
    };
    let days = days_from_civil(
        i64::from(date.year),
        i64::from(date.month),
        i64::from(date.day),
    );
    let secs = days * 86_400 + secs_in_day - offset_min * 60;
    let secs = u64::try_from(secs).ok()?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod builtin_tests {
    use super::{ENV_ALLOW, ENV_MASK, LoadOptions, builtin};

    /// Built-in globs are parsed on first use: each must parse, or it would
    /// silently match nothing.
    #[test]
    fn every_builtin_glob_parses_and_matches_what_it_should() {
        let opts = LoadOptions {
            cwd: std::path::PathBuf::from("/tmp"),
            home: Some(std::path::PathBuf::from("/home/someone")),
            xdg_state_home: None,
            xdg_config_home: None,
            config_file: None,
            no_project: true,
        };
        let c = builtin(&opts);
        assert_eq!(c.env.allow.len(), ENV_ALLOW.len());
        assert_eq!(c.env.mask.len(), ENV_MASK.len());
        for g in c.env.allow.iter().chain(&c.env.mask) {
            assert!(g.matcher.glob().is_some(), "{} does not parse", g.written);
        }
        assert!(!c.labels.secret.is_empty());
        for (_, g) in &c.labels.secret {
            assert!(g.matcher.glob().is_some(), "{} does not parse", g.pattern);
        }
        let secret = |p: &str| {
            c.labels
                .secret
                .iter()
                .any(|(include, g)| *include && g.matcher.is_match(p))
        };
        assert!(secret("/tmp/proj/.env"));
        assert!(secret("/home/someone/.ssh/id_rsa"));
        assert!(secret("/tmp/x/server.pem"));
        assert!(!secret("/tmp/proj/README.md"));
        assert!(
            c.env
                .mask
                .iter()
                .any(|g| g.matcher.is_match("GITHUB_TOKEN"))
        );
        assert!(!c.env.mask.iter().any(|g| g.matcher.is_match("PATH")));
    }
}
