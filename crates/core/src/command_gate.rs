//! A narrow hook that only narrows: while a project spec runs, every command
//! dispatched (names computed at run time, `command x`, functions' bodies,
//! `xargs`/`find -exec` children) is checked against the spec's
//! `allowed_commands` before the policy decides it. The gate can refuse; it can
//! never allow what the policy refuses (the policy still decides every command
//! the gate lets through).

use crate::error::Refusal;

/// Checks a command name (exactly as dispatched) before it runs.
pub trait CommandGate: Send + Sync {
    /// The refusal for `name`, or `None` when the gate lets it through (the
    /// policy then decides it as always).
    fn check(&self, name: &str) -> Option<Refusal>;
}
