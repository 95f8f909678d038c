//! The safesh policy: the first wall. One pure decision function takes a command
//! (already parsed and expanded by the interpreter), the merged config and what the
//! interpreter knows (is the name a function, a builtin, an in-process utility or a
//! program on the trusted PATH) and returns a [`Decision`]: allow, or a refusal with
//! a stable code, the rule that made it, what is allowed instead and a suggestion.
//!
//! - [`config`]: the config hierarchy, trust and provenance.
//! - [`verdict`]: refusal codes and the refusal object shared by every face.

pub mod config;
pub mod explain;
pub mod init;
pub mod verdict;

pub use verdict::{Details, ErrorCode, Refusal};
