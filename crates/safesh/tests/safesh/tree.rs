//! Snapshots of a directory tree, for cases marked `#! files`.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// One entry of a tree (mtimes are deliberately not compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory with its permission bits.
    Dir(u32),
    /// A regular file with its permission bits and content.
    File(u32, Vec<u8>),
    /// A symbolic link and its target (temp dir replaced by the placeholder).
    Symlink(String),
    /// Anything else (fifo, socket…).
    Other,
}

/// Relative path → entry, sorted.
pub type Tree = BTreeMap<String, Entry>;

/// Snapshot everything under `root`, replacing `root` in link targets with `placeholder`.
pub fn snapshot(root: &Path, placeholder: &str) -> Tree {
    let mut tree = Tree::new();
    walk(root, root, placeholder, &mut tree);
    tree
}

fn walk(root: &Path, dir: &Path, placeholder: &str, tree: &mut Tree) {
    let Ok(rd) = fs::read_dir(dir) else {
        return;
    };
    for entry in rd.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(&path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            let root_s = root.to_string_lossy();
            tree.insert(rel, Entry::Symlink(target.replace(&*root_s, placeholder)));
        } else if ft.is_dir() {
            tree.insert(rel, Entry::Dir(mode));
            walk(root, &path, placeholder, tree);
        } else if ft.is_file() {
            let content = fs::read(&path).unwrap_or_default();
            tree.insert(rel, Entry::File(mode, content));
        } else {
            tree.insert(rel, Entry::Other);
        }
    }
}

/// Human-readable differences between the expected (bash) and actual (safesh) trees.
pub fn diff(expected: &Tree, actual: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for (path, e) in expected {
        match actual.get(path) {
            None => out.push(format!("  missing in safesh: {path} ({})", describe(e))),
            Some(a) if a != e => out.push(format!(
                "  differs: {path}\n    bash:   {}\n    safesh: {}",
                describe(e),
                describe(a)
            )),
            Some(_) => {}
        }
    }
    for (path, a) in actual {
        if !expected.contains_key(path) {
            out.push(format!("  only in safesh: {path} ({})", describe(a)));
        }
    }
    out
}

fn describe(e: &Entry) -> String {
    match e {
        Entry::Dir(m) => format!("dir {m:o}"),
        Entry::File(m, c) => {
            let text = String::from_utf8_lossy(c);
            let mut shown: String = text.chars().take(120).collect();
            if shown.len() < text.len() {
                shown.push('…');
            }
            format!("file {m:o}, {} bytes: {shown:?}", c.len())
        }
        Entry::Symlink(t) => format!("symlink -> {t}"),
        Entry::Other => "special file".into(),
    }
}
