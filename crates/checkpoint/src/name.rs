//! Checkpoint names: words, never paths.

use crate::error::CheckpointError;

/// The longest name.
pub const MAX_NAME: usize = 64;

/// Checks a name given by a caller: 1–64 of `A-Z a-z 0-9 . _ -`, not starting
/// with `.` or `-` (so `../x`, `a/b` and option-looking names are refused).
pub fn check(name: &str) -> Result<(), CheckpointError> {
    let bad = |why| {
        Err(CheckpointError::BadName {
            name: name.to_string(),
            why,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME {
        return bad("it is longer than 64 characters");
    }
    if name.contains('/') || name.contains("..") {
        return bad("a name is not a path");
    }
    if name.starts_with('.') || name.starts_with('-') {
        return bad("it starts with '.' or '-'");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("only letters, digits, '.', '_' and '-' may be used (a name is not a path)");
    }
    Ok(())
}

/// A fresh name from the time: `cp-<unix ms>`.
pub fn generated(now_ms: u128) -> String {
    format!("cp-{now_ms}")
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn names_are_words_not_paths() {
        for ok in ["a", "before-refactor", "v1.2_x", "cp-1700000000000"] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-rf",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }
}
