//! `safesh config show`: the merged config with where each setting came from.
//!
//! The output reads like a `safesh.toml` (it is meant for humans, not for
//! re-parsing): a header lists the files considered and whether each applied, then
//! each setting carries a `# from FILE:LINE` or `# built-in` comment. Settings whose
//! types carry no origin (network, limits, `allow_weaker`, `[mcp]`) say
//! `# built-in` when they still have the built-in value and `# from config`
//! otherwise.

use super::*;
use std::fmt::Write;

fn from(o: &Origin) -> String {
    match &o.file {
        None => "# built-in".into(),
        Some(_) => format!("# from {o}"),
    }
}

fn q(s: &str) -> String {
    format!("{s:?}")
}

fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        q(k)
    }
}

fn network(n: &Network) -> String {
    match n {
        Network::Off => "false".into(),
        Network::On => "true".into(),
        Network::Hosts(h) => format!(
            "[{}]",
            h.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// One item per line, each with its origin, and what was written when it was
/// resolved to something else (`"data"` → `/p/data`).
fn list<'a>(
    out: &mut String,
    name: &str,
    items: impl Iterator<Item = (String, &'a str, &'a Origin)>,
) {
    let items: Vec<_> = items.collect();
    if items.is_empty() {
        let _ = writeln!(out, "{name} = []");
        return;
    }
    let _ = writeln!(out, "{name} = [");
    for (v, written, o) in items {
        let w = q(written);
        let note = if w == v {
            String::new()
        } else {
            format!(" (written {w})")
        };
        let _ = writeln!(out, "    {v},  {}{note}", from(o));
    }
    let _ = writeln!(out, "]");
}

/// Renders the merged config with provenance.
pub fn render(config: &Config) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# safesh: merged configuration");
    let _ = writeln!(out, "# sources, in merge order:");
    let _ = writeln!(out, "#   built-in defaults (applied)");
    for s in &config.sources {
        let state = if s.applied {
            "applied"
        } else {
            "IGNORED: not trusted"
        };
        let _ = writeln!(out, "#   {} {} ({state})", s.layer, s.path.display());
    }
    for w in &config.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    if let Some(s) = &config.state_dir {
        let _ = writeln!(out, "# state directory: {}", s.display());
    }

    let sb = &config.sandbox;
    let _ = writeln!(out, "\n[sandbox]");
    list(
        &mut out,
        "read",
        sb.read
            .iter()
            .map(|e| (q(&e.path.to_string_lossy()), e.written.as_str(), &e.origin)),
    );
    list(
        &mut out,
        "write",
        sb.write
            .iter()
            .map(|e| (q(&e.path.to_string_lossy()), e.written.as_str(), &e.origin)),
    );
    list(
        &mut out,
        "path",
        sb.path
            .iter()
            .map(|e| (q(&e.path.to_string_lossy()), e.written.as_str(), &e.origin)),
    );
    let net_from = if sb.network == Network::Off {
        "# built-in"
    } else {
        "# from config"
    };
    let _ = writeln!(out, "network = {}  {net_from}", network(&sb.network));
    let weak_from = if sb.allow_weaker {
        "# from config"
    } else {
        "# built-in"
    };
    let _ = writeln!(out, "allow_weaker = {}  {weak_from}", sb.allow_weaker);

    let _ = writeln!(out, "\n[limits]");
    let l = &config.limits;
    let limits = [
        ("timeout_ms", l.timeout_ms),
        ("script_timeout_ms", l.script_timeout_ms),
        ("max_timeout_ms", l.max_timeout_ms),
        ("output_bytes", l.output_bytes),
        ("memory_mb", l.memory_mb),
        ("processes", l.processes),
        ("file_size_mb", l.file_size_mb),
        ("loop_iterations", l.loop_iterations),
        ("call_depth", l.call_depth),
        ("commands", l.commands),
        ("substitution_depth", l.substitution_depth),
        ("brace_expansion", l.brace_expansion),
        ("string_bytes", l.string_bytes),
        ("approval_wait_ms", l.approval_wait_ms),
        ("script_bytes", l.script_bytes),
    ];
    let mut any = false;
    for (k, v) in limits {
        if let Some(v) = v {
            any = true;
            let _ = writeln!(out, "{k} = {v}  # from config");
        }
    }
    if !any {
        let _ = writeln!(out, "# all limits at their built-in values");
    }

    let _ = writeln!(out, "\n[env]");
    list(
        &mut out,
        "allow",
        config
            .env
            .allow
            .iter()
            .map(|g| (q(&g.written), g.written.as_str(), &g.origin)),
    );
    list(
        &mut out,
        "mask",
        config
            .env
            .mask
            .iter()
            .map(|g| (q(&g.written), g.written.as_str(), &g.origin)),
    );

    if config.commands.is_empty() {
        let _ = writeln!(
            out,
            "\n# no [commands.*] rules: no external program is allowed"
        );
    }
    for r in &config.commands {
        rule(&mut out, &format!("commands.{}", key(&r.key)), r);
    }

    for n in &config.nudges {
        let _ = writeln!(out, "\n[[nudge]]  {}", from(&n.origin));
        let cmds: Vec<_> = n.commands.iter().map(|c| q(c)).collect();
        let _ = writeln!(out, "commands = [{}]", cmds.join(", "));
        let _ = writeln!(out, "message = {}", q(&n.message));
        let _ = writeln!(out, "suggest = {}", q(&n.suggest));
    }

    let _ = writeln!(out, "\n[labels]");
    list(
        &mut out,
        "secret",
        config.labels.secret.iter().map(|(include, g)| {
            let bang = if *include { "" } else { "!" };
            (
                q(&format!("{bang}{}", g.pattern)),
                g.written.as_str(),
                &g.origin,
            )
        }),
    );
    for (name, label) in &config.labels.named {
        let _ = writeln!(out, "\n[labels.{}]", key(name));
        let env: Vec<_> = label.env.iter().map(|c| q(c)).collect();
        let _ = writeln!(out, "env = [{}]", env.join(", "));
        list(
            &mut out,
            "files",
            label
                .files
                .iter()
                .map(|g| (q(&g.pattern), g.written.as_str(), &g.origin)),
        );
        let hosts: Vec<_> = label.may_flow_to.iter().map(|c| q(c)).collect();
        let _ = writeln!(out, "may_flow_to = [{}]", hosts.join(", "));
    }

    for r in &config.rules {
        let _ = writeln!(out, "\n[[rule]]  {}", from(&r.origin));
        let _ = writeln!(out, "name = {}", q(&r.name));
        let _ = writeln!(out, "commit_point = {}", q(&r.commit_point));
        let when: Vec<_> = r
            .when
            .iter()
            .map(|(k, v)| format!("{} = {}", key(k), q(v)))
            .collect();
        let _ = writeln!(out, "when = {{ {} }}", when.join(", "));
        let _ = writeln!(out, "verdict = {}", q(&r.verdict));
    }
    for a in &config.approvals {
        let _ = writeln!(
            out,
            "\n[[approval]]  {}\naction = {}",
            from(&a.origin),
            q(&a.action)
        );
        if let Some(p) = &a.commit_point {
            let _ = writeln!(out, "commit_point = {}", q(p));
        }
        if let Some(e) = a.expires {
            let secs = e
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let _ = writeln!(out, "expires = {secs}  # unix seconds");
        }
    }
    if let Some(t) = &config.mcp_token_file {
        let _ = writeln!(
            out,
            "\n[mcp]\nhttp_token_file = {}  # from config",
            q(&t.to_string_lossy())
        );
    }
    let c = &config.checkpoints;
    let _ = writeln!(
        out,
        "\n[checkpoints]\nexclude = [{}]\nmax_mb = {}\nkeep = {}\nmax_age_days = {}\njournal = {}",
        c.exclude
            .iter()
            .map(|e| q(e))
            .collect::<Vec<_>>()
            .join(", "),
        c.max_mb,
        c.keep,
        c.max_age_days,
        c.journal
    );
    if !config.tasks.is_empty() {
        let _ = writeln!(out, "\n[tasks]");
        for t in config.tasks.values() {
            let _ = writeln!(out, "{} = {}  # from {}", key(&t.name), task(t), t.origin);
        }
    }
    let (c, h) = (&config.context, &config.history);
    let _ = writeln!(out, "\n[context]");
    shown(&mut out, "max_value_bytes", c.max_value_bytes, "1048576");
    shown(&mut out, "max_keys", c.max_keys, "1000");
    let _ = writeln!(out, "\n[history]");
    shown(&mut out, "max_entries", h.max_entries, "10000");
    shown(&mut out, "persist", h.persist, "true");
    let _ = writeln!(out, "\n[spec]");
    let _ = writeln!(
        out,
        "approval_mode = {}",
        q(config.spec_approval_mode.name())
    );
    for p in config.platforms.values() {
        let _ = writeln!(
            out,
            "\n[platforms.{}]  # from {}",
            key(&p.name),
            super::platforms::origin_text(p)
        );
        for (k, v) in [
            ("base_url", &p.base_url),
            ("token_env", &p.token_env),
            ("default_owner", &p.default_owner),
        ] {
            if let Some(v) = v {
                let _ = writeln!(out, "{k} = {}", q(v));
            }
        }
        if !p.allowed_domains.is_empty() {
            let list: Vec<String> = p.allowed_domains.iter().map(|d| q(d)).collect();
            let _ = writeln!(
                out,
                "allowed_domains = [{}]  # joined to [sandbox] network",
                list.join(", ")
            );
        }
    }
    verify_and_llm(&mut out, config);
    out
}

/// `[verify]` and `[llm]` (the API key's variable name only, never a key).
fn verify_and_llm(out: &mut String, config: &Config) {
    let (v, l) = (&config.verify, &config.llm);
    let _ = writeln!(out, "\n[verify]");
    shown(out, "fail_fast", v.fail_fast, "false");
    shown(out, "llm_judge_required", v.llm_judge_required, "true");
    let _ = writeln!(out, "\n[llm]");
    let text = |s: &Option<String>| s.as_deref().map(q);
    shown(
        out,
        "endpoint",
        text(&l.endpoint),
        "(none: llm_judge is unavailable)",
    );
    shown(out, "model", text(&l.model), "\"gpt-4o-mini\"");
    shown(
        out,
        "api_key_env",
        text(&l.api_key_env),
        "(none: no key is sent)",
    );
    shown(out, "timeout_ms", l.timeout_ms, "30000");
}

/// One task as an inline TOML value.
fn task(t: &safesh_tasks::Task) -> String {
    use safesh_tasks::TaskDef;
    let names = |n: &[String]| n.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
    let mut fields = match &t.def {
        TaskDef::Script(s) if t.description.is_none() => return q(s),
        TaskDef::Xrun(x) if t.description.is_none() => return q(&x.to_string()),
        TaskDef::Script(s) => vec![format!("script = {}", q(s))],
        TaskDef::Xrun(x) => vec![format!("script = {}", q(&x.to_string()))],
        TaskDef::Cmd(c) => {
            let mut f = vec![format!("cmd = {}", q(&c.cmd))];
            if !c.args.is_empty() {
                f.push(format!("args = [{}]", names(&c.args)));
            }
            if !c.env.is_empty() {
                let env: Vec<String> = c
                    .env
                    .iter()
                    .map(|(k, v)| format!("{} = {}", key(k), q(v)))
                    .collect();
                f.push(format!("env = {{ {} }}", env.join(", ")));
            }
            if let Some(d) = &c.cwd {
                f.push(format!("cwd = {}", q(d)));
            }
            f
        }
        TaskDef::Serial(n) => vec![format!("serial = [{}]", names(n))],
        TaskDef::Parallel(n) => vec![format!("parallel = [{}]", names(n))],
    };
    if let Some(d) = &t.description {
        fields.push(format!("description = {}", q(d)));
    }
    format!("{{ {} }}", fields.join(", "))
}

/// `key = value  # from config`, or the built-in value.
fn shown<T: std::fmt::Display>(out: &mut String, k: &str, v: Option<T>, builtin: &str) {
    let _ = match v {
        Some(v) => writeln!(out, "{k} = {v}  # from config"),
        None => writeln!(out, "{k} = {builtin}  # built-in"),
    };
}

fn rule(out: &mut String, header: &str, r: &CommandRule) {
    let origins: Vec<_> = r.origins.iter().map(|o| o.to_string()).collect();
    let _ = writeln!(out, "\n[{header}]  # from {}", origins.join(", "));
    match &r.matcher {
        NameMatcher::Name(_) => {}
        NameMatcher::Path(p) => {
            let _ = writeln!(out, "# matches the program {}", p.display());
        }
        NameMatcher::Glob(g) => {
            let _ = writeln!(out, "# matches programs {}", g.pattern);
        }
    }
    match &r.allow {
        None => {}
        Some(Allow::All) => {
            let _ = writeln!(out, "allow = true");
        }
        Some(Allow::Deny) => {
            let _ = writeln!(out, "allow = false  # a deny beats every allow");
        }
        Some(Allow::Subcommands(s)) => {
            let s: Vec<_> = s.iter().map(|c| q(c)).collect();
            let _ = writeln!(out, "allow = [{}]", s.join(", "));
        }
    }
    for (name, v) in [
        ("deny_flags", &r.deny_flags),
        ("require_flags", &r.require_flags),
        ("value_flags", &r.value_flags),
    ] {
        if !v.is_empty() {
            let s: Vec<_> = v.iter().map(|c| q(c)).collect();
            let _ = writeln!(out, "{name} = [{}]", s.join(", "));
        }
    }
    if !r.arg_patterns.is_empty() {
        let _ = writeln!(out, "arg_patterns = {{");
        for p in &r.arg_patterns {
            let _ = writeln!(
                out,
                "    {} = {},  {}",
                q(&p.flag),
                q(&p.written),
                from(&p.origin)
            );
        }
        let _ = writeln!(out, "}}");
    }
    for (name, v) in [("read", &r.read), ("write", &r.write), ("exec", &r.exec)] {
        if !v.is_empty() {
            list(
                out,
                name,
                v.iter()
                    .map(|g| (q(&g.pattern), g.written.as_str(), &g.origin)),
            );
        }
    }
    if let Some(n) = &r.network {
        let _ = writeln!(out, "network = {}", network(n));
    }
    for (name, sub) in &r.subcommands {
        rule(out, &format!("{header}.{}", key(name)), sub);
    }
}
