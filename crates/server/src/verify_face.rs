//! Verification of an exec's result (agsh's `intent` + `verify`) with
//! [`safesh_verify`]: the assertions are checked before anything runs, then
//! evaluated over [`ResultView`] — the same redacted, capped result the model
//! is given — so an assertion can never be an oracle on a secret.
//!
//! A command that succeeded but failed its verification gets `exit_code` 1 and
//! `error.code` `VERIFICATION_FAILED`; a command that failed keeps its own
//! status and error. `llm_judge` asks the `[llm]` endpoint through
//! [`safesh_verify::LlmJudge`]; the request is network egress decided by the
//! flow rules with the output's label (a secret output is not sent, and the
//! assertion fails saying so).

use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::settings::Settings;
use crate::shape::{Capture, OutputMode, Redaction, ShapeConfig};
use safesh_core::context as cx;
use safesh_core::{ErrorCode, InputSource, OutputTarget, Refusal, Session};
use safesh_flow::Classifier;
use safesh_label::Label;
use safesh_policy::config::Config;
use safesh_verify::{FileRead, Judge, LlmJudge, Options, Verification, View};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::sync::Arc;

/// The rule named by a VERIFICATION_FAILED error.
pub const RULE: &str = "verify";

/// Checks a request's assertions before anything runs: unknown type, bad
/// target, bad regex, bad schema → a bad request naming the index and field.
pub fn check(p: &ExecParams) -> Result<(), ServerError> {
    if let Some(asserts) = &p.verify {
        safesh_verify::validate(asserts).map_err(|e| ServerError::BadParams(e.to_string()))?;
    }
    Ok(())
}

/// `[verify]` of `config` as the engine's options.
pub fn options(config: &Config) -> Options {
    let d = Options::default();
    Options {
        fail_fast: config.verify.fail_fast.unwrap_or(d.fail_fast),
        llm_judge_required: config
            .verify
            .llm_judge_required
            .unwrap_or(d.llm_judge_required),
        actual_cap: d.actual_cap,
    }
}

/// The model `[llm]` uses when it names none.
pub const DEFAULT_MODEL: &str = safesh_core::llm::DEFAULT_MODEL;

/// The LLM client of `[llm]` (`Err(NotConfigured)` without an endpoint).
pub fn llm_client(config: &Config) -> Result<safesh_llm::Client, safesh_llm::LlmError> {
    safesh_core::llm::client(config)
}

/// The redacted result of one exec as the model sees it, plus what an
/// assertion may look up: context values (labels honoured) and files (read by
/// `cat` in the same session, so through the same path check).
pub struct ResultView<'a> {
    stdout: String,
    stderr: String,
    exit_code: Option<i32>,
    payload: Value,
    tags: std::collections::BTreeMap<String, String>,
    intent: Option<String>,
    session: RefCell<&'a mut Session>,
    settings: &'a Settings,
    conn: &'a str,
    session_id: Option<&'a str>,
    redaction: Option<Redaction>,
}

impl<'a> ResultView<'a> {
    /// The view of result `v` (already shaped and redacted) of request `p`.
    pub fn new(
        v: &Value,
        p: &'a ExecParams,
        session: &'a mut Session,
        settings: &'a Settings,
    ) -> Self {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        ResultView {
            stdout: text("stdout")
                .or_else(|| text("output"))
                .unwrap_or_default(),
            stderr: text("stderr").unwrap_or_default(),
            exit_code: v["exit_code"].as_i64().and_then(|n| i32::try_from(n).ok()),
            payload: v["payload"].clone(),
            tags: p.tags.clone().unwrap_or_default(),
            intent: p.intent.as_ref().map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            session: RefCell::new(session),
            settings,
            conn: &p.conn,
            session_id: p.session.as_deref(),
            redaction: Redaction::from_config(settings.policy.config()),
        }
    }
}

impl View for ResultView<'_> {
    fn stdout(&self) -> &str {
        &self.stdout
    }
    fn stderr(&self) -> &str {
        &self.stderr
    }
    fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }
    fn payload(&self) -> Option<&Value> {
        Some(&self.payload)
    }
    fn tag(&self, key: &str) -> Option<String> {
        self.tags.get(key).cloned()
    }
    fn context(&self, scope: &str, key: &str) -> Result<Option<Value>, String> {
        let config = self.settings.policy.config();
        let scope = safesh_context::Scope::parse(scope).map_err(|e| e.to_string())?;
        let owners = cx::owners(config, self.session_id);
        let owner = owners.owner(scope).map_err(|e| e.to_string())?.to_string();
        let store = cx::store(config).map_err(|r| r.message)?;
        let item = store.get(scope, &owner, key).map_err(|e| e.to_string())?;
        Ok(item.map(|i| {
            // A value the model may not see is its placeholder here too.
            match &self.redaction {
                Some(r) if r.hides(&i.label) => json!(
                    r.placeholder(&i.label, 1)
                        .unwrap_or_else(|| "[redacted]".into())
                ),
                _ => i.value,
            }
        }))
    }
    fn read_file(&self, path: &str) -> FileRead {
        let Ok(mut session) = self.session.try_borrow_mut() else {
            return FileRead::Refused("the session is busy".into());
        };
        let capture = Arc::new(
            Capture::new(
                OutputMode::Separate,
                ShapeConfig {
                    cap: self.settings.cap,
                    spill_dir: crate::owner::scoped(
                        &self.settings.spill_dir(),
                        &crate::owner::scope(self.conn, self.session_id),
                    ),
                    retention: self.settings.spill_retention,
                },
            )
            .with_redaction(self.redaction.clone()),
        );
        let script = format!("cat -- {}", crate::exec::quote_argv(&[path.to_string()]));
        let outcome = session.exec(
            &script,
            InputSource::Empty,
            OutputTarget::Stream(capture.clone()),
        );
        let v = capture.result(&outcome);
        if let Some(e) = &outcome.error {
            return FileRead::Refused(format!("{}: {}", e.code, e.message));
        }
        if outcome.exit_code != 0 {
            let err = v["stderr"].as_str().unwrap_or_default();
            return if err.contains("No such file") {
                FileRead::Missing
            } else {
                FileRead::Refused(err.trim().to_string())
            };
        }
        FileRead::Text(v["stdout"].as_str().unwrap_or_default().to_string())
    }
    fn intent(&self) -> Option<&str> {
        self.intent.as_deref()
    }
    fn redact(&self, text: &str) -> String {
        match self.session.try_borrow() {
            Ok(s) => s.redact_known(text),
            // Never shown unredacted: a busy session means no text at all.
            Err(_) => "[redacted]".into(),
        }
    }
}

/// Verifies result `v` of request `p` (run in `session`, output labeled
/// `label`); sets `verification`, and on a failed verification of a command
/// that succeeded, `exit_code` 1 and the VERIFICATION_FAILED `error`.
pub fn apply(
    v: &mut Value,
    p: &ExecParams,
    session: &mut Session,
    settings: &Settings,
    label: &Label,
) -> Option<Verification> {
    let asserts = p.verify.as_ref()?;
    let config = settings.policy.config();
    let opts = options(config);
    let judge: Option<LlmJudge<'_>> =
        asserts
            .iter()
            .any(|a| a.kind.trim() == "llm_judge")
            .then(|| {
                LlmJudge::from_result(
                    llm_client(config),
                    safesh_core::llm::judge_egress(
                        Classifier::from_config(config),
                        label.clone(),
                        "output",
                    ),
                )
            });
    let result = {
        let view = ResultView::new(v, p, session, settings);
        safesh_verify::verify_with(
            &view,
            asserts,
            &opts,
            judge.as_ref().map(|j| j as &dyn Judge),
        )
    };
    v["verification"] = serde_json::to_value(&result).unwrap_or(Value::Null);
    for w in &result.warnings {
        if let Some(list) = v["warnings"].as_array_mut() {
            list.push(json!(w));
        } else {
            v["warnings"] = json!([w]);
        }
    }
    let ran_ok = v["exit_code"] == json!(0) && v["error"].is_null();
    if !result.passed && ran_ok {
        v["exit_code"] = json!(1);
        v["error"] = serde_json::to_value(failure(&result, &opts)).unwrap_or(Value::Null);
        if let Some(entry) = v["provenance"].get_mut(0) {
            entry["status"] = json!("error");
        }
    }
    Some(result)
}

/// The VERIFICATION_FAILED refusal for a failed verification: the first
/// failed assertion's index, type and detail.
pub fn failure(result: &Verification, opts: &Options) -> Refusal {
    let failed: Vec<(usize, &safesh_verify::AssertionResult)> = result
        .results
        .iter()
        .enumerate()
        // An unavailable judge that is not required is a warning, not the failure.
        .filter(|(_, r)| !r.passed && !r.skipped && (!r.unavailable || opts.llm_judge_required))
        .collect();
    let message = match failed.first() {
        Some((i, r)) => {
            let more = match failed.len() {
                1 => String::new(),
                n => format!(" ({} assertions failed)", n),
            };
            let msg = r
                .message
                .as_deref()
                .map_or(String::new(), |m| format!(": {m}"));
            format!("verify[{i}] ({}) failed{msg}: {}{more}", r.kind, r.detail)
        }
        None => "the verification failed".into(),
    };
    Refusal::new(ErrorCode::VerificationFailed, message)
        .rule(RULE)
        .suggest(
            "the command ran; read verification.results (detail, actual) and fix the step \
             or the assertion",
        )
}

/// The history's summary of a verification: `{passed, results: [{type,
/// passed}]}` — never an `actual` value or a detail.
pub fn history_summary(result: &Verification) -> Value {
    json!({
        "passed": result.passed,
        "results": result
            .results
            .iter()
            .map(|r| json!({"type": r.kind, "passed": r.passed}))
            .collect::<Vec<_>>(),
    })
}
