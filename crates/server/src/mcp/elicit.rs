//! Approvals asked through MCP elicitation: the client shows the question to its
//! human (never to the model) and sends back the answer.
//!
//! Used only when the client declared the `elicitation` capability (form mode).
//! The request is a task on the connection's runtime; the interpreter's thread
//! (a blocking-pool thread of that runtime, or a job's own thread) waits for its
//! answer on a plain channel, never by entering the runtime, so it works from
//! any thread but the runtime's workers. The wait ends at the approval's expiry
//! or when the request is cancelled or out of time.

use rmcp::Peer;
use rmcp::model::{
    BooleanSchema, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    PrimitiveSchemaDefinition,
};
use rmcp::service::{ElicitationMode, RoleServer};
use safesh_core::{ApprovalAnswer, ApprovalChannel, ApprovalQuestion};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

/// The form's one field.
pub const APPROVE_FIELD: &str = "approve";
/// How often a wait looks at the request's cancellation.
const POLL: Duration = Duration::from_millis(100);

/// Asks the client's human through `elicitation/create`.
pub struct ElicitationApprover {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl ElicitationApprover {
    /// A channel over `peer` when the client supports form elicitation; must be
    /// called on the connection's runtime.
    pub fn for_peer(peer: &Peer<RoleServer>) -> Option<ElicitationApprover> {
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return None;
        }
        Some(ElicitationApprover {
            peer: peer.clone(),
            runtime: tokio::runtime::Handle::try_current().ok()?,
        })
    }
}

/// The request: the question as the message, one boolean to tick.
fn params(question: &ApprovalQuestion) -> ElicitRequestParams {
    let field = BooleanSchema::new()
        .title("Run this command once")
        .description(
            "Tick to allow exactly this command, once. Leave it unticked or decline to refuse it.",
        )
        .with_default(false);
    let schema = ElicitationSchema::new(BTreeMap::from([(
        APPROVE_FIELD.to_string(),
        PrimitiveSchemaDefinition::Boolean(field),
    )]))
    .with_required(vec![APPROVE_FIELD.to_string()]);
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.text(),
        requested_schema: schema,
    }
}

/// The client's answer: accept with the box ticked grants, decline or an
/// unticked box denies, cancel (dismissed) leaves it unanswered.
fn answer(action: ElicitationAction, content: Option<&serde_json::Value>) -> ApprovalAnswer {
    match action {
        ElicitationAction::Accept => {
            let ticked = content
                .and_then(|c| c.get(APPROVE_FIELD))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            if ticked {
                ApprovalAnswer::Granted
            } else {
                ApprovalAnswer::Denied
            }
        }
        ElicitationAction::Decline => ApprovalAnswer::Denied,
        // Cancel (dismissed), or an action newer than this code: no decision.
        _ => ApprovalAnswer::Unanswered,
    }
}

impl ApprovalChannel for ElicitationApprover {
    fn name(&self) -> &str {
        "MCP elicitation"
    }

    fn ask(&self, question: &ApprovalQuestion, stop: &dyn Fn() -> bool) -> ApprovalAnswer {
        // Never called on a runtime worker (tools run on blocking-pool threads, jobs
        // on their own): on a single-threaded runtime's one thread the request
        // could not make progress while this thread waits, so do not ask there.
        if tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
        {
            return ApprovalAnswer::Unanswered;
        }
        let deadline = Instant::now()
            + question
                .expires
                .duration_since(SystemTime::now())
                .unwrap_or_default();
        let peer = self.peer.clone();
        let request = params(question);
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let task = self.runtime.spawn(async move {
            let a = match peer.create_elicitation(request).await {
                Ok(res) => answer(res.action, res.content.as_ref()),
                Err(_) => ApprovalAnswer::Unanswered,
            };
            let _ = tx.send(a);
        });
        let a = loop {
            let now = Instant::now();
            if now >= deadline || stop() {
                break ApprovalAnswer::Unanswered;
            }
            match rx.recv_timeout(POLL.min(deadline - now)) {
                Ok(a) => break a,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break ApprovalAnswer::Unanswered;
                }
            }
        };
        // Unanswered: stop waiting for the client (its late answer is dropped).
        task.abort();
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_ticked_accept_grants() {
        let yes = json!({ "approve": true });
        let no = json!({ "approve": false });
        let odd = json!({ "approve": "yes" });
        assert_eq!(
            answer(ElicitationAction::Accept, Some(&yes)),
            ApprovalAnswer::Granted
        );
        for c in [Some(&no), Some(&odd), None] {
            assert_eq!(answer(ElicitationAction::Accept, c), ApprovalAnswer::Denied);
        }
        assert_eq!(
            answer(ElicitationAction::Decline, Some(&yes)),
            ApprovalAnswer::Denied
        );
        assert_eq!(
            answer(ElicitationAction::Cancel, Some(&yes)),
            ApprovalAnswer::Unanswered
        );
    }

    #[test]
    fn the_form_asks_one_required_boolean_and_shows_the_question() {
        let q = ApprovalQuestion {
            id: "abcd2345".into(),
            commit_point: "destructive".into(),
            action: "rm keep1.txt".into(),
            target: "keep1.txt".into(),
            reason: "targets from the network".into(),
            rule: "destructive-untrusted".into(),
            expires: SystemTime::now(),
        };
        let v = serde_json::to_value(params(&q)).unwrap_or_default();
        assert_eq!(v["mode"], "form");
        assert!(v["message"].as_str().unwrap_or("").contains("rm keep1.txt"));
        assert_eq!(
            v["requestedSchema"]["properties"]["approve"]["type"],
            "boolean"
        );
        assert_eq!(v["requestedSchema"]["required"], json!(["approve"]));
    }
}
