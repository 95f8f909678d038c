//! `help [CMD]`: every builtin, utility, platform command and the sections a face
//! adds (the binary's subcommands), one line each; with CMD, its usage and
//! description.

use super::descriptions::{self, Description};
use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use std::sync::Mutex;

/// A list of commands `help` shows under a heading, asked for only when `help`
/// runs (so registering costs nothing at start-up): `(name, description)` pairs.
pub type HelpList = fn() -> Vec<(String, String)>;

/// A section added by a face: its heading, how one is run, and its list.
type Registered = (&'static str, &'static str, HelpList);

/// Sections added by the faces.
static SECTIONS: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// A section of `help` a face added, listed.
#[derive(Debug, Clone)]
pub struct HelpSection {
    /// The heading.
    pub heading: &'static str,
    /// How one is run (`NAME` stands for the entry's name).
    pub run_as: &'static str,
    /// `(name, description)` pairs.
    pub entries: Vec<(String, String)>,
}

/// Adds a section to `help` (the binary's subcommands, platform commands). `run_as`
/// says how one is run, e.g. `safesh NAME` (shown with `help NAME`).
pub fn add_help_section(heading: &'static str, run_as: &'static str, list: HelpList) {
    let mut s = crate::io::lock(&SECTIONS);
    if !s.iter().any(|(h, _, _)| *h == heading) {
        s.push((heading, run_as, list));
    }
}

/// The sections added with [`add_help_section`], listed.
pub fn help_sections() -> Vec<HelpSection> {
    let s = crate::io::lock(&SECTIONS).clone();
    s.into_iter()
        .map(|(heading, run_as, list)| HelpSection {
            heading,
            run_as,
            entries: list(),
        })
        .collect()
}

/// The description of builtin or utility `name`.
pub fn describe(name: &str) -> Option<&'static Description> {
    descriptions::lookup(name)
}

fn section(title: &str, entries: impl Iterator<Item = (String, String)>) -> String {
    let entries: Vec<_> = entries.collect();
    let width = entries
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0)
        .min(14);
    let mut s = format!("{title}:\n");
    for (name, about) in entries {
        s.push_str(&format!("  {name:<width$}  {about}\n"));
    }
    s
}

/// The first sentence of a description written for a model (one line in a listing).
fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].to_string()
}

fn listing(sh: &Shell) -> String {
    let builtins = super::names().map(|n| {
        let about = describe(n).map_or("", |d| d.about);
        (n.to_string(), about.to_string())
    });
    let mut s = section("Builtins", builtins);
    let utils = crate::registry::names().into_iter().map(|n| {
        let about = describe(n).map_or("", |d| d.about);
        (n.to_string(), about.to_string())
    });
    s.push('\n');
    s.push_str(&section("Utilities (in-process)", utils));
    let platform = safesh_platform::registry::list(None)
        .into_iter()
        .map(|c| (c.name().to_string(), first_sentence(c.description())));
    s.push('\n');
    s.push_str(&section("Platform commands", platform));
    for sec in help_sections() {
        s.push('\n');
        s.push_str(&section(sec.heading, sec.entries.into_iter()));
    }
    let mut funcs: Vec<&String> = sh.funcs.keys().collect();
    funcs.sort();
    if !funcs.is_empty() {
        s.push_str(&format!(
            "\nFunctions: {}\n",
            funcs
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    s.push_str(
        "\nOther programs run in the sandbox when the policy allows them: `policy` lists them.\n`help CMD` describes CMD.\n",
    );
    s
}

fn one(sh: &Shell, name: &str) -> Option<String> {
    if sh.funcs.contains_key(name) {
        return Some(format!(
            "{name}: a function defined in this shell (`type {name}` prints it)\n"
        ));
    }
    if let Some(d) = describe(name) {
        let kind = if super::is_builtin(name) {
            "builtin"
        } else {
            "utility"
        };
        let usage = if d.usage.is_empty() {
            name.to_string()
        } else {
            format!("{name} {}", d.usage)
        };
        return Some(format!("{usage}\n  {} ({kind})\n", d.about));
    }
    if let Some(c) = safesh_platform::registry::get(name) {
        return Some(format!(
            "{}\n  {} (platform command, risk {}; `commands {name}` gives its schema)\n",
            c.example(),
            c.description(),
            c.risk().as_str()
        ));
    }
    for sec in help_sections() {
        if let Some((n, about)) = sec.entries.into_iter().find(|(n, _)| n == name) {
            let how = sec.run_as.replace("NAME", &n);
            return Some(format!("{how}\n  {about}\n"));
        }
    }
    None
}

/// `help [CMD...]`.
pub(super) fn help(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    if argv.len() < 2 {
        let text = listing(sh);
        out(sh, &text, &label);
        sh.set_status(0);
        return Ok(());
    }
    let mut status = 0;
    for word in &argv[1..] {
        match one(sh, &word.text) {
            Some(text) => {
                out(sh, &text, &label);
            }
            None => {
                sh.diag(format!(
                    "help: no help for `{}`: not a builtin, utility, function or safesh command (`help` lists them; `policy {}` says whether it may run as a program)",
                    word.text, word.text
                ));
                status = 1;
            }
        }
    }
    sh.set_status(status);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn every_builtin_and_utility_has_a_description() {
        let missing: Vec<&str> = super::super::names()
            .chain(crate::registry::names())
            .filter(|n| describe(n).is_none())
            .collect();
        assert!(missing.is_empty(), "add to descriptions.rs: {missing:?}");
    }

    #[test]
    fn description_tables_are_sorted() {
        for table in [
            super::descriptions::BUILTINS,
            super::descriptions::UTILITIES,
        ] {
            let names: Vec<_> = table.iter().map(|d| d.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(names, sorted);
        }
    }
}
