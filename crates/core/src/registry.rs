//! The in-process utilities, assembled from the tool family crates.

use safesh_utils::UtilFn;
use std::collections::HashMap;
use std::sync::LazyLock;

static TABLE: LazyLock<HashMap<&'static str, UtilFn>> = LazyLock::new(|| {
    let families: [&[(&str, UtilFn)]; 7] = [
        safesh_tools_text::UTILS,
        safesh_tools_data::UTILS,
        safesh_tools_regex::UTILS,
        safesh_tools_awk::UTILS,
        safesh_tools_jq::UTILS,
        safesh_tools_fs::UTILS,
        safesh_tools_net::UTILS,
    ];
    families.iter().flat_map(|f| f.iter().copied()).collect()
});

/// The utility called `name`.
pub fn lookup(name: &str) -> Option<UtilFn> {
    TABLE.get(name).copied()
}

/// All utility names, sorted.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<_> = TABLE.keys().copied().collect();
    v.sort_unstable();
    v
}
