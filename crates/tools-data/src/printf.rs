//! `printf` in two flavors: bash's builtin (what a script's `printf` runs)
//! and coreutils' program (what `env printf`, `xargs printf` and
//! `/usr/bin/printf` run). Both reuse the format until the arguments are
//! consumed, read missing arguments as empty or zero, and report bad numbers
//! but go on printing; they differ in escapes (`\c`, a bare `\x`), in `%q`,
//! `%(…)T`, options and every message.

use crate::cfmt::{self, Conv};
use crate::esc::{Mode, expand, expand_coreutils, has_unicode_escape};
use crate::num::{NumErr, parse_float, parse_signed, parse_unsigned};
use crate::out::Out;
use safesh_utils::word_bytes::word_to_bytes;
use safesh_utils::{UtilCtx, UtilResult};

const USAGE: &str = "usage: printf [-v var] format [arguments]";

/// Whose `printf` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// bash's builtin.
    Bash,
    /// GNU coreutils' `printf` program.
    Coreutils,
}

/// The state of one `printf` run.
struct Run<'x> {
    flavor: Flavor,
    /// Coreutils: the locale is UTF-8 (quotes in messages are `‘…’`, `%q`
    /// keeps multibyte characters).
    locale_utf8: bool,
    args: &'x [String],
    next: usize,
    status: i32,
    /// Messages for stderr, each with the length the pass's output had when
    /// it arose: bash flushes what it printed before the message, so with
    /// `2>&1` a bad number's message comes before its `0`.
    warnings: Vec<(usize, String)>,
    /// The output length at the start of the directive being converted.
    pos: usize,
    /// `TZ`, and the zone it names, looked up only when a `%(…)T` directive
    /// needs it (reading the system zone costs more than most printf runs).
    tz_env: Option<String>,
    tz: Option<jiff::tz::TimeZone>,
    /// The widest field (`Host::max_field_bytes`): wider widths and precisions
    /// are an error, never an allocation.
    max_field: usize,
    /// The locale is UTF-8 (`\u` escapes become characters); looked up only
    /// when the format or an argument has such an escape.
    utf8: bool,
}

impl Run<'_> {
    /// The local zone (`TZ` or the system's), looked up on first use.
    fn zone(&mut self) -> &jiff::tz::TimeZone {
        let env = &self.tz_env;
        self.tz
            .get_or_insert_with(|| crate::tz::local(env.as_ref()))
    }

    fn take(&mut self) -> Option<&str> {
        let a = self.args.get(self.next)?;
        self.next += 1;
        Some(a.as_str())
    }

    fn note(&mut self, arg: &str, err: Option<NumErr>) {
        if self.flavor == Flavor::Coreutils {
            return self.note_coreutils(arg, err);
        }
        match err {
            Some(NumErr::Invalid | NumErr::Trailing) => {
                self.warnings
                    .push((self.pos, format!("{arg}: invalid number")));
                self.status = 1;
            }
            Some(NumErr::InvalidHex) => {
                self.warnings
                    .push((self.pos, format!("{arg}: invalid hex number")));
                self.status = 1;
            }
            Some(NumErr::Range) => self.warnings.push((
                self.pos,
                format!("warning: {arg}: Numerical result out of range"),
            )),
            None => {}
        }
    }

    /// coreutils' words for a bad number: each one sets status 1.
    fn note_coreutils(&mut self, arg: &str, err: Option<NumErr>) {
        let q = quote_arg(arg, self.locale_utf8);
        let what = match err {
            Some(NumErr::Invalid) => "expected a numeric value",
            Some(NumErr::Trailing | NumErr::InvalidHex) => "value not completely converted",
            Some(NumErr::Range) => "Numerical result out of range",
            None => {
                // `'ab`: the character's code, and a warning for the rest.
                let bytes = word_to_bytes(arg);
                if let Some(body) = bytes
                    .strip_prefix(b"'")
                    .or_else(|| bytes.strip_prefix(b"\""))
                {
                    let n = if self.locale_utf8 { utf8_len(body) } else { 1 };
                    if let Some(rest) = body.get(n..).filter(|r| !r.is_empty()) {
                        let rest = safesh_utils::word_bytes::word_from_bytes(rest);
                        self.warnings.push((
                            self.pos,
                            format!("warning: {rest}: character(s) following character constant have been ignored"),
                        ));
                    }
                }
                return;
            }
        };
        self.warnings.push((self.pos, format!("{q}: {what}")));
        self.status = 1;
    }

    fn int_arg(&mut self) -> i64 {
        let a = self.take().unwrap_or("").to_string();
        if let Some(code) = self.char_code(&a) {
            self.note(&a, None);
            return i64::from(code);
        }
        let (v, e) = parse_signed(&a);
        self.note(&a, e);
        v
    }

    /// `'é` in a UTF-8 locale: the character's code point (bash and coreutils
    /// both), not its first byte.
    fn char_code(&self, a: &str) -> Option<u32> {
        if !self.utf8 || !multibyte_char_const(a) {
            return None;
        }
        let c = a.get(1..)?.chars().next()?;
        Some(u32::from(c))
    }
}

/// True when `a` is a character constant (`'c`, `"c`) of a non-ASCII
/// character, whose code depends on the locale.
fn multibyte_char_const(a: &str) -> bool {
    let b = a.as_bytes();
    matches!(b.first(), Some(b'\'' | b'"')) && b.get(1).is_some_and(|c| *c >= 0x80)
}

/// The length of the UTF-8 character `b` starts with (1 for a stray byte).
fn utf8_len(b: &[u8]) -> usize {
    (1..=b.len().min(4))
        .find(|&n| std::str::from_utf8(&b[..n]).is_ok())
        .unwrap_or(1)
}

/// `arg` in a message, quoted as coreutils quotes it: `‘x’` in a UTF-8
/// locale, `'x'` in the C locale.
fn quote_arg(arg: &str, utf8: bool) -> String {
    if utf8 {
        format!("\u{2018}{arg}\u{2019}")
    } else {
        format!("'{arg}'")
    }
}

/// Runs coreutils' `printf` program (`env printf`, `/usr/bin/printf`).
pub fn printf(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let owned: Vec<String> = ctx.args().to_vec();
    let mut args: &[String] = &owned;
    // Only a lone `--help` or `--version` is an option; `-v` is a format.
    if let [only] = args {
        match only.as_str() {
            "--help" => {
                let name = ctx.name().to_string();
                let _ = write!(ctx.stdout, "{}", COREUTILS_HELP.replace("NAME", &name));
                return Ok(0);
            }
            "--version" => {
                let _ = writeln!(ctx.stdout, "printf (safesh {})", env!("CARGO_PKG_VERSION"));
                return Ok(0);
            }
            _ => {}
        }
    }
    if args.first().is_some_and(|a| a == "--") {
        args = &args[1..];
    }
    let Some((fmt, rest)) = args.split_first() else {
        let name = ctx.name().to_string();
        ctx.warn("missing operand");
        let _ = writeln!(ctx.stderr, "Try '{name} --help' for more information.");
        return Ok(1);
    };
    let utf8 = ctx.env.utf8_locale();
    format_all(ctx, fmt, rest, Flavor::Coreutils, utf8)
}

/// coreutils `printf --help`, in safesh's words (`NAME` is the program's name).
const COREUTILS_HELP: &str = r#"Usage: NAME FORMAT [ARGUMENT]...
  or:  NAME OPTION
Print the ARGUMENTs as FORMAT says, reusing FORMAT until they are used up.

      --help     show this help and exit
      --version  show the version and exit

FORMAT is C printf's: %d %i %o %u %x %X %f %F %e %E %g %G %a %A %c %s, with
flags, width and precision (`*` takes them from an argument), plus:
  %b   the argument with backslash escapes expanded (octal as \0NNN)
  %q   the argument quoted so a shell reads it back unchanged
  %%   a single %
Escapes: \\ \" \a \b \c (stop) \e \f \n \r \t \v \NNN \xHH \uHHHH \UHHHHHHHH
A numeric argument may be 'C: the code of the character C.

A shell's own printf (bash's builtin) differs: it has -v, %(...)T and %Q.
"#;

/// Runs bash's `printf` builtin (the shell handles `-v VAR`).
pub fn printf_builtin(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let owned: Vec<String> = ctx.args().to_vec();
    let mut args: &[String] = &owned;
    // `-v VAR` is the interpreter's business; printing to stdout is the fallback.
    if args.first().is_some_and(|a| a == "-v") {
        args = args.get(2..).unwrap_or(&[]);
    }
    if args.first().is_some_and(|a| a == "--") {
        args = &args[1..];
    } else if let Some(a) = args.first()
        && a.len() > 1
        && a.starts_with('-')
    {
        ctx.warn(format_args!("{a}: invalid option"));
        ctx.warn(USAGE);
        return Ok(2);
    }
    let Some((fmt, rest)) = args.split_first() else {
        ctx.warn(USAGE);
        return Ok(2);
    };
    format_all(ctx, fmt, rest, Flavor::Bash, false)
}

/// Formats `rest` with `fmt`, reusing it until they are used up.
fn format_all(
    ctx: &mut UtilCtx<'_>,
    fmt: &String,
    rest: &[String],
    flavor: Flavor,
    locale_utf8: bool,
) -> UtilResult {
    let mut run = Run {
        flavor,
        locale_utf8,
        args: rest,
        next: 0,
        status: 0,
        warnings: Vec::new(),
        pos: 0,
        tz_env: ctx.env.get("TZ").cloned(),
        tz: None,
        max_field: ctx.host.max_field_bytes(),
        utf8: std::iter::once(fmt)
            .chain(rest)
            .any(|a| has_unicode_escape(a.as_bytes()) || multibyte_char_const(a))
            && (locale_utf8 || ctx.env.utf8_locale()),
    };
    let mut out = Out::new(ctx);
    let mut buf = Vec::new();
    // The format is a word: escaped bytes print as the bytes they stand for.
    let fmt_bytes = word_to_bytes(fmt);
    let mut stopped = false;
    loop {
        let before = run.next;
        let r = one_pass(&fmt_bytes, &mut run, &mut buf);
        let mut done = 0;
        for (at, w) in std::mem::take(&mut run.warnings) {
            let at = at.clamp(done, buf.len());
            out.write(&buf[done..at]);
            done = at;
            out.warn(w);
        }
        out.write(&buf[done..]);
        buf.clear();
        match r {
            Pass::Done => {}
            Pass::Stop => {
                stopped = true;
                break;
            }
            Pass::Fatal(msg) => {
                out.warn(msg);
                return Ok(out.finish_with(1));
            }
        }
        if run.next >= run.args.len() || run.next == before {
            break;
        }
    }
    if flavor == Flavor::Coreutils
        && !stopped
        && let Some(extra) = run.args.get(run.next)
    {
        out.warn(format!(
            "warning: ignoring excess arguments, starting with {}",
            quote_arg(extra, locale_utf8)
        ));
    }
    let status = run.status;
    Ok(out.finish_with(status))
}

/// The error for a width or precision past [`Run::max_field`].
fn over_limit(what: &str, n: usize, max: usize) -> String {
    format!(
        "{n}: {what} is over the limit of {max} bytes ([limits] string_bytes): nothing printed for it"
    )
}

enum Pass {
    Done,
    Stop,
    Fatal(String),
}

/// Formats `fmt` once, consuming arguments as conversions need them.
fn one_pass(fmt: &[u8], run: &mut Run<'_>, out: &mut Vec<u8>) -> Pass {
    let mut i = 0;
    while i < fmt.len() {
        let b = fmt[i];
        if b == b'\\' {
            // Find the extent of this one escape by expanding from here to the next '%'
            // or backslash-run end: simplest is to expand a single escape.
            let end = escape_end(fmt, i);
            let at = out.len();
            if run.flavor == Flavor::Coreutils {
                let r = expand_coreutils(&fmt[i..end], false, run.utf8, out);
                if let Some(msg) = r.fatal {
                    return Pass::Fatal(msg);
                }
                if r.stop {
                    return Pass::Stop;
                }
            } else {
                let r = expand(&fmt[i..end], Mode::Format, run.utf8, out);
                run.warnings.extend(r.warnings.into_iter().map(|w| (at, w)));
            }
            i = end;
            continue;
        }
        if b != b'%' {
            let n = fmt[i..]
                .iter()
                .position(|&c| c == b'\\' || c == b'%')
                .unwrap_or(fmt.len() - i);
            out.extend_from_slice(&fmt[i..i + n]);
            i += n;
            continue;
        }
        let start = i;
        run.pos = out.len();
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        let mut c = Conv::default();
        let mut grouping = false;
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => c.minus = true,
                b'+' => c.plus = true,
                b' ' => c.space = true,
                b'0' => c.zero = true,
                b'#' => c.alt = true,
                // Thousands grouping: nothing to group in the C locale.
                b'\'' => grouping = true,
                // glibc's locale digits: coreutils passes the flag on.
                b'I' if run.flavor == Flavor::Coreutils => grouping = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            let w = run.int_arg();
            if w < 0 {
                c.minus = true;
            }
            c.width = Some(usize::try_from(w.unsigned_abs()).unwrap_or(usize::MAX));
        } else {
            let n = fmt[i..].iter().take_while(|d| d.is_ascii_digit()).count();
            if n > 0 {
                c.width = Some(
                    std::str::from_utf8(&fmt[i..i + n])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(usize::MAX),
                );
                i += n;
            }
        }
        if let Some(w) = c.width.filter(|w| *w > run.max_field) {
            return Pass::Fatal(over_limit("field width", w, run.max_field));
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                let p = run.int_arg();
                c.prec = (p >= 0).then(|| usize::try_from(p).unwrap_or(usize::MAX));
            } else {
                let n = fmt[i..].iter().take_while(|d| d.is_ascii_digit()).count();
                c.prec = Some(if n == 0 {
                    0
                } else {
                    std::str::from_utf8(&fmt[i..i + n])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(usize::MAX)
                });
                i += n;
            }
            if let Some(p) = c.prec.filter(|p| *p > run.max_field) {
                return Pass::Fatal(over_limit("precision", p, run.max_field));
            }
        }
        if fmt.get(i) == Some(&b'(') && run.flavor == Flavor::Bash {
            // `%(strftime)T`: the argument is seconds since the epoch (-1: now).
            let body = &fmt[i + 1..];
            let Some(close) = body.windows(2).position(|w| w == b")T") else {
                return Pass::Fatal("`(': invalid format character".into());
            };
            let tfmt = String::from_utf8_lossy(&body[..close]).into_owned();
            i += 1 + close + 2;
            let secs = match run.take() {
                Some(a) if !a.is_empty() => {
                    let a = a.to_string();
                    let (v, e) = parse_signed(&a);
                    run.note(&a, e);
                    v
                }
                _ => -1,
            };
            out.extend_from_slice(&cfmt::fmt_str(
                &c,
                strftime(&tfmt, secs, run.zone()).as_bytes(),
            ));
            continue;
        }
        let lengths: &[u8] = match run.flavor {
            Flavor::Bash => b"hlLjztZ",
            Flavor::Coreutils => b"hlLjzt",
        };
        while fmt.get(i).is_some_and(|m| lengths.contains(m)) {
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            let spec = String::from_utf8_lossy(&fmt[start..]);
            if run.flavor == Flavor::Coreutils {
                return Pass::Fatal(format!("{spec}: invalid conversion specification"));
            }
            return Pass::Fatal(format!("`{spec}': missing format character"));
        };
        i += 1;
        c.conv = conv;
        if run.flavor == Flavor::Coreutils && !coreutils_accepts(&c, grouping, i - start) {
            let spec = String::from_utf8_lossy(&fmt[start..i]);
            return Pass::Fatal(format!("{spec}: invalid conversion specification"));
        }
        match conv {
            b's' => {
                let a = run.take().unwrap_or("");
                out.extend_from_slice(&cfmt::fmt_str(&c, &word_to_bytes(a)));
            }
            b'b' => {
                let a = run.take().unwrap_or("").to_string();
                let mut e = Vec::new();
                if run.flavor == Flavor::Coreutils {
                    let r = expand_coreutils(&word_to_bytes(&a), true, run.utf8, &mut e);
                    out.extend_from_slice(&cfmt::fmt_str(&c, &e));
                    if let Some(msg) = r.fatal {
                        return Pass::Fatal(msg);
                    }
                    if r.stop {
                        return Pass::Stop;
                    }
                    continue;
                }
                let r = expand(&word_to_bytes(&a), Mode::Percent, run.utf8, &mut e);
                let at = out.len();
                run.warnings.extend(r.warnings.into_iter().map(|w| (at, w)));
                out.extend_from_slice(&cfmt::fmt_str(&c, &e));
                if r.stop {
                    return Pass::Stop;
                }
            }
            // bash stores the count written so far in the variable the
            // argument names (the shell's business); nothing is printed.
            b'n' => {
                let _ = run.take();
            }
            b'q' => {
                let (flavor, utf8) = (run.flavor, run.locale_utf8);
                let a = run.take().unwrap_or("");
                let q = match flavor {
                    Flavor::Bash => crate::quote::shell_quote(&word_to_bytes(a)),
                    Flavor::Coreutils => crate::quote::coreutils_quote(&word_to_bytes(a), utf8),
                };
                out.extend_from_slice(&cfmt::fmt_str(&c, &q));
            }
            b'c' => {
                let a = run.take().unwrap_or("");
                let ch = word_to_bytes(a).first().copied().unwrap_or(0);
                c.prec = None;
                out.extend_from_slice(&cfmt::fmt_str(&c, &[ch]));
            }
            b'd' | b'i' => {
                let v = run.int_arg();
                out.extend_from_slice(&cfmt::fmt_signed(&c, v));
            }
            b'u' | b'o' | b'x' | b'X' => {
                let a = run.take().unwrap_or("").to_string();
                let (v, e) = match run.char_code(&a) {
                    Some(code) => (u64::from(code), None),
                    None => parse_unsigned(&a),
                };
                run.note(&a, e);
                out.extend_from_slice(&cfmt::fmt_unsigned(&c, v));
            }
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
                let a = run.take().unwrap_or("").to_string();
                let (v, e) = match run.char_code(&a) {
                    Some(code) => (crate::ld::Ld::from_f64(f64::from(code)), None),
                    None => parse_float(&a),
                };
                run.note(&a, e);
                out.extend_from_slice(&cfmt::fmt_ld(&c, v));
            }
            other => {
                return Pass::Fatal(format!("`{}': invalid format character", other as char));
            }
        }
    }
    Pass::Done
}

/// True when coreutils `printf` takes the directive `c` (of `len` bytes,
/// `%` included): `%b` and `%q` take nothing between, `'` does not go with
/// `aAceEosxX`, `#` not with `cdisu`, `0` not with `cs`, a precision not
/// with `c`.
fn coreutils_accepts(c: &Conv, grouping: bool, len: usize) -> bool {
    let conv = c.conv;
    if matches!(conv, b'b' | b'q') {
        return len == 2;
    }
    b"aAcdeEfFgGiosuxX".contains(&conv)
        && !(grouping && b"aAceEosxX".contains(&conv))
        && !(c.alt && b"cdisu".contains(&conv))
        && !(c.zero && b"cs".contains(&conv))
        && !(c.prec.is_some() && conv == b'c')
}

/// Formats `secs` (-1 and -2 mean now) with a C `strftime` format in the local zone.
fn strftime(fmt: &str, secs: i64, tz: &jiff::tz::TimeZone) -> String {
    let ts = if secs < 0 {
        jiff::Timestamp::now()
    } else {
        jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    };
    let zoned = ts.to_zoned(tz.clone());
    let fmt = if fmt.is_empty() { "%X" } else { fmt };
    let mut out = String::new();
    match jiff::fmt::strtime::format(fmt, &zoned) {
        Ok(s) => out.push_str(&s),
        Err(_) => out.push_str(fmt),
    }
    out
}

/// The end of the escape sequence starting at `fmt[i] == '\\'`.
fn escape_end(fmt: &[u8], i: usize) -> usize {
    let Some(&c) = fmt.get(i + 1) else {
        return i + 1;
    };
    let count = |from: usize, max: usize, radix: u32| {
        fmt[from.min(fmt.len())..]
            .iter()
            .take(max)
            .take_while(|b| (**b as char).is_digit(radix))
            .count()
    };
    match c {
        b'0'..=b'7' => i + 1 + count(i + 1, 3, 8),
        b'x' => i + 2 + count(i + 2, 2, 16),
        b'u' => i + 2 + count(i + 2, 4, 16),
        b'U' => i + 2 + count(i + 2, 8, 16),
        _ => i + 2,
    }
}
