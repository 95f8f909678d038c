//! The agent faces, in-process: output shaping, sessions, jobs, JSON-RPC and MCP
//! (through rmcp's own client).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::new_without_default)]

#[path = "server/jobs.rs"]
mod jobs;
#[path = "server/mcp.rs"]
mod mcp;
#[path = "server/rpc.rs"]
mod rpc;
#[path = "server/runtime.rs"]
mod runtime;
#[path = "server/sessions.rs"]
mod sessions;
#[path = "server/shape.rs"]
mod shape;

use safesh_server::{Server, Settings};
use std::sync::Arc;

/// A project dir and a state dir, removed at the end of the test.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub settings: Settings,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("proj/sub")).unwrap();
        let settings = Settings::builtin(&root.join("proj"), &root.join("state")).unwrap();
        Env { dir, settings }
    }

    pub fn proj(&self) -> std::path::PathBuf {
        self.dir.path().canonicalize().unwrap().join("proj")
    }

    pub fn server(&self) -> Arc<Server> {
        Server::new(self.settings.clone())
    }
}

/// A server whose config is `config` (trusted as given, like `--config`).
pub fn server_with_config(env: &Env, config: &str) -> Arc<Server> {
    let root = env.dir.path().canonicalize().unwrap();
    let cfg = root.join("config.toml");
    std::fs::write(&cfg, config).unwrap();
    let opts = safesh_policy::config::LoadOptions {
        config_file: Some(cfg),
        cwd: env.proj(),
        home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        xdg_state_home: Some(root.join("state")),
        xdg_config_home: Some(root.join("state/no-config")),
        no_project: true,
    };
    let config = safesh_policy::config::load(&opts).unwrap();
    let mut settings = Settings::from_policy(safesh_policy::Policy::new(config));
    settings.state_dir = root.join("state");
    Server::new(settings)
}

/// Exec params from JSON.
pub fn params(v: serde_json::Value) -> safesh_server::exec::ExecParams {
    serde_json::from_value(v).unwrap()
}

/// Runs an exec with no interrupter hook.
pub fn exec(s: &Server, v: serde_json::Value) -> serde_json::Value {
    s.exec(&params(v), &|_| {}).unwrap()
}
