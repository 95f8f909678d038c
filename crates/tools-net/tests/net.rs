//! Tests of the network utilities against a real HTTP server on 127.0.0.1:
//! differential (ours vs the real curl / wget) and host-contract tests.

// Test helpers outside #[test] fns may panic on broken fixtures.
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "net/contract.rs"]
mod contract;
#[path = "net/curl.rs"]
mod curl;
#[path = "net/diff.rs"]
mod diff;
#[path = "net/server.rs"]
mod server;
#[path = "net/wget.rs"]
mod wget;
