//! The human-only tools of the command line: `check`, `config show`, `explain`,
//! `init`, `trust`, `untrust`, `doctor`, `audit`, `approve`, `deny` and
//! `approvals`, and loading the policy every run uses. A script can never run
//! them: `safesh` itself is on the policy's immutable blocklist.

use crate::args::{AuditArgs, CheckArgs, Command, ConfigAction, InitArgs};
use jiff::Timestamp;
use safesh_core::precheck::{Checked, Verdict};
use safesh_core::risk::Risk;
use safesh_core::{Session, SessionOptions};
use safesh_flow::control::{self, ControlError};
use safesh_policy::Policy;
use safesh_policy::config::{self, LoadOptions};
use safesh_store::{
    AUDIT_LOG, AuditLog, CommitPoint, Filter, Verdict as AuditVerdict, render_line,
};
use serde_json::json;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

/// Where the config layers are looked for, from this process's environment.
fn load_options(config_file: Option<&str>) -> LoadOptions {
    let env_path = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    LoadOptions {
        config_file: config_file.map(|f| cwd.join(f)),
        cwd,
        home: env_path("HOME"),
        xdg_state_home: env_path("XDG_STATE_HOME"),
        xdg_config_home: env_path("XDG_CONFIG_HOME"),
        no_project: false,
    }
}

/// Loads the merged config and builds the policy; prints warnings. On a bad
/// config prints the error and returns the exit status (2).
pub fn load_policy(config_file: Option<&str>) -> Result<Policy, i32> {
    load_policy_with(config_file, true)
}

/// [`load_policy`]; `warn: false` keeps the config's warnings to itself (a
/// server's worker: the server printed them once already).
pub fn load_policy_with(config_file: Option<&str>, warn: bool) -> Result<Policy, i32> {
    match config::load(&load_options(config_file)) {
        Ok(c) => {
            let mut err = std::io::stderr();
            for w in c.warnings.iter().filter(|_| warn) {
                let _ = writeln!(err, "{w}");
            }
            Ok(Policy::new(c))
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "safesh: config error: {e}");
            Err(2)
        }
    }
}

/// Runs one subcommand; returns the exit status. `json` is the top-level
/// `--json` (given before the subcommand).
pub fn run(cmd: Command, config_file: Option<&str>, json: bool) -> i32 {
    match cmd {
        Command::Check(a) => check(a, config_file, json),
        Command::Config(a) => config_cmd(a.action, config_file),
        Command::Explain(a) => explain(a.code.as_deref()),
        Command::Init(a) => init(a),
        Command::Trust(a) => trust(a.file.as_deref(), config_file, true),
        Command::Untrust(a) => trust(a.file.as_deref(), config_file, false),
        Command::Doctor(a) => doctor(json || a.json),
        Command::Mcp(a) => crate::serve::mcp(a, config_file),
        Command::Rpc(a) => crate::serve::rpc(a, config_file),
        Command::Audit(a) => audit(a, config_file, json),
        Command::Approve(a) => decide(&a.id, config_file, true),
        Command::Deny(a) => decide(&a.id, config_file, false),
        Command::Approvals(a) => approvals(config_file, json || a.json),
        Command::Task(a) => crate::task_cmd::run(a, config_file),
        Command::Tasks(a) => crate::task_cmd::list(config_file, json || a.json),
        Command::Completions(a) => completions(a.shell),
        Command::Commands(a) => commands(a, config_file, json),
        Command::Spec(a) => crate::spec_cmd::run(a, config_file, json),
        Command::Worker => crate::serve::worker(config_file),
        // Run by the caller (it runs through the same session as `-c`).
        Command::Run(_) | Command::Checkpoint(_) | Command::History(_) | Command::Code(_) => 2,
    }
}

/// `safesh commands [NAME]`: the catalogue (`commands.list`) or one
/// command's description (`commands.describe`), as a table or JSON.
fn commands(a: crate::args::CommandsArgs, config_file: Option<&str>, json: bool) -> i32 {
    let policy = match load_policy(config_file) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let mut out = std::io::stdout().lock();
    if let Some(name) = &a.name {
        let Some(v) = safesh_server::commands::describe(&policy, name) else {
            return fail(format!(
                "commands: no command named {name:?} (`safesh commands` lists them)"
            ));
        };
        if json || a.json {
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            );
            return 0;
        }
        let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
        let _ = writeln!(out, "{}  ({})", s("name"), s("kind"));
        let _ = writeln!(out, "{}", s("description"));
        if let Some(r) = v["risk"].as_str() {
            let _ = writeln!(out, "risk: {r}");
        }
        if let Some(c) = v["credentials"].as_array().filter(|c| !c.is_empty()) {
            for c in c {
                let _ = writeln!(
                    out,
                    "credential: ${} ({}; {})",
                    c["env"].as_str().unwrap_or(""),
                    c["config_key"].as_str().unwrap_or(""),
                    if c["set"] == json!(true) {
                        "set"
                    } else {
                        "not set"
                    }
                );
            }
        }
        if let Some(p) = v["input_schema"]["properties"].as_object() {
            let _ = writeln!(out, "arguments:");
            let required: Vec<&str> = v["input_schema"]["required"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            let order: Vec<&str> = v["input_schema"]["x-order"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            for k in order {
                let f = &p[k];
                let pos = if f["x-positional"] == json!(true) {
                    ", positional"
                } else {
                    ""
                };
                let req = if required.contains(&k) {
                    ", required"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "  --{k}{pos}{req}: {}",
                    f["description"].as_str().unwrap_or("")
                );
            }
        }
        if let Some(e) = v["example"].as_str() {
            let _ = writeln!(out, "example: {e}");
        }
        if v["callable"] == json!(false) {
            let _ = writeln!(
                out,
                "not callable here: {}: {}",
                v["reason"]["code"].as_str().unwrap_or(""),
                v["reason"]["message"].as_str().unwrap_or("")
            );
        }
        return 0;
    }
    let v = safesh_server::commands::list(&policy, a.namespace.as_deref());
    if json || a.json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        );
        return 0;
    }
    for c in v["commands"].as_array().into_iter().flatten() {
        let mark = if c["callable"] == json!(true) {
            " "
        } else {
            "!"
        };
        let mut line = format!(
            "{mark} {:<22} {:<9} {}",
            c["name"].as_str().unwrap_or(""),
            c["kind"].as_str().unwrap_or(""),
            c["description"].as_str().unwrap_or("")
        );
        if let Some(subs) = c["subcommands"].as_array() {
            let subs: Vec<&str> = subs.iter().filter_map(|s| s.as_str()).collect();
            line.push_str(&format!(" [subcommands: {}]", subs.join(", ")));
        }
        if let Some(r) = c["reason"]["code"].as_str() {
            line.push_str(&format!(" ({r})"));
        }
        let _ = writeln!(out, "{line}");
    }
    0
}

/// `safesh completions SHELL`: the completion script, generated from the same
/// grammar `--help` shows.
fn completions(shell: clap_complete::Shell) -> i32 {
    use clap::CommandFactory;
    let mut cmd = crate::args::Cli::command();
    clap_complete::generate(shell, &mut cmd, "safesh", &mut std::io::stdout());
    0
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(std::io::stderr(), "safesh: {msg}");
    2
}

fn check(args: CheckArgs, config_file: Option<&str>, json: bool) -> i32 {
    let json = json || args.json;
    let text = match (args.script, args.file) {
        (Some(t), _) => Some(t),
        (None, Some(f)) => match std::fs::read_to_string(&f) {
            Ok(t) => Some(t),
            Err(e) => return fail(format!("{f}: {e}")),
        },
        (None, None) => None,
    };
    let text = match text {
        Some(t) => t,
        None if !std::io::stdin().is_terminal() => {
            let mut t = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut t) {
                return fail(format!("reading stdin: {e}"));
            }
            t
        }
        None => return fail("check: give -c SCRIPT, a FILE, or the script on stdin"),
    };
    let policy = match load_policy(config_file) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let warnings = policy.config().warnings.clone();
    let session = Session::new(SessionOptions {
        policy: Some(policy),
        ..SessionOptions::default()
    });
    let assessed = match session.assess(&text) {
        Ok(c) => c,
        Err(r) => {
            if json {
                let v = json!({"schema_version": 1, "allowed": false, "commands": [], "error": r, "warnings": warnings});
                let _ = writeln!(std::io::stdout(), "{v}");
            } else {
                let _ = writeln!(std::io::stderr(), "safesh: {}: {}", r.code, r.message);
            }
            return 1;
        }
    };
    let allowed = !assessed
        .commands
        .iter()
        .any(|(c, _)| matches!(c.verdict, Verdict::Refuse(_)));
    let mut out = std::io::stdout();
    if json {
        let commands: Vec<_> = assessed
            .commands
            .iter()
            .map(|(c, r)| entry_json(c, *r))
            .collect();
        let v = json!({"schema_version": 1, "allowed": allowed, "risk": assessed.risk.name(),
            "writes": assessed.writes, "commands": commands, "warnings": warnings});
        let _ = writeln!(out, "{v}");
    } else {
        for (c, r) in &assessed.commands {
            let _ = writeln!(out, "{}", entry_line(c, *r));
        }
        let _ = writeln!(
            out,
            "{} (risk: {})",
            if allowed {
                "=> allowed (commands marked run-time are decided when reached)"
            } else {
                "=> refused: nothing in this script would run"
            },
            assessed.risk.name()
        );
    }
    if allowed { 0 } else { 1 }
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::RunTime => "run_time",
        Verdict::NotFound => "not_found",
        Verdict::Refuse(_) => "refuse",
    }
}

fn entry_json(c: &Checked, risk: Risk) -> serde_json::Value {
    json!({
        "risk": risk.name(),
        "line": c.line,
        "command": c.text,
        "argv": c.argv,
        "program": c.program,
        "verdict": verdict_name(&c.verdict),
        "refusal": match &c.verdict { Verdict::Refuse(r) => Some(r), _ => None },
    })
}

fn entry_line(c: &Checked, risk: Risk) -> String {
    let head = format!(
        "line {:>3}  {:<9} {}",
        c.line,
        verdict_name(&c.verdict),
        c.text
    );
    let mut s = entry_text(c, head);
    // The risk class ends the command's first line.
    let first = s.find('\n').unwrap_or(s.len());
    s.insert_str(first, &format!("  [{}]", risk.name()));
    s
}

fn entry_text(c: &Checked, head: String) -> String {
    match &c.verdict {
        Verdict::Refuse(r) => {
            let mut s = format!("{head}\n           {}: {}", r.code, r.message);
            if let Some(sug) = &r.suggestion {
                s.push_str(&format!("\n           suggestion: {sug}"));
            }
            s
        }
        Verdict::Allow => match &c.program {
            Some(p) => format!("{head}  ({p})"),
            None => head,
        },
        Verdict::RunTime => format!("{head}  (decided when reached)"),
        Verdict::NotFound => format!("{head}  (no such command: 127 when run)"),
    }
}

fn config_cmd(action: ConfigAction, config_file: Option<&str>) -> i32 {
    match action {
        ConfigAction::Show => match config::load(&load_options(config_file)) {
            Ok(c) => {
                let _ = write!(std::io::stdout(), "{}", config::render(&c));
                0
            }
            Err(e) => fail(format!("config error: {e}")),
        },
    }
}

fn explain(code: Option<&str>) -> i32 {
    let Some(code) = code else {
        let _ = writeln!(
            std::io::stdout(),
            "codes: {}",
            safesh_policy::explain::codes().join(" ")
        );
        return 0;
    };
    match safesh_policy::explain::explain(code) {
        Some(text) => {
            let _ = write!(std::io::stdout(), "{text}");
            0
        }
        None => fail(format!(
            "unknown code {code}; codes: {}",
            safesh_policy::explain::codes().join(" ")
        )),
    }
}

fn init(args: InitArgs) -> i32 {
    if let Some(name) = &args.template {
        return crate::spec_cmd::init_template(name, args.dir.as_deref(), args.force);
    }
    let force = args.force;
    let dir = args
        .dir
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let path = match safesh_policy::init::write(&dir, force) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let _ = writeln!(std::io::stdout(), "wrote {}", path.display());
    // The human ran `init` (safesh cannot run itself from a script): trust it.
    trust_path(&path, true)
}

fn trust(file: Option<&str>, config_file: Option<&str>, on: bool) -> i32 {
    let file = match file.or(config_file) {
        Some(f) => PathBuf::from(f),
        None => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            match config::find_project_file(&cwd) {
                Some(f) => f,
                None => {
                    return fail("no safesh.toml here or above; name the file: safesh trust FILE");
                }
            }
        }
    };
    trust_path(&file, on)
}

fn trust_path(file: &std::path::Path, on: bool) -> i32 {
    let Some(state) = config::state_dir(&load_options(None)) else {
        return fail("no state directory (set HOME or XDG_STATE_HOME)");
    };
    if on {
        match config::trust::trust_file(&state, file) {
            Ok(hash) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "trusted {} (sha256 {hash})",
                    file.display()
                );
                0
            }
            Err(e) => fail(format!("{}: {e}", file.display())),
        }
    } else {
        match config::trust::untrust_file(&state, file) {
            Ok(true) => {
                let _ = writeln!(std::io::stdout(), "no longer trusted: {}", file.display());
                0
            }
            Ok(false) => {
                let _ = writeln!(std::io::stdout(), "was not trusted: {}", file.display());
                0
            }
            Err(e) => fail(format!("{}: {e}", file.display())),
        }
    }
}

/// `safesh doctor`: which sandbox protections this host enforces.
fn doctor(json: bool) -> i32 {
    let caps = safesh_sandbox::probe();
    let mut out = std::io::stdout();
    if json {
        let _ = writeln!(out, "{}", serde_json::to_string(&caps).unwrap_or_default());
        return if caps.landlock.available { 0 } else { 1 };
    }
    let rows = [
        ("landlock", &caps.landlock),
        ("seccomp", &caps.seccomp),
        ("pid namespace", &caps.pid_ns),
        ("mount namespace", &caps.mount_ns),
        ("network namespace", &caps.net_ns),
        ("user namespace", &caps.user_ns),
        ("memory cgroup", &caps.cgroup_memory),
        ("pids cgroup", &caps.cgroup_pids),
    ];
    for (name, f) in rows {
        let mark = if f.available { "yes" } else { "NO " };
        let _ = writeln!(out, "{mark}  {name:<18} {}", f.note);
    }
    if caps.root {
        let _ = writeln!(
            out,
            "note: running as root; programs run with capabilities dropped (process counts are limited by the pids cgroup, not RLIMIT_NPROC)"
        );
    }
    if caps.landlock.available {
        let _ = writeln!(out, "=> external programs run sandboxed");
        0
    } else {
        let _ = writeln!(
            out,
            "=> Landlock is missing: external programs are refused (SANDBOX_UNAVAILABLE) unless [sandbox] allow_weaker = true"
        );
        1
    }
}

/// The state directory (`$XDG_STATE_HOME/safesh`), or the exit status after
/// saying why there is none.
fn state_dir_or_fail(config_file: Option<&str>) -> Result<PathBuf, i32> {
    config::state_dir(&load_options(config_file))
        .ok_or_else(|| fail1("no state directory (set HOME or XDG_STATE_HOME)"))
}

/// Prints `safesh: MSG` and returns 1 (a failure that is not a usage error).
fn fail1(msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(std::io::stderr(), "safesh: {msg}");
    1
}

/// `safesh audit …`: the commit-point decisions of the audit log, filtered.
fn audit(args: AuditArgs, config_file: Option<&str>, json: bool) -> i32 {
    let json = json || args.json;
    let mut filter = Filter {
        session: args.session,
        rule: args.rule,
        last: args.last,
        ..Filter::default()
    };
    let set = (|| -> Result<(), String> {
        if let Some(v) = &args.verdict {
            filter.verdict = Some(kebab::<AuditVerdict>(v).map_err(|e| format!("--verdict: {e}"))?);
        }
        if let Some(v) = &args.commit_point {
            filter.commit_point =
                Some(kebab::<CommitPoint>(v).map_err(|e| format!("--commit-point: {e}"))?);
        }
        if let Some(v) = &args.since {
            filter.since = Some(parse_since(v).map_err(|e| format!("--since: {e}"))?);
        }
        Ok(())
    })();
    if let Err(e) = set {
        return fail(format!("audit: {e}"));
    }
    let state = match state_dir_or_fail(config_file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let read = match AuditLog::read(&state, &filter) {
        Ok(r) => r,
        Err(e) => {
            return fail1(format!(
                "cannot read the audit log {}: {e}",
                state.join(AUDIT_LOG).display()
            ));
        }
    };
    let mut out = std::io::stdout().lock();
    for entry in &read.entries {
        let line = if json {
            serde_json::to_string(entry).unwrap_or_default()
        } else {
            render_line(entry)
        };
        if writeln!(out, "{line}").is_err() {
            // stdout closed (`| head`): nothing more to say.
            return 0;
        }
    }
    let _ = out.flush();
    if read.malformed > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "safesh: skipped {} malformed line{} in {}",
            read.malformed,
            if read.malformed == 1 { "" } else { "s" },
            state.join(AUDIT_LOG).display()
        );
    }
    0
}

/// A kebab-case enum value as the log writes it (`request-approval`).
fn kebab<T: serde::de::DeserializeOwned>(value: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(value.to_string()))
        .map_err(|_| format!("unknown value `{value}`"))
}

/// `--since`: an RFC 3339 time, a date (midnight UTC), or an age (`10m`).
fn parse_since(value: &str) -> Result<Timestamp, String> {
    if let Ok(t) = value.parse::<Timestamp>() {
        return Ok(t);
    }
    if let Ok(d) = value.parse::<jiff::civil::Date>() {
        return d
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(|e| e.to_string());
    }
    let bad = || format!("not a time: {value} (RFC 3339, a date, or an age like 10m)");
    let split = value.len().saturating_sub(1);
    let (n, unit) = (value.get(..split).ok_or_else(bad)?, value.get(split..));
    let n: i64 = n.parse().map_err(|_| bad())?;
    let secs = match unit {
        Some("s") => n,
        Some("m") => n.saturating_mul(60),
        Some("h") => n.saturating_mul(3600),
        Some("d") => n.saturating_mul(86_400),
        _ => return Err(bad()),
    };
    Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(secs))
        .map_err(|e| e.to_string())
}

/// `safesh approve ID` / `safesh deny ID`: decides a pending approval request in
/// the state store (its process may have exited), else in whichever running
/// safesh process holds it (over its control socket).
fn decide(id: &str, config_file: Option<&str>, approve: bool) -> i32 {
    let state = match state_dir_or_fail(config_file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let r = if approve {
        control::approve(&state, id)
    } else {
        control::deny(&state, id)
    };
    match r {
        Ok(done) => {
            let _ = writeln!(std::io::stdout(), "{done}");
            0
        }
        Err(ControlError::UnknownId(_)) => fail1(format!(
            "no pending approval request `{id}` (unknown, already decided, or expired; see `safesh approvals`)"
        )),
        Err(e) => fail1(e),
    }
}

/// The text of a string the control protocol quoted (Rust's `{:?}`), for
/// `--json`: `"a\"b\u{1b}"` → `a"b<ESC>`; anything else is returned as is.
fn unquote(q: &str) -> String {
    let Some(inner) = q.strip_prefix('"').and_then(|q| q.strip_suffix('"')) else {
        return q.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(c) => out.push(c),
                    None => out.push('\u{fffd}'),
                }
            }
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
    }
    out
}

/// `safesh approvals`: the pending approval requests of every running safesh
/// process.
fn approvals(config_file: Option<&str>, json: bool) -> i32 {
    let state = match state_dir_or_fail(config_file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let lines = match control::list(&state) {
        Ok(l) => l,
        Err(e) => return fail1(e),
    };
    let mut out = std::io::stdout().lock();
    let mut n = 0;
    for l in &lines {
        let Some(rest) = l.strip_prefix("pending ") else {
            continue;
        };
        n += 1;
        let mut f = rest.splitn(4, '\t');
        let (id, point, action, target) = (
            f.next().unwrap_or_default(),
            f.next().unwrap_or_default(),
            f.next().unwrap_or_default(),
            f.next().unwrap_or_default(),
        );
        let _ = if json {
            writeln!(
                out,
                "{}",
                json!({"id": id, "commit_point": point, "action": unquote(action), "target": unquote(target)})
            )
        } else {
            writeln!(out, "{id}  {point:<11} {action} -> {target}")
        };
    }
    if n == 0 {
        let _ = writeln!(std::io::stderr(), "safesh: no pending approval requests");
    } else if !json {
        let _ = writeln!(
            out,
            "approve with `safesh approve ID`, refuse with `safesh deny ID`"
        );
    }
    0
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn quoted_control_protocol_text_reads_back_exactly() {
        for s in [
            "rm keep1.txt",
            "a\"b\\c",
            "tab\there\nnl",
            "esc\u{1b}[2K bidi\u{202e}",
        ] {
            assert_eq!(unquote(&format!("{s:?}")), s);
        }
        assert_eq!(unquote("not quoted"), "not quoted");
    }
}
