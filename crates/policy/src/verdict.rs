//! Verdicts: the stable refusal codes of DESIGN.md "Contracts" and the refusal
//! object that errors, `safesh check`, the audit log and tests all share.

use serde::{Deserialize, Serialize};

/// A stable refusal code. Each has the exit status the contract gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(missing_docs)]
pub enum ErrorCode {
    ParseError,
    NotSupported,
    CommandNotFound,
    CommandNotWhitelisted,
    FlagNotAllowed,
    PathViolation,
    Blocked,
    Nudge,
    PermissionDenied,
    SandboxUnavailable,
    FlowViolation,
    ApprovalRequired,
    Timeout,
    LimitExceeded,
    ExecutionError,
    /// The command succeeded but an assertion of its `verify` failed.
    VerificationFailed,
    /// A project spec does not load: YAML, a missing or mistyped field, a bad
    /// param or placeholder (file:line:column and the field path say where).
    InvalidSpec,
    /// A step of a project spec's plan would be refused (by the policy or the
    /// spec's `allowed_commands`): the plan does not run, nothing ran.
    PlanRefused,
    /// The plan named by its hash is not the plan the spec makes now (the spec,
    /// a param or the policy changed): its approval, if any, is void.
    PlanChanged,
    /// The plan was rejected (`project.reject`): it never runs.
    PlanRejected,
}

impl ErrorCode {
    /// The exit status a script stopped by this code ends with.
    pub fn status(self) -> i32 {
        match self {
            ErrorCode::ParseError | ErrorCode::NotSupported | ErrorCode::InvalidSpec => 2,
            ErrorCode::CommandNotFound => 127,
            ErrorCode::Timeout => 124,
            ErrorCode::LimitExceeded => 125,
            ErrorCode::ExecutionError | ErrorCode::VerificationFailed => 1,
            _ => 126,
        }
    }

    /// The code as written in messages (`LIMIT_EXCEEDED`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "PARSE_ERROR",
            ErrorCode::NotSupported => "NOT_SUPPORTED",
            ErrorCode::CommandNotFound => "COMMAND_NOT_FOUND",
            ErrorCode::CommandNotWhitelisted => "COMMAND_NOT_WHITELISTED",
            ErrorCode::FlagNotAllowed => "FLAG_NOT_ALLOWED",
            ErrorCode::PathViolation => "PATH_VIOLATION",
            ErrorCode::Blocked => "BLOCKED",
            ErrorCode::Nudge => "NUDGE",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
            ErrorCode::FlowViolation => "FLOW_VIOLATION",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::ExecutionError => "EXECUTION_ERROR",
            ErrorCode::VerificationFailed => "VERIFICATION_FAILED",
            ErrorCode::InvalidSpec => "INVALID_SPEC",
            ErrorCode::PlanRefused => "PLAN_REFUSED",
            ErrorCode::PlanChanged => "PLAN_CHANGED",
            ErrorCode::PlanRejected => "PLAN_REJECTED",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Details of a refusal, for the model and for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Details {
    /// The command concerned.
    pub command: Option<String>,
    /// The flag concerned.
    pub flag: Option<String>,
    /// The path concerned.
    pub path: Option<String>,
    /// The rule or limit that made the decision.
    pub rule: Option<String>,
    /// What is allowed instead.
    pub allowed: Vec<String>,
    /// The approval a human must grant.
    pub approval_id: Option<String>,
    /// Where in the script (`line L, column C`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A refusal or failure that stopped a script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Refusal {
    /// Stable code.
    pub code: ErrorCode,
    /// What happened, in one sentence.
    pub message: String,
    /// Structured details (boxed: refusals travel through every `Result`).
    #[serde(default)]
    pub details: Box<Details>,
    /// What to do instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

impl Refusal {
    /// A refusal with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
            details: Box::default(),
            suggestion: None,
        }
    }

    /// Adds a suggestion.
    pub fn suggest(mut self, s: impl Into<String>) -> Self {
        self.suggestion = Some(s.into());
        self
    }

    /// Names the rule or limit.
    pub fn rule(mut self, r: impl Into<String>) -> Self {
        self.details.rule = Some(r.into());
        self
    }

    /// Names the command.
    pub fn command(mut self, c: impl Into<String>) -> Self {
        self.details.command = Some(c.into());
        self
    }

    /// The exit status this refusal gives the script.
    pub fn status(&self) -> i32 {
        self.code.status()
    }

    /// A limit was exceeded.
    pub fn limit(what: &str, limit: u64, key: &str) -> Self {
        Refusal::new(
            ErrorCode::LimitExceeded,
            format!("{what} exceeded the limit of {limit}"),
        )
        .rule(format!("limits.{key}"))
        .suggest(format!(
            "do less per script, or raise [limits] {key} in safesh.toml"
        ))
    }
}

/// The rule of a `[[ … ]]` syntax error: bash stops there but keeps `$?`.
pub const CONDITIONAL_SYNTAX: &str = "syntax.conditional";

impl From<safesh_syntax::ParseError> for Refusal {
    fn from(e: safesh_syntax::ParseError) -> Self {
        match &e {
            safesh_syntax::ParseError::Syntax { position, message } => {
                let mut r = Refusal::new(ErrorCode::ParseError, format!("{message} ({position})"))
                    .suggest("fix the syntax; nothing was run");
                r.details.location = Some(position.to_string());
                r
            }
            safesh_syntax::ParseError::Conditional { position, message } => {
                let mut r = Refusal::new(ErrorCode::ParseError, format!("{message} ({position})"))
                    .rule(CONDITIONAL_SYNTAX)
                    .suggest("fix the syntax; nothing was run");
                r.details.location = Some(position.to_string());
                r
            }
            safesh_syntax::ParseError::TooDeep { limit, position } => {
                let mut r = Refusal::new(
                    ErrorCode::LimitExceeded,
                    format!("the script nests deeper than {limit} levels"),
                )
                .rule("limits.nesting")
                .suggest("flatten the script; nothing was run");
                r.details.location = Some(position.to_string());
                r
            }
            safesh_syntax::ParseError::TooLarge { size, limit } => Refusal::new(
                ErrorCode::LimitExceeded,
                format!("the script is {size} bytes, more than the limit of {limit} bytes"),
            )
            .rule("limits.script_bytes")
            .suggest(
                "split the work into smaller scripts, or raise [limits] script_bytes in safesh.toml; nothing was run",
            ),
            // The caller usually knows whether time ran out or the client cancelled
            // (the interpreter's `timeout_refusal`); this is the plain case.
            safesh_syntax::ParseError::Cancelled => Refusal::new(
                ErrorCode::Timeout,
                "the script's time ran out while it was being parsed; nothing was run",
            )
            .suggest("split the script, or give it more time"),
            safesh_syntax::ParseError::NotSupported { what, position } => {
                let mut r = Refusal::new(ErrorCode::NotSupported, format!("not supported: {what}"))
                    .suggest("rewrite the script without it; nothing was run");
                r.details.location = Some(position.to_string());
                r
            }
        }
    }
}
