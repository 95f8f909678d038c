//! The safesh policy: the first wall. One pure decision function takes a command
//! (already parsed and expanded by the interpreter), the merged config and what the
//! interpreter knows (is the name a function, a builtin, an in-process utility or a
//! program on the trusted PATH) and returns a [`Decision`]: allow, or a refusal with
//! a stable code, the rule that made it, what is allowed instead and a suggestion.
//!
//! - [`config`]: the config hierarchy, trust and provenance.
//! - [`Policy::decide`]: the decision; [`flags`], [`paths`], [`blocklist`],
//!   [`wrappers`] and [`operands`] are its parts; [`env`] builds a child's environment.
//! - [`verdict`]: refusal codes and the refusal object shared by every face.

pub mod blocklist;
pub mod config;
mod decide;
pub mod env;
pub mod explain;
pub mod flags;
mod git;
pub mod init;
mod nudge;
pub mod operands;
pub mod own;
pub mod paths;
pub mod profile;
pub mod protected;
pub mod verdict;
pub mod wrappers;

pub use decide::{Decision, Kind, Policy, Request, Resolver, subcommand};
pub use verdict::{Details, ErrorCode, Refusal};
