//! The REPL's history file: `<state dir>/repl_history` (outside every root, so
//! no command can read or plant it), at most [`DEFAULT_MAX_ENTRIES`] lines, and
//! never a secret value: the session withholds the known secret values and the
//! values of secret assignments ([`safesh_core::Session::redact_for_history`])
//! before a line is kept; a line typed with a leading space is not kept.

use std::path::{Path, PathBuf};

/// Entries kept by default.
pub const DEFAULT_MAX_ENTRIES: usize = 1000;

/// A longer line is not kept (a pasted blob is not worth recalling).
pub const MAX_ENTRY_BYTES: usize = 8 * 1024;

/// The history file in `state_dir`.
pub fn file_in(state_dir: &Path) -> PathBuf {
    state_dir.join("repl_history")
}

/// Makes the history file's directory (owner only) so that the editor can write it.
pub fn prepare(path: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(dir) = path.parent() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
}

/// What is kept of a line typed as `typed` and redacted as `redacted`: `None`
/// for a line not to keep.
pub fn entry(typed: &str, redacted: String) -> Option<String> {
    if typed.starts_with([' ', '\t']) || redacted.len() > MAX_ENTRY_BYTES {
        return None;
    }
    let trimmed = redacted.trim_end();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::entry;

    #[test]
    fn leading_space_long_and_empty_lines_are_not_kept() {
        assert_eq!(entry("ls", "ls".into()).as_deref(), Some("ls"));
        assert_eq!(entry(" echo x", " echo x".into()), None);
        assert_eq!(entry("x", "x".repeat(9000)), None);
        assert_eq!(
            entry("echo s3cret", "echo [secret]".into()).as_deref(),
            Some("echo [secret]")
        );
    }
}
