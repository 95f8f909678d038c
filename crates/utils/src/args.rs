//! GNU-style option parsing shared by the utilities: combined short flags
//! (`-rn`), short options with attached or separate values (`-k2`, `-k 2`), long
//! options with `=` or separate values and unambiguous abbreviations (`--ignore-c`),
//! operands mixed with options (GNU permutation), and `--` ending options.

/// Describes the options a utility accepts.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Short options without a value, e.g. `"nrufs"`.
    pub flags: &'static str,
    /// Short options taking a value, e.g. `"ktn"`.
    pub valued: &'static str,
    /// Long options: (name, takes a value, the short option it is an alias of or the
    /// name itself when it has none).
    pub long: &'static [(&'static str, bool, &'static str)],
    /// Stop at the first operand (POSIX order, as `env`, `xargs`, `timeout` need).
    pub stop_at_operand: bool,
}

/// One parsed option: its canonical name (the short letter, or the long name when
/// it has no short alias) and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opt {
    /// Canonical name.
    pub name: String,
    /// The value, for options that take one.
    pub value: Option<String>,
}

/// GNU's input order check for tools that merge sorted inputs (`comm`,
/// `join`): `--check-order`, `--nocheck-order`, or by default only once a
/// line could not be paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderCheck {
    /// Neither option: check once a line was unpairable; a disorder warns.
    Default,
    /// `--check-order`: always check; a disorder is fatal.
    Enabled,
    /// `--nocheck-order`: never check.
    Disabled,
}

impl OrderCheck {
    /// The check the options ask for (the long names `check-order` and
    /// `nocheck-order`; the latter wins).
    pub fn from_options(p: &Parsed) -> OrderCheck {
        if p.has("nocheck-order") {
            OrderCheck::Disabled
        } else if p.has("check-order") {
            OrderCheck::Enabled
        } else {
            OrderCheck::Default
        }
    }

    /// Whether a line read now is checked, given whether an unpairable line
    /// was seen already.
    pub fn active(self, seen_unpairable: bool) -> bool {
        match self {
            OrderCheck::Enabled => true,
            OrderCheck::Default => seen_unpairable,
            OrderCheck::Disabled => false,
        }
    }
}

/// The result of parsing: options in order, then operands.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// Options in the order given.
    pub opts: Vec<Opt>,
    /// Operands (non-option arguments).
    pub operands: Vec<String>,
}

impl Parsed {
    /// True if option `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.opts.iter().any(|o| o.name == name)
    }

    /// The last value given for `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|o| o.name == name)
            .and_then(|o| o.value.as_deref())
    }

    /// All values given for `name`, in order.
    pub fn values(&self, name: &str) -> Vec<&str> {
        self.opts
            .iter()
            .filter(|o| o.name == name)
            .filter_map(|o| o.value.as_deref())
            .collect()
    }
}

/// Parses `args` (without argv[0]). Errors are GNU-worded messages such as
/// `invalid option -- 'z'` or `option requires an argument -- 'k'`.
pub fn parse(args: &[String], spec: &Spec) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact = spec.long.iter().find(|(n, _, _)| *n == name);
            let cands: Vec<_> = spec
                .long
                .iter()
                .filter(|(n, _, _)| n.starts_with(name))
                .collect();
            let (lname, takes, canon) = match (exact, cands.as_slice()) {
                (Some(e), _) => *e,
                (None, [one]) => **one,
                (None, []) => return Err(format!("unrecognized option '--{name}'")),
                (None, _) => return Err(format!("option '--{name}' is ambiguous")),
            };
            let value = if takes {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(format!("option '--{lname}' requires an argument")),
                }
            } else {
                if inline.is_some() {
                    return Err(format!("option '--{lname}' doesn't allow an argument"));
                }
                None
            };
            out.opts.push(Opt {
                name: canon.to_string(),
                value,
            });
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                if spec.flags.contains(c) {
                    out.opts.push(Opt {
                        name: c.to_string(),
                        value: None,
                    });
                } else if spec.valued.contains(c) {
                    let rest: String = chars[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    };
                    out.opts.push(Opt {
                        name: c.to_string(),
                        value: Some(value),
                    });
                    break;
                } else {
                    return Err(format!("invalid option -- '{c}'"));
                }
            }
            continue;
        }
        out.operands.push(a.clone());
        if spec.stop_at_operand {
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        flags: "rnu",
        valued: "kt",
        long: &[
            ("reverse", false, "r"),
            ("key", true, "k"),
            ("unique", false, "u"),
        ],
        stop_at_operand: false,
    };

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn combined_and_valued() {
        let p = parse(
            &s(&["-rnk2", "f", "-t", ",", "--rev", "--key=3", "--", "-x"]),
            &SPEC,
        )
        .unwrap();
        assert!(p.has("r") && p.has("n"));
        assert_eq!(p.values("k"), vec!["2", "3"]);
        assert_eq!(p.value("t"), Some(","));
        assert_eq!(p.operands, s(&["f", "-x"]));
    }

    #[test]
    fn errors_are_gnu_worded() {
        assert_eq!(
            parse(&s(&["-z"]), &SPEC).unwrap_err(),
            "invalid option -- 'z'"
        );
        assert_eq!(
            parse(&s(&["-k"]), &SPEC).unwrap_err(),
            "option requires an argument -- 'k'"
        );
        assert_eq!(
            parse(&s(&["--bogus"]), &SPEC).unwrap_err(),
            "unrecognized option '--bogus'"
        );
    }
}
