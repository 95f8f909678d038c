//! safesh's context store and persistent history, shared by every safesh process
//! of a user (MCP server, `safesh rpc`, the CLI) through one SQLite file in the
//! state dir, `$XDG_STATE_HOME/safesh/context.db` (beside `labels.db`, with the
//! same conventions: 0600, WAL, a busy timeout).
//!
//! * [`ContextStore`]: scoped key–value pairs with JSON values. Every value keeps
//!   its [`Label`](safesh_label::Label) in the same row, so a value set from a
//!   secret is still secret when read back, in any process. Scopes ([`Scope`]):
//!   `project` (per project root, outlives processes), `session` (per server
//!   session, deleted when it ends), `step` (cleared between steps) and `history`
//!   (read-only to callers).
//! * [`HistoryLog`]: one [`HistoryEntry`] per script a face ran, one JSON line
//!   each in `history.jsonl` (one `O_APPEND` write, no fsync, no database open on
//!   the CLI's path), compacted to the newest `[history] max_entries`. Never a
//!   secret value.

mod db;
mod error;
mod history;
mod scope;
mod store;

pub use error::ContextError;
pub use history::{
    DEFAULT_LIMIT, HISTORY_LOG, HistoryConfig, HistoryEntry, HistoryLog, HistoryQuery,
};
pub use scope::{MAX_KEY_BYTES, Scope, check_key};
pub use store::{CONTEXT_DB, ContextStore, Item, Limits, NewValue, Owners, now_unix_ms};
