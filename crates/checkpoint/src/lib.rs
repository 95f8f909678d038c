//! Checkpoints of a project's write roots (agsh §3.3.4).
//!
//! * [`Store::save`]: a content-addressed snapshot (each distinct content stored
//!   once, under its sha256, in one pack file per save; files unchanged since
//!   the newest checkpoint are not read again, so saving an unchanged tree costs
//!   a walk);
//! * [`Store::restore`]: exact (contents, modes, symlinks; files created since
//!   are removed), atomic per file, only inside the allowed roots;
//! * [`Store::diff`], [`Store::list`], [`Store::delete`], retention and a sweep
//!   of unreferenced contents.
//!
//! The store lives in safesh's state dir, which commands cannot write. Several
//! processes may save at once (content by atomic rename, manifests likewise, a
//! shared/exclusive `flock` between saves and sweeps). Callers decide policy:
//! what is excluded or protected ([`Filter`]), whether a restore is allowed (it is
//! a destructive write), and which labels files get back.

mod codec;
mod delta;
mod diff;
mod error;
mod gather;
mod journal;
mod name;
mod objects;
mod pack;
mod restore;
mod store;
mod tree;

pub use diff::{Diff, SavedFile};
pub use error::CheckpointError;
pub use journal::keep_journals;
pub use name::{MAX_NAME, check as check_name};
pub use restore::Restored;
pub use store::{Manifest, RootSnapshot, SaveRequest, Saved, Settings, Store, Summary};
pub use tree::{Entry, Filter, Kind, RelPath, Stamp};

/// The content address of the file at `path` (sha256, hex), or `None` when it
/// cannot be read.
pub(crate) fn objects_hash_of(path: &std::path::Path) -> Option<String> {
    objects::hash_file(path)
}
