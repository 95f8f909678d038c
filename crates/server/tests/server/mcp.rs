//! MCP through rmcp's own client, in-process over a duplex pipe.

use crate::Env;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest, Request};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceExt};
use safesh_server::mcp::SafeshMcp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn connect(env: &Env) -> RunningService<RoleClient, ()> {
    let server = SafeshMcp::new(env.server());
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(s) = server.serve(a).await {
            let _ = s.waiting().await;
        }
    });
    ().serve(b).await.unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

async fn call(c: &RunningService<RoleClient, ()>, name: &'static str, a: Value) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_and_list_tools_with_schemas() {
    let env = Env::new();
    let c = connect(&env).await;
    let info = c.peer_info().unwrap();
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .contains("Readable roots")
    );
    let tools = c.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for n in [
        "exec",
        "run",
        "session_start",
        "session_end",
        "session_update",
        "job_start",
        "job_list",
        "job_output",
        "job_kill",
        "job_follow",
    ] {
        assert!(names.contains(&n), "missing tool {n}");
    }
    for t in &tools {
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
        assert!(t.output_schema.is_some(), "{} has an output schema", t.name);
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 40),
            "{} is described",
            t.name
        );
    }
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_tools_and_history() {
    let env = Env::new();
    let c = connect(&env).await;
    let r = call(
        &c,
        "context_set",
        json!({"scope": "project", "key": "k", "value": {"n": 1}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call(&c, "exec", json!({"script": "context get project k"})).await;
    assert_eq!(r.structured_content.unwrap()["output"], "{\"n\":1}\n");
    let r = call(&c, "context_get", json!({"scope": "project", "key": "k"})).await;
    assert_eq!(r.structured_content.unwrap()["value"], json!({"n": 1}));
    let r = call(&c, "context_get", json!({"scope": "nope", "key": "k"})).await;
    assert_eq!(r.is_error, Some(true));
    let r = call(&c, "history", json!({"limit": 1})).await;
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["entries"][0]["command"], "context get project k", "{sc}");
    assert_eq!(sc["entries"][0]["face"], "mcp", "{sc}");
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_run_and_refusal() {
    let env = Env::new();
    let c = connect(&env).await;
    let r = call(&c, "exec", json!({"script": "echo hi | tr a-z A-Z"})).await;
    assert_eq!(r.is_error, Some(false));
    let sc = r.structured_content.clone().unwrap();
    assert_eq!(sc["output"], "HI\n");
    assert_eq!(sc["exit_code"], 0);
    let text = format!("{:?}", r.content);
    assert!(text.contains("HI"), "{text}");
    let r = call(&c, "run", json!({"command": "echo", "args": ["a  b", "*"]})).await;
    assert_eq!(r.structured_content.unwrap()["output"], "a  b *\n");
    let r = call(&c, "exec", json!({"script": "sudo rm -rf /"})).await;
    assert_eq!(r.is_error, Some(true));
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["error"]["code"], "BLOCKED");
    assert!(sc["error"]["suggestion"].is_string());
    let r = call(&c, "exec", json!({"nope": 1})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content.unwrap()["error"]["code"],
        "INVALID_PARAMS"
    );
    let bad = c
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(bad.is_err(), "unknown tool is a protocol error");
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_jobs() {
    let env = Env::new();
    let c = connect(&env).await;
    let s = call(&c, "session_start", json!({}))
        .await
        .structured_content
        .unwrap();
    let sid = s["session"].as_str().unwrap().to_string();
    call(&c, "exec", json!({"script": "v=7", "session": sid})).await;
    let r = call(&c, "exec", json!({"script": "echo $v", "session": sid})).await;
    assert_eq!(r.structured_content.unwrap()["output"], "7\n");
    let j = call(
        &c,
        "job_start",
        json!({"script": "echo one; sleep 0.2; echo two", "session": sid}),
    )
    .await;
    let jid = j.structured_content.unwrap()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    // A session's job is found from its session (see crate::owner).
    let f = call(&c, "job_follow", json!({"job_id": jid, "session": sid}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(f["output"], "one\ntwo\n");
    assert_eq!(f["status"], "exited");
    let o = call(
        &c,
        "job_output",
        json!({"job_id": jid, "since": 4, "session": sid}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(o["data"], "two\n");
    let l = call(&c, "job_list", json!({"session": sid}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(l["jobs"].as_array().unwrap().len(), 1);
    let e = call(&c, "session_end", json!({"session": sid}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(e["ended"], true);
    let r = call(&c, "exec", json!({"script": "true", "session": sid})).await;
    assert_eq!(r.is_error, Some(true));
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_the_command() {
    let env = Env::new();
    let c = connect(&env).await;
    let s = call(&c, "session_start", json!({}))
        .await
        .structured_content
        .unwrap();
    let sid = s["session"].as_str().unwrap().to_string();
    let req = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("exec")
            .with_arguments(args(json!({"script": "sleep 30", "session": sid}))),
    ));
    let handle = c
        .send_cancellable_request(req, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = Instant::now();
    handle.cancel(Some("test".into())).await.unwrap();
    // The session is free again only once the cancelled command has stopped.
    let r = call(&c, "exec", json!({"script": "echo free", "session": sid})).await;
    assert_eq!(r.structured_content.unwrap()["output"], "free\n");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "cancelled command stopped in {:?}",
        t.elapsed()
    );
    let _ = c.cancel().await;
}

/// Counts progress notifications.
#[derive(Clone, Default)]
struct Progress(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Progress {
    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_commands_send_progress() {
    let env = Env::new();
    let server = SafeshMcp::new(env.server());
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(s) = server.serve(a).await {
            let _ = s.waiting().await;
        }
    });
    let seen = Progress::default();
    let c = seen.clone().serve(b).await.unwrap();
    let req = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("exec")
            .with_arguments(args(json!({"script": "sleep 2.3; echo done"}))),
    ));
    let handle = c
        .send_cancellable_request(req, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let _ = handle.await_response().await.unwrap();
    let n = seen.0.load(std::sync::atomic::Ordering::SeqCst);
    assert!(n >= 2, "one progress notification per second, got {n}");
    let _ = c.cancel().await;
}

#[test]
fn http_helpers() {
    use safesh_server::mcp::http::{load_token, origin_is_local, parse_addr};
    assert_eq!(parse_addr("8080").unwrap().to_string(), "127.0.0.1:8080");
    assert_eq!(parse_addr(":8080").unwrap().to_string(), "127.0.0.1:8080");
    assert_eq!(
        parse_addr("localhost:9").unwrap().to_string(),
        "127.0.0.1:9"
    );
    assert!(parse_addr("nonsense").is_err());
    for ok in [
        "http://localhost",
        "http://localhost:3000",
        "https://127.0.0.1:8443",
        "http://127.1.2.3",
        "http://[::1]:80",
        "http://localhost/",
    ] {
        assert!(origin_is_local(ok), "{ok}");
    }
    for bad in [
        "http://evil.example",
        "http://localhost.evil.example",
        "null",
        "file://",
        "http://10.0.0.1",
        "http://127.0.0.1.evil.com",
        "http://127.evil.com",
        "http://127.0.0.1@evil.com",
        "http://localhost:80@evil.com",
        "http://127.0.0.1:80x",
        "http://[::1].evil.com",
    ] {
        assert!(!origin_is_local(bad), "{bad}");
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("cfg/token");
    let (t1, from) = load_token(Some(&f)).unwrap();
    assert_eq!(from.as_deref(), Some(f.as_path()));
    assert!(t1.len() >= 32);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let (t2, _) = load_token(Some(&f)).unwrap();
    assert_eq!(t1, t2, "the token file is read back");
    let (t3, from) = load_token(None).unwrap();
    assert!(from.is_none() && t3 != t1);
    // A token file others can read, or a short token, is refused with a reason.
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = load_token(Some(&f)).unwrap_err().to_string();
    assert!(e.contains("readable by other users"), "{e}");
    std::fs::write(&f, "x\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let e = load_token(Some(&f)).unwrap_err().to_string();
    assert!(e.contains("at least 16"), "{e}");
}

/// An MCP client whose human answers every approval form: ticks the box
/// (`Some(true)`), leaves it unticked (`Some(false)`) or dismisses it (`None`).
/// Records the questions it was shown.
#[derive(Clone)]
struct Human {
    tick: Option<bool>,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Human {
    fn new(tick: Option<bool>) -> Human {
        Human {
            tick,
            asked: Default::default(),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl rmcp::ClientHandler for Human {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("human-at-the-client", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        {
            let schema = serde_json::to_value(&requested_schema).unwrap();
            assert_eq!(schema["properties"]["approve"]["type"], "boolean");
            self.asked.lock().unwrap().push(message);
        }
        Ok(match self.tick {
            Some(t) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": t}))
            }
            None => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

/// A server that allows `/usr/bin/printf` (its output is untrusted: it comes from
/// a sandboxed program) and a project file to delete.
fn approval_env() -> (Env, std::sync::Arc<safesh_server::Server>) {
    let env = Env::new();
    std::fs::write(env.proj().join("keep1.txt"), "one\n").unwrap();
    let s = crate::server_with_config(&env, "[commands.\"/usr/bin/printf\"]\nallow = true\n");
    (env, s)
}

/// `rm` of a name an untrusted program printed needs a human's approval.
const RM_UNTRUSTED: &str = "rm $(/usr/bin/printf keep1.txt) && echo removed";

async fn serve_to(
    server: std::sync::Arc<safesh_server::Server>,
    human: Human,
) -> RunningService<RoleClient, Human> {
    let (a, b) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(s) = SafeshMcp::new(server).serve(a).await {
            let _ = s.waiting().await;
        }
    });
    human.serve(b).await.unwrap()
}

/// `exec` of `script` through a client that may answer approvals.
async fn exec_as(c: &RunningService<RoleClient, Human>, script: &str) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new("exec").with_arguments(args(json!({"script": script}))))
        .await
        .unwrap()
}

fn audit_verdicts(env: &Env) -> String {
    let log = env.dir.path().join("state/safesh/audit.jsonl");
    let log = if log.exists() {
        log
    } else {
        env.dir.path().join("state/audit.jsonl")
    };
    std::fs::read_to_string(log).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_ticked_by_the_clients_human_runs_the_command_once() {
    let (env, s) = approval_env();
    let human = Human::new(Some(true));
    let c = serve_to(s, human.clone()).await;
    let r = exec_as(&c, RM_UNTRUSTED).await;
    let v = r.structured_content.unwrap();
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(v["output"], "removed\n", "{v}");
    assert!(!env.proj().join("keep1.txt").exists());
    let asked = human.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("rm keep1.txt"), "{asked:?}");
    assert!(asked[0].contains("destructive"), "{asked:?}");
    let audit = audit_verdicts(&env);
    assert!(audit.contains("\"approved\""), "{audit}");
    // Single use: the same command again asks again.
    std::fs::write(env.proj().join("keep1.txt"), "one\n").unwrap();
    let r = exec_as(&c, RM_UNTRUSTED).await;
    assert_eq!(r.structured_content.unwrap()["exit_code"], 0);
    assert_eq!(human.asked().len(), 2);
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_refused_by_the_clients_human_stops_the_script() {
    let (env, s) = approval_env();
    let human = Human::new(Some(false));
    let c = serve_to(s, human.clone()).await;
    let r = exec_as(&c, RM_UNTRUSTED).await;
    assert_eq!(r.is_error, Some(true));
    let v = r.structured_content.unwrap();
    assert_eq!(v["exit_code"], 126, "{v}");
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("declined"),
        "{v}"
    );
    assert!(env.proj().join("keep1.txt").exists());
    assert_eq!(human.asked().len(), 1);
    assert!(audit_verdicts(&env).contains("\"denied\""));
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dismissed_form_or_a_client_without_elicitation_leaves_a_pending_approval() {
    let (env, s) = approval_env();
    let human = Human::new(None);
    let c = serve_to(s.clone(), human.clone()).await;
    let r = exec_as(&c, RM_UNTRUSTED).await;
    let v = r.structured_content.unwrap();
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    assert!(
        v["error"]["details"]["approval_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{v}"
    );
    assert!(env.proj().join("keep1.txt").exists());
    assert_eq!(human.asked().len(), 1);
    let _ = c.cancel().await;

    // A client that never declared elicitation is never asked.
    let plain = {
        let (a, b) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(srv) = SafeshMcp::new(s).serve(a).await {
                let _ = srv.waiting().await;
            }
        });
        ().serve(b).await.unwrap()
    };
    let r = call(&plain, "exec", json!({"script": RM_UNTRUSTED})).await;
    let v = r.structured_content.unwrap();
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    assert!(env.proj().join("keep1.txt").exists());
    let _ = plain.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_asks_the_clients_human_too() {
    let (env, s) = approval_env();
    let human = Human::new(Some(true));
    let c = serve_to(s, human.clone()).await;
    let r = c
        .call_tool(
            CallToolRequestParams::new("job_start")
                .with_arguments(args(json!({"script": RM_UNTRUSTED}))),
        )
        .await
        .unwrap();
    let id = r.structured_content.unwrap()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c
        .call_tool(
            CallToolRequestParams::new("job_follow")
                .with_arguments(args(json!({"job_id": id, "timeout_ms": 20000}))),
        )
        .await
        .unwrap();
    let v = r.structured_content.unwrap();
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(!env.proj().join("keep1.txt").exists(), "{v}");
    assert_eq!(human.asked().len(), 1);
    let _ = c.cancel().await;
}
