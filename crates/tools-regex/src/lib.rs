//! In-process utilities: the regular-expression family (`grep`, `sed`), faithful
//! to GNU grep 3.8 and GNU sed 4.9 in the C locale.

pub mod glob;
pub mod grep;
pub mod matcher;
pub mod sed;

use safesh_utils::UtilFn;

/// The utilities of this crate, by name.
pub static UTILS: &[(&str, UtilFn)] = &[
    ("egrep", grep::egrep),
    ("fgrep", grep::fgrep),
    ("grep", grep::grep),
    ("sed", sed::sed),
];
