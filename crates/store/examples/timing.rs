//! Rough costs of the store on this machine (not a benchmark: one run, wall clock).
//!
//! `cargo run -p safesh-store --example timing [DIR]` — DIR is where the temporary
//! state dir is made (default: the system temp dir); use a dir on the same
//! filesystem as `~/.local/state` to see the real fsync cost.

use safesh_label::Label;
use safesh_store::{AuditLog, CommitPoint, Entry, LabelStore, Verdict, WriteMode};
use std::error::Error;
use std::time::{Duration, Instant};

fn per(total: Duration, n: u32) -> String {
    format!("{:.1} µs", total.as_secs_f64() * 1e6 / f64::from(n))
}

fn main() -> Result<(), Box<dyn Error>> {
    let base = std::env::args().nth(1);
    let tmp = match &base {
        Some(dir) => tempfile::tempdir_in(dir)?,
        None => tempfile::tempdir()?,
    };
    let state = tmp.path().join("state");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work)?;
    const N: u32 = 200;
    let files: Vec<_> = (0..N).map(|i| work.join(format!("f{i}"))).collect();
    for f in &files {
        std::fs::write(f, "x")?;
    }
    let label = Label::secret("api").join(&Label::from_env("API"));

    let t = Instant::now();
    drop(LabelStore::open(&state)?);
    println!("LabelStore::open (new db):      {:?}", t.elapsed());
    let t = Instant::now();
    let store = LabelStore::open(&state)?;
    println!("LabelStore::open (existing db): {:?}", t.elapsed());

    let t = Instant::now();
    for f in &files {
        store.record_write(f, &label, WriteMode::Truncate)?;
    }
    println!("record_write (new entry):       {}", per(t.elapsed(), N));
    let t = Instant::now();
    for f in &files {
        store.record_write(f, &Label::agent(), WriteMode::Append { before: None })?;
    }
    println!("record_write (update):          {}", per(t.elapsed(), N));
    let t = Instant::now();
    for _ in 0..5 {
        for f in &files {
            store.lookup(f)?;
        }
    }
    println!(
        "lookup:                         {}",
        per(t.elapsed(), 5 * N)
    );

    let t = Instant::now();
    let log = AuditLog::open(&state)?;
    println!("AuditLog::open:                 {:?}", t.elapsed());
    let entry = Entry::new("timing", CommitPoint::Network, Verdict::Allow)
        .with_command("curl https://example.com")
        .with_target("example.com")
        .with_labels(&label, &Label::agent().join(&Label::from_file("/x")))
        .with_rule("default");
    let t = Instant::now();
    for _ in 0..N {
        log.append(&entry)?;
    }
    println!("AuditLog::append (+fdatasync):  {}", per(t.elapsed(), N));
    Ok(())
}
