//! Times the checkpoint library alone (no safesh process, no labels):
//! `cargo run --release -p safesh-checkpoint --example save_bench -- TREE STATE [RUNS]`.
//! Saves TREE into a fresh store under STATE, then saves it again RUNS times
//! with one file changed each time, and prints each time (wall and CPU) (bench/run.sh
//! checkpoint measures the whole command).

use safesh_checkpoint::{Filter, SaveRequest, Settings, Store};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(tree), Some(state)) = (args.get(1), args.get(2)) else {
        return Err("usage: save_bench TREE STATE [RUNS]".into());
    };
    let runs: usize = args.get(3).map_or(Ok(3), |r| r.parse())?;
    let tree = std::fs::canonicalize(tree)?;
    let _ = std::fs::remove_dir_all(state);
    let store = Store::open(&PathBuf::from(state))?;
    let settings = Settings {
        max_bytes: u64::MAX,
        ..Settings::default()
    };
    let filter = Filter {
        exclude: &settings.exclude,
        protected: &|_| false,
    };
    let roots = [tree.clone()];
    let save = |name: &str| {
        let (t, cpu) = (Instant::now(), cpu_time());
        let saved = store.save(
            &SaveRequest {
                project: &tree,
                roots: &roots,
                name: Some(name),
                filter: &filter,
                label_of: &|_| None,
                extra: serde_json::Value::Null,
                label_epoch: None,
                journal: None,
            },
            &settings,
        );
        (t.elapsed(), cpu_time().saturating_sub(cpu), saved)
    };
    let (first, cpu, saved) = save("first");
    println!(
        "first save {first:?} (CPU {cpu:?}): {} files read",
        saved?.files_read
    );
    for i in 0..runs {
        let changed = tree.join("d00/f0000");
        let mut text = std::fs::read(&changed).unwrap_or_default();
        text.extend_from_slice(format!("{i}\n").as_bytes());
        std::fs::write(&changed, text)?;
        let (again, cpu, saved) = save("again");
        println!(
            "second save {again:?} (CPU {cpu:?}): {} files read",
            saved?.files_read
        );
    }
    Ok(())
}

/// User + system time of this process so far (all its threads).
fn cpu_time() -> std::time::Duration {
    // SAFETY: getrusage writes only the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
