//! Spawn overhead: `/usr/bin/true` plain, through the sandbox, and through
//! `bwrap --ro-bind / / true` when bubblewrap is installed. Prints medians.
//!
//! `cargo run -p safesh-sandbox --example spawn_bench [ITERATIONS] [--limits]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use safesh_sandbox::{Limits, Network, Output, Spec, Stdin, run};

struct Sink;
impl Output for Sink {
    fn stdout(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
    fn stderr(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

/// Median (the minimum too, with SPAWN_BENCH_MIN: less sensitive to a busy machine).
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    if std::env::var_os("SPAWN_BENCH_MIN").is_some() {
        return v[0];
    }
    v[v.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    // `--limits`: memory / process / file-size limits (per-run cgroups).
    let with_limits = std::env::args().any(|a| a == "--limits");
    // Outside /tmp, so that the sandbox mounts its private /tmp as it normally would.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let tmp = dir.path().join("tmp");
    let plain = time(n, || {
        assert!(Command::new("/usr/bin/true").status().unwrap().success())
    });
    let sandboxed = time(n, || {
        let spec = Spec {
            program: PathBuf::from("/usr/bin/true"),
            argv: vec!["true".into()],
            cwd: dir.path().to_path_buf(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            read: vec![],
            write: vec![dir.path().to_path_buf()],
            exec: vec![],
            protect: vec![],
            hide: vec![],
            tmp_dir: tmp.clone(),
            network: if std::env::var_os("SPAWN_BENCH_NET_ON").is_some() {
                Network::On
            } else {
                Network::Off
            },
            limits: if with_limits {
                Limits {
                    memory_bytes: Some(512 << 20),
                    processes: Some(64),
                    file_size_bytes: Some(64 << 20),
                    ..Limits::default()
                }
            } else {
                Limits::default()
            },
            stdin: Stdin::Null,
            allow_weaker: false,
            on_start: None,
            observer: None,
        };
        let o = run(spec, &mut Sink, &|| false).unwrap();
        assert_eq!(o.status, Some(0));
    });
    println!("plain fork/exec      {plain:?}");
    println!(
        "sandbox::run         {sandboxed:?}  (+{:?}, x{:.2})",
        sandboxed.saturating_sub(plain),
        ratio(sandboxed, plain)
    );
    let has_bwrap = Command::new("bwrap").arg("--version").output().is_ok();
    if has_bwrap {
        let bwrap = time(n, || {
            assert!(
                Command::new("bwrap")
                    .args(["--ro-bind", "/", "/", "/usr/bin/true"])
                    .status()
                    .unwrap()
                    .success()
            )
        });
        println!(
            "bwrap --ro-bind / /  {bwrap:?}  (+{:?}, x{:.2})",
            bwrap.saturating_sub(plain),
            ratio(bwrap, plain)
        );
        println!("sandbox / bwrap      x{:.2}", ratio(sandboxed, bwrap));
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
