//! Running a pipeline: the order of steps, retries, checkpoints and rollback.

use crate::model::{OnError, Pipeline};
use serde_json::{Value, json};

/// One run of one step, as the runner saw it.
#[derive(Clone, Debug)]
pub struct Attempt<D> {
    /// The step's result object (the exec Result with its envelope).
    pub result: Value,
    /// It succeeded: status 0, no refusal, its assertions held.
    pub passed: bool,
    /// Its stdout for the next step (`None`: there is none to give).
    pub stdout: Option<D>,
}

/// What the server provides to run a pipeline.
pub trait StepRunner {
    /// One step's exec parameters.
    type Params;
    /// The data handed from a step to the next (its raw stdout and label).
    type Data;

    /// Runs step `index` once; `stdin` is the previous step's stdout (`None`
    /// for the first step). The runner decides what a step that sets its own
    /// `input` reads.
    fn run_step(
        &mut self,
        index: usize,
        params: &Self::Params,
        stdin: Option<&Self::Data>,
    ) -> Attempt<Self::Data>;

    /// Saves a checkpoint before step `before`: its name, or the error object
    /// (the contract's refusal) that says why not.
    fn save_checkpoint(&mut self, before: usize) -> Result<String, Value>;

    /// Restores checkpoint `name`: what it did, or the error object.
    fn restore_checkpoint(&mut self, name: &str) -> Result<Value, Value>;

    /// The provenance entry of step `index`, which did not run.
    fn skipped(&self, index: usize, params: &Self::Params) -> Value;
}

/// A rollback: which checkpoint, and what restoring it did (or why it failed).
#[derive(Clone, Debug)]
pub struct Rollback {
    /// The checkpoint restored.
    pub checkpoint: String,
    /// The restore's result, or its error object.
    pub outcome: Result<Value, Value>,
}

/// What a pipeline did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every step that ran passed.
    pub passed: bool,
    /// The results of the steps that ran (the last attempt of each), in order.
    pub steps: Vec<Value>,
    /// The provenance of every step: those that ran, then those that did not.
    pub provenance: Vec<Value>,
    /// Checkpoints saved, in order.
    pub checkpoints: Vec<String>,
    /// The rollback after a failure, if a checkpoint had been saved.
    pub rollback: Option<Rollback>,
    /// The step whose failure stopped the pipeline.
    pub stopped_at: Option<usize>,
    /// Why the pipeline stopped when no step result says it (a checkpoint
    /// that could not be saved).
    pub error: Option<Value>,
}

impl Report {
    /// The result object: `{passed, completed, steps, provenance}` and, when
    /// they apply, `stopped_at`, `checkpoints`, `rolled_back` + `checkpoint` +
    /// `rollback`, `error`. The final step's envelope (`meta`, `payload`) is
    /// the server's to add.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "passed": self.passed,
            "completed": self.steps.len(),
            "steps": self.steps,
            "provenance": self.provenance,
            "rolled_back": false,
        });
        if let Some(i) = self.stopped_at {
            v["stopped_at"] = json!(i);
        }
        if !self.checkpoints.is_empty() {
            v["checkpoints"] = json!(self.checkpoints);
        }
        if let Some(r) = &self.rollback {
            v["checkpoint"] = json!(r.checkpoint);
            match &r.outcome {
                Ok(done) => {
                    v["rolled_back"] = json!(true);
                    v["rollback"] = done.clone();
                }
                Err(e) => v["rollback_error"] = e.clone(),
            }
        }
        if let Some(e) = &self.error {
            v["error"] = e.clone();
        }
        v
    }
}

/// Runs `pipeline` with `runner`: each step gets the previous step's stdout
/// (whatever its status, as in a shell pipe); a failure does what its
/// `on_error` says; a stop after a checkpoint was saved restores the latest
/// one (the pipeline's or a step's `checkpoint_before`).
pub fn run<R: StepRunner>(pipeline: &Pipeline<R::Params>, runner: &mut R) -> Report {
    let mut report = Report {
        passed: true,
        ..Report::default()
    };
    let mut stdin: Option<R::Data> = None;
    let mut next = 0;
    while let Some(step) = pipeline.steps.get(next) {
        let i = next;
        next += 1;
        let wants_checkpoint = step.checkpoint_before || (i == 0 && pipeline.checkpoint_before);
        let mut saved = None;
        if wants_checkpoint {
            match runner.save_checkpoint(i) {
                Ok(name) => {
                    report.checkpoints.push(name.clone());
                    saved = Some(name);
                }
                Err(e) => {
                    // A step promised a checkpoint runs only with one.
                    report.passed = false;
                    report.error = Some(e);
                    report.stopped_at = Some(i);
                    next = i;
                    break;
                }
            }
        }
        let retries = pipeline.retries(i);
        let mut attempts = 0;
        let attempt = loop {
            attempts += 1;
            let a = runner.run_step(i, &step.exec, stdin.as_ref());
            if a.passed || attempts > retries {
                break a;
            }
        };
        let mut result = attempt.result;
        if let Some(o) = result.as_object_mut() {
            o.insert("step".into(), json!(i));
            o.insert("passed".into(), json!(attempt.passed));
            o.insert("attempts".into(), json!(attempts));
            if let Some(name) = &saved {
                o.insert("checkpoint".into(), json!(name));
            }
        }
        if let Some(p) = result.get("provenance").and_then(Value::as_array) {
            report.provenance.extend(p.iter().cloned());
        }
        report.steps.push(result);
        stdin = attempt.stdout;
        if attempt.passed {
            continue;
        }
        report.passed = false;
        match pipeline.on_error(i) {
            OnError::Skip => {}
            OnError::Stop | OnError::Retry => {
                report.stopped_at = Some(i);
                break;
            }
        }
    }
    for (j, step) in pipeline.steps.iter().enumerate().skip(next) {
        report.provenance.push(runner.skipped(j, &step.exec));
    }
    if report.stopped_at.is_some()
        && let Some(name) = report.checkpoints.last().cloned()
    {
        let outcome = runner.restore_checkpoint(&name);
        report.rollback = Some(Rollback {
            checkpoint: name,
            outcome,
        });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Step;

    /// A runner over a script of outcomes: each step's params say whether each
    /// attempt passes; its stdout is the stdin it got plus its index.
    #[derive(Default)]
    struct Scripted {
        runs: Vec<(usize, Option<String>)>,
        saved: Vec<usize>,
        restored: Vec<String>,
        refuse_save: bool,
    }

    impl StepRunner for Scripted {
        type Params = Vec<bool>;
        type Data = String;

        fn run_step(&mut self, i: usize, p: &Vec<bool>, stdin: Option<&String>) -> Attempt<String> {
            let n = self.runs.iter().filter(|(j, _)| *j == i).count();
            self.runs.push((i, stdin.cloned()));
            let passed = p.get(n).copied().unwrap_or(false);
            Attempt {
                result: json!({"provenance": [{"step": i, "status": if passed {"ok"} else {"error"}}]}),
                passed,
                stdout: Some(format!("{}{i}", stdin.cloned().unwrap_or_default())),
            }
        }

        fn save_checkpoint(&mut self, before: usize) -> Result<String, Value> {
            if self.refuse_save {
                return Err(json!({"code": "LIMIT_EXCEEDED"}));
            }
            self.saved.push(before);
            Ok(format!("cp{before}"))
        }

        fn restore_checkpoint(&mut self, name: &str) -> Result<Value, Value> {
            self.restored.push(name.to_string());
            Ok(json!({"name": name}))
        }

        fn skipped(&self, i: usize, _: &Vec<bool>) -> Value {
            json!({"step": i, "status": "skipped"})
        }
    }

    fn step(passes: &[bool], on_error: Option<OnError>) -> Step<Vec<bool>> {
        Step {
            exec: passes.to_vec(),
            on_error,
            retries: None,
            checkpoint_before: false,
        }
    }

    fn pipeline(steps: Vec<Step<Vec<bool>>>) -> Pipeline<Vec<bool>> {
        Pipeline {
            steps,
            text: None,
            continue_on_error: false,
            checkpoint_before: false,
            session: None,
        }
    }

    #[test]
    fn data_flows_from_each_step_to_the_next() {
        let p = pipeline(vec![
            step(&[true], None),
            step(&[true], None),
            step(&[true], None),
        ]);
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert!(rep.passed);
        assert_eq!(rep.steps.len(), 3);
        let stdins: Vec<Option<String>> = r.runs.iter().map(|(_, s)| s.clone()).collect();
        assert_eq!(stdins, vec![None, Some("0".into()), Some("01".into())]);
        assert_eq!(rep.to_json()["rolled_back"], false);
    }

    #[test]
    fn stop_ends_the_pipeline_and_lists_the_rest_as_skipped() {
        let p = pipeline(vec![
            step(&[true], None),
            step(&[false], None),
            step(&[true], None),
        ]);
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert!(!rep.passed);
        assert_eq!(rep.stopped_at, Some(1));
        assert_eq!(rep.steps.len(), 2);
        assert_eq!(rep.provenance[2]["status"], "skipped");
        assert!(r.restored.is_empty(), "no checkpoint, no rollback");
    }

    #[test]
    fn skip_goes_on_and_the_failed_steps_stdout_still_flows() {
        let p = pipeline(vec![
            step(&[false], Some(OnError::Skip)),
            step(&[true], None),
        ]);
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert!(!rep.passed);
        assert_eq!(rep.steps.len(), 2);
        assert_eq!(r.runs[1].1.as_deref(), Some("0"));
        assert_eq!(rep.stopped_at, None);
    }

    #[test]
    fn continue_on_error_means_skip_for_every_step() {
        let mut p = pipeline(vec![
            step(&[false], None),
            step(&[false], None),
            step(&[true], None),
        ]);
        p.continue_on_error = true;
        let rep = run(&p, &mut Scripted::default());
        assert_eq!(rep.steps.len(), 3);
        assert!(!rep.passed);
    }

    #[test]
    fn retry_runs_again_with_the_same_stdin_then_stops() {
        let mut s = step(&[false, false, true], Some(OnError::Retry));
        s.retries = Some(2);
        let p = pipeline(vec![step(&[true], None), s]);
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert!(rep.passed);
        assert_eq!(rep.steps[1]["attempts"], 3);
        assert!(r.runs[1..].iter().all(|(_, s)| s.as_deref() == Some("0")));

        let mut s = step(&[false, false, false], Some(OnError::Retry));
        s.retries = Some(1);
        let p = pipeline(vec![s, step(&[true], None)]);
        let rep = run(&p, &mut Scripted::default());
        assert!(!rep.passed);
        assert_eq!(rep.steps[0]["attempts"], 2);
        assert_eq!(rep.stopped_at, Some(0));
    }

    #[test]
    fn retries_are_bounded() {
        let mut s = step(&[], Some(OnError::Retry));
        s.retries = Some(1_000_000);
        let rep = run(&pipeline(vec![s]), &mut Scripted::default());
        assert_eq!(rep.steps[0]["attempts"], crate::model::MAX_RETRIES + 1);
    }

    #[test]
    fn a_stop_after_a_checkpoint_rolls_back_to_the_latest() {
        let mut p = pipeline(vec![
            step(&[true], None),
            step(&[true], None),
            step(&[false], None),
        ]);
        p.checkpoint_before = true;
        p.steps[1].checkpoint_before = true;
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert_eq!(r.saved, vec![0, 1]);
        assert_eq!(r.restored, vec!["cp1".to_string()]);
        let v = rep.to_json();
        assert_eq!(v["rolled_back"], true);
        assert_eq!(v["checkpoint"], "cp1");
        assert_eq!(v["steps"][1]["checkpoint"], "cp1");
    }

    #[test]
    fn skip_never_rolls_back() {
        let mut p = pipeline(vec![
            step(&[false], Some(OnError::Skip)),
            step(&[true], None),
        ]);
        p.checkpoint_before = true;
        let mut r = Scripted::default();
        let rep = run(&p, &mut r);
        assert!(r.restored.is_empty());
        assert_eq!(rep.to_json()["rolled_back"], false);
    }

    #[test]
    fn a_checkpoint_that_cannot_be_saved_keeps_its_step_from_running() {
        let mut p = pipeline(vec![step(&[true], None), step(&[true], None)]);
        p.checkpoint_before = true;
        let mut r = Scripted {
            refuse_save: true,
            ..Scripted::default()
        };
        let rep = run(&p, &mut r);
        assert!(r.runs.is_empty());
        assert!(!rep.passed);
        let v = rep.to_json();
        assert_eq!(v["error"]["code"], "LIMIT_EXCEEDED");
        assert_eq!(v["completed"], 0);
        assert_eq!(v["provenance"].as_array().map(Vec::len), Some(2));
    }
}
