//! Shell builtins: commands that change or inspect the shell itself (`cd`, `export`,
//! `read`, `eval`, …) and wrappers (`env`, `timeout`, `command`, …) whose inner
//! command goes back through the same dispatch as any other.
//!
//! To add a builtin: implement `fn(&mut Shell, &[Field]) -> Exec` in the module for its
//! kind and add it to [`BUILTINS`].

mod alias;
mod checkpoint;
mod context;
mod dirs;
mod flow;
mod options;
mod read;
mod vars;
mod wrappers;
// The human's builtins (issue 16): help, label, policy, config.
mod descriptions;
mod help;
mod label;
mod plan;
mod policy;
// Verified execution in scripts (issue 19).
mod verify;

pub use descriptions::Description;
pub use help::{HelpList, HelpSection, add_help_section, describe, help_sections};
pub(crate) use options::{long_option, shellopts};

use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use safesh_label::Label;

type BuiltinFn = fn(&mut Shell, &[Field]) -> Exec;

/// Every builtin, by name.
static BUILTINS: &[(&str, BuiltinFn)] = &[
    (".", flow::source),
    (":", flow::colon),
    ("[", flow::test),
    ("alias", alias::alias),
    ("break", flow::break_),
    ("builtin", wrappers::builtin),
    ("cd", dirs::cd),
    ("checkpoint", checkpoint::checkpoint),
    ("command", wrappers::command),
    ("config", policy::config),
    ("context", context::context),
    ("continue", flow::continue_),
    ("declare", vars::declare),
    ("dirs", dirs::dirs),
    ("env", wrappers::env),
    ("eval", flow::eval),
    ("exec", wrappers::exec),
    ("exit", flow::exit),
    ("export", vars::export),
    ("false", flow::false_),
    ("flock", wrappers::flock),
    ("getopts", read::getopts),
    ("hash", flow::colon),
    ("help", help::help),
    ("history", context::history),
    ("ionice", wrappers::ionice),
    ("label", label::label),
    ("let", vars::let_),
    ("local", vars::local),
    ("mapfile", read::mapfile),
    ("nice", wrappers::nice),
    ("nohup", wrappers::nohup),
    ("plan", plan::plan),
    ("policy", policy::policy),
    ("popd", dirs::popd),
    ("printf", read::printf),
    ("pushd", dirs::pushd),
    ("pwd", dirs::pwd),
    ("read", read::read),
    ("readarray", read::mapfile),
    ("readonly", vars::readonly),
    ("return", flow::return_),
    ("set", options::set),
    ("setsid", wrappers::setsid),
    ("shift", vars::shift),
    ("shopt", options::shopt),
    ("source", flow::source),
    ("stdbuf", wrappers::stdbuf),
    ("taskset", wrappers::taskset),
    ("test", flow::test),
    ("time", wrappers::time),
    ("timeout", wrappers::timeout),
    ("trap", flow::trap),
    ("true", flow::true_),
    ("type", wrappers::type_),
    ("typeset", vars::declare),
    ("umask", flow::umask),
    ("unalias", alias::unalias),
    ("unset", vars::unset),
    ("verify", verify::verify),
    ("wait", flow::wait),
];

pub(crate) use alias::run_expanded as run_alias;
pub(crate) use vars::shown_key;

/// True if `name` is a shell builtin.
pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.binary_search_by(|(n, _)| n.cmp(&name)).is_ok()
}

/// True if builtin `name` is also a program, so another program can run it
/// (`env printf`, `xargs test`, `find -exec true`): coreutils or util-linux
/// has one of that name, or it is one of safesh's own commands. bash's
/// other builtins (`cd`, `read`, `export`, `type`, …) exist only inside a
/// shell, and `execvp` does not find them.
pub(crate) fn is_program(name: &str) -> bool {
    matches!(
        name,
        "[" | "test"
            | "true"
            | "false"
            | "printf"
            | "pwd"
            | "env"
            | "nice"
            | "nohup"
            | "setsid"
            | "stdbuf"
            | "ionice"
            | "taskset"
            | "timeout"
            | "flock"
            | "time"
            | "checkpoint"
            | "config"
            | "context"
            | "label"
            | "plan"
            | "policy"
            | "verify"
    )
}

/// The names of all builtins.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(n, _)| *n)
}

/// Runs builtin `argv[0]`.
pub(crate) fn run(sh: &mut Shell, argv: &[Field]) -> Exec {
    let name = argv.first().map(|f| f.text.as_str()).unwrap_or("");
    match BUILTINS.binary_search_by(|(n, _)| n.cmp(&name)) {
        Ok(i) => {
            let named = naming_words(sh, argv);
            let r = (BUILTINS[i].1)(sh, argv);
            label_names(sh, named);
            r
        }
        Err(_) => {
            sh.set_status(127);
            Ok(())
        }
    }
}

/// A variable a builtin's word names: its name, the word's label ⊔ PC, and
/// whether it existed before the builtin ran.
struct Named {
    name: String,
    label: Label,
    existed: bool,
}

/// The words of builtins that create or change variables named by them (`read
/// "$n"`, `printf -v "$n"`, `declare "$n=…"`).
fn naming_words(sh: &Shell, argv: &[Field]) -> Vec<Named> {
    let name = argv.first().map(|f| f.text.as_str()).unwrap_or("");
    let words: Vec<&Field> = match name {
        "read" | "mapfile" | "readarray" | "getopts" | "declare" | "typeset" | "local"
        | "export" | "readonly" => argv.iter().skip(1).collect(),
        // printf: only the -v operand names a variable.
        "printf" => argv
            .windows(2)
            .filter(|w| w[0].text == "-v")
            .map(|w| &w[1])
            .collect(),
        _ => return Vec::new(),
    };
    words
        .into_iter()
        .filter(|f| !f.text.starts_with('-'))
        .map(|f| {
            let base = f.text.split(['=', '[']).next().unwrap_or("");
            let base = base.strip_suffix('+').unwrap_or(base);
            Named {
                name: base.to_string(),
                label: f.label.join(&sh.pc),
                existed: sh.vars.get(base).is_some(),
            }
        })
        .collect()
}

/// After the builtin ran: the name of each variable its words named carries the
/// word's label. A variable it created is named by that word alone (and the
/// PC), not by the value it got (`read x < .env`: the name `x` is the agent's);
/// a `declare x=$(…)` word holds both, so there the value's label stays.
fn label_names(sh: &mut Shell, named: Vec<Named>) {
    for n in named {
        match sh.vars.get_mut(&n.name) {
            Some(v) if !n.existed => v.name_label = Label::agent().join(&n.label),
            Some(v) => v.name_label.join_assign(&n.label),
            None => {}
        }
    }
}

/// The label of a builtin's output: the PC and its arguments.
fn args_label(sh: &Shell, argv: &[Field]) -> Label {
    argv.iter().fold(sh.pc.clone(), |l, a| l.join(&a.label))
}

/// Writes `text` to fd 1 with `label`; a closed pipe gives status 141 like bash's SIGPIPE... not an error.
fn out(sh: &Shell, text: &str, label: &Label) -> bool {
    // Builtins print words: escaped bytes go out as the bytes they stand for.
    sh.write_out(&safesh_utils::word_bytes::word_to_bytes(text), label)
        .is_ok()
}

/// [`out`] for a builtin whose failed write is its failure, as in bash: says
/// `NAME: write error: …` and sets status 1 (`pwd >&-`, `pwd > /dev/full`).
fn out_or_fail(sh: &mut Shell, name: &str, text: &str, label: &Label) -> bool {
    match sh.write_out(text.as_bytes(), label) {
        Ok(()) => true,
        Err(e) => {
            sh.diag(format!(
                "{name}: write error: {}",
                safesh_utils::io_error_text(&e)
            ));
            sh.set_status(1);
            false
        }
    }
}

fn texts(argv: &[Field]) -> Vec<String> {
    argv.iter().map(|f| f.text.clone()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_is_sorted() {
        let names: Vec<_> = super::names().collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }
}
