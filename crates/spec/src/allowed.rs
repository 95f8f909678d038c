//! `allowed_commands`: globs that narrow what a spec may run (never widen: the
//! policy still decides every command the list lets through).

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::{Value, json};

/// The refusal code of a command outside the list.
pub const NOT_WHITELISTED: &str = "COMMAND_NOT_WHITELISTED";
/// The rule named in that refusal.
pub const ALLOWED_RULE: &str = "spec.allowed_commands";

/// A compiled `allowed_commands` list; `None` inside: no list (the policy alone).
#[derive(Clone, Debug)]
pub struct AllowedCommands {
    set: Option<GlobSet>,
    patterns: Vec<String>,
}

impl AllowedCommands {
    /// Compiles the list; the error names the bad glob's index.
    pub fn new(patterns: Option<&[String]>) -> Result<Self, (usize, String)> {
        let Some(patterns) = patterns else {
            return Ok(AllowedCommands {
                set: None,
                patterns: Vec::new(),
            });
        };
        let mut b = GlobSetBuilder::new();
        for (i, p) in patterns.iter().enumerate() {
            if p.trim().is_empty() {
                return Err((i, "an empty pattern".into()));
            }
            // `*` matches across `:` and `/` alike: `github:*` covers `github:pr:list`.
            let g = Glob::new(p).map_err(|e| (i, format!("bad glob {p:?}: {e}")))?;
            b.add(g);
        }
        let set = b.build().map_err(|e| (0, e.to_string()))?;
        Ok(AllowedCommands {
            set: Some(set),
            patterns: patterns.to_vec(),
        })
    }

    /// Whether a list is in force.
    pub fn is_restricted(&self) -> bool {
        self.set.is_some()
    }

    /// Whether `name` (the command exactly as it will be dispatched) is allowed.
    pub fn allows(&self, name: &str) -> bool {
        self.set.as_ref().is_none_or(|s| s.is_match(name))
    }

    /// The refusal for `name` when it is outside the list — the object every
    /// face shows (`code`, `message`, `details.rule`, `details.allowed`,
    /// `suggestion`); `None` when allowed. The runtime calls this at every
    /// dispatch while a spec runs (names computed at run time included).
    pub fn refusal(&self, name: &str) -> Option<Value> {
        if self.allows(name) {
            return None;
        }
        Some(json!({
            "code": NOT_WHITELISTED,
            "message": format!("{name} is not in the spec's allowed_commands"),
            "details": {
                "command": name,
                "rule": ALLOWED_RULE,
                "allowed": self.patterns,
            },
            "suggestion": format!(
                "use one of the allowed commands ({}), or add {name} to allowed_commands in the spec (a spec can only narrow the policy)",
                self.patterns.join(", ")
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_narrow() {
        let l = vec!["github:*".to_string(), "fs:write".into(), "wc".into()];
        let a = AllowedCommands::new(Some(&l)).unwrap();
        assert!(a.allows("github:pr:list"));
        assert!(a.allows("fs:write"));
        assert!(!a.allows("fs:delete"));
        assert!(!a.allows("/usr/bin/wc"), "a path is not the listed name");
        let r = a.refusal("curl").unwrap();
        assert_eq!(r["code"], NOT_WHITELISTED);
        assert_eq!(r["details"]["rule"], ALLOWED_RULE);
        assert!(AllowedCommands::new(None).unwrap().allows("anything"));
        assert!(!AllowedCommands::new(Some(&[])).unwrap().allows("ls"));
        assert_eq!(
            AllowedCommands::new(Some(&["[".to_string()]))
                .unwrap_err()
                .0,
            0
        );
    }
}
