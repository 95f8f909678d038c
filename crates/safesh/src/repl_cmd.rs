//! `safesh` with a terminal on stdin: the REPL (crates/repl). This module only
//! builds what the REPL needs from the command line's pieces — the session
//! `safesh -c` would get (same policy, limits, approvals on the terminal), the
//! history file in the state dir, the names to complete, and `task` run by the
//! task runner — and hands over.

use crate::args::{Cli, ExecOpts, TaskArgs};
use safesh_policy::config::Allow;

/// The subcommands for `help` (listed only when `help` runs).
fn subcommands() -> Vec<(String, String)> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            (c.get_name().to_string(), about)
        })
        .collect()
}

/// Makes `help` list the subcommands (a function pointer: nothing is built
/// until `help` runs, so `safesh -c` starts as fast as before).
pub(crate) fn register_help() {
    safesh_core::builtins::add_help_section(
        "safesh commands (safesh NAME ..., `safesh NAME --help`; `task` also runs in the REPL)",
        "safesh NAME ...  (`safesh NAME --help` for its options)",
        subcommands,
    );
}

/// Runs the REPL; returns the status to exit with.
pub(crate) fn run(exec: ExecOpts, config: Option<&str>) -> i32 {
    register_help();
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut limits = crate::cli::limits_from(policy.config());
    if let Some(t) = exec.timeout_ms {
        limits.script_timeout_ms = t;
    }
    let c = policy.config();
    let history_file = c.state_dir.as_deref().map(safesh_repl::history::file_in);
    let tasks: Vec<String> = c.tasks.keys().cloned().collect();
    // Programs by name (path rules such as "./target/debug/*" are not names).
    let programs: Vec<String> = c
        .commands
        .iter()
        .filter(|r| matches!(r.allow, Some(Allow::All | Allow::Subcommands(_))))
        .map(|r| r.key.clone())
        .filter(|k| !k.contains(['/', '*', '?', '[']))
        .collect();
    let read_roots = policy.read_roots().to_vec();
    let mut session = crate::cli::terminal_session(
        policy,
        limits,
        "safesh".into(),
        Vec::new(),
        crate::cli::raise_stack_limit(),
        true,
    );
    session.set_force(exec.force);
    // Lines typed at a prompt: an error bash -c exits on abandons the line.
    session.set_script_is_string(false);
    let config_file = config.map(str::to_string);
    let task = safesh_repl::ReplCommand {
        name: "task".into(),
        run: Box::new(move |args: &[String]| match args.split_first() {
            None => crate::task_cmd::list(config_file.as_deref(), false),
            Some((name, rest)) => crate::task_cmd::run(
                TaskArgs {
                    watch: false,
                    task: name.clone(),
                    args: rest.to_vec(),
                },
                config_file.as_deref(),
            ),
        }),
    };
    let opts = safesh_repl::ReplOptions {
        history_file,
        tasks,
        programs,
        read_roots,
        commands: vec![task],
        ..safesh_repl::ReplOptions::default()
    };
    match safesh_repl::run(session, opts) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("safesh: {e}");
            1
        }
    }
}
