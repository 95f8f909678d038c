//! Ctrl-C while a command runs: the terminal sends SIGINT to safesh (sandboxed
//! programs run in sessions of their own and do not get it); the handler stops
//! the session's request through its [`Interrupter`] (programs killed, partial
//! output kept) and the REPL goes on. At the prompt the line editor reads Ctrl-C
//! as a key (raw mode) and clears the line.

use safesh_core::Interrupter;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The installed handler; dropping it restores the previous disposition.
pub struct CtrlC {
    id: signal_hook_registry::SigId,
    fired: Arc<AtomicBool>,
}

impl CtrlC {
    /// Sends SIGINT to `interrupter` from now on. `None` when the handler could
    /// not be installed (Ctrl-C then ends safesh, as it would any program).
    pub fn install(interrupter: Interrupter) -> Option<CtrlC> {
        let fired = Arc::new(AtomicBool::new(false));
        let flag = fired.clone();
        // SAFETY: the action stores to two atomics (`Interrupter::interrupt` is one
        // `AtomicBool::store`) and makes one write(2) of a static byte: all
        // async-signal-safe (no allocation, no lock).
        let id = unsafe {
            signal_hook_registry::register(libc::SIGINT, move || {
                flag.store(true, Ordering::SeqCst);
                interrupter.interrupt();
                // The terminal echoed `^C`; what follows (the cancellation
                // message, the prompt) starts on a line of its own.
                let _ = libc::write(2, b"\n".as_ptr().cast(), 1);
            })
        }
        .ok()?;
        Some(CtrlC { id, fired })
    }

    /// True when Ctrl-C was pressed since the last call (and clears it).
    pub fn take(&self) -> bool {
        self.fired.swap(false, Ordering::SeqCst)
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        signal_hook_registry::unregister(self.id);
    }
}
