//! Redaction for the model: whether output may be shown, and the placeholder.
//!
//! Output may be shown to the model exactly when its label may flow to the
//! pseudo-host `model`: public output always; secret output only when every
//! confidentiality clause names a label whose `may_flow_to` lists `"model"`
//! (a human's explicit choice, e.g. a non-sensitive internal token). Generic
//! `secret` data is never shown. The placeholder names the secret classes and
//! where the bytes came from: `[redacted: 3 lines, secret(.env)]`.

use crate::hosts::{HostPolicy, clause_names};
use safesh_label::{Atom, Label};
use std::collections::BTreeSet;
use std::path::Path;

/// The pseudo-host that stands for the model's context.
pub const MODEL: &str = "model";

/// `None` when `label` may be shown to the model, else the placeholder for
/// `lines` lines of it. Only the origins `secret_origin` vouches for are named
/// (the secret files and variables themselves — never every file joined in, and
/// never a path built from data, which may be the secret): files relative to
/// `base` (or `~`) when under it, variables as `$NAME`. The line count is rounded
/// up to a power of two (the size of hidden output is a channel).
pub fn summary(
    hosts: &HostPolicy,
    label: &Label,
    lines: usize,
    base: &Path,
    home: Option<&Path>,
    secret_origin: &dyn Fn(&Atom) -> bool,
) -> Option<String> {
    if hosts.flows_to_host(label, MODEL).is_ok() {
        return None;
    }
    let classes: BTreeSet<String> = label
        .confidentiality
        .0
        .iter()
        .map(|c| clause_names(c).join("|"))
        .collect();
    let origins: Vec<String> = label
        .origins
        .iter()
        .filter(|o| secret_origin(o))
        .filter_map(|o| match o {
            Atom::File(p) => Some(show_path(Path::new(&**p), base, home)),
            Atom::Env(n) => Some(format!("${n}")),
            _ => None,
        })
        .collect();
    let classes = classes.into_iter().collect::<Vec<_>>().join("+");
    let what = if origins.is_empty() {
        classes
    } else {
        format!("{classes}({})", origins.join(", "))
    };
    if lines == 0 {
        // No count (a stream whose hidden runs are not counted, e.g. a job log).
        return Some(format!("[redacted: {what}]"));
    }
    let rounded = lines.max(1).next_power_of_two();
    if rounded == 1 {
        return Some(format!("[redacted: 1 line, {what}]"));
    }
    Some(format!("[redacted: up to {rounded} lines, {what}]"))
}

fn show_path(p: &Path, base: &Path, home: Option<&Path>) -> String {
    if let Ok(rel) = p.strip_prefix(base)
        && !rel.as_os_str().is_empty()
    {
        return rel.display().to_string();
    }
    if let Some(h) = home
        && let Ok(rel) = p.strip_prefix(h)
    {
        return format!("~/{}", rel.display());
    }
    p.display().to_string()
}
