//! Helpers: run a script in a fresh session over a temp dir, capturing output.

use safesh_core::{ExecOutcome, InputSource, Limits, OutputTarget, Session, SessionOptions};
use std::path::Path;

/// Runs `script` in `dir` with `limits`, capturing stdout and stderr.
pub fn run_with(dir: &Path, script: &str, limits: Limits) -> ExecOutcome {
    let mut s = Session::new(SessionOptions {
        cwd: dir.to_path_buf(),
        env: vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("HOME".into(), dir.display().to_string()),
        ],
        limits,
        arg0: "safesh".into(),
        args: Vec::new(),
        write_roots: Some(vec![dir.to_path_buf()]),
        on_calling_thread: false,
        policy: None,
    });
    s.exec(
        script,
        InputSource::Empty,
        OutputTarget::Separate { cap: 1 << 20 },
    )
}

/// Runs `script` in `dir` with default limits.
pub fn run(dir: &Path, script: &str) -> ExecOutcome {
    run_with(dir, script, Limits::default())
}

/// Stdout as text.
pub fn out(o: &ExecOutcome) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
