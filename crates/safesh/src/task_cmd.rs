//! `safesh task` and `safesh tasks`: the task runner's command line.
//!
//! The plan comes from `safesh_tasks`; every script in it runs through its own
//! session exactly as `safesh -c` runs one (same policy, sandbox, labels and
//! approvals): a task is a script like any other, never a trusted bypass. Tasks
//! come only from applied config layers, so one defined only in an untrusted
//! project config does not exist here.

use crate::args::TaskArgs;
use safesh_core::{InputSource, OutputTarget, StreamConsumer, StreamKind};
use safesh_label::Label;
use safesh_policy::Policy;
use safesh_tasks::{Leaf, Plan, plan, plan_xrun};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// `safesh task TASK [ARG…]`; returns the exit status.
pub fn run(args: TaskArgs, config: Option<&str>) -> i32 {
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let tasks = &policy.config().tasks;
    let planned = if args.task.trim_start().starts_with('[') {
        plan_xrun(tasks, &args.task, &args.args)
    } else {
        plan(tasks, &args.task, &args.args)
    };
    let plan = match planned {
        Ok(p) => p,
        Err(e) => {
            let mut msg = format!("safesh: task: {e}");
            if let Some(ignored) = policy.config().sources.iter().find(|s| !s.applied) {
                msg.push_str(&format!(
                    "\n  ({} is not trusted, so its tasks are not loaded; see `safesh trust`)",
                    ignored.path.display()
                ));
            }
            let _ = writeln!(std::io::stderr(), "{msg}");
            return 2;
        }
    };
    // The write roots, where the project's files change; `/` (or no root at all)
    // would mean watching the whole machine: the working directory instead.
    let mut roots: Vec<std::path::PathBuf> = policy
        .config()
        .sandbox
        .write
        .iter()
        .map(|e| e.path.clone())
        .filter(|p| p.is_dir() && p.parent().is_some())
        .collect();
    if roots.is_empty() {
        roots.push(policy.config().base_dir.clone());
    }
    let runner = Runner {
        policy,
        progress: crate::task_progress::Progress::on_terminal(),
    };
    if args.watch {
        return crate::watch::watch(&roots, || runner.plan(&plan, false).0);
    }
    runner.plan(&plan, false).0
}

/// `safesh tasks`: the tasks with their descriptions; returns the exit status.
pub fn list(config: Option<&str>, json: bool) -> i32 {
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let tasks = &policy.config().tasks;
    let mut out = std::io::stdout().lock();
    if json {
        for t in tasks.values() {
            let v = serde_json::json!({
                "name": t.name,
                "description": t.description,
                "origin": t.origin,
            });
            let _ = writeln!(out, "{v}");
        }
        return 0;
    }
    if tasks.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "safesh: no tasks ([tasks] in safesh.toml)"
        );
        return 0;
    }
    let width = tasks.keys().map(|n| n.chars().count()).max().unwrap_or(0);
    for t in tasks.values() {
        let about = t.description.clone().unwrap_or_else(|| summary(&t.def));
        let _ = writeln!(out, "{:<width$}  {about}", t.name);
    }
    0
}

/// What a task without a description runs, on one line.
fn summary(def: &safesh_tasks::TaskDef) -> String {
    use safesh_tasks::TaskDef;
    let one_line = |s: &str| {
        let first = s.lines().next().unwrap_or_default();
        if s.lines().nth(1).is_some() {
            format!("{first} …")
        } else {
            first.to_string()
        }
    };
    match def {
        TaskDef::Script(s) => one_line(s),
        TaskDef::Cmd(c) => one_line(&c.cmd),
        TaskDef::Serial(n) => format!("serial: {}", n.join(", ")),
        TaskDef::Parallel(n) => format!("parallel: {}", n.join(", ")),
        TaskDef::Xrun(x) => x.to_string(),
    }
}

/// Runs plans with one policy.
struct Runner {
    policy: Policy,
    /// Status lines on a terminal.
    progress: Option<crate::task_progress::Progress>,
}

impl Runner {
    /// Runs `plan`; `prefixed`: output lines carry the task's name (it runs
    /// alongside others). Returns the status and the task that failed, if any.
    fn plan(&self, plan: &Plan, prefixed: bool) -> (i32, Option<String>) {
        match plan {
            Plan::Leaf(leaf) => {
                if let Some(p) = &self.progress {
                    p.start(&leaf.task);
                }
                let code = self.leaf(leaf, prefixed);
                if let Some(p) = &self.progress {
                    p.end(&leaf.task, code);
                }
                (code, (code != 0).then(|| leaf.task.clone()))
            }
            Plan::Serial(items) => {
                for item in items {
                    let (code, failed) = self.plan(item, prefixed);
                    if code != 0 {
                        return (code, failed);
                    }
                }
                (0, None)
            }
            Plan::Parallel(items) => {
                let results: Vec<(i32, Option<String>)> = std::thread::scope(|s| {
                    let handles: Vec<_> = items
                        .iter()
                        .map(|item| s.spawn(move || self.plan(item, true)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or((1, Some("?".into()))))
                        .collect()
                });
                // Every failure is reported; the status is the first's in list order.
                let mut first = (0, None);
                for (code, failed) in results {
                    if code == 0 {
                        continue;
                    }
                    let name = failed.clone().unwrap_or_default();
                    let _ = writeln!(
                        std::io::stderr(),
                        "safesh: task `{name}` failed with status {code}"
                    );
                    if first.0 == 0 {
                        first = (code, failed);
                    }
                }
                first
            }
        }
    }

    /// One script, through a session as `safesh -c` runs it.
    fn leaf(&self, leaf: &Leaf, prefixed: bool) -> i32 {
        let limits = crate::cli::limits_from(self.policy.config());
        // Scripts run alongside others get their own interpreter thread (the
        // main thread's stack is only raised for the main thread).
        let on_calling_thread = !prefixed && crate::cli::raise_stack_limit();
        let mut session = crate::cli::terminal_session(
            self.policy.clone(),
            limits,
            leaf.task.clone(),
            leaf.args.clone(),
            on_calling_thread,
            true,
        );
        if !prefixed {
            let outcome = session.exec(&leaf.script, InputSource::Inherit, OutputTarget::Inherit);
            let _ = std::io::stdout().flush();
            return outcome.exit_code;
        }
        let sink = Arc::new(Prefixed::new(&leaf.task));
        // Tasks running at once cannot share stdin.
        let outcome = session.exec(
            &leaf.script,
            InputSource::Empty,
            OutputTarget::Stream(sink.clone()),
        );
        sink.finish();
        outcome.exit_code
    }
}

/// Output of a task that runs alongside others: whole lines, each prefixed with
/// `[task] `, to this process's stdout or stderr.
struct Prefixed {
    prefix: String,
    partial: Mutex<[Vec<u8>; 2]>,
}

impl Prefixed {
    fn new(task: &str) -> Prefixed {
        Prefixed {
            prefix: format!("[{task}] "),
            partial: Mutex::new([Vec::new(), Vec::new()]),
        }
    }

    fn emit(&self, stream: StreamKind, lines: &[u8]) -> std::io::Result<()> {
        let mut text = Vec::with_capacity(lines.len() + 16);
        for line in lines.split_inclusive(|b| *b == b'\n') {
            text.extend_from_slice(self.prefix.as_bytes());
            text.extend_from_slice(line);
        }
        if !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        // One write per batch of lines: lines of tasks never interleave mid-line.
        match stream {
            StreamKind::Stdout => std::io::stdout().lock().write_all(&text),
            StreamKind::Stderr => std::io::stderr().lock().write_all(&text),
        }
    }

    /// Writes what is left of an unfinished last line.
    fn finish(&self) {
        let rest = match self.partial.lock() {
            Ok(mut p) => [std::mem::take(&mut p[0]), std::mem::take(&mut p[1])],
            Err(_) => return,
        };
        for (i, kind) in [StreamKind::Stdout, StreamKind::Stderr]
            .into_iter()
            .enumerate()
        {
            if !rest[i].is_empty() {
                let _ = self.emit(kind, &rest[i]);
            }
        }
        let _ = std::io::stdout().flush();
    }
}

impl StreamConsumer for Prefixed {
    fn write(&self, stream: StreamKind, data: &[u8], _label: &Label) -> std::io::Result<()> {
        let i = match stream {
            StreamKind::Stdout => 0,
            StreamKind::Stderr => 1,
        };
        let whole = {
            let mut p = self
                .partial
                .lock()
                .map_err(|_| std::io::Error::other("output lock poisoned"))?;
            p[i].extend_from_slice(data);
            match p[i].iter().rposition(|b| *b == b'\n') {
                Some(end) => {
                    let rest = p[i].split_off(end + 1);
                    std::mem::replace(&mut p[i], rest)
                }
                None => return Ok(()),
            }
        };
        self.emit(stream, &whole)
    }
}
