//! Helpers shared by the test modules.

use safesh_label::{Atom, Clause, Confidentiality, Integrity, Label};
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A fresh temp dir holding a state dir (`state/`, not yet created) and a work
/// dir (`work/`) for the labeled files.
pub struct Dirs {
    _tmp: tempfile::TempDir,
    pub state: PathBuf,
    pub work: PathBuf,
}

pub fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    Dirs {
        _tmp: tmp,
        state,
        work,
    }
}

/// A label secret to `name`, vouched for by `who`.
pub fn secret(name: &str, who: Atom) -> Label {
    Label::new(
        Confidentiality(BTreeSet::from([Clause::single(Atom::Secret(name.into()))])),
        Integrity::single(who.clone()),
        safesh_label::AtomSet::from([who]),
    )
}

/// The secret names in a label's confidentiality.
pub fn secrets(label: &Label) -> BTreeSet<String> {
    label
        .confidentiality
        .0
        .iter()
        .flat_map(|c| c.0.iter())
        .filter_map(|a| match a {
            Atom::Secret(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

pub fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}
