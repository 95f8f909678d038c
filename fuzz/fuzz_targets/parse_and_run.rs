//! Fuzz target: any bytes, parsed and interpreted with tight limits inside a
//! throwaway directory. Must never panic, hang or exhaust memory, and never write
//! outside its directory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use safesh_core::{InputSource, Limits, OutputTarget, Session, SessionOptions};

fuzz_target!(|data: &[u8]| {
    // safesh catches panics inside brush-parser and reports a parse error; libFuzzer's
    // hook would abort on those caught panics, so install a quiet hook. A panic that
    // is not caught still unwinds into libFuzzer and is reported as a crash.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    // Parsing alone must not panic.
    let _ = safesh_syntax::parse(script);
    let Ok(dir) = tempfile_dir() else {
        return;
    };
    let limits = Limits {
        loop_iterations: 2_000,
        call_depth: 32,
        commands: 5_000,
        substitution_depth: 8,
        brace_expansion: 2_000,
        string_bytes: 64 * 1024,
        script_timeout_ms: 500,
        processes: 16,
        output_bytes: 0,
    };
    let mut session = Session::new(SessionOptions {
        cwd: dir.clone(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into()), ("HOME".into(), dir.display().to_string())],
        limits,
        arg0: "safesh".into(),
        args: Vec::new(),
        write_roots: Some(vec![dir.clone()]),
        on_calling_thread: false,
        policy: None,
    });
    let _ = session.exec(script, InputSource::Empty, OutputTarget::Separate { cap: 64 * 1024 });
    let _ = std::fs::remove_dir_all(&dir);
});

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "safesh-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
