//! MCP-over-HTTP transport sessions, bounded: at most `max` live at once (a new
//! `initialize` past it is refused with 503 by [`super::http`], and by
//! [`Bounded::create_session`] as a backstop), each ending after the server's
//! idle time without a request (rmcp's keep-alive). A session that ends — a
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
use std::sync::Arc;
use std::time::Duration;

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    /// The limit on live transport sessions is reached.
    #[error(
        "too many MCP sessions ({0}); close one (HTTP DELETE with its Mcp-Session-Id) or wait for an idle one to expire"
    )]
    Full(usize),
    /// rmcp's own session error.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// rmcp's local session manager with a limit, an idle expiry and cleanup.
pub struct Bounded {
    inner: LocalSessionManager,
    max: usize,
    server: Arc<Server>,
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
        }
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
        if self.full().await {
            return Err(BoundedError::Full(self.max));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let r = self.inner.close_session(id).await;
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
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
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
