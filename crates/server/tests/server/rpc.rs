//! JSON-RPC: every error code, batches, notifications, methods.

use crate::Env;
use safesh_server::rpc::Rpc;
use serde_json::{Value, json};

fn call(rpc: &Rpc, line: &str) -> Value {
    serde_json::from_str(&rpc.handle_line(line).expect("a response")).unwrap()
}

fn req(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn error_codes() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    assert_eq!(call(&rpc, "{not json")["error"]["code"], -32700);
    assert_eq!(
        call(&rpc, r#"{"id":1,"method":"execute"}"#)["error"]["code"],
        -32600
    );
    assert_eq!(call(&rpc, r#""just a string""#)["error"]["code"], -32600);
    assert_eq!(call(&rpc, "[]")["error"]["code"], -32600);
    assert_eq!(
        call(&rpc, r#"{"jsonrpc":"2.0","id":1,"method":5}"#)["error"]["code"],
        -32600
    );
    assert_eq!(
        call(&rpc, r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)["error"]["code"],
        -32600
    );
    assert_eq!(
        call(
            &rpc,
            r#"{"jsonrpc":"2.0","id":1,"method":"execute","params":"x"}"#
        )["error"]["code"],
        -32600
    );
    let r = call(&rpc, &req(7, "nope", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(r["id"], 7);
    // context.* is served now (issue 17): without params it is a bad request.
    assert_eq!(
        call(&rpc, &req(1, "context.get", json!({})))["error"]["code"],
        -32602
    );
    // checkpoint.* is served now (issue 17): a bad name is a bad request.
    assert_eq!(
        call(&rpc, &req(1, "checkpoint.restore", json!({"name": "../x"})))["error"]["code"],
        -32602
    );
    // project.* is served now (issue 19): without a spec it is a bad request;
    // an operation it does not have is not found.
    let r = call(&rpc, &req(1, "project.plan", json!({})));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = call(&rpc, &req(1, "project.nope", json!({})));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(
        call(&rpc, &req(1, "execute", json!({"script": 5})))["error"]["code"],
        -32602
    );
    assert_eq!(
        call(&rpc, &req(1, "execute", json!({})))["error"]["code"],
        -32602
    );
    assert_eq!(
        call(
            &rpc,
            &req(1, "execute", json!({"script": "x", "command": "y"}))
        )["error"]["code"],
        -32602
    );
    assert_eq!(
        call(
            &rpc,
            &req(1, "execute", json!({"script": "x", "session": "s-nope"}))
        )["error"]["code"],
        -32602
    );
    assert_eq!(
        call(
            &rpc,
            &req(1, "commands.describe", json!({"name": "no-such"}))
        )["error"]["code"],
        -32602
    );
    assert_eq!(
        call(&rpc, &req(1, "job.output", json!({})))["error"]["code"],
        -32602
    );
}

#[test]
fn notifications_get_no_reply_and_batches_skip_them() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    assert!(
        rpc.handle_line(r#"{"jsonrpc":"2.0","method":"execute","params":{"script":"true"}}"#)
            .is_none()
    );
    assert!(
        rpc.handle_line(r#"{"jsonrpc":"2.0","method":"nope"}"#)
            .is_none()
    );
    let batch = format!(
        "[{},{},{}]",
        req(1, "execute", json!({"script": "echo one"})),
        r#"{"jsonrpc":"2.0","method":"execute","params":{"script":"true"}}"#,
        req(2, "nope", json!({}))
    );
    let r = call(&rpc, &batch);
    let items = r.as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["result"]["output"], "one\n");
    assert_eq!(items[1]["error"]["code"], -32601);
    let only_notes = r#"[{"jsonrpc":"2.0","method":"job.list"}]"#;
    assert!(rpc.handle_line(only_notes).is_none());
}

#[test]
fn session_of_several_calls_and_history() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let sid = call(&rpc, &req(1, "session.start", json!({})))["result"]["session"]
        .as_str()
        .unwrap()
        .to_string();
    call(
        &rpc,
        &req(
            2,
            "execute",
            json!({"script": "n=41", "session": sid, "intent": "set n"}),
        ),
    );
    let r = call(
        &rpc,
        &req(
            3,
            "execute",
            json!({"script": "echo $((n+1))", "session": sid}),
        ),
    );
    assert_eq!(r["result"]["output"], "42\n");
    let refused = call(
        &rpc,
        &req(
            4,
            "execute",
            json!({"command": "sudo", "args": ["id"], "session": sid}),
        ),
    );
    assert!(
        refused.get("error").is_none(),
        "a refusal is a result, not a JSON-RPC error"
    );
    assert_eq!(refused["result"]["error"]["code"], "BLOCKED");
    let h = call(
        &rpc,
        &req(5, "history", json!({"session": sid, "limit": 2})),
    );
    let entries = h["result"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["command"], "echo $((n+1))");
    assert_eq!(entries[1]["error"], "BLOCKED");
    let e = call(&rpc, &req(6, "session.end", json!({"session": sid})));
    assert_eq!(e["result"]["ended"], true);
}

#[test]
fn pipeline_stops_at_the_first_failure_unless_told() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let steps = json!([{"script": "echo a"}, {"script": "false"}, {"script": "echo c"}]);
    let r = call(&rpc, &req(1, "pipeline", json!({"steps": steps})));
    assert_eq!(r["result"]["passed"], false);
    assert_eq!(r["result"]["completed"], 2);
    let r = call(
        &rpc,
        &req(
            2,
            "pipeline",
            json!({"steps": steps, "continue_on_error": true}),
        ),
    );
    assert_eq!(r["result"]["completed"], 3);
    assert_eq!(r["result"]["steps"][2]["output"], "c\n");
}

#[test]
fn commands_catalogue() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let r = call(&rpc, &req(1, "commands.list", json!({})));
    let cmds = r["result"]["commands"].as_array().unwrap();
    let find = |n: &str| cmds.iter().find(|c| c["name"] == n).cloned().unwrap();
    assert_eq!(find("grep")["kind"], "utility");
    assert_eq!(find("cd")["kind"], "builtin");
    assert!(!find("sort")["description"].as_str().unwrap().is_empty());
    let d = call(&rpc, &req(2, "commands.describe", json!({"name": "jq"})));
    assert_eq!(d["result"]["params_schema"]["type"], "object");
}

#[test]
fn jobs_over_rpc() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let j = call(
        &rpc,
        &req(
            1,
            "job.start",
            json!({"command": "seq", "args": ["1", "3"]}),
        ),
    );
    let id = j["result"]["job_id"].as_str().unwrap().to_string();
    let f = call(&rpc, &req(2, "job.follow", json!({"job_id": id})));
    assert_eq!(f["result"]["output"], "1\n2\n3\n");
    assert_eq!(f["result"]["status"], "exited");
    let l = call(&rpc, &req(3, "job.list", json!(null)));
    assert_eq!(l["result"]["jobs"][0]["job_id"], id.as_str());
}

#[test]
fn huge_request_is_rejected_and_the_stream_goes_on() {
    let env = Env::new();
    let mut input = Vec::new();
    input.extend_from_slice(
        br#"{"jsonrpc":"2.0","id":1,"method":"execute","params":{"script":"echo "#,
    );
    input.extend(std::iter::repeat_n(b'x', safesh_server::rpc::MAX_LINE + 10));
    input.extend_from_slice(b"\"}}\n");
    input.extend_from_slice(req(2, "execute", json!({"script": "echo after"})).as_bytes());
    input.push(b'\n');
    let mut out = Vec::new();
    let status = safesh_server::rpc::serve(env.server(), std::io::Cursor::new(input), &mut out);
    assert_eq!(status, 0);
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["error"]["code"], -32700);
    assert!(
        lines[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than the limit")
    );
    assert_eq!(lines[1]["result"]["output"], "after\n");
}

#[test]
fn execute_with_a_background_command_makes_a_job() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let r = call(
        &rpc,
        &req(1, "execute", json!({"script": "echo main; sleep 30 &"})),
    );
    assert_eq!(r["result"]["output"], "main\n", "{r}");
    let r = call(&rpc, &req(2, "job.list", json!({})));
    let jobs = r["result"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{r}");
    assert_eq!(jobs[0]["command"], "sleep 30 &");
    assert_eq!(jobs[0]["status"], "running");
    let id = jobs[0]["job_id"].clone();
    let r = call(&rpc, &req(3, "job.kill", json!({"job_id": id})));
    assert_eq!(r["result"]["status"], "killed", "{r}");
    let r = call(
        &rpc,
        &req(
            4,
            "execute",
            json!({"script": "sleep 30", "timeout_ms": 100}),
        ),
    );
    assert_eq!(r["result"]["stopped"], "timeout", "{r}");
    assert_eq!(r["result"]["error"]["code"], "TIMEOUT");
}
