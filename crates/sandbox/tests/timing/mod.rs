//! Spawn overhead: `/usr/bin/true` through the sandbox vs a plain fork/exec. Prints
//! timings; no timed assertions.
use std::time::{Duration, Instant};

use crate::common::*;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn spawn_overhead() {
    let w = World::new();
    let n = 20;
    let mut plain = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let s = std::process::Command::new("/usr/bin/true")
            .status()
            .unwrap();
        plain.push(t.elapsed());
        assert!(s.success());
    }
    let mut sandboxed = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let r = go(w.spec("/usr/bin/true", &[]));
        sandboxed.push(t.elapsed());
        assert_eq!(r.outcome.status, Some(0));
    }
    let (p, s) = (median(plain), median(sandboxed));
    println!(
        "spawn /usr/bin/true: plain {p:?}, sandboxed {s:?}, overhead {:?}",
        s.saturating_sub(p)
    );
}
