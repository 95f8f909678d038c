//! `safesh mcp` and `safesh rpc`: the model-facing servers (crates/server).

use safesh_server::{Server, Settings};
use std::io::Write;

const USAGE: &str = "usage: safesh [--config FILE] mcp [--http ADDR] [--token-file FILE] [--max-sessions N]\n       safesh [--config FILE] rpc [--max-sessions N]";

fn fail(msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(std::io::stderr(), "safesh: {msg}");
    2
}

/// The hidden mode a server re-executes this binary in to run one request
/// (`safesh_server::worker`). Not a user command: it speaks only the worker
/// protocol on its stdin/stdout.
pub const WORKER: &str = "__worker";

/// `safesh [--config FILE] __worker`: serves one request from the server that
/// started it; returns the exit status.
pub fn worker(config: Option<&str>) -> i32 {
    let policy = match crate::tools::load_policy_with(config, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    safesh_server::worker_main::serve(Settings::from_policy(policy))
}

/// How this server starts its workers: this binary, with the same config file.
fn worker_spawn(config: Option<&str>) -> Option<safesh_server::worker::WorkerSpawn> {
    let program = std::env::current_exe().ok()?;
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    if let Some(c) = config {
        // Absolute: the worker resolves it exactly as this process did.
        let path = std::path::absolute(c).ok()?;
        args.push("--config".into());
        args.push(path.into_os_string());
    }
    args.push(WORKER.into());
    Some(safesh_server::worker::WorkerSpawn { program, args })
}

/// Runs a server face; returns the exit status.
pub fn run(name: &str, args: &[String], config: Option<&str>) -> i32 {
    let mut http = None;
    let mut token_file = None;
    let mut max_sessions = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut value = |flag: &str| -> Result<String, i32> {
            if let Some((_, v)) = a.split_once('=') {
                return Ok(v.to_string());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| fail(format!("{name} {flag}: option requires an argument")))
        };
        match a {
            "-h" | "--help" => {
                let _ = writeln!(std::io::stdout(), "{USAGE}");
                return 0;
            }
            f if name == "mcp" && (f == "--http" || f.starts_with("--http=")) => {
                match value("--http") {
                    Ok(v) => http = Some(v),
                    Err(c) => return c,
                }
            }
            f if name == "mcp" && (f == "--token-file" || f.starts_with("--token-file=")) => {
                match value("--token-file") {
                    Ok(v) => token_file = Some(v),
                    Err(c) => return c,
                }
            }
            f if f == "--max-sessions" || f.starts_with("--max-sessions=") => {
                match value("--max-sessions").map(|v| v.parse::<usize>()) {
                    Ok(Ok(n)) if n > 0 => max_sessions = Some(n),
                    Ok(_) => return fail(format!("{name} --max-sessions: give a positive number")),
                    Err(c) => return c,
                }
            }
            other => return fail(format!("{name}: unknown option {other}\n{USAGE}")),
        }
        i += 1;
    }
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let token_path = token_file
        .map(std::path::PathBuf::from)
        .or_else(|| policy.config().mcp_token_file.clone());
    let mut settings = Settings::from_policy(policy);
    if let Some(n) = max_sessions {
        settings.max_sessions = n;
    }
    // Both faces run requests on threads with the interpreter's stack.
    settings.on_calling_thread = true;
    // Sessionless requests run in worker processes (the isolation model);
    // `SAFESH_IN_PROCESS=1` keeps them here (to measure the model's cost).
    if std::env::var_os("SAFESH_IN_PROCESS").is_none_or(|v| v != "1") {
        settings.worker = worker_spawn(config);
    }
    let server = Server::new(settings);
    if name == "rpc" {
        return safesh_server::rpc::serve_stdio(server);
    }
    safesh_server::mcp::run(server, http.as_deref(), token_path.as_deref())
}
