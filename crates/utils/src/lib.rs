//! In-process utilities for safesh.
//!
//! Every utility is a plain function [`UtilFn`] over a [`UtilCtx`]: its argv, the
//! working directory, the exported environment, three byte streams and a [`Host`]
//! through which it touches files and runs inner commands. Going through the host is
//! what lets labels (a file read taints the output with the file's origin), path
//! checks and the policy apply to in-process tools exactly as to external programs.
//!
//! Output formats follow the GNU tools (and mawk, jq 1.6) in the C locale; known
//! deliberate differences are listed in `docs/DIFFERENCES.md`.
//!
//! This crate is the interface only; the utilities live in the `tools-*` crates
//! (one per family), each exporting a `UTILS` table that `safesh-core` assembles.
//! To add a utility: write `fn(&mut UtilCtx) -> UtilResult` in the right family crate
//! and add it to that crate's `UTILS`.

pub mod args;
pub mod beneath;
pub mod ctx;
pub mod open;
pub mod posix_regex;
pub mod testing;
pub mod wfile;
pub mod word_bytes;

pub use ctx::{
    Egress, Env, Host, Interrupt, ShellString, UtilCtx, UtilResult, WriteMode, io_error_text,
    open_read, open_write, resolve_read, resolve_write,
};
pub use wfile::{FileLimit, WriteFile};

/// The signature every in-process utility has.
pub type UtilFn = fn(&mut UtilCtx<'_>) -> UtilResult;
