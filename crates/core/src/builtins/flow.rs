//! Control-flow builtins: `exit`, `return`, `break`, `continue`, `eval`, `source`,
//! `trap`, `wait`, `test`, `true`, `false`, `:`.

use super::{args_label, out, texts};
use crate::error::Refusal;
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell, Stop};
use safesh_label::Label;

pub(super) fn colon(sh: &mut Shell, _: &[Field]) -> Exec {
    sh.set_status(0);
    Ok(())
}

pub(super) fn true_(sh: &mut Shell, _: &[Field]) -> Exec {
    sh.set_status(0);
    Ok(())
}

pub(super) fn false_(sh: &mut Shell, _: &[Field]) -> Exec {
    sh.set_status(1);
    Ok(())
}

/// `umask [-p] [-S] [MODE]`: the shell's file creation mask, shown and set as
/// bash does (octal or `u=rwx,g+w`). Files safesh creates keep their usual
/// modes: the mask is not applied to the process, which other requests share.
pub(super) fn umask(sh: &mut Shell, argv: &[Field]) -> Exec {
    let label = args_label(sh, argv);
    let (mut symbolic, mut reusable) = (false, false);
    let mut args = &argv[1..];
    while let Some(a) = args.first() {
        match a.text.as_str() {
            "-S" => symbolic = true,
            "-p" => reusable = true,
            "-pS" | "-Sp" => (symbolic, reusable) = (true, true),
            _ => break,
        }
        args = &args[1..];
    }
    let Some(mode) = args.first() else {
        let m = sh.umask;
        let shown = if symbolic {
            let perms = |shift: u32| {
                let allowed = !(m >> shift) & 7;
                ["r", "w", "x"]
                    .iter()
                    .zip([4, 2, 1])
                    .filter(|(_, b)| allowed & b != 0)
                    .map(|(c, _)| *c)
                    .collect::<String>()
            };
            format!("u={},g={},o={}", perms(6), perms(3), perms(0))
        } else {
            format!("{m:04o}")
        };
        let prefix = match (reusable, symbolic) {
            (true, true) => "umask -S ",
            (true, false) => "umask ",
            _ => "",
        };
        out(sh, &format!("{prefix}{shown}\n"), &label);
        sh.set_status(0);
        return Ok(());
    };
    let text = mode.text.as_str();
    let parsed = if text.starts_with(|c: char| c.is_ascii_digit()) {
        u32::from_str_radix(text, 8)
            .ok()
            .filter(|m| *m <= 0o777)
            .ok_or_else(|| format!("{text}: octal number out of range"))
    } else {
        symbolic_umask(sh.umask, text)
    };
    match parsed {
        Ok(m) => {
            sh.umask = m;
            sh.set_status(0);
        }
        Err(e) => {
            sh.diag(format!("umask: {e}"));
            sh.set_status(1);
        }
    }
    Ok(())
}

/// A symbolic mode (`u=rwx,g+w,o-x`) applied to the permissions `mask` allows.
fn symbolic_umask(mask: u32, text: &str) -> Result<u32, String> {
    let mut allowed = !mask & 0o777;
    for clause in text.split(',') {
        let who_len = clause
            .chars()
            .take_while(|c| matches!(c, 'u' | 'g' | 'o' | 'a'))
            .count();
        let (who, rest) = clause.split_at(who_len);
        let mut chars = rest.chars();
        let op = chars.next();
        let Some(op @ ('+' | '-' | '=')) = op else {
            let bad = op.map(String::from).unwrap_or_default();
            return Err(format!("`{bad}': invalid symbolic mode operator"));
        };
        let mut perms = 0;
        for c in chars {
            perms |= match c {
                'r' => 4,
                'w' => 2,
                'x' => 1,
                _ => return Err(format!("`{c}': invalid symbolic mode character")),
            };
        }
        let shifts: Vec<u32> = if who.is_empty() || who.contains('a') {
            vec![6, 3, 0]
        } else {
            who.chars()
                .map(|c| match c {
                    'u' => 6,
                    'g' => 3,
                    _ => 0,
                })
                .collect()
        };
        for sh in shifts {
            let bits = perms << sh;
            match op {
                '+' => allowed |= bits,
                '-' => allowed &= !bits,
                _ => allowed = (allowed & !(7 << sh)) | bits,
            }
        }
    }
    Ok(!allowed & 0o777)
}

pub(super) fn test(sh: &mut Shell, argv: &[Field]) -> Exec {
    let name = argv[0].text.clone();
    let args = texts(&argv[1..]);
    let label = args_label(sh, argv);
    sh.pc.join_assign(&label);
    let s = sh.eval_test_args(&args, &name)?;
    sh.set_status(s);
    Ok(())
}

/// What `break N` / `continue N` asked for.
enum LoopArg {
    /// Leave (or skip) this many loops.
    Levels(u32),
    /// A count below 1: bash reports it and leaves the innermost loop, status 1.
    OutOfRange,
}

/// Parses the loop count; a bad or extra argument ends the shell as in bash
/// (status 128 for a non-number, 1 for too many arguments).
fn loop_count(sh: &mut Shell, argv: &[Field], name: &str) -> Result<LoopArg, Stop> {
    if argv.len() > 2 {
        sh.diag(format!("{name}: too many arguments"));
        sh.set_status(1);
        return Err(Stop::Exit);
    }
    let Some(f) = argv.get(1) else {
        return Ok(LoopArg::Levels(1));
    };
    match f.text.trim().parse::<i64>() {
        Ok(n) if n >= 1 => Ok(LoopArg::Levels(u32::try_from(n).unwrap_or(u32::MAX))),
        Ok(_) => {
            sh.diag(format!("{name}: {}: loop count out of range", f.text));
            Ok(LoopArg::OutOfRange)
        }
        Err(_) => {
            sh.diag(format!("{name}: {}: numeric argument required", f.text));
            sh.set_status(128);
            Err(Stop::Exit)
        }
    }
}

/// `break` and `continue`: outside a loop they only warn (status 0).
fn leave_loop(sh: &mut Shell, argv: &[Field], name: &str) -> Exec {
    if sh.loop_depth == 0 {
        sh.diag(format!(
            "{name}: only meaningful in a `for', `while', or `until' loop"
        ));
        sh.set_status(0);
        return Ok(());
    }
    match loop_count(sh, argv, name)? {
        LoopArg::OutOfRange => {
            sh.set_status(1);
            Err(Stop::Break(1))
        }
        LoopArg::Levels(n) => {
            sh.set_status(0);
            let n = n.min(sh.loop_depth);
            Err(if name == "break" {
                Stop::Break(n)
            } else {
                Stop::Continue(n)
            })
        }
    }
}

pub(super) fn break_(sh: &mut Shell, argv: &[Field]) -> Exec {
    leave_loop(sh, argv, "break")
}

pub(super) fn continue_(sh: &mut Shell, argv: &[Field]) -> Exec {
    leave_loop(sh, argv, "continue")
}

fn status_arg(sh: &mut Shell, argv: &[Field], name: &str) -> Option<i32> {
    match argv.get(1) {
        None => Some(sh.last_status),
        Some(f) => match f.text.trim().parse::<i64>() {
            Ok(n) => Some((n & 0xff) as i32),
            Err(_) => {
                sh.diag(format!("{name}: {}: numeric argument required", f.text));
                Some(2)
            }
        },
    }
}

pub(super) fn exit(sh: &mut Shell, argv: &[Field]) -> Exec {
    let s = status_arg(sh, argv, "exit").unwrap_or(2);
    sh.set_status(s);
    Err(Stop::Exit)
}

pub(super) fn return_(sh: &mut Shell, argv: &[Field]) -> Exec {
    if !sh.vars.in_function() && sh.source_depth == 0 {
        // bash 5.2: status 2, whatever the argument.
        sh.diag("return: can only `return' from a function or sourced script");
        sh.set_status(2);
        return Ok(());
    }
    let s = status_arg(sh, argv, "return").unwrap_or(2);
    sh.set_status(s);
    Err(Stop::Return)
}

/// A parse refusal that ends the whole script (a limit, the deadline, a cancel),
/// unlike a syntax error in the text, which is the command's status 2 as in bash.
fn stops_script(r: &Refusal) -> bool {
    use crate::error::ErrorCode as C;
    !matches!(r.code, C::ParseError | C::NotSupported)
}

pub(super) fn eval(sh: &mut Shell, argv: &[Field]) -> Exec {
    let text = texts(&argv[1..]).join(" ");
    if text.trim().is_empty() {
        sh.set_status(0);
        return Ok(());
    }
    let label = args_label(sh, argv);
    let script = match sh.parse_cached(&text) {
        Ok(s) => s,
        // A limit or the deadline stops the script, as everywhere else.
        Err(r) if stops_script(&r) => return Err(r.into()),
        Err(r) => {
            sh.diag(format!("eval: {}", r.message));
            sh.set_status(2);
            return Ok(());
        }
    };
    if sh.call_depth >= sh.shared.limits.call_depth {
        return Err(Refusal::limit(
            "eval/source nesting",
            sh.shared.limits.call_depth,
            "call_depth",
        )
        .into());
    }
    // Text run as code needs integrity: downloaded text is refused here.
    sh.commit_exec(safesh_flow::ExecKind::Eval, &label, argv)?;
    sh.precheck(&script.program)?;
    // Code built from data runs with that data's label on the PC.
    let saved_pc = sh.pc.clone();
    sh.pc.join_assign(&label);
    let saved_code = sh.code_label.clone();
    sh.code_label.join_assign(&label);
    sh.call_depth += 1;
    sh.set_status(0);
    // bash numbers the text's lines from the line where the eval command ends.
    let saved_offset = std::mem::replace(&mut sh.line_offset, sh.cmd_end_line.saturating_sub(1));
    let r = sh.run_program_top(&script.program);
    sh.line_offset = saved_offset;
    sh.call_depth -= 1;
    sh.pc = saved_pc;
    sh.code_label = saved_code;
    r
}

/// Why `source` could not read its file.
pub(super) enum SourceError {
    Refused(Refusal),
    Io(std::io::Error),
}

/// The text `source NAME` runs, with its label: the file's, or for `/dev/stdin`
/// the shell's standard input (a pipe or redirection in safesh, not the process's).
pub(super) fn read_source(sh: &mut Shell, name: &str) -> Result<(String, Label), SourceError> {
    let path = sh.cwd.join(safesh_utils::word_bytes::word_to_path(name));
    // `/dev/stdin`, `/dev/fd/3`: the script's input, never the process's.
    if let Some(input) = sh.descriptor_input(&path) {
        use std::io::Read;
        let input = input
            .map_err(SourceError::Refused)?
            .map_err(SourceError::Io)?;
        let cell = crate::io::LabelCell::new(Label::empty());
        let mut bytes = Vec::new();
        crate::io::StageReader::new(input, cell.clone())
            .read_to_end(&mut bytes)
            .map_err(SourceError::Io)?;
        return Ok((String::from_utf8_lossy(&bytes).into_owned(), cell.get()));
    }
    sh.check_read_path(&path).map_err(SourceError::Refused)?;
    // Noted as read before it is labeled: a sandboxed program writing it
    // meanwhile (a FIFO) raises `writers` until the text is read whole.
    let writers = crate::io::LabelCell::new(Label::empty());
    let reading = crate::running_writers::reader(writers.clone());
    writers.join(&reading.read(&path, None));
    // Fail closed: a file whose recorded label cannot be asked is not read.
    let label = sh
        .file_label_checked(&path, None)
        .map_err(SourceError::Refused)?;
    // Open what was checked: the file reached is decided on (and labeled) by
    // its canonical path when a symlink on the way makes it another; no magic
    // link is followed (a flipped symlink cannot make `source` read safesh's
    // own stdin).
    let mut refused = None;
    let mut extra = None;
    let opened = safesh_utils::open::open_decided(&path, libc::O_RDONLY, 0, |real| {
        match sh
            .check_read_path(real)
            .and_then(|()| sh.file_label_checked(real, Some(real)))
        {
            Ok(l) => {
                extra = Some(l);
                Ok(())
            }
            Err(r) => {
                refused = Some(r);
                Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
            }
        }
    });
    if let Some(r) = refused {
        return Err(SourceError::Refused(r));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut opened.map_err(SourceError::Io)?, &mut text)
        .map_err(SourceError::Io)?;
    let label = match extra {
        Some(l) => label.join(&l),
        None => label,
    };
    let label = label.join(&writers.get());
    drop(reading);
    Ok((text, label))
}

/// bash's `sourcepath`: a name without a slash is looked for in `$PATH` first
/// (any regular file; an empty entry is the cwd), then in the cwd. Only
/// directories inside the read roots are looked in: one outside them is
/// quietly skipped, never probed.
fn source_path_search(sh: &Shell, name: &str) -> Option<String> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let path = sh.var_str("PATH");
    for dir in path.split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        let cand = format!("{dir}/{name}");
        let p = std::path::Path::new(&cand);
        if sh.check_read_path(&sh.absolute(p)).is_err() {
            continue;
        }
        if let Ok(crate::probe::Probe::Entry(m)) = sh.probe(p, true)
            && m.is_file()
        {
            return Some(cand);
        }
    }
    None
}

pub(super) fn source(sh: &mut Shell, argv: &[Field]) -> Exec {
    let Some(file) = argv.get(1) else {
        sh.diag(format!("{}: filename argument required", argv[0].text));
        sh.set_status(2);
        return Ok(());
    };
    let found = source_path_search(sh, &file.text);
    let path = found.as_deref().unwrap_or(&file.text);
    let (text, label) = match read_source(sh, path) {
        Ok(read) => read,
        Err(SourceError::Refused(r)) => return Err(r.into()),
        Err(SourceError::Io(e)) => {
            sh.diag(format!(
                "{}: {}",
                file.text,
                safesh_utils::io_error_text(&e)
            ));
            sh.set_status(1);
            return Ok(());
        }
    };
    let script = match sh.parse_cached(&text) {
        Ok(s) => s,
        Err(r) if stops_script(&r) => return Err(r.into()),
        Err(r) => {
            sh.diag(format!("{}: {}", file.text, r.message));
            sh.set_status(2);
            return Ok(());
        }
    };
    if sh.call_depth >= sh.shared.limits.call_depth {
        return Err(Refusal::limit(
            "eval/source nesting",
            sh.shared.limits.call_depth,
            "call_depth",
        )
        .into());
    }
    let code = label.join(&file.label);
    sh.commit_exec(safesh_flow::ExecKind::Source, &code, argv)?;
    sh.precheck(&script.program)?;
    let saved_pos = if argv.len() > 2 {
        Some(std::mem::replace(&mut sh.positional, texts(&argv[2..])))
    } else {
        None
    };
    let saved_pc = sh.pc.clone();
    sh.pc.join_assign(&label);
    let saved_code = std::mem::replace(&mut sh.code_label, Label::agent().join(&code));
    sh.call_depth += 1;
    sh.source_depth += 1;
    sh.set_status(0);
    // A sourced file's lines are its own.
    let saved_offset = std::mem::replace(&mut sh.line_offset, 0);
    let r = sh.run_program_top(&script.program);
    sh.line_offset = saved_offset;
    // The RETURN trap runs as the sourced file returns.
    let r = match r {
        Ok(()) | Err(Stop::Return) => sh.return_trap().and(r),
        other => other,
    };
    sh.source_depth -= 1;
    sh.call_depth -= 1;
    sh.pc = saved_pc;
    sh.code_label = saved_code;
    if let Some(p) = saved_pos {
        sh.positional = p;
    }
    match r {
        Err(Stop::Return) => Ok(()),
        other => other,
    }
}

/// Linux signal names by number (1..=31; 34..=64 are the real-time ones).
const SIGNALS: &[&str] = &[
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];

/// What `trap` stores a condition under and the order `trap -p` lists it in:
/// `EXIT`, the signals by number (`SIGINT`, `SIGRTMIN+1`), then `DEBUG`,
/// `ERR`, `RETURN` — bash's names and order. None: no such signal.
fn trap_key(spec: &str) -> Option<(u32, String)> {
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let number = match name {
        "EXIT" | "0" => return Some((0, "EXIT".into())),
        "DEBUG" => return Some((65, "DEBUG".into())),
        "ERR" => return Some((66, "ERR".into())),
        "RETURN" => return Some((67, "RETURN".into())),
        "IOT" => 6,
        "POLL" => 29,
        "RTMIN" => 34,
        "RTMAX" => 64,
        _ => match name.parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                if let Some(k) = name
                    .strip_prefix("RTMIN+")
                    .and_then(|k| k.parse::<u32>().ok())
                {
                    34 + k
                } else if let Some(k) = name
                    .strip_prefix("RTMAX-")
                    .and_then(|k| k.parse::<u32>().ok())
                {
                    64u32.checked_sub(k)?
                } else {
                    SIGNALS.iter().position(|s| *s == name)? as u32 + 1
                }
            }
        },
    };
    let shown = match number {
        1..=31 => format!("SIG{}", SIGNALS[number as usize - 1]),
        34 => "SIGRTMIN".into(),
        35..=49 => format!("SIGRTMIN+{}", number - 34),
        50..=63 => format!("SIGRTMAX-{}", 64 - number),
        64 => "SIGRTMAX".into(),
        _ => return None,
    };
    Some((number, shown))
}

fn is_signal(spec: &str) -> bool {
    trap_key(spec).is_some_and(|(n, _)| (1..=64).contains(&n))
}

pub(super) fn trap(sh: &mut Shell, argv: &[Field]) -> Exec {
    // `trap -- handler SIG` (what `trap -p` prints): `--` ends the options.
    let argv: Vec<Field> = match argv.get(1) {
        Some(f) if f.text == "--" => std::iter::once(argv[0].clone())
            .chain(argv[2..].iter().cloned())
            .collect(),
        _ => argv.to_vec(),
    };
    let argv = argv.as_slice();
    let args = texts(&argv[1..]);
    // One argument that is no signal: bash's usage error.
    if args.len() == 1
        && args[0] != "-p"
        && args[0] != "-"
        && !is_signal(&args[0])
        && !matches!(
            args[0].to_ascii_uppercase().as_str(),
            "EXIT" | "0" | "ERR" | "SIGEXIT"
        )
    {
        sh.diag("trap: usage: trap [-lp] [[arg] signal_spec ...]");
        sh.set_status(2);
        return Ok(());
    }
    if args.is_empty() || args[0] == "-p" {
        let traps = sh.parent_traps.as_ref().unwrap_or(&sh.traps).clone();
        // `trap -p NAME…` lists those only.
        let wanted: Vec<String> = args
            .iter()
            .skip(1)
            .filter_map(|a| trap_key(a).map(|k| k.1))
            .collect();
        let mut names: Vec<(u32, String)> = traps
            .keys()
            .filter(|n| wanted.is_empty() || wanted.contains(n))
            .map(|n| (trap_key(n).map_or(99, |k| k.0), n.clone()))
            .collect();
        names.sort();
        let label = args_label(sh, argv);
        for (_, n) in names {
            if let Some((h, l)) = traps.get(&n) {
                let line = format!("trap -- {} {n}\n", crate::interp::expand::shell_quote(h));
                out(sh, &line, &label.join(l));
            }
        }
        sh.set_status(0);
        return Ok(());
    }
    let (handler, signals) = if args.len() == 1 {
        (None, &args[..])
    } else if args[0] == "-" {
        (None, &args[1..])
    } else {
        (Some(args[0].clone()), &args[1..])
    };
    // A handler is code run later: text from untrusted data may not become one.
    if let Some(h) = &handler
        && !h.is_empty()
    {
        sh.commit_exec(safesh_flow::ExecKind::Eval, &argv[1].label, argv)?;
    }
    let mut status = 0;
    // This shell's own traps from now on (see `parent_traps`).
    sh.parent_traps = None;
    for s in signals {
        // A signal's handler is kept for `trap -p` but never runs: safesh
        // delivers no signals to scripts.
        let Some((_, name)) = trap_key(s) else {
            sh.diag(format!("trap: {s}: invalid signal specification"));
            status = 1;
            continue;
        };
        match &handler {
            Some(h) if !h.is_empty() || args.len() > 1 => {
                // The handler runs later with the label of the text it came from.
                let label = argv[1].label.join(&sh.pc);
                sh.traps.insert(name, (h.clone(), label));
            }
            _ => {
                sh.traps.remove(&name);
            }
        }
    }
    sh.set_status(status);
    Ok(())
}

/// `wait -n`: waits for the next job to end and gives its status (127 when
/// there is none).
fn wait_next(sh: &mut Shell) -> Exec {
    loop {
        sh.check_cancel()?;
        let done = {
            let mut jobs = crate::io::lock(&sh.jobs);
            let running = jobs.iter().any(|j| !j.orphan && j.handle.is_some());
            if !running {
                None
            } else {
                let at = jobs
                    .iter()
                    .position(|j| !j.orphan && j.handle.as_ref().is_some_and(|h| h.is_finished()));
                match at {
                    Some(i) => Some(jobs.remove(i).handle),
                    None => Some(None),
                }
            }
        };
        match done {
            None => {
                sh.set_status(127);
                return Ok(());
            }
            Some(Some(h)) => {
                let status = h.join().unwrap_or(1);
                if let Some(r) = crate::io::lock(&sh.shared.refusal).take() {
                    return Err(r.into());
                }
                sh.set_status(status);
                return Ok(());
            }
            Some(None) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
}

pub(super) fn wait(sh: &mut Shell, argv: &[Field]) -> Exec {
    if argv.len() == 1 {
        sh.wait_own();
        sh.set_status(0);
        // A job stopped by a refusal stops the script that waited for it.
        if let Some(r) = crate::io::lock(&sh.shared.refusal).take() {
            return Err(r.into());
        }
        return Ok(());
    }
    if argv[1].text == "-n" {
        return wait_next(sh);
    }
    let mut status = 0;
    for a in &argv[1..] {
        let want = a.text.trim_start_matches('%');
        let jobs = std::mem::take(&mut *crate::io::lock(&sh.jobs));
        let mut rest = Vec::new();
        let mut found = false;
        for mut j in jobs {
            let pid = crate::interp::expand::job_pid(sh.shared.pid, j.id).to_string();
            if !found && !j.orphan && (pid == want || j.id.to_string() == want) {
                found = true;
                if let Some(h) = j.handle.take() {
                    status = h.join().unwrap_or(1);
                }
            } else {
                rest.push(j);
            }
        }
        crate::io::lock(&sh.jobs).extend(rest);
        if !found {
            sh.diag(format!("wait: pid {} is not a child of this shell", a.text));
            status = 127;
        }
    }
    if let Some(r) = crate::io::lock(&sh.shared.refusal).take() {
        return Err(r.into());
    }
    sh.set_status(status);
    Ok(())
}
