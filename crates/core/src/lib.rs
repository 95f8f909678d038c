//! The safesh core: sessions, the interpreter, builtins, labeled streams and limits.
//!
//! Every face (CLI, MCP, JSON-RPC) runs scripts through [`Session::exec`]:
//! parse the whole script ([`safesh_syntax`]), interpret it (`interp`), dispatch
//! each simple command to a function, a builtin (`builtins`) or an in-process
//! utility (`registry`, the `safesh-tools-*` crates), and collect a labeled result.

pub mod approval;
pub mod builtins;
/// Refusal codes and the refusal object (defined by the policy, shared by every face).
pub use safesh_policy::verdict as error;
pub mod io;
pub mod limits;
pub mod llm;
pub mod registry;
pub mod session;

mod checkpoints;
pub mod code_host;
pub mod command_gate;
pub mod context;
mod destructive;
mod external;
mod external_reads;
mod fdpath;
mod flow;
mod host;
mod interp;
mod introspect;
mod known;
mod names;
pub mod platform_host;
pub mod precheck;
mod probe;
mod protect_walk;
mod python_cmdline;
pub mod risk;
mod running_writers;
mod tempdir;

pub use approval::{ApprovalAnswer, ApprovalChannel, ApprovalQuestion};
pub use checkpoints::{CheckpointFailure, CheckpointOp};
pub use command_gate::CommandGate;
pub use error::{Details, ErrorCode, Refusal};
pub use io::{StreamConsumer, StreamKind};
pub use known::KnownSource;
pub use limits::Limits;
/// Checkpoint change journals for this process (a server): see
/// [`safesh_checkpoint::keep_journals`].
pub use safesh_checkpoint::keep_journals as keep_checkpoint_journals;
/// The reversible byte escape of words (non-UTF-8 bytes as data), for the faces.
pub use safesh_utils::word_bytes;
pub use session::{ExecOutcome, InputSource, Interrupter, OutputTarget, Session, SessionOptions};
pub use tempdir::sweep_dead as sweep_dead_temp_dirs;
pub use tempdir::{
    remove_process_dir as remove_process_temp_dir, use_process_dir as use_process_temp_dir,
};
