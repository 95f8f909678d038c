//! safesh's own process and state, as seen from a script: a path into
//! `/proc/self` other than a descriptor name, and the state directory (label
//! store, audit log, trust record, control socket), are never reachable.

use crate::paths::ProcessPath;
use crate::verdict::{ErrorCode, Refusal};
use std::path::Path;

/// Why the state directory is protected (the wording [`crate::paths::protected_reason`] uses).
pub(crate) const STATE_WHY: &str =
    "safesh's own state (audit log, labels, trust) cannot be written by commands";

/// The verdict on a path that leads into the process itself: a descriptor name
/// is allowed (the shell maps it to the script's own descriptor and never opens
/// it by name); anything else under `/proc/self` is refused.
pub fn process_path_verdict(path: &Path, p: ProcessPath) -> Result<(), Refusal> {
    match p {
        ProcessPath::Descriptor(_) => Ok(()),
        ProcessPath::OwnProcess => {
            let mut r = Refusal::new(
                ErrorCode::PathViolation,
                format!(
                    "{} leads into safesh's own process (/proc/self): only the script's descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N) may be named",
                    path.display()
                ),
            )
            .rule("paths.process")
            .suggest("use the script's streams (/dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N) or files inside the roots");
            r.details.path = Some(path.display().to_string());
            Err(r)
        }
    }
}

/// Subdirectories of the state dir a script may read: a session's spill files
/// and job logs, so the model can page through its own output.
const READABLE_STATE: &[&str] = &["spill", "jobs"];

/// Reading inside the state dir (resolved: `real`) is refused except for the
/// spill files and job logs of the session's own owner directory (`scope`,
/// `spill/<scope>/…`): another session's are refused like the rest.
pub(crate) fn state_read_refusal(
    state: Option<&Path>,
    scope: Option<&str>,
    path: &Path,
    real: &Path,
) -> Option<Refusal> {
    use std::path::Component::Normal;
    let rest = real.strip_prefix(state?).ok()?;
    let mut parts = rest.components();
    if let (Some(Normal(d)), Some(Normal(owner))) = (parts.next(), parts.next())
        && READABLE_STATE.iter().any(|r| d == *r)
        && scope.is_some_and(|s| owner == s)
    {
        return None;
    }
    let mut r = Refusal::new(
        ErrorCode::PathViolation,
        format!(
            "{} is safesh's own state (label store, audit log, trust record): commands cannot read or write it",
            path.display()
        ),
    )
    .rule("paths.protected")
    .suggest("leave safesh's state alone; `safesh` subcommands show what it holds to the human");
    r.details.path = Some(real.display().to_string());
    Some(r)
}
