//! In-process cost of one exec (no protocol): fresh session vs a named session.
//!
//! `cargo run --release -p safesh-server --example exec_bench -- [N]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let cwd = std::env::current_dir().unwrap();
    let state = std::env::temp_dir().join("safesh-exec-bench");
    let mut settings = safesh_server::Settings::builtin(&cwd, &state).unwrap();
    settings.on_calling_thread = std::env::var_os("ON_CALLING_THREAD").is_some();
    let server = safesh_server::Server::new(settings);
    let p: safesh_server::exec::ExecParams =
        serde_json::from_value(serde_json::json!({"script": "echo hi"})).unwrap();
    let t = Instant::now();
    for _ in 0..n {
        server.exec(&p, &|_| {}).unwrap();
    }
    println!(
        "fresh session: {:.1} µs/exec",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let sid = server.session_start(Default::default()).unwrap()["session"]
        .as_str()
        .unwrap()
        .to_string();
    let mut p2 = p.clone();
    p2.session = Some(sid);
    let t = Instant::now();
    for _ in 0..n {
        server.exec(&p2, &|_| {}).unwrap();
    }
    println!(
        "named session: {:.1} µs/exec",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let t = Instant::now();
    for _ in 0..n {
        let s = server.settings.new_session(None, &[]);
        drop(s);
    }
    println!(
        "Session::new + drop: {:.1} µs",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let t = Instant::now();
    for _ in 0..n {
        let _ = server.settings.policy.clone();
    }
    println!(
        "policy clone: {:.1} µs",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
