//! safesh-code's integration tests: the engine, the stdlib and the labels, run in
//! a real session with a policy over a temp project (the walls through the
//! shipped binary are in crates/safesh/tests/safesh/code_mode.rs).

// Test code: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "code/engine.rs"]
mod engine;
#[path = "code/labels.rs"]
mod labels;
#[path = "code/modules.rs"]
mod modules;
#[path = "code/streams.rs"]
mod streams;
#[path = "code/support.rs"]
mod support;
#[path = "code/text.rs"]
mod text;
