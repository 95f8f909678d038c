//! Resolving a task into the tree of scripts that runs it.

use crate::model::{Task, TaskDef};
use crate::xrun::{Xrun, XrunError, parse_xrun};
use std::collections::BTreeMap;

/// One script to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// The task it comes from (the prefix of its output when run in parallel).
    pub task: String,
    /// The bash script.
    pub script: String,
    /// Its arguments (`$@`).
    pub args: Vec<String>,
}

/// What running a task does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run one script.
    Leaf(Leaf),
    /// Run these one after another; the first failure stops the rest.
    Serial(Vec<Plan>),
    /// Run these at once; every failure is reported.
    Parallel(Vec<Plan>),
}

impl Plan {
    /// Every leaf, in list order.
    pub fn leaves(&self) -> Vec<&Leaf> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match p {
                Plan::Leaf(l) => out.push(l),
                Plan::Serial(items) | Plan::Parallel(items) => stack.extend(items.iter().rev()),
            }
        }
        out
    }
}

/// Why a task cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// No task of that name.
    #[error("no task named `{name}`{}", from.as_ref().map(|f| format!(" (named in task `{f}`)")).unwrap_or_default())]
    Unknown {
        /// The missing name.
        name: String,
        /// The task that refers to it, if any.
        from: Option<String>,
    },
    /// The tasks refer to each other in a loop.
    #[error("tasks refer to each other in a cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
    /// The plan would hold too many scripts (a reference graph that blows up).
    #[error("task `{0}` expands to more than {MAX_LEAVES} scripts")]
    TooBig(String),
    /// A task list given on the command line does not parse.
    #[error(transparent)]
    Xrun(#[from] XrunError),
}

/// Most scripts one plan may hold (shared references are expanded each time).
pub const MAX_LEAVES: usize = 10_000;

/// The plan for the task `name`, with `args` as every script's `$@`.
pub fn plan(
    tasks: &BTreeMap<String, Task>,
    name: &str,
    args: &[String],
) -> Result<Plan, PlanError> {
    let mut r = Resolver {
        tasks,
        args,
        stack: Vec::new(),
        leaves: 0,
        root: name.to_string(),
    };
    r.task(name, None)
}

/// The plan for an xrun list given as text (`'[a, [-s, b, c]]'`).
pub fn plan_xrun(
    tasks: &BTreeMap<String, Task>,
    text: &str,
    args: &[String],
) -> Result<Plan, PlanError> {
    let list = parse_xrun(text)?;
    let mut r = Resolver {
        tasks,
        args,
        stack: Vec::new(),
        leaves: 0,
        root: text.to_string(),
    };
    r.xrun(&list, None)
}

struct Resolver<'a> {
    tasks: &'a BTreeMap<String, Task>,
    args: &'a [String],
    /// The tasks being resolved, outermost first (a repeat is a cycle).
    stack: Vec<String>,
    leaves: usize,
    root: String,
}

impl Resolver<'_> {
    fn task(&mut self, name: &str, from: Option<&str>) -> Result<Plan, PlanError> {
        if let Some(i) = self.stack.iter().position(|n| n == name) {
            let mut cycle = self.stack[i..].to_vec();
            cycle.push(name.to_string());
            return Err(PlanError::Cycle(cycle));
        }
        let task = self.tasks.get(name).ok_or_else(|| PlanError::Unknown {
            name: name.to_string(),
            from: from.map(str::to_string),
        })?;
        self.stack.push(name.to_string());
        let plan = match &task.def {
            TaskDef::Script(s) => self.leaf(name, s.clone()),
            TaskDef::Cmd(c) => self.leaf(name, c.script()),
            TaskDef::Serial(names) => Ok(Plan::Serial(self.names(names, name)?)),
            TaskDef::Parallel(names) => Ok(Plan::Parallel(self.names(names, name)?)),
            TaskDef::Xrun(x) => self.xrun(x, Some(name)),
        };
        self.stack.pop();
        plan
    }

    fn names(&mut self, names: &[String], from: &str) -> Result<Vec<Plan>, PlanError> {
        names.iter().map(|n| self.task(n, Some(from))).collect()
    }

    fn xrun(&mut self, x: &Xrun, from: Option<&str>) -> Result<Plan, PlanError> {
        match x {
            Xrun::Name(n) => self.task(n, from),
            Xrun::Serial(items) => Ok(Plan::Serial(
                items
                    .iter()
                    .map(|i| self.xrun(i, from))
                    .collect::<Result<_, _>>()?,
            )),
            Xrun::Parallel(items) => Ok(Plan::Parallel(
                items
                    .iter()
                    .map(|i| self.xrun(i, from))
                    .collect::<Result<_, _>>()?,
            )),
        }
    }

    fn leaf(&mut self, name: &str, script: String) -> Result<Plan, PlanError> {
        self.leaves += 1;
        if self.leaves > MAX_LEAVES {
            return Err(PlanError::TooBig(self.root.clone()));
        }
        Ok(Plan::Leaf(Leaf {
            task: name.to_string(),
            script,
            args: self.args.to_vec(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CmdTask;

    fn tasks(defs: &[(&str, TaskDef)]) -> BTreeMap<String, Task> {
        defs.iter()
            .map(|(n, d)| {
                (
                    n.to_string(),
                    Task {
                        name: n.to_string(),
                        def: d.clone(),
                        description: None,
                        origin: "test".into(),
                    },
                )
            })
            .collect()
    }

    fn leaf(task: &str, script: &str) -> Plan {
        Plan::Leaf(Leaf {
            task: task.into(),
            script: script.into(),
            args: vec![],
        })
    }

    #[test]
    fn references_and_xrun_strings_resolve() {
        let t = tasks(&[
            ("lint", TaskDef::from_string("echo lint")),
            ("test", TaskDef::from_string("echo test")),
            ("build", TaskDef::from_string("echo build")),
            ("all", TaskDef::from_string("[lint, [-s, test, build]]")),
            ("ci", TaskDef::Serial(vec!["all".into(), "lint".into()])),
        ]);
        assert_eq!(
            plan(&t, "ci", &[]),
            Ok(Plan::Serial(vec![
                Plan::Parallel(vec![
                    leaf("lint", "echo lint"),
                    Plan::Serial(vec![leaf("test", "echo test"), leaf("build", "echo build")])
                ]),
                leaf("lint", "echo lint"),
            ]))
        );
        assert_eq!(
            plan_xrun(&t, "[-s, build, test]", &[]),
            Ok(Plan::Serial(vec![
                leaf("build", "echo build"),
                leaf("test", "echo test")
            ]))
        );
    }

    #[test]
    fn a_bracket_script_is_a_script() {
        let t = tasks(&[("x", TaskDef::from_string("[ -f x ] && make"))]);
        assert_eq!(plan(&t, "x", &[]), Ok(leaf("x", "[ -f x ] && make")));
    }

    #[test]
    fn args_reach_every_script() {
        let t = tasks(&[("x", TaskDef::from_string("echo \"$@\""))]);
        let p = plan(&t, "x", &["a b".into()]);
        assert_eq!(
            p.map(|p| p
                .leaves()
                .iter()
                .map(|l| l.args.clone())
                .collect::<Vec<_>>()),
            Ok(vec![vec!["a b".to_string()]])
        );
    }

    #[test]
    fn cycles_are_refused_with_the_loop_named() {
        let t = tasks(&[
            ("a", TaskDef::Serial(vec!["b".into()])),
            ("b", TaskDef::from_string("[c, x]")),
            ("c", TaskDef::Parallel(vec!["a".into()])),
            ("x", TaskDef::from_string("true")),
            ("self", TaskDef::from_string("[self]")),
        ]);
        let e = plan(&t, "a", &[]);
        assert_eq!(
            e,
            Err(PlanError::Cycle(vec![
                "a".into(),
                "b".into(),
                "c".into(),
                "a".into()
            ]))
        );
        assert_eq!(
            e.err().map(|e| e.to_string()).as_deref(),
            Some("tasks refer to each other in a cycle: a -> b -> c -> a")
        );
        assert!(matches!(plan(&t, "self", &[]), Err(PlanError::Cycle(_))));
        assert!(matches!(
            plan_xrun(&t, "[x, [-s, a]]", &[]),
            Err(PlanError::Cycle(_))
        ));
    }

    #[test]
    fn a_shared_reference_is_not_a_cycle() {
        let t = tasks(&[
            ("x", TaskDef::from_string("true")),
            ("d", TaskDef::from_string("[x, x]")),
        ]);
        assert_eq!(plan(&t, "d", &[]).map(|p| p.leaves().len()), Ok(2));
    }

    #[test]
    fn an_exploding_graph_is_refused() {
        let mut defs = vec![("t0".to_string(), TaskDef::from_string("true"))];
        for i in 1..30 {
            let p = format!("t{}", i - 1);
            defs.push((format!("t{i}"), TaskDef::Parallel(vec![p.clone(), p])));
        }
        let defs: Vec<(&str, TaskDef)> =
            defs.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
        assert!(matches!(
            plan(&tasks(&defs), "t29", &[]),
            Err(PlanError::TooBig(_))
        ));
    }

    #[test]
    fn unknown_names_say_who_named_them() {
        let t = tasks(&[("a", TaskDef::from_string("[b]"))]);
        assert_eq!(
            plan(&t, "a", &[]).err().map(|e| e.to_string()).as_deref(),
            Some("no task named `b` (named in task `a`)")
        );
        assert_eq!(
            plan(&t, "zz", &[]).err().map(|e| e.to_string()).as_deref(),
            Some("no task named `zz`")
        );
    }

    #[test]
    fn a_cmd_task_becomes_a_quoted_script() {
        let c = CmdTask {
            cmd: "cargo test".into(),
            args: vec!["--lib".into(), "it's".into()],
            env: vec![("CI".into(), "true".into())],
            cwd: Some("/p/sub dir".into()),
        };
        assert_eq!(
            c.script(),
            "cd -- '/p/sub dir' || exit\nexport CI='true'\ncargo test '--lib' 'it'\\''s' \"$@\"\n"
        );
    }
}
