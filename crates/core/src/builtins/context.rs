//! `context` and `history`: the context store and the persistent history in a
//! script. A value keeps its label: `context set` stores the label of the VALUE
//! word (and the PC), `context get` prints it with that label, so a secret read
//! back (by this process or another one) is as secret as the file it came from.

use super::{args_label, out};
use crate::context::{limits, store, store_refusal};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use safesh_context::{ContextError, HistoryLog, HistoryQuery, Item, NewValue, Scope};
use safesh_label::Label;
use serde_json::Value;

const USAGE: &str = "context: usage: context get SCOPE KEY | context set [--json] SCOPE KEY VALUE \
| context delete SCOPE KEY | context list SCOPE [PREFIX]  (scopes: project, session, step, history)";

/// A usage or request error: a message and a status, like bash's builtins.
fn fail(sh: &mut Shell, msg: impl std::fmt::Display, status: i32) -> Exec {
    sh.diag(format!("context: {msg}"));
    sh.set_status(status);
    Ok(())
}

/// The error of a store call: a refusal for a limit or an unusable store, a
/// message and status 1 for a bad request.
fn store_error(sh: &mut Shell, e: ContextError) -> Exec {
    if e.is_request_error() && !matches!(e, ContextError::LimitExceeded { .. }) {
        let usage = matches!(e, ContextError::BadScope(_) | ContextError::BadKey { .. });
        return fail(sh, e, if usage { 2 } else { 1 });
    }
    Err(store_refusal(&e).into())
}

/// How a value is printed: a string raw, anything else as JSON; one line.
fn render(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s}\n"),
        other => format!("{other}\n"),
    }
}

/// `context get|set|delete|list …`.
pub(super) fn context(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let mut args: Vec<&Field> = argv.iter().skip(1).collect();
    let Some(op) = args.first().map(|f| f.text.clone()) else {
        return fail(sh, USAGE.trim_start_matches("context: "), 2);
    };
    args.remove(0);
    let json = op == "set" && args.first().is_some_and(|f| f.text == "--json");
    if json {
        args.remove(0);
    }
    let (Some(config), Some(owners)) = (sh.context_config().cloned(), sh.context_owners()) else {
        return fail(sh, "no context store in this session (it has no policy)", 1);
    };
    let want = match op.as_str() {
        "get" | "delete" => 2,
        "set" => 3,
        "list" => 1,
        _ => return fail(sh, format!("unknown operation {op:?}; {}", &USAGE[9..]), 2),
    };
    if args.len() < want || args.len() > want + usize::from(op == "list") {
        return fail(sh, &USAGE[9..], 2);
    }
    let scope = match Scope::parse(&args[0].text) {
        Ok(s) => s,
        Err(e) => return fail(sh, e, 2),
    };
    let owner = match owners.owner(scope) {
        Ok(o) => o.to_string(),
        Err(e) => return fail(sh, e, 1),
    };
    let store = store(&config)?;
    match op.as_str() {
        "get" => match store.get(scope, &owner, &args[1].text) {
            Ok(Some(item)) => {
                let ok = out(sh, &render(&item.value), &label.join(&item.label));
                sh.set_status(if ok { 0 } else { 141 });
                Ok(())
            }
            Ok(None) => {
                let key = args[1].text.clone();
                fail(sh, format!("{key}: not set in the {scope} scope"), 1)
            }
            Err(e) => store_error(sh, e),
        },
        "set" => {
            let word = args[2];
            let value = if json {
                match serde_json::from_str::<Value>(&word.text) {
                    Ok(v) => v,
                    Err(e) => return fail(sh, format!("--json: the value is not JSON ({e})"), 2),
                }
            } else {
                Value::String(word.text.clone())
            };
            // The value keeps what made it, what chose where it goes, and the
            // PC; the key keeps what chose it (and the PC).
            let key_label = label_of(sh, &args[..2]);
            let value_label = key_label.join(&word.label);
            let new = NewValue {
                value: &value,
                label: &value_label,
                key_label: &key_label,
                tags: &Default::default(),
            };
            if scope == Scope::Step {
                crate::context::mark_step(&owner);
            }
            match store.set(scope, &owner, &args[1].text, new, limits(&config)) {
                Ok(()) => {
                    sh.set_status(0);
                    Ok(())
                }
                Err(e) => store_error(sh, e),
            }
        }
        "delete" => match store.delete(scope, &owner, &args[1].text) {
            Ok(found) => {
                sh.set_status(if found { 0 } else { 1 });
                Ok(())
            }
            Err(e) => store_error(sh, e),
        },
        _ => {
            let prefix = args.get(1).map(|f| f.text.clone());
            match store.list(scope, &owner, prefix.as_deref()) {
                Ok(items) => {
                    let ok = print_keys(sh, &items, &label);
                    sh.set_status(if ok { 0 } else { 141 });
                    Ok(())
                }
                Err(e) => store_error(sh, e),
            }
        }
    }
}

/// The PC and the labels of `words`.
fn label_of(sh: &Shell, words: &[&Field]) -> Label {
    words.iter().fold(sh.pc.clone(), |l, w| l.join(&w.label))
}

/// The keys, one per line, with the labels of what chose them.
fn print_keys(sh: &Shell, items: &[Item], label: &Label) -> bool {
    let text: String = items.iter().map(|i| format!("{}\n", i.key)).collect();
    let label = items
        .iter()
        .fold(label.clone(), |l, i| l.join(&i.key_label));
    text.is_empty() || out(sh, &text, &label)
}

/// `history [-n LIMIT] [--all]`: this session's recent entries (every session's
/// with `--all`), one JSON object per line, oldest first.
pub(super) fn history(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let mut limit = None;
    let mut all = false;
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        match a.text.as_str() {
            "--all" => all = true,
            "-n" => match it.next().and_then(|n| n.text.parse::<usize>().ok()) {
                Some(n) => limit = Some(n),
                None => {
                    sh.diag("history: -n needs a number");
                    sh.set_status(2);
                    return Ok(());
                }
            },
            other => {
                sh.diag(format!(
                    "history: unknown argument {other:?}; usage: history [-n LIMIT] [--all]"
                ));
                sh.set_status(2);
                return Ok(());
            }
        }
    }
    let Some(config) = sh.context_config().cloned() else {
        sh.diag("history: no history in this session (it has no policy)");
        sh.set_status(1);
        return Ok(());
    };
    let Some(dir) = config.state_dir.as_deref() else {
        sh.diag("history: no state directory ($XDG_STATE_HOME/safesh) is known");
        sh.set_status(1);
        return Ok(());
    };
    let q = HistoryQuery {
        session: if all {
            None
        } else {
            sh.context_session.as_deref().map(str::to_string)
        },
        since: None,
        limit,
    };
    let entries = HistoryLog::new(dir)
        .read(&q)
        .map_err(|e| store_refusal(&e))?;
    let text: String = entries
        .into_iter()
        .map(|e| format!("{}\n", serde_json::to_value(e).unwrap_or(Value::Null)))
        .collect();
    let ok = text.is_empty() || out(sh, &text, &label);
    sh.set_status(if ok { 0 } else { 141 });
    Ok(())
}
