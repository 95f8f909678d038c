//! Sessionless requests from the async runtime (the MCP faces). When the
//! request's connection keeps an idle worker (every request after its first)
//! and a place is free, the round trip to the worker awaits its pipes on the
//! runtime thread that handles the call (`worker_pipes.rs`): no blocking thread
//! per call, and none of the hand-offs that cost a context switch each (wake a
//! pool thread, its `poll`, wake the call's task back). Anything else — the
//! connection's first request, a server at its limit of running requests —
//! takes the blocking path (`worker::exec`), which waits for a place and
//! starts workers.
//!
//! The protocol, the deadlines, cancellation and approvals are the blocking
//! path's (`worker.rs` shares the frame handling); an approval is asked in a
//! blocking thread, as the channels to the human block.

use crate::Server;
use crate::exec::ExecParams;
use crate::worker::{Held, TICK, ToWorker, finish};
use crate::worker_converse::{Deadlines, Ended, Step, ask, step};
use crate::worker_pipes::line_of;
use safesh_core::{ApprovalChannel, Interrupter};
use serde_json::Value;
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::Instant;

/// A kept worker serving one request, and the place it holds. When the call's
/// future is dropped before the end (its client went away), a thread sees the
/// request through as the blocking path would have (whose thread went on
/// regardless), and gives the place back after.
struct Running {
    server: Arc<Server>,
    p: Arc<ExecParams>,
    held: Option<Held>,
    timeout_ms: u64,
    interrupter: Interrupter,
}

/// Gives a place back on drop (also when the thread meant to do it never ran).
struct Release(Arc<Server>);

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(w) = self.0.workers() {
            w.release();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let release = Release(self.server.clone());
        let Some(mut held) = self.held.take() else {
            return;
        };
        let (p, t, i) = (self.p.clone(), self.timeout_ms, self.interrupter.clone());
        let _ = std::thread::Builder::new()
            .name("safesh-worker-finish".into())
            .spawn(move || {
                let ended = crate::worker_converse::converse(&mut held, t, &i, None);
                if let Some(w) = release.0.workers() {
                    finish(w, &p, &release.0.settings, held, ended);
                }
                drop(release);
            });
    }
}

/// Runs `p` (sessionless, no background job: [`crate::worker::eligible`]) in a
/// worker its connection kept idle, on the runtime. `None` when there is
/// none idle or no free place now: nothing was done, the caller takes the
/// blocking path. `interrupter` stops the request (the caller's cancellation).
pub(crate) async fn exec(
    server: &Arc<Server>,
    p: &Arc<ExecParams>,
    interrupter: &Interrupter,
    approver: Option<Arc<dyn ApprovalChannel>>,
) -> Option<Value> {
    let workers = server.workers()?;
    if !workers.try_reserve() {
        return None;
    }
    let Some(held) = workers.take_kept(&p.conn) else {
        workers.release();
        return None;
    };
    let p = p.clone();
    let timeout_ms = crate::worker::timeout_of(&p, &server.settings);
    // From here the place is `run`'s: given back when it drops.
    let mut run = Running {
        server: server.clone(),
        p,
        held: Some(held),
        timeout_ms,
        interrupter: interrupter.clone(),
    };
    let line = crate::worker::exec_line(&run.p, approver.is_some());
    let sent = match (&line, run.held.as_mut()) {
        (Ok(l), Some(h)) => h.pipes.send_async(l).await.is_ok(),
        _ => false,
    };
    if !sent {
        // The kept worker died since it was checked (or the frame could not
        // be made): clean up after it; the blocking path starts a new one.
        if let Some(mut h) = run.held.take() {
            let _ = tokio::task::spawn_blocking(move || {
                let _ = h.child.kill();
                let _ = h.child.wait();
                crate::worker::remove_temp_dirs(h.temp_dir.take(), h.child.id());
            })
            .await;
        }
        return None;
    }
    let ended = match run.held.as_mut() {
        Some(h) => converse(h, timeout_ms, interrupter, approver).await,
        None => Ended::Died,
    };
    let held = run.held.take()?;
    if let Ended::Result(..) = ended {
        // The usual end: the worker is kept again (or retired off-thread).
        return Some(finish(workers, &run.p, &server.settings, held, ended));
    }
    // A dead or killed worker is waited for: in a blocking thread.
    let (s, p) = (server.clone(), run.p.clone());
    let done = tokio::task::spawn_blocking(move || {
        s.workers().map(|w| finish(w, &p, &s.settings, held, ended))
    })
    .await;
    Some(match done {
        Ok(Some(v)) => v,
        _ => crate::worker::failed(
            &run.p,
            &server.settings,
            safesh_core::ErrorCode::ExecutionError,
            "the request's worker process was lost".into(),
            1,
        ),
    })
}

/// The request's frames after it was sent (`worker::converse`, awaited):
/// approvals, a cancellation passed on, until the result, the deadline or the
/// worker's end.
async fn converse(
    w: &mut Held,
    timeout_ms: u64,
    interrupter: &Interrupter,
    approver: Option<Arc<dyn ApprovalChannel>>,
) -> Ended {
    let at = Deadlines::after(timeout_ms);
    let mut cancelled = false;
    loop {
        if interrupter.is_interrupted() && !cancelled {
            cancelled = true;
            if let Ok(l) = line_of(&ToWorker::Cancel) {
                let _ = w.pipes.send_async(&l).await;
            }
        }
        if at.past_hard() {
            return Ended::Timeout(timeout_ms);
        }
        if let Some(frame) = w.pipes.next_frame() {
            match step(w, frame, cancelled) {
                Step::Ended(e) => return e,
                Step::Ask(q) => {
                    let (buffered, fd) = (w.pipes.pending(), w.pipes.out_fd());
                    let (ch, i, soft) = (approver.clone(), interrupter.clone(), at.soft);
                    let answer = tokio::task::spawn_blocking(move || {
                        ask(ch.as_ref(), q, buffered, fd, &i, soft)
                    })
                    .await;
                    if let Ok(Ok(l)) = answer.map(|a| line_of(&a)) {
                        let _ = w.pipes.send_async(&l).await;
                    }
                }
                Step::Next => {}
            }
            continue;
        }
        // Wake at least every TICK to look at cancellation and the deadline.
        let wait = at.hard.map_or(TICK, |h| {
            h.saturating_duration_since(Instant::now()).min(TICK)
        });
        match tokio::time::timeout(wait, w.pipes.fill_async()).await {
            Err(_elapsed) => {}
            Ok(Ok(0)) => return Ended::Died,
            Ok(Ok(_)) => {}
            Ok(Err(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Ok(Err(_)) => return Ended::Died,
        }
    }
}
