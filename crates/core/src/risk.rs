//! How risky a script is, per command and overall: read-only, write, network,
//! destructive or refused. `safesh check` shows it and `safesh spec plan` plans
//! with it (checkpoints before risky steps). It is derived from the same pre-run
//! pass (`precheck.rs`) and the same knowledge of what destroys
//! (`destructive.rs`) and which operands are written (`safesh_policy::operands`)
//! as the walls use; it never allows anything itself.

use crate::destructive::Destructive;
use crate::error::Refusal;
use crate::interp::expand::Field;
use crate::precheck::{Checked, Verdict};
use safesh_label::Label;
use safesh_policy::operands::{self, Access};
use std::path::Path;

/// A risk class, least risky first: the one enum the plan of a project spec
/// (`safesh_spec`) and `safesh check` share.
pub use safesh_spec::Risk;

/// A script's risk: the worst of its commands and redirections.
#[derive(Clone, Debug)]
pub struct ScriptRisk {
    /// The commands of the pre-run pass, each with its risk.
    pub commands: Vec<(Checked, Risk)>,
    /// Targets of output redirections (as written).
    pub writes: Vec<String>,
    /// The worst of all.
    pub risk: Risk,
    /// The first refusal, if any.
    pub refusal: Option<Refusal>,
    /// Some command's name is computed at run time.
    pub dynamic: bool,
    /// What a reader should know (not found, decided when reached).
    pub notes: Vec<String>,
}

/// Programs that talk to the network whatever their arguments.
const NETWORK: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping",
    "dig", "nslookup", "host",
];
/// git subcommands that talk to a remote.
const GIT_NETWORK: &[&str] = &["clone", "fetch", "pull", "push", "ls-remote", "submodule"];
/// git subcommands that change the work tree, index or refs.
const GIT_WRITE: &[&str] = &[
    "add",
    "commit",
    "checkout",
    "switch",
    "merge",
    "rebase",
    "stash",
    "tag",
    "branch",
    "mv",
    "rm",
    "restore",
    "reset",
    "cherry-pick",
    "revert",
    "apply",
    "am",
    "init",
    "worktree",
];
/// Names that destroy when their arguments are computed at run time.
const DESTROYS: &[&str] = &["rm", "rmdir", "unlink", "shred", "mv", "dd", "truncate"];
/// Names that write when their arguments are computed at run time.
const WRITES: &[&str] = &[
    "cp", "ln", "install", "tee", "mkdir", "touch", "chmod", "mktemp",
];

/// The risk of one command of the pre-run pass (`cwd`: where it would run).
pub fn command_risk(c: &Checked, cwd: &Path) -> Risk {
    match &c.verdict {
        Verdict::Refuse(_) => return Risk::Refused,
        // The name comes from run-time data: assume the worst.
        Verdict::RunTime if c.argv.is_none() && !name_is_fixed(c) => return Risk::Destructive,
        _ => {}
    }
    match &c.argv {
        Some(argv) => argv_risk(argv, cwd),
        None => name_risk(first_word(&c.text)),
    }
}

fn name_is_fixed(c: &Checked) -> bool {
    let w = first_word(&c.text);
    !w.is_empty() && !w.contains(['$', '`', '*', '?', '['])
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

fn base(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A platform command's risk as its registry entry declares it; a command of a
/// namespace that reaches the network (every one but `fs:`) is at least
/// `network`. `None`: not a platform command safesh has.
fn platform_risk(name: &str) -> Option<Risk> {
    use safesh_platform::Risk as P;
    let c = safesh_platform::get(name)?;
    let declared = match c.risk() {
        P::ReadOnly => Risk::ReadOnly,
        P::Write => Risk::Write,
        P::Network => Risk::Network,
        P::Destructive => Risk::Destructive,
    };
    Some(if c.namespace() == "fs" {
        declared
    } else {
        declared.max(Risk::Network)
    })
}

/// The risk of a command known only by name (its arguments come at run time).
fn name_risk(name: &str) -> Risk {
    if let Some(r) = platform_risk(name) {
        return r;
    }
    let b = base(name);
    if NETWORK.contains(&b) {
        Risk::Network
    } else if DESTROYS.contains(&b) || b == "git" {
        Risk::Destructive
    } else if WRITES.contains(&b) {
        Risk::Write
    } else {
        Risk::ReadOnly
    }
}

/// The risk of a fully known argv.
fn argv_risk(argv: &[String], cwd: &Path) -> Risk {
    let Some(name) = argv.first() else {
        return Risk::ReadOnly;
    };
    if let Some(r) = platform_risk(name) {
        return r;
    }
    let b = base(name);
    if NETWORK.contains(&b) {
        return Risk::Network;
    }
    let fields: Vec<Field> = argv
        .iter()
        .map(|t| Field {
            text: t.clone(),
            label: Label::empty(),
        })
        .collect();
    if let Some(d) = Destructive::of(&fields) {
        return if d.gated_by_pc(cwd) {
            Risk::Destructive
        } else {
            Risk::Write
        };
    }
    if b == "git" {
        let sub = argv[1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str)
            .unwrap_or("");
        if GIT_NETWORK.contains(&sub) {
            return Risk::Network;
        }
        if GIT_WRITE.contains(&sub) {
            return Risk::Write;
        }
        return Risk::ReadOnly;
    }
    if operands::paths(argv)
        .iter()
        .any(|(_, a)| *a == Access::Write)
        || WRITES.contains(&b)
    {
        return Risk::Write;
    }
    Risk::ReadOnly
}

/// The risk of a whole script from its pre-run pass.
pub fn script_risk(checked: Vec<Checked>, writes: Vec<String>, cwd: &Path) -> ScriptRisk {
    let mut notes = Vec::new();
    let mut dynamic = false;
    let mut refusal = None;
    let mut worst = if writes.is_empty() {
        Risk::ReadOnly
    } else {
        Risk::Write
    };
    let commands: Vec<(Checked, Risk)> = checked
        .into_iter()
        .map(|c| {
            let r = command_risk(&c, cwd);
            match &c.verdict {
                Verdict::Refuse(x) if refusal.is_none() => refusal = Some(x.clone()),
                Verdict::RunTime => {
                    if !name_is_fixed(&c) {
                        dynamic = true;
                    }
                    notes.push(format!(
                        "line {}: {} is decided when reached",
                        c.line, c.text
                    ));
                }
                Verdict::NotFound => notes.push(format!(
                    "line {}: {} is not found (127 when run)",
                    c.line,
                    first_word(&c.text)
                )),
                _ => {}
            }
            worst = worst.max(r);
            (c, r)
        })
        .collect();
    ScriptRisk {
        commands,
        writes,
        risk: worst,
        refusal,
        dynamic,
        notes,
    }
}

/// What a project spec's plan records about a step: `r`'s risk, command names,
/// refusal and notes, or `Refused` when the step's script could not be checked
/// (it does not parse, or is too large).
pub fn assessment(r: Result<ScriptRisk, Refusal>) -> safesh_spec::Assessment {
    match r {
        Ok(r) => safesh_spec::Assessment {
            risk: r.risk,
            commands: command_names(&r),
            dynamic: r.dynamic,
            refusal: r
                .refusal
                .as_ref()
                .and_then(|x| serde_json::to_value(x).ok()),
            notes: r.notes,
        },
        Err(refusal) => safesh_spec::Assessment {
            risk: Risk::Refused,
            commands: Vec::new(),
            dynamic: false,
            refusal: serde_json::to_value(&refusal).ok(),
            notes: Vec::new(),
        },
    }
}

/// The command names a script runs (fixed names only), in order.
pub fn command_names(r: &ScriptRisk) -> Vec<String> {
    r.commands
        .iter()
        .filter_map(|(c, _)| match &c.argv {
            Some(a) => a.first().cloned(),
            None if name_is_fixed(c) => Some(first_word(&c.text).to_string()),
            None => None,
        })
        // A refused redirection is listed as `> word`: not a command.
        .filter(|n| !n.is_empty() && !n.starts_with(['>', '<']))
        .collect()
}
