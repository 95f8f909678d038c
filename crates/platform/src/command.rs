//! The interface every platform command implements, and what it declares.

use crate::args::Args;
use crate::ctx::PlatformCtx;
use crate::error::PlatformError;
use serde_json::{Value, json};

/// How much a command can change or reveal: shown by `commands.describe` and
/// used at the commit points (a `write` or `destructive` command sending
/// untrusted data needs a human's approval).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Risk {
    /// Reads only (`fs:read`, `http:get`, `github:pr:list`).
    ReadOnly,
    /// Changes something the user owns (`fs:mkdir`, `http:post`, `github:issue:create`).
    Write,
    /// Reaches the network without writing anywhere.
    Network,
    /// May destroy data (`fs:write` over an existing file).
    Destructive,
}

impl Risk {
    /// `read-only | write | network | destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::ReadOnly => "read-only",
            Risk::Write => "write",
            Risk::Network => "network",
            Risk::Destructive => "destructive",
        }
    }

    /// Whether what it sends lands in the user's accounts or files (approval
    /// needed for untrusted data).
    pub fn writes(self) -> bool {
        matches!(self, Risk::Write | Risk::Destructive)
    }
}

/// The JSON type of an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A string.
    String,
    /// An integer.
    Integer,
    /// `true` / `false` (as a word: `--all`, `--all true`, `--all=false`).
    Boolean,
    /// An object of string values (`--headers '{"A":"b"}'` or `--headers A=b` repeated).
    StringMap,
    /// Any JSON value (`--json '{"a":1}'`).
    Json,
}

impl FieldKind {
    fn schema(self) -> Value {
        match self {
            FieldKind::String => json!({"type": "string"}),
            FieldKind::Integer => json!({"type": "integer"}),
            FieldKind::Boolean => json!({"type": "boolean"}),
            FieldKind::StringMap => {
                json!({"type": "object", "additionalProperties": {"type": "string"}})
            }
            FieldKind::Json => json!({}),
        }
    }
}

/// One argument of a command; the input schema is generated from these, in
/// order (which is the order of positional words).
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Its name (`path`, `repo`): `--path VALUE` as a word.
    pub name: &'static str,
    /// Its type.
    pub kind: FieldKind,
    /// What it is, for a model.
    pub description: &'static str,
    /// Must be given.
    pub required: bool,
    /// May be given as a positional word (`x-positional` in the schema).
    pub positional: bool,
    /// The allowed values of a string, if limited.
    pub values: &'static [&'static str],
}

impl Field {
    /// A required string that may be positional.
    pub const fn positional(name: &'static str, description: &'static str) -> Field {
        Field {
            name,
            kind: FieldKind::String,
            description,
            required: true,
            positional: true,
            values: &[],
        }
    }

    /// An optional field of `kind`.
    pub const fn optional(name: &'static str, kind: FieldKind, description: &'static str) -> Field {
        Field {
            name,
            kind,
            description,
            required: false,
            positional: false,
            values: &[],
        }
    }

    /// A required field of `kind` (given as `--name VALUE`).
    pub const fn required(name: &'static str, kind: FieldKind, description: &'static str) -> Field {
        Field {
            name,
            kind,
            description,
            required: true,
            positional: false,
            values: &[],
        }
    }

    /// The same field, not required.
    pub const fn not_required(mut self) -> Field {
        self.required = false;
        self
    }

    /// The same field, limited to `values`.
    pub const fn one_of(mut self, values: &'static [&'static str]) -> Field {
        self.values = values;
        self
    }

    /// This field's schema (type, description, enum, `x-positional`).
    pub fn schema(&self) -> Value {
        let mut s = self.kind.schema();
        s["description"] = json!(self.description);
        if !self.values.is_empty() {
            s["enum"] = json!(self.values);
        }
        if self.positional {
            s["x-positional"] = json!(true);
        }
        s
    }
}

/// The input schema of `fields`: an object with exactly these properties.
pub fn input_schema(fields: &[Field]) -> Value {
    let props: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_string(), f.schema()))
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
        "x-order": fields.iter().map(|f| f.name).collect::<Vec<_>>(),
    })
}

/// A credential a command needs: where its name is configured and the
/// variable read by default. The value is brokered: only ever sent to the
/// platform's own host, never shown.
#[derive(Clone, Copy, Debug)]
pub struct Credential {
    /// The platform whose config names the variable (`github`).
    pub platform: &'static str,
    /// The config key naming the variable (`token_env`).
    pub key: &'static str,
    /// The variable read when the config names none (`GITHUB_TOKEN`).
    pub default_env: &'static str,
}

/// What a command produced: a JSON value for stdout, and the host whose reply
/// it is (its brokered secrets are not part of the reply's label).
#[derive(Clone, Debug)]
pub struct Output {
    /// Printed as JSON on stdout.
    pub value: Value,
    /// The host that answered (network commands), if any.
    pub reply_host: Option<String>,
}

impl Output {
    /// A local result (no network).
    pub fn local(value: Value) -> Output {
        Output {
            value,
            reply_host: None,
        }
    }
}

/// A platform command: `namespace:noun[:verb]`, described for a model, with
/// input and output JSON Schemas, run through a [`PlatformCtx`].
///
/// Adding one: implement this trait in the namespace's module and list it in
/// that module's `COMMANDS` (see `fs.rs`, the worked example).
pub trait PlatformCommand: Send + Sync {
    /// The full name (`github:pr:list`).
    fn name(&self) -> &'static str;
    /// What it does, written for a model.
    fn description(&self) -> &'static str;
    /// Its arguments, in order (positional words fill `positional` fields in this order).
    fn fields(&self) -> &'static [Field];
    /// The JSON Schema of what it prints on stdout.
    fn output_schema(&self) -> Value;
    /// Its risk.
    fn risk(&self) -> Risk;
    /// One example invocation, as words.
    fn example(&self) -> &'static str;
    /// The credentials it needs (none by default).
    fn credentials(&self) -> &'static [Credential] {
        &[]
    }
    /// Runs it on validated arguments.
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError>;

    /// The namespace (`github`).
    fn namespace(&self) -> &'static str {
        let n = self.name();
        n.split(':').next().unwrap_or(n)
    }
    /// The JSON Schema of its arguments.
    fn input_schema(&self) -> Value {
        input_schema(self.fields())
    }
}
