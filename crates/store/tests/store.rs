//! Integration tests of safesh-store: real state dirs in temp dirs, real files,
//! and real concurrent processes (this test binary re-run as children).

// Tests: a failed fixture setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "store/audit.rs"]
mod audit;
#[path = "store/common.rs"]
mod common;
#[path = "store/failclosed.rs"]
mod failclosed;
#[path = "store/labels.rs"]
mod labels;
#[path = "store/procs.rs"]
mod procs;
#[path = "store/redact.rs"]
mod redact;
