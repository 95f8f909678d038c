//! The host side of code mode (`safesh-code`): the only ways a JS/TS script
//! reaches files, programs, the network or the output.
//!
//! There is no second path. Each capability is a small bash command run through
//! this session's interpreter ([`Session::exec`]) — `cat` for a read, a
//! redirection for a write, `rm`/`mv`/`cp`/`mkdir`, the external program itself
//! for `$.cmd`, `curl` for `fetch`, `printf` for `console.log` — so the path
//! checks, the policy decision, the sandbox, the label store and the commit
//! points are exactly those of the same command typed in bash. The script's
//! values reach the command only as the values of variables (`"$__safesh_code_1"`),
//! never as code, each with the label the engine gives it.

use crate::error::{ErrorCode, Refusal};
use crate::session::{ExecOutcome, InputSource, OutputTarget, Session};
use safesh_label::Label;

/// One value handed to a host command: it becomes the variable
/// `__safesh_code_N` (N = its position, from 1) for that command only.
#[derive(Debug, Clone)]
pub struct CodeValue {
    /// The text.
    pub text: String,
    /// Its label: the agent's for a literal of the script, else what the script
    /// had read when it made the value.
    pub label: Label,
}

impl CodeValue {
    /// A value with a label.
    pub fn new(text: impl Into<String>, label: Label) -> Self {
        CodeValue {
            text: text.into(),
            label,
        }
    }
}

/// The prefix of the variables a host command reads its values from.
pub const CODE_VAR_PREFIX: &str = "__safesh_code_";

impl Session {
    /// Runs one host command of code mode: `script` is safesh's own text (the
    /// agent's label), `values` become `$__safesh_code_1…` for it only (labeled,
    /// not exported), output goes to `target`, and the request ends within
    /// `timeout_ms` (`Some(0)`: the limits' own). The variables are removed
    /// afterwards whatever happened.
    pub fn code_exec(
        &mut self,
        script: &str,
        values: &[CodeValue],
        input: InputSource,
        target: OutputTarget,
        timeout_ms: Option<u64>,
    ) -> ExecOutcome {
        let mut set = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            let name = format!("{CODE_VAR_PREFIX}{}", i + 1);
            if self
                .shell_mut()
                .vars
                .set(&name, v.text.clone(), v.label.clone())
                .is_err()
            {
                self.unset_code_vars(&set);
                let r = Refusal::new(
                    ErrorCode::ExecutionError,
                    format!("the session's variable {name} is read-only; code mode needs it"),
                )
                .suggest(format!("unset or rename {name} in this session"));
                return refused_outcome(r);
            }
            if let Some(var) = self.shell_mut().vars.get_mut(&name) {
                var.exported = false;
            }
            set.push(name);
        }
        let saved = self.request_timeout();
        self.set_script_timeout_ms(timeout_ms);
        let outcome = self.exec(script, input, target);
        self.set_script_timeout_ms(saved);
        self.unset_code_vars(&set);
        outcome
    }

    fn unset_code_vars(&mut self, names: &[String]) {
        for n in names {
            let _ = self.shell_mut().vars.unset(n);
        }
    }

    /// The exec commit point for text a script is about to run as code (JS
    /// `eval`, `new Function`): text with an untrusted label (downloaded, read
    /// from a file an external program wrote…) is refused with
    /// `FLOW_VIOLATION` (or needs an approval), exactly as `eval "$(curl …)"`.
    /// `what` names the construct in the refusal and the audit log.
    pub fn code_commit_exec(&mut self, what: &str, code: &Label) -> Result<(), Refusal> {
        let argv = [crate::interp::expand::Field {
            text: what.to_string(),
            label: code.clone(),
        }];
        self.shell_mut()
            .commit_exec(safesh_flow::ExecKind::Eval, code, &argv)
    }
}

/// A file code mode opened for reading (`safesh/streams`): checked once, as
/// `cat` checks it, on the file that was actually opened.
#[derive(Debug)]
pub struct CodeReader {
    /// The open file (a regular file).
    pub file: std::fs::File,
    /// The label of its bytes (and of its name), as `cat` would join it.
    pub label: Label,
}

impl Session {
    /// Opens `path` (relative to the session's cwd) for reading as `cat`
    /// does: the read roots, the descriptor names, the label store (fail
    /// closed). The check is made on the name, then again on the file that
    /// was opened (`/proc/self/fd`), so a symlink swapped in between reads
    /// nothing it could not read by name. Only regular files (a FIFO would
    /// block the engine).
    pub fn code_open_read(&mut self, path: &str) -> Result<CodeReader, Refusal> {
        use std::os::unix::fs::OpenOptionsExt;
        let shell = self.shell();
        let named = shell.cwd.join(path);
        let real = shell.check_read_resolved(&named)?;
        let failed = |what: String| {
            let mut r = Refusal::new(ErrorCode::ExecutionError, what).command("read");
            r.details.path = Some(path.to_string());
            r
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&named)
            .map_err(|e| failed(format!("{path}: {}", io_text(&e))))?;
        let meta = file
            .metadata()
            .map_err(|e| failed(format!("{path}: {}", io_text(&e))))?;
        if meta.is_dir() {
            return Err(failed(format!("{path}: Is a directory")));
        }
        if !meta.is_file() {
            return Err(failed(format!(
                "{path}: not a regular file (streams read files only)"
            )));
        }
        // What was opened, by the kernel's name for it.
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let opened = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok();
        let label = match (&opened, &real) {
            (Some(o), Some(r)) if o == r => shell.file_label_checked(&named, real.as_deref())?,
            (Some(o), _) => {
                let again = shell.check_read_resolved(o)?;
                shell.file_label_checked(o, again.as_deref())?
            }
            (None, _) => shell.file_label_checked(&named, real.as_deref())?,
        };
        let names = shell
            .names()
            .and_then(|n| crate::names::entry_label(&n, &named))
            .unwrap_or_else(Label::empty);
        Ok(CodeReader {
            file,
            label: label.join(&names),
        })
    }
}

/// An I/O error as the utilities word it (`No such file or directory`).
fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// An outcome for a host command refused before it ran.
fn refused_outcome(r: Refusal) -> ExecOutcome {
    ExecOutcome {
        exit_code: r.status(),
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_total: 0,
        stderr_total: 0,
        truncated: false,
        label: Label::empty(),
        status_label: Label::empty(),
        error_label: Label::empty(),
        warnings: Vec::new(),
        error: Some(r),
        duration_ms: 0,
    }
}
