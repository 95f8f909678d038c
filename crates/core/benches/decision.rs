//! The policy decision for a typical one-line agent command: parse, expand the
//! fixed words and decide every command (`Session::check`, the pass that runs
//! before every script). Target: under 50 µs.
//!
//! Run: `cargo bench -p safesh-core --bench decision`.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use safesh_core::{Session, SessionOptions};
use safesh_policy::Policy;
use safesh_policy::config::{LoadOptions, load};

fn session(dir: &std::path::Path) -> Session {
    let cfg = dir.join("safesh.toml");
    std::fs::write(
        &cfg,
        "[sandbox]\nread = [\".\"]\nwrite = [\".\"]\n[commands.git]\nallow = [\"status\", \"log\", \"diff\"]\ndeny_flags = [\"-c\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join("src")).unwrap_or_else(|e| panic!("{e}"));
    let config = load(&LoadOptions {
        cwd: dir.to_path_buf(),
        home: Some(dir.to_path_buf()),
        config_file: Some(cfg),
        ..LoadOptions::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    Session::new(SessionOptions {
        cwd: dir.to_path_buf(),
        env: vec![("HOME".into(), dir.display().to_string())],
        policy: Some(Policy::new(config)),
        ..SessionOptions::default()
    })
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = session(dir.path());
    for (name, script) in [
        ("git_status", "git status"),
        ("grep_pipeline", "grep -rn 'TODO' src | sort | head -20"),
        ("refused_wrapper", "timeout 5 env X=1 bash -c 'id'"),
        ("git_log_flags", "git log --oneline -n 5 --grep=-c -- src"),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| black_box(s.check(black_box(script)).map(|v| v.len())))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
