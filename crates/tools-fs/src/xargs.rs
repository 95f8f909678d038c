//! `xargs`: build command lines from standard input and run them through the
//! host. `-P` is accepted but commands run one after another.

use crate::common::{quote, usage};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{BufRead, BufReader, Read};

const SPEC: Spec = Spec {
    flags: "0rtxpo",
    valued: "dnLIsPEa",
    long: &[
        ("null", false, "0"),
        ("delimiter", true, "d"),
        ("max-args", true, "n"),
        ("max-lines", true, "L"),
        ("replace", true, "I"),
        ("no-run-if-empty", false, "r"),
        ("verbose", false, "t"),
        ("max-procs", true, "P"),
        ("max-chars", true, "s"),
        ("exit", false, "x"),
        ("eof", true, "E"),
        ("arg-file", true, "a"),
        ("interactive", false, "p"),
        ("open-tty", false, "o"),
        ("process-slot-var", true, "process-slot-var"),
    ],
    stop_at_operand: true,
};

/// How input is split into items.
enum Split {
    /// Blank/newline separated, quotes and backslashes special.
    Shell,
    /// A single delimiter byte, everything literal.
    Delim(u8),
}

/// One input item and whether it ended a logical line (for `-L`).
struct Item {
    text: Vec<u8>,
    eol: bool,
}

/// Reads the next item; `Err(msg)` on unmatched quotes.
fn next_item(r: &mut dyn BufRead, split: &Split, lines_mode: bool) -> Result<Option<Item>, String> {
    let mut buf = Vec::new();
    match split {
        Split::Delim(d) => {
            let n = r.read_until(*d, &mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(None);
            }
            if buf.last() == Some(d) {
                buf.pop();
            }
            Ok(Some(Item {
                text: buf,
                eol: true,
            }))
        }
        Split::Shell => {
            let mut started = false;
            let mut quote: Option<u8> = None;
            loop {
                let mut byte = [0u8; 1];
                let n = r.read(&mut byte).map_err(|e| e.to_string())?;
                if n == 0 {
                    if let Some(q) = quote {
                        let which = if q == b'"' { "double" } else { "single" };
                        return Err(format!(
                            "unmatched {which} quote; by default quotes are special to xargs unless you use the -0 option"
                        ));
                    }
                    return Ok(started.then_some(Item {
                        text: buf,
                        eol: true,
                    }));
                }
                let c = byte[0];
                if let Some(q) = quote {
                    if c == q {
                        quote = None;
                    } else if c == b'\n' {
                        let which = if q == b'"' { "double" } else { "single" };
                        return Err(format!(
                            "unmatched {which} quote; by default quotes are special to xargs unless you use the -0 option"
                        ));
                    } else {
                        buf.push(c);
                    }
                    continue;
                }
                match c {
                    b'\n' => {
                        if started {
                            if lines_mode {
                                // -I: trailing blanks belong to the item.
                                return Ok(Some(Item {
                                    text: buf,
                                    eol: true,
                                }));
                            }
                            return Ok(Some(Item {
                                text: buf,
                                eol: true,
                            }));
                        }
                    }
                    b' ' | b'\t' if !lines_mode => {
                        if started {
                            // A blank at the end of a line continues it (for -L).
                            let eol = peek_eol(r);
                            return Ok(Some(Item { text: buf, eol }));
                        }
                    }
                    b' ' | b'\t' if !started => {}
                    b'\'' | b'"' => {
                        started = true;
                        quote = Some(c);
                    }
                    b'\\' => {
                        started = true;
                        let n = r.read(&mut byte).map_err(|e| e.to_string())?;
                        if n == 1 {
                            buf.push(byte[0]);
                        }
                    }
                    _ => {
                        started = true;
                        buf.push(c);
                    }
                }
            }
        }
    }
}

/// After a blank: skip further blanks; the item ends its line only when a
/// newline follows with no blank before it, which GNU treats as continuation.
fn peek_eol(r: &mut dyn BufRead) -> bool {
    loop {
        let Ok(b) = r.fill_buf() else { return false };
        match b.first() {
            Some(b' ' | b'\t') => r.consume(1),
            _ => return false,
        }
    }
}

/// Rewrites GNU's optional-argument forms (`-i[R]`, `--replace[=R]`, `-l[N]`,
/// `-e[EOF]`, `--eof[=EOF]`) into the required-argument ones, up to the command.
fn normalize(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" || !a.starts_with('-') || a == "-" {
            out.push(a.clone());
            out.extend(args.get(i..).unwrap_or(&[]).iter().cloned());
            break;
        }
        if a == "--replace" {
            out.push("-I{}".into());
            continue;
        }
        if a == "--eof" {
            continue;
        }
        if a.starts_with("--") {
            out.push(a.clone());
            // Long options with a separate value.
            let takes = [
                "--delimiter",
                "--max-args",
                "--max-lines",
                "--max-procs",
                "--max-chars",
                "--arg-file",
                "--process-slot-var",
            ];
            if !a.contains('=')
                && takes
                    .iter()
                    .any(|t| t.starts_with(a.as_str()) && a.len() > 3)
                && let Some(v) = args.get(i)
            {
                out.push(v.clone());
                i += 1;
            }
            continue;
        }
        // A cluster of short options: copy until a valued option.
        let body = &a[1..];
        let mut rebuilt = String::from("-");
        let mut consumed_next = false;
        for (k, c) in body.char_indices() {
            let rest = &body[k + c.len_utf8()..];
            match c {
                'i' => {
                    push_opt(&mut out, &mut rebuilt);
                    out.push(format!("-I{}", if rest.is_empty() { "{}" } else { rest }));
                    break;
                }
                'l' => {
                    push_opt(&mut out, &mut rebuilt);
                    out.push(format!("-L{}", if rest.is_empty() { "1" } else { rest }));
                    break;
                }
                'e' => {
                    push_opt(&mut out, &mut rebuilt);
                    if !rest.is_empty() {
                        out.push(format!("-E{rest}"));
                    }
                    break;
                }
                'd' | 'n' | 'L' | 'I' | 's' | 'P' | 'E' | 'a' => {
                    rebuilt.push(c);
                    rebuilt.push_str(rest);
                    consumed_next = rest.is_empty();
                    break;
                }
                _ => rebuilt.push(c),
            }
        }
        push_opt(&mut out, &mut rebuilt);
        if consumed_next && let Some(v) = args.get(i) {
            out.push(v.clone());
            i += 1;
        }
    }
    out
}

fn push_opt(out: &mut Vec<String>, rebuilt: &mut String) {
    if rebuilt.len() > 1 {
        out.push(std::mem::replace(rebuilt, String::from("-")));
    }
}

/// Runs `xargs`.
pub fn xargs(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, true) {
        return Ok(st);
    }
    let args = normalize(ctx.args());
    let p = match parse(&args, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.has("p") || p.has("o") {
        ctx.warn(
            "interactive mode (-p, -o) is not supported: there is no terminal to answer prompts",
        );
        return Ok(1);
    }
    let num = |ctx: &mut UtilCtx<'_>, k: &str| -> Result<Option<usize>, i32> {
        match p.value(k) {
            None => Ok(None),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n > 0 || k == "P" => Ok(Some(n)),
                _ => {
                    ctx.warn(format_args!("invalid number {} for -{k} option", quote(v)));
                    Err(1)
                }
            },
        }
    };
    let max_args = match num(ctx, "n") {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    let max_lines = match num(ctx, "L") {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    let max_chars = match num(ctx, "s") {
        Ok(v) => v.unwrap_or(131_072),
        Err(s) => return Ok(s),
    };
    if let Err(s) = num(ctx, "P") {
        return Ok(s);
    }
    let replace = p.value("I").map(str::to_string);
    let split = if p.has("0") {
        Split::Delim(0)
    } else if let Some(d) = p.value("d") {
        match delim(d) {
            Some(b) => Split::Delim(b),
            None => {
                ctx.warn(format_args!("invalid input delimiter specification {d}: the delimiter must be either a single character or an escape sequence starting with \\."));
                return Ok(1);
            }
        }
    } else {
        Split::Shell
    };
    let eof = p
        .value("E")
        .map(|s| s.as_bytes().to_vec())
        .filter(|s| !s.is_empty());
    let mut cmd: Vec<String> = p.operands.clone();
    if cmd.is_empty() {
        cmd.push("echo".into());
    }
    let verbose = p.has("t");
    let no_empty = p.has("r");
    // -n and -L exclude each other; the later one wins (GNU warns).
    let (max_args, max_lines) = match p.opts.iter().rev().find(|o| o.name == "n" || o.name == "L") {
        Some(o) if o.name == "n" => (max_args, None),
        Some(_) => (None, max_lines),
        None => (max_args, max_lines),
    };
    let file_data;
    let mut reader: Box<dyn BufRead + '_> = if let Some(f) = p.value("a") {
        file_data = match ctx.read_file(f) {
            Ok(d) => d,
            Err(e) => {
                ctx.warn_io(format_args!("cannot open {}", quote(f)), &e);
                return Ok(1);
            }
        };
        Box::new(std::io::Cursor::new(file_data))
    } else {
        // Inner commands get an empty stdin (as GNU gives them /dev/null-like
        // input when reading from a pipe); our input keeps the real one.
        // `Empty` is zero-sized: leaking its box allocates nothing.
        let empty: &mut dyn Read = Box::leak(Box::new(std::io::empty()));
        let taken: &mut dyn Read = std::mem::replace(&mut ctx.stdin, empty);
        Box::new(BufReader::with_capacity(64 * 1024, taken))
    };
    let base_len: usize = cmd.iter().map(|a| a.len() + 1).sum();
    // The command alone must fit in `-s`, even with no input (GNU checks first).
    if base_len > max_chars {
        ctx.warn("argument line too long");
        return Ok(1);
    }
    let mut status = 0;
    let mut ran = false;
    let mut pending: Vec<String> = Vec::new();
    let mut pending_len = base_len;
    let mut lines = 0usize;
    let mut error: Option<String> = None;
    loop {
        if ctx.host.cancelled() {
            return Ok(130);
        }
        let item = match next_item(&mut *reader, &split, replace.is_some()) {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(msg) => {
                error = Some(msg);
                break;
            }
        };
        if let Some(e) = &eof
            && matches!(split, Split::Shell)
            && &item.text == e
        {
            break;
        }
        let text = safesh_utils::word_bytes::word_from_bytes(&item.text).into_owned();
        if let Some(r) = &replace {
            let argv: Vec<String> = cmd.iter().map(|a| a.replace(r.as_str(), &text)).collect();
            match invoke(ctx, &argv, verbose)? {
                Flow::Continue(s) => status = status.max(s),
                Flow::Stop(s) => return Ok(s),
            }
            ran = true;
            continue;
        }
        if pending.is_empty() && base_len + text.len() + 1 > max_chars {
            ctx.warn("argument line too long");
            return Ok(1);
        }
        if !pending.is_empty() && pending_len + text.len() + 1 > max_chars {
            let mut argv = cmd.clone();
            argv.append(&mut pending);
            pending_len = base_len;
            lines = 0;
            match invoke(ctx, &argv, verbose)? {
                Flow::Continue(s) => status = status.max(s),
                Flow::Stop(s) => return Ok(s),
            }
            ran = true;
            // What did not fit with the others must still fit alone.
            if base_len + text.len() + 1 > max_chars {
                ctx.warn("argument line too long");
                return Ok(1);
            }
        }
        pending_len += text.len() + 1;
        pending.push(text);
        if item.eol {
            lines += 1;
        }
        let full =
            max_args.is_some_and(|n| pending.len() >= n) || max_lines.is_some_and(|n| lines >= n);
        if full {
            let mut argv = cmd.clone();
            argv.append(&mut pending);
            pending_len = base_len;
            lines = 0;
            match invoke(ctx, &argv, verbose)? {
                Flow::Continue(s) => status = status.max(s),
                Flow::Stop(s) => return Ok(s),
            }
            ran = true;
        }
    }
    if !pending.is_empty() || (!ran && !no_empty && replace.is_none() && error.is_none()) {
        let mut argv = cmd.clone();
        argv.append(&mut pending);
        match invoke(ctx, &argv, verbose)? {
            Flow::Continue(s) => status = status.max(s),
            Flow::Stop(s) => return Ok(s),
        }
    }
    if let Some(msg) = error {
        ctx.warn(msg);
        return Ok(1);
    }
    Ok(status)
}

enum Flow {
    Continue(i32),
    Stop(i32),
}

fn invoke(
    ctx: &mut UtilCtx<'_>,
    argv: &[String],
    verbose: bool,
) -> Result<Flow, safesh_utils::Interrupt> {
    if verbose {
        let _ = writeln!(ctx.stderr, "{}", argv.join(" "));
    }
    let name = argv.first().cloned().unwrap_or_default();
    if ctx.host.command_kind(&name).is_none() {
        // GNU xargs stops at a command it cannot run.
        ctx.warn(format_args!("{name}: No such file or directory"));
        return Ok(Flow::Stop(127));
    }
    let cwd = ctx.cwd.clone();
    let mut empty = std::io::empty();
    let st = ctx
        .host
        .run(argv, &cwd, &mut empty, &mut *ctx.stdout, &mut *ctx.stderr)?;
    Ok(match st {
        0 => Flow::Continue(0),
        255 => {
            ctx.warn(format_args!("{name}: exited with status 255; aborting"));
            Flow::Stop(124)
        }
        126 | 127 => Flow::Stop(st),
        s if s > 128 => {
            ctx.warn(format_args!("{name}: terminated by signal {}", s - 128));
            Flow::Stop(125)
        }
        _ => Flow::Continue(123),
    })
}

/// Parses a `-d` delimiter: one character or a C escape (`\n`, `\t`, `\0`, `\x41`, `\012`).
fn delim(d: &str) -> Option<u8> {
    let b = d.as_bytes();
    if b.len() == 1 {
        return b.first().copied();
    }
    let rest = d.strip_prefix('\\')?;
    match rest {
        "n" => Some(b'\n'),
        "t" => Some(b'\t'),
        "r" => Some(b'\r'),
        "0" => Some(0),
        "\\" => Some(b'\\'),
        "a" => Some(7),
        "b" => Some(8),
        "f" => Some(12),
        "v" => Some(11),
        _ => {
            if let Some(h) = rest.strip_prefix('x') {
                u8::from_str_radix(h, 16).ok()
            } else {
                u8::from_str_radix(rest, 8).ok()
            }
        }
    }
}
