//! Issue 19's verification in the runtime, through the shipped binary: JSON-RPC
//! `execute`/`pipeline` with `verify` on safesh-verify, VERIFICATION_FAILED,
//! assertions that are no oracle on a secret, `file:` and `context.` targets,
//! history, `[verify]`/`[llm]` config and `llm_judge` against a local
//! OpenAI-compatible server.

use crate::context::{call, rpc};
use crate::flow_support::{Arena, CONFIG, SECRET_VALUE};
use serde_json::{Value, json};

fn execute(a: &Arena, params: Value) -> Value {
    let r = rpc(a, &[call("execute", params)]);
    r[0].clone()
}

/// `execute` over `safesh rpc` with `env` added to its environment (the
/// judge's API key variable).
fn execute_env(a: &Arena, env: &[(&str, &str)], params: Value) -> Value {
    call_env(a, env, "execute", params)
}

/// One JSON-RPC `method` call to `safesh rpc` with `env` added.
fn call_env(a: &Arena, env: &[(&str, &str)], method: &str, params: Value) -> Value {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_safesh"))
        .arg("--config")
        .arg(&a.config)
        .arg("rpc")
        .current_dir(&a.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", &a.home)
        .env("XDG_STATE_HOME", &a.state)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start safesh rpc");
    let mut stdin = child.stdin.take().expect("stdin");
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    writeln!(stdin, "{req}").expect("send");
    drop(stdin);
    let out = child.wait_with_output().expect("safesh rpc ran");
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

const KEY: &[(&str, &str)] = &[("JUDGE_KEY", "k-test")];

fn result(r: &Value) -> &Value {
    assert!(!r["result"].is_null(), "no result: {r:#}");
    &r["result"]
}

fn passes(v: &Value) -> Vec<bool> {
    v["verification"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no verification results: {v:#}"))
        .iter()
        .map(|x| x["passed"].as_bool().unwrap())
        .collect()
}

#[test]
fn every_assertion_holds_on_a_good_step_and_the_results_carry_actual() {
    let a = Arena::new();
    let r = execute(
        &a,
        json!({"script": "printf '[{\"n\":\"a.rs\"},{\"n\":\"b.rs\"},{\"n\":\"c.rs\"}]\\n'",
               "intent": "list rust files", "tags": {"env": "test"},
               "verify": [
            {"type": "not_empty"},
            {"type": "contains", "expected": "b.rs"},
            {"type": "count_gte", "value": 3},
            {"type": "matches_regex", "pattern": "c\\.rs"},
            {"type": "json_schema", "expected": {"type": "array", "items": {"required": ["n"]}}},
            {"type": "exit_code", "expected": 0},
            {"type": "contains", "target": "payload.1.n", "expected": "b"},
            {"type": "contains", "target": "meta.tags.env", "expected": "test"},
            {"type": "file_exists", "target": "file:public.txt"},
            {"type": "file_contains", "target": "file:public.txt", "expected": "public"}
        ]}),
    );
    let v = result(&r);
    assert_eq!(v["exit_code"], 0, "{v:#}");
    assert!(v["error"].is_null(), "{v:#}");
    assert_eq!(v["verification"]["passed"], true, "{v:#}");
    assert!(passes(v).iter().all(|p| *p), "{v:#}");
    let count = &v["verification"]["results"][2];
    assert_eq!(count["detail"], "3 elements, wanted ≥ 3", "{count:#}");
    assert_eq!(v["verification"]["results"][6]["actual"], "b.rs");
    assert_eq!(v["intent"], "list rust files");
}

#[test]
fn a_command_that_succeeded_but_failed_verification_exits_1_with_verification_failed() {
    let a = Arena::new();
    let r = execute(
        &a,
        json!({"script": "printf 'a\\nb\\n'", "verify": [
            {"type": "not_empty"},
            {"type": "count_gte", "expected": 3, "message": "three lines expected"}
        ]}),
    );
    let v = result(&r);
    assert_eq!(v["exit_code"], 1, "{v:#}");
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED", "{v:#}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("verify[1] (count_gte)"), "{msg}");
    assert!(msg.contains("three lines expected"), "{msg}");
    assert!(msg.contains("2 non-empty lines"), "{msg}");
    assert!(v["error"]["suggestion"].is_string());
    assert_eq!(passes(v), [true, false]);
    let failed = &v["verification"]["results"][1];
    assert_eq!(failed["actual"], "a\nb\n");
    assert_eq!(failed["message"], "three lines expected");
    assert_eq!(v["provenance"][0]["status"], "error", "{v:#}");
    // The output is still the command's.
    assert_eq!(v["output"], "a\nb\n");
}

#[test]
fn a_command_that_failed_keeps_its_own_status_and_error() {
    let a = Arena::new();
    let r = execute(
        &a,
        json!({"script": "echo partial; exit 3", "verify": [{"type": "contains", "expected": "all"}]}),
    );
    let v = result(&r);
    assert_eq!(v["exit_code"], 3, "{v:#}");
    assert!(v["error"].is_null(), "{v:#}");
    assert_eq!(v["verification"]["passed"], false);
    // A refusal keeps its code too.
    let r = execute(
        &a,
        json!({"script": "sudo ls", "verify": [{"type": "not_empty"}]}),
    );
    let v = result(&r);
    assert_eq!(v["error"]["code"], "BLOCKED", "{v:#}");
    assert_eq!(v["exit_code"], 126);
}

#[test]
fn bad_assertions_are_refused_before_anything_runs() {
    let a = Arena::new();
    for (bad, says) in [
        (
            json!({"type": "matches_regex", "expected": "(a"}),
            "verify[1].expected: bad regex",
        ),
        (
            json!({"type": "contain", "expected": "x"}),
            "verify[1].type",
        ),
        (
            json!({"type": "json_schema", "expected": {"type": 7}}),
            "verify[1].expected: bad schema",
        ),
        (
            json!({"type": "contains", "target": "nowhere", "expected": "x"}),
            "verify[1].target",
        ),
    ] {
        let r = execute(
            &a,
            json!({"script": "touch ran.txt", "verify": [{"type": "not_empty"}, bad]}),
        );
        assert_eq!(r["error"]["code"], -32602, "{r:#}");
        let m = r["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains(says), "{says}: {m}");
        assert!(!a.exists("ran.txt"), "the script ran despite {bad}");
    }
    // And in a pipeline, naming the step.
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"steps": [{"script": "touch ran.txt"},
                             {"script": "true", "verify": [{"type": "count_gte", "expected": "many"}]}]}),
        )],
    );
    let m = r[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("step 1: verify[0].expected"), "{r:#?}");
    assert_eq!(m.matches("invalid params").count(), 1, "{m}");
    assert!(!a.exists("ran.txt"));
}

#[test]
fn contains_on_a_secret_value_cannot_tell_it_from_a_wrong_guess() {
    let a = Arena::new();
    let guess = |g: &str| {
        let r = execute(
            &a,
            json!({"script": "cat .env", "verify": [{"type": "contains", "expected": g}]}),
        );
        result(&r).clone()
    };
    let right = guess(SECRET_VALUE);
    let wrong = guess("sk-live-ffffffffffffffff");
    for v in [&right, &wrong] {
        assert_eq!(v["verification"]["passed"], false, "{v:#}");
        assert_eq!(v["error"]["code"], "VERIFICATION_FAILED");
    }
    let (r, w) = (
        &right["verification"]["results"][0],
        &wrong["verification"]["results"][0],
    );
    assert_eq!(r["actual"], w["actual"], "actual is the redacted view");
    // The detail quotes each guess as written, nothing more.
    assert_eq!(
        r["detail"].as_str().unwrap().replace(SECRET_VALUE, "G"),
        w["detail"]
            .as_str()
            .unwrap()
            .replace("sk-live-ffffffffffffffff", "G")
    );
    assert!(
        r["actual"]
            .as_str()
            .unwrap_or_default()
            .contains("redacted"),
        "{r:#}"
    );
    // The same through file:.
    let r = execute(
        &a,
        json!({"script": "true", "verify": [
            {"type": "file_contains", "target": "file:.env", "expected": SECRET_VALUE},
            {"type": "file_contains", "target": "file:.env", "expected": "API_KEY"}]}),
    );
    let v = result(&r);
    assert_eq!(passes(v), [false, false], "{v:#}");
    for res in v["verification"]["results"].as_array().unwrap() {
        assert_eq!(res["actual"], "[redacted: 1 line, secret(.env)]", "{v:#}");
    }
    // The benign neighbour: a public file's text is checked as written.
    let r = execute(
        &a,
        json!({"script": "cat public.txt", "verify": [{"type": "contains", "expected": "public"}]}),
    );
    assert_eq!(result(&r)["verification"]["passed"], true, "{r:#}");
}

#[test]
fn file_targets_take_the_path_check_of_cat() {
    let a = Arena::new();
    let r = execute(
        &a,
        json!({"script": "true", "verify": [
            {"type": "file_exists", "target": "file:/etc/hostname"},
            {"type": "file_exists", "target": "file:missing.txt"},
            {"type": "file_exists", "target": "file:README.md"}]}),
    );
    let v = result(&r);
    assert_eq!(passes(v), [false, false, true], "{v:#}");
    let outside = v["verification"]["results"][0]["detail"].as_str().unwrap();
    assert!(outside.contains("PATH_VIOLATION"), "{outside}");
    let missing = v["verification"]["results"][1]["detail"].as_str().unwrap();
    assert!(missing.contains("no such file"), "{missing}");
}

#[test]
fn context_targets_read_the_store_and_history_records_the_verification() {
    let a = Arena::new();
    let r = rpc(
        &a,
        &[
            call(
                "context.set",
                json!({"scope": "project", "key": "files", "value": ["a", "b"]}),
            ),
            call(
                "execute",
                json!({"script": "echo done", "intent": "check the store", "verify": [
                    {"type": "count_gte", "target": "context.project.files", "expected": 2},
                    {"type": "contains", "target": "context.project.nope", "expected": "x"}]}),
            ),
            call("history", json!({"limit": 1})),
        ],
    );
    let v = result(&r[1]);
    assert_eq!(passes(v), [true, false], "{v:#}");
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED");
    let h = &result(&r[2])["entries"][0];
    assert_eq!(h["error"], "VERIFICATION_FAILED", "{h:#}");
    assert_eq!(h["exit_code"], 1, "{h:#}");
    assert_eq!(
        h["verification"],
        json!({"passed": false, "results": [
            {"type": "count_gte", "passed": true}, {"type": "contains", "passed": false}]}),
        "{h:#}"
    );
}

#[test]
fn a_failed_verification_in_a_pipeline_stops_and_rolls_back() {
    let a = Arena::new();
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"checkpoint_before": true, "steps": [
                {"script": "echo changed > README.md; echo n > new.txt"},
                {"script": "cat README.md", "verify": [{"type": "contains", "expected": "unchanged"}]},
                {"script": "echo never"}
            ]}),
        )],
    );
    let v = result(&r[0]);
    assert_eq!(v["passed"], false, "{v:#}");
    assert_eq!(v["stopped_at"], 1);
    assert_eq!(v["steps"][1]["error"]["code"], "VERIFICATION_FAILED");
    assert_eq!(v["rolled_back"], true, "{v:#}");
    assert!(!a.exists("new.txt"));
    assert_eq!(
        std::fs::read_to_string(a.path("README.md")).unwrap(),
        "# demo\n\nTODO: write the docs\n"
    );
    // on_error skip: the failure is recorded and the pipeline goes on.
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"steps": [
                {"script": "echo x", "verify": [{"type": "contains", "expected": "y"}], "on_error": "skip"},
                {"script": "echo after"}
            ]}),
        )],
    );
    let v = result(&r[0]);
    assert_eq!(v["completed"], 2, "{v:#}");
    assert_eq!(v["steps"][1]["output"], "after\n");
}

#[test]
fn llm_judge_without_an_endpoint_fails_or_warns_never_passes_silently() {
    let a = Arena::new();
    let r = execute(
        &a,
        json!({"script": "echo hi", "verify": [{"type": "llm_judge", "expected": "greets"}]}),
    );
    let v = result(&r);
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED", "{v:#}");
    let res = &v["verification"]["results"][0];
    assert_eq!(res["unavailable"], true, "{res:#}");
    assert!(res["detail"].as_str().unwrap().contains("unavailable"));

    let a = Arena::with_extra("[verify]\nllm_judge_required = false\n");
    let r = execute(
        &a,
        json!({"script": "echo hi", "verify": [{"type": "not_empty"}, {"type": "llm_judge", "expected": "greets"}]}),
    );
    let v = result(&r);
    assert_eq!(v["exit_code"], 0, "{v:#}");
    assert_eq!(v["verification"]["passed"], true, "{v:#}");
    let w = v["verification"]["warnings"].to_string();
    assert!(w.contains("llm_judge"), "{v:#}");
    assert!(v["warnings"].to_string().contains("llm_judge"), "{v:#}");
}

/// An arena whose scripts have no network at all, and whose judge is `server`.
fn judge_arena(server: &safesh_llm::fake::FakeServer) -> Arena {
    let config = CONFIG.replace("network = [\"127.0.0.1\"]\n", "");
    assert_ne!(config, CONFIG);
    Arena::with_config(&format!(
        "{config}\n[llm]\nendpoint = \"{}\"\nmodel = \"judge-1\"\napi_key_env = \"JUDGE_KEY\"\ntimeout_ms = 5000\n",
        server.base_url
    ))
}

#[test]
fn llm_judge_asks_the_configured_endpoint_with_the_intent_and_output() {
    use safesh_llm::fake::{FakeServer, Reply};
    let server = FakeServer::start(|r| {
        let text = r.body.to_string();
        let pass = text.contains("hello world");
        Reply::Content(format!(
            "{{\"pass\": {pass}, \"reason\": \"{}\"}}",
            if pass { "it greets" } else { "no greeting" }
        ))
    })
    .unwrap();
    let a = judge_arena(&server);
    let r = execute_env(
        &a,
        KEY,
        json!({"script": "echo hello world", "intent": "greet the world",
               "verify": [{"type": "llm_judge", "expected": "the output greets the world"}]}),
    );
    let v = result(&r);
    assert_eq!(v["verification"]["passed"], true, "{v:#}");
    assert!(
        v["verification"]["results"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("it greets")
    );
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body["model"], "judge-1");
    assert_eq!(got[0].authorization.as_deref(), Some("Bearer k-test"));
    let body = got[0].body.to_string();
    assert!(body.contains("greet the world") && body.contains("the output greets the world"));
    // A judge that says no fails the step.
    let r = execute_env(
        &a,
        KEY,
        json!({"script": "echo bye", "verify": [{"type": "llm_judge", "expected": "greets"}]}),
    );
    assert_eq!(result(&r)["error"]["code"], "VERIFICATION_FAILED", "{r:#}");
}

#[test]
fn llm_judge_never_sends_a_secret_output_and_its_host_is_not_curls() {
    use safesh_llm::fake::{FakeServer, Reply};
    let server =
        FakeServer::start(|_| Reply::Content("{\"pass\": true, \"reason\": \"ok\"}".into()))
            .unwrap();
    let a = judge_arena(&server);
    let r = execute_env(
        &a,
        KEY,
        json!({"script": "cat .env", "verify": [{"type": "llm_judge", "expected": "has a key"}]}),
    );
    let v = result(&r);
    assert_eq!(v["verification"]["passed"], false, "{v:#}");
    let d = v["verification"]["results"][0]["detail"].as_str().unwrap();
    assert!(d.contains("FLOW_VIOLATION"), "{d}");
    assert!(server.received().is_empty(), "the secret output was sent");
    // The benign neighbour: untrusted (downloaded-like) or public output is sent.
    let r = execute_env(
        &a,
        KEY,
        json!({"script": "cat public.txt", "verify": [{"type": "llm_judge", "expected": "is public"}]}),
    );
    assert_eq!(result(&r)["verification"]["passed"], true, "{r:#}");
    assert_eq!(server.received().len(), 1);
    // The endpoint's host is the judge's alone: a script cannot reach its port.
    let port = server
        .base_url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/v1");
    let run = a.run(&format!(
        "curl -s -m 2 http://127.0.0.1:{port}/v1/chat/completions -d x"
    ));
    assert_ne!(
        run.status, 0,
        "curl reached the judge's endpoint: {}",
        run.stderr
    );
    assert!(run.stderr.contains("127.0.0.1"), "{}", run.stderr);
    assert_eq!(server.received().len(), 1);
}

#[test]
fn config_show_lists_verify_and_llm_and_bad_keys_are_refused() {
    let a = Arena::with_extra(
        "[verify]\nfail_fast = true\n[llm]\nendpoint = \"http://127.0.0.1:9/v1\"\napi_key_env = \"K\"\n",
    );
    let run = a.run_args(&["config", "show"]);
    let out = run.stdout.clone();
    assert!(
        out.contains("[verify]\nfail_fast = true  # from config"),
        "{out}"
    );
    assert!(
        out.contains("llm_judge_required = true  # built-in"),
        "{out}"
    );
    assert!(
        out.contains("endpoint = \"http://127.0.0.1:9/v1\""),
        "{out}"
    );
    assert!(out.contains("api_key_env = \"K\""), "{out}");
    let a = Arena::with_extra("[verify]\nfail_fats = true\n");
    let run = a.run_args(&["config", "show"]);
    let err = run.stderr.clone();
    assert!(
        err.contains("fail_fats") && err.contains("fail_fast"),
        "{err}"
    );
    let a = Arena::with_extra("[llm]\nendpoint = \"ftp://x\"\n");
    let run = a.run_args(&["config", "show"]);
    let err = run.stderr.clone();
    assert!(err.contains("endpoint"), "{err}");
}

#[test]
fn fail_fast_skips_the_rest_after_a_failure() {
    let a = Arena::with_extra("[verify]\nfail_fast = true\n");
    let r = execute(
        &a,
        json!({"script": "echo a", "verify": [
            {"type": "contains", "expected": "z"}, {"type": "not_empty"}]}),
    );
    let v = result(&r);
    assert_eq!(v["verification"]["results"][1]["skipped"], true, "{v:#}");
}

#[test]
fn the_pipeline_text_form_runs_annotated_steps() {
    let a = Arena::new();
    std::fs::create_dir(a.path("src")).unwrap();
    for f in ["a.rs", "b.rs", "c.rs", "notes.txt"] {
        a.write(&format!("src/{f}"), "x\n");
    }
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"text": "ls src ?intent=\"list the sources\"\n  | grep '\\.rs$' ?intent=\"keep Rust files\" ?verify=\"not_empty contains:.rs count_gte:3\"\n  | wc -l"}),
        )],
    );
    let v = result(&r[0]);
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(v["completed"], 3);
    assert_eq!(v["steps"][0]["intent"], "list the sources");
    assert_eq!(v["steps"][1]["verification"]["passed"], true);
    assert_eq!(v["steps"][2]["output"].as_str().unwrap().trim(), "3");
    // A failing ?verify stops the pipeline like a JSON step's.
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"text": "ls src | grep txt ?verify='count_gte:2' | wc -l"}),
        )],
    );
    let v = result(&r[0]);
    assert_eq!(v["stopped_at"], 1, "{v:#}");
    assert_eq!(v["steps"][1]["error"]["code"], "VERIFICATION_FAILED");
    // Words that are not assertions are an llm_judge criterion (no judge here).
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"text": "ls src ?verify=\"output lists only Rust files\""}),
        )],
    );
    let res = &result(&r[0])["steps"][0]["verification"]["results"][0];
    assert_eq!(res["type"], "llm_judge", "{res:#}");
    assert_eq!(res["unavailable"], true, "{res:#}");
    // Errors say where, and nothing runs.
    for (text, says) in [
        ("touch ran.txt |\n | wc", "line 2 column 2: empty step"),
        ("touch ran.txt ?intnet=x", "unknown annotation ?intnet"),
        ("touch ran.txt | echo 'open", "unterminated single quote"),
        ("touch ran.txt ?verify='count_gte:x'", "step 0 ?verify"),
    ] {
        let r = rpc(&a, &[call("pipeline", json!({"text": text}))]);
        assert_eq!(r[0]["error"]["code"], -32602, "{text}: {r:#?}");
        let m = r[0]["error"]["message"].as_str().unwrap();
        assert!(m.contains(says), "{text}: {m}");
        assert!(!a.exists("ran.txt"), "{text} ran");
    }
    let r = rpc(
        &a,
        &[call(
            "pipeline",
            json!({"text": "ls", "steps": [{"script": "ls"}]}),
        )],
    );
    assert!(
        r[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not both")
    );
}

#[test]
fn explain_and_help_know_verify() {
    let a = Arena::new();
    let run = a.run_args(&["explain", "VERIFICATION_FAILED"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("VERIFICATION_FAILED: the command succeeded but an assertion failed")
    );
    assert!(run.stdout.contains("Exit status: 1\n"), "{}", run.stdout);
    let run = a.run("help verify");
    assert!(run.stdout.contains("verify ASSERTION..."), "{}", run.stdout);
    // The benign neighbour of a failed verify: the passing one is a pass-through.
    let run = a.run("printf 'b\\na\\n' | verify 'count_gte:2' | sort");
    assert_eq!(run.stdout, "a\nb\n", "{}", run.stderr);
}

/// A spec in the arena; `safesh spec run --json` on it.
fn spec_run(a: &Arena, body: &str) -> (crate::policy_support::Run, Value) {
    a.write(
        "project.agsh.yaml",
        &format!("apiVersion: agsh/v1\nkind: ProjectSpec\n{body}"),
    );
    let r = a.run_args(&["spec", "run", "project.agsh.yaml", "--json"]);
    let v: Value = serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.stdout));
    (r, v)
}

fn criteria_passes(v: &Value) -> Vec<bool> {
    v["success_criteria"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no success_criteria results: {v:#}"))
        .iter()
        .map(|x| x["passed"].as_bool().unwrap())
        .collect()
}

#[test]
fn spec_success_criteria_see_every_target_the_runtime_verify_sees() {
    let a = Arena::new();
    a.write("data.json", "{\"name\": \"x\", \"items\": [1, 2, 3]}\n");
    let set = a.run("context set project owner alice");
    assert_eq!(set.status, 0, "{}", set.stderr);
    // Each target with a criterion that holds, then one that does not.
    let (r, v) = spec_run(
        &a,
        &format!(
            "meta:\n  name: targets\n  tags: [team=infra, weekly]\ngoal: check the targets\n\
             steps:\n  - script: cat data.json\n\
             success_criteria:\n\
             \x20 - {{type: count_gte, target: payload.items, expected: 3}}\n\
             \x20 - {{type: contains, target: payload.name, expected: y}}\n\
             \x20 - {{type: contains, target: 'file:public.txt', expected: public}}\n\
             \x20 - {{type: contains, target: 'file:public.txt', expected: nope}}\n\
             \x20 - {{type: file_exists, target: 'file:/etc/hostname'}}\n\
             \x20 - {{type: contains, target: context.project.owner, expected: alice}}\n\
             \x20 - {{type: contains, target: context.project.owner, expected: bob}}\n\
             \x20 - {{type: contains, target: meta.tags.team, expected: infra}}\n\
             \x20 - {{type: contains, target: meta.tags.team, expected: ops}}\n\
             \x20 - {{type: exit_code, expected: 0}}\n\
             \x20 - {{type: exit_code, expected: 3}}\n\
             \x20 - {{type: matches_regex, target: stderr, expected: '^$'}}\n\
             \x20 - {{type: not_empty, target: stderr}}\n\
             \x20 - {{type: contains, target: 'file:.env', expected: '{SECRET_VALUE}'}}\n"
        ),
    );
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert_eq!(v["passed"], false, "{v:#}");
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED", "{v:#}");
    assert_eq!(
        criteria_passes(&v),
        [
            true, false, true, false, false, true, false, true, false, true, false, true, false,
            false
        ],
        "{v:#}"
    );
    let res = &v["success_criteria"]["results"];
    // Outside the read roots: the path check's refusal, never a silent pass.
    assert!(
        res[4]["detail"]
            .as_str()
            .unwrap()
            .contains("PATH_VIOLATION"),
        "{v:#}"
    );
    // A secret file is checked as its redaction: `actual` never holds it.
    assert_eq!(
        res[13]["actual"], "[redacted: 1 line, secret(.env)]",
        "{v:#}"
    );
    assert!(
        !res[13]["actual"].to_string().contains(SECRET_VALUE),
        "{v:#}"
    );
    // The benign neighbour: only the criteria that hold, and the run passes.
    let (r, v) = spec_run(
        &a,
        "meta:\n  name: targets\n  tags: [team=infra, weekly]\ngoal: check the targets\n\
         steps:\n  - script: cat data.json\n\
         success_criteria:\n\
         \x20 - {type: count_gte, target: payload.items, expected: 3}\n\
         \x20 - {type: contains, target: 'file:public.txt', expected: public}\n\
         \x20 - {type: contains, target: context.project.owner, expected: alice}\n\
         \x20 - {type: contains, target: meta.tags.weekly, expected: 'true'}\n\
         \x20 - {type: exit_code, expected: 0}\n",
    );
    assert_eq!(r.status, 0, "{}\n{v:#}", r.stderr);
    assert_eq!(criteria_passes(&v), [true; 5], "{v:#}");
}

#[test]
fn a_spec_run_is_one_history_record_besides_its_steps() {
    let a = Arena::new();
    let (r, v) = spec_run(
        &a,
        "meta:\n  name: recorded\ngoal: count the public words\n\
         steps:\n  - script: cat public.txt\n  - script: wc -w\n\
         success_criteria:\n  - {type: contains, expected: '3'}\n  - {type: not_empty}\n",
    );
    assert_eq!(r.status, 0, "{}\n{v:#}", r.stderr);
    let h = rpc(&a, &[call("history", json!({"limit": 10}))]);
    let entries = result(&h[0])["entries"].as_array().unwrap().clone();
    let runs: Vec<&Value> = entries.iter().filter(|e| !e["run"].is_null()).collect();
    assert_eq!(runs.len(), 1, "{entries:#?}");
    let run = runs[0];
    let hash = v["hash"].as_str().unwrap();
    assert_eq!(
        run["command"],
        format!("spec run recorded plan {}", &hash[..12]),
        "{run:#}"
    );
    assert_eq!(run["intent"], "count the public words", "{run:#}");
    assert_eq!(run["exit_code"], 0, "{run:#}");
    assert_eq!(run["run"]["spec"], "recorded");
    assert_eq!(run["run"]["hash"], hash);
    assert_eq!(run["run"]["passed"], true);
    assert_eq!(
        run["run"]["steps"],
        json!([{"index": 0, "status": "ok", "exit_code": 0}, {"index": 1, "status": "ok", "exit_code": 0}]),
        "{run:#}"
    );
    assert_eq!(
        run["run"]["success_criteria"],
        json!([{"type": "contains", "target": "output", "passed": true},
               {"type": "not_empty", "target": "output", "passed": true}]),
        "{run:#}"
    );
    // Each step is its own entry too.
    assert!(
        entries.iter().any(|e| e["command"] == "wc -w"),
        "{entries:#?}"
    );
    // A failed run is recorded failed, with its code.
    let (_, _) = spec_run(
        &a,
        "meta:\n  name: recorded\ngoal: count\nsteps:\n  - script: cat public.txt\n\
         success_criteria:\n  - {type: contains, expected: absent-word}\n",
    );
    let h = rpc(&a, &[call("history", json!({"limit": 10}))]);
    let last_run = result(&h[0])["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| !e["run"].is_null())
        .cloned()
        .unwrap();
    assert_eq!(last_run["exit_code"], 1, "{last_run:#}");
    assert_eq!(last_run["error"], "VERIFICATION_FAILED", "{last_run:#}");
    assert_eq!(last_run["run"]["passed"], false, "{last_run:#}");
    assert!(
        !last_run.to_string().contains("hello public world"),
        "history keeps no output: {last_run:#}"
    );
}

#[test]
fn the_verify_builtin_reads_file_targets_through_the_path_check() {
    let a = Arena::new();
    // Outside the read roots: PATH_VIOLATION stops the script, not a silent pass.
    let r = a.run("echo x | verify 'file_exists:/etc/hostname'; touch after");
    assert_eq!(r.status, 126, "{}", r.stderr);
    assert!(r.stderr.contains("PATH_VIOLATION"), "{}", r.stderr);
    assert!(!a.dir.join("after").exists());
    // Inside them: read and checked; the input passes through.
    let r = a.run("echo x | verify 'file_contains:public.txt:public' 'file_exists:README.md'");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "x\n");
    let r = a.run("echo x | verify 'file_contains:public.txt:nope'");
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert!(r.stderr.contains("VERIFICATION_FAILED"), "{}", r.stderr);
    let r = a.run("echo x | verify 'file_exists:missing.txt'");
    assert_eq!(r.status, 1, "{}", r.stderr);
    // A secret file is checked as its redaction: a right guess fails like a wrong one.
    let right = a.run(&format!(
        "echo x | verify 'file_contains:.env:{SECRET_VALUE}'"
    ));
    let wrong = a.run("echo x | verify 'file_contains:.env:sk-live-ffff'");
    assert_eq!(right.status, 1, "{}", right.stderr);
    assert_eq!(wrong.status, 1, "{}", wrong.stderr);
    // Said the same way, but for the guess itself as written.
    assert_eq!(
        right.stderr.replace(SECRET_VALUE, "G"),
        wrong.stderr.replace("sk-live-ffff", "G")
    );
}

#[test]
fn the_verify_builtin_asks_the_configured_judge() {
    use safesh_llm::fake::{FakeServer, Reply};
    let server = FakeServer::start(|r| {
        let pass = r.body.to_string().contains("hello world");
        Reply::Content(format!("{{\"pass\": {pass}, \"reason\": \"judged\"}}"))
    })
    .unwrap();
    let a = judge_arena(&server).env("JUDGE_KEY", "k-test");
    let r = a.run("echo hello world | verify 'llm_judge:greets the world'");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "hello world\n");
    assert_eq!(server.received().len(), 1);
    let body = server.received()[0].body.to_string();
    assert!(body.contains("greets the world"), "{body}");
    let r = a.run("echo bye | verify 'llm_judge:greets the world'");
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert!(r.stderr.contains("VERIFICATION_FAILED"), "{}", r.stderr);
    // A secret input is never sent: the flow rules refuse the request.
    let before = server.received().len();
    let r = a.run("cat .env | verify 'llm_judge:has a key'");
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert!(r.stderr.contains("FLOW_VIOLATION"), "{}", r.stderr);
    assert_eq!(server.received().len(), before, "the secret input was sent");
    // No endpoint: unavailable, a failure unless llm_judge_required = false.
    let b = Arena::new();
    let r = b.run("echo hi | verify 'llm_judge:greets'");
    assert_eq!(r.status, 1, "{}", r.stderr);
    let c = Arena::with_extra("[verify]\nllm_judge_required = false\n");
    let r = c.run("echo hi | verify not_empty 'llm_judge:greets'");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stderr.contains("llm_judge"), "{}", r.stderr);
}

#[test]
fn a_spec_runs_secret_output_stays_secret_in_its_output_file_and_before_the_judge() {
    use safesh_llm::fake::{FakeServer, Reply};
    let server =
        FakeServer::start(|_| Reply::Content("{\"pass\": true, \"reason\": \"ok\"}".into()))
            .unwrap();
    let a = judge_arena(&server);
    let run = |step: &str, output: &str, criterion: &str| {
        a.write(
            "project.agsh.yaml",
            &format!(
                "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: judged\ngoal: show the file\n\
                 steps:\n  - script: {step}\n{output}\
                 success_criteria:\n  - {criterion}\n"
            ),
        );
        let r = call_env(&a, KEY, "project.run", json!({"path": "project.agsh.yaml"}));
        r["result"].clone()
    };
    // The criteria see the last step's stdout with its label: the judge is
    // never sent a secret (the text the model saw was redacted, the data not).
    let judge = "{type: llm_judge, expected: shows the file}";
    let v = run("cat .env", "", judge);
    assert_eq!(v["passed"], false, "{v:#}");
    let d = v["success_criteria"]["results"][0]["detail"].to_string();
    assert!(d.contains("FLOW_VIOLATION"), "{v:#}");
    assert!(server.received().is_empty(), "the secret output was sent");
    // The output file gets the step's bytes and their label: whole, and secret.
    let v = run(
        "cat .env",
        "output:\n  path: out.txt\n",
        "{type: not_empty}",
    );
    assert_eq!(v["output"]["written"], true, "{v:#}");
    let written = std::fs::read_to_string(a.dir.join("out.txt")).unwrap();
    assert!(
        written.contains(SECRET_VALUE),
        "the output file lost data: {written}"
    );
    assert!(
        server.received().is_empty(),
        "the secret output file was sent"
    );
    let shown = a.run_json("cat out.txt").1;
    assert!(!shown.to_string().contains(SECRET_VALUE), "{shown:#}");
    // The benign neighbour: a public output is judged.
    let v = run("cat public.txt", "", judge);
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(server.received().len(), 1);
}
