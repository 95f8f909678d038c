//! `safesh code -e SOURCE` / `safesh code FILE.ts`: code mode from the command
//! line, through the same session, policy, labels and `--json` shaping as `-c`.

use crate::args::{CodeArgs, ExecOpts};
use safesh_code::{CodeRequest, Language};
use safesh_core::OutputTarget;
use std::io::Write;

/// Runs `safesh code`; returns the exit status.
pub(crate) fn run(before: ExecOpts, config: Option<&str>, args: CodeArgs) -> i32 {
    let exec = before.merged_with(args.exec);
    let (source, name) = match (args.eval, args.file) {
        (Some(src), _) => (src, None),
        (None, Some(path)) => match std::fs::read_to_string(&path) {
            Ok(text) => (text, Some(path)),
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "safesh: {path}: {e}");
                return 2;
            }
        },
        (None, None) => {
            let _ = writeln!(
                std::io::stderr(),
                "safesh: code: give -e SOURCE or a FILE\nusage: safesh code -e 'console.log(1)' | safesh code FILE.ts"
            );
            return 2;
        }
    };
    let language = match (&args.lang, &name) {
        (Some(l), _) => match Language::parse(l) {
            Some(l) => l,
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "safesh: code: unknown language {l:?} (typescript or javascript)"
                );
                return 2;
            }
        },
        (None, Some(file)) => Language::of_file(file),
        (None, None) => Language::TypeScript,
    };
    let policy = match crate::tools::load_policy(config) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let limits = crate::cli::limits_from(policy.config());
    let timeout_ms = exec.timeout_ms.map(|t| {
        t.min(
            policy
                .config()
                .limits
                .max_timeout_ms
                .unwrap_or(crate::cli::DEFAULT_MAX_TIMEOUT_MS),
        )
    });
    let (capture, redaction) = crate::cli::json_capture(&exec, &policy);
    // The host commands run on the engine's thread, whose stack has room for them.
    let mut session = crate::cli::terminal_session(
        policy,
        limits,
        "safesh".into(),
        Vec::new(),
        true,
        !exec.json,
    );
    session.set_force(exec.force);
    let request = CodeRequest {
        source: source.clone(),
        language,
        // The path as given: stack traces name it, and its relative imports
        // resolve from its directory.
        name: name.clone().unwrap_or_default(),
        timeout_ms,
        input: exec.input.clone(),
        vars: None,
    };
    let target = match &capture {
        Some(c) => OutputTarget::Stream(c.clone()),
        None => OutputTarget::Inherit,
    };
    let run = safesh_code::run(session, request, target);
    let _ = std::io::stdout().flush();
    run.session
        .record_history(safesh_core::context::HistoryRecord::new(
            "cli",
            &source,
            &run.outcome,
        ));
    if let Some(capture) = capture {
        let value = capture.result(&run.outcome);
        let _ = writeln!(std::io::stdout(), "{value}");
        return safesh_server::shape::model_exit_code(&run.outcome, redaction.as_ref()).0;
    }
    run.outcome.exit_code
}
