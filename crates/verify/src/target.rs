//! What an assertion looks at: `output`, `stdout`, `stderr`, `exit_code`,
//! `payload[.<json path>]`, `context.<scope>.<key>`, `meta.tags.<k>`, `file:<path>`.

use serde::Serialize;
use std::fmt;

/// A parsed assertion target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum Target {
    /// The step's full stdout (as the model sees it).
    Output,
    /// The same text, named `stdout`.
    Stdout,
    /// The step's stderr.
    Stderr,
    /// The exit status.
    ExitCode,
    /// The envelope's JSON payload, or a path inside it (`items.0.name`).
    Payload(Vec<String>),
    /// A context value: scope and key.
    Context {
        /// `project`, `session`, `step` or `history`.
        scope: String,
        /// The key.
        key: String,
    },
    /// A tag of the envelope's `meta.tags`.
    Tag(String),
    /// A file, read through the same path check as `cat`.
    File(String),
}

/// The context scopes a target may name.
pub const SCOPES: &[&str] = &["project", "session", "step", "history"];

impl Target {
    /// Parses a target; the error says what is accepted.
    pub fn parse(s: &str) -> Result<Target, String> {
        let t = s.trim();
        Ok(match t {
            "output" => Target::Output,
            "stdout" => Target::Stdout,
            "stderr" => Target::Stderr,
            "exit_code" => Target::ExitCode,
            "payload" => Target::Payload(Vec::new()),
            _ => {
                if let Some(path) = t.strip_prefix("payload.") {
                    let parts: Vec<String> = path.split('.').map(str::to_string).collect();
                    if parts.iter().any(String::is_empty) {
                        return Err(format!("empty segment in the payload path {path:?}"));
                    }
                    Target::Payload(parts)
                } else if let Some(rest) = t.strip_prefix("context.") {
                    let (scope, key) = rest.split_once('.').ok_or_else(|| {
                        format!("{t:?}: a context target is context.<scope>.<key>")
                    })?;
                    if !SCOPES.contains(&scope) {
                        return Err(format!(
                            "unknown context scope {scope:?} (scopes: {})",
                            SCOPES.join(", ")
                        ));
                    }
                    if key.is_empty() {
                        return Err(format!("{t:?}: the context key is empty"));
                    }
                    Target::Context {
                        scope: scope.to_string(),
                        key: key.to_string(),
                    }
                } else if let Some(k) = t.strip_prefix("meta.tags.") {
                    if k.is_empty() {
                        return Err("meta.tags.<k>: the tag name is empty".into());
                    }
                    Target::Tag(k.to_string())
                } else if let Some(p) = t.strip_prefix("file:") {
                    if p.is_empty() {
                        return Err("file:<path>: the path is empty".into());
                    }
                    Target::File(p.to_string())
                } else {
                    return Err(format!(
                        "unknown target {t:?} (targets: output, stdout, stderr, exit_code, \
                         payload.<json path>, context.<scope>.<key>, meta.tags.<k>, file:<path>)"
                    ));
                }
            }
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Output => write!(f, "output"),
            Target::Stdout => write!(f, "stdout"),
            Target::Stderr => write!(f, "stderr"),
            Target::ExitCode => write!(f, "exit_code"),
            Target::Payload(p) if p.is_empty() => write!(f, "payload"),
            Target::Payload(p) => write!(f, "payload.{}", p.join(".")),
            Target::Context { scope, key } => write!(f, "context.{scope}.{key}"),
            Target::Tag(k) => write!(f, "meta.tags.{k}"),
            Target::File(p) => write!(f, "file:{p}"),
        }
    }
}

impl From<Target> for String {
    fn from(t: Target) -> String {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_round_trips() {
        for s in [
            "output",
            "stdout",
            "stderr",
            "exit_code",
            "payload",
            "payload.items.0.name",
            "context.session.x",
            "context.project.a.b",
            "meta.tags.env",
            "file:out/report.md",
        ] {
            assert_eq!(Target::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn bad_targets_say_what_is_accepted() {
        assert!(
            Target::parse("outptu")
                .unwrap_err()
                .contains("targets: output")
        );
        assert!(
            Target::parse("context.global.x")
                .unwrap_err()
                .contains("scopes")
        );
        assert!(Target::parse("context.session").is_err());
        assert!(Target::parse("payload..x").is_err());
        assert!(Target::parse("file:").is_err());
    }
}
