//! The agent runtime in-process: the envelope of results in sessions (no
//! worker), the pipeline's data flow and labels, and the task faces.

use crate::{Env, exec, server_with_config};
use safesh_server::rpc::Rpc;
use serde_json::{Value, json};

fn call(rpc: &Rpc, method: &str, params: Value) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    serde_json::from_str(&rpc.handle_line(&line).expect("a response")).unwrap()
}

#[test]
fn a_session_result_has_the_envelope() {
    let env = Env::new();
    let s = env.server();
    let sid = s.session_start(Default::default()).unwrap()["session"]
        .as_str()
        .unwrap()
        .to_string();
    let v = exec(
        &s,
        json!({"script": "echo '[1, 2]'", "session": sid, "tags": {"a": "b"}}),
    );
    assert_eq!(v["meta"]["content_type"], "application/json", "{v:#}");
    assert_eq!(v["payload"], json!([1, 2]));
    assert_eq!(v["meta"]["tags"], json!({"a": "b"}));
    assert_eq!(v["meta"]["source"], "echo '[1, 2]'");
    let p = &v["provenance"][0];
    assert_eq!(p["status"], "ok");
    assert_eq!(p["label"], v["label"]);
    // A failing command's provenance says so; the raw stdout never leaks out.
    let v = exec(&s, json!({"command": "false", "session": sid}));
    assert_eq!(v["provenance"][0]["status"], "error");
    assert_eq!(v["provenance"][0]["command"], "false");
    assert!(v.get("piped_stdout").is_none(), "{v:#}");
}

#[test]
fn the_stdin_a_step_gets_keeps_the_previous_steps_label() {
    let env = Env::new();
    std::fs::write(env.proj().join("data.txt"), "x\ny\n").unwrap();
    let rpc = Rpc::new(env.server());
    let r = call(
        &rpc,
        "pipeline",
        json!({"steps": [{"script": "cat data.txt"}, {"command": "wc", "args": ["-l"]}]}),
    );
    let steps = &r["result"]["steps"];
    assert_eq!(steps[1]["output"], "2\n", "{r:#}");
    // wc's count of the file's bytes carries the file as an origin.
    let origins = steps[1]["label"]["origins"].to_string();
    assert!(origins.contains("data.txt"), "{r:#}");
    // A step with its own `input` reads that, not the file's bytes.
    let r = call(
        &rpc,
        "pipeline",
        json!({"steps": [{"script": "cat data.txt"}, {"command": "wc", "args": ["-l"], "input": "one\n"}]}),
    );
    assert_eq!(r["result"]["steps"][1]["output"], "1\n");
    assert!(
        !r["result"]["steps"][1]["label"]["origins"]
            .to_string()
            .contains("data.txt")
    );
}

#[test]
fn bad_pipelines_are_clear_errors_and_nothing_runs() {
    let env = Env::new();
    let rpc = Rpc::new(env.server());
    let r = call(&rpc, "pipeline", json!({"steps": []}));
    assert_eq!(r["error"]["code"], -32602);
    let r = call(
        &rpc,
        "pipeline",
        json!({"steps": [{"script": "echo x > ran.txt"}, {"script": "a", "command": "b"}]}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r:#}");
    assert!(r["error"]["message"].as_str().unwrap().contains("step 1"));
    assert!(!env.proj().join("ran.txt").exists());
    let r = call(
        &rpc,
        "pipeline",
        json!({"steps": [{"script": "true", "on_error": "explode"}]}),
    );
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn tasks_are_listed_and_run_with_their_arguments() {
    let env = Env::new();
    let s = server_with_config(
        &env,
        "[sandbox]\nread = [\".\"]\nwrite = [\".\"]\n[tasks]\ngreet = \"echo hello $1\"\nfail = \"exit 7\"\n",
    );
    let rpc = Rpc::new(s);
    let l = call(&rpc, "task.list", json!({}));
    assert_eq!(l["result"]["tasks"][1]["name"], "greet", "{l:#}");
    assert_eq!(l["result"]["tasks"][1]["kind"], "script");
    let r = call(&rpc, "task.run", json!({"name": "greet", "args": ["you"]}));
    assert_eq!(
        r["result"]["runs"][0]["result"]["output"], "hello you\n",
        "{r:#}"
    );
    assert_eq!(r["result"]["payload"], Value::Null);
    let r = call(&rpc, "task.run", json!({"name": "fail"}));
    assert_eq!(r["result"]["exit_code"], 7);
    assert_eq!(r["result"]["passed"], false);
    let r = call(&rpc, "task.run", json!({"name": "[greet, [nope]]"}));
    assert_eq!(r["error"]["code"], -32602, "{r:#}");
}

#[test]
fn a_request_no_worker_could_start_for_fails_and_never_runs_in_the_server() {
    // A server with worker processes whose worker cannot start (as when a
    // request exhausted processes or memory): the request fails closed. Run in
    // the server instead, an engine abort or a runaway allocation would take
    // the server with it.
    let env = Env::new();
    let mut settings = env.settings.clone();
    settings.worker = Some(safesh_server::worker::WorkerSpawn {
        program: env.dir.path().join("no-such-worker"),
        args: Vec::new(),
    });
    let server = safesh_server::Server::new(settings);
    let marker = env.proj().join("made");
    for script in ["touch made", "touch made & wait"] {
        let v = exec(&server, json!({"script": script}));
        assert_eq!(v["exit_code"], 1, "{v:#}");
        assert_eq!(v["error"]["code"], "EXECUTION_ERROR", "{v:#}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("no worker process could be started"), "{msg}");
        assert!(!marker.exists(), "{script:?} ran in the server");
    }
    let code: safesh_server::code_face::CodeParams = serde_json::from_value(json!({
        "source": "await $.sh`touch made`.result(); console.log('ran')",
    }))
    .unwrap();
    let v = server.code(code.clone(), "json-rpc").unwrap();
    assert_eq!(v["error"]["code"], "EXECUTION_ERROR", "{v:#}");
    assert!(!v["output"].as_str().unwrap_or("").contains("ran"), "{v:#}");
    assert!(!marker.exists(), "the code ran in the server");
    // The benign neighbour: a server without worker processes (the CLI's)
    // runs both here.
    let local = env.server();
    let v = exec(&local, json!({"script": "touch made"}));
    assert_eq!(v["exit_code"], 0, "{v:#}");
    assert!(marker.exists());
    std::fs::remove_file(&marker).unwrap();
    let v = local.code(code, "json-rpc").unwrap();
    assert_eq!(v["exit_code"], 0, "{v:#}");
    assert!(marker.exists());
}
