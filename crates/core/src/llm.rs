//! The `[llm]` client (`endpoint`, `model`, `api_key_env`, `timeout_ms`): one
//! place builds it for the `verify` builtin's `llm_judge` and the server's
//! verification, so both ask the same judge the same way.

use crate::error::ErrorCode;
use safesh_flow::Classifier;
use safesh_label::Label;
use safesh_policy::config::Config;

/// The model `[llm]` uses when it names none.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// The LLM client of `[llm]` (`Err(NotConfigured)` without an endpoint).
pub fn client(config: &Config) -> Result<safesh_llm::Client, safesh_llm::LlmError> {
    let l = &config.llm;
    let Some(endpoint) = l.endpoint.clone() else {
        return Err(safesh_llm::LlmError::NotConfigured);
    };
    let mut c = safesh_llm::LlmConfig::new(
        endpoint,
        l.model.clone().unwrap_or_else(|| DEFAULT_MODEL.into()),
    );
    c.api_key_env = l.api_key_env.clone();
    if let Some(ms) = l.timeout_ms {
        c.timeout_ms = ms;
    }
    safesh_llm::Client::from_env(c)
}

/// The flow check on a judge request: `what` (the judged input or output)
/// labeled `label` may go to the endpoint's host only when the flow rules let
/// it — a secret may not, an untrusted text may (the request is egress like
/// any other).
pub fn judge_egress(
    classifier: Classifier,
    label: Label,
    what: &'static str,
) -> impl Fn(&safesh_llm::Outbound<'_>) -> Result<(), String> {
    move |out| {
        classifier.flows_to_host(&label, out.host).map_err(|d| {
            format!(
                "{}: the {what} is {} data and may not flow to {} (the judge's request is egress like any other)",
                ErrorCode::FlowViolation,
                d.label,
                d.host
            )
        })
    }
}
