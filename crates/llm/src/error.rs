//! What can go wrong talking to the model, each with a message a human can act on.

use thiserror::Error;

/// An error of the LLM client.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LlmError {
    /// No `[llm] endpoint` is configured.
    #[error("no LLM endpoint is configured (set [llm] endpoint and model in the config)")]
    NotConfigured,
    /// The endpoint is not an http(s) URL with a host.
    #[error("bad [llm] endpoint {endpoint:?}: {reason}")]
    BadEndpoint {
        /// The configured endpoint.
        endpoint: String,
        /// Why it is unusable.
        reason: String,
    },
    /// `api_key_env` names a variable that is not set.
    #[error("the API key variable {env} named by [llm] api_key_env is not set")]
    MissingKey {
        /// The variable's name.
        env: String,
    },
    /// The caller's egress check refused to send the request.
    #[error("not sent to the LLM: {0}")]
    Refused(String),
    /// 401/403: the key was missing or rejected.
    #[error("the LLM endpoint refused the credentials (HTTP {status}): {body}")]
    Unauthorized {
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// 429: rate limited.
    #[error("the LLM endpoint is rate limiting (HTTP 429): {body}")]
    RateLimited {
        /// The start of the response body.
        body: String,
    },
    /// Any other non-success status.
    #[error("the LLM endpoint answered HTTP {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// No answer within the timeout.
    #[error("the LLM endpoint did not answer within {ms} ms")]
    Timeout {
        /// The timeout that elapsed.
        ms: u64,
    },
    /// Could not connect or the connection broke.
    #[error("could not reach the LLM endpoint: {0}")]
    Connect(String),
    /// The reply is not a chat completion, or holds no verdict.
    #[error("the LLM's reply could not be read: {0}")]
    BadReply(String),
}
