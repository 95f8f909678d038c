//! The task runner's model (`[tasks]` in `safesh.toml`), without any I/O.
//!
//! A task is one of:
//! * a bash script (a string), run by safesh's interpreter like `safesh -c`;
//! * `{cmd, args, env, cwd, description}`: one command line, turned into a script;
//! * `{serial = [names…]}` / `{parallel = [names…]}`: other tasks, in order or at once;
//! * an xrun list (a string that parses *entirely* as an array of task names,
//!   `"[lint, [-s, test, build]]"`: an array runs in parallel, `-s` first makes it
//!   serial). Any other string, `"[ -f x ] && make"` included, is a script.
//!
//! [`plan`] resolves a task (or an xrun list given on the command line) into a
//! [`Plan`] tree of scripts, following references and refusing cycles. Running the
//! plan is the binary's job: every leaf is a script like any other, through the
//! same session, policy, sandbox and labels as `safesh -c`.

mod model;
mod plan;
mod xrun;

pub use model::{CmdTask, Task, TaskDef, is_env_name};
pub use plan::{Leaf, Plan, PlanError, plan, plan_xrun};
pub use xrun::{Xrun, XrunError, is_task_name, parse_xrun};

/// Quotes one word for the interpreter (single quotes; `'` as `'\''`).
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}
