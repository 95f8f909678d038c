//! Spec templates for `safesh init --template=NAME`: built-in ones embedded in
//! the binary, and the user's own in `~/.config/safesh/templates/NAME.yaml`
//! (which take precedence, so a user can adapt a built-in one).

use std::path::{Path, PathBuf};

/// The built-in templates: (name, YAML).
pub const BUILTIN: &[(&str, &str)] = &[
    ("code-review", include_str!("templates/code-review.yaml")),
    (
        "weekly-report",
        include_str!("templates/weekly-report.yaml"),
    ),
    (
        "deploy-pipeline",
        include_str!("templates/deploy-pipeline.yaml"),
    ),
    ("research", include_str!("templates/research.yaml")),
];

/// The file `init --template` writes.
pub const SPEC_FILE: &str = "project.agsh.yaml";

/// Where a template came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Embedded in safesh.
    Builtin,
    /// A user template file.
    User(PathBuf),
}

/// A template's name is a plain word (`[A-Za-z0-9_-]`): never a path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The template `name`: the user's (`DIR/NAME.yaml` or `DIR/NAME.agsh.yaml`)
/// first, then the built-in one. The error lists what exists.
pub fn find(name: &str, user_dir: Option<&Path>) -> Result<(String, Source), String> {
    if !valid_name(name) {
        return Err(format!(
            "{name:?} is not a template name (letters, digits, - and _)"
        ));
    }
    if let Some(dir) = user_dir {
        for file in [format!("{name}.yaml"), format!("{name}.agsh.yaml")] {
            let p = dir.join(&file);
            if p.is_file() {
                let text =
                    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                return Ok((text, Source::User(p)));
            }
        }
    }
    match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => Ok((text.to_string(), Source::Builtin)),
        None => Err(format!(
            "no template named {name:?} (templates: {})",
            list(user_dir).join(", ")
        )),
    }
}

/// Every template name: built-in, then the user's.
pub fn list(user_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
    if let Some(dir) = user_dir
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        let mut user: Vec<String> = rd
            .flatten()
            .filter_map(|e| {
                let f = e.file_name().to_string_lossy().to_string();
                let n = f
                    .strip_suffix(".agsh.yaml")
                    .or_else(|| f.strip_suffix(".yaml"))?
                    .to_string();
                (valid_name(&n) && !names.contains(&n)).then_some(n)
            })
            .collect();
        user.sort();
        user.dedup();
        names.extend(user);
    }
    names
}

/// The user template directory: `$XDG_CONFIG_HOME/safesh/templates`, else
/// `$HOME/.config/safesh/templates`.
pub fn user_dir(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    xdg_config_home
        .map(|x| x.join("safesh/templates"))
        .or_else(|| home.map(|h| h.join(".config/safesh/templates")))
}
