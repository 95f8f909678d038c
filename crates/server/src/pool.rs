//! Fresh sessions made cheaply: a call without a session gets a brand-new
//! [`Session`] (nothing carries over from other calls), copied from a template
//! prepared once (environment imported, policy loaded). A finished fresh
//! session's policy and private temp dir are reused by the next one when the dir
//! is empty and no background job of it still runs, which saves cloning the
//! policy and creating and removing a directory per call.

use crate::settings::Settings;
use crate::shape::lock;
use safesh_core::Session;
use safesh_core::session::Reusable;
use std::sync::{Arc, Mutex};

/// Reusable temp dirs kept at most (one per call in flight is enough).
const SPARE: usize = 32;

/// The template and the spare parts of finished fresh sessions.
pub struct Pool {
    template: Mutex<Session>,
    spare: Mutex<Vec<Reusable>>,
}

impl Pool {
    /// A pool for `settings`.
    pub fn new(settings: Arc<Settings>) -> Arc<Pool> {
        Arc::new(Pool {
            template: Mutex::new(Session::template(settings.session_options(
                None,
                &[],
                settings.on_calling_thread,
            ))),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// A pool in a worker process: its sessions run on the calling thread
    /// (the worker's interpreter thread has the shell's stack).
    pub fn for_worker(settings: Arc<Settings>) -> Arc<Pool> {
        Arc::new(Pool {
            template: Mutex::new(Session::template(settings.session_options(None, &[], true))),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// A fresh session.
    pub fn take(&self) -> Session {
        let reuse = lock(&self.spare).pop();
        Session::fresh_from(&lock(&self.template), reuse)
    }

    /// A fresh session whose commands may read the spill files of `scope`
    /// ([`crate::owner::scope`]) and no other's. A reused policy still names
    /// the scope of its last request: when it cannot be renamed, the session
    /// is made again from the template (whose policy names none).
    pub fn take_for(&self, scope: &str) -> Session {
        let dir = Some(crate::owner::scope_dir(scope));
        let mut s = self.take();
        if s.set_state_scope(dir.clone()) {
            return s;
        }
        drop(s);
        let mut s = Session::fresh_from(&lock(&self.template), None);
        s.set_state_scope(dir);
        s
    }

    /// Takes back a finished fresh session: its temp dir and policy are reused
    /// when nothing else uses them, else it is dropped (its temp dir removed).
    pub fn give_back(&self, session: Session) {
        if let Some(r) = session.into_reusable() {
            let mut spare = lock(&self.spare);
            if spare.len() < SPARE {
                spare.push(r);
            }
        }
    }

    /// Drops the spare temp dirs.
    pub fn shutdown(&self) {
        let drained: Vec<Reusable> = lock(&self.spare).drain(..).collect();
        drop(drained);
    }
}
