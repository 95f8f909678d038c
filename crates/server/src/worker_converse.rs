//! One sessionless request's conversation with its worker, after the request
//! was sent (`worker.rs` sends it; `worker_async.rs` does the same from the
//! async runtime): approvals asked and answered, a cancellation passed on,
//! the deadlines kept, until the result or the worker's end. The frame
//! handling is shared by the blocking and the async round trip.

use crate::worker::{FromWorker, GRACE, Held, Question, TICK, ToWorker, answer_word, readable};
use safesh_core::{ApprovalAnswer, ApprovalChannel, Interrupter};
use serde_json::Value;
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a request in a worker ended.
pub(crate) enum Ended {
    /// The worker's result; `reusable`: the worker may serve the owner again.
    Result(Value, bool),
    /// The worker was killed past the request's deadline.
    Timeout(u64),
    /// The worker died or broke the protocol.
    Died,
}

/// A request's deadlines: the worker stops itself at `soft`; past `hard` it
/// is killed.
#[derive(Clone, Copy)]
pub(crate) struct Deadlines {
    pub(crate) soft: Option<Instant>,
    pub(crate) hard: Option<Instant>,
}

impl Deadlines {
    /// From now, for a request of `timeout_ms` (0: none).
    pub(crate) fn after(timeout_ms: u64) -> Deadlines {
        let soft = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
        Deadlines {
            soft,
            hard: soft.map(|s| s + GRACE),
        }
    }

    pub(crate) fn past_hard(&self) -> bool {
        self.hard.is_some_and(|h| Instant::now() >= h)
    }
}

/// What a frame from the worker means for the request.
pub(crate) enum Step {
    /// It ended.
    Ended(Ended),
    /// Ask the human this, then send the answer.
    Ask(Question),
    /// Nothing to do (its temp dir noted, a frame of another kind).
    Next,
}

/// Reads one frame of the request's conversation (blocking and async alike).
pub(crate) fn step(
    w: &mut Held,
    frame: Result<FromWorker, serde_json::Error>,
    cancelled: bool,
) -> Step {
    match frame {
        // A cancelled request may leave a cancel frame behind: a new
        // worker for the owner's next request is the simple safe side.
        Ok(FromWorker::Result { result }) => Step::Ended(Ended::Result(result, !cancelled)),
        Ok(FromWorker::Ready { temp_dir: t }) => {
            w.temp_dir = t;
            Step::Next
        }
        Ok(FromWorker::Ask { question }) => Step::Ask(question),
        // Frames of long-lived workers only (worker_remote.rs).
        Ok(_) => Step::Next,
        // Not a frame of ours: the worker is broken; end it.
        Err(_) => {
            let _ = w.child.kill();
            Step::Ended(Ended::Died)
        }
    }
}

/// Asks the human `question` for the worker's request (blocking), stopping
/// when the request is cancelled or out of time, or when the worker has moved
/// on (it stopped waiting itself and sent more); the answer's frame.
pub(crate) fn ask(
    approver: Option<&Arc<dyn ApprovalChannel>>,
    question: Question,
    buffered: bool,
    fd: i32,
    interrupter: &Interrupter,
    soft: Option<Instant>,
) -> ToWorker {
    let stop = || {
        buffered
            || interrupter.is_interrupted()
            || soft.is_some_and(|s| Instant::now() >= s)
            || readable(fd, Duration::ZERO)
    };
    let a = match approver {
        Some(ch) => ch.ask(&question.to_core(), &stop),
        None => ApprovalAnswer::Unanswered,
    };
    ToWorker::Answer {
        id: question.id,
        answer: answer_word(a).to_string(),
    }
}

/// The request's frames after it was sent: approvals asked and answered, a
/// cancellation passed on, until the result, the deadline or the worker's end.
pub(crate) fn converse(
    w: &mut Held,
    timeout_ms: u64,
    interrupter: &Interrupter,
    approver: Option<&Arc<dyn ApprovalChannel>>,
) -> Ended {
    let at = Deadlines::after(timeout_ms);
    let fd = w.pipes.out_fd();
    let mut cancelled = false;
    loop {
        if interrupter.is_interrupted() && !cancelled {
            cancelled = true;
            let _ = w.pipes.send(&ToWorker::Cancel);
        }
        if at.past_hard() {
            return Ended::Timeout(timeout_ms);
        }
        if let Some(frame) = w.pipes.next_frame() {
            match step(w, frame, cancelled) {
                Step::Ended(e) => return e,
                Step::Ask(q) => {
                    let buffered = w.pipes.pending();
                    let answer = ask(approver, q, buffered, fd, interrupter, at.soft);
                    let _ = w.pipes.send(&answer);
                }
                Step::Next => {}
            }
            continue;
        }
        if !readable(fd, TICK) {
            continue;
        }
        match w.pipes.fill() {
            Ok(0) => return Ended::Died,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(_) => return Ended::Died,
        }
    }
}
