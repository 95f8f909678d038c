//! Argument handling and running for the command line.

use crate::args::{Cli, Command, ExecOpts};
use clap::Parser;
use safesh_core::{InputSource, Limits, OutputTarget, Session, SessionOptions};
use std::io::{IsTerminal, Read, Write};

/// What to run.
enum Job {
    Script {
        text: String,
        arg0: String,
        args: Vec<String>,
        stdin_is_script: bool,
        /// `-c`: the script is one string (not a file or stdin).
        is_string: bool,
    },
    Argv(Vec<String>),
}

/// Reads the script a parsed command line names: `-c`, FILE, or stdin.
fn script_job(script: Option<Vec<String>>, file: Vec<String>) -> Result<Job, String> {
    if let Some(mut words) = script {
        // `-c SCRIPT [NAME [ARG…]]`: clap gives at least one word.
        let text = if words.is_empty() {
            String::new()
        } else {
            words.remove(0)
        };
        let mut rest = words.into_iter();
        let arg0 = rest.next().unwrap_or_else(|| "safesh".into());
        return Ok(Job::Script {
            text,
            arg0,
            args: rest.collect(),
            stdin_is_script: false,
            is_string: true,
        });
    }
    if let Some((path, args)) = file.split_first() {
        // The file's bytes are the script's (a byte that is not UTF-8 is
        // data, escaped as in every word); its name is a word too.
        let text = std::fs::read(safesh_core::word_bytes::word_to_path(path)).map_err(|e| {
            let mut msg = format!("{path}: {e}");
            if e.kind() == std::io::ErrorKind::NotFound
                && let Some(near) = closest_subcommand(path)
            {
                msg.push_str(&format!(
                    "\n  tip: no such script file; did you mean the command `{near}`?"
                ));
            }
            msg
        })?;
        let text = safesh_core::word_bytes::word_from_vec(text);
        return Ok(Job::Script {
            text,
            arg0: path.clone(),
            args: args.to_vec(),
            stdin_is_script: false,
            is_string: false,
        });
    }
    if std::io::stdin().is_terminal() {
        return Err(
            "no script given (and stdin is a terminal)\nusage: safesh -c SCRIPT | safesh FILE | safesh < SCRIPT (see `safesh --help`)"
                .into(),
        );
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let text = safesh_core::word_bytes::word_from_vec(bytes);
    Ok(Job::Script {
        text,
        arg0: "safesh".into(),
        args: Vec::new(),
        stdin_is_script: true,
        is_string: false,
    })
}

/// A subcommand one or two edits away from `word` (a mistyped command that was
/// taken for a script file name).
fn closest_subcommand(word: &str) -> Option<String> {
    if word.contains('/') {
        return None;
    }
    crate::args::subcommand_names()
        .into_iter()
        .map(|n| (edit_distance(word, &n), n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein distance (short words only: subcommand names).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Quotes an argv so that the interpreter sees exactly these words.
fn quote_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `name` followed by `words`: a builtin's argv.
fn builtin_argv(name: &str, words: Vec<String>) -> Vec<String> {
    std::iter::once(name.to_string()).chain(words).collect()
}

/// Runs the command line; returns the exit status.
pub fn main() -> i32 {
    // Arguments are OS strings: a byte that is not UTF-8 must not panic. The
    // interpreter works on text, so such bytes are escaped losslessly
    // (safesh_core::word_bytes): `safesh -c 'rm -- "$1"' _ NAME` removes NAME.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| match a.into_string() {
            Ok(s) => s,
            Err(raw) => safesh_core::word_bytes::word_from_os(&raw).into_owned(),
        })
        .collect();
    let parsed = match crate::args::fast_path(&args) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse_from(std::iter::once("safesh".to_string()).chain(args)),
    };
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            // --help / --version print to stdout and exit 0; a usage error prints
            // to stderr (naming the option, with the close one) and exits 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    let Cli {
        exec,
        config,
        script,
        file,
        command,
    } = cli;
    let (exec, job) = match command {
        Some(Command::Run(run)) => (exec.merged_with(run.exec), Job::Argv(run.argv)),
        // The builtins of the same name, run as a one-command script.
        Some(Command::Checkpoint(w)) => (exec, Job::Argv(builtin_argv("checkpoint", w.words))),
        Some(Command::History(w)) => (exec, Job::Argv(builtin_argv("history", w.words))),
        Some(Command::Code(c)) => return crate::code_cmd::run(exec, config.as_deref(), c),
        Some(other) => return crate::tools::run(other, config.as_deref(), exec.json),
        // A terminal and nothing to run: the interactive shell (not for `--json`
        // or `--input`, which say what to do with a script).
        None if script.is_none()
            && file.is_empty()
            && !exec.json
            && exec.input.is_none()
            && std::io::stdin().is_terminal() =>
        {
            return crate::repl_cmd::run(exec, config.as_deref());
        }
        None => match script_job(script, file) {
            Ok(job) => (exec, job),
            Err(msg) => {
                let _ = writeln!(std::io::stderr(), "safesh: {msg}");
                return 2;
            }
        },
    };
    run_job(exec, config.as_deref(), job)
}

/// Runs a script or an argv through one session, as `-c` does; returns the exit status.
fn run_job(exec: ExecOpts, config: Option<&str>, job: Job) -> i32 {
    crate::repl_cmd::register_help();
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut limits = limits_from(policy.config());
    if let Some(t) = exec.timeout_ms {
        let max = policy
            .config()
            .limits
            .max_timeout_ms
            .unwrap_or(DEFAULT_MAX_TIMEOUT_MS);
        limits.script_timeout_ms = t.min(max);
    }
    let (text, arg0, args, stdin_is_script, is_string) = match job {
        Job::Script {
            text,
            arg0,
            args,
            stdin_is_script,
            is_string,
        } => (text, arg0, args, stdin_is_script, is_string),
        // An argv is run as one simple command: each element is one word, quoted.
        Job::Argv(argv) => (
            quote_argv(&argv),
            "safesh".to_string(),
            Vec::new(),
            false,
            true,
        ),
    };
    // Decided before the policy moves into the session; only `--json` uses it:
    // the same shaping as MCP and JSON-RPC (cap, spill file, true totals, labels
    // per chunk, redaction of what the model may not see).
    let (capture, redaction) = json_capture(&exec, &policy);
    let mut session = terminal_session(policy, limits, arg0, args, raise_stack_limit(), !exec.json);
    session.set_force(exec.force);
    session.set_script_is_string(is_string);
    let input = match exec.input {
        Some(text) => InputSource::Bytes(text.into_bytes()),
        None if stdin_is_script => InputSource::Empty,
        None => InputSource::Inherit,
    };
    if let Some(capture) = capture {
        let outcome = session.exec(&text, input, OutputTarget::Stream(capture.clone()));
        session.record_history(safesh_core::context::HistoryRecord::new(
            "cli", &text, &outcome,
        ));
        let value = capture.result(&outcome);
        let _ = writeln!(std::io::stdout(), "{value}");
        session.end_for_exit();
        // The process status is model-facing too under --json.
        return safesh_server::shape::model_exit_code(&outcome, redaction.as_ref()).0;
    }
    let outcome = session.exec(&text, input, OutputTarget::Inherit);
    let _ = std::io::stdout().flush();
    session.record_history(safesh_core::context::HistoryRecord::new(
        "cli", &text, &outcome,
    ));
    session.end_for_exit();
    outcome.exit_code
}

/// A session as `safesh -c` runs one: the policy, limits, `$0` and `$@`; with
/// `ask` (not `--json`), approvals are asked at the terminal when there is one.
/// Tasks run their scripts through this too.
pub(crate) fn terminal_session(
    policy: safesh_policy::Policy,
    limits: Limits,
    arg0: String,
    args: Vec<String>,
    on_calling_thread: bool,
    ask: bool,
) -> Session {
    let mut session = Session::new(SessionOptions {
        limits,
        arg0,
        args,
        on_calling_thread,
        policy: Some(policy),
        ..SessionOptions::default()
    });
    // A human at this terminal can answer approvals as they come up; the model-facing
    // `--json` never asks.
    if ask && let Some(tty) = crate::tty_approval::TerminalApprover::open() {
        session.set_approval_channel(Some(std::sync::Arc::new(tty)));
    }
    session
}

/// The largest request timeout when the config sets none (ms).
pub(crate) const DEFAULT_MAX_TIMEOUT_MS: u64 = 600_000;

/// Interpreter limits: built-in values, overridden by the config's `[limits]`.
pub(crate) fn limits_from(config: &safesh_policy::config::Config) -> Limits {
    let mut l = Limits::default();
    let c = &config.limits;
    for (slot, v) in [
        (&mut l.loop_iterations, c.loop_iterations),
        (&mut l.call_depth, c.call_depth),
        (&mut l.commands, c.commands),
        (&mut l.substitution_depth, c.substitution_depth),
        (&mut l.brace_expansion, c.brace_expansion),
        (&mut l.string_bytes, c.string_bytes),
        (&mut l.script_bytes, c.script_bytes),
        (&mut l.script_timeout_ms, c.script_timeout_ms),
        (&mut l.processes, c.processes),
    ] {
        if let Some(v) = v {
            *slot = v;
        }
    }
    l
}

/// The stack the interpreter needs (as its own threads get).
const STACK_BYTES: u64 = 64 * 1024 * 1024;

/// Lets the main thread's stack grow to [`STACK_BYTES`] so the script can run on it
/// (no extra thread at start-up). Linux grows the main stack on demand up to the
/// soft limit, and keeps at least 128 MiB free below it. Returns false (and the
/// session uses its own thread) when the limit cannot be raised.
pub(crate) fn raise_stack_limit() -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_STACK, &mut lim) != 0 {
            return false;
        }
        if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= STACK_BYTES {
            return true;
        }
        if lim.rlim_max != libc::RLIM_INFINITY && lim.rlim_max < STACK_BYTES {
            return false;
        }
        lim.rlim_cur = STACK_BYTES;
        libc::setrlimit(libc::RLIMIT_STACK, &lim) == 0
    }
}

/// For `--json`: the capture that shapes output as MCP and JSON-RPC do (cap,
/// spill file, true totals, labels per chunk) and the redaction of what the model
/// may not see; `(None, None)` otherwise.
pub(crate) fn json_capture(
    exec: &crate::args::ExecOpts,
    policy: &safesh_policy::Policy,
) -> (
    Option<std::sync::Arc<safesh_server::shape::Capture>>,
    Option<safesh_server::shape::Redaction>,
) {
    if !exec.json {
        return (None, None);
    }
    let settings = safesh_server::settings::Settings::from_policy(policy.clone());
    let mode = exec.output_mode.unwrap_or_default().to_mode();
    let capture = safesh_server::shape::Capture::new(
        mode,
        safesh_server::shape::ShapeConfig {
            cap: settings.cap,
            spill_dir: settings.spill_dir(),
            retention: settings.spill_retention,
        },
    )
    .with_redaction(safesh_server::shape::Redaction::from_config(
        policy.config(),
    ));
    (
        Some(std::sync::Arc::new(capture)),
        safesh_server::shape::Redaction::from_config(policy.config()),
    )
}
