//! `pipeline` (JSON-RPC and the MCP tool): [`safesh_pipeline`] run by the
//! server. Every step goes through [`Server::exec_with`] — the entry point of
//! `execute`, so the same policy, sandbox, labels, sessions and worker
//! processes — with the previous step's raw stdout (and its label) as stdin;
//! checkpoints before steps and the rollback go through the checkpoint face.

use crate::Server;
use crate::checkpoint_face::CheckpointParams;
use crate::envelope;
use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::piped::Piped;
use safesh_core::{ApprovalChannel, ErrorCode, Interrupter, Refusal};
use safesh_pipeline::{Attempt, Pipeline, StepRunner};
use serde_json::{Value, json};
use std::sync::Arc;

/// A pipeline request: steps of exec parameters.
pub type PipelineParams = Pipeline<ExecParams>;

/// Most steps in one pipeline.
pub const MAX_STEPS: usize = 256;

/// Runs a pipeline's steps through the server.
struct Runner<'a> {
    server: &'a Server,
    conn: &'a str,
    face: Option<&'static str>,
    /// The pipeline's session (its checkpoints run there).
    session: Option<String>,
    /// `[limits] string_bytes`: most bytes handed from a step to the next.
    limit: usize,
    on_start: &'a dyn Fn(Interrupter),
    approver: Option<Arc<dyn ApprovalChannel>>,
    /// The last step's raw stdout with its label (what a spec run writes as
    /// its output and checks its criteria on).
    last_stdout: Option<Piped>,
}

/// A step result for a step that could not run: the contract's Result with
/// `error` and the envelope.
fn not_run(p: &ExecParams, error: Value, exit_code: i32) -> Value {
    let mut v = json!({
        "schema_version": 1,
        "exit_code": exit_code,
        "signal": Value::Null,
        "output": "",
        "truncated": false,
        "total_bytes": 0,
        "total_lines": 0,
        "log_path": Value::Null,
        "duration_ms": 0,
        "warnings": [],
        "error": error,
    });
    let script = p.script_text().unwrap_or_default();
    envelope::attach(
        &mut v,
        p,
        &script,
        std::time::SystemTime::now(),
        &crate::shape::Facts::default(),
    );
    v
}

impl StepRunner for Runner<'_> {
    type Params = ExecParams;
    type Data = Piped;

    fn run_step(&mut self, i: usize, params: &ExecParams, stdin: Option<&Piped>) -> Attempt<Piped> {
        let mut p = params.clone();
        p.conn = self.conn.to_string();
        p.face = self.face;
        if p.session.is_none() {
            p.session = self.session.clone();
        }
        p.pipe_stdout = Some(self.limit);
        if p.input.is_none()
            && let Some(data) = stdin
        {
            if data.overflow {
                // Never a silently cut input: the step does not run.
                let r = Refusal::new(
                    ErrorCode::LimitExceeded,
                    format!(
                        "step {} wrote more than {} bytes to stdout, the most a step hands to the next",
                        i.saturating_sub(1),
                        self.limit
                    ),
                )
                .rule("limits.string_bytes")
                .suggest(
                    "write the large output to a file in that step and read the file in this one, \
                     or give this step its own `input`",
                );
                let v = not_run(&p, serde_json::to_value(r).unwrap_or(Value::Null), 125);
                return Attempt {
                    result: v,
                    passed: false,
                    stdout: None,
                };
            }
            p.piped = Some(data.clone());
        }
        match self
            .server
            .exec_with(&p, self.on_start, self.approver.clone())
        {
            Ok(mut v) => {
                let stdout = crate::piped::take_from(&mut v);
                self.last_stdout.clone_from(&stdout);
                let passed = envelope::succeeded(&v);
                Attempt {
                    result: v,
                    passed,
                    stdout,
                }
            }
            Err(e) => {
                self.last_stdout = None;
                Attempt {
                    result: not_run(&p, e.to_json(), 2),
                    passed: false,
                    stdout: None,
                }
            }
        }
    }

    fn save_checkpoint(&mut self, before: usize) -> Result<String, Value> {
        let p = CheckpointParams {
            session: self.session.clone(),
            ..CheckpointParams::default()
        };
        let v = self
            .server
            .checkpoint("save", p, self.conn)
            .map_err(|e| e.to_json())?;
        v["name"].as_str().map(str::to_string).ok_or_else(
            || json!({"code": "EXECUTION_ERROR", "message": format!("the checkpoint before step {before} has no name")}),
        )
    }

    fn restore_checkpoint(&mut self, name: &str) -> Result<Value, Value> {
        let p = CheckpointParams {
            name: Some(name.to_string()),
            session: self.session.clone(),
            ..CheckpointParams::default()
        };
        self.server
            .checkpoint("restore", p, self.conn)
            .map_err(|e| e.to_json())
    }

    fn skipped(&self, _: usize, p: &ExecParams) -> Value {
        let script = p.script_text().unwrap_or_default();
        envelope::provenance_entry(p, &script, None, Value::Null, "skipped", Value::Null)
    }
}

impl Server {
    /// Runs a pipeline for connection `conn` (through `face`): `{passed,
    /// completed, steps, provenance, rolled_back, …}` plus the final step's
    /// `meta` and `payload`.
    pub fn pipeline(
        &self,
        pp: &PipelineParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        self.pipeline_with_stdout(pp, conn, face, on_start, approver)
            .map(|(v, _)| v)
    }

    /// [`Server::pipeline`], also giving the last step's raw stdout with its
    /// label (never the capped, redacted text the model sees).
    pub(crate) fn pipeline_with_stdout(
        &self,
        pp: &PipelineParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<(Value, Option<Piped>), ServerError> {
        let from_text;
        let pp = match &pp.text {
            Some(text) => {
                if !pp.steps.is_empty() {
                    return Err(ServerError::BadParams(
                        "give either `steps` or `text`, not both".into(),
                    ));
                }
                from_text = text_pipeline(pp, text)?;
                &from_text
            }
            None => pp,
        };
        if pp.steps.is_empty() {
            return Err(ServerError::BadParams(
                "`steps` is empty (or give the text form in `text`)".into(),
            ));
        }
        if pp.steps.len() > MAX_STEPS {
            return Err(ServerError::BadParams(format!(
                "{} steps; a pipeline has at most {MAX_STEPS}",
                pp.steps.len()
            )));
        }
        // Bad steps are said before anything runs.
        for (i, s) in pp.steps.iter().enumerate() {
            s.exec
                .script_text()
                .and_then(|_| crate::verify_face::check(&s.exec))
                .map_err(|e| {
                    let why = match e {
                        ServerError::BadParams(m) => m,
                        other => other.to_string(),
                    };
                    ServerError::BadParams(format!("step {i}: {why}"))
                })?;
        }
        if let Some(id) = &pp.session {
            self.sessions.get(id, conn)?;
        }
        let limit = usize::try_from(self.settings.limits.string_bytes).unwrap_or(usize::MAX);
        let mut runner = Runner {
            server: self,
            conn,
            face,
            session: pp.session.clone(),
            limit,
            on_start,
            approver,
            last_stdout: None,
        };
        let report = safesh_pipeline::run(pp, &mut runner);
        let mut v = report.to_json();
        let last = report.steps.last();
        let meta = last.map_or_else(|| envelope::empty_meta("pipeline"), |s| s["meta"].clone());
        v["meta"] = meta;
        v["payload"] = last.map_or(Value::Null, |s| s["payload"].clone());
        if let Some(id) = &pp.session {
            v["session"] = json!(id);
        }
        Ok((v, runner.last_stdout))
    }
}

/// The steps of the text form `text` (agsh's `cmd ?intent="…" | cmd ?verify="…"`),
/// with the rest of `pp` (session, checkpoint_before, continue_on_error).
fn text_pipeline(pp: &PipelineParams, text: &str) -> Result<PipelineParams, ServerError> {
    let parsed =
        safesh_pipeline::parse_text(text).map_err(|e| ServerError::BadParams(e.to_string()))?;
    let mut steps = Vec::with_capacity(parsed.len());
    for (i, t) in parsed.into_iter().enumerate() {
        let verify = match &t.verify {
            Some(v) => Some(text_assertions(v).map_err(|e| {
                ServerError::BadParams(format!("pipeline text, step {i} ?verify: {e}"))
            })?),
            None => None,
        };
        steps.push(safesh_pipeline::Step {
            exec: ExecParams {
                script: Some(t.script),
                intent: t.intent.map(Value::String),
                verify,
                ..ExecParams::default()
            },
            on_error: t.on_error,
            retries: t.retries,
            checkpoint_before: t.checkpoint_before,
        });
    }
    Ok(PipelineParams {
        steps,
        text: None,
        continue_on_error: pp.continue_on_error,
        checkpoint_before: pp.checkpoint_before,
        session: pp.session.clone(),
    })
}

/// `?verify`'s assertions: short-form words when the first names an assertion
/// type, else the whole text is an `llm_judge` criterion.
fn text_assertions(v: &str) -> Result<Vec<safesh_verify::Assertion>, String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    let first_type = words
        .first()
        .map(|w| &w[..w.find([':', '@']).unwrap_or(w.len())])
        .unwrap_or_default();
    if safesh_verify::Kind::parse(first_type).is_some() {
        safesh_verify::parse_short(&words).map_err(|e| e.to_string())
    } else {
        Ok(vec![safesh_verify::Assertion::new(
            "llm_judge",
            Some(Value::String(v.trim().to_string())),
        )])
    }
}

/// The MCP `pipeline` tool's input schema.
pub fn input_schema() -> Value {
    let mut step = crate::schemas::execute_params();
    step["properties"]["on_error"] = json!({"type": "string", "enum": ["stop", "skip", "retry"],
        "description": "What a failure does: stop (default; rolls back to the last checkpoint saved), skip (go on), retry (run again up to `retries` times, then stop)."});
    step["properties"]["retries"] =
        json!({"type": "integer", "minimum": 0, "maximum": safesh_pipeline::MAX_RETRIES});
    step["properties"]["checkpoint_before"] = json!({"type": "boolean", "description": "Save a checkpoint of the write roots before this step."});
    json!({
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": step, "minItems": 1, "maxItems": MAX_STEPS,
                "description": "Steps run in order. Each step's stdin is the previous step's full stdout (with its label), unless it sets `input`."},
            "continue_on_error": {"type": "boolean", "description": "Keep going after a failure (on_error: skip for every step)."},
            "checkpoint_before": {"type": "boolean", "description": "Save a checkpoint before the first step; a step that fails with on_error stop then rolls the write roots back to it."},
            "session": {"type": "string", "description": "Run every step in this session."},
            "text": {"type": "string", "description": "The annotated text form instead of `steps`: `fs:list ./src ?intent=\"…\" | grep rs ?verify=\"not_empty contains:.rs\"`. Steps are split on `|` outside quotes; `?intent`, `?verify` (short-form assertions, or an llm_judge criterion in words), `?on_error`, `?retries`, `?checkpoint_before` annotate their step."}
        }
    })
}

/// The `pipeline` result's schema.
pub fn output_schema() -> Value {
    let mut v = json!({
        "type": "object",
        "properties": {
            "passed": {"type": "boolean"},
            "completed": {"type": "integer", "description": "Steps that ran."},
            "steps": {"type": "array", "items": crate::schemas::result_output()},
            "stopped_at": {"type": "integer", "description": "The step whose failure stopped the pipeline."},
            "checkpoints": {"type": "array", "items": {"type": "string"}},
            "rolled_back": {"type": "boolean", "description": "The write roots were restored to `checkpoint` after a failure."},
            "checkpoint": {"type": "string"},
            "rollback": {"type": "object"},
            "rollback_error": {"type": "object"},
            "error": {"type": ["object", "null"]},
            "session": {"type": "string"}
        },
        "required": ["passed", "completed", "steps", "provenance", "rolled_back"]
    });
    crate::schemas::add_envelope(&mut v, true);
    v
}
