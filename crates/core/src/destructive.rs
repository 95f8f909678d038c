//! What a destructive command destroys: its operation and its target words.
//!
//! The destructive commit point (`Shell::commit_command`) asks a human when the
//! target words come from untrusted data (`f=$(curl …); mv "$f" gone.txt`), for
//! in-process utilities and external programs alike. An untrusted PC alone (a
//! condition or `&&` chain that touched downloaded data) gates less: only deletion
//! and the replacement of files that exist — writing to paths the agent named
//! (`tee`, `sed -i`, `>`) is not destruction, and the written file carries the label.

use crate::interp::expand::Field;
use safesh_flow::DestructiveOp;
use std::path::Path;

/// A destructive command: what it does and the words naming what it destroys.
pub(crate) struct Destructive<'a> {
    /// What happens to the targets.
    pub(crate) op: DestructiveOp,
    /// The words naming the paths destroyed (for `mv`, sources and destination).
    pub(crate) targets: Vec<&'a Field>,
    /// The words naming paths that are replaced when they exist (destinations).
    destinations: Vec<&'a Field>,
}

impl<'a> Destructive<'a> {
    /// Reads `argv` (expanded words; `argv[0]` the command); `None` when the
    /// command destroys nothing.
    pub(crate) fn of(argv: &'a [Field]) -> Option<Self> {
        let first = argv.first()?;
        let base = first.text.rsplit('/').next().unwrap_or(&first.text);
        let args = &argv[1..];
        let has_flag = |short: char, long: &str| {
            args.iter().any(|f| {
                f.text == long
                    || f.text.starts_with(&format!("{long}="))
                    || (f.text.starts_with('-')
                        && !f.text.starts_with("--")
                        && f.text[1..].starts_with(|c: char| c.is_ascii_alphabetic())
                        && f.text[1..].contains(short))
            })
        };
        let operands: Vec<&Field> = args
            .iter()
            .filter(|f| !f.text.starts_with('-') || f.text == "-")
            .collect();
        let (op, targets, destinations) = match base {
            "rm" | "rmdir" | "unlink" | "shred" => (DestructiveOp::RmR, operands, Vec::new()),
            // Every source leaves its path; the destination is replaced.
            "mv" => {
                let dest = destination(args, &operands);
                (DestructiveOp::MvOver, operands, dest)
            }
            "cp" | "install" => {
                let dest = destination(args, &operands);
                (DestructiveOp::Overwrite, dest.clone(), dest)
            }
            "ln" if has_flag('f', "--force") => {
                let dest = destination(args, &operands);
                (DestructiveOp::Overwrite, dest.clone(), dest)
            }
            "truncate" | "dd" | "tee" => {
                let files = if base == "dd" {
                    args.iter().filter(|f| f.text.starts_with("of=")).collect()
                } else {
                    operands
                };
                (DestructiveOp::Overwrite, files, Vec::new())
            }
            // In-place edits rewrite every file operand.
            "sed" | "perl" if has_flag('i', "--in-place") => {
                (DestructiveOp::Overwrite, in_place_files(args), Vec::new())
            }
            "find" if args.iter().any(|f| f.text == "-delete") => (
                DestructiveOp::RmR,
                // The start paths, before the expression.
                args.iter()
                    .take_while(|f| !f.text.starts_with(['-', '(', '!']))
                    .collect(),
                Vec::new(),
            ),
            "git" => return git(argv),
            _ => return None,
        };
        Some(Destructive {
            op,
            targets,
            destinations,
        })
    }

    /// Whether an untrusted PC alone (trusted target words) needs a human: for
    /// deletions, and for replacing a file that exists.
    pub(crate) fn gated_by_pc(&self, cwd: &Path) -> bool {
        match self.op {
            DestructiveOp::RmR => true,
            DestructiveOp::MvOver | DestructiveOp::Overwrite => {
                let sources: Vec<&str> = self
                    .targets
                    .iter()
                    .filter(|t| !self.destinations.iter().any(|d| std::ptr::eq(*d, **t)))
                    .map(|t| t.text.as_str())
                    .collect();
                self.destinations
                    .iter()
                    .any(|d| replaces_existing(cwd, &d.text, &sources))
            }
        }
    }
}

/// `git clean` and `git reset --hard` delete or replace files git did not write.
fn git(argv: &[Field]) -> Option<Destructive<'_>> {
    let sub = argv[1..].iter().position(|f| !f.text.starts_with('-'))? + 1;
    let rest = &argv[sub + 1..];
    let destroys = match argv[sub].text.as_str() {
        "clean" => true,
        "reset" => rest.iter().any(|f| f.text == "--hard"),
        "checkout" | "restore" => rest
            .iter()
            .any(|f| f.text == "--" || f.text == "-f" || f.text == "--force"),
        _ => false,
    };
    if !destroys {
        return None;
    }
    // The paths it touches; with none, the whole work tree (named by `.`).
    let mut targets: Vec<&Field> = rest.iter().filter(|f| !f.text.starts_with('-')).collect();
    if targets.is_empty() {
        targets.push(&argv[sub]);
    }
    Some(Destructive {
        op: DestructiveOp::RmR,
        targets,
        destinations: Vec::new(),
    })
}

/// The destination of `mv`/`cp`/`ln`/`install`: the `-t DIR` value, else the last
/// operand (with one operand, `ln -f` names the link in the cwd).
fn destination<'a>(args: &'a [Field], operands: &[&'a Field]) -> Vec<&'a Field> {
    let mut it = args.iter();
    while let Some(f) = it.next() {
        if f.text == "-t" || f.text == "--target-directory" {
            return it.next().into_iter().collect();
        }
        if f.text.starts_with("--target-directory=")
            || (f.text.starts_with("-t") && f.text.len() > 2 && !f.text.starts_with("--"))
        {
            return vec![f];
        }
    }
    operands.last().copied().into_iter().collect()
}

/// True when writing `dest` would replace a file that exists: `dest` itself, or,
/// when it is a directory, the entry each source would take in it.
fn replaces_existing(cwd: &Path, dest: &str, sources: &[&str]) -> bool {
    let dest = dest
        .strip_prefix("--target-directory=")
        .or_else(|| dest.strip_prefix("-t"))
        .unwrap_or(dest);
    let d = cwd.join(dest);
    if exists(&d, true).is_some_and(|dir| dir) {
        return sources.iter().any(|s| {
            Path::new(s)
                .file_name()
                .is_some_and(|n| exists(&d.join(n), false).is_some())
        });
    }
    exists(&d, false).is_some()
}

/// Whether `p` exists (`Some(is a directory)`), from the entry the walk
/// reaches without the kernel following a symlink. Reached through a symlink
/// (flipped or not), the answer is "it exists, not a directory": the change is
/// then gated as one that replaces a file, whatever is there, so the gate
/// tells nothing about a file the script may not look at.
fn exists(p: &Path, follow: bool) -> Option<bool> {
    let entry = safesh_utils::beneath::resolve(p, follow).ok()?;
    if entry.real() != safesh_utils::beneath::lexical(p) {
        return Some(false);
    }
    entry.exists().then(|| entry.is_dir())
}

/// The files an in-place `sed -i`/`perl -i` rewrites: the operands, without the
/// values of `-e`/`-f` and without the script operand when no `-e`/`-f` gave it.
fn in_place_files(args: &[Field]) -> Vec<&Field> {
    let mut files = Vec::new();
    let mut scripted = false;
    let mut skip_value = false;
    for f in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        match f.text.as_str() {
            "-e" | "-f" | "--expression" | "--file" => {
                scripted = true;
                skip_value = true;
            }
            t if t.starts_with("--expression=") || t.starts_with("--file=") => scripted = true,
            // `-pie 'code'`: the value follows the cluster.
            t if t.starts_with('-')
                && !t.starts_with("--")
                && t.ends_with(['e', 'f'])
                && t.len() > 2 =>
            {
                scripted = true;
                skip_value = true;
            }
            t if t.starts_with('-') && t != "-" => {}
            _ => files.push(f),
        }
    }
    if !scripted && !files.is_empty() {
        files.remove(0);
    }
    files
}
