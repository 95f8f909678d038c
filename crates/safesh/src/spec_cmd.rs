//! `safesh spec validate FILE`, `safesh spec plan FILE [--param k=v]` and
//! `safesh init --template=NAME`: project specs (crates/spec) on the command
//! line, with each step's risk decided by the real policy (core's pre-run pass,
//! the same one `safesh check` shows).

use crate::args::{SpecAction, SpecArgs, SpecFileArgs, SpecHashArgs, SpecPlanArgs};
use safesh_core::{ErrorCode, Session, SessionOptions};
use safesh_server::project_face::PolicyOracle;
use safesh_spec::templates::{self, SPEC_FILE};
use safesh_spec::{Plan, SpecError};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `safesh spec ACTION`; returns the exit status (0 fine, 1 invalid or
/// refused, 2 usage).
pub fn run(a: SpecArgs, config_file: Option<&str>, json: bool) -> i32 {
    match a.action {
        SpecAction::Validate(v) => {
            let json = json || v.json;
            validate(v, json)
        }
        SpecAction::Plan(p) => {
            let json = json || p.json;
            plan(p, config_file, json)
        }
        SpecAction::Run(p) => {
            let json = json || p.json;
            run_spec(p, config_file, json)
        }
        SpecAction::Approve(h) => {
            let json = json || h.json;
            approve(h, config_file, json)
        }
    }
}

fn out(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn err(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "safesh: {line}");
}

fn error_json(e: &SpecError) -> serde_json::Value {
    json!({
        "file": e.file,
        "line": e.position.map(|p| p.0),
        "column": e.position.map(|p| p.1),
        "path": e.path,
        "code": ErrorCode::InvalidSpec.as_str(),
        "message": e.message,
        "text": e.to_string(),
    })
}

/// Reports a spec error (INVALID_SPEC, status 2 as its contract says).
fn spec_failed(e: &SpecError, json: bool) -> i32 {
    if json {
        out(json!({"valid": false, "error": error_json(e)}));
    } else {
        err(format!("{}: {e}", ErrorCode::InvalidSpec));
    }
    ErrorCode::InvalidSpec.status()
}

fn validate(a: SpecFileArgs, json_out: bool) -> i32 {
    match safesh_spec::load(Path::new(&a.file)) {
        Ok(spec) => {
            if json_out {
                out(json!({"valid": true, "spec": spec}));
            } else {
                out(format!(
                    "{}: valid spec {:?}: {} step(s), {} param(s), {} success criteria",
                    a.file,
                    spec.meta.name,
                    spec.steps.len(),
                    spec.params.len(),
                    spec.success_criteria.len()
                ));
            }
            0
        }
        Err(e) => spec_failed(&e, json_out),
    }
}

fn plan(a: SpecPlanArgs, config_file: Option<&str>, json_out: bool) -> i32 {
    let path = Path::new(&a.file);
    let spec = match safesh_spec::load(path) {
        Ok(s) => s,
        Err(e) => return spec_failed(&e, json_out),
    };
    let mut given = BTreeMap::new();
    for p in &a.params {
        match safesh_spec::parse_assignment(p) {
            Ok((k, v)) => {
                given.insert(k, v);
            }
            Err(m) => {
                err(m);
                return 2;
            }
        }
    }
    let policy = match crate::tools::load_policy(config_file) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Steps run in the spec's directory: decide them there.
    let dir = spec_dir(path);
    let session = Session::new(SessionOptions {
        policy: Some(policy),
        cwd: dir,
        ..SessionOptions::default()
    });
    let oracle = PolicyOracle { session };
    let plan = match safesh_spec::plan(&spec, &a.file, &given, &safesh_spec::today_utc(), &oracle) {
        Ok(p) => p,
        Err(e) => return spec_failed(&e, json_out),
    };
    if json_out {
        out(serde_json::to_value(&plan).unwrap_or_default());
    } else {
        print_plan(&plan);
    }
    if plan.refused {
        ErrorCode::PlanRefused.status()
    } else {
        0
    }
}

fn spec_dir(path: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match abs.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    }
}

fn print_plan(p: &Plan) {
    let _ = std::io::stdout().write_all(safesh_spec::render(p).as_bytes());
}

/// `safesh init --template=NAME [DIR] [--force]`: writes only `DIR/project.agsh.yaml`.
pub fn init_template(name: &str, dir: Option<&str>, force: bool) -> i32 {
    let env_path = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let user = templates::user_dir(
        env_path("XDG_CONFIG_HOME").as_deref(),
        env_path("HOME").as_deref(),
    );
    let (text, source) = match templates::find(name, user.as_deref()) {
        Ok(t) => t,
        Err(m) => {
            err(format!("init: {m}"));
            return 2;
        }
    };
    let from = match &source {
        templates::Source::Builtin => format!("template {name}"),
        templates::Source::User(p) => format!("template {name} ({})", p.display()),
    };
    // A user template must be a valid spec before it becomes the project's.
    if let Err(e) = safesh_spec::parse(&text, &from) {
        err(format!("init: {e}"));
        return 1;
    }
    let dir = dir
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let path = dir.join(SPEC_FILE);
    if path.symlink_metadata().is_ok() && !force {
        err(format!(
            "init: {} exists (use --force to overwrite it)",
            path.display()
        ));
        return 1;
    }
    // Replace, never write through: a symlink named project.agsh.yaml is removed,
    // not followed.
    if path.symlink_metadata().is_ok()
        && let Err(e) = std::fs::remove_file(&path)
    {
        err(format!("init: {}: {e}", path.display()));
        return 1;
    }
    if let Err(e) = std::fs::write(&path, text) {
        err(format!("init: {}: {e}", path.display()));
        return 1;
    }
    out(format!("wrote {} from {from}", path.display()));
    0
}

/// `safesh spec run FILE [--param k=v]`: runs the spec in its directory through
/// the server's project face (the same path as JSON-RPC `project.run`); 0 when
/// every step and the success criteria passed, 1 otherwise.
fn run_spec(a: SpecPlanArgs, config_file: Option<&str>, json_out: bool) -> i32 {
    let path = Path::new(&a.file);
    let Ok(abs) = std::fs::canonicalize(path) else {
        err(format!("{}: no such file", a.file));
        return 2;
    };
    let mut params = BTreeMap::new();
    for p in &a.params {
        match safesh_spec::parse_assignment(p) {
            Ok((k, v)) => {
                params.insert(k, serde_json::Value::String(v));
            }
            Err(m) => {
                err(m);
                return 2;
            }
        }
    }
    // The steps run in the spec's directory (its safesh.toml, its write roots).
    let config = config_file.map(|c| {
        std::fs::canonicalize(c)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| c.to_string())
    });
    if let Err(e) = std::env::set_current_dir(spec_dir(&abs)) {
        err(format!("{}: {e}", spec_dir(&abs).display()));
        return 2;
    }
    let Some((server, _)) = crate::serve::server(config.as_deref(), None, None) else {
        return 2;
    };
    let approver = terminal_approver(json_out);
    let p = safesh_server::project_face::ProjectParams {
        path: Some(abs.display().to_string()),
        params,
        ..Default::default()
    };
    let report = match server.run_spec(&p, "cli", Some("cli"), &|_| {}, approver) {
        Ok(v) => v,
        Err(e) => {
            err(e);
            return 2;
        }
    };
    if json_out {
        out(&report);
    } else {
        print_report(&report);
    }
    run_status(&report)
}

/// A run's exit status: 0 passed; a code that stopped it before anything ran
/// (INVALID_SPEC 2, PLAN_REFUSED, PLAN_CHANGED, PLAN_REJECTED 126) gives its
/// contract status; any other failure (a step, the criteria, an approval still
/// to come) 1.
fn run_status(report: &serde_json::Value) -> i32 {
    if report["passed"].as_bool() == Some(true) {
        return 0;
    }
    match report["error"]["code"].as_str() {
        Some("INVALID_SPEC") => ErrorCode::InvalidSpec.status(),
        Some("PLAN_REFUSED") => ErrorCode::PlanRefused.status(),
        Some("PLAN_CHANGED") => ErrorCode::PlanChanged.status(),
        Some("PLAN_REJECTED") => ErrorCode::PlanRejected.status(),
        _ => 1,
    }
}

fn print_report(r: &serde_json::Value) {
    out(format!(
        "spec {} (plan {})",
        r["spec"].as_str().unwrap_or("?"),
        r["hash"].as_str().map_or("?", |h| &h[..12.min(h.len())])
    ));
    if let Some(a) = r["approval"].as_str() {
        out(format!("approval: {a}"));
    }
    if let Some(steps) = r["pipeline"]["steps"].as_array() {
        for (i, s) in steps.iter().enumerate() {
            let code = s["exit_code"].as_i64().unwrap_or(-1);
            let verified = match s["verification"]["passed"].as_bool() {
                Some(true) => ", verified",
                Some(false) => ", VERIFICATION FAILED",
                None => "",
            };
            out(format!("step {}: exit {code}{verified}", i + 1));
            if let Some(e) = s["error"]["code"].as_str() {
                out(format!(
                    "  {e}: {}",
                    s["error"]["message"].as_str().unwrap_or("")
                ));
            }
        }
    }
    if let Some(o) = r["output"]["path"].as_str() {
        out(format!("output: {o}"));
    }
    if let Some(results) = r["success_criteria"]["results"].as_array() {
        for c in results {
            out(format!(
                "criterion {}: {} ({})",
                c["type"].as_str().unwrap_or("?"),
                if c["passed"].as_bool() == Some(true) {
                    "passed"
                } else {
                    "FAILED"
                },
                c["detail"].as_str().unwrap_or("")
            ));
        }
    }
    if r["rolled_back"].as_bool() == Some(true) {
        out("rolled back to the checkpoint taken before the run");
    }
    if let Some(code) = r["error"]["code"].as_str() {
        err(format!(
            "{code}: {}",
            r["error"]["message"].as_str().unwrap_or("")
        ));
        if let Some(s) = r["error"]["suggestion"].as_str() {
            err(format!("suggestion: {s}"));
        }
    }
    out(if r["passed"].as_bool() == Some(true) {
        "=> passed"
    } else if r["ran"].as_bool() == Some(true) {
        "=> failed"
    } else {
        "=> not run"
    });
}

/// `safesh spec approve HASH`: approves a kept plan on this terminal (a human
/// act), or gives the id for `safesh approve ID`. 0 approved, 1 not (the
/// error's code says why), 2 usage.
fn approve(a: SpecHashArgs, config_file: Option<&str>, json_out: bool) -> i32 {
    if !safesh_spec::kept::is_plan_hash(&a.hash) {
        err(format!(
            "spec approve: {:?} is not a plan hash (64 hex digits, from safesh spec plan or project.plan)",
            a.hash
        ));
        return 2;
    }
    let Some((server, _)) = crate::serve::server(config_file, None, None) else {
        return 2;
    };
    let approver = terminal_approver(json_out);
    let p = safesh_server::project_face::ProjectParams {
        hash: Some(a.hash.clone()),
        ..Default::default()
    };
    let v = match server.project("approve", p, "cli", Some("cli"), &|_| {}, approver) {
        Ok(v) => v,
        Err(e) => {
            err(format!("spec approve: {e}"));
            return 1;
        }
    };
    if json_out {
        out(&v);
    } else if v["approved"] == json!(true) {
        out(format!(
            "plan {} approved: {}",
            &a.hash[..12],
            v["how"].as_str().unwrap_or("")
        ));
    } else {
        err(format!(
            "{}: {}",
            v["error"]["code"].as_str().unwrap_or("?"),
            v["error"]["message"].as_str().unwrap_or("")
        ));
        if let Some(s) = v["error"]["suggestion"].as_str() {
            err(format!("suggestion: {s}"));
        }
    }
    if v["approved"] == json!(true) { 0 } else { 1 }
}

/// The terminal's approval prompt, unless the output is JSON for a program
/// (then approvals are pending ids, as on any model-facing face).
fn terminal_approver(json_out: bool) -> Option<std::sync::Arc<dyn safesh_core::ApprovalChannel>> {
    if json_out {
        return None;
    }
    crate::tty_approval::TerminalApprover::open()
        .map(|t| std::sync::Arc::new(t) as std::sync::Arc<dyn safesh_core::ApprovalChannel>)
}
