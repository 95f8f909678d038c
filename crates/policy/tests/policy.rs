//! Integration tests of the policy crate.

#[path = "policy/config.rs"]
mod config;
#[path = "policy/init.rs"]
mod init;
