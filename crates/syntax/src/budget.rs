//! What one parse may spend: a size limit checked before anything else, and a
//! cancellation test (the request's deadline, a client's cancel) polled between
//! pieces of work, so a huge or slow script ends with `TIMEOUT` instead of
//! holding a core after its request is gone.

use crate::error::ParseError;

/// The script size accepted when the caller gives none (bytes). Parsing costs about
/// 250 bytes of memory per byte of script (brush-parser's tokens and syntax tree),
/// so this bounds a parse near 1 GiB; agents' scripts are far below it.
pub const DEFAULT_MAX_SCRIPT_BYTES: usize = 4 * 1024 * 1024;

/// The budget for one parse (see the module documentation).
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    /// Scripts longer than this many bytes are refused before parsing
    /// (`LIMIT_EXCEEDED`); 0 means no limit.
    pub max_bytes: usize,
    /// Returns true once the work should stop (deadline passed, request cancelled).
    pub cancelled: &'a dyn Fn() -> bool,
}

fn never() -> bool {
    false
}

impl Default for Budget<'_> {
    fn default() -> Self {
        Budget {
            max_bytes: DEFAULT_MAX_SCRIPT_BYTES,
            cancelled: &never,
        }
    }
}

impl std::fmt::Debug for Budget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl Budget<'_> {
    /// `Err(Cancelled)` once the caller's test says stop.
    pub fn check(&self) -> Result<(), ParseError> {
        if (self.cancelled)() {
            Err(ParseError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// `Err(TooLarge)` when `len` bytes pass the limit.
    pub fn check_size(&self, len: usize) -> Result<(), ParseError> {
        if self.max_bytes > 0 && len > self.max_bytes {
            Err(ParseError::TooLarge {
                size: len,
                limit: self.max_bytes,
            })
        } else {
            Ok(())
        }
    }
}
