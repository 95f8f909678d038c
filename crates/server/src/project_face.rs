//! Project specs on the faces (agsh §4): `project.load|validate|plan|approve|
//! reject|run|init` (JSON-RPC; the MCP tools `project_*` call the same
//! [`Server::project`]) and `safesh spec run`.
//!
//! A run is: load the spec, plan it with the real policy ([`PolicyOracle`]),
//! refuse a plan with a refused step before anything runs, get the plan
//! approved per `[spec] approval_mode` (a human's act through the existing
//! channels, bound to the plan's hash, single use), then run the steps as a
//! `pipeline` (policy, sandbox, labels, verify, checkpoints, rollback) with the
//! spec's `allowed_commands` enforced at every dispatch ([`SpecGate`]), write
//! `output`, check `success_criteria` on the output (rolling back when they
//! fail), and return the report.

use crate::Server;
use crate::checkpoint_face::CheckpointParams;
use crate::context_face::ContextParams;
use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::piped::Piped;
use safesh_core::{
    ApprovalAnswer, ApprovalChannel, ApprovalQuestion, CommandGate, ErrorCode, Interrupter,
    Refusal, Session, SessionOptions,
};
use safesh_flow::approvals::{Approvals, Status, SystemClock};
use safesh_pipeline::{Pipeline, Step};
use safesh_policy::config::ApprovalMode;
use safesh_spec::{AllowedCommands, Assessment, Plan, ProjectSpec, Risk, RiskOracle, StepSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The operations of `project.*` (JSON-RPC) and `project_*` (MCP).
pub const OPS: &[&str] = &[
    "load", "validate", "plan", "approve", "reject", "run", "init",
];

/// The commit point a plan approval is asked at (`safesh approvals` lists it).
pub const PLAN_COMMIT_POINT: &str = "plan";

/// A running spec's `allowed_commands`, checked at every dispatch.
pub struct SpecGate {
    allowed: Option<AllowedCommands>,
    patterns: Vec<String>,
}

impl CommandGate for SpecGate {
    fn check(&self, name: &str) -> Option<Refusal> {
        let allowed = match &self.allowed {
            Some(a) if a.allows(name) => return None,
            Some(a) => a,
            // A list that does not compile lets nothing through (fail closed).
            None => {
                return Some(
                    Refusal::new(
                        ErrorCode::CommandNotWhitelisted,
                        format!("{name}: the allowed_commands list is invalid, so nothing runs"),
                    )
                    .rule(safesh_spec::ALLOWED_RULE)
                    .command(name),
                );
            }
        };
        let j = allowed.refusal(name)?;
        let mut r = Refusal::new(
            ErrorCode::CommandNotWhitelisted,
            j["message"].as_str().unwrap_or("not in allowed_commands"),
        )
        .rule(safesh_spec::ALLOWED_RULE)
        .command(name);
        if let Some(s) = j["suggestion"].as_str() {
            r = r.suggest(s);
        }
        r.details.allowed = self.patterns.clone();
        Some(r)
    }
}

/// The gate of an `allowed_commands` list (`None`: no list, the policy alone).
pub fn gate_of(patterns: Option<&[String]>) -> Option<Arc<dyn CommandGate>> {
    let patterns = patterns?;
    Some(Arc::new(SpecGate {
        allowed: AllowedCommands::new(Some(patterns)).ok(),
        patterns: patterns.to_vec(),
    }))
}

/// The policy's view of a step, through core's pre-run pass (what `safesh
/// check` shows).
pub struct PolicyOracle {
    /// A session with the policy, in the directory the steps run in.
    pub session: Session,
}

impl RiskOracle for PolicyOracle {
    fn assess(&self, script: &str) -> Assessment {
        safesh_core::risk::assessment(self.session.assess(script))
    }
}

/// Parameters of `project.*`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectParams {
    /// The spec file (relative to the server's working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// The spec's YAML text instead of a file.
    #[serde(default)]
    pub spec: Option<String>,
    /// Param values (`name → value`; a value is used as its text).
    #[serde(default)]
    pub params: BTreeMap<String, Value>,
    /// The agent's steps (replace the spec's `steps:`).
    #[serde(default)]
    pub steps: Option<Vec<StepSpec>>,
    /// The plan's hash (approve, reject, run: the plan approved).
    #[serde(default)]
    pub hash: Option<String>,
    /// Why the plan is rejected (reject).
    #[serde(default)]
    pub feedback: Option<String>,
    /// The template (init).
    #[serde(default)]
    pub template: Option<String>,
    /// Where to write `project.agsh.yaml` (init).
    #[serde(default)]
    pub dir: Option<String>,
    /// Overwrite an existing `project.agsh.yaml` (init).
    #[serde(default)]
    pub force: bool,
    /// Run the steps in this session.
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
}

/// What the server keeps of plans made on it (for approve / reject / run by
/// hash): in the state dir ([`safesh_spec::kept`]) so another process finds
/// them, in memory only without one.
#[derive(Default)]
pub struct Projects {
    plans: Mutex<BTreeMap<String, KeptPlan>>,
    approvals: OnceLock<Arc<Approvals>>,
}

#[derive(Clone, Deserialize, Serialize)]
struct KeptPlan {
    conn: String,
    params: ProjectParams,
    rejected: Option<String>,
}

/// The spec, its name for errors, and its file.
struct Loaded {
    spec: ProjectSpec,
    name: String,
    file: Option<PathBuf>,
    bytes: Vec<u8>,
}

fn bad(m: impl Into<String>) -> ServerError {
    ServerError::BadParams(m.into())
}

fn spec_error(e: &safesh_spec::SpecError) -> Value {
    json!({
        "code": ErrorCode::InvalidSpec.as_str(),
        "message": e.to_string(),
        "details": {
            "file": e.file,
            "line": e.position.map(|p| p.0),
            "column": e.position.map(|p| p.1),
            "path": e.path,
        },
        "suggestion": "fix the spec at the place named (safesh spec validate FILE checks it without running anything)",
    })
}

fn refusal_json(r: &Refusal) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

fn load(p: &ProjectParams) -> Result<Result<Loaded, Value>, ServerError> {
    match (&p.path, &p.spec) {
        (Some(path), None) => {
            let file = PathBuf::from(path);
            let bytes = std::fs::read(&file).map_err(|e| bad(format!("{path}: {e}")))?;
            Ok(safesh_spec::load(&file)
                .map(|spec| Loaded {
                    spec,
                    name: path.clone(),
                    file: Some(file),
                    bytes,
                })
                .map_err(|e| spec_error(&e)))
        }
        (None, Some(text)) => Ok(safesh_spec::parse(text, "spec")
            .map(|spec| Loaded {
                spec,
                name: "spec".into(),
                file: None,
                bytes: text.as_bytes().to_vec(),
            })
            .map_err(|e| spec_error(&e))),
        _ => Err(bad(
            "give the spec as `path` (a file) or `spec` (its YAML text)",
        )),
    }
}

fn given(p: &ProjectParams) -> BTreeMap<String, String> {
    p.params
        .iter()
        .map(|(k, v)| {
            let t = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), t)
        })
        .collect()
}

/// Whether `plan` needs a human's approval under `mode` (`trusted`: the spec file
/// is trusted like a config).
pub fn needs_approval(plan: &Plan, mode: ApprovalMode, trusted: bool) -> bool {
    let worst = plan
        .steps
        .iter()
        .map(|s| s.risk)
        .max()
        .unwrap_or(Risk::ReadOnly);
    match mode {
        ApprovalMode::Always => true,
        ApprovalMode::Plan => worst > Risk::ReadOnly,
        ApprovalMode::Destructive => worst >= Risk::Destructive,
        // Only a spec the human trusted (safesh trust FILE) runs unasked;
        // any other is treated as `plan`.
        ApprovalMode::Never => !trusted && worst > Risk::ReadOnly,
    }
}

/// The exact action a plan approval authorizes: the plan's hash (an edit voids it).
fn plan_action(plan: &Plan) -> String {
    format!("run spec {:?} plan {}", plan.spec, plan.hash)
}

impl Server {
    fn approvals(&self) -> Arc<Approvals> {
        self.projects
            .approvals
            .get_or_init(|| {
                let config = self.settings.policy.config();
                Arc::new(
                    Approvals::from_config(config, Arc::new(SystemClock))
                        .with_state_dir(config.state_dir.clone()),
                )
            })
            .clone()
    }

    fn plan_store(&self) -> Option<safesh_spec::kept::PlanStore> {
        let dir = self.settings.policy.config().state_dir.as_deref()?;
        Some(safesh_spec::kept::PlanStore::new(dir))
    }

    /// Keeps a plan for approve / reject / run by hash (in the state dir when
    /// there is one, so another process finds it; else in memory).
    fn keep_plan(&self, hash: &str, kept: KeptPlan) {
        if let Some(store) = self.plan_store()
            && let Ok(v) = serde_json::to_value(&kept)
            && store.put(hash, &v).is_ok()
        {
            return;
        }
        lock(&self.projects.plans).insert(hash.to_string(), kept);
    }

    /// The plan kept for `hash` (made by this process or another on the same
    /// state dir), unless it expired.
    fn kept_plan(&self, hash: &str) -> Option<KeptPlan> {
        if let Some(k) = lock(&self.projects.plans).get(hash) {
            return Some(k.clone());
        }
        let v = self.plan_store()?.get(hash)?;
        serde_json::from_value(v).ok()
    }

    /// Marks the plan kept for `hash` rejected, with the human's feedback.
    fn reject_plan(&self, hash: &str, feedback: &str) {
        if let Some(k) = lock(&self.projects.plans).get_mut(hash) {
            k.rejected = Some(feedback.to_string());
            return;
        }
        if let Some(store) = self.plan_store() {
            let _ = store.update(hash, |v| v["rejected"] = json!(feedback));
        }
    }

    fn oracle(&self) -> PolicyOracle {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        PolicyOracle {
            session: Session::new(SessionOptions {
                policy: Some(self.settings.policy.clone()),
                cwd,
                ..SessionOptions::default()
            }),
        }
    }

    fn trusted(&self, l: &Loaded) -> bool {
        let (Some(file), Some(state)) = (&l.file, &self.settings.policy.config().state_dir) else {
            return false;
        };
        safesh_policy::config::trust::is_trusted(state, file, &l.bytes)
    }

    fn make_plan(&self, p: &ProjectParams) -> Result<Result<(Plan, Loaded), Value>, ServerError> {
        let mut l = match load(p)? {
            Ok(l) => l,
            Err(e) => return Ok(Err(e)),
        };
        if let Some(steps) = &p.steps {
            l.spec.steps = steps.clone();
        }
        let date = safesh_spec::today_utc();
        Ok(
            match safesh_spec::plan(&l.spec, &l.name, &given(p), &date, &self.oracle()) {
                Ok(plan) => Ok((plan, l)),
                Err(e) => Err(spec_error(&e)),
            },
        )
    }

    /// Approves `plan` once, as `[spec] approval_mode` asks: an approval
    /// already granted for this exact plan (`safesh approve ID`) is used up;
    /// else the human is asked on `approver` (terminal, MCP elicitation), or
    /// waited for `[limits] approval_wait_ms`; else `APPROVAL_REQUIRED` with the
    /// id. `Ok(how)`: it may run.
    fn approve_plan(
        &self,
        plan: &Plan,
        target: &str,
        approver: Option<&Arc<dyn ApprovalChannel>>,
        consume: bool,
    ) -> Result<String, Refusal> {
        let approvals = self.approvals();
        let action = plan_action(plan);
        if consume && let Some(id) = approvals.take_in(&action, PLAN_COMMIT_POINT, "") {
            return Ok(format!("approved ({id})"));
        }
        let req = approvals.request_in(&action, PLAN_COMMIT_POINT, target, "");
        if let Some(ch) = approver {
            let q = ApprovalQuestion {
                id: req.id.clone(),
                commit_point: PLAN_COMMIT_POINT.into(),
                action: action.clone(),
                target: format!("{target}: {}", plan.risk_summary),
                reason: "a project spec's plan runs only once a human approves it".into(),
                rule: "spec.approval_mode".into(),
                expires: req.expires,
            };
            match ch.ask(&q, &|| false) {
                ApprovalAnswer::Granted => {
                    let _ = approvals.decide_by(&req.id, true, ch.name());
                }
                ApprovalAnswer::Denied => {
                    let _ = approvals.decide_by(&req.id, false, ch.name());
                    return Err(Refusal::new(
                        ErrorCode::PermissionDenied,
                        format!("the human denied plan {}", short(&plan.hash)),
                    )
                    .rule("spec.approval_mode")
                    .suggest("change the plan (or the spec) and plan again"));
                }
                ApprovalAnswer::Unanswered => {}
            }
        } else {
            let wait = self
                .settings
                .policy
                .config()
                .limits
                .approval_wait_ms
                .unwrap_or(0);
            if wait > 0 {
                let _ = approvals.wait(&req.id, std::time::Duration::from_millis(wait));
            }
        }
        if approvals.status(&req.id) == Some(Status::Granted) {
            if !consume {
                // Kept for the run, which uses it up.
                return Ok(format!("approved ({})", req.id));
            }
            if let Some(id) = approvals.take_in(&action, PLAN_COMMIT_POINT, "") {
                return Ok(format!("approved ({id})"));
            }
        }
        let mut r = Refusal::new(
            ErrorCode::ApprovalRequired,
            format!(
                "plan {} of spec {:?} needs a human's approval ({})",
                short(&plan.hash),
                plan.spec,
                plan.risk_summary
            ),
        )
        .rule("spec.approval_mode")
        .suggest(format!(
            "a human runs `safesh approve {}`, then run the same plan again (an approval is single use and binds to the plan's hash: editing the spec or its params voids it)",
            req.id
        ));
        r.details.approval_id = Some(req.id);
        Err(r)
    }

    /// `project.OP` for connection `conn` (`OP`: load, validate, plan, approve,
    /// reject, run, init). `approver`: the session's channel to the human.
    pub fn project(
        &self,
        op: &str,
        p: ProjectParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        match op {
            "validate" => Ok(match load(&p)? {
                Ok(l) => json!({"valid": true, "spec": l.spec}),
                Err(e) => json!({"valid": false, "error": e}),
            }),
            "load" => {
                let l = match load(&p)? {
                    Ok(l) => l,
                    Err(e) => return Ok(json!({"loaded": false, "error": e})),
                };
                // The project scope holds what the agent is to keep in mind.
                for (key, value) in [
                    ("goal", json!(l.spec.goal)),
                    ("constraints", json!(l.spec.constraints)),
                    ("guidelines", json!(l.spec.guidelines)),
                    ("spec", json!(l.spec.meta.name)),
                ] {
                    self.context(
                        "set",
                        ContextParams {
                            scope: "project".into(),
                            key: Some(key.into()),
                            value: Some(value),
                            tags: None,
                            prefix: None,
                            session: None,
                        },
                        conn,
                    )?;
                }
                Ok(json!({"loaded": true, "spec": l.spec}))
            }
            "plan" => {
                let (plan, l) = match self.make_plan(&p)? {
                    Ok(x) => x,
                    Err(e) => return Ok(json!({"planned": false, "error": e})),
                };
                let mode = self.settings.policy.config().spec_approval_mode;
                let needs = needs_approval(&plan, mode, self.trusted(&l));
                let mut params = p;
                // Kept for another process too: the spec file by its absolute name.
                if let Some(path) = &params.path
                    && let Ok(abs) = std::path::absolute(path)
                {
                    params.path = Some(abs.display().to_string());
                }
                self.keep_plan(
                    &plan.hash,
                    KeptPlan {
                        conn: conn.to_string(),
                        params,
                        rejected: None,
                    },
                );
                let mut v = json!({"planned": !plan.refused, "plan": plan,
                    "approval_mode": mode.name(), "needs_approval": needs});
                if plan.refused {
                    v["error"] = json!({"code": ErrorCode::PlanRefused.as_str(),
                        "message": "a step would not run (see its refusal); nothing ran",
                        "suggestion": "change the refused step or the spec's allowed_commands (a spec can only narrow the policy)"});
                }
                Ok(v)
            }
            "approve" | "reject" | "run"
                if p.hash.is_some() && p.path.is_none() && p.spec.is_none() =>
            {
                let hash = p.hash.clone().unwrap_or_default();
                let kept = self.kept_plan(&hash).ok_or_else(|| {
                    bad(format!(
                        "no plan {hash} is kept (plans expire after a day); make one with project.plan"
                    ))
                })?;
                match op {
                    "reject" => {
                        let feedback = p.feedback.unwrap_or_default();
                        self.reject_plan(&hash, &feedback);
                        Ok(json!({"rejected": true, "hash": hash, "feedback": feedback}))
                    }
                    "approve" => {
                        if kept.rejected.is_some() {
                            return Ok(rejected(&hash));
                        }
                        // Plan again: the spec (or its params' files) may have changed.
                        let mut again = kept.params.clone();
                        again.hash = None;
                        let (plan, _) = match self.make_plan(&again)? {
                            Ok(x) => x,
                            Err(e) => return Ok(json!({"approved": false, "error": e})),
                        };
                        if plan.hash != hash {
                            return Ok(changed(&hash, &plan.hash));
                        }
                        let target = kept.params.path.clone().unwrap_or_else(|| "spec".into());
                        match self.approve_plan(&plan, &target, approver.as_ref(), false) {
                            Ok(how) => Ok(json!({"approved": true, "hash": hash, "how": how})),
                            Err(r) => Ok(json!({"approved": false, "hash": hash,
                                "approval_id": r.details.approval_id, "error": refusal_json(&r)})),
                        }
                    }
                    _ => {
                        if kept.rejected.is_some() {
                            return Ok(rejected(&hash));
                        }
                        let mut again = kept.params.clone();
                        again.hash = Some(hash);
                        again.session = p.session.or(again.session);
                        self.run_spec(&again, conn, face, on_start, approver)
                    }
                }
            }
            "run" => self.run_spec(&p, conn, face, on_start, approver),
            "approve" | "reject" => Err(bad(format!(
                "project.{op} needs `hash` (the plan's, from project.plan)"
            ))),
            "init" => {
                let name = p
                    .template
                    .as_deref()
                    .ok_or_else(|| bad("project.init needs `template`"))?;
                let dir = p
                    .dir
                    .map(PathBuf::from)
                    .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| ".".into()));
                init(name, &dir, p.force).map_err(bad)
            }
            other => Err(bad(format!(
                "no method project.{other}; methods: project.load, project.validate, project.plan, project.approve, project.reject, project.run, project.init"
            ))),
        }
    }

    /// Runs a spec: plan, approval, the steps, output, success criteria. The
    /// report is kept as one history entry (besides each step's own).
    pub fn run_spec(
        &self,
        p: &ProjectParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let started = std::time::Instant::now();
        let report = self.run_spec_report(p, conn, face, on_start, approver)?;
        let config = self.settings.policy.config();
        safesh_core::context::record_run(
            config,
            safesh_core::context::RunRecord {
                face: face.unwrap_or("json-rpc"),
                session: p.session.as_deref(),
                command: format!(
                    "spec run {} plan {}",
                    report["spec"].as_str().unwrap_or("?"),
                    report["hash"].as_str().map_or("?", short)
                ),
                intent: report["goal"].as_str().map(|g| json!(g)),
                passed: report["passed"] == json!(true),
                error: report["error"]["code"].as_str().map(str::to_string),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                run: run_summary(&report),
            },
        );
        Ok(report)
    }

    fn run_spec_report(
        &self,
        p: &ProjectParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let (plan, l) = match self.make_plan(p)? {
            Ok(x) => x,
            Err(e) => return Ok(json!({"passed": false, "ran": false, "error": e})),
        };
        let mut report = json!({"spec": plan.spec, "hash": plan.hash, "goal": plan.goal,
            "passed": false, "ran": false, "planned_steps": plan.steps.len()});
        if let Some(h) = &p.hash
            && *h != plan.hash
        {
            let mut v = changed(h, &plan.hash);
            v["plan"] = json!(plan);
            return Ok(v);
        }
        if plan.refused {
            report["plan"] = json!(plan);
            report["error"] = json!({"code": ErrorCode::PlanRefused.as_str(),
                "message": "a step would not run (see the plan's refusals); nothing ran",
                "suggestion": "change the refused step or the spec's allowed_commands (a spec can only narrow the policy)"});
            return Ok(report);
        }
        let mode = self.settings.policy.config().spec_approval_mode;
        let trusted = self.trusted(&l);
        report["approval_mode"] = json!(mode.name());
        if needs_approval(&plan, mode, trusted) {
            let target = l.name.clone();
            match self.approve_plan(&plan, &target, approver.as_ref(), true) {
                Ok(how) => report["approval"] = json!(how),
                Err(r) => {
                    report["approval_id"] = json!(r.details.approval_id);
                    report["error"] = refusal_json(&r);
                    report["plan"] = json!(plan);
                    return Ok(report);
                }
            }
        } else {
            report["approval"] = json!(if trusted && mode == ApprovalMode::Never {
                "not needed (trusted spec, approval_mode = never)"
            } else {
                "not needed (approval_mode)"
            });
        }
        report["ran"] = json!(true);
        let steps = pipeline_steps(&plan)?;
        let any_risky = plan.steps.iter().any(|s| s.risk > Risk::ReadOnly);
        let pp = Pipeline {
            steps,
            continue_on_error: false,
            // A run that fails (a step, or the success criteria) goes back to here.
            checkpoint_before: any_risky || plan.output.is_some(),
            session: p.session.clone(),
            text: None,
        };
        // The last step's full stdout with its label: what the output file gets
        // and what the criteria see — never the capped, redacted text shown to
        // the model (a secret must stay secret in the file and before a judge).
        let (pr, last_stdout) =
            self.pipeline_with_stdout(&pp, conn, face, on_start, approver.clone())?;
        let mut passed = pr["passed"].as_bool().unwrap_or(false);
        report["pipeline"] = pr.clone();
        let first_checkpoint = pr["checkpoints"]
            .as_array()
            .and_then(|c| c.first())
            .and_then(Value::as_str)
            .map(str::to_string);
        if passed && let Some(out) = &plan.output {
            // The last step's stdout is the output, written through the session
            // (policy, write roots); a last step that printed nothing wrote it itself.
            if let Some(last) = last_stdout.as_ref().filter(|l| l.overflow) {
                // Never a silently cut output file.
                passed = false;
                report["output_error"] = json!({"code": "LIMIT_EXCEEDED",
                    "message": format!("the last step wrote more than {} bytes to stdout, the most a run writes as its output", last.bytes.len()),
                    "details": {"rule": "limits.string_bytes"},
                    "suggestion": "let the last step write the output file itself"});
            } else if let Some(last) = last_stdout.as_ref().filter(|l| !l.bytes.is_empty()) {
                let write = ExecParams {
                    script: Some(format!("cat > {}", safesh_spec::shell_quote(&out.path))),
                    piped: Some(last.clone()),
                    session: p.session.clone(),
                    conn: conn.to_string(),
                    face,
                    allowed_commands: None,
                    ..ExecParams::default()
                };
                let w = self.exec_with(&write, on_start, approver.clone())?;
                if w["exit_code"].as_i64() != Some(0) {
                    passed = false;
                    report["output_error"] = w["error"].clone();
                }
            }
            let read = ExecParams {
                script: Some(format!("cat -- {}", safesh_spec::shell_quote(&out.path))),
                session: p.session.clone(),
                conn: conn.to_string(),
                face,
                ..ExecParams::default()
            };
            let r = self.exec_with(&read, on_start, approver.clone())?;
            report["output"] = json!({"path": out.path, "format": out.format,
                "written": r["exit_code"].as_i64() == Some(0)});
        }
        if passed && !plan.success_criteria.is_empty() {
            // Checked by the runtime's own verify (crate::verify_face) on an exec
            // that shows the run's result: the output (the file, read by `cat`
            // with its label, or the last step's stdout), the last step's stderr;
            // `file:` goes through the path check of `cat` in the same session,
            // `context.` through the store, `meta.tags.` are the spec's tags, and
            // llm_judge asks `[llm]` with the goal as the intent.
            let last = pr["steps"].as_array().and_then(|s| s.last());
            let last_stderr = last
                .and_then(|s| s["stderr"].as_str())
                .unwrap_or("")
                .to_string();
            let check = criteria_check(&plan, &l.spec.meta.tags, last_stdout, &last_stderr);
            let check = ExecParams {
                session: p.session.clone(),
                conn: conn.to_string(),
                face,
                ..check
            };
            let c = self.exec_with(&check, on_start, approver.clone())?;
            let v = c["verification"].clone();
            passed = v["passed"].as_bool() == Some(true);
            report["success_criteria"] = v;
            if let Some(w) = c["warnings"].as_array().filter(|w| !w.is_empty()) {
                report["warnings"] = json!(w);
            }
            if !passed && let Some(cp) = &first_checkpoint {
                let restore = self.checkpoint(
                    "restore",
                    CheckpointParams {
                        name: Some(cp.clone()),
                        session: p.session.clone(),
                        ..CheckpointParams::default()
                    },
                    conn,
                );
                match restore {
                    Ok(r) => {
                        report["rolled_back"] = json!(true);
                        report["rollback"] = r;
                    }
                    Err(e) => report["rollback_error"] = e.to_json(),
                }
            }
            if !passed {
                report["error"] = json!({"code": "VERIFICATION_FAILED",
                    "message": if report["rolled_back"] == json!(true) {
                        "the run's success criteria failed; the write roots were rolled back to the checkpoint taken before the first step"
                    } else {
                        "the run's success criteria failed"
                    },
                    "suggestion": "see success_criteria.results for what failed"});
            }
        }
        if !passed && report.get("error").is_none() {
            report["error"] = pr["error"].clone();
        }
        if report.get("rolled_back").is_none() {
            report["rolled_back"] = pr["rolled_back"].clone();
        }
        report["passed"] = json!(passed);
        // The run is kept: each step is in the history (it ran through exec),
        // and the project scope holds the last run's summary.
        let summary = json!({"spec": plan.spec, "hash": plan.hash, "passed": passed,
            "steps": plan.steps.len(), "completed": pr["completed"]});
        let _ = self.context(
            "set",
            ContextParams {
                scope: "project".into(),
                key: Some("spec.last_run".into()),
                value: Some(summary),
                tags: None,
                prefix: None,
                session: None,
            },
            conn,
        );
        Ok(report)
    }
}

/// The plan's steps as pipeline steps: the exact script planned, its intent and
/// verify, its checkpoint, and the spec's allowed_commands at every dispatch.
fn pipeline_steps(plan: &Plan) -> Result<Vec<Step<ExecParams>>, ServerError> {
    plan.steps
        .iter()
        .map(|s| {
            let verify = if s.verify.is_empty() {
                None
            } else {
                // The runtime's assertion type, from the same JSON (`value` is
                // the runtime's name of `expected`).
                let items: Vec<Value> = s
                    .verify
                    .iter()
                    .map(|a| {
                        let mut v = json!({"type": a.kind});
                        if let Some(e) = &a.expected {
                            v["value"] = e.clone();
                        }
                        if let Some(t) = &a.target {
                            v["target"] = json!(t);
                        }
                        if let Some(m) = &a.message {
                            v["message"] = json!(m);
                        }
                        v
                    })
                    .collect();
                Some(
                    serde_json::from_value(Value::Array(items))
                        .map_err(|e| bad(format!("step {}: verify: {e}", s.index)))?,
                )
            };
            Ok(Step {
                exec: ExecParams {
                    script: Some(s.script.clone()),
                    intent: s.intent.clone().map(Value::String),
                    verify,
                    allowed_commands: plan.allowed_commands.clone(),
                    ..ExecParams::default()
                },
                on_error: None,
                retries: None,
                checkpoint_before: s.checkpoint_before,
            })
        })
        .collect()
}

/// The exec that checks a run's `success_criteria` with the runtime's verify:
/// it shows the output (the output file through `cat`, or the last step's
/// stdout as its input) and the last step's stderr, with the goal as intent and
/// the spec's `meta.tags` as tags (`k=v` → `k: v`, a bare tag → `tag: true`).
fn criteria_check(plan: &Plan, tags: &[String], stdout: Option<Piped>, stderr: &str) -> ExecParams {
    let mut script = match &plan.output {
        Some(out) => format!("cat -- {}", safesh_spec::shell_quote(&out.path)),
        None => "cat".to_string(),
    };
    if !stderr.is_empty() {
        script.push_str(&format!(
            "; printf '%s' {} >&2",
            safesh_spec::shell_quote(stderr)
        ));
    }
    let tags: BTreeMap<String, String> = tags
        .iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (t.clone(), "true".to_string()),
        })
        .collect();
    ExecParams {
        script: Some(script),
        piped: if plan.output.is_none() { stdout } else { None },
        intent: Some(Value::String(plan.goal.clone())),
        verify: Some(plan.success_criteria.clone()),
        tags: Some(tags),
        ..ExecParams::default()
    }
}

/// What history keeps of a run's report: spec, plan hash, passed, each step's
/// status, each criterion's result — never an output, a detail or an `actual`.
fn run_summary(r: &Value) -> Value {
    let steps: Vec<Value> = r["pipeline"]["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let status = if s["skipped"] == json!(true) {
                        "skipped"
                    } else if crate::envelope::succeeded(s) {
                        "ok"
                    } else {
                        "error"
                    };
                    let mut v = json!({"index": i, "status": status, "exit_code": s["exit_code"]});
                    if let Some(c) = s["error"]["code"].as_str() {
                        v["error"] = json!(c);
                    }
                    if let Some(p) = s["verification"]["passed"].as_bool() {
                        v["verified"] = json!(p);
                    }
                    v
                })
                .collect()
        })
        .unwrap_or_default();
    let criteria: Vec<Value> = r["success_criteria"]["results"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|x| json!({"type": x["type"], "target": x["target"], "passed": x["passed"]}))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "spec": r["spec"],
        "hash": r["hash"],
        "passed": r["passed"] == json!(true),
        "ran": r["ran"] == json!(true),
        "approval": r["approval"],
        "planned_steps": r["planned_steps"],
        "steps": steps,
        "success_criteria": criteria,
        "rolled_back": r["rolled_back"] == json!(true),
        "error": r["error"]["code"],
    })
}

fn short(hash: &str) -> &str {
    &hash[..12.min(hash.len())]
}

fn rejected(hash: &str) -> Value {
    json!({"approved": false, "ran": false, "hash": hash, "error": {"code": ErrorCode::PlanRejected.as_str(),
        "message": format!("plan {} was rejected", short(hash)),
        "suggestion": "make a new plan (project.plan) that answers the feedback"}})
}

fn changed(old: &str, new: &str) -> Value {
    json!({"approved": false, "ran": false, "hash": new, "error": {"code": ErrorCode::PlanChanged.as_str(),
        "message": format!("the plan changed since {} (now {}): its approval, if any, is void", short(old), short(new)),
        "suggestion": "review the new plan (project.plan) and approve it"}})
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes `dir/project.agsh.yaml` from template `name` (built-in or the user's).
pub fn init(name: &str, dir: &Path, force: bool) -> Result<Value, String> {
    use safesh_spec::templates;
    let env_path = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let user = templates::user_dir(
        env_path("XDG_CONFIG_HOME").as_deref(),
        env_path("HOME").as_deref(),
    );
    let (text, source) = templates::find(name, user.as_deref())?;
    let from = match &source {
        templates::Source::Builtin => format!("template {name}"),
        templates::Source::User(p) => format!("template {name} ({})", p.display()),
    };
    // A user template must be a valid spec before it becomes the project's.
    safesh_spec::parse(&text, &from).map_err(|e| e.to_string())?;
    let path = dir.join(templates::SPEC_FILE);
    if path.symlink_metadata().is_ok() {
        if !force {
            return Err(format!(
                "{} exists (use force to overwrite it)",
                path.display()
            ));
        }
        // Replace, never write through: a symlink is removed, not followed.
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(json!({"written": path.display().to_string(), "from": from}))
}
