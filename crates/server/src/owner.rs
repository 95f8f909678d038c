//! Who owns what on one server. A *connection* is a client: a `safesh rpc` or
//! `safesh mcp` stdio process, or one MCP-over-HTTP transport session. A shell
//! session belongs to the connection that started it; a job, its log and a
//! result's spill file belong to their *scope*: the session that made them, or,
//! without a session, the connection. Every lookup names the caller's scope and
//! finds only what that scope owns, so a job id, a session id or a spill path
//! learned from elsewhere is not a key (`UNKNOWN_JOB`/`UNKNOWN_SESSION`).
//!
//! The connection is never taken from the client's parameters: each parameter
//! type's `conn` field is skipped by serde and set by the face ([`Owned`]).

use crate::Server;
use crate::exec::ExecParams;
use crate::service::{
    JobKillParams, JobListParams, JobOutputParams, JobStartParams, SessionEndParams,
    SessionStartParams, SessionUpdateParams,
};
use std::path::{Path, PathBuf};

/// The scope of a request: `s:SESSION` (a session's, made by its connection) or
/// `c:CONN` (the connection's own, without a session).
pub fn scope(conn: &str, session: Option<&str>) -> String {
    match session {
        Some(s) => format!("s:{conn}:{s}"),
        None => format!("c:{conn}"),
    }
}

/// A scope as one safe directory name (spill files, job logs): its characters
/// outside `[A-Za-z0-9_-]` as `%XX`, so two scopes never share a directory.
pub fn scope_dir(scope: &str) -> String {
    let mut out = String::with_capacity(scope.len());
    for b in scope.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `base/<scope_dir(scope)>`.
pub fn scoped(base: &Path, scope: &str) -> PathBuf {
    base.join(scope_dir(scope))
}

/// A request's parameters, told which connection sent them.
pub trait Owned {
    /// Sets the connection (never taken from the client's JSON).
    fn set_conn(&mut self, conn: &str);
}

macro_rules! owned {
    ($($t:ty),*) => {$(
        impl Owned for $t {
            fn set_conn(&mut self, conn: &str) {
                self.conn = conn.to_string();
            }
        }
    )*};
}

owned!(
    ExecParams,
    SessionStartParams,
    SessionEndParams,
    SessionUpdateParams,
    JobStartParams,
    JobListParams,
    JobOutputParams,
    JobKillParams
);

impl Server {
    /// A connection went away (an MCP-over-HTTP session was closed or expired):
    /// its sessions end, every job of it is killed and its idle workers end.
    pub fn end_connection(&self, conn: &str) {
        for id in self.sessions.end_connection(conn) {
            self.jobs.stop_scope(&scope(conn, Some(&id)));
        }
        self.jobs.stop_scope(&scope(conn, None));
        self.end_workers(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_dirs_are_distinct_safe_names() {
        let a = scope_dir(&scope("c-1", Some("s-2")));
        let b = scope_dir(&scope("c-1", None));
        let c = scope_dir(&scope("../x", None));
        assert_ne!(a, b);
        assert!(!c.contains('/') && !c.contains(".."), "{c}");
    }
}
