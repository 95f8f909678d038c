//! The spec's schema (agsh §4.1.1) plus the `steps:` extension.

use safesh_verify::Assertion;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A project spec (`project.agsh.yaml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectSpec {
    /// `agsh/v1` (also accepted: `safesh/v1`).
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// `ProjectSpec`.
    pub kind: String,
    /// Name, description, author, tags.
    pub meta: SpecMeta,
    /// What the agent should achieve.
    pub goal: String,
    /// Hard constraints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// Soft guidelines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guidelines: Vec<String>,
    /// Checked against the output at the end of a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_criteria: Vec<Assertion>,
    /// Globs of the commands the spec may use; absent: what the policy allows.
    /// It only narrows the policy, never widens it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_commands: Option<Vec<String>>,
    /// Where the result goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSpec>,
    /// Values the human gives at run time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamDef>,
    /// The steps (an extension: the seed leaves planning to the agent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSpec>,
}

/// `meta:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecMeta {
    /// The spec's name (required).
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When (free text, e.g. a date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// `output:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// The output file (may use `{{param}}` and `{{date}}`).
    pub path: String,
    /// `markdown`, `json`, `text`, `csv`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

/// One entry of `params:`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamDef {
    /// The name used in `{{name}}`.
    pub name: String,
    /// `string` (default), `integer`, `number`, `boolean`, `string[]`.
    #[serde(rename = "type", default = "default_type")]
    pub kind: String,
    /// The value when none is given; without one the param is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn default_type() -> String {
    "string".into()
}

/// One step: a `command` with `args`, or a bash `script`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// A short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The command (fixed: a param cannot name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments: a list of words, or an object (platform commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<StepArgs>,
    /// A bash script instead of `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// What the step intends (for the plan and `llm_judge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Assertions on the step's result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<Assertion>,
    /// Save a checkpoint before the step (default: for write and destructive steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_before: Option<bool>,
}

/// A step's `args`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepArgs {
    /// Words (`[-l, src]`).
    List(Vec<Value>),
    /// Named arguments (`{repo: o/r, state: open}`): `--name value` words.
    Map(BTreeMap<String, Value>),
}
