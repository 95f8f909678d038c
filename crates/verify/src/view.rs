//! The caller's view of a finished step: exactly what the model sees (redacted,
//! capped), so that an assertion can never reveal more than the result does.

use serde_json::Value;

/// A file read for an assertion, through the same path check as `cat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileRead {
    /// The file's text as the model would see it (redacted).
    Text(String),
    /// No such file.
    Missing,
    /// The path check refused the read (the refusal's message).
    Refused(String),
}

/// What an assertion can look at. The caller implements it over its result: every
/// text it returns must already be the redacted view the model sees.
pub trait View {
    /// The step's stdout (`output` / `stdout` targets).
    fn stdout(&self) -> &str;
    /// The step's stderr.
    fn stderr(&self) -> &str {
        ""
    }
    /// The exit status, when the step ran.
    fn exit_code(&self) -> Option<i32> {
        None
    }
    /// The envelope's JSON payload (`null`/absent when the output is not JSON,
    /// truncated or redacted).
    fn payload(&self) -> Option<&Value> {
        None
    }
    /// A tag of the envelope's `meta.tags`.
    fn tag(&self, _key: &str) -> Option<String> {
        None
    }
    /// A context value (redacted as `context.get` shows it); `Err` when the
    /// store cannot be read.
    fn context(&self, _scope: &str, _key: &str) -> Result<Option<Value>, String> {
        Err("no context store here".into())
    }
    /// Reads a file through the path check of `cat`, redacted.
    fn read_file(&self, _path: &str) -> FileRead {
        FileRead::Refused("files cannot be read here".into())
    }
    /// The step's declared intent (for `llm_judge`).
    fn intent(&self) -> Option<&str> {
        None
    }
    /// Redacts text before it is shown in a result's `actual` (a second belt:
    /// the view's texts are redacted already).
    fn redact(&self, text: &str) -> String {
        text.to_string()
    }
}

/// The simplest view: stdout only (and optionally stderr, exit status, intent).
#[derive(Clone, Debug, Default)]
pub struct TextView {
    /// stdout.
    pub stdout: String,
    /// stderr.
    pub stderr: String,
    /// The exit status.
    pub exit_code: Option<i32>,
    /// The intent.
    pub intent: Option<String>,
}

impl TextView {
    /// A view of `stdout` alone.
    pub fn new(stdout: impl Into<String>) -> Self {
        TextView {
            stdout: stdout.into(),
            ..TextView::default()
        }
    }
}

impl View for TextView {
    fn stdout(&self) -> &str {
        &self.stdout
    }
    fn stderr(&self) -> &str {
        &self.stderr
    }
    fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }
    fn intent(&self) -> Option<&str> {
        self.intent.as_deref()
    }
}
