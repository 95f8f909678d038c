//! The policy tools of the command line: `check`, `config show`, `explain`,
//! `init`, `trust` and `untrust`, and loading the policy every run uses.

use safesh_core::precheck::{Checked, Verdict};
use safesh_core::{Session, SessionOptions};
use safesh_policy::Policy;
use safesh_policy::config::{self, LoadOptions};
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
    match config::load(&load_options(config_file)) {
        Ok(c) => {
            let mut err = std::io::stderr();
            for w in &c.warnings {
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

/// Runs one tool; returns the exit status.
pub fn run(name: &str, args: &[String], config_file: Option<&str>, json: bool) -> i32 {
    match name {
        "check" => check(args, config_file, json),
        "config" => config_cmd(args, config_file),
        "explain" => explain(args),
        "init" => init(args),
        "trust" => trust(args, config_file, true),
        "untrust" => trust(args, config_file, false),
        "doctor" => doctor(json || args.iter().any(|a| a == "--json")),
        "mcp" | "rpc" => crate::serve::run(name, args, config_file),
        _ => 2,
    }
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(std::io::stderr(), "safesh: {msg}");
    2
}

fn check(args: &[String], config_file: Option<&str>, mut json: bool) -> i32 {
    let mut text = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--json" => json = true,
            "-c" => {
                i += 1;
                match args.get(i) {
                    Some(t) => text = Some(t.clone()),
                    None => return fail("check -c: option requires an argument"),
                }
            }
            f if !f.starts_with('-') && text.is_none() => match std::fs::read_to_string(f) {
                Ok(t) => text = Some(t),
                Err(e) => return fail(format!("{f}: {e}")),
            },
            other => return fail(format!("check: unknown option {other}")),
        }
        i += 1;
    }
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
    let checked = match session.check(&text) {
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
    let allowed = !checked
        .iter()
        .any(|c| matches!(c.verdict, Verdict::Refuse(_)));
    let mut out = std::io::stdout();
    if json {
        let commands: Vec<_> = checked.iter().map(entry_json).collect();
        let v = json!({"schema_version": 1, "allowed": allowed, "commands": commands, "warnings": warnings});
        let _ = writeln!(out, "{v}");
    } else {
        for c in &checked {
            let _ = writeln!(out, "{}", entry_line(c));
        }
        let _ = writeln!(
            out,
            "{}",
            if allowed {
                "=> allowed (commands marked run-time are decided when reached)"
            } else {
                "=> refused: nothing in this script would run"
            }
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

fn entry_json(c: &Checked) -> serde_json::Value {
    json!({
        "line": c.line,
        "command": c.text,
        "argv": c.argv,
        "program": c.program,
        "verdict": verdict_name(&c.verdict),
        "refusal": match &c.verdict { Verdict::Refuse(r) => Some(r), _ => None },
    })
}

fn entry_line(c: &Checked) -> String {
    let head = format!(
        "line {:>3}  {:<9} {}",
        c.line,
        verdict_name(&c.verdict),
        c.text
    );
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

fn config_cmd(args: &[String], config_file: Option<&str>) -> i32 {
    match args.first().map(String::as_str) {
        Some("show") | None => match config::load(&load_options(config_file)) {
            Ok(c) => {
                let _ = write!(std::io::stdout(), "{}", config::render(&c));
                0
            }
            Err(e) => fail(format!("config error: {e}")),
        },
        Some(other) => fail(format!(
            "config: unknown subcommand {other} (try `safesh config show`)"
        )),
    }
}

fn explain(args: &[String]) -> i32 {
    let Some(code) = args.first() else {
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

fn init(args: &[String]) -> i32 {
    let force = args.iter().any(|a| a == "--force");
    let dir = args
        .iter()
        .find(|a| !a.starts_with('-'))
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

fn trust(args: &[String], config_file: Option<&str>, on: bool) -> i32 {
    let file = match args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
        .or(config_file)
    {
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
