//! Wrappers: builtins that run another command — `command`, `builtin`, `exec`,
//! `env`, `timeout`, `nice`, `nohup`, `stdbuf`, `time`, `setsid`, `ionice`,
//! `taskset` — plus `type`. The inner command always goes back through
//! [`Shell::dispatch`], so it is resolved (and, later, decided) exactly as if it were
//! run directly.

use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::simple::Resolved;
use crate::interp::{Cancel, Exec, Shell, Stop};
use std::time::{Duration, Instant};

/// Describes how `name` resolves, for `type` and `command -v`.
fn describe(sh: &Shell, name: &str) -> Option<(String, String)> {
    describe_in(sh, name, &sh.var_str("PATH"))
}

/// bash's default path for `command -p` (`getconf PATH`).
const STANDARD_PATH: &str = "/bin:/usr/bin";

/// [`describe`], with `path` for where a utility's program would be.
fn describe_in(sh: &Shell, name: &str, path_var: &str) -> Option<(String, String)> {
    if let Some((value, _)) = sh.aliases.get(name) {
        return Some((
            format!("alias {name}='{}'", value.replace('\'', r"'\''")),
            format!("{name} is aliased to `{value}'"),
        ));
    }
    if is_keyword(name) {
        return Some((name.to_string(), format!("{name} is a shell keyword")));
    }
    if matches!(name, "echo" | "printf" | "kill") && !sh.funcs.contains_key(name) {
        return Some((name.to_string(), format!("{name} is a shell builtin")));
    }
    match sh.resolve(name, false) {
        // bash shows the definition after the line (`declare -f`'s layout).
        Resolved::Function(_) => {
            let mut long = format!("{name} is a function");
            if let Some(def) = sh.funcs.get(name) {
                long.push('\n');
                long.push_str(
                    safesh_syntax::restore_blanks(&def.to_string()).trim_end_matches('\n'),
                );
            }
            Some((name.to_string(), long))
        }
        Resolved::Builtin => Some((name.to_string(), format!("{name} is a shell builtin"))),
        Resolved::Utility(_) => {
            // It runs in-process, whatever PATH holds: say so. `command -v`
            // (and `type -t`: `file`) stay as bash has them for scripts that
            // test for a program; the path is where bash would find it.
            let path = find_in_path(path_var, name);
            let long = match &path {
                Some(p) => format!("{name} is a safesh utility (runs in-process instead of {p})"),
                None => format!("{name} is a safesh utility (runs in-process)"),
            };
            Some((path.unwrap_or_else(|| name.to_string()), long))
        }
        Resolved::Platform(c) => Some((
            name.to_string(),
            format!(
                "{name} is a safesh platform command ({} risk)",
                c.risk().as_str()
            ),
        )),
        // An external program is found only on the trusted PATH (what would run).
        Resolved::NotFound => {
            let policy = sh.shared.policy.as_ref()?;
            let p = policy.resolve_program(name, &sh.cwd)?;
            // A name with a slash is shown as written (`./run`), as bash does.
            let p = if name.contains('/') {
                name.to_string()
            } else {
                p.to_string_lossy().into_owned()
            };
            Some((p.clone(), format!("{name} is {p}")))
        }
    }
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "case"
            | "esac"
            | "for"
            | "while"
            | "until"
            | "do"
            | "done"
            | "in"
            | "function"
            | "select"
            | "time"
            | "{"
            | "}"
            | "!"
            | "[["
            | "]]"
    )
}

fn find_in_path(path: &str, name: &str) -> Option<String> {
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| std::path::Path::new(d).join(name))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

/// What `describe` found, by its first line.
fn kind_of(long: &str) -> &'static str {
    let first = long.lines().next().unwrap_or_default();
    if first.contains(" is aliased to `") {
        "alias"
    } else if first.ends_with("keyword") {
        "keyword"
    } else if first.ends_with("function") {
        "function"
    } else if first.ends_with("builtin") {
        "builtin"
    } else {
        "file"
    }
}

pub(super) fn type_(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let mut terse = false;
    // `-p`: the file a name runs, only when it runs a file; `-P`: the file
    // found on PATH whatever the name is.
    let mut path_only = false;
    let mut force_path = false;
    let mut status = 0;
    let mut operands = false;
    for f in &argv[1..] {
        if !operands
            && let Some(flags) = f
                .text
                .strip_prefix('-')
                .filter(|fl| !fl.is_empty() && fl.chars().all(|c| "tapPf".contains(c)))
        {
            for c in flags.chars() {
                match c {
                    't' => terse = true,
                    'p' => path_only = true,
                    'P' => force_path = true,
                    _ => {}
                }
            }
            continue;
        }
        operands = true;
        if force_path {
            match find_in_path(&sh.var_str("PATH"), &f.text) {
                Some(p) => {
                    out(sh, &format!("{p}\n"), &label);
                }
                None => status = 1,
            }
            continue;
        }
        match describe(sh, &f.text) {
            Some((short, long)) => {
                let kind = kind_of(&long);
                if path_only {
                    if kind == "file" {
                        out(sh, &format!("{short}\n"), &label);
                    }
                } else if terse {
                    out(sh, &format!("{kind}\n"), &label);
                } else {
                    out(sh, &format!("{long}\n"), &label);
                }
            }
            None => {
                if !terse && !path_only {
                    sh.diag(format!("type: {}: not found", f.text));
                }
                status = 1;
            }
        }
    }
    sh.set_status(status);
    Ok(())
}

pub(super) fn command(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut i = 1;
    let mut verbose = None;
    let mut standard = false;
    while let Some(f) = argv.get(i) {
        let t = f.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        // Options may be clustered (`-pv`); the last of -v/-V wins.
        let Some(flags) = t
            .strip_prefix('-')
            .filter(|fl| !fl.is_empty() && fl.chars().all(|c| matches!(c, 'p' | 'v' | 'V')))
        else {
            break;
        };
        for c in flags.chars() {
            match c {
                'v' => verbose = Some(false),
                'V' => verbose = Some(true),
                _ => standard = true,
            }
        }
        i += 1;
    }
    if let Some(long) = verbose {
        let label = args_label(sh, argv);
        // bash: success when any name was found (`type` wants all of them).
        let mut found = false;
        let path_var = if standard {
            STANDARD_PATH.to_string()
        } else {
            sh.var_str("PATH")
        };
        for f in &argv[i..] {
            match describe_in(sh, &f.text, &path_var) {
                Some((short, long_text)) => {
                    found = true;
                    let text = if long { long_text } else { short };
                    out(sh, &format!("{text}\n"), &label);
                }
                None => {
                    if long {
                        sh.diag(format!("command: {}: not found", f.text));
                    }
                }
            }
        }
        sh.set_status(if found { 0 } else { 1 });
        return Ok(());
    }
    sh.dispatch(argv[i..].to_vec(), true)
}

pub(super) fn builtin(sh: &mut Shell, argv: &[Field]) -> Exec {
    let Some(name) = argv.get(1) else {
        sh.set_status(0);
        return Ok(());
    };
    // bash's own builtins that safesh implements as utilities (echo, printf, …).
    let bash_builtin_utility = matches!(name.text.as_str(), "echo" | "printf" | "kill");
    if bash_builtin_utility {
        return sh.dispatch(argv[1..].to_vec(), true);
    }
    if !crate::builtins::is_builtin(&name.text) {
        sh.diag(format!("builtin: {}: not a shell builtin", name.text));
        sh.set_status(1);
        return Ok(());
    }
    crate::builtins::run(sh, &argv[1..])
}

pub(super) fn exec(sh: &mut Shell, argv: &[Field]) -> Exec {
    if argv.len() == 1 {
        // `exec >file`: the redirections were applied around this command; make
        // them permanent by not restoring.
        sh.keep_redirects = true;
        sh.set_status(0);
        return Ok(());
    }
    // Like execve: only a program replaces the shell (no function, no
    // shell-only builtin); a non-interactive shell exits when there is none.
    let name = &argv[1].text;
    if !sh.program_exists(name) {
        sh.diag(format!("exec: {name}: not found"));
        sh.set_status(127);
        return Err(Stop::Exit);
    }
    sh.dispatch_program(argv[1..].to_vec())?;
    Err(Stop::Exit)
}

/// Skips leading options of a wrapper (`nice -n 5`, `stdbuf -oL`): `valued` lists
/// options that take a separate value.
fn skip_options(argv: &[Field], valued: &[&str]) -> usize {
    let mut i = 1;
    while let Some(f) = argv.get(i) {
        let t = f.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if valued.contains(&t) {
            i += 1;
        }
        i += 1;
    }
    i
}

fn run_inner(sh: &mut Shell, argv: &[Field], start: usize) -> Exec {
    if start >= argv.len() {
        sh.set_status(0);
        return Ok(());
    }
    sh.dispatch(argv[start..].to_vec(), false)
}

/// Runs `argv` as the program `wrapper` (`nice`, `nohup`, …) starts: found
/// as `execvp` finds it ([`Shell::resolve_program`]), in a subshell as in a
/// process of its own; when there is none, says so in the wrapper's words.
fn run_program(sh: &mut Shell, wrapper: &str, argv: &[Field]) -> Exec {
    let Some(first) = argv.first() else {
        sh.set_status(0);
        return Ok(());
    };
    if !sh.program_exists(&first.text) {
        return missing_program(sh, wrapper, &first.text);
    }
    let mut sub = sh.subshell();
    let r = sub.dispatch_program(argv.to_vec());
    sh.set_status(sub.last_status);
    match r {
        Err(Stop::Refused(x)) => Err(Stop::Refused(x)),
        _ => Ok(()),
    }
}

/// Reports that `wrapper` found no program `name`, in that program's words
/// (coreutils, util-linux), with its status.
fn missing_program(sh: &mut Shell, wrapper: &str, name: &str) -> Exec {
    let quoted = if sh.utf8_locale() {
        format!("\u{2018}{name}\u{2019}")
    } else {
        format!("'{name}'")
    };
    let (msg, status) = match wrapper {
        "env" | "nice" => (
            format!("{wrapper}: {quoted}: No such file or directory"),
            127,
        ),
        "nohup" => (
            format!("nohup: failed to run command '{name}': No such file or directory"),
            127,
        ),
        "stdbuf" | "timeout" => (
            format!("{wrapper}: failed to run command {quoted}: No such file or directory"),
            127,
        ),
        // util-linux: EX_UNAVAILABLE.
        "flock" => (
            format!("flock: failed to execute {name}: No such file or directory"),
            69,
        ),
        _ => (
            format!("{wrapper}: failed to execute {name}: No such file or directory"),
            127,
        ),
    };
    let label = sh.message_label();
    let _ = sh.out_fd(2).write_chunk(
        &safesh_utils::word_bytes::word_to_bytes(&format!("{msg}\n")),
        &label,
    );
    sh.set_status(status);
    Ok(())
}

pub(super) fn nice(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(argv, &["-n", "--adjustment"]);
    if start >= argv.len() {
        out(sh, "0\n", &args_label(sh, argv));
        sh.set_status(0);
        return Ok(());
    }
    run_program(sh, "nice", &argv[start..])
}

pub(super) fn nohup(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(argv, &[]);
    run_program(sh, "nohup", &argv[start.min(argv.len())..])
}

pub(super) fn setsid(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(argv, &[]);
    run_program(sh, "setsid", &argv[start.min(argv.len())..])
}

pub(super) fn stdbuf(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(argv, &["-i", "-o", "-e"]);
    run_program(sh, "stdbuf", &argv[start.min(argv.len())..])
}

pub(super) fn ionice(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(
        argv,
        &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
    );
    run_program(sh, "ionice", &argv[start.min(argv.len())..])
}

pub(super) fn taskset(sh: &mut Shell, argv: &[Field]) -> Exec {
    // taskset [-c] MASK|LIST cmd …
    let mut i = skip_options(argv, &[]);
    i += 1;
    run_program(sh, "taskset", &argv[i.min(argv.len())..])
}

pub(super) fn time(sh: &mut Shell, argv: &[Field]) -> Exec {
    let start = skip_options(argv, &["-f", "-o", "--format", "--output"]);
    let t = Instant::now();
    let r = run_inner(sh, argv, start);
    sh.report_time(t);
    r
}

/// Parses a duration like `1.5`, `2s`, `3m`, `1h`, `1d`.
fn parse_duration(s: &str) -> Option<Duration> {
    let (num, mult) = match s.chars().last()? {
        's' => (&s[..s.len() - 1], 1.0),
        'm' => (&s[..s.len() - 1], 60.0),
        'h' => (&s[..s.len() - 1], 3600.0),
        'd' => (&s[..s.len() - 1], 86400.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v >= 0.0 && v.is_finite()).then(|| Duration::from_secs_f64(v * mult))
}

pub(super) fn timeout(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut i = 1;
    let mut preserve = false;
    let mut kill = false;
    while let Some(f) = argv.get(i) {
        let t = f.text.as_str();
        match t {
            "--preserve-status" => preserve = true,
            "--foreground" | "-v" | "--verbose" => {}
            "-s" | "--signal" => {
                i += 1;
                kill = argv
                    .get(i)
                    .is_some_and(|s| matches!(s.text.trim_start_matches("SIG"), "KILL" | "9"));
            }
            "-k" | "--kill-after" => i += 1,
            _ if t.starts_with("--signal=")
                || t.starts_with("--kill-after=")
                || (t.starts_with("-s") && t.len() > 2)
                || (t.starts_with("-k") && t.len() > 2) => {}
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let Some(d) = argv.get(i).and_then(|f| parse_duration(&f.text)) else {
        let shown = argv.get(i).map(|f| f.text.clone()).unwrap_or_default();
        sh.diag(format!("timeout: invalid time interval '{shown}'"));
        sh.set_status(125);
        return Ok(());
    };
    if i + 1 >= argv.len() {
        sh.diag("timeout: missing operand");
        sh.set_status(125);
        return Ok(());
    }
    // The inner command runs in a subshell (as it would in its own process) with
    // its own deadline; a duration of 0 means no limit.
    if !sh.program_exists(&argv[i + 1].text) {
        return missing_program(sh, "timeout", &argv[i + 1].text);
    }
    let mut sub = sh.subshell();
    if !d.is_zero() {
        sub.cancel = Cancel::child(&sh.cancel, Instant::now() + d);
    }
    let r = sub.dispatch_program(argv[i + 1..].to_vec());
    let expired = sub.cancel.expired_here() && !sub.cancel.parent_cancelled() && !d.is_zero();
    let status = sub.last_status;
    match r {
        Err(Stop::Refused(refusal))
            if expired && refusal.code == crate::error::ErrorCode::Timeout =>
        {
            // SIGKILL cannot be caught: the status is 128+9 even without --preserve-status.
            sh.set_status(if kill {
                137
            } else if preserve {
                143
            } else {
                124
            });
            Ok(())
        }
        Err(Stop::Refused(refusal)) => Err(Stop::Refused(refusal)),
        _ => {
            sh.set_status(if expired {
                if preserve { 143 } else { 124 }
            } else {
                status
            });
            Ok(())
        }
    }
}

pub(super) fn env(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut i = 1;
    let mut clear = false;
    let mut unsets = Vec::new();
    while let Some(f) = argv.get(i) {
        let t = f.text.as_str();
        match t {
            "-i" | "-" | "--ignore-environment" => clear = true,
            "-u" | "--unset" => {
                i += 1;
                if let Some(n) = argv.get(i) {
                    unsets.push(n.text.clone());
                }
            }
            "-0" | "--null" => {}
            "--" => {
                i += 1;
                break;
            }
            _ if t.starts_with("-u") && t.len() > 2 => unsets.push(t[2..].to_string()),
            _ if t.starts_with("--unset=") => unsets.push(t["--unset=".len()..].to_string()),
            _ if t.starts_with('-') && t.len() > 1 => {
                sh.diag(format!("env: invalid option -- '{}'", &t[1..]));
                sh.set_status(125);
                return Ok(());
            }
            _ => break,
        }
        i += 1;
    }
    // env runs its command in a modified copy of the environment.
    let mut sub = sh.subshell();
    if clear {
        let names: Vec<String> = sub.vars.names().cloned().collect();
        for n in names {
            if let Some(v) = sub.vars.get_mut(&n) {
                v.exported = false;
            }
        }
    }
    for n in unsets {
        let _ = sub.vars.unset(&n);
    }
    while let Some(f) = argv.get(i) {
        match f.text.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                let _ = sub.vars.set(k, v.to_string(), f.label.clone());
                sub.vars.name_from(k, &f.label);
                if let Some(var) = sub.vars.get_mut(k) {
                    var.exported = true;
                }
                i += 1;
            }
            _ => break,
        }
    }
    if i >= argv.len() {
        // One line per variable, each with the labels of its value and name.
        let label = args_label(sh, argv).join(sub.vars.listing_label());
        for (k, (v, l)) in sub.vars.labeled_environment() {
            out(sh, &format!("{k}={v}\n"), &label.join(&l));
        }
        sh.set_status(0);
        return Ok(());
    }
    // The inner command is a program: not a function or a shell-only builtin.
    if !sub.program_exists(&argv[i].text) {
        return missing_program(sh, "env", &argv[i].text);
    }
    let r = sub.dispatch_program(argv[i..].to_vec());
    sh.set_status(sub.last_status);
    match r {
        Err(Stop::Refused(x)) => Err(Stop::Refused(x)),
        _ => Ok(()),
    }
}

pub(super) fn flock(sh: &mut Shell, argv: &[Field]) -> Exec {
    use std::os::fd::AsRawFd;
    let mut i = 1;
    let mut mode = libc::LOCK_EX;
    let mut nonblock = false;
    let mut conflict_status = 1;
    while let Some(f) = argv.get(i) {
        match f.text.as_str() {
            "-x" | "-e" | "--exclusive" => mode = libc::LOCK_EX,
            "-s" | "--shared" => mode = libc::LOCK_SH,
            "-n" | "--nb" | "--nonblock" => nonblock = true,
            "-w" | "--timeout" => i += 1,
            "-E" | "--conflict-exit-code" => {
                i += 1;
                conflict_status = argv.get(i).and_then(|v| v.text.parse().ok()).unwrap_or(1);
            }
            "-o" | "--close" | "-F" | "--no-fork" => {}
            _ => break,
        }
        i += 1;
    }
    let Some(file) = argv.get(i).map(|f| f.text.clone()) else {
        sh.diag("flock: not enough arguments");
        sh.set_status(64);
        return Ok(());
    };
    let path = sh.cwd.join(safesh_utils::word_bytes::word_to_path(&file));
    sh.check_write_path(&path)?;
    // The lock file reached through a symlink is decided on too.
    let lock = match safesh_utils::open::open_decided(
        &path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        0o666,
        |real| {
            sh.check_write_path(real)
                .map_err(|r| std::io::Error::new(std::io::ErrorKind::PermissionDenied, r.message))
        },
    ) {
        Ok(f) => f,
        Err(e) => {
            sh.diag(format!(
                "flock: cannot open lock file {file}: {}",
                safesh_utils::io_error_text(&e)
            ));
            sh.set_status(66);
            return Ok(());
        }
    };
    let op = if nonblock { mode | libc::LOCK_NB } else { mode };
    // SAFETY: flock only takes a descriptor we own for the duration of the call.
    if unsafe { libc::flock(lock.as_raw_fd(), op) } != 0 {
        sh.set_status(conflict_status);
        return Ok(());
    }
    let rest = &argv[i + 1..];
    let r = match rest.first().map(|f| f.text.as_str()) {
        // `flock FILE -c 'cmd'`: the string runs through safesh's own interpreter.
        Some("-c" | "--command") => {
            let text = rest.get(1).map(|f| f.text.clone()).unwrap_or_default();
            let mut sub = sh.subshell();
            let r = sub.run_text(&text);
            sh.set_status(sub.last_status);
            match r {
                Err(Stop::Refused(x)) => Err(Stop::Refused(x)),
                _ => Ok(()),
            }
        }
        Some(_) => run_program(sh, "flock", rest),
        None => {
            sh.set_status(0);
            Ok(())
        }
    };
    drop(lock);
    r
}
