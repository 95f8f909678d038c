//! Approvals asked on safesh's own terminal (`/dev/tty`).
//!
//! Only when a human is plainly at the terminal: the CLI (not `--json`, which is a
//! model-facing face) with stdin and stderr both terminals. Sandboxed programs
//! cannot type into it (seccomp refuses TIOCSTI, and they get pipes, not the
//! terminal); keys typed before the question appears are discarded, so nothing
//! typed ahead answers it.

use safesh_core::{ApprovalAnswer, ApprovalChannel, ApprovalQuestion};
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How often a wait for the answer looks at `stop` and the expiry.
const POLL: Duration = Duration::from_millis(200);
/// The longest answer line read.
const MAX_ANSWER: usize = 256;

/// Asks on the controlling terminal.
#[derive(Debug)]
pub struct TerminalApprover {
    tty: Mutex<File>,
}

impl TerminalApprover {
    /// The terminal, when stdin and stderr are both terminals and `/dev/tty` opens.
    pub fn open() -> Option<TerminalApprover> {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return None;
        }
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(TerminalApprover {
            tty: Mutex::new(tty),
        })
    }
}

/// Waits until `fd` is readable; false when `stop` or `deadline` comes first.
fn wait_readable(fd: i32, stop: &dyn Fn() -> bool, deadline: SystemTime) -> bool {
    loop {
        if stop() || SystemTime::now() >= deadline {
            return false;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut p, 1, POLL.as_millis() as i32) };
        if n > 0 {
            return true;
        }
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// `y` / `yes` (any case) grants; anything else typed denies.
fn parse_answer(line: &[u8]) -> ApprovalAnswer {
    let text = String::from_utf8_lossy(line);
    match text.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => ApprovalAnswer::Granted,
        _ => ApprovalAnswer::Denied,
    }
}

impl ApprovalChannel for TerminalApprover {
    fn name(&self) -> &str {
        "terminal prompt"
    }

    fn ask(&self, question: &ApprovalQuestion, stop: &dyn Fn() -> bool) -> ApprovalAnswer {
        // One question at a time (pipeline stages may ask together).
        let mut tty = self.tty.lock().unwrap_or_else(|e| e.into_inner());
        let fd = tty.as_raw_fd();
        // SAFETY: tcflush on a descriptor we own; discards type-ahead.
        unsafe { libc::tcflush(fd, libc::TCIFLUSH) };
        let prompt = format!("\n{}\nRun it once? [y/N] ", question.text());
        if tty.write_all(prompt.as_bytes()).is_err() {
            return ApprovalAnswer::Unanswered;
        }
        let _ = tty.flush();
        let mut line = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            if !wait_readable(fd, stop, question.expires) {
                let _ = tty.write_all(b"\n(no answer: not approved)\n");
                return ApprovalAnswer::Unanswered;
            }
            match tty.read(&mut buf) {
                Ok(0) => return ApprovalAnswer::Unanswered,
                Ok(n) => {
                    line.extend_from_slice(&buf[..n]);
                    if let Some(end) = line.iter().position(|&b| b == b'\n') {
                        let answer = parse_answer(&line[..end]);
                        let said = match answer {
                            ApprovalAnswer::Granted => "approved once\n",
                            _ => "not approved\n",
                        };
                        let _ = tty.write_all(said.as_bytes());
                        return answer;
                    }
                    if line.len() > MAX_ANSWER {
                        return ApprovalAnswer::Denied;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return ApprovalAnswer::Unanswered,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_grants() {
        for yes in ["y", "Y", "yes", " YES \r"] {
            assert_eq!(
                parse_answer(yes.as_bytes()),
                ApprovalAnswer::Granted,
                "{yes:?}"
            );
        }
        for no in ["", "n", "no", "yess", "y y", "ok"] {
            assert_eq!(
                parse_answer(no.as_bytes()),
                ApprovalAnswer::Denied,
                "{no:?}"
            );
        }
    }
}
