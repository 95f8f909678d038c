//! `safesh task` and `safesh tasks`: the task runner's command line.

use crate::args::TaskArgs;

/// `safesh task TASK [ARG…]`; returns the exit status.
pub fn run(_args: TaskArgs, _config: Option<&str>) -> i32 {
    2
}

/// `safesh tasks`; returns the exit status.
pub fn list(_config: Option<&str>, _json: bool) -> i32 {
    2
}
