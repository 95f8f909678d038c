//! Scopes and keys of the context store.

use crate::error::ContextError;

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// Where a value lives and how long it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Per project root: outlives every process.
    Project,
    /// Per server session id: deleted when the session ends.
    Session,
    /// Ephemeral: the current step; cleared between steps.
    Step,
    /// The persistent history: append-only, read-only to callers.
    History,
}

impl Scope {
    /// Every scope, in the order they are documented.
    pub const ALL: [Scope; 4] = [Scope::Project, Scope::Session, Scope::Step, Scope::History];

    /// Parses a scope name (`project`, `session`, `step`, `history`).
    pub fn parse(name: &str) -> Result<Scope, ContextError> {
        match name {
            "project" => Ok(Scope::Project),
            "session" => Ok(Scope::Session),
            "step" => Ok(Scope::Step),
            "history" => Ok(Scope::History),
            _ => Err(ContextError::BadScope(name.to_string())),
        }
    }

    /// The scope's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Session => "session",
            Scope::Step => "step",
            Scope::History => "history",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks a key: 1 to [`MAX_KEY_BYTES`] bytes, no control characters (a key is
/// printed by `context list`, one per line: a newline in it would forge a line).
pub fn check_key(key: &str) -> Result<(), ContextError> {
    let bad = |why| {
        Err(ContextError::BadKey {
            key: key.chars().take(80).collect(),
            why,
        })
    };
    if key.is_empty() {
        return bad("a key cannot be empty");
    }
    if key.len() > MAX_KEY_BYTES {
        return bad("a key has at most 256 bytes");
    }
    if key.chars().any(char::is_control) {
        return bad("a key cannot hold control characters (newlines, tabs, NUL…)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_and_unknown_ones_are_refused() {
        for s in Scope::ALL {
            assert_eq!(Scope::parse(s.as_str()).ok(), Some(s));
        }
        assert!(matches!(
            Scope::parse("global"),
            Err(ContextError::BadScope(_))
        ));
    }

    #[test]
    fn keys_are_checked() {
        assert!(check_key("build.target").is_ok());
        assert!(check_key("").is_err());
        assert!(check_key("a\nb").is_err());
        assert!(check_key(&"k".repeat(257)).is_err());
        assert!(check_key(&"k".repeat(256)).is_ok());
    }
}
