//! Shell pattern matching (`fnmatch`) for `find -name`, `ls -I` and `tree -I`,
//! delegated to the C library so bracket expressions and escapes match GNU exactly.

use std::ffi::CString;

/// True if `name` matches `pat`. `casefold` for `-iname`; `period` makes a
/// leading dot match only explicitly (FNM_PERIOD).
pub fn fnmatch(pat: &[u8], name: &[u8], casefold: bool, period: bool) -> bool {
    let (Ok(p), Ok(n)) = (CString::new(pat), CString::new(name)) else {
        return false;
    };
    let mut flags = 0;
    if casefold {
        flags |= libc::FNM_CASEFOLD;
    }
    if period {
        flags |= libc::FNM_PERIOD;
    }
    // SAFETY: both are valid NUL-terminated strings.
    unsafe { libc::fnmatch(p.as_ptr(), n.as_ptr(), flags) == 0 }
}
