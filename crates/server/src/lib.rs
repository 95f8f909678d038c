//! The safesh agent faces: how agents reach safesh.
//!
//! - [`shape`]: output shaping every model-facing face uses (modes, cap, spill
//!   file, binary detection, invalid UTF-8).
//! - [`sessions`]: named sessions (state kept between calls, idle expiry, a limit).
//! - [`jobs`]: background jobs (bounded ring + log file, offsets, kill, follow).
//! - [`service`]: the operations shared by the faces, on one [`Server`].
//! - [`mcp`]: the MCP server (`safesh mcp`, stdio or streamable HTTP).
//! - [`rpc`]: the JSON-RPC 2.0 agent mode (`safesh rpc`).
//! - [`worker`] / [`worker_main`]: requests in worker processes (the isolation
//!   model: a crash or an allocation abort costs one request, not the server);
//!   [`worker_remote`]: long-lived workers holding a session or a job.
//! - [`envelope`]: `meta`, `payload`, `provenance` of every exec-style result.
//! - [`pipeline_face`]: `pipeline` (JSON-RPC and MCP) over `safesh_pipeline`.
//! - [`task_face`]: `task.run`/`task.list` and MCP `task_run`/`task_list`.

pub mod checkpoint_face;
pub mod code_face;
pub mod context_face;
pub mod error;
pub mod exec;
pub mod ids;
pub mod jobs;
pub mod owner;
pub mod pool;
pub mod service;
pub mod sessions;
pub mod settings;
pub mod shape;
pub mod spill;
pub mod wire;
pub mod worker;
mod worker_async;
mod worker_converse;
mod worker_fresh;
pub mod worker_main;
mod worker_pipes;
pub mod worker_remote;
mod worker_session;

pub use error::ServerError;
pub use service::Server;
pub use settings::Settings;
pub mod commands;
pub mod envelope;
pub mod mcp;
pub mod piped;
pub mod pipeline_face;
pub mod project_face;
pub mod rpc;
pub mod schemas;
pub mod task_face;
pub mod verify_face;
