//! Identifiers for sessions, jobs and spill files: unique within the machine
//! (process id, time, counter) and hard to guess (random bits from the OS).

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(1);

/// `PREFIX-<time>-<pid>-<n>`: unique among the ids this machine makes.
pub fn unique(prefix: &str) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{prefix}-{ms}-{}-{n}", std::process::id())
}

/// `PREFIX-<counter>-<8 random hex>`: short, and not guessable by another client.
pub fn short(prefix: &str) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{n}-{}", random_hex(4))
}

/// `2*bytes` hex digits from the OS's random source (time-based if it is missing).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok();
    if !ok {
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ (u64::from(std::process::id()) << 32);
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}
