//! Exchange rules at commit points: the second check every side effect passes.
//!
//! [`Rules::decide`] tries the config's `[[rule]]`s in order (project, then user)
//! and then the built-in rules; the **first match wins**. When nothing matches
//! the verdict is allow (rule `default`).
//!
//! # `when` conditions (all must hold)
//!
//! The *effective* label is the data label joined with the PC label (what the
//! side effect reveals or depends on, implicit flows included).
//!
//! | key | values | holds when |
//! |---|---|---|
//! | `confidentiality` | `public` | the effective label is public |
//! | | `secret` | it carries any confidentiality clause |
//! | | `NAME` | a clause mentions the named label `NAME` (`Secret(NAME)`) |
//! | `integrity` | `trusted` / `untrusted` | [`crate::trust::is_trusted`] of the effective label |
//! | | `network` / `sandboxed` | untrusted, with a network / sandboxed-program origin |
//! | `pc` | `untrusted` | the PC label alone is untrusted |
//! | | `secret` | the PC label alone is secret |
//! | | `tainted` | either of the two |
//! | `host` | glob | network only: the host (lower case, no port) matches |
//! | `command` | glob | the command text matches |
//! | `target` | glob | destructive: any target matches; env: the variable name matches |
//!
//! Globs: `*` matches any run of characters (including `/` and `.`), `?` one,
//! `[…]` a class; `host` ignores case. The policy crate validates keys, values
//! and globs when the config is loaded (with `file:line:column`).
//!
//! # Built-in rules
//!
//! * `flow.network.confidentiality` (block, `FLOW_VIOLATION`): the data sent
//!   (body, files, URL, query, headers, the host name itself — the caller joins
//!   their labels) must flow to the host ([`crate::hosts`]); so must the PC label
//!   (an implicit flow: `curl` under an `if` on a secret).
//! * `flow.network.untrusted-write` (request-approval): a platform command of
//!   `write` risk (`github:issue:create`, `http:post`) sending untrusted data
//!   (or under an untrusted PC) writes an injection into the user's accounts;
//!   checked after the confidentiality rule ([`CommitPoint::NetworkWrite`]).
//! * `flow.exec.integrity` (block): text run as code (eval, source, an
//!   interpreter's script, a script file, a pipe into an interpreter) must be
//!   trusted, and so must the PC.
//! * `flow.destructive.untrusted-target` (request-approval): what `rm -r`,
//!   overwrite or `mv` over destroys must not be chosen by untrusted data or
//!   under an untrusted PC.
//! * `flow.env.tainted-pc` (block): changing a variable that changes what runs
//!   (`PATH`, `HOME`, `IFS`, `BASH_ENV`, `ENV`, `CDPATH`, `SHELLOPTS`,
//!   `BASHOPTS`, `PS4`, `LD_*`, `DYLD_*`, `BASH_FUNC_*`) under a PC that is
//!   untrusted or secret.
//! * `flow.env.untrusted-value` (block): setting one of those variables to an
//!   untrusted value.

use crate::hosts::{HostPolicy, normalize_host};
use crate::trust::{describe_taint, has_origin, is_trusted};
use globset::{GlobBuilder, GlobMatcher};
use safesh_label::{Atom, Label};
use safesh_policy::config::{Config, ExchangeRule};

/// Rule name: secrets (or an implicit flow) going to a host they may not reach.
pub const RULE_NETWORK: &str = "flow.network.confidentiality";
/// Rule name: untrusted data written into the user's accounts by a platform command.
pub const RULE_NETWORK_WRITE: &str = "flow.network.untrusted-write";
/// Rule name: running untrusted text as code.
pub const RULE_EXEC: &str = "flow.exec.integrity";
/// Rule name: destroying targets chosen by untrusted data.
pub const RULE_DESTRUCTIVE: &str = "flow.destructive.untrusted-target";
/// Rule name: changing an execution-changing variable under a tainted PC.
pub const RULE_ENV_PC: &str = "flow.env.tainted-pc";
/// Rule name: setting an execution-changing variable to untrusted data.
pub const RULE_ENV_VALUE: &str = "flow.env.untrusted-value";

/// How text is about to be run as code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecKind {
    /// `eval TEXT`.
    Eval,
    /// `source FILE` / `. FILE`.
    Source,
    /// `python -c TEXT`, `node -e TEXT`, … (text handed to an interpreter).
    Interpreter,
    /// `./script.sh`, `python script.py` (a file run as a program).
    ScriptFile,
    /// `… | sh`, `… | python` (a stream piped into an interpreter).
    PipeToInterpreter,
}

impl ExecKind {
    /// `eval | source | interpreter | script-file | pipe-to-interpreter`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecKind::Eval => "eval",
            ExecKind::Source => "source",
            ExecKind::Interpreter => "interpreter",
            ExecKind::ScriptFile => "script-file",
            ExecKind::PipeToInterpreter => "pipe-to-interpreter",
        }
    }
}

/// What a destructive operation does to its targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DestructiveOp {
    /// `rm -r`.
    RmR,
    /// Overwriting an existing file (`>`, `cp` over it).
    Overwrite,
    /// `mv` onto an existing file.
    MvOver,
}

impl DestructiveOp {
    /// `rm-r | overwrite | mv-over`.
    pub fn as_str(self) -> &'static str {
        match self {
            DestructiveOp::RmR => "rm-r",
            DestructiveOp::Overwrite => "overwrite",
            DestructiveOp::MvOver => "mv-over",
        }
    }
}

/// A commit point: where a side effect is about to happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitPoint {
    /// Data leaves the machine for `host`.
    Network {
        /// The host name.
        host: String,
    },
    /// Data leaves the machine for `host` to be written there (a platform
    /// command of `write` risk: `github:issue:create`, `http:post`). Config
    /// rules see it as `network`.
    NetworkWrite {
        /// The host name.
        host: String,
    },
    /// Text is run as code.
    Exec {
        /// How.
        what: ExecKind,
    },
    /// Files are destroyed.
    Destructive {
        /// The paths destroyed.
        targets: Vec<String>,
        /// How.
        op: DestructiveOp,
    },
    /// An environment variable changes.
    Env {
        /// Its name.
        name: String,
    },
}

impl CommitPoint {
    /// `network | exec | destructive | env` (as in `[[rule]] commit_point`).
    pub fn kind(&self) -> &'static str {
        match self {
            CommitPoint::Network { .. } | CommitPoint::NetworkWrite { .. } => "network",
            CommitPoint::Exec { .. } => "exec",
            CommitPoint::Destructive { .. } => "destructive",
            CommitPoint::Env { .. } => "env",
        }
    }
}

/// What [`Rules::decide`] is asked.
#[derive(Clone, Debug)]
pub struct CommitRequest {
    /// The commit point.
    pub point: CommitPoint,
    /// The join of every label the side effect carries or depends on (for the
    /// network: body, files, URL, query, headers, host name; for exec: the code;
    /// for destructive: the target words; for env: the new value).
    pub data: Label,
    /// The PC label (control-flow taint) where the side effect happens.
    pub pc: Label,
    /// The command text, for `command` conditions and approvals.
    pub command: String,
}

/// What to do at the commit point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Go ahead, with a warning in the result.
    Warn,
    /// Refuse (`FLOW_VIOLATION`).
    Block,
    /// Refuse unless a human approves this exact action (`APPROVAL_REQUIRED`).
    RequestApproval,
}

impl Verdict {
    /// From a config `verdict` string.
    pub fn parse(s: &str) -> Option<Verdict> {
        match s {
            "allow" => Some(Verdict::Allow),
            "warn" => Some(Verdict::Warn),
            "block" => Some(Verdict::Block),
            "request-approval" => Some(Verdict::RequestApproval),
            _ => None,
        }
    }
}

/// A decision at a commit point: a value with the rule that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub verdict: Verdict,
    /// The rule that decided (`flow.exec.integrity`, a config rule's name, or
    /// `default`).
    pub rule: String,
    /// Why, for the refusal message.
    pub reason: String,
    /// What is allowed instead (hosts the data may go to), if anything.
    pub allowed: Vec<String>,
    /// What to do about it.
    pub suggestion: String,
}

impl Decision {
    /// The refusal code for this verdict: `FLOW_VIOLATION`, `APPROVAL_REQUIRED`,
    /// or `None` when the side effect may happen.
    pub fn code(&self) -> Option<&'static str> {
        match self.verdict {
            Verdict::Allow | Verdict::Warn => None,
            Verdict::Block => Some("FLOW_VIOLATION"),
            Verdict::RequestApproval => Some("APPROVAL_REQUIRED"),
        }
    }

    fn new(verdict: Verdict, rule: &str, reason: String, suggestion: &str) -> Self {
        Decision {
            verdict,
            rule: rule.to_string(),
            reason,
            allowed: Vec::new(),
            suggestion: suggestion.to_string(),
        }
    }
}

/// A config rule that does not make sense with this config.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: [[rule]] `{name}`: {message}")]
pub struct RuleError {
    /// Where the rule was declared.
    pub origin: String,
    /// The rule's name.
    pub name: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Clone, Debug)]
enum Conf {
    Public,
    Secret,
    Named(String),
}

#[derive(Clone, Copy, Debug)]
enum Integ {
    Trusted,
    Untrusted,
    Network,
    Sandboxed,
}

#[derive(Clone, Copy, Debug)]
enum Pc {
    Tainted,
    Secret,
    Untrusted,
}

#[derive(Clone, Debug)]
enum Cond {
    Conf(Conf),
    Integ(Integ),
    Pc(Pc),
    Host(GlobMatcher),
    Command(GlobMatcher),
    Target(GlobMatcher),
}

#[derive(Clone, Debug)]
struct ConfigRule {
    name: String,
    point: String,
    conds: Vec<Cond>,
    verdict: Verdict,
    origin: String,
}

/// The exchange rules: config rules first, then the built-in ones.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    config: Vec<ConfigRule>,
    hosts: HostPolicy,
}

fn glob(value: &str, case_insensitive: bool) -> Result<GlobMatcher, String> {
    GlobBuilder::new(value)
        .literal_separator(false)
        .case_insensitive(case_insensitive)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("bad glob `{value}`: {}", e.kind()))
}

fn condition(hosts: &HostPolicy, key: &str, value: &str) -> Result<Cond, String> {
    Ok(match (key, value) {
        ("confidentiality", "public") => Cond::Conf(Conf::Public),
        ("confidentiality", "secret") => Cond::Conf(Conf::Secret),
        ("confidentiality", name) => {
            if !hosts.is_named(name) {
                return Err(format!(
                    "`confidentiality = \"{name}\"` names no [labels.{name}]"
                ));
            }
            Cond::Conf(Conf::Named(name.to_string()))
        }
        ("integrity", "trusted") => Cond::Integ(Integ::Trusted),
        ("integrity", "untrusted") => Cond::Integ(Integ::Untrusted),
        ("integrity", "network") => Cond::Integ(Integ::Network),
        ("integrity", "sandboxed") => Cond::Integ(Integ::Sandboxed),
        ("pc", "tainted") => Cond::Pc(Pc::Tainted),
        ("pc", "secret") => Cond::Pc(Pc::Secret),
        ("pc", "untrusted") => Cond::Pc(Pc::Untrusted),
        ("host", g) => Cond::Host(glob(g, true)?),
        ("command", g) => Cond::Command(glob(g, false)?),
        ("target", g) => Cond::Target(glob(g, false)?),
        (k, v) => return Err(format!("unsupported condition `{k} = \"{v}\"`")),
    })
}

fn config_rule(hosts: &HostPolicy, r: &ExchangeRule) -> Result<ConfigRule, RuleError> {
    let err = |message: String| RuleError {
        origin: r.origin.to_string(),
        name: r.name.clone(),
        message,
    };
    let verdict = Verdict::parse(&r.verdict)
        .ok_or_else(|| err(format!("unknown verdict `{}`", r.verdict)))?;
    let conds = r
        .when
        .iter()
        .map(|(k, v)| condition(hosts, k, v).map_err(&err))
        .collect::<Result<_, _>>()?;
    Ok(ConfigRule {
        name: r.name.clone(),
        point: r.commit_point.clone(),
        conds,
        verdict,
        origin: r.origin.to_string(),
    })
}

/// Variables whose change alters what gets executed (see the module docs).
pub fn is_execution_changing(name: &str) -> bool {
    matches!(
        name,
        "PATH" | "HOME" | "IFS" | "BASH_ENV" | "ENV" | "CDPATH" | "SHELLOPTS" | "BASHOPTS" | "PS4"
    ) || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
}

impl Rules {
    /// The config's `[[rule]]`s (in config order) and the built-in rules.
    pub fn from_config(config: &Config) -> Result<Rules, RuleError> {
        let hosts = HostPolicy::from_config(config);
        let rules = config
            .rules
            .iter()
            .map(|r| config_rule(&hosts, r))
            .collect::<Result<_, _>>()?;
        Ok(Rules {
            config: rules,
            hosts,
        })
    }

    /// Only the built-in rules, with these may-flow-to rules.
    pub fn builtin(hosts: HostPolicy) -> Rules {
        Rules {
            config: Vec::new(),
            hosts,
        }
    }

    /// The decision at a commit point: the first matching rule's verdict.
    pub fn decide(&self, req: &CommitRequest) -> Decision {
        let eff = req.data.join(&req.pc);
        for r in &self.config {
            if r.point == req.point.kind() && r.conds.iter().all(|c| holds(c, req, &eff)) {
                return Decision::new(
                    r.verdict,
                    &r.name,
                    format!("the exchange rule `{}` ({}) matched", r.name, r.origin),
                    "this rule comes from the configuration; a human can change it",
                );
            }
        }
        self.builtin_decide(req).unwrap_or_else(|| {
            Decision::new(
                Verdict::Allow,
                "default",
                "no exchange rule matched".to_string(),
                "",
            )
        })
    }

    fn builtin_decide(&self, req: &CommitRequest) -> Option<Decision> {
        match &req.point {
            CommitPoint::Network { host } => self.network(req, host),
            CommitPoint::NetworkWrite { host } => self
                .network(req, host)
                .or_else(|| untrusted_write(req, host)),
            CommitPoint::Exec { what } => exec(req, *what),
            CommitPoint::Destructive { targets, op } => destructive(req, targets, *op),
            CommitPoint::Env { name } => env(req, name),
        }
    }

    fn network(&self, req: &CommitRequest, host: &str) -> Option<Decision> {
        let (denied, implicit) = match self.hosts.flows_to_host(&req.data, host) {
            Err(d) => (d, false),
            Ok(()) => (self.hosts.flows_to_host(&req.pc, host).err()?, true),
        };
        let reason = if implicit {
            format!(
                "implicit flow: this request is made under a condition on secret data; {denied}"
            )
        } else {
            denied.to_string()
        };
        let suggestion = if denied.allowed.is_empty() {
            "do not send secret data off the machine; use it only locally".to_string()
        } else {
            format!(
                "send it only to {}; a human can extend `may_flow_to` of [labels.{}]",
                denied.allowed.join(", "),
                denied.label
            )
        };
        let mut d = Decision::new(Verdict::Block, RULE_NETWORK, reason, &suggestion);
        d.allowed = denied.allowed;
        Some(d)
    }
}

fn untrusted_write(req: &CommitRequest, host: &str) -> Option<Decision> {
    let (culprit, whose) = if !is_trusted(&req.data) {
        (&req.data, "what it sends")
    } else if !is_trusted(&req.pc) {
        (&req.pc, "the condition it runs under")
    } else {
        return None;
    };
    Some(Decision::new(
        Verdict::RequestApproval,
        RULE_NETWORK_WRITE,
        format!(
            "this writes to {host} on the user's behalf and {whose} comes from {}, which is not trusted",
            describe_taint(culprit)
        ),
        "ask the human to approve this exact command (`safesh approve ID`), or send text you wrote yourself",
    ))
}

fn exec(req: &CommitRequest, what: ExecKind) -> Option<Decision> {
    let (culprit, whose) = if !is_trusted(&req.data) {
        (&req.data, "the code")
    } else if !is_trusted(&req.pc) {
        (&req.pc, "the condition this runs under")
    } else {
        return None;
    };
    Some(Decision::new(
        Verdict::Block,
        RULE_EXEC,
        format!(
            "running text as code ({}): {whose} comes from {}, which is not trusted",
            what.as_str(),
            describe_taint(culprit)
        ),
        "read it instead of running it; to run it, a human must review and run or endorse it",
    ))
}

fn destructive(req: &CommitRequest, targets: &[String], op: DestructiveOp) -> Option<Decision> {
    let culprit = if !is_trusted(&req.data) {
        &req.data
    } else if !is_trusted(&req.pc) {
        &req.pc
    } else {
        return None;
    };
    Some(Decision::new(
        Verdict::RequestApproval,
        RULE_DESTRUCTIVE,
        format!(
            "{} of {} is decided by {}",
            op.as_str(),
            targets.join(" "),
            describe_taint(culprit)
        ),
        "ask the human to approve this exact command (`safesh approve ID`), or name the targets yourself",
    ))
}

fn env(req: &CommitRequest, name: &str) -> Option<Decision> {
    if !is_execution_changing(name) {
        return None;
    }
    if !is_trusted(&req.pc) || req.pc.is_secret() {
        let why = if req.pc.is_secret() {
            "a condition on secret data".to_string()
        } else {
            format!("a condition on {}", describe_taint(&req.pc))
        };
        return Some(Decision::new(
            Verdict::Block,
            RULE_ENV_PC,
            format!("changing {name} under {why}"),
            "set it outside the condition, from values you wrote yourself",
        ));
    }
    if !is_trusted(&req.data) {
        return Some(Decision::new(
            Verdict::Block,
            RULE_ENV_VALUE,
            format!(
                "setting {name} to {}, which is not trusted",
                describe_taint(&req.data)
            ),
            "set it to a value you wrote yourself",
        ));
    }
    None
}

fn holds(c: &Cond, req: &CommitRequest, eff: &Label) -> bool {
    match c {
        Cond::Conf(Conf::Public) => !eff.is_secret(),
        Cond::Conf(Conf::Secret) => eff.is_secret(),
        Cond::Conf(Conf::Named(n)) => eff
            .confidentiality
            .mentions(&Atom::Secret(n.as_str().into())),
        Cond::Integ(Integ::Trusted) => is_trusted(eff),
        Cond::Integ(Integ::Untrusted) => !is_trusted(eff),
        Cond::Integ(Integ::Network) => {
            !is_trusted(eff) && has_origin(eff, |a| matches!(a, Atom::Network(_)))
        }
        Cond::Integ(Integ::Sandboxed) => {
            !is_trusted(eff) && has_origin(eff, |a| matches!(a, Atom::Sandboxed(_)))
        }
        Cond::Pc(Pc::Tainted) => !is_trusted(&req.pc) || req.pc.is_secret(),
        Cond::Pc(Pc::Secret) => req.pc.is_secret(),
        Cond::Pc(Pc::Untrusted) => !is_trusted(&req.pc),
        Cond::Host(g) => match &req.point {
            CommitPoint::Network { host } | CommitPoint::NetworkWrite { host } => {
                g.is_match(normalize_host(host))
            }
            _ => false,
        },
        Cond::Command(g) => g.is_match(&req.command),
        Cond::Target(g) => match &req.point {
            CommitPoint::Destructive { targets, .. } => targets.iter().any(|t| g.is_match(t)),
            CommitPoint::Env { name } => g.is_match(name),
            _ => false,
        },
    }
}
