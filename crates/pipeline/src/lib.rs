//! The pipeline of agsh's agent mode (JSON-RPC `pipeline`, MCP `pipeline`):
//! steps whose data flows from one to the next, what happens when one fails
//! (`on_error` stop | skip | retry), checkpoints saved before steps and the
//! rollback to them, and the result (`{passed, completed, steps, …}`).
//!
//! This crate decides the order of things and nothing else: it runs no
//! command, touches no file and knows no policy. The server implements
//! [`StepRunner`] over its one exec entry point (so every step takes the same
//! path as `execute`: policy, sandbox, labels), its checkpoint store and its
//! context store; the data that flows between steps is the runner's own type
//! (raw bytes with their label, bounded there).

mod model;
mod run;
mod text;

pub use model::{DEFAULT_RETRIES, MAX_RETRIES, OnError, Pipeline, Step};
pub use run::{Attempt, Report, StepRunner, run};
pub use text::{ANNOTATIONS, TextError, TextStep, parse_text};
