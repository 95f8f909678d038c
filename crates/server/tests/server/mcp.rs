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
    let f = call(&c, "job_follow", json!({"job_id": jid}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(f["output"], "one\ntwo\n");
    assert_eq!(f["status"], "exited");
    let o = call(&c, "job_output", json!({"job_id": jid, "since": 4}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(o["data"], "two\n");
    let l = call(&c, "job_list", json!({}))
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
        "http://[::1]:80",
    ] {
        assert!(origin_is_local(ok), "{ok}");
    }
    for bad in [
        "http://evil.example",
        "http://localhost.evil.example",
        "null",
        "file://",
        "http://10.0.0.1",
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
}
