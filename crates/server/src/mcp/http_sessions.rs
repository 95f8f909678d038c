//! MCP-over-HTTP transport sessions, bounded: at most `max` live at once
//! (`--max-transport-sessions`, a limit apart from the shell sessions'). A new
//! `initialize` past it closes the least recently used *idle* session
//! ([`Bounded::evict_oldest`]): one with a request in flight ([`Bounded::busy`])
//! or a running job is never closed; when every session is busy the new client
//! is refused (503 with a JSON-RPC error) and nothing ends. An evicted client's
//! next request is told why (404 with a JSON-RPC error, by [`super::http`]). Each session also ends after the server's idle time without
//! a request (rmcp's keep-alive). A session that ends — a
//! client's DELETE, or expiry — takes its shell sessions and jobs with it
//! ([`crate::Server::end_connection`]), so nothing a gone client made lingers.

use crate::Server;
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Evicted session ids remembered (to tell their clients why).
const EVICTED_KEPT: usize = 1024;

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    /// The limit on live transport sessions is reached and every one is busy
    /// (a request in flight or a running job).
    #[error(
        "too many MCP sessions ({0}), and every one has a request or a job running, so none was closed to make room; retry when one is idle, or close one (HTTP DELETE with its Mcp-Session-Id)"
    )]
    Full(usize),
    /// This client's session was closed to make room for a new client.
    #[error(
        "this MCP session was closed to make room for a new client (the server keeps at most {0}; the least recently used goes first) and its shell sessions and jobs ended with it; initialize a new session"
    )]
    Evicted(usize),
    /// rmcp's own session error.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// rmcp's local session manager with a limit, an idle expiry and cleanup.
pub struct Bounded {
    inner: LocalSessionManager,
    max: usize,
    server: Arc<Server>,
    /// When each live session last had a request.
    used: Mutex<HashMap<SessionId, Instant>>,
    /// Sessions closed to make room, newest last.
    evicted: Mutex<VecDeque<String>>,
    /// Requests in flight per session (a POST until its response is sent).
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

/// One request in flight of a transport session: counted while it lives.
pub struct Busy {
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    id: String,
}

impl Busy {
    /// Keeps the guard where it is used (a response body's stream owns it).
    pub fn hold(&self) {}
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut m = crate::shape::lock(&self.in_flight);
        if let Some(n) = m.get_mut(&self.id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.id);
            }
        }
    }
}

impl Bounded {
    /// At most `max` sessions, each ending after `idle` without a request.
    pub fn new(server: Arc<Server>, max: usize, idle: Duration) -> Bounded {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Bounded {
            inner,
            max: max.max(1),
            server,
            used: Mutex::new(HashMap::new()),
            evicted: Mutex::new(VecDeque::new()),
            in_flight: Arc::default(),
        }
    }

    /// Counts a request of session `id` in flight until the returned guard drops.
    pub fn busy(&self, id: &str) -> Busy {
        *crate::shape::lock(&self.in_flight)
            .entry(id.to_string())
            .or_default() += 1;
        Busy {
            in_flight: self.in_flight.clone(),
            id: id.to_string(),
        }
    }

    /// True when session `id` has a request in flight or a running job.
    fn working(&self, id: &SessionId) -> bool {
        crate::shape::lock(&self.in_flight).contains_key(id.as_ref())
            || self.server.jobs.running_of_conn(&super::http_conn(id))
    }

    fn touch(&self, id: &SessionId) {
        crate::shape::lock(&self.used).insert(id.clone(), Instant::now());
    }

    /// True when session `id` was closed to make room.
    pub fn was_evicted(&self, id: &str) -> bool {
        crate::shape::lock(&self.evicted).iter().any(|e| e == id)
    }

    /// Closes the least recently used session that is idle (no request in
    /// flight, no running job; its shell sessions end with it); false when
    /// there is none.
    pub async fn evict_oldest(&self) -> bool {
        let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        let victim = {
            let idle: Vec<SessionId> = live.into_iter().filter(|id| !self.working(id)).collect();
            let used = crate::shape::lock(&self.used);
            idle.into_iter().min_by_key(|id| used.get(id).copied())
        };
        let Some(victim) = victim else {
            return false;
        };
        {
            let mut ev = crate::shape::lock(&self.evicted);
            ev.push_back(victim.to_string());
            while ev.len() > EVICTED_KEPT {
                ev.pop_front();
            }
        }
        let _ = self.close_session(&victim).await;
        true
    }

    /// Live transport sessions.
    pub async fn len(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// True when no session is live.
    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }

    /// True when a new session would pass the limit.
    pub async fn full(&self) -> bool {
        self.len().await >= self.max
    }

    /// The limit.
    pub fn max(&self) -> usize {
        self.max
    }
}

impl SessionManager for Bounded {
    type Error = BoundedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if self.full().await && !self.evict_oldest().await {
            return Err(BoundedError::Full(self.max));
        }
        let (id, t) = self.inner.create_session().await?;
        self.touch(&id);
        Ok((id, t))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let r = self.inner.close_session(id).await;
        crate::shape::lock(&self.used).remove(id);
        let server = self.server.clone();
        let conn = super::http_conn(id);
        let _ = tokio::task::spawn_blocking(move || server.end_connection(&conn)).await;
        Ok(r?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No external store: a session the server no longer knows is gone (404).
        Ok(RestoreOutcome::NotSupported)
    }
}
