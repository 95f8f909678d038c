//! Differential tests: each case runs our utility and the real GNU tool on the
//! same inputs in a temporary directory and compares stdout and exit status.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod regex {
    pub mod common;
    mod grep;
    mod sed;
}
