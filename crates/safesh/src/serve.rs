//! `safesh mcp` and `safesh rpc`: the model-facing servers (crates/server).

use safesh_server::{Server, Settings};

use crate::args::{McpArgs, RpcArgs};

/// `safesh mcp`: the MCP face (stdio, or streamable HTTP); returns the exit status.
pub fn mcp(args: McpArgs, config: Option<&str>) -> i32 {
    let Some((server, config_token)) =
        server(config, args.max_sessions, args.max_transport_sessions)
    else {
        return 2;
    };
    let token_path = args
        .token_file
        .map(std::path::PathBuf::from)
        .or(config_token);
    let code = safesh_server::mcp::run(server, args.http.as_deref(), token_path.as_deref());
    end_of_server();
    code
}

/// A server's last step: its workers were told to end (their input closed);
/// give them a moment to exit and remove their temp dirs (they die with this
/// process otherwise, and the next server start sweeps what they left), then
/// remove this process's own.
fn end_of_server() {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < until {
        // SAFETY: reaps any exited child without blocking; no memory is passed.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if r < 0 {
            break; // no children left
        }
        if r == 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    safesh_core::remove_process_temp_dir();
}

/// `safesh rpc`: JSON-RPC 2.0 on stdin/stdout; returns the exit status.
pub fn rpc(args: RpcArgs, config: Option<&str>) -> i32 {
    let code = match server(config, args.max_sessions, None) {
        Some((server, _)) => safesh_server::rpc::serve_stdio(server),
        None => 2,
    };
    end_of_server();
    code
}

/// The server both faces run on, and the config's `[mcp] http_token_file` (None:
/// the config could not be loaded, said).
pub(crate) fn server(
    config: Option<&str>,
    max_sessions: Option<usize>,
    max_transport_sessions: Option<usize>,
) -> Option<(std::sync::Arc<Server>, Option<std::path::PathBuf>)> {
    let policy = crate::tools::load_policy(config).ok()?;
    let token = policy.config().mcp_token_file.clone();
    let mut settings = Settings::from_policy(policy);
    if let Some(n) = max_sessions {
        settings.max_sessions = n;
    }
    if let Some(n) = max_transport_sessions {
        settings.max_transport_sessions = n;
    }
    // Both faces run requests on threads with the interpreter's stack.
    settings.on_calling_thread = true;
    // Temp dirs of servers killed before they could clean up (kill -9) hold
    // RAM on /dev/shm: a server starting sweeps those whose owner is dead.
    safesh_core::sweep_dead_temp_dirs();
    safesh_core::use_process_temp_dir();
    // Sessionless requests run in worker processes (the isolation model);
    // `SAFESH_IN_PROCESS=1` keeps them here (to measure the model's cost).
    if std::env::var_os("SAFESH_IN_PROCESS").is_none_or(|v| v != "1") {
        settings.worker = worker_spawn(config);
    }
    Some((Server::new(settings), token))
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
    safesh_core::use_process_temp_dir();
    let code = safesh_server::worker_main::serve(Settings::from_policy(policy));
    safesh_core::remove_process_temp_dir();
    code
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
