//! MCP round trips per second over stdio: a Rust client (rmcp) drives a real
//! `safesh mcp` with `exec {"script": "echo hi"}`.
//!
//! ```text
//! cargo build --release -p safesh
//! cargo run --release -p safesh-server --example mcp_bench -- [SAFESH] [N] [CONCURRENCY] [SCRIPT]
//! ```
//!
//! SAFESH defaults to the `safesh` of the same build (next to `examples/`).
//! Prints the sequential rate (one call at a time) and the rate with
//! CONCURRENCY calls in flight (default 8). `BENCH_IN_SESSION=1`: every call in
//! one named session (no fresh session per call). `BENCH_CONFIG=FILE`: pass
//! `--config FILE` (e.g. a path rule allowing `/usr/bin/true`).
//! `BENCH_EXPECT=TEXT`: the output every call must return (default: `hi\n` for
//! the default script, else only "not an error, exit 0"). Every call's result is
//! checked, in the timed loops too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use std::sync::Arc;
use std::time::Instant;

fn exec_params(script: &str) -> CallToolRequestParams {
    let mut args = serde_json::Map::new();
    args.insert("script".into(), serde_json::Value::String(script.into()));
    if let Ok(s) = std::env::var("BENCH_SESSION") {
        args.insert("session".into(), serde_json::Value::String(s));
    }
    match std::env::var("BENCH_TOOL") {
        // Protocol overhead alone: a tool that runs nothing.
        Ok(t) if t == "job_list" => CallToolRequestParams::new("job_list"),
        _ => CallToolRequestParams::new("exec").with_arguments(args),
    }
}

/// Checks one call's result: not an error, exit 0, and the expected output.
fn check(r: &rmcp::model::CallToolResult, expect: Option<&str>) {
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let v = r.structured_content.as_ref().expect("structured content");
    assert_eq!(v["exit_code"], 0, "{v}");
    if let Some(e) = expect {
        assert_eq!(v["output"], e, "{v}");
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let bin = argv
        .get(1)
        .cloned()
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            let dir = exe.parent()?.parent()?;
            Some(dir.join("safesh").to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "safesh".into());
    let n: usize = argv.get(2).and_then(|s| s.parse().ok()).unwrap_or(5000);
    let conc: usize = argv.get(3).and_then(|s| s.parse().ok()).unwrap_or(8);
    let script = argv.get(4).cloned().unwrap_or_else(|| "echo hi".into());
    let expect: Option<String> = std::env::var("BENCH_EXPECT")
        .ok()
        .or_else(|| (script == "echo hi").then(|| "hi\n".to_string()));
    let expect = Arc::new(expect);
    let mut cmd = tokio::process::Command::new(&bin);
    if let Ok(c) = std::env::var("BENCH_CONFIG") {
        cmd.arg("--config").arg(c);
    }
    cmd.arg("mcp");
    let client = Arc::new(
        ().serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap(),
    );

    if std::env::var_os("BENCH_IN_SESSION").is_some() {
        let r = client
            .call_tool(CallToolRequestParams::new("session_start"))
            .await
            .unwrap();
        let sid = r.structured_content.unwrap()["session"]
            .as_str()
            .unwrap()
            .to_string();
        // SAFETY: single-threaded at this point of start-up; read by exec_params.
        unsafe { std::env::set_var("BENCH_SESSION", sid) };
        println!("(all calls in one session)");
    }
    // Warm up.
    for _ in 0..100 {
        let r = client.call_tool(exec_params(&script)).await.unwrap();
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    let checked = std::env::var("BENCH_TOOL").is_err();
    let t = Instant::now();
    for _ in 0..n {
        let r = client.call_tool(exec_params(&script)).await.unwrap();
        if checked {
            check(&r, expect.as_deref());
        }
    }
    let seq = n as f64 / t.elapsed().as_secs_f64();
    println!(
        "sequential: {n} round trips of exec {script:?} in {:.2?}: {seq:.0}/s",
        t.elapsed()
    );

    let t = Instant::now();
    let per = n / conc.max(1);
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let c = client.clone();
        let s = script.clone();
        let expect = expect.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..per {
                let r = c.call_tool(exec_params(&s)).await.unwrap();
                if checked {
                    check(&r, expect.as_deref());
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let total = per * conc;
    let par = total as f64 / t.elapsed().as_secs_f64();
    println!(
        "{conc} in flight: {total} round trips in {:.2?}: {par:.0}/s",
        t.elapsed()
    );
}
