//! Approvals that reach a human, through the shipped binary (issue 15 items 14
//! and 15): MCP elicitation with the official Python SDK, approvals that outlive
//! the process that asked for them (CLI without a terminal, JSON-RPC `execute`),
//! and `[limits] approval_wait_ms`.

use crate::flow_support::{APPROVAL, Arena};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// `rm` of names downloaded from the network needs a human's approval.
const RM_DOWNLOADED: &str = "rm $(curl -s {URL}/list.txt) && echo removed";

fn the_files_are_there(a: &Arena) -> bool {
    a.exists("keep1.txt") && a.exists("keep2.txt")
}

fn restore_files(a: &Arena) {
    a.write("keep1.txt", "one\n");
    a.write("keep2.txt", "two\n");
}

/// The approval id of an `APPROVAL_REQUIRED` result (CLI `--json`, MCP, JSON-RPC).
fn approval_id(v: &Value) -> String {
    assert_eq!(v["error"]["code"], APPROVAL, "{v}");
    let id = v["error"]["details"]["approval_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!id.is_empty(), "no approval id: {v}");
    id
}

/// `safesh approve|deny ID` as the human, from the project dir.
fn human(a: &Arena, verb: &str, id: &str) -> crate::policy_support::Run {
    a.run_args(&[verb, id])
}

// ==== MCP elicitation (the official Python SDK) =====================================

fn python_mcp() -> bool {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "\n!!!!!!!! SKIPPED: /usr/bin/python3 cannot import `mcp` (pip install mcp; .ci/run installs it): \
             the MCP elicitation tests did NOT run !!!!!!!!\n"
        );
    }
    ok
}

/// Runs `safesh mcp` under the Python SDK's client; `mode` is accept, decline
/// or none (no elicitation capability). Returns `{asked, result, is_error}`.
fn mcp_exec(a: &Arena, mode: &str, script: &str) -> Value {
    let py = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_elicit.py");
    let out = Command::new("/usr/bin/python3")
        .arg(py)
        .arg(env!("CARGO_BIN_EXE_safesh"))
        .arg(&a.config)
        .arg(mode)
        .arg(a.script(script))
        .current_dir(&a.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", &a.home)
        .env("XDG_STATE_HOME", &a.state)
        .output()
        .expect("run the python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python MCP client failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("bad client output {stdout:?}: {e}"))
}

#[test]
fn mcp_elicitation_accepted_by_the_human_runs_the_command() {
    if !python_mcp() {
        return;
    }
    let a = Arena::new();
    let v = mcp_exec(&a, "accept", RM_DOWNLOADED);
    let asked = v["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 1, "the human is asked once: {v}");
    let q = asked[0].as_str().unwrap_or_default();
    assert!(q.contains("rm keep1.txt keep2.txt"), "{q}");
    assert!(q.contains("destructive"), "{q}");
    assert_eq!(v["is_error"], json!(false), "{v}");
    assert_eq!(v["result"]["output"], "removed\n", "{v}");
    assert!(!a.exists("keep1.txt") && !a.exists("keep2.txt"));
    assert!(
        a.audit_text().contains("\"approved\""),
        "{}",
        a.audit_text()
    );
}

#[test]
fn mcp_elicitation_declined_by_the_human_refuses_with_the_approval_code() {
    if !python_mcp() {
        return;
    }
    let a = Arena::new();
    let v = mcp_exec(&a, "decline", RM_DOWNLOADED);
    assert_eq!(v["asked"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["is_error"], json!(true), "{v}");
    approval_id(&v["result"]);
    let msg = v["result"]["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("declined"), "{msg}");
    assert!(the_files_are_there(&a), "a declined rm removed files");
    // Declined stays declined: the human cannot be asked to approve it later.
    let id = approval_id(&v["result"]);
    let r = human(&a, "approve", &id);
    assert_eq!(r.status, 1, "{}", r.stderr);
    let v = mcp_exec(&a, "none", RM_DOWNLOADED);
    approval_id(&v["result"]);
    assert!(the_files_are_there(&a));
}

#[test]
fn mcp_client_without_elicitation_gets_approval_required_with_an_id() {
    if !python_mcp() {
        return;
    }
    let a = Arena::new();
    let v = mcp_exec(&a, "none", RM_DOWNLOADED);
    assert_eq!(v["asked"], json!([]), "{v}");
    assert_eq!(v["is_error"], json!(true), "{v}");
    let id = approval_id(&v["result"]);
    assert!(the_files_are_there(&a));
    // The id is a real one: the human approves it after the server has exited,
    // and the same request then proceeds.
    let r = human(&a, "approve", &id);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v = mcp_exec(&a, "none", RM_DOWNLOADED);
    assert_eq!(v["result"]["output"], "removed\n", "{v}");
    // Benign control of the same shape: nothing to approve, nothing asked.
    let v = mcp_exec(&a, "accept", "echo fine");
    assert_eq!(v["asked"], json!([]), "{v}");
    assert_eq!(v["result"]["output"], "fine\n", "{v}");
}

// ==== approvals that outlive the process ===========================================

#[test]
fn cli_approval_granted_after_the_process_exited_lets_the_same_request_run_once() {
    let a = Arena::new();
    let (_, v) = a.run_json(RM_DOWNLOADED);
    let id = approval_id(&v);
    assert!(the_files_are_there(&a));

    // The requesting process is gone; the human still finds and grants it.
    let list = a.run_args(&["approvals", "--json"]);
    assert!(list.stdout.contains(&id), "{}", list.stdout);
    let r = human(&a, "approve", &id);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("approved {id}")), "{}", r.stdout);

    let (_, v) = a.run_json(RM_DOWNLOADED);
    assert_eq!(v["error"], Value::Null, "{v}");
    assert_eq!(v["stdout"], "removed\n", "{v}");
    assert!(!a.exists("keep1.txt"));
    // The audit log names the approval the run used.
    let audit = a.audit_text();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("\"approved\"") && l.contains(&id)),
        "{audit}"
    );

    // Single use: the same request needs a new approval.
    restore_files(&a);
    let (_, v) = a.run_json(RM_DOWNLOADED);
    let again = approval_id(&v);
    assert_ne!(again, id);
    assert!(the_files_are_there(&a));
    let r = human(&a, "approve", &id);
    assert_eq!(
        r.status, 1,
        "a used approval was granted again: {}",
        r.stdout
    );
    assert!(r.stderr.contains("already"), "{}", r.stderr);
}

#[test]
fn approval_granted_in_one_directory_does_not_run_the_same_command_in_another() {
    let a = Arena::new();
    std::fs::create_dir(a.path("sub")).expect("mkdir");
    a.write("sub/keep1.txt", "one\n");
    a.write("sub/keep2.txt", "two\n");
    let (_, v) = a.run_json(RM_DOWNLOADED);
    let id = approval_id(&v);
    assert_eq!(human(&a, "approve", &id).status, 0);

    // Same command text, another working directory: not what the human approved.
    let (_, v) = a.run_json(&format!("cd sub && {RM_DOWNLOADED}"));
    approval_id(&v);
    assert!(a.exists("sub/keep1.txt") && a.exists("sub/keep2.txt"));
    // Another command in the approved directory: not approved either.
    let (_, v) = a.run_json("rm -f $(curl -s {URL}/list.txt) && echo removed");
    approval_id(&v);
    assert!(the_files_are_there(&a));

    // Control: the approved request, where it was asked, still runs (once).
    let (_, v) = a.run_json(RM_DOWNLOADED);
    assert_eq!(v["stdout"], "removed\n", "{v}");
}

#[test]
fn a_denied_approval_cannot_be_used_and_an_unknown_id_is_refused() {
    let a = Arena::new();
    let (_, v) = a.run_json(RM_DOWNLOADED);
    let id = approval_id(&v);
    let r = human(&a, "deny", &id);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let (_, v) = a.run_json(RM_DOWNLOADED);
    approval_id(&v);
    assert!(the_files_are_there(&a));
    let r = human(&a, "approve", "zzzz2345");
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("zzzz2345"), "{}", r.stderr);
    // A script cannot reach the store to grant itself.
    let r = a.run(&format!(
        "echo x > {}/safesh/approvals.db",
        a.state.display()
    ));
    assert_ne!(r.status, 0, "{}", r.stderr);
    let (_, v) = a.run_json(RM_DOWNLOADED);
    approval_id(&v);
    assert!(the_files_are_there(&a));
}

/// One JSON-RPC `execute` without a session on a fresh `safesh rpc`.
fn rpc_execute(a: &Arena, script: &str) -> Value {
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
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn safesh rpc");
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "execute", "params": {"script": a.script(script)}});
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{req}").expect("send");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    drop(stdin);
    let _ = child.wait();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    v["result"].clone()
}

#[test]
fn rpc_execute_without_a_session_gets_an_id_the_human_can_approve_later() {
    let a = Arena::new();
    let v = rpc_execute(&a, RM_DOWNLOADED);
    let id = approval_id(&v);
    assert!(the_files_are_there(&a));
    assert_eq!(human(&a, "approve", &id).status, 0);
    let v = rpc_execute(&a, RM_DOWNLOADED);
    assert_eq!(v["error"], Value::Null, "{v}");
    assert!(!a.exists("keep1.txt"));
    // Control: an ordinary request needs nothing.
    let v = rpc_execute(&a, "echo ok");
    assert_eq!(v["error"], Value::Null, "{v}");
}

// ==== approval_wait_ms ==============================================================

/// Starts the CLI in the background on `RM_DOWNLOADED`; waits until its request
/// is listed; the human answers `verb`; returns the run's JSON result.
fn wait_for_the_human(a: &Arena, verb: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_safesh"))
        .arg("--config")
        .arg(&a.config)
        .args(["--json", "-c", &a.script(RM_DOWNLOADED)])
        .current_dir(&a.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", &a.home)
        .env("XDG_STATE_HOME", &a.state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn safesh");
    let id = loop {
        let list = a.run_args(&["approvals", "--json"]);
        let found = list
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["action"] == "rm keep1.txt keep2.txt");
        if let Some(v) = found {
            break v["id"].as_str().unwrap_or_default().to_string();
        }
        assert!(
            child.try_wait().ok().flatten().is_none(),
            "safesh ended without waiting for the human"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let r = human(a, verb, &id);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let out = child.wait_with_output().expect("wait");
    serde_json::from_slice(&out.stdout).expect("json result")
}

#[test]
fn a_request_waits_for_safesh_approve_within_approval_wait_ms() {
    let a = Arena::with_extra("[limits]\napproval_wait_ms = 120000");
    let v = wait_for_the_human(&a, "approve");
    assert_eq!(v["error"], Value::Null, "{v}");
    assert_eq!(v["stdout"], "removed\n", "{v}");
    assert!(!a.exists("keep1.txt"));
}

#[test]
fn a_request_waiting_within_approval_wait_ms_is_refused_when_the_human_denies() {
    let a = Arena::with_extra("[limits]\napproval_wait_ms = 120000");
    let v = wait_for_the_human(&a, "deny");
    approval_id(&v);
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("declined"), "{v}");
    assert!(the_files_are_there(&a));
}

// ==== the human's decisions are audited (issue 15, harden item 2) ======================

/// `safesh approve ID` and `safesh deny ID` write the human's decision to the
/// audit log — verdict, the exact action, the id, the channel — before the
/// request that asked uses it; an action that named a secret's value holds
/// `[secret]` there, never the value. Control: a decision for another id does
/// not stand for this one.
#[test]
fn the_humans_approve_and_deny_are_audited_and_hold_no_secret() {
    let a = Arena::new();
    let (_, v) = a.run_json(RM_DOWNLOADED);
    let granted = approval_id(&v);
    let (_, v) = a.run_json("rm -f $(curl -s {URL}/list.txt)");
    let denied = approval_id(&v);
    // The action names the secret's value (read from .env): withheld.
    let (_, v) = a.run_json("k=$(cut -d= -f2 .env); rm $(curl -s {URL}/list.txt) \"$k\"");
    let secret_id = (v["error"]["code"] == APPROVAL).then(|| approval_id(&v));
    let before = a.audit_text();
    assert!(
        !before.lines().any(|l| l.contains("decided by the human")),
        "no human decided yet: {before}"
    );
    assert_eq!(human(&a, "approve", &granted).status, 0);
    assert_eq!(human(&a, "deny", &denied).status, 0);
    if let Some(id) = &secret_id {
        assert_eq!(human(&a, "approve", id).status, 0);
    }
    let audit = a.audit_text();
    let decided = |id: &str, verdict: &str| {
        audit.lines().any(|l| {
            l.contains(id)
                && l.contains(&format!("\"verdict\":\"{verdict}\""))
                && l.contains("decided by the human (safesh ")
        })
    };
    assert!(decided(&granted, "approved"), "{audit}");
    assert!(decided(&denied, "denied"), "{audit}");
    assert!(!decided(&granted, "denied"), "{audit}");
    assert!(!decided(&denied, "approved"), "{audit}");
    if let Some(id) = &secret_id {
        assert!(decided(id, "approved"), "{audit}");
    }
    assert!(
        !audit.contains(crate::flow_support::SECRET_MARK),
        "the audit log holds the secret:\n{audit}"
    );
}
