//! The command catalogue for `commands.list` / `commands.describe`: the shell
//! builtins and in-process utilities this build has, each with a one-line description.

use serde_json::{Value, json};

/// One-line descriptions of the common commands (others get a generic line).
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("awk", "pattern scanning and text processing language"),
    ("base64", "encode or decode base64"),
    ("basename", "strip directory and suffix from a path"),
    ("cat", "concatenate files to stdout"),
    ("cd", "change the working directory"),
    ("chmod", "change file mode bits"),
    ("comm", "compare two sorted files line by line"),
    ("cp", "copy files and directories"),
    ("cut", "select fields or bytes from each line"),
    ("date", "print or format the date and time"),
    ("diff", "compare files line by line"),
    ("dirname", "strip the last component of a path"),
    ("du", "estimate file space usage"),
    ("echo", "print arguments"),
    (
        "env",
        "print the environment or run a command with a changed one",
    ),
    ("export", "mark variables for export to commands"),
    ("find", "search a directory tree"),
    ("grep", "print lines matching a pattern"),
    ("head", "print the first lines of files"),
    ("jq", "JSON processor"),
    ("ln", "make links between files"),
    ("ls", "list directory contents"),
    ("md5sum", "compute MD5 checksums"),
    ("mkdir", "make directories"),
    ("mktemp", "create a temporary file or directory"),
    ("mv", "move or rename files"),
    ("nl", "number lines"),
    ("paste", "merge lines of files"),
    ("printf", "format and print data"),
    ("pwd", "print the working directory"),
    ("read", "read a line from stdin into variables"),
    ("readlink", "print the target of a symbolic link"),
    ("realpath", "print the resolved absolute path"),
    ("rev", "reverse each line"),
    ("rm", "remove files or directories"),
    ("rmdir", "remove empty directories"),
    ("sed", "stream editor"),
    ("seq", "print a sequence of numbers"),
    ("sha256sum", "compute SHA-256 checksums"),
    ("sleep", "wait for a number of seconds"),
    ("sort", "sort lines of text"),
    ("split", "split a file into pieces"),
    ("stat", "display file status"),
    ("tac", "print lines in reverse order"),
    ("tail", "print the last lines of files"),
    (
        "context",
        "the shared context store: context get|set|delete|list SCOPE KEY [VALUE]",
    ),
    (
        "history",
        "the persistent history of scripts run through safesh (one JSON line each)",
    ),
    ("tee", "copy stdin to files and stdout"),
    ("test", "evaluate a conditional expression"),
    ("touch", "change file timestamps or create empty files"),
    ("tr", "translate or delete characters"),
    ("tree", "list a directory tree"),
    ("uniq", "report or omit repeated lines"),
    ("wc", "count lines, words and bytes"),
    ("xargs", "build and run commands from stdin"),
];

/// Every builtin and utility: `(name, kind)`, sorted by name.
pub fn all() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&str, &str)> = safesh_core::builtins::names()
        .map(|n| (n, "builtin"))
        .collect();
    for n in safesh_core::registry::names() {
        if !v.iter().any(|(m, _)| *m == n) {
            v.push((n, "utility"));
        }
    }
    v.sort_unstable();
    v
}

/// The one-line description of `name`.
pub fn description(name: &str, kind: &str) -> String {
    match DESCRIPTIONS.iter().find(|(n, _)| *n == name) {
        Some((_, d)) => (*d).to_string(),
        None if kind == "builtin" => format!("shell builtin `{name}` (as in bash)"),
        None => format!("in-process utility `{name}` (GNU-compatible, C locale)"),
    }
}

/// `commands.list`.
pub fn list() -> Value {
    let items: Vec<Value> = all()
        .into_iter()
        .map(|(n, k)| json!({"name": n, "kind": k, "description": description(n, k)}))
        .collect();
    json!({"commands": items})
}

/// `commands.describe`: `None` when there is no such command.
pub fn describe(name: &str) -> Option<Value> {
    let (n, k) = all().into_iter().find(|(n, _)| *n == name)?;
    Some(json!({
        "name": n,
        "kind": k,
        "description": description(n, k),
        "run_with": "execute {\"command\": NAME, \"args\": [...]} or execute {\"script\": \"NAME ARGS…\"}",
        "params_schema": crate::schemas::execute_params(),
    }))
}
