//! The model-facing faces through the real binary: `safesh rpc`, `safesh mcp`
//! (stdio and HTTP). The Python MCP SDK drives `safesh mcp` when `/usr/bin/python3`
//! can import `mcp` (`tests/py/mcp_client.py`); without it those checks are
//! skipped with a note and the raw-protocol checks still run.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A project dir with its own HOME and state dir, so no user config applies.
pub(crate) struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    pub(crate) fn new() -> Home {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("proj")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        Home { _tmp: tmp, root }
    }

    pub(crate) fn proj(&self) -> PathBuf {
        self.root.join("proj")
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_safesh"));
        c.args(args)
            .current_dir(self.proj())
            .env("HOME", self.root.join("home"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            // Session temp dirs go here too, so a killed server leaves nothing behind.
            .env("TMPDIR", self.root.join("tmp"));
        c
    }
}

/// A running `safesh rpc` with line-oriented pipes.
pub(crate) struct RpcProc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
}

impl RpcProc {
    pub(crate) fn start(home: &Home) -> RpcProc {
        let mut child = home
            .command(&["rpc"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().map(BufReader::new);
        RpcProc {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        w.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.as_mut().unwrap().read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad response {line:?}: {e}"))
    }

    pub(crate) fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let r = self.recv();
        assert_eq!(r["id"], id, "{r}");
        r
    }

    /// Waits for the process to end; `None` if it is still running after `limit`.
    fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for RpcProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn rpc_session_over_pipes() {
    let home = Home::new();
    let mut p = RpcProc::start(&home);
    let sid = p.call(1, "session.start", json!({}))["result"]["session"]
        .as_str()
        .unwrap()
        .to_string();
    p.call(
        2,
        "execute",
        json!({"script": "x=20; mkdir -p sub && cd sub", "session": sid}),
    );
    let r = p.call(3, "execute", json!({"script": "echo $((x+1)) $(basename $PWD)", "session": sid, "intent": "check state"}));
    assert_eq!(r["result"]["output"], "21 sub\n");
    assert_eq!(r["result"]["intent"], "check state");
    let r = p.call(4, "execute", json!({"command": "sudo", "args": ["id"]}));
    assert_eq!(r["result"]["error"]["code"], "BLOCKED");
    assert_eq!(r["result"]["exit_code"], 126);

    p.send("{this is not json");
    let r = p.recv();
    assert_eq!(r["error"]["code"], -32700);
    assert!(r["id"].is_null());
    let r = p.call(5, "no.such.method", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    let r = p.call(6, "execute", json!({"script": ["not", "a", "string"]}));
    assert_eq!(r["error"]["code"], -32602);

    // A huge request is refused with a clear error and the connection goes on.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"execute\",\"params\":{{\"script\":\"echo {}\"}}}}",
        "x".repeat(9 * 1024 * 1024)
    );
    p.send(&huge);
    let r = p.recv();
    // Too long to read is a parse error, as on every face (wire.rs).
    assert_eq!(r["error"]["code"], -32700);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than the limit"),
        "{r}"
    );
    let r = p.call(
        8,
        "execute",
        json!({"script": "echo still here", "session": sid}),
    );
    assert_eq!(r["result"]["output"], "still here\n");

    // Batch with a notification in it.
    p.send(r#"[{"jsonrpc":"2.0","id":9,"method":"job.list"},{"jsonrpc":"2.0","method":"execute","params":{"script":"true"}}]"#);
    let r = p.recv();
    assert_eq!(r.as_array().unwrap().len(), 1);

    // End of input: the server finishes and exits 0.
    drop(p.stdin.take());
    assert_eq!(
        p.wait_exit(Duration::from_secs(10)).map(|s| s.code()),
        Some(Some(0))
    );
}

#[test]
fn rpc_client_disconnect_mid_command_ends_the_server() {
    let home = Home::new();
    let mut p = RpcProc::start(&home);
    let j = p.call(1, "job.start", json!({"script": "sleep 60"}));
    assert_eq!(j["result"]["status"], "running");
    p.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "execute", "params": {"script": "sleep 60"}})
            .to_string(),
    );
    std::thread::sleep(Duration::from_millis(300));
    // The client goes away: both pipes close.
    drop(p.stdin.take());
    drop(p.stdout.take());
    let t = Instant::now();
    let st = p.wait_exit(Duration::from_secs(10));
    assert!(
        st.is_some(),
        "safesh rpc still running 10 s after its client left"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
}

fn python_mcp() -> bool {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "note: /usr/bin/python3 cannot import `mcp` (pip install mcp): Python MCP client checks skipped"
        );
    }
    ok
}

fn py_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_client.py")
}

/// Runs the Python client; asserts it printed `ALL OK`.
fn run_python(home: &Home, args: &[&str]) {
    let out = Command::new("/usr/bin/python3")
        .arg(py_script())
        .args(args)
        .current_dir(home.proj())
        .env("HOME", home.root.join("home"))
        .env("XDG_STATE_HOME", home.root.join("state"))
        .env("XDG_CONFIG_HOME", home.root.join("config"))
        .env("TMPDIR", home.root.join("tmp"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "python MCP client failed ({}):\n{stdout}\n{}",
        out.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
}

#[test]
fn mcp_stdio_raw_protocol() {
    let home = Home::new();
    let mut child = home
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut recv = || {
        let mut l = String::new();
        stdout.read_line(&mut l).unwrap();
        serde_json::from_str::<Value>(&l).unwrap()
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let init = recv();
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("Readable roots")
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = recv();
    // exec, run, session_*, job_*, (issue 17) context_*, history, checkpoint_*,
    // pipeline, (issue 16) task_*, (issue 18) commands_*, (issue 20) code: each listed once.
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for want in [
        "exec",
        "run",
        "job_follow",
        "context_get",
        "history",
        "checkpoint_save",
        "pipeline",
        "task_run",
        "task_list",
        "commands_list",
        "commands_describe",
        "code",
        "project_plan",
        "project_run",
    ] {
        assert_eq!(
            names.iter().filter(|n| **n == want).count(),
            1,
            "{want}: {names:?}"
        );
    }
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "exec", "arguments": {"script": "echo hi"}}}),
    );
    let r = recv();
    assert_eq!(r["result"]["structuredContent"]["output"], "hi\n");
    assert_eq!(r["result"]["isError"], false);
    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "run", "arguments": {"command": "sudo", "args": ["id"]}}}),
    );
    let r = recv();
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["structuredContent"]["error"]["code"], "BLOCKED");
    drop(stdin);
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "safesh mcp did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn mcp_stdio_python_client() {
    if !python_mcp() {
        return;
    }
    let home = Home::new();
    let proj = home.proj();
    run_python(
        &home,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_safesh"),
            proj.to_str().unwrap(),
        ],
    );
}

/// One raw HTTP POST; returns (status, body).
fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    let text = String::from_utf8_lossy(&resp).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

#[test]
fn mcp_http_requires_token_and_local_origin() {
    let home = Home::new();
    let mut child = home
        .command(&["mcp", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let (mut url, mut token) = (String::new(), String::new());
    for _ in 0..10 {
        let mut l = String::new();
        if err.read_line(&mut l).unwrap() == 0 {
            break;
        }
        if let Some(u) = l.trim().strip_prefix("safesh mcp: listening on ") {
            url = u.to_string();
        }
        if let Some(t) = l.trim().strip_prefix("safesh mcp: bearer token: ") {
            token = t.to_string();
        }
        if !url.is_empty() && !token.is_empty() {
            break;
        }
    }
    assert!(
        url.starts_with("http://127.0.0.1:") && token.len() >= 32,
        "{url} {token}"
    );
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let bearer = format!("Bearer {token}");
    let (st, body) = post(&addr, &[], &init);
    assert_eq!(st, 401, "{body}");
    assert!(body.contains("Bearer"), "{body}");
    let (st, _) = post(&addr, &[("Authorization", "Bearer wrong")], &init);
    assert_eq!(st, 401);
    let (st, body) = post(
        &addr,
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        &init,
    );
    assert_eq!(st, 403, "{body}");
    assert!(body.contains("Origin"), "{body}");
    let (st, body) = post(
        &addr,
        &[
            ("Authorization", &bearer),
            ("Origin", "http://localhost:3000"),
        ],
        &init,
    );
    assert_eq!(st, 200, "{body}");
    assert!(body.contains("safesh"), "{body}");
    if python_mcp() {
        run_python(
            &home,
            &["http", &url, &token, home.proj().to_str().unwrap()],
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn mcp_client_disconnect_mid_command_ends_the_server() {
    let home = Home::new();
    let mut child = home
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
    let mut l = String::new();
    stdout.read_line(&mut l).unwrap();
    for m in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "job_start", "arguments": {"script": "sleep 60"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "exec", "arguments": {"script": "sleep 60"}}}),
    ] {
        stdin.write_all(format!("{m}\n").as_bytes()).unwrap();
    }
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    drop(stdin);
    drop(stdout);
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("safesh mcp still running 10 s after its client left");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
