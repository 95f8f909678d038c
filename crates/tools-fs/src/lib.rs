//! In-process utilities: FAMILY DESCRIPTION.

use safesh_utils::UtilFn;

/// The utilities of this crate, by name.
pub static UTILS: &[(&str, UtilFn)] = &[];
