//! Flags as a program parses them: combined short flags (`-rf` = `-r -f`), long
//! flags with `=value` or a separate value, values that are not flags
//! (`git log --grep=-c` has no `-c`), nothing after `--`. Deny-lists match
//! conservatively: a long flag given as an abbreviation (`--recur`) matches the
//! full name, and known short/long aliases (`-r` = `--recursive`) match each other.

/// One flag as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagUse {
    /// `-r` or `--recursive` (without `=value`).
    pub name: String,
    /// Its value, attached or separate, for flags that take one.
    pub value: Option<String>,
    /// Index of the argument it came from (in the args given to [`parse`]).
    pub index: usize,
}

/// Arguments split into flags and operands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedArgs {
    /// Flags in order.
    pub flags: Vec<FlagUse>,
    /// Operands with their argument index.
    pub operands: Vec<(usize, String)>,
}

/// What the policy knows about one program's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct Knowledge {
    /// Options that take a value (`-C`, `--git-dir`).
    pub value_flags: &'static [&'static str],
    /// Groups of names for the same option (`["-r", "-R", "--recursive"]`).
    pub aliases: &'static [&'static [&'static str]],
}

/// Splits `args` (without the program name) into flags and operands.
/// `stop_at_operand` stops option parsing at the first operand (POSIX order, as
/// wrappers and git's global options need); `value_flags` lists options whose value
/// is the next argument when not attached.
pub fn parse(
    args: &[String],
    value_flags: &dyn Fn(&str) -> bool,
    stop_at_operand: bool,
) -> ParsedArgs {
    let mut out = ParsedArgs::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let index = i;
        i += 1;
        if a == "--" {
            out.operands.extend(
                args[i..]
                    .iter()
                    .cloned()
                    .enumerate()
                    .map(|(k, s)| (i + k, s)),
            );
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (a.clone(), None),
            };
            let value = match inline {
                Some(v) => Some(v),
                None if value_flags(&name) && i < args.len() => {
                    i += 1;
                    Some(args[i - 1].clone())
                }
                None => None,
            };
            out.flags.push(FlagUse { name, value, index });
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let name = format!("-{}", chars[j]);
                j += 1;
                if value_flags(&name) {
                    let rest: String = chars[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        Some(rest)
                    } else if i < args.len() {
                        i += 1;
                        Some(args[i - 1].clone())
                    } else {
                        None
                    };
                    out.flags.push(FlagUse { name, value, index });
                    break;
                }
                out.flags.push(FlagUse {
                    name,
                    value: None,
                    index,
                });
            }
            continue;
        }
        out.operands.push((index, a.clone()));
        if stop_at_operand {
            out.operands.extend(
                args[i..]
                    .iter()
                    .cloned()
                    .enumerate()
                    .map(|(k, s)| (i + k, s)),
            );
            break;
        }
    }
    out
}

/// True if the flag as given (`used`) is the denied flag `denied`: the same name, a
/// known alias of it, or (for long flags) an abbreviation of it or of an alias.
pub fn matches_denied(used: &str, denied: &str, knowledge: &Knowledge) -> bool {
    let names = alias_group(denied, knowledge);
    names.iter().any(|d| {
        used == *d
            || (used.starts_with("--")
                && d.starts_with("--")
                && used.len() >= 3
                && d.starts_with(used))
    })
}

/// True if the flag as given (`used`) satisfies the required flag `required` (exact
/// name or a known alias; abbreviations do not count, the program might reject them).
pub fn matches_required(used: &str, required: &str, knowledge: &Knowledge) -> bool {
    alias_group(required, knowledge).contains(&used)
}

fn alias_group<'a>(name: &'a str, knowledge: &Knowledge) -> Vec<&'a str> {
    let mut out = vec![name];
    for group in knowledge.aliases {
        if group.contains(&name) {
            out.extend(group.iter().copied());
        }
    }
    out
}

/// What the policy knows about a program's options by its base name. The deny-list
/// matching is only as good as this table for short/long aliases; abbreviations and
/// combined flags are handled for every program.
pub fn knowledge(program: &str) -> Knowledge {
    match program {
        "git" => Knowledge {
            value_flags: &[
                "-C",
                "-c",
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--config-env",
                "--super-prefix",
                "--exec-path",
                "--upload-pack",
                "--receive-pack",
                "--exec",
                "--grep",
                "--author",
                "--committer",
                "--format",
                "--pretty",
                "--since",
                "--until",
                "--output",
                "-m",
                "-F",
                "--message",
                "--file",
                "-n",
                "--max-count",
                "-o",
                "--origin",
                "-b",
                "--branch",
                "--depth",
                "--template",
                "-u",
            ],
            aliases: &[&["-f", "--force"], &["-m", "--message"], &["-x", "--exec"]],
        },
        "rm" => Knowledge {
            value_flags: &[],
            aliases: &[
                &["-r", "-R", "--recursive"],
                &["-f", "--force"],
                &["-d", "--dir"],
                &["-i", "--interactive"],
            ],
        },
        "cp" => Knowledge {
            value_flags: &["-t", "--target-directory", "-S", "--suffix"],
            aliases: &[
                &["-r", "-R", "--recursive"],
                &["-f", "--force"],
                &["-a", "--archive"],
                &["-l", "--link"],
                &["-s", "--symbolic-link"],
            ],
        },
        "mv" => Knowledge {
            value_flags: &["-t", "--target-directory", "-S", "--suffix"],
            aliases: &[&["-f", "--force"], &["-n", "--no-clobber"]],
        },
        "curl" => Knowledge {
            value_flags: &[
                "-o",
                "--output",
                "-d",
                "--data",
                "-H",
                "--header",
                "-X",
                "--request",
                "-u",
                "--user",
                "-T",
                "--upload-file",
                "-F",
                "--form",
                "-A",
                "--user-agent",
                "-e",
                "--referer",
                "-w",
                "--write-out",
                "-K",
                "--config",
                "-x",
                "--proxy",
                "-b",
                "--cookie",
                "-c",
                "--cookie-jar",
                "--data-binary",
                "--data-raw",
                "--data-urlencode",
                "-m",
                "--max-time",
                "--connect-timeout",
                "-r",
                "--range",
                "-E",
                "--cert",
                "--key",
                "--cacert",
            ],
            aliases: &[
                &["-o", "--output"],
                &["-d", "--data"],
                &["-T", "--upload-file"],
                &["-F", "--form"],
                &["-K", "--config"],
                &["-x", "--proxy"],
                &["-k", "--insecure"],
            ],
        },
        "cargo" => Knowledge {
            value_flags: &[
                "-p",
                "--package",
                "--manifest-path",
                "--target-dir",
                "--target",
                "-j",
                "--jobs",
                "--features",
                "-F",
                "--bin",
                "--example",
                "--test",
                "--bench",
                "--profile",
                "--config",
                "-Z",
                "--color",
            ],
            aliases: &[&["-p", "--package"], &["-F", "--features"]],
        },
        "npm" | "pnpm" | "yarn" => Knowledge {
            value_flags: &["-w", "--workspace", "--prefix", "-C", "--dir"],
            aliases: &[&["-g", "--global"], &["-f", "--force"]],
        },
        "tar" => Knowledge {
            value_flags: &[
                "-f",
                "--file",
                "-C",
                "--directory",
                "-T",
                "--files-from",
                "-X",
            ],
            aliases: &[&["-f", "--file"], &["-C", "--directory"]],
        },
        "sort" => Knowledge {
            value_flags: &[
                "-k",
                "-t",
                "-o",
                "-S",
                "-T",
                "--key",
                "--field-separator",
                "--output",
                "--buffer-size",
                "--temporary-directory",
            ],
            aliases: &[
                &["-o", "--output"],
                &["-r", "--reverse"],
                &["-u", "--unique"],
                &["-n", "--numeric-sort"],
                &["-k", "--key"],
                &["-t", "--field-separator"],
                &["-T", "--temporary-directory"],
            ],
        },
        "grep" | "egrep" | "fgrep" => Knowledge {
            value_flags: &[
                "-e",
                "-f",
                "-m",
                "-A",
                "-B",
                "-C",
                "--regexp",
                "--file",
                "--max-count",
            ],
            aliases: &[
                &["-r", "--recursive"],
                &["-R", "--dereference-recursive"],
                &["-e", "--regexp"],
                &["-f", "--file"],
                &["-i", "--ignore-case"],
                &["-v", "--invert-match"],
                &["-l", "--files-with-matches"],
            ],
        },
        "sed" => Knowledge {
            value_flags: &["-e", "-f", "-l", "--expression", "--file"],
            aliases: &[
                &["-i", "--in-place"],
                &["-e", "--expression"],
                &["-f", "--file"],
                &["-n", "--quiet", "--silent"],
                &["-E", "-r", "--regexp-extended"],
                &["-s", "--separate"],
                &["-z", "--null-data"],
            ],
        },
        "tee" => Knowledge {
            value_flags: &[],
            aliases: &[&["-a", "--append"], &["-i", "--ignore-interrupts"]],
        },
        "head" | "tail" => Knowledge {
            value_flags: &["-n", "-c", "--lines", "--bytes"],
            aliases: &[
                &["-n", "--lines"],
                &["-c", "--bytes"],
                &["-f", "--follow"],
                &["-q", "--quiet", "--silent"],
            ],
        },
        "mkdir" => Knowledge {
            value_flags: &["-m", "--mode"],
            aliases: &[
                &["-p", "--parents"],
                &["-m", "--mode"],
                &["-v", "--verbose"],
            ],
        },
        "chmod" | "chown" | "chgrp" => Knowledge {
            value_flags: &["--reference"],
            aliases: &[
                &["-R", "--recursive"],
                &["-v", "--verbose"],
                &["-f", "--silent", "--quiet"],
            ],
        },
        "ln" => Knowledge {
            value_flags: &["-t", "--target-directory", "-S", "--suffix"],
            aliases: &[
                &["-s", "--symbolic"],
                &["-f", "--force"],
                &["-n", "--no-dereference"],
                &["-r", "--relative"],
            ],
        },
        "ls" => Knowledge {
            value_flags: &["-I", "-T", "-w", "--ignore", "--width"],
            aliases: &[
                &["-a", "--all"],
                &["-A", "--almost-all"],
                &["-R", "--recursive"],
                &["-r", "--reverse"],
            ],
        },
        "xargs" => Knowledge {
            value_flags: &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--replace",
                "--max-args",
                "--max-procs",
            ],
            aliases: &[
                &["-0", "--null"],
                &["-I", "--replace", "-i"],
                &["-n", "--max-args"],
                &["-P", "--max-procs"],
                &["-r", "--no-run-if-empty"],
            ],
        },
        "wc" => Knowledge {
            value_flags: &[],
            aliases: &[
                &["-l", "--lines"],
                &["-w", "--words"],
                &["-c", "--bytes"],
                &["-m", "--chars"],
            ],
        },
        "uniq" => Knowledge {
            value_flags: &["-f", "-s", "-w"],
            aliases: &[
                &["-c", "--count"],
                &["-d", "--repeated"],
                &["-u", "--unique"],
                &["-i", "--ignore-case"],
            ],
        },
        "cut" => Knowledge {
            value_flags: &["-b", "-c", "-d", "-f"],
            aliases: &[
                &["-d", "--delimiter"],
                &["-f", "--fields"],
                &["-b", "--bytes"],
                &["-c", "--characters"],
            ],
        },
        "touch" => Knowledge {
            value_flags: &["-d", "-t", "-r", "--date", "--reference"],
            aliases: &[
                &["-r", "--reference"],
                &["-d", "--date"],
                &["-c", "--no-create"],
            ],
        },
        "python" | "python3" | "python2" => Knowledge {
            value_flags: &["-c", "-m", "-W", "-X"],
            aliases: &[],
        },
        "node" => Knowledge {
            value_flags: &["-e", "-p", "-r", "--eval", "--print", "--require"],
            aliases: &[&["-e", "--eval"], &["-p", "--print"], &["-r", "--require"]],
        },
        _ => Knowledge::default(),
    }
}

/// Parses a program's arguments with its built-in knowledge plus configured
/// `value_flags`.
pub fn parse_for(program: &str, args: &[String], extra_value_flags: &[String]) -> ParsedArgs {
    let k = knowledge(program);
    let takes = |f: &str| k.value_flags.contains(&f) || extra_value_flags.iter().any(|e| e == f);
    parse(args, &takes, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn combined_short_flags_split() {
        let p = parse(&s(&["-rf", "x"]), &|_| false, false);
        let names: Vec<_> = p.flags.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["-r", "-f"]);
        assert_eq!(p.operands, vec![(1, "x".to_string())]);
    }

    #[test]
    fn values_are_not_flags() {
        let p = parse_for("git", &s(&["log", "--grep=-c", "--author", "-c"]), &[]);
        assert!(p.flags.iter().all(|f| f.name != "-c"));
        let p = parse_for("git", &s(&["-ccore.pager=x", "log"]), &[]);
        assert_eq!(p.flags[0].name, "-c");
        assert_eq!(p.flags[0].value.as_deref(), Some("core.pager=x"));
    }

    #[test]
    fn nothing_after_double_dash_is_a_flag() {
        let p = parse(&s(&["--", "-rf"]), &|_| false, false);
        assert!(p.flags.is_empty());
        assert_eq!(p.operands.len(), 1);
    }

    #[test]
    fn abbreviations_and_aliases_match_denied() {
        let k = knowledge("rm");
        assert!(matches_denied("--recur", "-r", &k));
        assert!(matches_denied("-R", "--recursive", &k));
        assert!(!matches_denied("--verbose", "-r", &k));
        assert!(matches_denied("--forc", "--force", &Knowledge::default()));
    }
}
