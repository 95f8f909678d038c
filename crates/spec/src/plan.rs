//! The plan (agsh §4.3.2): what will run, how risky each step is (as the real
//! policy decides, through the caller's [`RiskOracle`]), where checkpoints go,
//! and the hash an approval binds to.

use crate::allowed::AllowedCommands;
use crate::error::SpecError;
use crate::interp;
use crate::load::scalar;
use crate::model::{OutputSpec, ProjectSpec, StepArgs};
use crate::params::Params;
use safesh_verify::Assertion;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;

/// How risky a step is, least first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    /// Reads only.
    ReadOnly,
    /// Creates or changes files inside the write roots.
    Write,
    /// Talks to the network.
    Network,
    /// Deletes or replaces what exists.
    Destructive,
    /// The policy (or allowed_commands) refuses it: it will not run.
    Refused,
}

impl Risk {
    /// The name used in plans and `safesh check`.
    pub fn name(self) -> &'static str {
        match self {
            Risk::ReadOnly => "read-only",
            Risk::Write => "write",
            Risk::Network => "network",
            Risk::Destructive => "destructive",
            Risk::Refused => "refused",
        }
    }

    /// Every class, least risky first.
    pub const ALL: [Risk; 5] = [
        Risk::ReadOnly,
        Risk::Write,
        Risk::Network,
        Risk::Destructive,
        Risk::Refused,
    ];
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The policy's judgement of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// The step's risk (the worst of its commands).
    pub risk: Risk,
    /// The command names it runs, as dispatched (for allowed_commands).
    pub commands: Vec<String>,
    /// Some command name is computed at run time (checked when reached).
    pub dynamic: bool,
    /// The policy's refusal, when refused.
    pub refusal: Option<Value>,
    /// What else the policy said (a command not found, …).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Decides steps with the real policy (implemented by the caller: `safesh check`'s
/// pass in core).
pub trait RiskOracle {
    /// Assesses a bash script (a `script:` step, or a `command` + `args` step
    /// quoted into one simple command).
    fn assess(&self, script: &str) -> Assessment;
}

/// One planned step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// 0-based position.
    pub index: usize,
    /// The step's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The command (command steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments after interpolation (command steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The exact script that will run (params already substituted as quoted words).
    pub script: String,
    /// What it intends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Its risk.
    pub risk: Risk,
    /// The commands it runs.
    pub commands: Vec<String>,
    /// Assertions on its result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<Assertion>,
    /// A checkpoint is saved before it runs.
    pub checkpoint_before: bool,
    /// Why it will not run (policy or allowed_commands), when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Value>,
    /// Things to know (a command decided only when reached, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A plan: steps, risk summary and hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The spec's name.
    pub spec: String,
    /// Its goal.
    pub goal: String,
    /// The param values used (with `date`).
    pub params: BTreeMap<String, Value>,
    /// The steps.
    pub steps: Vec<PlanStep>,
    /// Checked against the output at the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_criteria: Vec<Assertion>,
    /// Where the result goes (interpolated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSpec>,
    /// The allowed_commands in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_commands: Option<Vec<String>>,
    /// Steps per risk class.
    pub risk_counts: BTreeMap<String, usize>,
    /// One line for a human.
    pub risk_summary: String,
    /// Some step is refused: the plan cannot run as is.
    pub refused: bool,
    /// sha256 of everything above: an approval binds to it, an edit voids it.
    pub hash: String,
}

impl Plan {
    /// The hash of the plan's content (everything but `hash`).
    pub fn compute_hash(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut v {
            o.remove("hash");
        }
        let digest = Sha256::digest(v.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether the plan is unchanged since its hash was computed (an approval
    /// of an edited plan is void).
    pub fn is_intact(&self) -> bool {
        self.hash == self.compute_hash()
    }
}

/// Plans `spec` with `given` params (`name → text`) and today's `date`
/// (`%Y-%m-%d`, UTC: see [`crate::today_utc`]); `oracle` decides each step.
pub fn plan(
    spec: &ProjectSpec,
    file: &str,
    given: &BTreeMap<String, String>,
    date: &str,
    oracle: &dyn RiskOracle,
) -> Result<Plan, SpecError> {
    let params = Params::resolve(&spec.params, given, date)
        .map_err(|(name, m)| SpecError::at(file, format!("params.{name}"), m))?;
    let allowed = AllowedCommands::new(spec.allowed_commands.as_deref())
        .map_err(|(i, m)| SpecError::at(file, format!("allowed_commands[{i}]"), m))?;
    let mut steps = Vec::new();
    for (i, s) in spec.steps.iter().enumerate() {
        let at = |field: &str, m: String| SpecError::at(file, format!("steps[{i}].{field}"), m);
        let (script, args) = match (&s.command, &s.script) {
            (Some(cmd), None) => {
                let (words, shown) =
                    command_words(s.args.as_ref(), &params).map_err(|m| at("args", m))?;
                let mut argv = vec![cmd.clone()];
                argv.extend(words);
                let script = argv
                    .iter()
                    .map(|w| interp::shell_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ");
                (script, shown)
            }
            (None, Some(text)) => (
                interp::script(text, &params).map_err(|m| at("script", m))?,
                None,
            ),
            _ => {
                return Err(SpecError::at(
                    file,
                    format!("steps[{i}]"),
                    "a step needs a command or a script",
                ));
            }
        };
        let intent = s
            .intent
            .as_deref()
            .map(|t| interp::text(t, &params))
            .transpose()
            .map_err(|m| at("intent", m))?;
        let verify = s
            .verify
            .iter()
            .map(|a| interp_assertion(a, &params))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| at("verify", m))?;
        let assessed = oracle.assess(&script);
        let mut risk = assessed.risk;
        let mut refusal = assessed.refusal.clone();
        let mut notes = assessed.notes.clone();
        // allowed_commands narrows: a listed-out command is refused before anything runs.
        if let Some(r) = assessed.commands.iter().find_map(|c| allowed.refusal(c)) {
            risk = Risk::Refused;
            refusal = Some(r);
        }
        if assessed.dynamic {
            notes.push(if allowed.is_restricted() {
                "a command name is computed at run time: it is decided, and checked against allowed_commands, when reached".to_string()
            } else {
                "a command name is computed at run time: it is decided when reached".to_string()
            });
        }
        let checkpoint_before = match (risk, s.checkpoint_before) {
            (Risk::Refused, _) => false,
            (Risk::Destructive, _) => true,
            (_, Some(b)) => b,
            (Risk::Write, None) => true,
            _ => false,
        };
        steps.push(PlanStep {
            index: i,
            name: s.name.clone(),
            command: s.command.clone(),
            args,
            script,
            intent,
            risk,
            commands: assessed.commands,
            verify,
            checkpoint_before,
            refusal,
            notes,
        });
    }
    let success_criteria = spec
        .success_criteria
        .iter()
        .map(|a| interp_assertion(a, &params))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| SpecError::at(file, "success_criteria", m))?;
    let output = spec
        .output
        .as_ref()
        .map(|o| {
            Ok::<_, String>(OutputSpec {
                path: interp::text(&o.path, &params)?,
                format: o.format.clone(),
            })
        })
        .transpose()
        .map_err(|m| SpecError::at(file, "output.path", m))?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in &steps {
        *counts.entry(s.risk.name().to_string()).or_default() += 1;
    }
    let refused = steps.iter().any(|s| s.risk == Risk::Refused);
    // The goal is text: its placeholders become the values' plain text, and the
    // hash covers the result (another param value is another plan).
    let goal = interp::text(&spec.goal, &params).map_err(|m| SpecError::at(file, "goal", m))?;
    let mut pvalues = params.values().clone();
    pvalues.insert("date".into(), Value::String(params.date().to_string()));
    let mut plan = Plan {
        spec: spec.meta.name.clone(),
        goal,
        params: pvalues,
        risk_summary: summary(&steps),
        steps,
        success_criteria,
        output,
        allowed_commands: spec.allowed_commands.clone(),
        risk_counts: counts,
        refused,
        hash: String::new(),
    };
    plan.hash = plan.compute_hash();
    Ok(plan)
}

/// A command step's words and the args as shown in the plan.
fn command_words(
    args: Option<&StepArgs>,
    params: &Params,
) -> Result<(Vec<String>, Option<Value>), String> {
    match args {
        None => Ok((Vec::new(), None)),
        Some(StepArgs::List(items)) => {
            let mut words = Vec::new();
            for w in items {
                let t = scalar(w).ok_or_else(|| format!("an argument must be a word, not {w}"))?;
                words.extend(interp::arg(&t, params)?);
            }
            let shown = Value::Array(words.iter().cloned().map(Value::String).collect());
            Ok((words, Some(shown)))
        }
        Some(StepArgs::Map(m)) => {
            // `--name value` words, as platform commands take them.
            let mut words = Vec::new();
            let mut shown = serde_json::Map::new();
            for (k, v) in m {
                let v = interp::json(v, params)?;
                match &v {
                    Value::Array(items) => {
                        for x in items {
                            words.push(format!("--{k}"));
                            words.push(interp::text_of(x));
                        }
                    }
                    Value::Bool(true) => words.push(format!("--{k}")),
                    Value::Bool(false) | Value::Null => {}
                    other => {
                        words.push(format!("--{k}"));
                        words.push(interp::text_of(other));
                    }
                }
                shown.insert(k.clone(), v);
            }
            Ok((words, Some(Value::Object(shown))))
        }
    }
}

fn interp_assertion(a: &Assertion, params: &Params) -> Result<Assertion, String> {
    let mut a = a.clone();
    if let Some(e) = &a.expected {
        a.expected = Some(interp::json(e, params)?);
    }
    if let Some(t) = &a.target {
        a.target = Some(interp::text(t, params)?);
    }
    Ok(a)
}

fn summary(steps: &[PlanStep]) -> String {
    if steps.is_empty() {
        return "no steps: the spec lists none (the agent submits a plan)".into();
    }
    let parts: Vec<String> = Risk::ALL
        .iter()
        .filter_map(|r| {
            let n = steps.iter().filter(|s| s.risk == *r).count();
            (n > 0).then(|| format!("{n} {}", r.name()))
        })
        .collect();
    let cps = steps.iter().filter(|s| s.checkpoint_before).count();
    let mut s = format!(
        "{} step{}: {}",
        steps.len(),
        if steps.len() == 1 { "" } else { "s" },
        parts.join(", ")
    );
    if cps > 0 {
        s.push_str(&format!("; checkpoint before {cps}"));
    }
    s
}
