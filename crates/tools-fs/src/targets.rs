//! Operand handling shared by `cp`, `mv` and friends: `SRC DST`, `SRC... DIR`,
//! `-t DIR` and `-T`.

use crate::common::{base_name, join_bytes, quote};
use safesh_utils::UtilCtx;

/// Pairs of (source, destination) as given/derived, or a usage error message
/// with whether to print the "Try --help" hint.
pub fn pairs(
    ctx: &UtilCtx<'_>,
    ops: &[String],
    target_dir: Option<&str>,
    no_target_dir: bool,
) -> Result<Vec<(String, String)>, (String, bool)> {
    let into = |dir: &str, srcs: &[String]| -> Vec<(String, String)> {
        srcs.iter()
            .map(|s| {
                let d = join_bytes(dir.as_bytes(), base_name(s.as_bytes()));
                (s.clone(), String::from_utf8_lossy(&d).into_owned())
            })
            .collect()
    };
    if let Some(t) = target_dir {
        if ops.is_empty() {
            return Err(("missing file operand".into(), true));
        }
        if !ctx.probe(t, true).is_some_and(|m| m.is_dir()) {
            return Err((
                format!("target directory {}: Not a directory", quote(t)),
                false,
            ));
        }
        return Ok(into(t, ops));
    }
    match ops {
        [] => Err(("missing file operand".into(), true)),
        [one] => Err((
            format!("missing destination file operand after {}", quote(one)),
            true,
        )),
        [src, dst] if no_target_dir || !ctx.probe(dst, true).is_some_and(|m| m.is_dir()) => {
            Ok(vec![(src.clone(), dst.clone())])
        }
        _ => {
            let Some((dir, srcs)) = ops.split_last() else {
                return Err(("missing file operand".into(), true));
            };
            if no_target_dir {
                return Err((
                    format!(
                        "extra operand {}",
                        quote(ops.get(2).map_or("", String::as_str))
                    ),
                    true,
                ));
            }
            if !ctx.probe(dir, true).is_some_and(|m| m.is_dir()) {
                return Err((format!("target {}: Not a directory", quote(dir)), false));
            }
            Ok(into(dir, srcs))
        }
    }
}

/// True if `dst` lies inside `src` (both resolved through existing parents).
pub fn inside(ctx: &UtilCtx<'_>, src: &str, dst: &str) -> bool {
    let Some(s) = ctx.canonical(src) else {
        return false;
    };
    let d = ctx.resolve(dst);
    let parent = d.parent().and_then(|p| ctx.canonical(p));
    match parent {
        Some(p) => p == s || p.starts_with(&s),
        None => false,
    }
}
