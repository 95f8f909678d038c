//! Typed errors.

/// An allowlist entry that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid egress allowlist entry {entry:?}: {reason}")]
pub struct InvalidEntry {
    /// The entry as written in the config.
    pub entry: String,
    /// Why it was rejected.
    pub reason: &'static str,
}

impl From<InvalidEntry> for std::io::Error {
    fn from(e: InvalidEntry) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}

/// Why a client's request could not be served (the proxy answers with the status).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RequestError {
    /// Malformed request: 400.
    #[error("{0}")]
    Bad(&'static str),
    /// Request head over the size limit: 431.
    #[error("request header larger than {} bytes", crate::http::MAX_HEAD)]
    TooLarge,
}

impl RequestError {
    pub(crate) fn status(&self) -> (u16, &'static str) {
        match self {
            RequestError::Bad(_) => (400, "Bad Request"),
            RequestError::TooLarge => (431, "Request Header Fields Too Large"),
        }
    }
}
