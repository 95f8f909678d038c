//! What an interactive face (the REPL) reads about a session between requests:
//! names to complete, and the text of a line made safe to keep in a history file.

use crate::session::Session;

impl Session {
    /// The functions defined in this session, sorted.
    pub fn function_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.shell().funcs.keys().cloned().collect();
        v.sort_unstable();
        v
    }

    /// The variables set in this session (shell and exported), sorted.
    pub fn variable_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.shell().vars.names().cloned().collect();
        v.sort_unstable();
        v
    }

    /// The exit status of the last command.
    pub fn last_status(&self) -> i32 {
        self.shell().last_status
    }

    /// Sets `$?` (an interactive face: a command stopped by Ctrl-C leaves 130).
    pub fn set_last_status(&mut self, status: i32) {
        self.shell_mut().last_status = status;
    }

    /// True when the last request ran `exit` (or `set -e` ended it): an
    /// interactive face ends there.
    pub fn exit_requested(&self) -> bool {
        self.exited
    }

    /// `text` fit for a history file: every known secret value (the values of
    /// the secret files under the cwd and write roots, of the secret variables
    /// exported now, in plain, hex and base64 forms) replaced by `[secret]`, and
    /// the value of every assignment word to a variable the config classifies
    /// as secret (`API_KEY=…`, `export GITHUB_TOKEN=…`) withheld too.
    pub fn redact_for_history(&self, text: &str) -> String {
        let shell = self.shell();
        let mut out = match shell.known_values() {
            Some(k) => k.redact(text).into_owned(),
            None => text.to_string(),
        };
        if let Some(flow) = &shell.shared.flow {
            out = withhold_secret_assignments(&out, &|name| flow.env_label(name).is_some());
        }
        out
    }
}

/// Replaces the value of each `NAME=value` word whose NAME is secret by `[secret]`
/// (a plain scan: a word starts after blank or `;&|(`).
fn withhold_secret_assignments(text: &str, secret: &dyn Fn(&str) -> bool) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut at_word_start = true;
    while i < b.len() {
        let c = b[i];
        if at_word_start && (c == b'_' || c.is_ascii_alphabetic()) {
            let start = i;
            let mut j = i;
            while j < b.len() && (b[j] == b'_' || b[j].is_ascii_alphanumeric()) {
                j += 1;
            }
            let name = &text[start..j];
            let eq = if text[j..].starts_with("+=") {
                Some(j + 2)
            } else if text[j..].starts_with('=') {
                Some(j + 1)
            } else {
                None
            };
            if let Some(value_start) = eq.filter(|_| secret(name)) {
                out.push_str(&text[start..value_start]);
                out.push_str("[secret]");
                i = skip_word(b, value_start);
                at_word_start = false;
                continue;
            }
            out.push_str(&text[start..j]);
            i = j;
            at_word_start = false;
            continue;
        }
        at_word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// The end of the shell word starting at `i` (quotes and backslashes honoured).
fn skip_word(b: &[u8], mut i: usize) -> usize {
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'\\' => i += 1,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')' => return i,
                _ => {}
            },
        }
        i += 1;
    }
    i.min(b.len())
}

#[cfg(test)]
mod tests {
    use super::withhold_secret_assignments;

    fn secret(n: &str) -> bool {
        n.ends_with("_KEY") || n.ends_with("_TOKEN")
    }

    #[test]
    fn values_of_secret_assignments_are_withheld() {
        assert_eq!(
            withhold_secret_assignments("export GITHUB_TOKEN='ghp 123' && echo ok", &secret),
            "export GITHUB_TOKEN=[secret] && echo ok"
        );
        assert_eq!(
            withhold_secret_assignments("API_KEY=abc cmd; X=1", &secret),
            "API_KEY=[secret] cmd; X=1"
        );
    }

    #[test]
    fn other_words_are_kept() {
        let t = "grep API_KEY file; X_KEYS=1; echo $API_KEY";
        assert_eq!(withhold_secret_assignments(t, &secret), t);
    }

    #[test]
    fn an_assignment_looking_argument_is_withheld_too() {
        // Conservative: the history may lose a harmless value, never keep a secret.
        assert_eq!(
            withhold_secret_assignments("echo MY_KEY=v1 ok", &secret),
            "echo MY_KEY=[secret] ok"
        );
    }
}
