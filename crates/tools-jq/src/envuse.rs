//! Which environment variables a jq program can read (`env`, `$ENV`): reading one
//! joins its label into jq's output, so a program that names only `env.HOME` must
//! not take the label of every exported secret.

/// The variables `program` can read: `Some(names)` when every mention of `env` /
/// `$ENV` is a plain `.NAME` lookup (often none at all), `None` when it may read
/// any of them (`env | keys`, `$ENV[$k]`, a `def env`…).
pub(crate) fn env_names(program: &str) -> Option<Vec<String>> {
    let b = program.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut names = Vec::new();
    let mut i = 0;
    while i + 3 <= b.len() {
        let word = &b[i..i + 3];
        if word != b"env" && word != b"ENV" {
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = i + 3;
        // Part of a longer name (`getenv`, `.environment`) or a field (`.env`).
        if before.is_some_and(|c| ident(c) || c == b'.') || b.get(after).copied().is_some_and(ident)
        {
            i += 1;
            continue;
        }
        // `env.NAME` / `$ENV.NAME`: that one variable.
        let start = after + 1;
        let mut end = start;
        while b.get(end).copied().is_some_and(ident) {
            end += 1;
        }
        let first_ok = b.get(start).is_some_and(|c| !c.is_ascii_digit());
        if b.get(after) != Some(&b'.') || end == start || !first_ok {
            return None;
        }
        names.push(program[start..end].to_string());
        i = end;
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::env_names;

    #[test]
    fn lookups_by_name_read_only_those() {
        assert_eq!(env_names(".a | .environment"), Some(vec![]));
        assert_eq!(env_names("env.HOME"), Some(vec!["HOME".to_string()]));
        assert_eq!(
            env_names("[$ENV.A, env.B_2]"),
            Some(vec!["A".to_string(), "B_2".to_string()])
        );
        assert_eq!(env_names(".env"), Some(vec![]));
    }

    #[test]
    fn anything_else_reads_all() {
        assert_eq!(env_names("env"), None);
        assert_eq!(env_names("env | keys"), None);
        assert_eq!(env_names("$ENV[\"A\"]"), None);
        assert_eq!(env_names("env.\"A\""), None);
        assert_eq!(env_names("def f: env; f"), None);
    }
}
