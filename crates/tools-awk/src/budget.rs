//! awk's memory budget: the utility's share of `[limits] memory_mb`
//! ([`safesh_utils::Host::memory_budget`]), as sort, tac and jq have. What awk
//! holds that input can grow without bound is counted here: the bytes of every
//! array element (key, value, and a fixed overhead per entry), one string built
//! by concatenation or substitution, and one input record. Past the budget the
//! program stops with a [`MemoryLimit`] (a `LIMIT_EXCEEDED` refusal), instead
//! of growing until the kernel's limit aborts the whole worker.
//!
//! The count is per thread (awk runs on the thread of its pipeline stage, and
//! its values are `Rc`s that never leave it): [`Scope`] starts a count of zero
//! for one run and puts the previous one back (an awk run by `system()` inside
//! another has its own).

use safesh_utils::Interrupt;
use safesh_utils::ctx::MemoryLimit;
use std::cell::Cell;
use std::io;

thread_local! {
    /// Bytes held by the arrays of the awk run on this thread.
    static HELD: Cell<u64> = const { Cell::new(0) };
    /// The budget of that run (no limit outside a run).
    static BUDGET: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Bytes counted for each array element beyond its key and value (hash slot,
/// entry, reference counts).
pub const ENTRY_OVERHEAD: u64 = 64;

/// One awk run's count; the previous count comes back when it is dropped.
pub struct Scope {
    held: u64,
    budget: u64,
}

impl Scope {
    /// Starts a count of zero with `budget` bytes.
    pub fn enter(budget: u64) -> Scope {
        let held = HELD.with(|h| h.replace(0));
        let prev = BUDGET.with(|b| b.replace(budget));
        Scope { held, budget: prev }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        HELD.with(|h| h.set(self.held));
        BUDGET.with(|b| b.set(self.budget));
    }
}

/// Adds `delta` bytes (negative: released) to the count.
pub fn adjust(delta: i64) {
    HELD.with(|h| h.set(h.get().saturating_add_signed(delta)));
}

/// The budget of the run on this thread.
pub fn budget() -> u64 {
    BUDGET.with(Cell::get)
}

/// The interruption when the arrays hold more than the budget.
pub fn check_held() -> Result<(), Interrupt> {
    let budget = budget();
    if HELD.with(Cell::get) > budget {
        return Err(MemoryLimit::interrupt("awk: arrays", budget));
    }
    Ok(())
}

/// The interruption when one string of `len` bytes is past the budget.
pub fn check_string(len: usize) -> Result<(), Interrupt> {
    let budget = budget();
    if len as u64 > budget {
        return Err(MemoryLimit::interrupt("awk: one string", budget));
    }
    Ok(())
}

/// The read error when one record would be longer than the budget.
pub fn record_too_long() -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        MemoryLimit {
            what: "awk: one input record".into(),
            budget: budget(),
        },
    )
}

/// The interruption carried by a read error from [`record_too_long`] (or by a
/// file too big to read whole).
pub fn interrupt_of(e: io::Error) -> Result<Interrupt, io::Error> {
    if e.kind() != io::ErrorKind::OutOfMemory {
        return Err(e);
    }
    match e.into_inner().map(|b| b.downcast::<MemoryLimit>()) {
        Some(Ok(m)) => Ok(Interrupt(m)),
        Some(Err(other)) => Err(io::Error::new(io::ErrorKind::OutOfMemory, other)),
        None => Err(io::Error::from(io::ErrorKind::OutOfMemory)),
    }
}
