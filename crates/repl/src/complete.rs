//! What Tab offers: commands at a command position (builtins, utilities, platform
//! commands, the programs the policy allows, functions of the session, the REPL's own commands
//! and any list a face adds), task names after `task `, variable names after
//! `$`, and paths inside the read roots elsewhere.

use std::path::{Path, PathBuf};

/// Names to complete, refreshed after every command.
#[derive(Debug, Default, Clone)]
pub struct Names {
    /// Command names (sorted, unique): builtins, utilities, allowed programs,
    /// functions, REPL commands.
    pub commands: Vec<String>,
    /// Task names from `[tasks]`.
    pub tasks: Vec<String>,
    /// Variable names of the session.
    pub variables: Vec<String>,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Where paths may be listed (the policy's read roots; empty: anywhere).
    pub read_roots: Vec<PathBuf>,
}

/// One completion: what replaces the word, and what the list shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Shown in the list.
    pub display: String,
    /// Put into the line.
    pub replacement: String,
}

fn word_start(line: &str, pos: usize) -> usize {
    let before = &line[..pos];
    before
        .rfind([' ', '\t', '\n', ';', '|', '&', '(', '<', '>', '`'])
        .map_or(0, |i| i + 1)
}

/// True when the word starting at `start` is a command name.
fn at_command_position(line: &str, start: usize) -> bool {
    let before = line[..start].trim_end_matches([' ', '\t']);
    if before.is_empty() {
        return true;
    }
    if before.ends_with([';', '|', '&', '(', '\n', '`']) {
        return !before.ends_with(">&") && !before.ends_with("<&");
    }
    let last = before
        .rsplit([' ', '\t', ';', '|', '&', '('])
        .next()
        .unwrap_or("");
    matches!(
        last,
        "then" | "else" | "elif" | "do" | "if" | "while" | "until" | "{" | "!" | "time"
    )
}

/// The candidates for the word ending at `pos`: `(start of the word, candidates)`.
pub fn complete(names: &Names, line: &str, pos: usize) -> (usize, Vec<Candidate>) {
    let pos = pos.min(line.len());
    let start = word_start(line, pos);
    let word = &line[start..pos];
    // `$NAME` / `${NAME`.
    if let Some(dollar) = word.rfind('$') {
        let rest = &word[dollar + 1..];
        let (brace, prefix) = match rest.strip_prefix('{') {
            Some(p) => (true, p),
            None => (false, rest),
        };
        if prefix
            .bytes()
            .all(|b| b == b'_' || b.is_ascii_alphanumeric())
        {
            let head = &word[..dollar + 1 + usize::from(brace)];
            let c = names
                .variables
                .iter()
                .filter(|v| v.starts_with(prefix))
                .map(|v| Candidate {
                    display: v.clone(),
                    replacement: format!("{head}{v}{}", if brace { "}" } else { "" }),
                })
                .collect();
            return (start, c);
        }
    }
    // The words of this command before the one being completed.
    let command_so_far = line[..start]
        .rsplit([';', '|', '&', '(', '\n'])
        .next()
        .unwrap_or("");
    if command_so_far.split_whitespace().eq(["task"]) {
        let c = names
            .tasks
            .iter()
            .filter(|t| t.starts_with(word))
            .map(|t| Candidate {
                display: t.clone(),
                replacement: format!("{t} "),
            })
            .collect();
        return (start, c);
    }
    if at_command_position(line, start) && !word.contains('/') {
        let c = names
            .commands
            .iter()
            .filter(|n| n.starts_with(word))
            .map(|n| Candidate {
                display: n.clone(),
                replacement: format!("{n} "),
            })
            .collect();
        return (start, c);
    }
    (start, paths(names, word))
}

/// Files and directories whose path starts with `word`, inside the read roots.
fn paths(names: &Names, word: &str) -> Vec<Candidate> {
    let (dir_part, file_prefix) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let dir = if dir_part.is_empty() {
        names.cwd.clone()
    } else if let Some(rest) = dir_part.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(rest),
            None => return Vec::new(),
        }
    } else {
        names.cwd.join(dir_part)
    };
    let Ok(real) = std::fs::canonicalize(&dir) else {
        return Vec::new();
    };
    // Inside a root: every entry. Above one (`/` when the root is `/home/ann/p`):
    // only the entries on the way down to a root.
    let inside = inside_root(&real, &names.read_roots);
    if !inside && !names.read_roots.iter().any(|r| r.starts_with(&real)) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(&real) else {
        return Vec::new();
    };
    let mut out: Vec<Candidate> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(file_prefix)
                || (name.starts_with('.') && !file_prefix.starts_with('.'))
            {
                return None;
            }
            if !inside
                && !names
                    .read_roots
                    .iter()
                    .any(|r| r.starts_with(real.join(&name)))
            {
                return None;
            }
            let is_dir = e.file_type().ok()?.is_dir()
                || (e.file_type().ok()?.is_symlink() && e.path().is_dir());
            let suffix = if is_dir { "/" } else { " " };
            Some(Candidate {
                display: format!("{name}{}", if is_dir { "/" } else { "" }),
                replacement: format!("{dir_part}{}{suffix}", quote(&name)),
            })
        })
        .collect();
    out.sort_by(|a, b| a.display.cmp(&b.display));
    out
}

fn inside_root(path: &Path, roots: &[PathBuf]) -> bool {
    roots.is_empty() || roots.iter().any(|r| path.starts_with(r))
}

/// A file name as a shell word (backslashes before special characters).
fn quote(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    for c in name.chars() {
        if " \t'\"\\$`;&|()<>*?[]{}!#~".contains(c) {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{Names, complete};

    fn names(dir: &std::path::Path) -> Names {
        Names {
            commands: vec!["cat".into(), "cd".into(), "help".into(), "myfunc".into()],
            tasks: vec!["build".into(), "test".into()],
            variables: vec!["HOME".into(), "HOSTNAME".into(), "x".into()],
            cwd: dir.to_path_buf(),
            read_roots: vec![dir.to_path_buf()],
        }
    }

    fn shown(r: (usize, Vec<super::Candidate>)) -> Vec<String> {
        r.1.into_iter().map(|c| c.display).collect()
    }

    #[test]
    fn commands_at_command_position() {
        let d = tempfile::tempdir().unwrap();
        let n = names(d.path());
        assert_eq!(shown(complete(&n, "c", 1)), ["cat", "cd"]);
        assert_eq!(shown(complete(&n, "echo a | he", 11)), ["help"]);
        assert_eq!(shown(complete(&n, "if my", 5)), ["myfunc"]);
    }

    #[test]
    fn tasks_after_task() {
        let d = tempfile::tempdir().unwrap();
        let n = names(d.path());
        assert_eq!(shown(complete(&n, "task ", 5)), ["build", "test"]);
        assert_eq!(shown(complete(&n, "task b", 6)), ["build"]);
    }

    #[test]
    fn variables_after_dollar() {
        let d = tempfile::tempdir().unwrap();
        let n = names(d.path());
        let (start, c) = complete(&n, "echo $HO", 8);
        assert_eq!(start, 5);
        assert_eq!(
            c.iter().map(|c| c.replacement.as_str()).collect::<Vec<_>>(),
            ["$HOME", "$HOSTNAME"]
        );
        let (_, c) = complete(&n, "echo ${x", 8);
        assert_eq!(c[0].replacement, "${x}");
    }

    #[test]
    fn paths_inside_the_roots_only() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/main.rs"), "").unwrap();
        std::fs::write(d.path().join("notes.txt"), "").unwrap();
        let n = names(d.path());
        assert_eq!(shown(complete(&n, "cat s", 5)), ["src/"]);
        assert_eq!(shown(complete(&n, "cat src/m", 9)), ["main.rs"]);
        assert_eq!(shown(complete(&n, "cat no", 6)), ["notes.txt"]);
        // Outside the read roots: nothing is listed.
        assert!(complete(&n, "cat /etc/pass", 13).1.is_empty());
        // Above a root: only the way down to it.
        let top = tempfile::tempdir().unwrap();
        let top = top.path().canonicalize().unwrap();
        std::fs::create_dir(top.join("proj")).unwrap();
        std::fs::create_dir(top.join("other")).unwrap();
        let n = names(&top.join("proj"));
        let line = format!("cat {}/", top.display());
        assert_eq!(shown(complete(&n, &line, line.len())), ["proj/"]);
    }
}
