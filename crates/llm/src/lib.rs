//! safesh's LLM client: an OpenAI-compatible chat-completions client (`[llm]
//! endpoint, model, api_key_env`), blocking, on the workspace's one HTTP stack
//! (reqwest + rustls, as `safesh-tools-net`).
//!
//! The client never decides egress itself: every request first goes through the
//! caller's [`EgressCheck`] with the exact text about to be sent, so the runtime
//! can apply its flow rules (a secret-labelled output is not sent; untrusted data
//! may be). It follows no redirects and uses no proxy from the environment: the
//! configured endpoint's host is the only one it talks to.
//!
//! [`Client::judge`] is the `llm_judge` assertion's question: intent, criterion
//! and (capped) output in, a structured verdict `{pass, reason}` out, parsed by
//! [`parse_verdict`] (robust to code fences and prose around the JSON, never a
//! silent pass).

mod client;
mod error;
#[cfg(feature = "fake-server")]
pub mod fake;
mod verdict;

pub use client::{ChatMessage, Client, EgressCheck, LlmConfig, Outbound, allow_all};
pub use error::LlmError;
pub use verdict::{JudgeQuestion, JudgeVerdict, cap_text, parse_verdict};
