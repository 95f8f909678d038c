//! In-process `awk`, faithful to mawk 1.3.4: a lexer, a parser to a syntax tree,
//! and a tree-walking interpreter over byte strings.
//!
//! Running commands from awk (`system()`, `cmd | getline`, `print | cmd`) is refused
//! when the program is parsed, before any output, with status 2.

pub mod analysis;
pub mod array;
pub mod ast;
pub mod budget;
mod builtins;
mod exec;
pub mod fields;
pub mod format;
mod input;
pub mod interp;
pub mod io;
pub mod lexer;
mod output;
pub mod parser;
mod random;
pub mod regex;
pub mod value;

use safesh_utils::{UtilCtx, UtilFn, UtilResult};

/// The utilities of this crate, by name.
pub static UTILS: &[(&str, UtilFn)] = &[("awk", awk)];

const USAGE: &str = "usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]\n       awk [-F value] [-v var=value] [-f program-file] [--] [file ...]\n";

/// Stack size of the interpreter thread: deep awk recursion must not overflow.
const STACK: usize = 256 * 1024 * 1024;

/// A pointer that may cross to the interpreter thread.
struct SendPtr<T>(T);
// SAFETY: the pointee is only used by the spawned thread while the spawning thread
// is blocked joining it, so there is never concurrent access.
unsafe impl<T> Send for SendPtr<T> {}

/// `awk`: runs an awk program (mawk 1.3.4 dialect).
pub fn awk(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let ptr = SendPtr(ctx as *mut UtilCtx<'_> as usize);
    let r = std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, move || {
                let p = ptr;
                // SAFETY: see SendPtr; `ctx` outlives the scope and is not touched
                // by the caller until the thread is joined.
                let ctx = unsafe { &mut *(p.0 as *mut UtilCtx<'_>) };
                awk_main(ctx)
            });
        match h {
            Ok(h) => Some(h.join()),
            Err(_) => None,
        }
    });
    match r {
        Some(Ok(r)) => r,
        Some(Err(_)) => {
            let _ = ctx.stderr.write_all(b"awk: internal error\n");
            Ok(2)
        }
        None => awk_main(ctx),
    }
}

/// True for `name=value` with a valid awk identifier.
fn is_assignment(s: &str) -> bool {
    match s.split_once('=') {
        Some((name, _)) => {
            let mut b = name.bytes();
            b.next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
        }
        None => false,
    }
}

/// A compile error's lines as mawk words them for `-f` programs: `FILE: line
/// N:`, the line counted in that file (`files`: each file and the line of the
/// whole program text where it starts).
fn in_files(msg: &str, files: &[(String, usize)]) -> String {
    if files.is_empty() {
        return msg.to_string();
    }
    let located = |line: &str| -> Option<String> {
        let rest = line.strip_prefix("line ")?;
        let (n, text) = rest.split_once(": ")?;
        let n: usize = n.parse().ok()?;
        let (name, start) = files.iter().rev().find(|(_, s)| *s <= n)?;
        Some(format!("{name}: line {}: {text}", n - start + 1))
    };
    msg.lines()
        .map(|l| located(l).unwrap_or_else(|| l.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reports `msg` (one or more lines, each its own message) with status 2.
fn err(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    for line in msg.lines() {
        let _ = writeln!(ctx.stderr, "awk: {line}");
    }
    Ok(2)
}

fn awk_main(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let args: Vec<String> = ctx.args().to_vec();
    let mut fs: Option<String> = None;
    let mut assigns: Vec<String> = Vec::new();
    let mut progfiles: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let (opt, rest) = a.split_at(2.min(a.len()));
        let value = |i: &mut usize| -> Option<String> {
            if !rest.is_empty() {
                Some(rest.to_string())
            } else {
                *i += 1;
                args.get(*i).cloned()
            }
        };
        match opt {
            "-F" => match value(&mut i) {
                Some(v) => fs = Some(v),
                None => return err(ctx, "option requires an argument -- F"),
            },
            "-v" => match value(&mut i) {
                Some(v) if is_assignment(&v) => assigns.push(v),
                Some(v) => return err(ctx, &format!("improper assignment: -v {v}")),
                None => return err(ctx, "option requires an argument -- v"),
            },
            "-f" => match value(&mut i) {
                Some(v) => progfiles.push(v),
                None => return err(ctx, "option requires an argument -- f"),
            },
            "-W" => {
                let v = value(&mut i).unwrap_or_default();
                if v.starts_with('v') {
                    let _ = ctx.stdout.write_all(
                        b"mawk 1.3.4 20200120\nCopyright 2008-2019,2020, Thomas E. Dickey\nCopyright 1991-1996,2014, Michael D. Brennan\n\n",
                    );
                    return Ok(0);
                }
            }
            _ => {
                let _ = writeln!(ctx.stderr, "awk: not an option: {a}");
                let _ = ctx.stderr.write_all(USAGE.as_bytes());
                return Ok(2);
            }
        }
        i += 1;
    }
    // Where each `-f` file's text starts in the program (its first line).
    let mut file_starts: Vec<(String, usize)> = Vec::new();
    let src: Vec<u8> = if progfiles.is_empty() {
        match args.get(i) {
            Some(p) => {
                i += 1;
                p.as_bytes().to_vec()
            }
            None => {
                // mawk prints its usage and succeeds.
                let _ = ctx.stderr.write_all(USAGE.as_bytes());
                return Ok(0);
            }
        }
    } else {
        let mut s = Vec::new();
        for f in &progfiles {
            file_starts.push((f.clone(), 1 + s.iter().filter(|&&b| b == b'\n').count()));
            let data = if f == "-" || f == "/dev/stdin" {
                let mut v = Vec::new();
                let _ = std::io::Read::read_to_end(ctx.stdin, &mut v);
                Ok(v)
            } else {
                ctx.read_file(f)
            };
            match data {
                Ok(d) => {
                    s.extend_from_slice(&d);
                    s.push(b'\n');
                }
                Err(e) => {
                    if let Some(stop) = safesh_utils::ctx::MemoryLimit::from_io(&e, "awk -f") {
                        return Err(stop);
                    }
                    let m = safesh_utils::io_error_text(&e);
                    return err(ctx, &format!("couldn't open file {f} ({m})"));
                }
            }
        }
        // mawk counts lines in the file as written: no newline after the last.
        s.pop();
        s
    };
    let prog = match parser::parse(&src) {
        Ok(p) => p,
        Err(parser::ParseError::Syntax(m)) => return err(ctx, &in_files(&m, &file_starts)),
        Err(parser::ParseError::Refused(m)) => {
            return Err(safesh_utils::Interrupt(Box::new(
                safesh_utils::ShellString(format!("awk: {m}")),
            )));
        }
    };
    let mut argv = vec!["awk".to_string()];
    argv.extend(args[i..].iter().cloned());
    // ENVIRON holds only what the program can read: reading a variable joins its
    // label into the output (a secret stays secret, and `ENVIRON["HOME"]` does not
    // take the label of every exported secret).
    let environ = environ_names(&src);
    // Declared before the interpreter, so dropped after its arrays.
    let _held = budget::Scope::enter(ctx.host.memory_budget());
    let mut it = match interp::Interp::new(ctx, prog, environ) {
        Ok(it) => it,
        Err(m) => {
            let _ = writeln!(ctx.stderr, "awk: {m}");
            return Ok(2);
        }
    };
    it.set_argv(&argv);
    if let Some(f) = fs {
        let v = lexer::unescape(f.as_bytes());
        if let Err(e) = it.set_var(
            ast::Var::Global(interp::slot::FS),
            value::Value::Str(v.into()),
        ) {
            return Ok(report(&mut it, e));
        }
    }
    for a in &assigns {
        let Some((name, val)) = a.split_once('=') else {
            let _ = writeln!(it.ctx.stderr, "awk: improper assignment: -v {a}");
            return Ok(2);
        };
        // The value is a word: a byte that is not UTF-8 is the byte, as in mawk.
        let val = safesh_utils::word_bytes::word_to_bytes(val);
        if let Err(e) = it.assign_operand(name, &val) {
            return Ok(report(&mut it, e));
        }
    }
    it.run()
}

fn report(it: &mut interp::Interp<'_, '_>, e: interp::Ctl) -> i32 {
    if let interp::Ctl::Err(m) = e {
        let _ = writeln!(it.ctx.stderr, "awk: {m}");
    }
    2
}

/// Whether an awk command line given inline (`awk 'PROG' …`) runs commands
/// (`system()`, `cmd | getline`, `print | cmd`): the refusal text, decided before
/// anything runs. Programs from `-f` files are checked when they are read.
pub fn shell_escape(args: &[String]) -> Option<String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        match a.get(..2) {
            Some("-f") => return None,
            Some("-F" | "-v" | "-W") if a.len() == 2 => i += 1,
            _ => {}
        }
        i += 1;
    }
    match parser::parse(args.get(i)?.as_bytes()) {
        Err(parser::ParseError::Refused(m)) => Some(format!("awk: {m}")),
        _ => None,
    }
}

/// The environment variables awk program `src` can read: `Some(names)` when every
/// mention of `ENVIRON` is a lookup with a literal name (`ENVIRON["HOME"]`; none
/// at all for most programs), `None` when it may read any (`for (k in ENVIRON)`).
fn environ_names(src: &[u8]) -> Option<Vec<String>> {
    const WORD: &[u8] = b"ENVIRON";
    let mut names = Vec::new();
    let mut i = 0;
    while i + WORD.len() <= src.len() {
        if &src[i..i + WORD.len()] != WORD {
            i += 1;
            continue;
        }
        let rest = &src[i + WORD.len()..];
        let lit = rest.strip_prefix(b"[\"").and_then(|r| {
            let end = r.iter().position(|&c| c == b'"')?;
            let name = &r[..end];
            let plain = name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
            (plain && r.get(end + 1) == Some(&b']')).then_some((name, end + 3))
        });
        let (name, used) = lit?;
        names.push(String::from_utf8_lossy(name).into_owned());
        i += WORD.len() + used;
    }
    Some(names)
}

#[cfg(test)]
mod environ_tests {
    use super::environ_names;

    #[test]
    fn literal_lookups_read_only_those() {
        assert_eq!(environ_names(b"{print $1}"), Some(vec![]));
        assert_eq!(
            environ_names(b"BEGIN{print ENVIRON[\"HOME\"] ENVIRON[\"X_1\"]}"),
            Some(vec!["HOME".to_string(), "X_1".to_string()])
        );
    }

    #[test]
    fn anything_else_reads_all() {
        assert_eq!(environ_names(b"BEGIN{for(k in ENVIRON) print k}"), None);
        assert_eq!(environ_names(b"BEGIN{print ENVIRON[k]}"), None);
        assert_eq!(environ_names(b"BEGIN{print ENVIRON[\"A\" k]}"), None);
    }
}
