//! The servers' own state and protocol through the shipped binary (issue 15
//! items 9, 10, 16): a reply for every bad message on every face, jobs and
//! sessions that belong to whoever made them, bounded transport sessions and
//! spill files, and temp dirs of killed servers swept at start.

use crate::faces::Home;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

/// The shared request size limit (crates/server/src/wire.rs).
const LIMIT: usize = 8 * 1024 * 1024;

/// Longest wait for a reply: a server that never answers fails the test
/// instead of hanging it (not a timing assertion: replies take milliseconds).
const NO_REPLY: Duration = Duration::from_secs(120);

/// A server face on pipes, driven with raw bytes; replies are read on a thread.
struct Pipes {
    child: Child,
    /// `None` once closed ([`Pipes::end_input`]).
    stdin: Option<ChildStdin>,
    replies: std::sync::mpsc::Receiver<String>,
}

impl Pipes {
    fn start(home: &Home, args: &[&str]) -> Pipes {
        let mut child = home
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            loop {
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Pipes {
            child,
            stdin: Some(stdin),
            replies,
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input is open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's input (its end) and waits for it to exit.
    fn end_input(&mut self) -> std::process::ExitStatus {
        self.stdin = None;
        self.child.wait().unwrap()
    }

    fn recv(&mut self) -> Value {
        let line = self
            .replies
            .recv_timeout(NO_REPLY)
            .unwrap_or_else(|e| panic!("no reply from the server ({e})"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad reply {line:?}: {e}"))
    }

    /// Sends a bad line; its reply must be a JSON-RPC error with this code and id.
    fn bad(&mut self, bytes: &[u8], code: i64, id: Value) {
        self.raw(bytes);
        let r = self.recv();
        assert_eq!(r["error"]["code"], code, "{r}");
        assert_eq!(r["id"], id, "{r}");
        assert!(r.get("result").is_none(), "{r}");
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.raw(line.to_string().as_bytes());
        let r = self.recv();
        assert_eq!(r["id"], id, "{r}");
        r
    }

    fn mcp_init(&mut self) {
        let r = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert!(r["result"]["serverInfo"].is_object(), "{r}");
        self.raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn tool(&mut self, id: u64, name: &str, args: Value) -> Value {
        let r = self.request(id, "tools/call", json!({"name": name, "arguments": args}));
        r["result"].clone()
    }
}

impl Drop for Pipes {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bad lines every stdio face must answer with -32700 (id null).
fn unparsable() -> Vec<Vec<u8>> {
    let mut long = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"s\":\"".to_vec();
    long.extend(std::iter::repeat_n(b'x', LIMIT + 10));
    long.extend_from_slice(b"\"}}");
    vec![
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_vec(),
        b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\0\"method\":\"x\"}".to_vec(),
        long,
    ]
}

#[test]
fn rpc_bad_bytes_each_get_an_error_reply_and_the_next_request_is_served() {
    let home = Home::new();
    let mut p = Pipes::start(&home, &["rpc"]);
    // Control: a good request is served.
    let r = p.request(1, "execute", json!({"script": "echo ok"}));
    assert_eq!(r["result"]["output"], "ok\n", "{r}");
    for (i, line) in unparsable().into_iter().enumerate() {
        p.bad(&line, -32700, Value::Null);
        let id = 10 + i as u64;
        let r = p.request(id, "execute", json!({"script": format!("echo after-{i}")}));
        assert_eq!(r["result"]["output"], format!("after-{i}\n"), "{r}");
    }
    // A method that is not a string: -32600 with the id echoed.
    p.bad(
        br#"{"jsonrpc":"2.0","id":41,"method":5}"#,
        -32600,
        json!(41),
    );
    // Params of the wrong type: -32602 with the id.
    p.bad(
        br#"{"jsonrpc":"2.0","id":42,"method":"execute","params":{"script":"echo","args":"x"}}"#,
        -32602,
        json!(42),
    );
    let r = p.request(43, "execute", json!({"script": "echo last"}));
    assert_eq!(r["result"]["output"], "last\n", "{r}");
}

#[test]
fn mcp_stdio_bad_bytes_each_get_an_error_reply_and_the_next_request_is_served() {
    let home = Home::new();
    let mut p = Pipes::start(&home, &["mcp"]);
    p.mcp_init();
    // Control: a good tool call is served.
    let r = p.tool(1, "exec", json!({"script": "echo ok"}));
    assert_eq!(r["structuredContent"]["output"], "ok\n", "{r}");
    for (i, line) in unparsable().into_iter().enumerate() {
        p.bad(&line, -32700, Value::Null);
        let id = 10 + i as u64;
        let r = p.tool(id, "exec", json!({"script": format!("echo after-{i}")}));
        assert_eq!(
            r["structuredContent"]["output"],
            format!("after-{i}\n"),
            "{r}"
        );
    }
    p.bad(
        br#"{"jsonrpc":"2.0","id":41,"method":5}"#,
        -32600,
        json!(41),
    );
    p.bad(
        br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"exec","arguments":"echo hi"}}"#,
        -32602,
        json!("x"),
    );
    let r = p.tool(43, "exec", json!({"script": "echo last"}));
    assert_eq!(r["structuredContent"]["output"], "last\n", "{r}");
}

/// `safesh mcp --http 127.0.0.1:0` with its address and token.
struct Http {
    child: Child,
    addr: String,
    bearer: String,
}

impl Http {
    fn start(home: &Home, extra: &[&str]) -> Http {
        let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Http::start_args(home, &args)
    }

    /// The server with exactly these arguments.
    fn start_args(home: &Home, args: &[&str]) -> Http {
        let mut child = home
            .command(args)
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
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        assert!(!addr.is_empty() && !token.is_empty());
        Http {
            child,
            addr,
            bearer: format!("Bearer {token}"),
        }
    }

    /// One raw request: (status, headers, body).
    fn send(&self, method: &str, session: Option<&str>, body: &[u8]) -> (u16, String, String) {
        let mut s = std::net::TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr,
            self.bearer,
            body.len()
        );
        if let Some(id) = session {
            req.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp);
        let text = String::from_utf8_lossy(&resp).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        (status, head.to_string(), body.to_string())
    }

    /// A new MCP client: its `Mcp-Session-Id`, or the refusal (status, body).
    fn client(&self) -> Result<String, (u16, String)> {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (st, head, body) = self.send("POST", None, init.to_string().as_bytes());
        if st != 200 {
            return Err((st, body));
        }
        let id = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no session id in {head}"));
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (st, _, body) = self.send("POST", Some(&id), note.to_string().as_bytes());
        assert_eq!(st, 202, "{body}");
        Ok(id)
    }

    /// A tool call of client `session`: its result.
    fn tool(&self, session: &str, name: &str, args: Value) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": args}});
        let (st, _, body) = self.send("POST", Some(session), call.to_string().as_bytes());
        assert_eq!(st, 200, "{body}");
        // An SSE stream: the reply is the `data:` line that parses as our reply.
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v["id"] == 2)
            .map(|v| v["result"].clone())
            .unwrap_or_else(|| panic!("no reply in {body}"))
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_http_malformed_json_gets_400_with_a_parse_error() {
    let home = Home::new();
    let h = Http::start(&home, &[]);
    let a = h.client().unwrap();
    let (st, _, body) = h.send("POST", Some(&a), b"{\"jsonrpc\": \"2.0\", \"id\": 3, ");
    assert_eq!(st, 400, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    let (st, _, body) = h.send(
        "POST",
        Some(&a),
        br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":[1]}}"#,
    );
    assert_eq!(st, 400, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["error"]["code"].clone(), v["id"].clone()),
        (json!(-32602), json!(4))
    );
    let mut big = b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"exec\",\"arguments\":{\"script\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'x', LIMIT + 10));
    big.extend_from_slice(b"\"}}}");
    let (st, _, body) = h.send("POST", Some(&a), &big);
    assert_eq!(st, 413, "{body}");
    // Control: the same client goes on.
    let r = h.tool(&a, "exec", json!({"script": "echo fine"}));
    assert_eq!(r["structuredContent"]["output"], "fine\n", "{r}");
}

#[test]
fn mcp_http_initialize_flood_evicts_the_least_recently_used_client_and_tells_it() {
    let home = Home::new();
    // Shell sessions have a limit of their own: one here, three clients.
    let h = Http::start(
        &home,
        &["--max-transport-sessions", "3", "--max-sessions", "1"],
    );
    let ids: Vec<String> = (0..3).map(|_| h.client().unwrap()).collect();
    // The first client is the least recently used once the others have worked.
    for id in &ids[1..] {
        let r = h.tool(id, "exec", json!({"script": "echo in"}));
        assert_eq!(r["structuredContent"]["output"], "in\n", "{r}");
    }
    // A flood of new clients: each is served, the oldest idle ones make room.
    let flood: Vec<String> = (0..5).map(|_| h.client().unwrap()).collect();
    let newest = flood.last().unwrap();
    let r = h.tool(newest, "exec", json!({"script": "echo new"}));
    assert_eq!(r["structuredContent"]["output"], "new\n", "{r}");
    // The evicted client is told why, not left guessing.
    let (st, _, body) = h.send(
        "POST",
        Some(&ids[0]),
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"exec","arguments":{"script":"echo x"}}}"#,
    );
    assert_eq!(st, 404, "{body}");
    assert!(body.contains("closed to make room"), "{body}");
    // Control: a client within the limit that keeps working is not evicted.
    let r = h.tool(&flood[4], "exec", json!({"script": "echo still"}));
    assert_eq!(r["structuredContent"]["output"], "still\n", "{r}");
    let r = h.tool(&flood[3], "exec", json!({"script": "echo also"}));
    assert_eq!(r["structuredContent"]["output"], "also\n", "{r}");
}

#[test]
fn mcp_http_client_b_cannot_use_client_a_sessions_or_jobs() {
    let home = Home::new();
    let h = Http::start(&home, &[]);
    let a = h.client().unwrap();
    let b = h.client().unwrap();
    let sid = h.tool(&a, "session_start", json!({}))["structuredContent"]["session"]
        .as_str()
        .unwrap()
        .to_string();
    let r = h.tool(&a, "exec", json!({"script": "secret_a=41", "session": sid}));
    assert_eq!(r["isError"], false, "{r}");
    let job = h.tool(
        &a,
        "job_start",
        json!({"script": "echo a-private; sleep 30"}),
    );
    let jid = job["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();

    // B names A's session: unknown to it, nothing ran there.
    let r = h.tool(
        &b,
        "exec",
        json!({"script": "echo $secret_a; secret_a=0", "session": sid}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["error"]["code"], "UNKNOWN_SESSION",
        "{r}"
    );
    let r = h.tool(&b, "session_end", json!({"session": sid}));
    assert_eq!(
        r["structuredContent"]["error"]["code"], "UNKNOWN_SESSION",
        "{r}"
    );
    // B lists no jobs and cannot read or kill A's.
    let r = h.tool(&b, "job_list", json!({}));
    assert_eq!(r["structuredContent"]["jobs"], json!([]), "{r}");
    for (tool, args) in [
        ("job_output", json!({"job_id": jid})),
        ("job_kill", json!({"job_id": jid, "signal": "KILL"})),
        ("job_follow", json!({"job_id": jid, "timeout_ms": 100})),
    ] {
        let r = h.tool(&b, tool, args);
        assert_eq!(
            r["structuredContent"]["error"]["code"], "UNKNOWN_JOB",
            "{tool}: {r}"
        );
        assert!(!r.to_string().contains("a-private"), "{tool}: {r}");
    }

    // Control: A still has both, untouched.
    let r = h.tool(
        &a,
        "exec",
        json!({"script": "echo $((secret_a+1))", "session": sid}),
    );
    assert_eq!(r["structuredContent"]["output"], "42\n", "{r}");
    let r = h.tool(&a, "job_list", json!({}));
    let jobs = r["structuredContent"]["jobs"].as_array().unwrap().clone();
    assert_eq!(jobs.len(), 1, "{r}");
    assert_eq!(
        jobs[0]["status"], "running",
        "B's job_kill did nothing: {r}"
    );
    let r = h.tool(&a, "job_kill", json!({"job_id": jid}));
    assert_eq!(r["structuredContent"]["status"], "killed", "{r}");
}

#[test]
fn rpc_session_b_cannot_list_read_or_kill_session_a_jobs() {
    let home = Home::new();
    let mut p = Pipes::start(&home, &["rpc"]);
    let start = |p: &mut Pipes, id| {
        p.request(id, "session.start", json!({}))["result"]["session"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let sa = start(&mut p, 1);
    let sb = start(&mut p, 2);
    let r = p.request(
        3,
        "job.start",
        json!({"script": "echo a-private; sleep 30", "session": sa}),
    );
    let jid = r["result"]["job_id"].as_str().unwrap().to_string();
    // A `cmd &` of A's script is A's too.
    let r = p.request(4, "execute", json!({"script": "sleep 30 &", "session": sa}));
    assert_eq!(r["result"]["exit_code"], 0, "{r}");

    let r = p.request(5, "job.list", json!({"session": sb}));
    assert_eq!(r["result"]["jobs"], json!([]), "{r}");
    let r = p.request(6, "job.list", json!({}));
    assert_eq!(
        r["result"]["jobs"],
        json!([]),
        "no session: the connection's own: {r}"
    );
    let mut n = 10;
    for scope in [json!({"session": sb}), json!({})] {
        for (method, extra) in [
            ("job.output", json!({})),
            ("job.kill", json!({"signal": "KILL"})),
            ("job.follow", json!({"timeout_ms": 100})),
        ] {
            let mut params = json!({"job_id": jid});
            for (k, v) in scope
                .as_object()
                .unwrap()
                .iter()
                .chain(extra.as_object().unwrap())
            {
                params[k] = v.clone();
            }
            n += 1;
            let r = p.request(n, method, params);
            assert_eq!(r["error"]["data"]["code"], "UNKNOWN_JOB", "{method}: {r}");
            assert!(!r.to_string().contains("a-private"), "{method}: {r}");
        }
    }

    // Control: A lists both of its jobs, reads its output, and they still run.
    let r = p.request(30, "job.list", json!({"session": sa}));
    let jobs = r["result"]["jobs"].as_array().unwrap().clone();
    assert_eq!(jobs.len(), 2, "{r}");
    assert!(jobs.iter().all(|j| j["status"] == "running"), "{r}");
    let r = p.request(31, "job.output", json!({"job_id": jid, "session": sa}));
    assert!(r["result"]["data"].as_str().is_some(), "{r}");
    let r = p.request(32, "job.kill", json!({"job_id": jid, "session": sa}));
    assert_eq!(r["result"]["status"], "killed", "{r}");
}

#[test]
fn rpc_huge_output_spill_file_is_capped_and_says_so_with_true_totals() {
    let home = Home::new();
    let config = home.proj().join("limits.toml");
    std::fs::write(&config, "[limits]\nfile_size_mb = 1\n").unwrap();
    let mut p = Pipes::start(&home, &["--config", config.to_str().unwrap(), "rpc"]);
    // `seq 1 300000` is 1,988,895 bytes: past the 1 MiB a spill file may keep.
    let r = p.request(1, "execute", json!({"script": "seq 1 300000"}));
    let v = &r["result"];
    assert_eq!(v["total_bytes"], 1_988_895, "{v}");
    assert_eq!(v["total_lines"], 300_000, "{v}");
    assert_eq!(v["truncated"], true);
    let log = v["log_path"].as_str().unwrap();
    assert_eq!(
        std::fs::metadata(log).unwrap().len(),
        1 << 20,
        "capped spill file"
    );
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("keeps only the first 1048576 bytes"),
        "{warnings}"
    );
    assert!(
        v["output"]
            .as_str()
            .unwrap()
            .contains("only the first 1048576 bytes were saved"),
        "{v}"
    );
    // Control: an output under the limit is spilled whole, with no such warning.
    let r = p.request(2, "execute", json!({"script": "seq 1 20000"}));
    let v = &r["result"];
    let log = v["log_path"].as_str().unwrap();
    assert_eq!(std::fs::metadata(log).unwrap().len(), 108_894);
    assert!(!v["warnings"].to_string().contains("keeps only"), "{v}");
}

#[test]
fn spill_files_of_two_sessions_live_in_separate_owner_dirs() {
    let home = Home::new();
    let mut p = Pipes::start(&home, &["rpc"]);
    let mut logs = Vec::new();
    for i in 0..2u64 {
        let sid = p.request(i, "session.start", json!({}))["result"]["session"]
            .as_str()
            .unwrap()
            .to_string();
        let r = p.request(
            10 + i,
            "execute",
            json!({"script": "seq 1 20000", "session": sid}),
        );
        logs.push(std::path::PathBuf::from(
            r["result"]["log_path"].as_str().unwrap(),
        ));
    }
    assert_ne!(logs[0].parent(), logs[1].parent(), "{logs:?}");
    assert_eq!(
        logs[0].parent().unwrap().parent(),
        logs[1].parent().unwrap().parent()
    );
}

/// A pid that no process has now (a child that has exited and been reaped).
fn dead_pid() -> u32 {
    let mut c = Command::new("/bin/true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_server_start_sweeps_temp_dirs_of_dead_servers_only() {
    let home = Home::new();
    let tmp = home.proj().parent().unwrap().join("tmp");
    let dead = tmp.join(format!("safesh-{}-7-1f", dead_pid()));
    std::fs::create_dir_all(dead.join("sub/deeper")).unwrap();
    std::fs::write(dead.join("sub/deeper/big"), vec![0u8; 4096]).unwrap();
    // A program inside may have left a directory it cannot write.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dead.join("sub"), std::fs::Permissions::from_mode(0o500)).unwrap();
    }
    // Controls: a live owner's dir, another name, and a symlink named like ours.
    let live = tmp.join(format!("safesh-{}-7-1f", std::process::id()));
    std::fs::create_dir_all(&live).unwrap();
    let other = tmp.join("safesh-notes");
    std::fs::create_dir_all(&other).unwrap();
    let target = home.proj().join("kept");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("file"), "x").unwrap();
    let link = tmp.join(format!("safesh-{}-8-2f", dead_pid()));
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let mut p = Pipes::start(&home, &["rpc"]);
    let r = p.request(1, "execute", json!({"script": "echo up"}));
    assert_eq!(r["result"]["output"], "up\n", "{r}");
    assert!(!dead.exists(), "the dead server's temp dir is gone");
    assert!(live.is_dir(), "a live owner's dir stays");
    assert!(other.is_dir(), "another name stays");
    assert!(target.join("file").exists(), "a symlink is not followed");
}

/// A server's sessions (in its workers and in itself) make their temp dirs
/// inside a directory of their process's own, not side by side in `$TMPDIR`
/// (where 100 workers' `mkdir`/`rmdir` spun on one directory lock); that
/// directory is named like a session dir, so a start after a `kill -9` sweeps
/// it, and it is gone when the server ends normally.
#[test]
fn a_servers_sessions_make_their_temp_dirs_in_a_directory_of_its_own() {
    let home = Home::new();
    let tmp = home.proj().parent().unwrap().join("tmp");
    let ours = |tmp: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("safesh-"))
            .collect()
    };
    let mut p = Pipes::start(&home, &["rpc"]);
    // A sessionless request (a worker process) and a session in the server.
    let r = p.request(1, "execute", json!({"script": "echo $TMPDIR"}));
    let worker_dir = std::path::PathBuf::from(r["result"]["output"].as_str().unwrap().trim());
    let id = p.request(2, "session.start", json!({}))["result"]["session"]
        .as_str()
        .unwrap()
        .to_string();
    let r = p.request(
        3,
        "execute",
        json!({"script": "echo $TMPDIR", "session": id}),
    );
    let session_dir = std::path::PathBuf::from(r["result"]["output"].as_str().unwrap().trim());
    for dir in [&worker_dir, &session_dir] {
        assert!(dir.is_dir(), "{}", dir.display());
        let parent = dir.parent().unwrap();
        assert_eq!(parent.parent().unwrap(), tmp, "{}", dir.display());
        let name = parent.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("safesh-"), "{name}");
    }
    assert_ne!(
        worker_dir.parent(),
        session_dir.parent(),
        "one directory per process"
    );
    // The session's dir is still its own: writable there, refused beside it.
    let r = p.request(
        4,
        "execute",
        json!({"script": "echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"; echo y > \"$TMPDIR/../g\"", "session": id}),
    );
    assert!(
        r["result"]["output"].as_str().unwrap().starts_with("x\n"),
        "{r}"
    );
    assert_eq!(r["result"]["error"]["code"], "PATH_VIOLATION", "{r}");
    let status = p.end_input();
    assert!(status.success(), "{status:?}");
    // The workers end with the server's input; give them a moment to clean up.
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        ours(&tmp).is_empty()
    });
    assert!(gone, "left behind: {:?}", ours(&tmp));
}

#[test]
fn a_spill_path_from_another_session_is_refused_even_where_the_state_is_readable() {
    let home = Home::new();
    let root = home.proj().parent().unwrap().to_path_buf();
    let config = root.join("readable-state.toml");
    // The human made the state dir readable (a read root above it).
    std::fs::write(
        &config,
        format!(
            "[sandbox]\nread = [\".\", \"{}\"]\nwrite = [\".\"]\n\n[commands.\"/usr/bin/python3\"]\nallow = true\n\n[commands.python3]\nallow = true\n",
            root.join("state").display()
        ),
    )
    .unwrap();
    std::fs::write(home.proj().join("mine.txt"), "project-data\n").unwrap();
    let mut p = Pipes::start(&home, &["--config", config.to_str().unwrap(), "rpc"]);
    let session = |p: &mut Pipes, id| {
        p.request(id, "session.start", json!({}))["result"]["session"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (sa, sb) = (session(&mut p, 1), session(&mut p, 2));
    let r = p.request(
        3,
        "execute",
        json!({"script": "seq 1 20000", "session": sa}),
    );
    let log = r["result"]["log_path"].as_str().unwrap().to_string();
    let spill = std::path::Path::new(&log)
        .parent()
        .unwrap()
        .parent()
        .unwrap();

    // Control: A pages through its own output in-process.
    let r = p.request(
        4,
        "execute",
        json!({"script": format!("tail -n 1 {log}"), "session": sa}),
    );
    assert_eq!(r["result"]["output"], "20000\n", "{r}");

    // B (and a call without a session) holding A's path: refused, nothing shown.
    let mut n = 10;
    for scope in [Some(sb.as_str()), None] {
        for script in [
            format!("cat {log}"),
            format!("tail -n 1 < {log}"),
            format!("ls {}", spill.display()),
        ] {
            n += 1;
            let mut params = json!({"script": script});
            if let Some(s) = scope {
                params["session"] = json!(s);
            }
            let r = p.request(n, "execute", params);
            assert_eq!(
                r["result"]["error"]["code"], "PATH_VIOLATION",
                "{script}: {r}"
            );
            assert!(
                !r["result"]["output"].as_str().unwrap().contains("20000"),
                "{r}"
            );
        }
    }
    // A program given the path sees no spill file at all (not even its own
    // session's: programs never read safesh's state).
    // (Named in its arguments, the path is refused before anything runs; here
    // the program reads it from a file.)
    std::fs::write(home.proj().join("where.txt"), &log).unwrap();
    let py = "python3 -c 'try:\n print(open(open(\"where.txt\").read()).read()[-6:])\nexcept OSError as e:\n print(\"no\", e.errno)'; python3 -c 'print(open(\"mine.txt\").read())'";
    for (i, scope) in [&sb, &sa].into_iter().enumerate() {
        let r = p.request(
            40 + i as u64,
            "execute",
            json!({"script": py, "session": scope}),
        );
        let out = r["result"]["output"].as_str().unwrap_or("").to_string();
        assert!(!out.contains("20000"), "{r}");
        assert!(
            out.contains("no 2"),
            "the spill file is not there for it: {r}"
        );
        // Control: the same program reads a project file.
        assert!(out.contains("project-data"), "{r}");
    }
}

/// True while `pid` runs (a zombie has ended).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Polls `f` until it gives a value (bounded: a broken server fails the test).
fn poll<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..600 {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn mcp_http_a_closed_client_takes_its_sessions_and_jobs_with_it() {
    let home = Home::new();
    let config = home.proj().parent().unwrap().join("sleep.toml");
    std::fs::write(&config, "[commands.\"/usr/bin/sleep\"]\nallow = true\n").unwrap();
    let mut args = vec!["--config", config.to_str().unwrap()];
    args.extend(["mcp", "--http", "127.0.0.1:0", "--max-sessions", "2"]);
    let h = Http::start_args(&home, &args);
    let a = h.client().unwrap();
    let b = h.client().unwrap();
    let pid_of = |client: &str| {
        let j = h.tool(
            client,
            "job_start",
            json!({"command": "/usr/bin/sleep", "args": ["300"], "force": true}),
        );
        let jid = j["structuredContent"]["job_id"]
            .as_str()
            .unwrap()
            .to_string();
        let pid = poll(|| {
            h.tool(client, "job_output", json!({"job_id": jid}))["structuredContent"]["pid"]
                .as_u64()
        })
        .expect("the job's program pid");
        (jid, pid)
    };
    let (_, pa) = pid_of(&a);
    let (jb, pb) = pid_of(&b);
    h.tool(&a, "session_start", json!({}));
    // A leaves: its program ends; B's runs on (control).
    let (st, _, body) = h.send("DELETE", Some(&a), b"");
    assert!(st == 200 || st == 202 || st == 204, "{st} {body}");
    assert!(
        poll(|| (!alive(pa)).then_some(())).is_some(),
        "A's job was killed"
    );
    assert!(alive(pb), "B's job runs on");
    // A's shell session is gone too: a new client can start one under the limit of 2.
    let c = h.client().unwrap();
    let r = h.tool(&c, "session_start", json!({}));
    assert!(r["structuredContent"]["session"].is_string(), "{r}");
    let r = h.tool(&b, "session_start", json!({}));
    assert!(r["structuredContent"]["session"].is_string(), "{r}");
    let r = h.tool(&b, "job_kill", json!({"job_id": jb}));
    assert_eq!(r["structuredContent"]["status"], "killed", "{r}");
}

/// The first output line of a tool call's result (the worker's pid here).
fn first_line(r: &Value) -> String {
    r["structuredContent"]["output"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Shows what a sessionless request inherited: pid, variables, function,
/// alias, cwd, `set -u`, temp files.
const LOOK: &str = "echo $$; echo \"X=${X-unset} E=${E-unset} U=$undefined_var\"; \
     type f >/dev/null 2>&1 && echo f=defined || echo f=none; \
     alias al >/dev/null 2>&1 && echo al=defined || echo al=none; \
     pwd; ls \"$TMPDIR\" | wc -l";

#[test]
fn mcp_http_sessionless_execs_reuse_their_owners_worker_and_start_fresh_each_time() {
    let home = Home::new();
    let proj = home.proj();
    let h = Http::start(&home, &[]);
    let a = h.client().unwrap();
    let b = h.client().unwrap();
    // A leaves everything a script can leave in its session and process.
    let r = h.tool(
        &a,
        "exec",
        json!({"script": "echo $$; X=a1; export E=a1; f() { echo fa; }; alias al='echo A'; \
                          mkdir -p d; cd d; echo left > \"$TMPDIR/left\"; set -u; \
                          trap 'echo trapped-a' EXIT; echo done"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let pid_a = first_line(&r);
    assert!(!pid_a.is_empty(), "{r}");
    let fresh = |r: &Value, who: &str| {
        let out = r["structuredContent"]["output"]
            .as_str()
            .unwrap_or_default();
        let want = format!(
            "X=unset E=unset U=\nf=none\nal=none\n{}\n0\n",
            proj.display()
        );
        assert!(out.ends_with(&want), "{who} inherited state: {out:?}");
        assert!(!out.contains("trapped-a"), "{who} ran A's trap: {out:?}");
    };
    // A's next request: the same worker process (reused), a fresh session.
    let r = h.tool(&a, "exec", json!({"script": LOOK}));
    assert_eq!(first_line(&r), pid_a, "A's worker was not reused: {r}");
    fresh(&r, "A's next request");
    // B never gets A's worker, and starts as fresh.
    let r = h.tool(&b, "exec", json!({"script": LOOK}));
    let pid_b = first_line(&r);
    assert_ne!(pid_b, pid_a, "B was served by A's worker: {r}");
    fresh(&r, "B");
    // Control: what is the project's (a directory A made) is there for both.
    assert!(proj.join("d").is_dir());
    let r = h.tool(&b, "exec", json!({"script": "ls -d d"}));
    assert_eq!(r["structuredContent"]["output"], "d\n", "{r}");
    // Each keeps its own worker.
    let r = h.tool(&a, "exec", json!({"script": "echo $$"}));
    assert_eq!(first_line(&r), pid_a, "{r}");
    let r = h.tool(&b, "exec", json!({"script": "echo $$"}));
    assert_eq!(first_line(&r), pid_b, "{r}");
}

#[test]
fn mcp_http_reused_worker_that_dies_mid_request_costs_that_request_and_the_next_is_served() {
    let home = Home::new();
    // A string limit above the width lets the allocation of ~1 TB be tried:
    // refused at once by the worker's RLIMIT_AS (never aimed at the machine).
    let config = home.proj().with_file_name("limits.toml");
    std::fs::write(
        &config,
        "[limits]\nmemory_mb = 256\nstring_bytes = 2000000000000\n",
    )
    .unwrap();
    let config = config.to_string_lossy().into_owned();
    let h = Http::start_args(
        &home,
        &["--config", &config, "mcp", "--http", "127.0.0.1:0"],
    );
    let a = h.client().unwrap();
    let b = h.client().unwrap();
    let pid_a = first_line(&h.tool(&a, "exec", json!({"script": "echo $$"})));
    let pid_b = first_line(&h.tool(&b, "exec", json!({"script": "echo $$"})));
    let r = h.tool(
        &a,
        "exec",
        json!({"script": "printf '%999999999999d\\n' 1 | wc -c"}),
    );
    let v = &r["structuredContent"];
    assert_eq!(v["error"]["code"], "EXECUTION_ERROR", "{r}");
    assert_eq!(v["error"]["details"]["rule"], "worker", "{r}");
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("worker process was killed by signal 6"),
        "{msg}"
    );
    // The next request of A gets a new worker; B keeps its own.
    let r = h.tool(&a, "exec", json!({"script": "echo $$; echo next"}));
    assert!(
        r["structuredContent"]["output"]
            .as_str()
            .unwrap_or_default()
            .ends_with("next\n"),
        "{r}"
    );
    assert_ne!(first_line(&r), pid_a, "{r}");
    let r = h.tool(&b, "exec", json!({"script": "echo $$"}));
    assert_eq!(first_line(&r), pid_b, "{r}");
    // Control of the same shape: a width within reach.
    let r = h.tool(&a, "exec", json!({"script": "printf '%5d\\n' 1 | wc -c"}));
    assert_eq!(r["structuredContent"]["output"], "6\n", "{r}");
}

/// Waits (bounded) until `path` exists.
fn wait_for(path: &std::path::Path) -> bool {
    for _ in 0..1200 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A script that says it started, then waits (bounded) for `go` to exist.
fn held(name: &str) -> Value {
    json!({"script": format!(
        "touch {name}.started; n=0; while [ ! -e go ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; echo {name}-done"
    )})
}

#[test]
fn mcp_http_eviction_skips_clients_with_a_request_running_and_refuses_when_all_are_busy() {
    let home = Home::new();
    let proj = home.proj();
    let h = Http::start(&home, &["--max-transport-sessions", "2"]);
    let a = h.client().unwrap();
    let b = h.client().unwrap();
    std::thread::scope(|s| {
        // A starts a long request: A is then the least recently used client
        // once B has worked, but it is busy.
        let ra = s.spawn(|| h.tool(&a, "exec", held("a")));
        assert!(
            wait_for(&proj.join("a.started")),
            "A's request never started"
        );
        let r = h.tool(&b, "exec", json!({"script": "echo b"}));
        assert_eq!(r["structuredContent"]["output"], "b\n", "{r}");
        // A new client: B (idle) makes room, not A (busy).
        let c = h.client().expect("a new client when one is idle");
        let (st, _, body) = h.send(
            "POST",
            Some(&b),
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"exec","arguments":{"script":"echo x"}}}"#,
        );
        assert_eq!(st, 404, "B was not the one evicted: {body}");
        assert!(body.contains("closed to make room"), "{body}");
        // Now A and C are both busy: a new client is refused, nothing ends.
        let h = &h;
        let rc = s.spawn(move || h.tool(&c, "exec", held("c")));
        assert!(
            wait_for(&proj.join("c.started")),
            "C's request never started"
        );
        let (st, body) = h
            .client()
            .expect_err("a client past the limit while all are busy");
        assert_eq!(st, 503, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], -32000, "{v}");
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("every one has a request or a job running"),
            "{msg}"
        );
        // The running requests finish and answer.
        std::fs::write(proj.join("go"), "").unwrap();
        let r = ra.join().unwrap();
        assert_eq!(r["structuredContent"]["output"], "a-done\n", "{r}");
        let r = rc.join().unwrap();
        assert_eq!(r["structuredContent"]["output"], "c-done\n", "{r}");
        // Control: once idle, the least recently used makes room again.
        let d = h.client().expect("a client when the others are idle");
        let r = h.tool(&d, "exec", json!({"script": "echo d"}));
        assert_eq!(r["structuredContent"]["output"], "d\n", "{r}");
    });
}
