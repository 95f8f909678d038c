//! What a client asks for: the steps and how failures are handled.

use serde::Deserialize;

/// What a step's failure does to the pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Stop here (roll back to the pipeline's last checkpoint, if one was saved).
    #[default]
    Stop,
    /// Go on with the next step.
    Skip,
    /// Run the step again, up to `retries` more times; then stop.
    Retry,
}

impl OnError {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Stop => "stop",
            OnError::Skip => "skip",
            OnError::Retry => "retry",
        }
    }
}

/// Extra runs of a step whose `on_error` is `retry` and that sets no `retries`.
pub const DEFAULT_RETRIES: u32 = 1;

/// Most extra runs a step may ask for (a client's typo must not loop for hours).
pub const MAX_RETRIES: u32 = 10;

/// One step: what to run (`P`, the server's exec parameters: `command`+`args`
/// or `script`, `input`, `intent`, `verify`, `tags`, …) and how it fails.
#[derive(Clone, Debug, Deserialize)]
pub struct Step<P> {
    /// What to run.
    #[serde(flatten)]
    pub exec: P,
    /// What a failure does (default `stop`).
    #[serde(default)]
    pub on_error: Option<OnError>,
    /// Extra runs for `on_error: retry` (default [`DEFAULT_RETRIES`], at most
    /// [`MAX_RETRIES`]).
    #[serde(default)]
    pub retries: Option<u32>,
    /// Save a checkpoint before this step.
    #[serde(default)]
    pub checkpoint_before: bool,
}

/// A pipeline request.
#[derive(Clone, Debug, Deserialize)]
pub struct Pipeline<P> {
    /// The steps, in order.
    #[serde(default = "Vec::new")]
    pub steps: Vec<Step<P>>,
    /// The annotated text form instead of `steps` (see [`crate::parse_text`]);
    /// the caller turns it into steps before running.
    #[serde(default)]
    pub text: Option<String>,
    /// Keep going after a failure: `on_error: skip` for every step.
    #[serde(default)]
    pub continue_on_error: bool,
    /// Save a checkpoint before the first step.
    #[serde(default)]
    pub checkpoint_before: bool,
    /// The session every step runs in (a step's own `session` wins).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
}

impl<P> Pipeline<P> {
    /// What a failure of step `i` does, with `continue_on_error` applied.
    pub fn on_error(&self, i: usize) -> OnError {
        if self.continue_on_error {
            return OnError::Skip;
        }
        self.steps
            .get(i)
            .and_then(|s| s.on_error)
            .unwrap_or_default()
    }

    /// How many extra runs step `i` gets.
    pub fn retries(&self, i: usize) -> u32 {
        match self.on_error(i) {
            OnError::Retry => self
                .steps
                .get(i)
                .and_then(|s| s.retries)
                .unwrap_or(DEFAULT_RETRIES)
                .min(MAX_RETRIES),
            _ => 0,
        }
    }
}
