//! Asking a human for an approval while a script waits.
//!
//! An exchange rule that says `request-approval` makes a pending, single-use
//! approval (`safesh_flow::Approvals`). Without a channel to a human the command is
//! refused with `APPROVAL_REQUIRED` and the human grants it later with `safesh
//! approve ID` (or in config). A face that has a channel the model cannot drive —
//! the CLI's own terminal, MCP elicitation shown by the client — gives the session
//! an [`ApprovalChannel`]; the interpreter then asks and waits for the answer.

use std::time::SystemTime;

/// What the human is asked: one exact action at one commit point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalQuestion {
    /// The pending approval's id (`safesh approve ID` grants the same request).
    pub id: String,
    /// `network`, `exec`, `destructive` or `env`.
    pub commit_point: String,
    /// The exact command (secret words withheld as `[secret]`).
    pub action: String,
    /// What it acts on (a path, a host, a variable).
    pub target: String,
    /// Why the exchange rule wants a human to decide.
    pub reason: String,
    /// The rule that asked.
    pub rule: String,
    /// When the request lapses if nobody answers.
    pub expires: SystemTime,
}

impl ApprovalQuestion {
    /// The question as a human reads it (several lines, no trailing newline).
    /// The command and target come from the script and may come from downloaded
    /// data: control characters and bidirectional overrides are shown escaped, so
    /// a name with backspaces cannot make the prompt show another command.
    pub fn text(&self) -> String {
        let mut s = format!(
            "safesh: approval needed at the {} commit point: {}\n  command: {}",
            self.commit_point,
            visible(&self.reason),
            visible(&self.action)
        );
        if !self.target.is_empty() {
            s.push_str(&format!("\n  target:  {}", visible(&self.target)));
        }
        s.push_str(&format!(
            "\n  rule:    {}\n  id:      {} (single use)",
            self.rule, self.id
        ));
        s
    }
}

/// `s` with every character a terminal would act on instead of showing (C0 and
/// C1 controls, DEL, bidirectional overrides and isolates) written as an escape
/// (`\x08`, `\u{202e}`); a backslash is doubled so an escape cannot be faked.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (0x80..0xa0).contains(&(c as u32))
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || c == '\u{200e}'
                || c == '\u{200f}' =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// The human's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run it, once.
    Granted,
    /// Do not run it.
    Denied,
    /// No answer (no channel after all, dismissed, timed out, the request ended):
    /// the command is refused with `APPROVAL_REQUIRED` and stays pending.
    Unanswered,
}

/// A channel to the human that the model cannot drive.
pub trait ApprovalChannel: Send + Sync {
    /// Asks `question` and waits for the answer. `stop` turns true when the
    /// request is cancelled or out of time: stop waiting then ([`Unanswered`]).
    ///
    /// [`Unanswered`]: ApprovalAnswer::Unanswered
    fn ask(&self, question: &ApprovalQuestion, stop: &dyn Fn() -> bool) -> ApprovalAnswer;

    /// The channel's name in the audit log's record of the human's decision.
    fn name(&self) -> &str {
        "approval prompt"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_the_question_are_shown_escaped() {
        let q = ApprovalQuestion {
            id: "abcd2345".into(),
            commit_point: "destructive".into(),
            action: "rm victim.txt\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08build/o.log".into(),
            target: "a\u{202e}gol.o\x1b[2K".into(),
            reason: "the targets come from untrusted data".into(),
            rule: "r".into(),
            expires: SystemTime::UNIX_EPOCH,
        };
        let t = q.text();
        assert!(t.contains("rm victim.txt\\x08"), "{t}");
        assert!(t.contains("a\\u{202e}gol.o\\x1b[2K"), "{t}");
        assert!(
            !t.chars()
                .any(|c| c == '\x08' || c == '\x1b' || c == '\u{202e}')
        );
        assert_eq!(visible("a\\x08"), "a\\\\x08");
    }

    #[test]
    fn the_question_names_the_command_target_rule_and_id() {
        let q = ApprovalQuestion {
            id: "abcd2345".into(),
            commit_point: "destructive".into(),
            action: "rm -r build".into(),
            target: "build".into(),
            reason: "the targets come from untrusted data".into(),
            rule: "destructive-from-untrusted".into(),
            expires: SystemTime::UNIX_EPOCH,
        };
        let t = q.text();
        for part in [
            "destructive",
            "rm -r build",
            "target:  build",
            "destructive-from-untrusted",
            "abcd2345",
        ] {
            assert!(t.contains(part), "{part} missing from {t}");
        }
        assert!(!t.ends_with('\n'));
    }
}
