//! Integration tests of the policy crate.

// Tests: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "policy/config.rs"]
mod config;
#[path = "policy/decide.rs"]
mod decide;
#[path = "policy/init.rs"]
mod init;
#[path = "policy/tasks.rs"]
mod tasks;
