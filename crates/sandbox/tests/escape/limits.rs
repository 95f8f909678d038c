//! Resource exhaustion against LOW limits.
use crate::common::*;

#[test]
fn fork_bomb() {
    let w = World::new();
    let mut s = w.py(
        "n = 0\n\
         def bomb():\n    global n\n    for i in range(200):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(3)\n            os._exit(0)\n        n += 1\n\
         attempt('fork', bomb)\nprint('FORKED', n, flush=True)",
    );
    s.limits.processes = Some(32);
    let r = denied(s);
    let n: u32 = r
        .out
        .split("FORKED ")
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(n <= 32, "{n} processes: {r:?}");
    assert!(
        r.outcome
            .limits_hit
            .contains(&safesh_sandbox::LimitHit::Processes),
        "{r:?}"
    );
}

#[test]
fn memory_bomb() {
    let w = World::new();
    let mut s = w.py(
        "def bomb():\n    chunks = []\n    for i in range(64):\n        chunks.append(bytearray(8 << 20))\n    return 'allocated %d MB' % (len(chunks) * 8)\n\
         attempt('alloc', bomb)",
    );
    s.limits.memory_bytes = Some(64 << 20);
    let r = go(s);
    r.started();
    assert!(!r.out.contains("ESCAPED"), "{r:?}");
    assert!(
        r.outcome
            .limits_hit
            .contains(&safesh_sandbox::LimitHit::Memory),
        "{r:?}"
    );
}

#[test]
fn disk_fill() {
    let w = World::new();
    let mut s = w.py("attempt('fill', lambda: write('big', b'\\0' * (32 << 20)))");
    s.limits.file_size_bytes = Some(16 << 20);
    let r = go(s);
    r.started();
    assert!(!r.out.contains("ESCAPED"), "{r:?}");
    let len = std::fs::metadata(w.root.join("big"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(len <= 16 << 20, "{len}");
}

#[test]
fn cpu_time() {
    let w = World::new();
    let mut s = w.py("while True: pass");
    s.limits.cpu_seconds = Some(1);
    let r = go(s);
    r.started();
    assert!(!r.outcome.timed_out, "{r:?}");
    assert!(r.outcome.signal.is_some(), "{r:?}");
    assert!(
        r.outcome
            .limits_hit
            .contains(&safesh_sandbox::LimitHit::Cpu)
            || r.outcome.signal == Some(9),
        "{r:?}"
    );
}
