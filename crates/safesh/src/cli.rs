//! Argument handling and running for the command line.

use safesh_core::{InputSource, Limits, OutputTarget, Session, SessionOptions};
use std::io::{IsTerminal, Read, Write};

/// What to run.
enum Job {
    Script {
        text: String,
        arg0: String,
        args: Vec<String>,
        stdin_is_script: bool,
    },
    Argv(Vec<String>),
    /// A human-only tool: `check`, `config`, `audit`, `approve`, … (see `tools`).
    Tool(String, Vec<String>),
    /// `--help` / `--version`: text for stdout, status 0.
    Info(String),
}

struct Cli {
    json: bool,
    output_mode: String,
    timeout_ms: Option<u64>,
    config: Option<String>,
    force: bool,
    input: Option<String>,
    job: Job,
}

const USAGE: &str = "usage: safesh [--config FILE] [--force] [--input TEXT] [--json] [--output-mode MODE] [--timeout-ms N] (-c SCRIPT [NAME [ARG...]] | FILE [ARG...] | run -- PROGRAM [ARG...])
       safesh [--config FILE] check [--json] (-c SCRIPT | FILE | < SCRIPT)
       safesh [--config FILE] config show
       safesh explain CODE
       safesh init [--force] [DIR]
       safesh trust [FILE] | safesh untrust [FILE]
       safesh doctor                    what this host's sandbox can enforce
       safesh audit [--session S] [--verdict V] [--commit-point P] [--rule R] [--since TIME] [--last N] [--json]
                                        the commit-point decisions of the audit log
       safesh approvals [--json]        pending approval requests of running safesh processes
       safesh approve ID | safesh deny ID   decide one (a human's channel: scripts cannot)
       safesh [--config FILE] mcp [--http ADDR]   MCP server (stdio, or streamable HTTP)
       safesh [--config FILE] rpc       JSON-RPC 2.0 agent mode on stdin/stdout";

fn parse_args(args: Vec<String>) -> Result<Cli, String> {
    let mut json = false;
    let mut output_mode = "separate".to_string();
    let mut timeout_ms = None;
    let mut config = None;
    let mut force = false;
    let mut input: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--json" => json = true,
            "--force" => force = true,
            "--input" => {
                i += 1;
                input = Some(args.get(i).cloned().ok_or("--input needs a value")?);
            }
            "--config" => {
                i += 1;
                config = Some(args.get(i).cloned().ok_or("--config needs a FILE")?);
            }
            _ if a.starts_with("--config=") => config = Some(a["--config=".len()..].to_string()),
            "check" | "config" | "explain" | "init" | "trust" | "untrust" | "doctor" | "mcp"
            | "rpc" | "audit" | "approve" | "deny" | "approvals" => {
                return Ok(Cli {
                    json,
                    output_mode,
                    timeout_ms,
                    config,
                    force,
                    input,
                    job: Job::Tool(a.to_string(), args[i + 1..].to_vec()),
                });
            }
            "--output-mode" => {
                i += 1;
                output_mode = args.get(i).cloned().ok_or("--output-mode needs a value")?;
            }
            "--timeout-ms" => {
                i += 1;
                let v = args.get(i).ok_or("--timeout-ms needs a value")?;
                timeout_ms = Some(
                    v.parse()
                        .map_err(|_| format!("invalid --timeout-ms: {v}"))?,
                );
            }
            "-h" | "--help" | "--version" => {
                let text = if a == "--version" {
                    format!("safesh {}", env!("CARGO_PKG_VERSION"))
                } else {
                    USAGE.to_string()
                };
                return Ok(Cli {
                    json,
                    output_mode,
                    timeout_ms,
                    config,
                    force,
                    input,
                    job: Job::Info(text),
                });
            }
            "-c" => {
                let text = args
                    .get(i + 1)
                    .cloned()
                    .ok_or("-c: option requires an argument")?;
                let arg0 = args.get(i + 2).cloned().unwrap_or_else(|| "safesh".into());
                let rest = args
                    .get(i + 3..)
                    .map(<[String]>::to_vec)
                    .unwrap_or_default();
                return Ok(Cli {
                    json,
                    output_mode,
                    timeout_ms,
                    config,
                    force,
                    input,
                    job: Job::Script {
                        text,
                        arg0,
                        args: rest,
                        stdin_is_script: false,
                    },
                });
            }
            "run" => {
                // `safesh run [options] -- PROGRAM ARGS…`: options given after `run`
                // are read as if they came before it.
                if let Some(dd) = args[i + 1..].iter().position(|a| a == "--")
                    && dd > 0
                    && args[i + 1].starts_with('-')
                {
                    let mut again: Vec<String> = args[..i].to_vec();
                    again.extend(args[i + 1..i + 1 + dd].iter().cloned());
                    again.push("run".into());
                    again.extend(args[i + 1 + dd..].iter().cloned());
                    return parse_args(again);
                }
                let mut rest = args[i + 1..].to_vec();
                if rest.first().map(String::as_str) == Some("--") {
                    rest.remove(0);
                }
                if rest.is_empty() {
                    return Err("run: missing PROGRAM".into());
                }
                return Ok(Cli {
                    json,
                    output_mode,
                    timeout_ms,
                    config,
                    force,
                    input,
                    job: Job::Argv(rest),
                });
            }
            _ if a.starts_with('-') && a.len() > 1 => {
                return Err(format!("unknown option {a}\n{USAGE}"));
            }
            _ => {
                let text = std::fs::read_to_string(a).map_err(|e| format!("{a}: {e}"))?;
                return Ok(Cli {
                    json,
                    output_mode,
                    timeout_ms,
                    config,
                    force,
                    input,
                    job: Job::Script {
                        text,
                        arg0: a.to_string(),
                        args: args[i + 1..].to_vec(),
                        stdin_is_script: false,
                    },
                });
            }
        }
        i += 1;
    }
    if std::io::stdin().is_terminal() {
        return Err(format!(
            "no script given (and stdin is a terminal)\n{USAGE}"
        ));
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("reading stdin: {e}"))?;
    Ok(Cli {
        json,
        output_mode,
        timeout_ms,
        config,
        force,
        input,
        job: Job::Script {
            text,
            arg0: "safesh".into(),
            args: Vec::new(),
            stdin_is_script: true,
        },
    })
}

/// Quotes an argv so that the interpreter sees exactly these words.
fn quote_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs the command line; returns the exit status.
pub fn main() -> i32 {
    // Arguments are OS strings: a byte that is not UTF-8 must not panic. The
    // interpreter works on text, so such bytes become U+FFFD (said on stderr).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| match a.into_string() {
            Ok(s) => s,
            Err(raw) => {
                let s = raw.to_string_lossy().into_owned();
                eprintln!(
                    "safesh: warning: an argument is not valid UTF-8; its invalid bytes were replaced with U+FFFD"
                );
                s
            }
        })
        .collect();
    let cli = match parse_args(args) {
        Ok(c) => c,
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "safesh: {msg}");
            return 2;
        }
    };
    if let Job::Info(text) = &cli.job {
        let _ = writeln!(std::io::stdout(), "{}", text.trim_end());
        return 0;
    }
    if let Job::Tool(name, args) = &cli.job {
        return crate::tools::run(name, args, cli.config.as_deref(), cli.json);
    }
    let policy = match crate::tools::load_policy(cli.config.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut limits = limits_from(policy.config());
    if let Some(t) = cli.timeout_ms {
        let max = policy
            .config()
            .limits
            .max_timeout_ms
            .unwrap_or(DEFAULT_MAX_TIMEOUT_MS);
        limits.script_timeout_ms = t.min(max);
    }
    let (text, arg0, args, stdin_is_script) = match cli.job {
        Job::Script {
            text,
            arg0,
            args,
            stdin_is_script,
        } => (text, arg0, args, stdin_is_script),
        // An argv is run as one simple command: each element is one word, quoted.
        Job::Argv(argv) => (quote_argv(&argv), "safesh".to_string(), Vec::new(), false),
        Job::Tool(..) | Job::Info(_) => return 2,
    };
    // Decided before the policy moves into the session; only `--json` uses it:
    // the same shaping as MCP and JSON-RPC (cap, spill file, true totals, labels
    // per chunk, redaction of what the model may not see).
    let capture = cli.json.then(|| {
        let settings = safesh_server::settings::Settings::from_policy(policy.clone());
        let mode = serde_json::from_value(serde_json::Value::String(cli.output_mode.clone()))
            .unwrap_or(safesh_server::shape::OutputMode::Separate);
        std::sync::Arc::new(
            safesh_server::shape::Capture::new(
                mode,
                safesh_server::shape::ShapeConfig {
                    cap: settings.cap,
                    spill_dir: settings.spill_dir(),
                    retention: settings.spill_retention,
                },
            )
            .with_redaction(safesh_server::shape::Redaction::from_config(
                policy.config(),
            )),
        )
    });
    let redaction = capture
        .as_ref()
        .and_then(|_| safesh_server::shape::Redaction::from_config(policy.config()));
    let mut session = Session::new(SessionOptions {
        limits,
        arg0,
        args,
        on_calling_thread: raise_stack_limit(),
        policy: Some(policy),
        ..SessionOptions::default()
    });
    session.set_force(cli.force);
    // A human at this terminal can answer approvals as they come up; the model-facing
    // `--json` never asks.
    if !cli.json
        && let Some(tty) = crate::tty_approval::TerminalApprover::open()
    {
        session.set_approval_channel(Some(std::sync::Arc::new(tty)));
    }
    let input = match cli.input {
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
        // The process status is model-facing too under --json.
        return safesh_server::shape::model_exit_code(&outcome, redaction.as_ref()).0;
    }
    let outcome = session.exec(&text, input, OutputTarget::Inherit);
    let _ = std::io::stdout().flush();
    session.record_history(safesh_core::context::HistoryRecord::new(
        "cli", &text, &outcome,
    ));
    outcome.exit_code
}

/// The largest request timeout when the config sets none (ms).
const DEFAULT_MAX_TIMEOUT_MS: u64 = 600_000;

/// Interpreter limits: built-in values, overridden by the config's `[limits]`.
fn limits_from(config: &safesh_policy::config::Config) -> Limits {
    let mut l = Limits::default();
    let c = &config.limits;
    for (slot, v) in [
        (&mut l.loop_iterations, c.loop_iterations),
        (&mut l.call_depth, c.call_depth),
        (&mut l.commands, c.commands),
        (&mut l.substitution_depth, c.substitution_depth),
        (&mut l.brace_expansion, c.brace_expansion),
        (&mut l.string_bytes, c.string_bytes),
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
fn raise_stack_limit() -> bool {
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
