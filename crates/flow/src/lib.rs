//! Information flow for safesh: what is secret, where it may go, which side
//! effects need what, and how a human authorizes one.
//!
//! * [`classify`]: file path → [`Label`](safesh_label::Label) (`[labels] secret`,
//!   named labels), environment variable → label (named labels, masks),
//!   [`Classifier::is_secret_path`] for the sandbox.
//! * [`hosts`]: may-flow-to (token brokering): [`HostPolicy::flows_to_host`].
//! * [`trust`]: when a value counts as trusted (integrity, decided from the
//!   algebra; the reasons are in that module).
//! * [`rules`]: exchange rules at commit points: [`Rules::decide`].
//! * [`approvals`]: single-use human approvals of an exact action (the CFC seed's
//!   IntentOnce), [`control`]: the socket `safesh approve ID` talks to.
//! * [`redact`]: whether output may be shown to the model, and the placeholder.
//! * [`scan`]: the confidential files under the roots, for the sandbox to hide.
//! * [`known`]: known secret values, searched for at the sinks (a backstop for
//!   bytes safesh never labelled, such as a key in git's history).
//!
//! This crate decides; it performs no side effect except the control socket.

pub mod approvals;
pub mod classify;
pub mod control;
pub mod hosts;
pub mod known;
pub mod redact;
pub mod rules;
pub mod scan;
pub mod trust;

pub use approvals::{
    ApprovalError, ApprovalRequest, Approvals, Clock, ManualClock, Status, SystemClock,
};
pub use classify::Classifier;
pub use control::{ControlError, ControlServer};
pub use hosts::{FlowDenied, HostPattern, HostPolicy};
pub use known::{Found, HoldBack, KnownSecret, KnownValues};
pub use rules::{
    CommitPoint, CommitRequest, Decision, DestructiveOp, ExecKind, RuleError, Rules, Verdict,
};
pub use scan::{Scanned, SecretScan};
