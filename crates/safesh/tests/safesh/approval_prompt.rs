//! Approvals asked on safesh's own terminal: safesh runs on a real pseudo-terminal
//! (its controlling terminal, stdin and stderr), the test plays the human at it.

use crate::flow_support::{APPROVAL, Arena};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `rm` of names downloaded from the network needs a human's approval.
const RM_DOWNLOADED: &str = "rm $(curl -s {URL}/list.txt) && echo removed";
const PROMPT: &str = "[y/N]";

struct TerminalRun {
    status: Option<i32>,
    /// Everything safesh wrote to the terminal (stderr and the prompt).
    terminal: String,
    stdout: String,
}

impl TerminalRun {
    fn dump(&self) -> String {
        format!(
            "status {:?}\n--- terminal\n{}\n--- stdout\n{}",
            self.status, self.terminal, self.stdout
        )
    }
}

/// Runs `safesh --config … ARGS` on a new terminal. `type_ahead` is typed at once;
/// what `answer` returns (given the terminal so far) is typed when the question
/// appears (and only then).
fn on_a_terminal_with(
    a: &Arena,
    args: &[&str],
    type_ahead: &str,
    answer: impl FnOnce(&str) -> String + Send + 'static,
) -> TerminalRun {
    let (master, slave) = crate::escape_support::open_pty();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
    cmd.arg("--config")
        .arg(&a.config)
        .args(args)
        .current_dir(&a.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", &a.home)
        .env("XDG_STATE_HOME", &a.state)
        .stdin(Stdio::from(slave.try_clone().expect("dup slave")))
        .stderr(Stdio::from(slave.try_clone().expect("dup slave")))
        .stdout(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn safesh");
    // The command keeps its copies of the terminal until dropped: without this the
    // master never sees the end.
    drop(cmd);
    drop(slave);
    let mut out = child.stdout.take().expect("stdout");
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let mut writer = std::fs::File::from(master.try_clone().expect("dup master"));
    let mut answer = Some(answer);
    writer.write_all(type_ahead.as_bytes()).expect("type ahead");
    let terminal = Arc::new(Mutex::new(String::new()));
    let seen = terminal.clone();
    let reader = std::thread::spawn(move || {
        let mut m = std::fs::File::from(master);
        let mut buf = [0u8; 4096];
        // Ends with EIO once safesh (the last holder of the terminal) is gone.
        while let Ok(n) = m.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = seen.lock().unwrap();
            t.push_str(&String::from_utf8_lossy(&buf[..n]));
            if t.contains(PROMPT)
                && let Some(answer) = answer.take()
            {
                let text = answer(&t);
                drop(t);
                let _ = writer.write_all(text.as_bytes());
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = stdout.join().unwrap_or_default();
    let _ = reader.join();
    let terminal = terminal.lock().unwrap().clone();
    TerminalRun {
        status,
        terminal,
        stdout,
    }
}

/// Types `answer` when the question appears.
fn on_a_terminal(a: &Arena, args: &[&str], type_ahead: &str, answer: &str) -> TerminalRun {
    let answer = answer.to_string();
    on_a_terminal_with(a, args, type_ahead, move |_| answer)
}

fn audit(a: &Arena) -> String {
    std::fs::read_to_string(a.state.join("safesh/audit.jsonl")).unwrap_or_default()
}

#[test]
fn yes_at_the_terminal_runs_the_command_once() {
    let a = Arena::new();
    let s = a.script(RM_DOWNLOADED);
    let r = on_a_terminal(&a, &["-c", &s], "", "y\n");
    assert_eq!(r.status, Some(0), "{}", r.dump());
    assert_eq!(r.stdout, "removed\n", "{}", r.dump());
    assert!(
        !a.exists("keep1.txt") && !a.exists("keep2.txt"),
        "{}",
        r.dump()
    );
    for part in [
        "approval needed",
        "rm keep1.txt keep2.txt",
        "destructive",
        PROMPT,
    ] {
        assert!(r.terminal.contains(part), "{part}:\n{}", r.dump());
    }
    assert!(audit(&a).contains("\"approved\""), "{}", audit(&a));
}

#[test]
fn no_at_the_terminal_refuses_and_keeps_the_files() {
    let a = Arena::new();
    let s = a.script(RM_DOWNLOADED);
    let r = on_a_terminal(&a, &["-c", &s], "", "n\n");
    assert_eq!(r.status, Some(126), "{}", r.dump());
    assert!(r.terminal.contains(APPROVAL), "{}", r.dump());
    assert!(r.terminal.contains("declined"), "{}", r.dump());
    assert!(
        a.exists("keep1.txt") && a.exists("keep2.txt"),
        "{}",
        r.dump()
    );
    assert_eq!(r.stdout, "", "{}", r.dump());
    assert!(audit(&a).contains("\"denied\""), "{}", audit(&a));
}

#[test]
fn keys_typed_before_the_question_do_not_answer_it() {
    let a = Arena::new();
    let s = a.script(RM_DOWNLOADED);
    // `y` is waiting in the terminal's input before the question is asked; the
    // human then presses Enter (the default: no).
    let r = on_a_terminal(&a, &["-c", &s], "y\n", "\n");
    assert_eq!(r.status, Some(126), "{}", r.dump());
    assert!(
        a.exists("keep1.txt") && a.exists("keep2.txt"),
        "{}",
        r.dump()
    );
}

#[test]
fn the_model_facing_json_result_never_asks_at_the_terminal() {
    let a = Arena::new();
    let s = a.script(RM_DOWNLOADED);
    let r = on_a_terminal(&a, &["--json", "-c", &s], "", "y\n");
    assert_eq!(r.status, Some(126), "{}", r.dump());
    assert!(!r.terminal.contains(PROMPT), "{}", r.dump());
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON result");
    assert_eq!(v["error"]["code"], APPROVAL, "{}", r.dump());
    assert!(a.exists("keep1.txt"), "{}", r.dump());
}

#[test]
fn safesh_approve_from_another_terminal_ends_the_wait() {
    let a = Arena::new();
    let s = a.script(RM_DOWNLOADED);
    let (state, home) = (a.state.clone(), a.home.clone());
    let approved = Arc::new(Mutex::new(String::new()));
    let said = approved.clone();
    // The human answers with `safesh approve ID` elsewhere, typing nothing here.
    let r = on_a_terminal_with(&a, &["-c", &s], "", move |terminal| {
        let id = terminal
            .lines()
            .find_map(|l| l.trim().strip_prefix("id:"))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_safesh"))
            .args(["approve", &id])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_STATE_HOME", &state)
            .output()
            .expect("run safesh approve");
        *said.lock().unwrap() = format!(
            "{} {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::new()
    });
    let approved = approved.lock().unwrap().clone();
    assert!(approved.contains("approved"), "{approved}\n{}", r.dump());
    assert_eq!(r.status, Some(0), "{approved}\n{}", r.dump());
    assert_eq!(r.stdout, "removed\n", "{}", r.dump());
    assert!(!a.exists("keep1.txt"), "{}", r.dump());
}
