//! The narrow interface the interpreter gives a platform command: everything it
//! touches (files, the network, credentials) goes through here, so the same
//! path checks, labels and commit points apply as to `cat`, `tee` and `curl`.

use crate::command::Risk;
use safesh_utils::{Egress, Host, Interrupt};
use std::path::Path;

/// A platform's settings from the config (`[platforms.NAME]`, or
/// `.agsh/platforms.yaml` once trusted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlatformSettings {
    /// The API's base URL (`https://api.github.com`).
    pub base_url: Option<String>,
    /// The environment variable holding its token.
    pub token_env: Option<String>,
    /// The owner used when a repository is named without one.
    pub default_owner: Option<String>,
}

/// What a platform command may do, implemented by the interpreter.
pub trait PlatformCtx {
    /// The utility host: path checks and labels of what is read (as for `cat`),
    /// `check_write` for what is written (as for `tee`), cancellation, and
    /// [`Host::received_from`] for what arrives from the network.
    fn host(&self) -> &dyn Host;
    /// The working directory (absolute).
    fn cwd(&self) -> &Path;
    /// The settings of platform `name`.
    fn settings(&self, name: &str) -> PlatformSettings;
    /// The value of the credential variable `var`, if set: its label joins what
    /// the command sends (so the egress decision sees it; it may only go to the
    /// hosts it is brokered to) but not the reply.
    fn credential(&self, var: &str) -> Option<String>;
    /// Called before `path` (absolute) is replaced or appended to when it
    /// exists: the destructive-write commit point, decided on the label of the
    /// argument words `words` (indices in argv) that named it and the PC.
    fn commit_write(&self, path: &Path, words: &[usize]) -> Result<(), Interrupt>;
    /// Called before each request: the host list (the platform's own host
    /// included for its commands) and the label of everything sent; a `write`
    /// risk command sending untrusted data needs a human's approval.
    fn egress(&self, request: &Egress<'_>, risk: Risk) -> Result<(), Interrupt>;
}
