//! Task definitions as the config declares them.

use crate::xrun::{Xrun, parse_xrun};

/// One named task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Its name (the key in `[tasks]`).
    pub name: String,
    /// What it runs.
    pub def: TaskDef,
    /// What `safesh tasks` says about it.
    pub description: Option<String>,
    /// Where it was declared (`file:line`), for messages.
    pub origin: String,
}

/// What a task runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskDef {
    /// A bash script, run by safesh's interpreter; the task's arguments are `$@`.
    Script(String),
    /// One command line with its arguments, environment and directory.
    Cmd(CmdTask),
    /// Other tasks, one after another; the first failure stops the list.
    Serial(Vec<String>),
    /// Other tasks, all at once.
    Parallel(Vec<String>),
    /// An xrun list of task names (`"[lint, [-s, test, build]]"`).
    Xrun(Xrun),
}

impl TaskDef {
    /// A string task: an xrun list when the whole string parses as one, else a
    /// bash script (so `"[ -f x ] && make"` stays a script).
    pub fn from_string(text: &str) -> TaskDef {
        match parse_xrun(text) {
            Ok(x) => TaskDef::Xrun(x),
            Err(_) => TaskDef::Script(text.to_string()),
        }
    }
}

/// `{cmd, args, env, cwd}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CmdTask {
    /// The command line (shell words: `"cargo test"`).
    pub cmd: String,
    /// Arguments added after it, each one word (quoted, never expanded).
    pub args: Vec<String>,
    /// Environment variables it runs with, in order.
    pub env: Vec<(String, String)>,
    /// The directory it runs in (absolute: the config resolves it).
    pub cwd: Option<String>,
}

impl CmdTask {
    /// The script that runs it: `cd`, the exports, then the command with its
    /// arguments and the task's own (`"$@"`).
    pub fn script(&self) -> String {
        let mut s = String::new();
        if let Some(dir) = &self.cwd {
            s.push_str(&format!("cd -- {} || exit\n", crate::quote(dir)));
        }
        for (k, v) in &self.env {
            s.push_str(&format!("export {k}={}\n", crate::quote(v)));
        }
        s.push_str(&self.cmd);
        for a in &self.args {
            s.push(' ');
            s.push_str(&crate::quote(a));
        }
        s.push_str(" \"$@\"\n");
        s
    }
}

/// Whether `name` may be an environment variable name in `env` (checked by the
/// config, so the generated `export` is always one assignment).
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
