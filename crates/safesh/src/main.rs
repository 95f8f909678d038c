//! The `safesh` command line.
//!
//! ```text
//! safesh -c SCRIPT [NAME [ARG…]]   run SCRIPT (streams like bash, exits with its status)
//! safesh FILE [ARG…]               run a script file
//! safesh                           the REPL when stdin is a terminal, else the script on stdin
//! safesh run -- PROGRAM [ARG…]     run one command from an argv, no shell parsing
//! safesh code -e SOURCE | FILE.ts  run TypeScript/JavaScript (code mode)
//! safesh task NAME [ARG…]          run a task from [tasks] (see `safesh tasks`)
//! safesh spec validate|plan FILE    check or plan a project spec (project.agsh.yaml)
//! safesh COMMAND …                  check, config, explain, init, trust, doctor, audit,
//!                                   approvals, approve, deny, mcp, rpc, completions
//! ```
//!
//! The whole grammar is `args.rs` (clap): `safesh --help`, `safesh COMMAND --help`.

mod args;
mod cli;
mod code_cmd;
mod repl_cmd;
mod serve;
mod spec_cmd;
mod task_cmd;
mod task_progress;
mod tools;
mod tty_approval;
mod watch;

fn main() {
    let code = cli::main();
    std::process::exit(code);
}
