//! `verify ASSERTION…`: agsh's verified execution inside a script.
//!
//! ```text
//! ls src | verify not_empty 'contains:.rs' 'count_gte:3' | wc -l
//! ```
//!
//! It reads its whole stdin (bounded by `[limits] string_bytes`), checks the
//! assertions (the short form `TYPE[@TARGET][:EXPECTED]` of [`safesh_verify`])
//! and, when all hold, writes the input through unchanged with its label. When
//! one fails it stops the script like a refusal: `VERIFICATION_FAILED` (status
//! 1), the failed assertion's detail and a suggestion.
//!
//! Assertions see the same view the model would: input the model may not see
//! (a secret) is checked as its redaction placeholder, so `verify` is never an
//! oracle on a secret. `file:` targets are read through the same path check as
//! `cat` (a path outside the read roots stops the script with PATH_VIOLATION,
//! never a silent pass), redacted like the input; what a file decided joins the
//! label of what `verify` writes. `llm_judge` asks the `[llm]` endpoint; the
//! request is network egress decided by the flow rules with the input's label
//! (a secret input is not sent). No endpoint: `unavailable`, which fails unless
//! `[verify] llm_judge_required = false`.

use super::texts;
use crate::error::{ErrorCode, Refusal};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use safesh_flow::Classifier;
use safesh_label::Label;
use safesh_verify::{FileRead, Judge, LlmJudge, Options, View};
use serde_json::Value;
use std::cell::RefCell;
use std::io::Read as _;

const USAGE: &str = "usage: verify ASSERTION… (TYPE[@TARGET][:EXPECTED], e.g. not_empty \
'contains:.rs' 'count_gte:3'; types: not_empty, contains, count_gte, matches_regex, json_schema, \
llm_judge, exit_code, file_exists, file_contains)";

/// The input as the model would see it, and what else an assertion may ask.
struct InputView<'a> {
    text: String,
    payload: Option<Value>,
    sh: &'a Shell,
    /// The labels of the files read (they decide what `verify` does).
    read_labels: RefCell<Label>,
    /// The first path check that refused a `file:` read (it stops the script).
    refused: RefCell<Option<Refusal>>,
}

impl View for InputView<'_> {
    fn stdout(&self) -> &str {
        &self.text
    }
    fn payload(&self) -> Option<&Value> {
        self.payload.as_ref()
    }
    fn context(&self, scope: &str, key: &str) -> Result<Option<Value>, String> {
        let (Some(config), Some(owners)) = (self.sh.context_config(), self.sh.context_owners())
        else {
            return Err("no context store in this session (it has no policy)".into());
        };
        let scope = safesh_context::Scope::parse(scope).map_err(|e| e.to_string())?;
        let owner = owners.owner(scope).map_err(|e| e.to_string())?.to_string();
        let store = crate::context::store(config).map_err(|r| r.message)?;
        let item = store.get(scope, &owner, key).map_err(|e| e.to_string())?;
        Ok(item.map(|i| match hidden(config, &i.label, 1) {
            Some(placeholder) => Value::String(placeholder),
            None => i.value,
        }))
    }
    fn read_file(&self, path: &str) -> FileRead {
        match read_checked(self.sh, path) {
            Ok(Some((bytes, label))) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let lines = text.lines().count().max(1);
                let shown = self
                    .sh
                    .context_config()
                    .and_then(|c| hidden(c, &label, lines))
                    .unwrap_or(text);
                self.read_labels.borrow_mut().join_assign(&label);
                FileRead::Text(shown)
            }
            Ok(None) => FileRead::Missing,
            Err(r) => {
                let said = format!("{}: {}", r.code, r.message);
                let mut first = self.refused.borrow_mut();
                if first.is_none() && r.code != ErrorCode::ExecutionError {
                    *first = Some(r);
                }
                FileRead::Refused(said)
            }
        }
    }
}

/// Reads `path` as `cat` would: the read path check (on the name and on the
/// file reached), the file's recorded label, at most `[limits] string_bytes`.
/// `Ok(None)`: no such file.
fn read_checked(sh: &Shell, path: &str) -> Result<Option<(Vec<u8>, Label)>, Refusal> {
    let full = sh.cwd.join(path);
    let real = sh.check_read_resolved(&full)?;
    let mut refused = None;
    let opened = safesh_utils::open::open_resolved(&full, libc::O_RDONLY, 0, |other| {
        sh.check_read_path(other).map_err(|r| {
            refused = Some(r);
            std::io::Error::from(std::io::ErrorKind::PermissionDenied)
        })
    });
    if let Some(r) = refused {
        return Err(r);
    }
    let io_error = |e: std::io::Error| {
        Refusal::new(
            ErrorCode::ExecutionError,
            format!("verify: {path}: {}", safesh_utils::io_error_text(&e)),
        )
    };
    let (f, opened_real) = match opened {
        Ok(x) => x,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(e)),
    };
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Refusal::new(
            ErrorCode::ExecutionError,
            format!("verify: {path}: Is a directory"),
        ));
    }
    // Fail closed: a file whose recorded label cannot be asked is not read.
    let mut label = sh.file_label_checked(&full, real.as_deref())?;
    if real.as_deref() != Some(opened_real.as_path()) {
        label = label.join(&sh.file_label_checked(&opened_real, Some(&opened_real))?);
    }
    let limit = sh.shared.limits.string_bytes;
    let mut bytes = Vec::new();
    f.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::limit(
            "a file read by verify in bytes",
            limit,
            "string_bytes",
        ));
    }
    Ok(Some((bytes, label)))
}

/// The placeholder the model would see instead of data labeled `label`, or
/// `None` when it may see it (or the human turned redaction off).
fn hidden(config: &safesh_policy::config::Config, label: &Label, lines: usize) -> Option<String> {
    if !config.labels.redacts() {
        return None;
    }
    Classifier::from_config(config).redaction_summary(label, lines)
}

/// `[verify]` of the session's config.
fn options(sh: &Shell) -> Options {
    let d = Options::default();
    let Some(c) = sh.context_config() else {
        return d;
    };
    Options {
        fail_fast: c.verify.fail_fast.unwrap_or(d.fail_fast),
        llm_judge_required: c.verify.llm_judge_required.unwrap_or(d.llm_judge_required),
        actual_cap: d.actual_cap,
    }
}

/// Reads fd 0 to its end, at most `limit` bytes (more is LIMIT_EXCEEDED).
fn read_input(sh: &Shell, limit: u64) -> Result<(Vec<u8>, Label), Refusal> {
    let input = sh.in_fd(0);
    let mut data = Vec::new();
    let mut label = Label::empty();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (n, l) = input.read_labeled(&mut buf).map_err(|e| {
            Refusal::new(
                ErrorCode::ExecutionError,
                format!("verify: reading stdin: {e}"),
            )
        })?;
        if n == 0 {
            break;
        }
        label.join_assign(&l);
        data.extend_from_slice(&buf[..n]);
        if data.len() as u64 > limit {
            return Err(Refusal::limit(
                "the input of verify in bytes",
                limit,
                "string_bytes",
            ));
        }
    }
    Ok((data, label))
}

/// `verify ASSERTION…`.
pub(super) fn verify(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut words = texts(&argv[1..]);
    if words.first().is_some_and(|w| w == "--") {
        words.remove(0);
    }
    if words.is_empty() || words.iter().any(|w| w == "--help") {
        sh.diag(format!("verify: {USAGE}"));
        sh.set_status(2);
        return Ok(());
    }
    let asserts = match safesh_verify::parse_short(&words) {
        Ok(a) => a,
        Err(e) => {
            // A bad assertion is the script's bug: said before the input is read.
            sh.diag(e.to_string());
            sh.set_status(2);
            return Ok(());
        }
    };
    let (data, label) = read_input(sh, sh.shared.limits.string_bytes)?;
    let label = label.join(&sh.pc);
    let text = String::from_utf8_lossy(&data).into_owned();
    let lines = text.lines().count().max(1);
    let shown = sh
        .context_config()
        .and_then(|c| hidden(c, &label, lines))
        .unwrap_or_else(|| text.clone());
    let view = InputView {
        payload: serde_json::from_str(shown.trim()).ok(),
        text: shown,
        sh,
        read_labels: RefCell::new(Label::empty()),
        refused: RefCell::new(None),
    };
    let opts = options(sh);
    let judge: Option<LlmJudge<'_>> = match sh.context_config() {
        Some(config) if asserts.iter().any(|a| a.kind.trim() == "llm_judge") => {
            Some(LlmJudge::from_result(
                crate::llm::client(config),
                crate::llm::judge_egress(Classifier::from_config(config), label.clone(), "input"),
            ))
        }
        _ => None,
    };
    let result = safesh_verify::verify_with(
        &view,
        &asserts,
        &opts,
        judge.as_ref().map(|j| j as &dyn Judge),
    );
    // A `file:` read the path check refused is that refusal, not a failed assertion.
    if let Some(r) = view.refused.into_inner() {
        return Err(r.command("verify").into());
    }
    let label = label.join(&view.read_labels.into_inner());
    for w in &result.warnings {
        sh.diag(format!("verify: {w}"));
    }
    if !result.passed {
        let failed: Vec<_> = result
            .results
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.passed && !r.skipped && (!r.unavailable || opts.llm_judge_required))
            .collect();
        let message = match failed.first() {
            Some((i, r)) => {
                let more = if failed.len() > 1 {
                    format!(" ({} assertions failed)", failed.len())
                } else {
                    String::new()
                };
                format!(
                    "verify: assertion {} ({}) failed: {}{more}",
                    i + 1,
                    r.kind,
                    r.detail
                )
            }
            None => "verify: the verification failed".into(),
        };
        return Err(Refusal::new(ErrorCode::VerificationFailed, message)
            .rule("verify")
            .command("verify")
            .suggest("the command ran; check what it produced, then fix the step or the assertion")
            .into());
    }
    // Every assertion held: the input goes on, byte for byte, with its label.
    let ok = sh.write_out(&data, &label).is_ok();
    sh.set_status(if ok { 0 } else { 141 });
    Ok(())
}
