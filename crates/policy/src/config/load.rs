//! Reading, validating and merging the config layers.
//!
//! Order: built-in defaults → user file (`$XDG_CONFIG_HOME/safesh/config.toml`,
//! always applied) → project file (nearest `safesh.toml` walking up from the
//! working directory, applied only if trusted) or `--config FILE` (trusted as
//! given). Merging: root lists, env lists, flag lists and profiles are unions in
//! first-seen order; `allow = false` anywhere beats every allow; limits and scalar
//! settings (`allow_weaker`, `[mcp]`) take the later layer's value; `[[rule]]`,
//! `[[nudge]]` and `[[approval]]` are listed project (or `--config`) first, then
//! user, then built-in.

use super::schema::{self, Cx, Layer};
use super::trust;
use super::*;
use std::path::Path;

/// What `load` needs to know about the caller's world.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The working directory (where the project search starts, and what `.` means
    /// for the built-in defaults).
    pub cwd: PathBuf,
    /// `$HOME`; `None` disables the user layer and `~`.
    pub home: Option<PathBuf>,
    /// `$XDG_STATE_HOME` if set (else `~/.local/state`).
    pub xdg_state_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` if set (else `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// `--config FILE`: used as the project file, trusted as given.
    pub config_file: Option<PathBuf>,
    /// Skip the project search (tests, `--no-project-config`).
    pub no_project: bool,
}

/// A config that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Bad content: unknown key, wrong type, bad glob or regex.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

/// safesh's state directory: `$XDG_STATE_HOME/safesh`, else
/// `~/.local/state/safesh`; `None` without either.
pub fn state_dir(opts: &LoadOptions) -> Option<PathBuf> {
    opts.xdg_state_home
        .clone()
        .or_else(|| opts.home.as_ref().map(|h| h.join(".local/state")))
        .map(|d| d.join("safesh"))
}

/// The user config file: `$XDG_CONFIG_HOME/safesh/config.toml`, else
/// `~/.config/safesh/config.toml`; `None` without either.
pub fn user_config_file(opts: &LoadOptions) -> Option<PathBuf> {
    opts.xdg_config_home
        .clone()
        .or_else(|| opts.home.as_ref().map(|h| h.join(".config")))
        .map(|d| d.join("safesh").join("config.toml"))
}

/// The nearest `safesh.toml` in `cwd` or one of its ancestors.
pub fn find_project_file(cwd: &Path) -> Option<PathBuf> {
    let cwd = schema::normalize(&std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf()));
    cwd.ancestors()
        .map(|d| d.join("safesh.toml"))
        .find(|f| f.is_file())
}

/// Loads and merges every layer. The user layer governs the roots it grants: it
/// applies only when the user owns it and its directory, no one else may write
/// them, and it does not lie inside a write root of the merged config (where
/// commands could write it) — unless the human trusted it (`safesh trust FILE`).
pub fn load(opts: &LoadOptions) -> Result<Config, ConfigError> {
    let cfg = load_layers(opts, true)?;
    let Some(user) = cfg
        .sources
        .iter()
        .find(|s| s.layer == "user" && s.applied)
        .map(|s| s.path.clone())
    else {
        return Ok(cfg);
    };
    let Some(why) = user_layer_unsafe(&user, &cfg) else {
        return Ok(cfg);
    };
    let mut without = load_layers(opts, false)?;
    without.warnings.push(format!(
        "safesh: ignoring {p}: {why}; a file commands could write grants them nothing (`safesh trust {p}` applies it anyway)",
        p = user.display()
    ));
    without.sources.insert(
        0,
        SourceFile {
            path: user,
            layer: "user",
            applied: false,
        },
    );
    Ok(without)
}

/// Why the user config at `file` must not be applied (`None`: it may be).
fn user_layer_unsafe(file: &Path, cfg: &Config) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let real = std::fs::canonicalize(file).ok()?;
    if let Some(state) = &cfg.state_dir
        && let Ok(bytes) = std::fs::read(&real)
        && trust::is_trusted(state, &real, &bytes)
    {
        return None;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for p in [Some(real.as_path()), real.parent()].into_iter().flatten() {
        let m = std::fs::metadata(p).ok()?;
        if m.uid() != me {
            return Some(format!("{} is not owned by this user", p.display()));
        }
        if m.mode() & 0o022 != 0 {
            return Some(format!("{} is writable by other users", p.display()));
        }
    }
    cfg.sandbox
        .write
        .iter()
        .map(|w| std::fs::canonicalize(&w.path).unwrap_or_else(|_| w.path.clone()))
        .find(|w| real.starts_with(w))
        .map(|w| format!("it lies inside the write root {}", w.display()))
}

fn load_layers(opts: &LoadOptions, with_user: bool) -> Result<Config, ConfigError> {
    let mut cfg = schema::builtin(opts);
    cfg.state_dir = state_dir(opts);
    let home = opts.home.as_deref();
    // Layers in merge order; kept to list rules/nudges/approvals in reverse.
    let mut layers: Vec<Layer> = Vec::new();

    if let Some(user) = user_config_file(opts).filter(|f| with_user && f.is_file()) {
        let bytes = read(&user)?;
        layers.push(parse(&user, &bytes, home)?);
        cfg.sources.push(SourceFile {
            path: user,
            layer: "user",
            applied: true,
        });
    }

    if let Some(file) = &opts.config_file {
        let file = schema::normalize(&opts.cwd.join(file));
        let bytes = read(&file)?;
        layers.push(parse(&file, &bytes, home)?);
        cfg.sources.push(SourceFile {
            path: file,
            layer: "command-line",
            applied: true,
        });
    } else if !opts.no_project
        && let Some(file) = find_project_file(&opts.cwd)
    {
        let bytes = read(&file)?;
        let trusted = cfg
            .state_dir
            .as_deref()
            .is_some_and(|s| trust::is_trusted(s, &file, &bytes));
        if trusted {
            layers.push(parse(&file, &bytes, home)?);
        } else {
            cfg.warnings.push(format!(
                "safesh: ignoring {p}: not trusted (new or changed since `safesh trust`); run `safesh trust {p}` to apply it",
                p = file.display()
            ));
        }
        cfg.sources.push(SourceFile {
            path: file,
            layer: "project",
            applied: trusted,
        });
    }

    // agsh's `.agsh/platforms.yaml`: under the same trust rule as `safesh.toml`.
    if !opts.no_project
        && let Some(file) = super::platforms::find_yaml(&opts.cwd)
    {
        let bytes = read(&file)?;
        let trusted = cfg
            .state_dir
            .as_deref()
            .is_some_and(|s| trust::is_trusted(s, &file, &bytes));
        if trusted {
            let text = String::from_utf8_lossy(&bytes);
            let platforms = super::platforms::parse_yaml(&file, &text)?;
            layers.push(Layer {
                platforms,
                ..Layer::default()
            });
        } else {
            cfg.warnings.push(format!(
                "safesh: ignoring {p}: not trusted (new or changed since `safesh trust`); run `safesh trust {p}` to apply it",
                p = file.display()
            ));
        }
        cfg.sources.push(SourceFile {
            path: file,
            layer: "project",
            applied: trusted,
        });
    }

    let mut rules = Vec::new();
    let mut nudges = Vec::new();
    let mut approvals = Vec::new();
    for layer in layers.iter_mut().rev() {
        rules.append(&mut layer.rules);
        nudges.append(&mut layer.nudges);
        approvals.append(&mut layer.approvals);
    }
    rules.append(&mut cfg.rules);
    nudges.append(&mut cfg.nudges);
    approvals.append(&mut cfg.approvals);
    for layer in layers {
        merge(&mut cfg, layer);
    }
    cfg.rules = rules;
    cfg.nudges = nudges;
    cfg.approvals = approvals;
    super::platforms::apply(&mut cfg);
    Ok(cfg)
}

fn read(path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses one file; relative paths in it are relative to its directory.
fn parse(file: &Path, bytes: &[u8], home: Option<&Path>) -> Result<Layer, ConfigError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let ok = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned();
        let cx = Cx {
            file,
            text: &ok,
            base: Path::new("/"),
            home,
        };
        cx.err(ok.len()..ok.len(), "the file is not valid UTF-8")
    })?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    let base = schema::canonicalize_existing(dir);
    schema::parse_file(&Cx {
        file,
        text,
        base: &base,
        home,
    })
}

/// Merges a later layer into the config so far.
fn merge(cfg: &mut Config, l: Layer) {
    union_paths(&mut cfg.sandbox.read, l.read);
    union_paths(&mut cfg.sandbox.write, l.write);
    union_paths(&mut cfg.sandbox.path, l.path);
    if let Some(n) = l.network {
        cfg.sandbox.network =
            merge_network(std::mem::replace(&mut cfg.sandbox.network, Network::Off), n);
    }
    if let Some(w) = l.allow_weaker {
        cfg.sandbox.allow_weaker = w;
    }
    merge_limits(&mut cfg.limits, l.limits);
    union_names(&mut cfg.env.allow, l.env.allow);
    union_names(&mut cfg.env.mask, l.env.mask);
    for rule in l.commands {
        match cfg
            .commands
            .iter_mut()
            .find(|r| same_matcher(&r.matcher, &rule.matcher))
        {
            Some(into) => merge_rule(into, rule),
            None => cfg.commands.push(rule),
        }
    }
    for (include, g) in l.labels.secret {
        if !cfg
            .labels
            .secret
            .iter()
            .any(|(i, x)| *i == include && x.pattern == g.pattern)
        {
            cfg.labels.secret.push((include, g));
        }
    }
    for (name, label) in l.labels.named {
        let into = cfg.labels.named.entry(name).or_default();
        union_strings(&mut into.env, label.env);
        union_globs(&mut into.files, label.files);
        union_strings(&mut into.may_flow_to, label.may_flow_to);
    }
    if l.labels.redact.is_some() {
        cfg.labels.redact = l.labels.redact;
    }
    if l.mcp_token_file.is_some() {
        cfg.mcp_token_file = l.mcp_token_file;
    }
    if let Some(x) = l.checkpoint_exclude {
        cfg.checkpoints.exclude = x;
    }
    if let Some(n) = l.checkpoint_max_mb {
        cfg.checkpoints.max_mb = n;
    }
    if let Some(n) = l.checkpoint_keep {
        cfg.checkpoints.keep = n;
    }
    if let Some(n) = l.checkpoint_max_age_days {
        cfg.checkpoints.max_age_days = n;
    }
    if let Some(b) = l.checkpoint_journal {
        cfg.checkpoints.journal = b;
    }
    for task in l.tasks {
        cfg.tasks.insert(task.name.clone(), task);
    }
    let (c, h) = (&mut cfg.context, &mut cfg.history);
    c.max_value_bytes = l.context.max_value_bytes.or(c.max_value_bytes);
    c.max_keys = l.context.max_keys.or(c.max_keys);
    h.max_entries = l.history.max_entries.or(h.max_entries);
    h.persist = l.history.persist.or(h.persist);
    super::platforms::merge(cfg, l.platforms);
    super::verify::merge_verify(&mut cfg.verify, l.verify);
    super::verify::merge_llm(&mut cfg.llm, l.llm);
    if let Some(m) = l.spec_approval_mode {
        cfg.spec_approval_mode = m;
    }
}

fn same_matcher(a: &NameMatcher, b: &NameMatcher) -> bool {
    match (a, b) {
        (NameMatcher::Name(x), NameMatcher::Name(y)) => x == y,
        (NameMatcher::Path(x), NameMatcher::Path(y)) => x == y,
        (NameMatcher::Glob(x), NameMatcher::Glob(y)) => x.pattern == y.pattern,
        _ => false,
    }
}

/// Merges two rules for the same program (or subcommand).
pub(crate) fn merge_rule(into: &mut CommandRule, from: CommandRule) {
    into.allow = merge_allow(into.allow.take(), from.allow);
    union_strings(&mut into.deny_flags, from.deny_flags);
    union_strings(&mut into.require_flags, from.require_flags);
    union_strings(&mut into.value_flags, from.value_flags);
    into.arg_patterns.extend(from.arg_patterns);
    for (name, sub) in from.subcommands {
        match into.subcommands.get_mut(&name) {
            Some(s) => merge_rule(s, sub),
            None => {
                into.subcommands.insert(name, sub);
            }
        }
    }
    union_globs(&mut into.read, from.read);
    union_globs(&mut into.write, from.write);
    union_globs(&mut into.exec, from.exec);
    into.network = match (into.network.take(), from.network) {
        (Some(a), Some(b)) => Some(merge_network(a, b)),
        (a, b) => a.or(b),
    };
    into.origins.extend(from.origins);
}

/// A deny anywhere wins; then `true` anywhere; else the subcommand lists' union.
pub(crate) fn merge_allow(a: Option<Allow>, b: Option<Allow>) -> Option<Allow> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(Allow::Deny), _) | (_, Some(Allow::Deny)) => Some(Allow::Deny),
        (Some(Allow::All), _) | (_, Some(Allow::All)) => Some(Allow::All),
        (Some(Allow::Subcommands(mut x)), Some(Allow::Subcommands(y))) => {
            union_strings(&mut x, y);
            Some(Allow::Subcommands(x))
        }
    }
}

/// Union: `On` beats host lists, which beat `Off`; host lists union.
pub(crate) fn merge_network(a: Network, b: Network) -> Network {
    match (a, b) {
        (Network::On, _) | (_, Network::On) => Network::On,
        (Network::Hosts(mut x), Network::Hosts(y)) => {
            union_strings(&mut x, y);
            Network::Hosts(x)
        }
        (Network::Hosts(x), Network::Off) | (Network::Off, Network::Hosts(x)) => Network::Hosts(x),
        (Network::Off, Network::Off) => Network::Off,
    }
}

fn merge_limits(into: &mut Limits, from: Limits) {
    let Limits {
        timeout_ms,
        script_timeout_ms,
        max_timeout_ms,
        output_bytes,
        memory_mb,
        processes,
        file_size_mb,
        loop_iterations,
        call_depth,
        commands,
        substitution_depth,
        brace_expansion,
        string_bytes,
        approval_wait_ms,
        script_bytes,
    } = from;
    let set = |slot: &mut Option<u64>, v: Option<u64>| {
        if v.is_some() {
            *slot = v;
        }
    };
    set(&mut into.timeout_ms, timeout_ms);
    set(&mut into.approval_wait_ms, approval_wait_ms);
    set(&mut into.script_timeout_ms, script_timeout_ms);
    set(&mut into.max_timeout_ms, max_timeout_ms);
    set(&mut into.output_bytes, output_bytes);
    set(&mut into.memory_mb, memory_mb);
    set(&mut into.processes, processes);
    set(&mut into.file_size_mb, file_size_mb);
    set(&mut into.loop_iterations, loop_iterations);
    set(&mut into.call_depth, call_depth);
    set(&mut into.commands, commands);
    set(&mut into.substitution_depth, substitution_depth);
    set(&mut into.brace_expansion, brace_expansion);
    set(&mut into.string_bytes, string_bytes);
    set(&mut into.script_bytes, script_bytes);
}

fn union_strings(into: &mut Vec<String>, from: Vec<String>) {
    for s in from {
        if !into.contains(&s) {
            into.push(s);
        }
    }
}

fn union_paths(into: &mut Vec<PathEntry>, from: Vec<PathEntry>) {
    for e in from {
        if !into.iter().any(|x| x.path == e.path) {
            into.push(e);
        }
    }
}

fn union_names(into: &mut Vec<NameGlob>, from: Vec<NameGlob>) {
    for e in from {
        if !into.iter().any(|x| x.written == e.written) {
            into.push(e);
        }
    }
}

fn union_globs(into: &mut Vec<PathGlob>, from: Vec<PathGlob>) {
    for e in from {
        if !into.iter().any(|x| x.pattern == e.pattern) {
            into.push(e);
        }
    }
}
