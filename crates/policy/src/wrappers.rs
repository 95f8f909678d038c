//! Indirection: the commands a wrapper runs. The interpreter runs every wrapper
//! in-process and sends its inner command back through the decision, so this
//! module is what lets the policy decide inner commands *before* anything runs
//! (`env bash`, `timeout 5 sudo …`, `xargs sh -c`, `find -exec rm {} +`).

/// A command a wrapper would run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inner {
    /// An argv (for xargs, before the arguments it appends).
    Argv(Vec<String>),
    /// Shell text safesh itself would parse and run (`flock FILE -c TEXT`, `eval`).
    Script(String),
}

/// Names of the wrappers this module understands.
pub const WRAPPERS: &[&str] = &[
    "env", "timeout", "nice", "nohup", "stdbuf", "time", "command", "builtin", "exec", "setsid",
    "flock", "ionice", "taskset", "xargs", "find", "eval", "trap",
];

/// Skips options: `flags` take no value, `valued` take the next argument unless
/// attached (`-n5`, `--adjustment=5`). Returns the index of the first operand.
fn skip_options(args: &[String], mut i: usize, flags: &[&str], valued: &[&str]) -> usize {
    while let Some(a) = args.get(i) {
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            return i;
        }
        let name = a.split('=').next().unwrap_or(a);
        if valued.contains(&name) {
            i += if a.contains('=') { 1 } else { 2 };
        } else if flags.contains(&name) {
            i += 1;
        } else if a.len() > 2 && !a.starts_with("--") && valued.contains(&&a[..2]) {
            i += 1; // attached value: -n5
        } else {
            // Unknown option: assume a plain flag (the wrapper itself rejects it).
            i += 1;
        }
    }
    i
}

fn rest(args: &[String], i: usize) -> Vec<Inner> {
    if i < args.len() {
        vec![Inner::Argv(args[i..].to_vec())]
    } else {
        Vec::new()
    }
}

/// The commands `argv` would run if its program is a wrapper; empty otherwise.
pub fn inner(argv: &[String]) -> Vec<Inner> {
    let Some(name) = argv.first() else {
        return Vec::new();
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    match base {
        "env" => {
            let mut i = skip_options(
                argv,
                1,
                &[
                    "-i",
                    "-0",
                    "--null",
                    "--ignore-environment",
                    "-v",
                    "--debug",
                ],
                &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            );
            // `-S STRING` splits into words: those are the command.
            for (k, a) in argv.iter().enumerate().take(i).skip(1) {
                if a == "-S" || a == "--split-string" {
                    if let Some(s) = argv.get(k + 1) {
                        let mut words: Vec<String> =
                            s.split_whitespace().map(str::to_string).collect();
                        words.extend(argv[i..].iter().cloned());
                        return vec![Inner::Argv(words)];
                    }
                } else if let Some(s) = a
                    .strip_prefix("-S")
                    .or_else(|| a.strip_prefix("--split-string="))
                {
                    let mut words: Vec<String> = s.split_whitespace().map(str::to_string).collect();
                    words.extend(argv[i..].iter().cloned());
                    return vec![Inner::Argv(words)];
                }
            }
            while argv
                .get(i)
                .is_some_and(|a| a.contains('=') && !a.starts_with('='))
            {
                i += 1;
            }
            rest(argv, i)
        }
        "timeout" => {
            let i = skip_options(
                argv,
                1,
                &["--preserve-status", "--foreground", "-v", "--verbose"],
                &["-s", "--signal", "-k", "--kill-after"],
            );
            rest(argv, i + 1) // DURATION
        }
        "nice" => {
            let mut i = 1;
            if argv
                .get(1)
                .is_some_and(|a| a.len() > 1 && a[1..].parse::<i64>().is_ok())
            {
                i = 2; // nice -5 cmd
            }
            rest(argv, skip_options(argv, i, &[], &["-n", "--adjustment"]))
        }
        "nohup" | "builtin" => rest(argv, skip_options(argv, 1, &[], &[])),
        "setsid" => rest(
            argv,
            skip_options(
                argv,
                1,
                &["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
                &[],
            ),
        ),
        "time" => rest(
            argv,
            skip_options(
                argv,
                1,
                &[
                    "-p",
                    "-v",
                    "--verbose",
                    "-a",
                    "--append",
                    "-q",
                    "--quiet",
                    "--portability",
                ],
                &["-f", "--format", "-o", "--output"],
            ),
        ),
        "stdbuf" => rest(
            argv,
            skip_options(
                argv,
                1,
                &[],
                &["-i", "-o", "-e", "--input", "--output", "--error"],
            ),
        ),
        "command" => {
            if argv
                .iter()
                .skip(1)
                .take_while(|a| a.starts_with('-'))
                .any(|a| a.contains('v') || a.contains('V'))
            {
                return Vec::new(); // `command -v` only looks the name up
            }
            rest(argv, skip_options(argv, 1, &["-p"], &[]))
        }
        "exec" => rest(argv, skip_options(argv, 1, &["-c", "-l"], &["-a"])),
        "ionice" => rest(
            argv,
            skip_options(
                argv,
                1,
                &["-t", "--ignore"],
                &[
                    "-c",
                    "--class",
                    "-n",
                    "--classdata",
                    "-p",
                    "--pid",
                    "-P",
                    "--pgid",
                    "-u",
                    "--uid",
                ],
            ),
        ),
        "taskset" => {
            let i = skip_options(argv, 1, &["-a", "--all-tasks", "-c", "--cpu-list"], &[]);
            if argv.iter().any(|a| a == "-p" || a == "--pid") {
                return Vec::new();
            }
            rest(argv, i + 1) // MASK
        }
        "flock" => {
            let i = skip_options(
                argv,
                1,
                &[
                    "-s",
                    "--shared",
                    "-x",
                    "-e",
                    "--exclusive",
                    "-u",
                    "--unlock",
                    "-n",
                    "--nb",
                    "--nonblock",
                    "-o",
                    "--close",
                    "-F",
                    "--no-fork",
                    "--verbose",
                ],
                &["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
            );
            // FILE, then a command or `-c TEXT`.
            match argv.get(i + 1).map(String::as_str) {
                Some("-c" | "--command") => argv
                    .get(i + 2)
                    .map(|t| vec![Inner::Script(t.clone())])
                    .unwrap_or_default(),
                _ => rest(argv, i + 1),
            }
        }
        "xargs" => {
            let i = skip_options(
                argv,
                1,
                &[
                    "-0",
                    "--null",
                    "-r",
                    "--no-run-if-empty",
                    "-t",
                    "--verbose",
                    "-x",
                    "--exit",
                    "-p",
                    "--interactive",
                    "--open-tty",
                    "-o",
                ],
                &[
                    "-a",
                    "--arg-file",
                    "-d",
                    "--delimiter",
                    "-E",
                    "-e",
                    "--eof",
                    "-I",
                    "--replace",
                    "-i",
                    "-L",
                    "-l",
                    "--max-lines",
                    "-n",
                    "--max-args",
                    "-P",
                    "--max-procs",
                    "-s",
                    "--max-chars",
                    "--process-slot-var",
                ],
            );
            if i < argv.len() {
                rest(argv, i)
            } else {
                vec![Inner::Argv(vec!["echo".into()])]
            }
        }
        "find" => {
            let mut out = Vec::new();
            let mut k = 1;
            while k < argv.len() {
                if matches!(argv[k].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = k + 1;
                    let mut end = start;
                    while end < argv.len()
                        && argv[end] != ";"
                        && !(argv[end] == "+" && end > start && argv[end - 1] == "{}")
                    {
                        end += 1;
                    }
                    if end > start {
                        out.push(Inner::Argv(argv[start..end].to_vec()));
                    }
                    k = end;
                }
                k += 1;
            }
            out
        }
        "eval" => {
            if argv.len() > 1 {
                vec![Inner::Script(argv[1..].join(" "))]
            } else {
                Vec::new()
            }
        }
        "trap" => {
            // `trap [-lp] [ACTION] SIGNAL…`: ACTION is shell text run later.
            let args: Vec<&String> = argv.iter().skip(1).filter(|a| *a != "--").collect();
            match args.first() {
                Some(a) if args.len() >= 2 && !a.starts_with('-') => {
                    vec![Inner::Script((*a).clone())]
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn argv(i: &[Inner]) -> Vec<String> {
        match i.first() {
            Some(Inner::Argv(a)) => a.clone(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn wrappers_yield_their_inner_command() {
        assert_eq!(
            argv(&inner(&s(&["env", "-i", "A=1", "bash", "-c", "x"]))),
            s(&["bash", "-c", "x"])
        );
        assert_eq!(
            argv(&inner(&s(&["env", "-S", "bash -c", "x"]))),
            s(&["bash", "-c", "x"])
        );
        assert_eq!(
            argv(&inner(&s(&["timeout", "-s", "KILL", "5", "sh"]))),
            s(&["sh"])
        );
        assert_eq!(
            argv(&inner(&s(&["nice", "-n", "5", "sudo", "id"]))),
            s(&["sudo", "id"])
        );
        assert_eq!(argv(&inner(&s(&["stdbuf", "-oL", "bash"]))), s(&["bash"]));
        assert_eq!(
            argv(&inner(&s(&["xargs", "-I{}", "sh", "-c", "{}"]))),
            s(&["sh", "-c", "{}"])
        );
        assert_eq!(
            argv(&inner(&s(&["find", ".", "-exec", "bash", "{}", ";"]))),
            s(&["bash", "{}"])
        );
        assert_eq!(argv(&inner(&s(&["taskset", "1", "bash"]))), s(&["bash"]));
        assert_eq!(
            inner(&s(&["flock", "f", "-c", "bash"])),
            vec![Inner::Script("bash".into())]
        );
        assert!(inner(&s(&["command", "-v", "bash"])).is_empty());
    }
}
