//! Interpreter limits: every overrun is a clear `LIMIT_EXCEEDED` (or `TIMEOUT`),
//! never a hang or an out-of-memory.

use serde::{Deserialize, Serialize};

/// Limits on one exec request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Iterations of all loops together.
    pub loop_iterations: u64,
    /// Nesting of function calls, `source` and `eval`.
    pub call_depth: u64,
    /// Simple commands run.
    pub commands: u64,
    /// Nesting of `$(…)`.
    pub substitution_depth: u64,
    /// Words one brace expansion may produce.
    pub brace_expansion: u64,
    /// Bytes in one variable value, word or captured `$(…)` output.
    pub string_bytes: u64,
    /// Wall time for the whole request, in milliseconds.
    pub script_timeout_ms: u64,
    /// Pipeline stages and background jobs alive at once (each is a thread).
    pub processes: u64,
    /// Bytes in one script (the request's text, and each text given to `eval`,
    /// `source`, traps or `$(…)`); longer ones are refused before parsing with
    /// `LIMIT_EXCEEDED` (0 = unlimited). Parsing costs ~250 bytes of memory per byte.
    pub script_bytes: u64,
    /// Bytes a request may write to its stdout and stderr together (0 = unlimited).
    /// Past it writes fail and the script stops with `LIMIT_EXCEEDED`.
    pub output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            loop_iterations: 1_000_000,
            call_depth: 1000,
            commands: 10_000_000,
            substitution_depth: 64,
            brace_expansion: 100_000,
            string_bytes: 64 * 1024 * 1024,
            script_timeout_ms: 120_000,
            processes: 256,
            output_bytes: 0,
            script_bytes: safesh_syntax::DEFAULT_MAX_SCRIPT_BYTES as u64,
        }
    }
}
