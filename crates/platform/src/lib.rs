//! Platform commands for safesh: remote APIs and local resources as namespaced
//! commands (`fs:read`, `http:get`, `github:pr:list`), each declaring a
//! description written for a model, an input and an output JSON Schema, the
//! credentials it needs and its risk.
//!
//! The interpreter resolves a name with a `:` here (between utilities and
//! external programs), parses its words ([`args::parse_words`]) or a JSON
//! object ([`args::object_to_words`]), validates them against the input schema
//! and runs the command through a [`PlatformCtx`] it implements: every file
//! access, request and credential goes through the same path checks, labels,
//! egress decision and commit points as the utilities. This crate never
//! reaches into the interpreter.
//!
//! Adding a platform: a module with one unit struct per command implementing
//! [`PlatformCommand`], its `COMMANDS` table, and one line in the registry
//! (`fs.rs` is the worked example).

pub mod args;
pub mod command;
pub mod ctx;
pub mod error;
pub mod fs;
pub mod github;
pub mod http;
pub mod net;
pub mod registry;

pub use args::{Args, object_to_words, parse_words};
pub use command::{Credential, Field, FieldKind, Output, PlatformCommand, Risk};
pub use ctx::{PlatformCtx, PlatformSettings};
pub use error::PlatformError;
pub use registry::{get, is_platform_name, list, namespaces};
