//! Persistent state of safesh, shared by every safesh process of the user and kept
//! in the state dir (`$XDG_STATE_HOME/safesh/`), which commands can never write:
//!
//! * [`LabelStore`]: labels of the files safesh wrote, keyed by real path, so a
//!   secret written to a file is still secret when read back — by this process or
//!   another one, now or later;
//! * name labels ([`LabelStore::record_name`]): the label of the word that created a
//!   file, directory or symlink, keyed by the entry's identity (device, inode), so a
//!   name derived from a secret or a download stays labeled in listings and globs;
//! * [`AuditLog`]: every commit-point decision, appended and flushed before the
//!   action, with secret values redacted by a [`Redactor`];
//! * [`ApprovalDb`]: pending and granted approvals, so `safesh approve ID` works
//!   after the requesting process has exited.

mod approvals;
mod audit;
pub mod busy;
mod error;
mod fingerprint;
mod fsutil;
mod generation;
mod labels;
mod names;
mod redact;

pub use approvals::{APPROVALS_DB, ApprovalDb, Decide, StoredApproval};
pub use audit::{
    AUDIT_LOG, AuditLog, AuditRead, CommitPoint, Entry, Filter, LabelBrief, Verdict, render_line,
};
pub use error::StoreError;
pub use fingerprint::Fingerprint;
pub use generation::Generation;
pub use labels::{CHANGED_OUTSIDE, LABELS_DB, LabelStore, Stored, WriteMode};
pub use redact::{MIN_SECRET_LEN, Redactor};
