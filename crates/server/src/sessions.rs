//! Named sessions: each a separate [`Session`] (cwd, env, variables, functions
//! kept between calls), with idle expiry and a limit on how many live at once.
//! With the isolation model on (`Settings::worker`) the session's interpreter
//! lives in a worker process of its own ([`Remote`]); else in this process.

use crate::error::ServerError;
use crate::settings::Settings;
use crate::shape::lock;
use crate::worker_remote::Remote;
use safesh_core::{Interrupter, Session};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One live session.
pub struct SessionEntry {
    /// Its id.
    pub id: String,
    /// The connection that started it: the only one that can use it
    /// (see [`crate::owner`]).
    pub conn: String,
    /// The shell (`None` when it lives in a worker process: [`SessionEntry::remote`]);
    /// locked while a request runs in the session (requests in one session queue).
    pub session: Mutex<Option<Session>>,
    /// The worker process holding the session's interpreter, if it has one.
    pub remote: Option<Arc<Remote>>,
    /// Stops its running request without taking the lock.
    pub interrupter: Interrupter,
    last_used: Mutex<Instant>,
    /// The environment given at start and by updates (copied into its jobs).
    env: Mutex<Vec<(String, String)>>,
    /// The cwd as last known (copied into its jobs while a request runs).
    cwd: Mutex<PathBuf>,
}

impl SessionEntry {
    /// Marks the session used now.
    pub fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// The cwd and env a job started from this session gets.
    pub fn snapshot(&self) -> (PathBuf, Vec<(String, String)>) {
        let cwd = match (&self.remote, self.session.try_lock()) {
            (Some(r), _) => r.cwd(),
            (None, Ok(s)) => s
                .as_ref()
                .map_or_else(|| lock(&self.cwd).clone(), |s| s.cwd().to_path_buf()),
            (None, Err(_)) => lock(&self.cwd).clone(),
        };
        (cwd, lock(&self.env).clone())
    }

    /// Records the session's cwd after a request (for [`SessionEntry::snapshot`]).
    pub fn remember_cwd(&self, cwd: &Path) {
        *lock(&self.cwd) = cwd.to_path_buf();
    }
}

/// Starts the worker process of session `id` with a cwd and environment.
pub type OpenRemote<'a> =
    dyn Fn(&str, Option<PathBuf>, Vec<(String, String)>) -> Result<Arc<Remote>, ServerError> + 'a;

/// Told the id of each session that ended by idle expiry (the server kills its jobs).
pub type OnExpire = Arc<dyn Fn(&str) + Send + Sync>;

/// The live sessions of one server.
pub struct Sessions {
    settings: Arc<Settings>,
    map: Mutex<HashMap<String, Arc<SessionEntry>>>,
    on_expire: Option<OnExpire>,
}

/// Checks a requested working directory: it must be an existing directory.
pub fn check_cwd(cwd: &str) -> Result<PathBuf, ServerError> {
    let p = PathBuf::from(cwd);
    let p = if p.is_absolute() {
        p
    } else {
        std::env::current_dir()?.join(p)
    };
    match std::fs::metadata(&p) {
        Ok(m) if m.is_dir() => Ok(std::fs::canonicalize(&p).unwrap_or(p)),
        Ok(_) => Err(ServerError::BadParams(format!(
            "cwd {} is not a directory",
            p.display()
        ))),
        Err(e) => Err(ServerError::BadParams(format!("cwd {}: {e}", p.display()))),
    }
}

impl Sessions {
    /// A requested working directory: an existing directory the policy lets
    /// the session read (`cwd=/etc` would be accepted, then refuse everything).
    fn usable_cwd(&self, cwd: &str) -> Result<PathBuf, ServerError> {
        let p = check_cwd(cwd)?;
        match self.settings.policy.check_read(&p, &p) {
            Ok(()) => Ok(p),
            Err(r) => Err(ServerError::BadParams(format!(
                "cwd {}: {}; {}",
                p.display(),
                r.message,
                r.suggestion
                    .as_deref()
                    .unwrap_or("start the session inside the read roots")
            ))),
        }
    }

    /// No sessions yet.
    pub fn new(settings: Arc<Settings>) -> Sessions {
        Sessions::with_on_expire(settings, None)
    }

    /// No sessions yet; `on_expire` is told each session ended by idle expiry.
    pub fn with_on_expire(settings: Arc<Settings>, on_expire: Option<OnExpire>) -> Sessions {
        Sessions {
            settings,
            map: Mutex::new(HashMap::new()),
            on_expire,
        }
    }

    /// Starts a session owned by connection `conn` in this process; returns its entry.
    pub fn start(
        &self,
        conn: &str,
        cwd: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Result<Arc<SessionEntry>, ServerError> {
        self.start_with(conn, cwd, env, None)
    }

    /// Starts a session owned by connection `conn`; with `open`, its
    /// interpreter lives in the worker process `open(id, cwd, env)` starts.
    pub fn start_with(
        &self,
        conn: &str,
        cwd: Option<&str>,
        env: Vec<(String, String)>,
        open: Option<&OpenRemote<'_>>,
    ) -> Result<Arc<SessionEntry>, ServerError> {
        self.sweep();
        let cwd = cwd.map(|c| self.usable_cwd(c)).transpose()?;
        {
            let map = lock(&self.map);
            if map.len() >= self.settings.max_sessions {
                return Err(ServerError::TooManySessions(self.settings.max_sessions));
            }
        }
        let id = crate::ids::short("s");
        let (session, remote, interrupter, now) = match open {
            Some(open) => {
                let r = open(&id, cwd, env.clone())?;
                let now = r.cwd();
                (None, Some(r.clone()), r.stopper_of_requests(), now)
            }
            None => {
                let mut session = self.settings.new_session(cwd, &env);
                // Its commands may read its own spill files and job logs, no other's.
                let scope = crate::owner::scope(conn, Some(&id));
                session.set_state_scope(Some(crate::owner::scope_dir(&scope)));
                let (i, now) = (session.interrupter(), session.cwd().to_path_buf());
                (Some(session), None, i, now)
            }
        };
        let entry = Arc::new(SessionEntry {
            id,
            conn: conn.to_string(),
            interrupter,
            cwd: Mutex::new(now),
            session: Mutex::new(session),
            remote,
            last_used: Mutex::new(Instant::now()),
            env: Mutex::new(env),
        });
        let mut map = lock(&self.map);
        if map.len() >= self.settings.max_sessions {
            return Err(ServerError::TooManySessions(self.settings.max_sessions));
        }
        map.insert(entry.id.clone(), entry.clone());
        Ok(entry)
    }

    /// The live session `id` of connection `conn` (another connection's session
    /// is unknown to it).
    pub fn get(&self, id: &str, conn: &str) -> Result<Arc<SessionEntry>, ServerError> {
        self.sweep();
        let e = lock(&self.map)
            .get(id)
            .filter(|e| e.conn == conn)
            .cloned()
            .ok_or_else(|| ServerError::UnknownSession(id.to_string()))?;
        e.touch();
        Ok(e)
    }

    /// Ends session `id` of connection `conn`: stops its running request and
    /// drops it (its temp dir goes with it once the request has returned).
    pub fn end(&self, id: &str, conn: &str) -> Result<(), ServerError> {
        let e = {
            let mut map = lock(&self.map);
            if map.get(id).is_none_or(|e| e.conn != conn) {
                return Err(ServerError::UnknownSession(id.to_string()));
            }
            map.remove(id)
                .ok_or_else(|| ServerError::UnknownSession(id.to_string()))?
        };
        Self::stop(e);
        Ok(())
    }

    /// Ends every session of connection `conn`; returns their ids.
    pub fn end_connection(&self, conn: &str) -> Vec<String> {
        let ended: Vec<Arc<SessionEntry>> = {
            let mut map = lock(&self.map);
            let ids: Vec<String> = map
                .values()
                .filter(|e| e.conn == conn)
                .map(|e| e.id.clone())
                .collect();
            ids.iter().filter_map(|id| map.remove(id)).collect()
        };
        let ids = ended.iter().map(|e| e.id.clone()).collect();
        for e in ended {
            Self::stop(e);
        }
        ids
    }

    /// Stops a removed session's running request (if any), then lets it drop.
    fn stop(e: Arc<SessionEntry>) {
        if e.session.try_lock().is_ok() {
            // Idle: dropping it here removes its temp dir now.
            return;
        }
        e.interrupter.interrupt();
        // Repeat while a request still holds the session: an interrupt that
        // lands just before a request starts is cleared by it.
        let _ = std::thread::Builder::new()
            .name("safesh-session-end".into())
            .spawn(move || {
                for _ in 0..250 {
                    if e.session.try_lock().is_ok() {
                        return;
                    }
                    e.interrupter.interrupt();
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
    }

    /// Changes the cwd and/or environment of session `id` of connection `conn`
    /// (waits for a running request).
    pub fn update(
        &self,
        id: &str,
        conn: &str,
        cwd: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Result<PathBuf, ServerError> {
        let e = self.get(id, conn)?;
        let cwd = cwd.map(|c| self.usable_cwd(c)).transpose()?;
        let mut guard = lock(&e.session);
        let now = match (&e.remote, guard.as_mut()) {
            (Some(r), _) => r.update(cwd, env.clone())?,
            (None, Some(s)) => {
                if let Some(c) = cwd {
                    s.set_cwd(c);
                }
                for (k, v) in &env {
                    s.set_env(k, v);
                }
                s.cwd().to_path_buf()
            }
            (None, None) => return Err(ServerError::UnknownSession(id.to_string())),
        };
        drop(guard);
        e.remember_cwd(&now);
        let mut stored = lock(&e.env);
        for (k, v) in env {
            stored.retain(|(n, _)| *n != k);
            stored.push((k, v));
        }
        Ok(now)
    }

    /// Ends sessions idle for longer than the settings allow; returns their ids.
    /// A session with a request running is never idle.
    pub fn sweep(&self) -> Vec<String> {
        self.sweep_older_than(self.settings.idle)
    }

    /// Ends sessions idle for longer than `idle`; returns their ids.
    pub fn sweep_older_than(&self, idle: Duration) -> Vec<String> {
        let mut map = lock(&self.map);
        let expired: Vec<String> = map
            .iter()
            .filter(|(_, e)| e.session.try_lock().is_ok() && lock(&e.last_used).elapsed() > idle)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &expired {
            map.remove(k);
        }
        drop(map);
        if let Some(f) = &self.on_expire {
            for k in &expired {
                f(k);
            }
        }
        expired
    }

    /// Live session ids.
    pub fn ids(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.map).keys().cloned().collect();
        v.sort();
        v
    }

    /// Number of live sessions.
    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// True when no session is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops every running request and ends every session.
    pub fn shutdown(&self) {
        let all: Vec<Arc<SessionEntry>> = lock(&self.map).drain().map(|(_, e)| e).collect();
        for e in all {
            e.interrupter.interrupt();
        }
    }
}
