//! Errors of the server faces: protocol-level problems (bad parameters, unknown
//! sessions or jobs, limits of the server itself). Refusals of a script are not
//! errors here: they are part of the result object.

/// A request the server cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The parameters are missing, of the wrong type or contradictory.
    #[error("invalid params: {0}")]
    BadParams(String),
    /// No live session has this id (it ended, expired or never existed).
    #[error(
        "unknown session `{0}` (it ended, expired after being idle, or never existed); start one with session_start"
    )]
    UnknownSession(String),
    /// The session's worker process died (a crash, an allocation abort, a
    /// request killed past its deadline): its state is gone.
    #[error(
        "session `{0}` is lost: {1}; start a new one with session_start (the server and other sessions are fine)"
    )]
    SessionLost(String, String),
    /// No job has this id.
    #[error("unknown job `{0}`; job_list shows the jobs")]
    UnknownJob(String),
    /// The limit on live sessions is reached.
    #[error("too many live sessions ({0}); end one with session_end first")]
    TooManySessions(usize),
    /// The limit on running jobs is reached.
    #[error("too many running jobs ({0}); kill one with job_kill first")]
    TooManyJobs(usize),
    /// The config cannot be used.
    #[error("config error: {0}")]
    Config(String),
    /// Refused by safesh (a `[context]` limit), or its state cannot be used.
    #[error("{}: {}", .0.code, .0.message)]
    Refused(Box<safesh_core::Refusal>),
    /// The state directory, a spill file or a job log failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl ServerError {
    /// A stable, machine-readable name of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ServerError::BadParams(_) => "INVALID_PARAMS",
            ServerError::UnknownSession(_) => "UNKNOWN_SESSION",
            ServerError::UnknownJob(_) => "UNKNOWN_JOB",
            ServerError::SessionLost(..) => "SESSION_LOST",
            ServerError::TooManySessions(_) => "TOO_MANY_SESSIONS",
            ServerError::TooManyJobs(_) => "TOO_MANY_JOBS",
            ServerError::Config(_) => "CONFIG_ERROR",
            ServerError::Io(_) => "IO_ERROR",
            ServerError::Refused(r) => r.code.as_str(),
        }
    }

    /// The JSON-RPC error code: bad params for what the caller named wrongly,
    /// a server error (-32000) for the server's own limits and failures.
    pub fn rpc_code(&self) -> i64 {
        match self {
            ServerError::BadParams(_)
            | ServerError::UnknownSession(_)
            | ServerError::UnknownJob(_) => -32602,
            _ => -32000,
        }
    }

    /// The error as a JSON object `{code, message}`.
    pub fn to_json(&self) -> serde_json::Value {
        if let ServerError::Refused(r) = self {
            return serde_json::to_value(r).unwrap_or_default();
        }
        serde_json::json!({"code": self.code(), "message": self.to_string()})
    }
}
