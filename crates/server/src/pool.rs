//! Fresh sessions made ahead of time: a call without a session gets a brand-new
//! [`Session`] (nothing carries over), but making one (policy, temp dir,
//! environment) happens on a background thread instead of on the request's path.

use crate::settings::Settings;
use crate::shape::lock;
use safesh_core::Session;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

/// Sessions kept ready.
const READY: usize = 4;

/// A few unused sessions, refilled in the background.
pub struct Pool {
    settings: Arc<Settings>,
    ready: Mutex<Vec<Session>>,
    wanted: Condvar,
    stopped: std::sync::atomic::AtomicBool,
}

impl Pool {
    /// A pool for `settings`, with its refill thread.
    pub fn new(settings: Arc<Settings>) -> Arc<Pool> {
        let pool = Arc::new(Pool {
            settings,
            ready: Mutex::new(Vec::new()),
            wanted: Condvar::new(),
            stopped: std::sync::atomic::AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&pool);
        let _ = std::thread::Builder::new()
            .name("safesh-pool".into())
            .spawn(move || refill(weak));
        pool
    }

    /// A fresh session (made now if none is ready).
    pub fn take(&self) -> Session {
        let s = lock(&self.ready).pop();
        self.wanted.notify_one();
        match s {
            Some(s) => s,
            None => self.settings.new_session(None, &[]),
        }
    }

    /// Drops the ready sessions (removing their temp dirs) and stops refilling.
    pub fn shutdown(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let drained: Vec<Session> = lock(&self.ready).drain(..).collect();
        drop(drained);
        self.wanted.notify_all();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        lock(&self.ready).clear();
    }
}

fn refill(weak: Weak<Pool>) {
    loop {
        let Some(pool) = weak.upgrade() else { return };
        if pool.stopped.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let need = lock(&pool.ready).len() < READY;
        if need {
            let s = pool.settings.new_session(None, &[]);
            if pool.stopped.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            lock(&pool.ready).push(s);
            continue;
        }
        let guard = lock(&pool.ready);
        // Wake on demand, or now and then to notice the server is gone.
        let _ = pool.wanted.wait_timeout(guard, Duration::from_millis(500));
    }
}
