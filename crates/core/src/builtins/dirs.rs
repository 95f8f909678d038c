//! Directory builtins: `cd`, `pwd`, `pushd`, `popd`.

use super::{args_label, out, out_or_fail};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use safesh_label::Label;
use std::path::{Path, PathBuf};

/// Lexically normalizes `p` (`a/./b/../c` → `a/c`), as `cd` does without `-P`.
fn normalize(p: &Path) -> PathBuf {
    let out = crate::host::normalize(p);
    if out.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        out
    }
}

/// The label of what prints the working directory: the words that chose it and
/// the labels of the names along its path (a directory created by `mkdir "$n"`).
fn cwd_shown_label(sh: &Shell) -> Label {
    sh.cwd_label.join(&sh.path_names_label(&sh.cwd))
}

/// `keep`: the new directory's path still says what the old one's did (a
/// relative `cd`, or `pushd`, whose stack keeps the old path).
fn change_dir_keeping(
    sh: &mut Shell,
    target: &str,
    label: &Label,
    keep: bool,
) -> Result<bool, crate::interp::Stop> {
    let before = sh.cwd_label.clone();
    let old_label = cwd_shown_label(sh);
    let ok = change_dir(sh, target, label, &old_label)?;
    if ok {
        sh.cwd_label = if keep || !target.starts_with('/') {
            before.join(label)
        } else {
            label.clone()
        };
        let shown = cwd_shown_label(sh);
        let _ = sh.vars.set(
            "PWD",
            safesh_utils::word_bytes::word_from_path(&sh.cwd).into_owned(),
            shown,
        );
    }
    Ok(ok)
}

fn change_dir(
    sh: &mut Shell,
    target: &str,
    label: &Label,
    old_label: &Label,
) -> Result<bool, crate::interp::Stop> {
    let dest = normalize(&sh.cwd.join(safesh_utils::word_bytes::word_to_path(target)));
    // Outside the read roots: a refusal that stops the script (nothing there can
    // be used anyway). Decided on the directory the walk reaches, so a symlink
    // flipped after the check cannot take the script outside.
    Ok(match sh.resolve_dir(&dest)? {
        Ok(_) => {
            let old = safesh_utils::word_bytes::word_from_path(&sh.cwd).into_owned();
            sh.cwd = dest;
            let _ = sh.vars.set("OLDPWD", old, old_label.join(label));
            let _ = sh.vars.set(
                "PWD",
                safesh_utils::word_bytes::word_from_path(&sh.cwd).into_owned(),
                label.clone(),
            );
            true
        }
        Err(e) => {
            sh.diag(format!("cd: {target}: {}", safesh_utils::io_error_text(&e)));
            false
        }
    })
}

pub(super) fn cd(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args: Vec<&Field> = argv[1..]
        .iter()
        .filter(|f| !matches!(f.text.as_str(), "-L" | "-P" | "--"))
        .collect();
    if args.len() > 1 {
        sh.diag("cd: too many arguments");
        sh.set_status(1);
        return Ok(());
    }
    let mut label = args_label(sh, argv);
    let target = match args.first() {
        None => {
            let home = sh.var_str("HOME");
            if home.is_empty() {
                sh.diag("cd: HOME not set");
                sh.set_status(1);
                return Ok(());
            }
            home
        }
        Some(f) if f.text == "-" => {
            let old = sh.var_str("OLDPWD");
            if old.is_empty() {
                sh.diag("cd: OLDPWD not set");
                sh.set_status(1);
                return Ok(());
            }
            if let Some(v) = sh.vars.get("OLDPWD") {
                label = label.join(&v.shown_label());
            }
            out(sh, &format!("{old}\n"), &label);
            old
        }
        Some(f) => f.text.clone(),
    };
    let ok = change_dir_keeping(sh, &target, &label, false)?;
    sh.set_status(if ok { 0 } else { 1 });
    Ok(())
}

pub(super) fn pwd(sh: &mut Shell, argv: &[Field]) -> Exec {
    // The last of -L and -P wins (`env pwd -L` is `pwd -P -L`).
    let mut physical = false;
    for f in argv.iter().skip(1) {
        match f.text.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && flags.bytes().all(|c| matches!(c, b'L' | b'P')) => {
                physical = flags.ends_with('P');
            }
            _ => break,
        }
    }
    let p = if physical {
        // The directory reached now, decided on (a flipped symlink on the way
        // that leads out of the roots is refused, never printed).
        match sh.resolve_dir(&sh.cwd.clone())? {
            Ok(real) => real,
            Err(e) => {
                sh.diag(format!("pwd: {}", safesh_utils::io_error_text(&e)));
                sh.set_status(1);
                return Ok(());
            }
        }
    } else {
        sh.cwd.clone()
    };
    let label = args_label(sh, argv).join(&cwd_shown_label(sh));
    let label = if physical {
        label.join(&sh.path_names_label(&p))
    } else {
        label
    };
    if out_or_fail(sh, "pwd", &format!("{}\n", p.to_string_lossy()), &label) {
        sh.set_status(0);
    }
    Ok(())
}

fn print_stack(sh: &Shell, label: &Label) {
    let (parts, label) = stack_entries(sh, label, false);
    out(sh, &format!("{}\n", parts.join(" ")), &label);
}

/// The directory stack, the working directory first (`~` for `$HOME` unless
/// `long`), with the label of what it shows.
fn stack_entries(sh: &Shell, label: &Label, long: bool) -> (Vec<String>, Label) {
    let mut parts = vec![safesh_utils::word_bytes::word_from_path(&sh.cwd).into_owned()];
    parts.extend(sh.dir_stack.iter().rev().cloned());
    // (The stack's entries were working directories: `cwd_label` kept theirs.)
    let label = parts.iter().fold(label.join(&cwd_shown_label(sh)), |l, p| {
        l.join(&sh.path_names_label(std::path::Path::new(p)))
    });
    let home = sh.var_str("HOME");
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| match p.strip_prefix(&home) {
            Some(rest)
                if !long && !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) =>
            {
                format!("~{rest}")
            }
            _ => p,
        })
        .collect();
    (parts, label)
}

/// `dirs [-clpv] [+N|-N]`: shows (or clears) the directory stack.
pub(super) fn dirs(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let (mut long, mut per_line, mut numbered) = (false, false, false);
    let mut index: Option<&str> = None;
    for a in &argv[1..] {
        let t = a.text.as_str();
        if (t.starts_with('+') || t.starts_with('-'))
            && t[1..].chars().all(|c| c.is_ascii_digit())
            && t.len() > 1
        {
            index = Some(t);
            continue;
        }
        match t.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && flags.chars().all(|c| "clpv".contains(c)) => {
                for c in flags.chars() {
                    match c {
                        'c' => sh.dir_stack.clear(),
                        'l' => long = true,
                        'p' => per_line = true,
                        _ => numbered = true,
                    }
                }
                if flags.contains('c') {
                    sh.set_status(0);
                    return Ok(());
                }
            }
            _ => {
                sh.diag(format!("dirs: {t}: invalid option"));
                sh.set_status(2);
                return Ok(());
            }
        }
    }
    let (parts, label) = stack_entries(sh, &label, long);
    if let Some(ix) = index {
        let n: usize = ix[1..].parse().unwrap_or(usize::MAX);
        let at = if ix.starts_with('+') {
            Some(n)
        } else {
            parts.len().checked_sub(n + 1)
        };
        match at.and_then(|i| parts.get(i)) {
            Some(p) => {
                out(sh, &format!("{p}\n"), &label);
                sh.set_status(0);
            }
            None => {
                sh.diag(format!(
                    "dirs: {}: directory stack index out of range",
                    &ix[1..]
                ));
                sh.set_status(1);
            }
        }
        return Ok(());
    }
    let text = if numbered {
        parts
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i:2}  {p}\n"))
            .collect::<String>()
    } else if per_line {
        parts.iter().map(|p| format!("{p}\n")).collect()
    } else {
        format!("{}\n", parts.join(" "))
    };
    out(sh, &text, &label);
    sh.set_status(0);
    Ok(())
}

pub(super) fn pushd(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let Some(target) = argv.get(1).map(|f| f.text.clone()) else {
        sh.diag("pushd: no other directory");
        sh.set_status(1);
        return Ok(());
    };
    let here = safesh_utils::word_bytes::word_from_path(&sh.cwd).into_owned();
    if change_dir_keeping(sh, &target, &label, true)? {
        sh.dir_stack.push(here);
        print_stack(sh, &label);
        sh.set_status(0);
    } else {
        sh.set_status(1);
    }
    Ok(())
}

pub(super) fn popd(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    match sh.dir_stack.pop() {
        Some(d) => {
            let ok = change_dir_keeping(sh, &d, &label, true)?;
            if ok {
                print_stack(sh, &label);
            }
            sh.set_status(if ok { 0 } else { 1 });
        }
        None => {
            sh.diag("popd: directory stack empty");
            sh.set_status(1);
        }
    }
    Ok(())
}
