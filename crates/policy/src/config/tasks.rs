//! `[tasks]`: task definitions (the model is `safesh_tasks`).
//!
//! ```toml
//! [tasks]
//! lint = "cargo clippy -q"                        # a bash script
//! test = { cmd = "cargo test", args = ["-q"], env = { CI = "1" }, cwd = "crates", description = "unit tests" }
//! ci = { serial = ["lint", "test"], description = "what CI runs" }
//! dev = { parallel = ["watch", "serve"] }
//! all = "[lint, [-s, test, build]]"               # xrun: a list of task names
//! ```

use super::load::ConfigError;
use super::schema::{
    Cx, Val, as_string, as_strings, as_table, entries, key_str, resolve_path, unknown, wrong_type,
};
use safesh_tasks::{CmdTask, Task, TaskDef, is_env_name, is_task_name};
use toml::de::DeTable;

const S: &str = "[tasks]";
const TASK_KEYS: &[&str] = &[
    "cmd",
    "args",
    "env",
    "cwd",
    "description",
    "serial",
    "parallel",
];

/// Parses the `[tasks]` table of one file.
pub(crate) fn parse(cx: &Cx, t: &DeTable) -> Result<Vec<Task>, ConfigError> {
    let mut out = Vec::new();
    for (k, v) in entries(t) {
        let name = key_str(k).to_string();
        if !is_task_name(&name) {
            return Err(cx.err(
                k.span(),
                format!(
                    "`{name}` is not a task name (letters, digits and _ - : . / @ +, not starting with -)"
                ),
            ));
        }
        let origin = cx.origin(k.span());
        let origin = format!(
            "{}:{}",
            origin
                .file
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            origin.line
        );
        let (def, description) = match v.get_ref().as_str() {
            Some(text) => (TaskDef::from_string(text), None),
            None => table_task(cx, &name, v)?,
        };
        out.push(Task {
            name,
            def,
            description,
            origin,
        });
    }
    Ok(out)
}

/// `{cmd, args, env, cwd, description}`, `{serial}` or `{parallel}`.
fn table_task(cx: &Cx, name: &str, v: &Val) -> Result<(TaskDef, Option<String>), ConfigError> {
    let section = format!("[tasks.{name}]");
    let t = v.get_ref().as_table().ok_or_else(|| {
        wrong_type(
            cx,
            name,
            S,
            v,
            "a string (a script or an xrun list) or a table ({cmd…}, {serial…}, {parallel…})",
        )
    })?;
    let mut cmd = CmdTask::default();
    let (mut has_cmd, mut description, mut list) = (false, None, None);
    let mut cmd_only = None;
    for (k, v) in entries(t) {
        let key = key_str(k);
        match key {
            "cmd" => {
                cmd.cmd = as_string(cx, key, &section, v)?;
                if cmd.cmd.trim().is_empty() {
                    return Err(cx.err(v.span(), format!("`cmd` in {section} must not be empty")));
                }
                has_cmd = true;
            }
            "args" => {
                cmd.args = as_strings(cx, key, &section, v)?
                    .into_iter()
                    .map(|(s, _)| s)
                    .collect();
                cmd_only = Some(k.span());
            }
            "env" => {
                for (ek, ev) in entries(as_table(cx, key, &section, v)?) {
                    let var = key_str(ek);
                    if !is_env_name(var) {
                        return Err(cx.err(
                            ek.span(),
                            format!("`{var}` in {section} env is not a variable name"),
                        ));
                    }
                    cmd.env
                        .push((var.to_string(), as_string(cx, var, &section, ev)?));
                }
                cmd_only = Some(k.span());
            }
            "cwd" => {
                let w = as_string(cx, key, &section, v)?;
                let dir = resolve_path(cx.base, cx.home, &w).map_err(|m| cx.err(v.span(), m))?;
                cmd.cwd = Some(dir.display().to_string());
                cmd_only = Some(k.span());
            }
            "description" => description = Some(as_string(cx, key, &section, v)?),
            "serial" | "parallel" => {
                if list.is_some() {
                    return Err(cx.err(
                        k.span(),
                        format!("{section} has both `serial` and `parallel`: give one"),
                    ));
                }
                let mut names = Vec::new();
                for (n, span) in as_strings(cx, key, &section, v)? {
                    if !is_task_name(&n) {
                        return Err(
                            cx.err(span, format!("`{n}` in {section} {key} is not a task name"))
                        );
                    }
                    names.push(n);
                }
                if names.is_empty() {
                    return Err(cx.err(v.span(), format!("`{key}` in {section} is empty")));
                }
                list = Some(if key == "serial" {
                    TaskDef::Serial(names)
                } else {
                    TaskDef::Parallel(names)
                });
            }
            _ => return Err(unknown(cx, k, &section, TASK_KEYS)),
        }
    }
    let def = match (has_cmd, list) {
        (true, Some(_)) => {
            return Err(cx.err(
                v.span(),
                format!("{section} has `cmd` and a task list: give one"),
            ));
        }
        (true, None) => TaskDef::Cmd(cmd),
        (false, Some(l)) => {
            if let Some(span) = cmd_only {
                return Err(cx.err(
                    span,
                    format!("`args`, `env` and `cwd` in {section} need `cmd`"),
                ));
            }
            l
        }
        (false, None) => {
            return Err(cx.err(
                v.span(),
                format!("{section} needs `cmd`, `serial` or `parallel`"),
            ));
        }
    };
    Ok((def, description))
}
