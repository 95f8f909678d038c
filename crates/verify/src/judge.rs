//! `llm_judge`: the question to a judge and its outcome.

use safesh_llm::{Client, JudgeQuestion, LlmError, Outbound, cap_text};

/// What a judge answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JudgeOutcome {
    /// A verdict.
    Verdict {
        /// Whether the output satisfies the criterion.
        pass: bool,
        /// The judge's reason.
        reason: String,
    },
    /// No judge is configured (no `[llm] endpoint`).
    Unavailable(String),
    /// The judge could not be asked or answered nonsense (a failure, with why).
    Error(String),
}

/// Something that judges an output against a criterion.
pub trait Judge {
    /// Judges `output` (the redacted view) against `criterion`, given `intent`.
    fn judge(&self, intent: Option<&str>, criterion: &str, output: &str) -> JudgeOutcome;
}

/// The caller's egress check on what the judge is about to send.
type Egress<'a> = Box<dyn Fn(&Outbound<'_>) -> Result<(), String> + 'a>;

/// The most output bytes sent to the judge.
pub const JUDGE_OUTPUT_CAP: usize = 16 * 1024;

/// A [`Judge`] over the LLM client. `egress` is the caller's flow check on the
/// exact text about to be sent (the output's label decides: a secret output is
/// not sent).
pub struct LlmJudge<'a> {
    client: Option<Client>,
    unavailable: String,
    egress: Egress<'a>,
    output_cap: usize,
}

impl<'a> LlmJudge<'a> {
    /// A judge over `client`, with the caller's egress check.
    pub fn new(client: Client, egress: impl Fn(&Outbound<'_>) -> Result<(), String> + 'a) -> Self {
        LlmJudge {
            client: Some(client),
            unavailable: String::new(),
            egress: Box::new(egress),
            output_cap: JUDGE_OUTPUT_CAP,
        }
    }

    /// A judge from a client that could not be built: no endpoint makes every
    /// `llm_judge` `unavailable`; any other error fails them with its message.
    pub fn from_result(
        client: Result<Client, LlmError>,
        egress: impl Fn(&Outbound<'_>) -> Result<(), String> + 'a,
    ) -> Self {
        match client {
            Ok(c) => LlmJudge::new(c, egress),
            Err(e) => LlmJudge {
                client: None,
                unavailable: e.to_string(),
                egress: Box::new(egress),
                output_cap: JUDGE_OUTPUT_CAP,
            },
        }
    }

    /// Sets the most output bytes sent.
    pub fn with_output_cap(mut self, cap: usize) -> Self {
        self.output_cap = cap;
        self
    }
}

impl Judge for LlmJudge<'_> {
    fn judge(&self, intent: Option<&str>, criterion: &str, output: &str) -> JudgeOutcome {
        let Some(client) = &self.client else {
            return JudgeOutcome::Unavailable(self.unavailable.clone());
        };
        let q = JudgeQuestion {
            intent: intent.map(str::to_string),
            criterion: criterion.to_string(),
            output: cap_text(output, self.output_cap),
        };
        match client.judge(&q, &*self.egress) {
            Ok(v) => JudgeOutcome::Verdict {
                pass: v.pass,
                reason: v.reason,
            },
            Err(LlmError::NotConfigured) => {
                JudgeOutcome::Unavailable(LlmError::NotConfigured.to_string())
            }
            Err(e) => JudgeOutcome::Error(e.to_string()),
        }
    }
}
