//! The errors of the context store and the history.

use std::path::PathBuf;

/// Why a context-store or history operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The scope is not one of `project`, `session`, `step`, `history`.
    #[error("unknown context scope {0:?}; scopes: project, session, step, history")]
    BadScope(String),
    /// The key is empty, too long, or holds control characters.
    #[error("invalid context key {key:?}: {why}")]
    BadKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `history` is append-only: callers only read it.
    #[error("the history scope is read-only: safesh appends to it, callers can only read it")]
    ReadOnly,
    /// The `session` scope needs a session (a server session id).
    #[error("the session scope needs a session: start one (session_start) and pass its id")]
    NoSession,
    /// A `[context]` limit would be passed.
    #[error("{what} ({got} > {limit}, [context] {key})")]
    LimitExceeded {
        /// What was too big.
        what: String,
        /// The config key of the limit.
        key: &'static str,
        /// The limit.
        limit: u64,
        /// What the request would make it.
        got: u64,
    },
    /// A file or directory of the state dir could not be created or opened.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The database exists but is not a context store of this version.
    #[error(
        "context store {path} is corrupt or not a safesh context store ({detail}); \
         move it aside to start a new one"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the decoder said.
        detail: String,
    },
    /// Any other SQLite failure (busy past the timeout, disk full…).
    #[error("context store {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
}

impl ContextError {
    /// True for a refusal of the caller's request (bad scope/key, read-only,
    /// limit, no session) rather than a failure of the store itself.
    pub fn is_request_error(&self) -> bool {
        matches!(
            self,
            ContextError::BadScope(_)
                | ContextError::BadKey { .. }
                | ContextError::ReadOnly
                | ContextError::NoSession
                | ContextError::LimitExceeded { .. }
        )
    }
}
