//! Differential tests of the file utilities against the GNU tools.

// Test helpers outside #[test] fns may panic on broken fixtures.
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "fs/harness.rs"]
mod harness;

#[path = "fs/extra.rs"]
mod extra;
#[path = "fs/find.rs"]
mod find;
#[path = "fs/info.rs"]
mod info;
#[path = "fs/ls.rs"]
mod ls;
#[path = "fs/misc.rs"]
mod misc;
#[path = "fs/mutate.rs"]
mod mutate;
#[path = "fs/paths.rs"]
mod paths;
#[path = "fs/policy.rs"]
mod policy;
#[path = "fs/xargs.rs"]
mod xargs;
