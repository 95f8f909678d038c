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
}

struct Cli {
    json: bool,
    output_mode: String,
    timeout_ms: Option<u64>,
    job: Job,
}

const USAGE: &str = "usage: safesh [--json] [--output-mode MODE] [--timeout-ms N] (-c SCRIPT [NAME [ARG...]] | FILE [ARG...] | run -- PROGRAM [ARG...])";

fn parse_args(args: Vec<String>) -> Result<Cli, String> {
    let mut json = false;
    let mut output_mode = "separate".to_string();
    let mut timeout_ms = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--json" => json = true,
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
            "-h" | "--help" => return Err(USAGE.to_string()),
            "--version" => return Err(format!("safesh {}", env!("CARGO_PKG_VERSION"))),
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
                    job: Job::Script {
                        text,
                        arg0,
                        args: rest,
                        stdin_is_script: false,
                    },
                });
            }
            "run" => {
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
    let cli = match parse_args(std::env::args().skip(1).collect()) {
        Ok(c) => c,
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "safesh: {msg}");
            return 2;
        }
    };
    let mut limits = Limits::default();
    if let Some(t) = cli.timeout_ms {
        limits.script_timeout_ms = t;
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
    };
    let mut session = Session::new(SessionOptions {
        limits,
        arg0,
        args,
        on_calling_thread: raise_stack_limit(),
        ..SessionOptions::default()
    });
    let input = if stdin_is_script {
        InputSource::Empty
    } else {
        InputSource::Inherit
    };
    if cli.json {
        let cap = 16 * 1024;
        let target = match cli.output_mode.as_str() {
            "merged" => OutputTarget::Merged {
                cap: 64 * 1024 * 1024,
            },
            _ => OutputTarget::Separate {
                cap: 64 * 1024 * 1024,
            },
        };
        let outcome = session.exec(&text, input, target);
        let value = crate::json::result(&outcome, &cli.output_mode, cap);
        let _ = writeln!(std::io::stdout(), "{value}");
        return outcome.exit_code;
    }
    let outcome = session.exec(&text, input, OutputTarget::Inherit);
    let _ = std::io::stdout().flush();
    outcome.exit_code
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
