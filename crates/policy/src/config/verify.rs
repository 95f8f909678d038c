//! `[verify]` and `[llm]`: how assertions are checked, and the one LLM client
//! (`llm_judge`, later agent work).
//!
//! ```toml
//! [verify]
//! fail_fast = false            # stop at the first failed assertion
//! llm_judge_required = true    # no judge: llm_judge fails (false: a warning, left out of `passed`)
//!
//! [llm]
//! endpoint = "https://api.openai.com/v1"   # OpenAI-compatible; its host is reachable by the judge only
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"           # the variable holding the key (never the key)
//! timeout_ms = 30000
//! ```
//!
//! Every key is optional; a later layer's key wins. An untrusted project config
//! is not applied at all (like every other section), so it cannot point the
//! judge at a host of its choosing.

use super::load::ConfigError;
use super::schema::{Cx, Val, as_bool, as_string, as_table, as_u64, entries, key_str, unknown};

pub(crate) const VERIFY_KEYS: &[&str] = &["fail_fast", "llm_judge_required"];
pub(crate) const LLM_KEYS: &[&str] = &["endpoint", "model", "api_key_env", "timeout_ms"];

/// `[verify]`: every key optional (built-in: `fail_fast = false`,
/// `llm_judge_required = true`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifySettings {
    /// Stop at the first failed assertion; the rest are reported as skipped.
    pub fail_fast: Option<bool>,
    /// `llm_judge` with no judge fails (true) or is a warning left out of
    /// `passed` (false).
    pub llm_judge_required: Option<bool>,
}

/// `[llm]`: the OpenAI-compatible chat-completions endpoint. No endpoint: no
/// judge (`llm_judge` is `unavailable`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlmSettings {
    /// The base URL (`…/v1`); `/chat/completions` is appended.
    pub endpoint: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// The environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// The request timeout.
    pub timeout_ms: Option<u64>,
}

/// Parses `[verify]`.
pub(crate) fn parse_verify(cx: &Cx, v: &Val) -> Result<VerifySettings, ConfigError> {
    const S: &str = "[verify]";
    let mut out = VerifySettings::default();
    for (k, v) in entries(as_table(cx, "verify", "the top level", v)?) {
        let key = key_str(k);
        let slot = match key {
            "fail_fast" => &mut out.fail_fast,
            "llm_judge_required" => &mut out.llm_judge_required,
            _ => return Err(unknown(cx, k, S, VERIFY_KEYS)),
        };
        *slot = Some(as_bool(cx, key, S, v)?);
    }
    Ok(out)
}

/// Parses `[llm]`; the endpoint must be an `http(s)://` URL with a host.
pub(crate) fn parse_llm(cx: &Cx, v: &Val) -> Result<LlmSettings, ConfigError> {
    const S: &str = "[llm]";
    let mut out = LlmSettings::default();
    for (k, v) in entries(as_table(cx, "llm", "the top level", v)?) {
        match key_str(k) {
            "endpoint" => {
                let url = as_string(cx, "endpoint", S, v)?;
                if super::platforms::url_host(&url).is_none() {
                    return Err(cx.err(
                        v.span(),
                        format!(
                            "`endpoint` in {S} must be an http:// or https:// URL with a host, not {url:?}"
                        ),
                    ));
                }
                out.endpoint = Some(url);
            }
            "model" => out.model = Some(as_string(cx, "model", S, v)?),
            "api_key_env" => out.api_key_env = Some(as_string(cx, "api_key_env", S, v)?),
            "timeout_ms" => out.timeout_ms = Some(as_u64(cx, "timeout_ms", S, v)?),
            _ => return Err(unknown(cx, k, S, LLM_KEYS)),
        }
    }
    Ok(out)
}

/// Merges a later layer's `[verify]` over an earlier one.
pub(crate) fn merge_verify(into: &mut VerifySettings, later: VerifySettings) {
    into.fail_fast = later.fail_fast.or(into.fail_fast);
    into.llm_judge_required = later.llm_judge_required.or(into.llm_judge_required);
}

/// Merges a later layer's `[llm]` over an earlier one.
pub(crate) fn merge_llm(into: &mut LlmSettings, later: LlmSettings) {
    into.endpoint = later.endpoint.or(into.endpoint.take());
    into.model = later.model.or(into.model.take());
    into.api_key_env = later.api_key_env.or(into.api_key_env.take());
    into.timeout_ms = later.timeout_ms.or(into.timeout_ms);
}
