//! The chat-completions request: one POST to `{endpoint}/chat/completions`.

use crate::error::LlmError;
use crate::verdict::{JudgeQuestion, JudgeVerdict, parse_verdict};
use reqwest::Url;
use reqwest::blocking::Client as Http;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;

/// The `[llm]` settings: where the model is and how to authenticate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmConfig {
    /// Base URL of an OpenAI-compatible API (`http://127.0.0.1:8080/v1`), or the
    /// full `…/chat/completions` URL.
    pub endpoint: String,
    /// The model name sent in each request.
    pub model: String,
    /// The environment variable holding the API key (sent as a bearer token);
    /// `None`: no `Authorization` header.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// How long one request may take, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    30_000
}

impl LlmConfig {
    /// A config for `endpoint` and `model`, no key, the default timeout.
    pub fn new(endpoint: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            endpoint: endpoint.into(),
            model: model.into(),
            api_key_env: None,
            timeout_ms: default_timeout_ms(),
        }
    }
}

/// One message of a chat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
        }
    }
}

/// What is about to leave the machine, shown to the caller's egress check.
#[derive(Debug)]
pub struct Outbound<'a> {
    /// The full request URL.
    pub url: &'a str,
    /// Its host.
    pub host: &'a str,
    /// Its port.
    pub port: u16,
    /// The messages' text, exactly as sent (what a flow rule must judge).
    pub content: &'a str,
}

/// The caller's egress decision: `Err(reason)` and nothing is sent.
pub type EgressCheck<'a> = &'a dyn Fn(&Outbound<'_>) -> Result<(), String>;

/// An egress check that allows everything (tests, and callers that decided before).
pub fn allow_all(_: &Outbound<'_>) -> Result<(), String> {
    Ok(())
}

/// A blocking chat-completions client bound to one endpoint.
#[derive(Debug)]
pub struct Client {
    config: LlmConfig,
    url: Url,
    api_key: Option<String>,
    http: Http,
}

/// How much of an error body is kept in messages.
const BODY_SNIPPET: usize = 300;

impl Client {
    /// A client for `config`, taking the API key from the variable `api_key_env`
    /// names in this process's environment.
    pub fn from_env(config: LlmConfig) -> Result<Self, LlmError> {
        let key = match &config.api_key_env {
            Some(env) => match std::env::var(env) {
                Ok(v) if !v.is_empty() => Some(v),
                _ => return Err(LlmError::MissingKey { env: env.clone() }),
            },
            None => None,
        };
        Client::new(config, key)
    }

    /// A client for `config` with an explicit key (`None`: no `Authorization`).
    pub fn new(config: LlmConfig, api_key: Option<String>) -> Result<Self, LlmError> {
        if config.endpoint.trim().is_empty() {
            return Err(LlmError::NotConfigured);
        }
        let url = completions_url(&config.endpoint)?;
        let http = Http::builder()
            // The configured host only: no proxy from the environment, no redirects.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .build()
            .map_err(|e| LlmError::Connect(e.to_string()))?;
        Ok(Client {
            config,
            url,
            api_key,
            http,
        })
    }

    /// The request URL.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The endpoint's host (the one host the judge may reach).
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or("")
    }

    /// Sends `messages` and returns the first choice's text. `json_reply` asks
    /// for a JSON object (`response_format`). `egress` sees the text first.
    pub fn chat(
        &self,
        messages: &[ChatMessage],
        json_reply: bool,
        egress: EgressCheck<'_>,
    ) -> Result<String, LlmError> {
        let content: String = messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        egress(&Outbound {
            url: self.url.as_str(),
            host: self.host(),
            port: self.url.port_or_known_default().unwrap_or(0),
            content: &content,
        })
        .map_err(LlmError::Refused)?;
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
        });
        if json_reply {
            body["response_format"] = json!({"type": "json_object"});
        }
        let mut req = self
            .http
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(k) = &self.api_key {
            req = req.bearer_auth(k);
        }
        let resp = req.send().map_err(|e| self.transport_error(&e))?;
        let status = resp.status().as_u16();
        let text = resp.text().map_err(|e| self.transport_error(&e))?;
        if !(200..300).contains(&status) {
            let body = snippet(&text);
            return Err(match status {
                401 | 403 => LlmError::Unauthorized { status, body },
                429 => LlmError::RateLimited { body },
                _ => LlmError::Status { status, body },
            });
        }
        first_choice(&text)
    }

    /// Asks the model whether `q.output` satisfies `q.criterion`; the reply must
    /// hold a JSON verdict `{"pass": bool, "reason": "…"}`.
    pub fn judge(
        &self,
        q: &JudgeQuestion,
        egress: EgressCheck<'_>,
    ) -> Result<JudgeVerdict, LlmError> {
        let reply = self.chat(&q.messages(), true, egress)?;
        parse_verdict(&reply)
    }

    fn transport_error(&self, e: &reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout {
                ms: self.config.timeout_ms,
            }
        } else {
            // The chain says why (refused, reset, DNS).
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                msg.push_str(": ");
                msg.push_str(&s.to_string());
                src = s.source();
            }
            LlmError::Connect(msg)
        }
    }
}

/// `…/chat/completions` for a base URL (kept as is when already given).
fn completions_url(endpoint: &str) -> Result<Url, LlmError> {
    let bad = |reason: &str| LlmError::BadEndpoint {
        endpoint: endpoint.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = endpoint.trim().trim_end_matches('/');
    let full = if trimmed.ends_with("/chat/completions") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/chat/completions")
    };
    let url = Url::parse(&full).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "credentials in the URL are not allowed; use api_key_env",
        ));
    }
    Ok(url)
}

/// The text of `choices[0].message.content` in a chat-completions reply.
fn first_choice(text: &str) -> Result<String, LlmError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| LlmError::BadReply(format!("not JSON ({e}): {}", snippet(text))))?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(LlmError::BadReply(format!(
            "error object: {}",
            snippet(&err.to_string())
        )));
    }
    let content = v
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .and_then(|m| m.get("content"));
    match content {
        Some(Value::String(s)) => Ok(s.clone()),
        // Some servers put structured output as an object.
        Some(o @ Value::Object(_)) => Ok(o.to_string()),
        _ => Err(LlmError::BadReply(format!(
            "no choices[0].message.content: {}",
            snippet(text)
        ))),
    }
}

fn snippet(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(BODY_SNIPPET) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_forms() {
        assert_eq!(
            completions_url("http://127.0.0.1:9/v1").unwrap().as_str(),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(
            completions_url("https://h/v1/chat/completions/")
                .unwrap()
                .as_str(),
            "https://h/v1/chat/completions"
        );
        assert!(completions_url("ftp://h/v1").is_err());
        assert!(completions_url("http://u:p@h/v1").is_err());
        assert!(completions_url("not a url").is_err());
    }

    #[test]
    fn reply_shapes() {
        let ok = r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(first_choice(ok).unwrap(), "hi");
        assert!(matches!(first_choice("{}"), Err(LlmError::BadReply(_))));
        assert!(matches!(first_choice("<html>"), Err(LlmError::BadReply(_))));
        let err = r#"{"error":{"message":"model not found"}}"#;
        assert!(
            first_choice(err)
                .unwrap_err()
                .to_string()
                .contains("model not found")
        );
    }
}
