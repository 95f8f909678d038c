//! Spec errors: where (file:line:column, the field path) and what.

use std::fmt;
use thiserror::Error;

/// An error loading, interpolating or planning a spec.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file (as given).
    pub file: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// The field path (`steps[2].command`), when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl SpecError {
    /// An error about `path` in `file`.
    pub fn at(file: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError {
            file: file.to_string(),
            position: None,
            path: Some(path.into()),
            message: message.into(),
        }
    }

    /// The same with a position.
    pub fn with_position(mut self, pos: Option<(usize, usize)>) -> Self {
        if self.position.is_none() {
            self.position = pos;
        }
        self
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((l, c)) = self.position {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": ")?;
        if let Some(p) = &self.path {
            write!(f, "{p}: ")?;
        }
        write!(f, "{}", self.message)
    }
}
