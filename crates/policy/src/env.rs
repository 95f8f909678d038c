//! The environment external programs get: only allowed variables, never masked
//! ones (`*_TOKEN`, `AWS_*`, …) and never the ones that change what gets executed
//! (`LD_*`, `DYLD_*`, `BASH_ENV`, `ENV`); `PATH` is always the trusted path; and
//! defaults that keep programs non-interactive.

use crate::config::Config;

/// Variables that change what a program loads or runs; never passed on.
fn execution_changing(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || matches!(
            name,
            "BASH_ENV"
                | "ENV"
                | "PATH"
                | "IFS"
                | "PS4"
                | "SHELLOPTS"
                | "BASHOPTS"
                | "CDPATH"
                | "GCONV_PATH"
                | "PYTHONSTARTUP"
                | "PERL5OPT"
                | "NODE_OPTIONS"
                | "RUBYOPT"
                | "GIT_EXEC_PATH"
                | "GIT_SSH"
                | "GIT_SSH_COMMAND"
                | "GIT_EXTERNAL_DIFF"
                | "GIT_PAGER"
                | "PAGER"
                | "EDITOR"
                | "VISUAL"
                | "GIT_EDITOR"
                | "GIT_ASKPASS"
                | "SSH_ASKPASS"
                | "GIT_CONFIG_GLOBAL"
                | "GIT_CONFIG_SYSTEM"
                | "GIT_CONFIG_PARAMETERS"
                | "GIT_CONFIG_COUNT"
                | "GIT_PROXY_COMMAND"
                | "GIT_TEMPLATE_DIR"
        )
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || name.starts_with("BASH_FUNC_")
}

/// Whether a variable name is masked (never passed to external programs).
pub fn is_masked(config: &Config, name: &str) -> bool {
    config.env.mask.iter().any(|g| g.matcher.is_match(name))
}

/// Whether a variable may be passed to an external program.
pub fn may_pass(config: &Config, name: &str) -> bool {
    !execution_changing(name)
        && !is_masked(config, name)
        && config.env.allow.iter().any(|g| g.matcher.is_match(name))
}

/// Why a variable is not passed to external programs (`None`: it is).
pub fn why_not_passed(config: &Config, name: &str) -> Option<&'static str> {
    if name == "PATH" {
        Some("programs get the trusted PATH ([sandbox] path)")
    } else if execution_changing(name) {
        Some("it changes what programs load or run")
    } else if is_masked(config, name) {
        Some("it is masked as a secret ([env] mask)")
    } else if !config.env.allow.iter().any(|g| g.matcher.is_match(name)) {
        Some("[env] allow does not list it")
    } else {
        None
    }
}

/// Builds the environment of an external program from the script's exported
/// variables.
pub fn child_env<'a>(
    config: &Config,
    exported: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = exported
        .into_iter()
        .filter(|(k, _)| may_pass(config, k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let path: Vec<String> = config
        .sandbox
        .path
        .iter()
        .map(|p| p.path.display().to_string())
        .collect();
    out.push(("PATH".into(), path.join(":")));
    for (k, v) in [
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("NO_COLOR", "1"),
        ("TERM", "dumb"),
        ("GIT_TERMINAL_PROMPT", "0"),
    ] {
        out.retain(|(n, _)| n != k);
        out.push((k.into(), v.into()));
    }
    out.sort();
    out
}
