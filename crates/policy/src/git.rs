//! The built-in git rule: git can be told to run commands through its config
//! (`-c core.pager=…`, `alias.x=!sh`), transport options (`--upload-pack`,
//! `ext::` URLs) and a few subcommands that exist to run commands. These are
//! refused whatever the config allows.

use crate::flags::ParsedArgs;

/// Config keys (lower-case; `*` matches one or more dotted parts) whose value git
/// runs as a command, or that load other config.
const COMMAND_KEYS: &[&str] = &[
    "core.hookspath",
    "core.pager",
    "core.sshcommand",
    "core.fsmonitor",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "core.worktree",
    "sequence.editor",
    "alias.*",
    "filter.*",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "mergetool.*",
    "difftool.*",
    "credential.helper",
    "credential.*",
    "pager.*",
    "gpg.program",
    "gpg.*",
    "uploadpack.packobjectshook",
    "protocol.*",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.proxy",
    "sendemail.*",
    "web.browser",
    "browser.*",
    "man.*",
    "include.*",
    "includeif.*",
    "http.proxy",
    "http.*.proxy",
    "ssh.variant",
    "receive.procreceiverefs",
    "submodule.*",
    "instaweb.*",
];

/// Subcommands whose purpose is to run commands or shell strings.
const COMMAND_SUBCOMMANDS: &[(&str, &str)] = &[
    ("filter-branch", "runs shell snippets"),
    ("filter-repo", "runs Python callbacks"),
    ("bisect", "`bisect run` runs a command"),
    ("difftool", "runs an external diff tool"),
    ("mergetool", "runs an external merge tool"),
    ("instaweb", "starts a web server and browser"),
    ("daemon", "serves repositories"),
    ("web--browse", "starts a browser"),
    ("submodule", "`submodule foreach` runs shell strings"),
    ("send-email", "sends mail through a configured program"),
    ("credential", "talks to credential helpers"),
    ("upload-pack", "is a transport helper"),
    ("receive-pack", "is a transport helper"),
    ("shell", "is a login shell"),
    ("remote-ext", "runs a command as a transport"),
];

/// Flags that make git run a program, for any subcommand.
const COMMAND_FLAGS: &[&str] = &[
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--exec-path",
    "--config-env",
    "--extcmd",
    "--open-files-in-pager",
    "--tool",
    "--ext-diff",
    "--textconv",
    "--template",
    "--separate-git-dir",
];

/// True if `key` (case-insensitive) names config git runs as a command.
pub fn is_command_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    COMMAND_KEYS.iter().any(|pat| {
        let p: Vec<&str> = pat.split('.').collect();
        glob_parts(&p, &parts)
    })
}

/// `*` matches one or more parts (subsection names may contain dots).
fn glob_parts(pat: &[&str], key: &[&str]) -> bool {
    match (pat.first(), key.first()) {
        (None, None) => true,
        (Some(&"*"), Some(_)) => (1..=key.len()).any(|n| glob_parts(&pat[1..], &key[n..])),
        (Some(p), Some(k)) => p == k && glob_parts(&pat[1..], &key[1..]),
        _ => false,
    }
}

/// A refusal reason from the git rule: (flag or argument, why).
pub fn check(parsed: &ParsedArgs, subcommand: Option<&str>) -> Option<(String, String)> {
    for f in &parsed.flags {
        if f.name == "-c" || f.name == "--config-env" {
            let kv = f.value.as_deref().unwrap_or("");
            let key = kv.split('=').next().unwrap_or("");
            if is_command_key(key) || f.name == "--config-env" {
                return Some((
                    format!("{} {kv}", f.name),
                    format!("git config key `{key}` makes git run a program"),
                ));
            }
        }
        if COMMAND_FLAGS
            .iter()
            .any(|c| crate::flags::matches_denied(&f.name, c, &Default::default()))
        {
            return Some((
                f.name.clone(),
                format!("`{}` makes git run a program", f.name),
            ));
        }
        // `-u <prog>` is --upload-pack for clone/fetch/pull/ls-remote/archive.
        if f.name == "-u"
            && matches!(
                subcommand,
                Some("clone" | "fetch" | "pull" | "ls-remote" | "archive")
            )
        {
            return Some((f.name.clone(), "`-u` names an upload-pack program".into()));
        }
        // `rebase -x/--exec CMD` and `rebase -i` with an exec todo.
        if matches!(subcommand, Some("rebase")) && f.name == "-x" {
            return Some((f.name.clone(), "`rebase -x` runs a shell command".into()));
        }
        if matches!(subcommand, Some("grep")) && f.name == "-O" {
            return Some((f.name.clone(), "`grep -O` opens files in a pager".into()));
        }
        if matches!(subcommand, Some("help"))
            && matches!(f.name.as_str(), "-w" | "--web" | "-b" | "--browser")
        {
            return Some((f.name.clone(), "`help --web` starts a browser".into()));
        }
    }
    if let Some(sub) = subcommand
        && let Some((_, why)) = COMMAND_SUBCOMMANDS.iter().find(|(s, _)| *s == sub)
    {
        return Some((sub.to_string(), format!("`git {sub}` {why}")));
    }
    // Any argument naming the `ext::` transport (runs a command) or a `fd::` one.
    for (_, op) in &parsed.operands {
        if op.starts_with("ext::") || op.starts_with("fd::") {
            return Some((op.clone(), "the ext:: transport runs a command".into()));
        }
    }
    for f in &parsed.flags {
        if let Some(v) = &f.value
            && (v.starts_with("ext::") || v.starts_with("fd::"))
        {
            return Some((v.clone(), "the ext:: transport runs a command".into()));
        }
    }
    // `git config KEY VALUE` (and --add/--replace-all/set) writing a command key.
    if subcommand == Some("config") {
        for (_, op) in parsed.operands.iter().skip(1) {
            if is_command_key(op) {
                return Some((
                    op.clone(),
                    format!("git config key `{op}` makes git run a program"),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_keys_match_with_subsections() {
        assert!(is_command_key("core.pager"));
        assert!(is_command_key("Core.SshCommand"));
        assert!(is_command_key("alias.st"));
        assert!(is_command_key("filter.lfs.smudge"));
        assert!(is_command_key("diff.my.driver.textconv"));
        assert!(is_command_key("includeIf.gitdir:/x/.path"));
        assert!(!is_command_key("user.name"));
        assert!(!is_command_key("color.ui"));
    }
}
