//! `alias` and `unalias`. An alias is expanded when a simple command whose
//! first word is its name runs (with `shopt -s expand_aliases`, as bash wants in
//! scripts): the alias text and the rest of the command, as written, run like
//! `eval` of that text (the exec commit point decides on the alias's label).
//! Unlike bash, expansion happens when the command runs, not when it is read.

use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};

/// `'text'` with bash's quoting of `'` (`'\''`).
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// True for a name bash accepts for an alias.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.chars().any(|c| {
            matches!(
                c,
                '/' | '$' | '`' | '=' | '\'' | '"' | '\\' | ' ' | '\t' | '\n'
            )
        })
        && !name.chars().any(|c| "|&;()<>".contains(c))
}

pub(super) fn alias(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let mut args = &argv[1..];
    let mut print_all = args.is_empty();
    while let Some(a) = args.first() {
        match a.text.as_str() {
            "-p" => print_all = true,
            "--" => {
                args = &args[1..];
                break;
            }
            _ => break,
        }
        args = &args[1..];
    }
    let mut text = String::new();
    if print_all {
        for (name, (value, _)) in &sh.aliases {
            text.push_str(&format!("alias {name}={}\n", single_quoted(value)));
        }
    }
    let mut status = 0;
    let mut l = label.clone();
    for a in args {
        match a.text.split_once('=') {
            Some((name, value)) if valid_name(name) => {
                sh.aliases
                    .insert(name.to_string(), (value.to_string(), a.label.join(&sh.pc)));
            }
            Some((name, _)) => {
                sh.diag(format!("alias: `{name}': invalid alias name"));
                status = 1;
            }
            None => match sh.aliases.get(&a.text) {
                Some((value, vl)) => {
                    l.join_assign(vl);
                    text.push_str(&format!("alias {}={}\n", a.text, single_quoted(value)));
                }
                None => {
                    sh.diag(format!("alias: {}: not found", a.text));
                    status = 1;
                }
            },
        }
    }
    if print_all {
        for (_, vl) in sh.aliases.values() {
            l.join_assign(vl);
        }
    }
    if !text.is_empty() {
        out(sh, &text, &l);
    }
    sh.set_status(status);
    Ok(())
}

pub(super) fn unalias(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut status = 0;
    for a in &argv[1..] {
        if a.text == "-a" {
            sh.aliases.clear();
            continue;
        }
        if sh.aliases.remove(&a.text).is_none() {
            sh.diag(format!("unalias: {}: not found", a.text));
            status = 1;
        }
    }
    sh.set_status(status);
    Ok(())
}

/// Runs `text` (an alias expanded with the rest of its command) as `eval` would,
/// labeled with `label`.
pub(crate) fn run_expanded(sh: &mut Shell, text: String, label: safesh_label::Label) -> Exec {
    let argv = [
        Field {
            text: "eval".into(),
            label: sh.code_label.clone(),
        },
        Field { text, label },
    ];
    super::flow::eval(sh, &argv)
}
