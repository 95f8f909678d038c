//! Helpers shared by the text filters: opening operands (`-` is stdin), GNU-style
//! usage errors, finishing with the right status after a write error, and GNU size
//! suffixes for counts.

use safesh_utils::{Host, UtilCtx, UtilResult, io_error_text};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// Size of the buffers used for reading and writing.
pub const BUF: usize = 64 * 1024;

/// An input operand: standard input or an opened file. Reads fail once the
/// script is cancelled, so long reads stop promptly.
pub struct Input<'a> {
    src: Src<'a>,
    host: &'a dyn Host,
}

enum Src<'a> {
    Stdin(&'a mut dyn Read),
    File(File),
}

impl Read for Input<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.host.cancelled() {
            return Err(io::Error::other("cancelled"));
        }
        match &mut self.src {
            Src::Stdin(r) => r.read(buf),
            Src::File(f) => f.read(buf),
        }
    }
}

impl<'a> Input<'a> {
    /// Standard input.
    pub fn stdin(stdin: &'a mut dyn Read, host: &'a dyn Host) -> Input<'a> {
        Input {
            src: Src::Stdin(stdin),
            host,
        }
    }

    /// An opened file.
    pub fn from_file(f: File, host: &'a dyn Host) -> Input<'a> {
        Input {
            src: Src::File(f),
            host,
        }
    }

    /// The file behind this input, if it is one (for seeking and stat).
    pub fn file(&mut self) -> Option<&mut File> {
        match &mut self.src {
            Src::File(f) => Some(f),
            Src::Stdin(_) => None,
        }
    }
}

/// Opens operand `name` (`-` is stdin) relative to `cwd`, through the host's read check.
pub fn open_input<'a>(
    stdin: &'a mut dyn Read,
    host: &'a dyn Host,
    cwd: &Path,
    name: &str,
) -> io::Result<Input<'a>> {
    if name == "-" {
        return Ok(Input::stdin(stdin, host));
    }
    open_file(host, cwd, name).map(|f| Input::from_file(f, host))
}

/// Opens a file for reading relative to `cwd`, through the host's read check.
pub fn open_file(host: &dyn Host, cwd: &Path, name: &str) -> io::Result<File> {
    let p = Path::new(name);
    let path = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    safesh_utils::open_read(host, &path)
}

/// Creates (truncates) a file for writing relative to `cwd`, through the host's
/// write check.
pub fn create_file(host: &dyn Host, cwd: &Path, name: &str) -> io::Result<safesh_utils::WriteFile> {
    let p = Path::new(name);
    let path = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    safesh_utils::open_write(host, &path, safesh_utils::WriteMode::Truncate)
}

/// Writes `name: msg` to `err`.
pub fn warn(err: &mut dyn Write, name: &str, msg: impl std::fmt::Display) {
    // A file name in the message is a word: its escaped bytes go out as bytes.
    let text = format!("{name}: {msg}\n");
    let _ = err.write_all(&safesh_utils::word_bytes::word_to_bytes(&text));
}

/// Writes `name: what: <strerror>` to `err`.
pub fn warn_io(err: &mut dyn Write, name: &str, what: &str, e: &io::Error) {
    warn(err, name, format_args!("{what}: {}", io_error_text(e)));
}

/// Reports a usage error GNU-style (message plus the `Try ... --help` line) and
/// returns `status`.
pub fn usage(ctx: &mut UtilCtx<'_>, msg: &str, status: i32) -> i32 {
    let name = ctx.name().to_string();
    let _ = writeln!(
        ctx.stderr,
        "{name}: {msg}\nTry '{name} --help' for more information."
    );
    status
}

/// Turns the outcome of a tool body into its result: an `Err` is always a failed
/// write to stdout (read errors are reported inside the body).
pub fn finish(ctx: &mut UtilCtx<'_>, r: io::Result<i32>) -> UtilResult {
    match r {
        Ok(s) => Ok(s),
        Err(e) => Ok(ctx.write_failed(&e)),
    }
}

/// Parses a GNU count with optional size suffix (`b`, `K`, `KiB`, `kB`, `M`, ...).
/// Values too large saturate at `u64::MAX`, as GNU treats them as "infinite".
pub fn parse_count(s: &str) -> Option<u64> {
    let digits_end = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits_end == 0 {
        return None;
    }
    let (num, suffix) = s.split_at(digits_end);
    let mut v: u64 = 0;
    for b in num.bytes() {
        v = v.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    let mult: u64 = match suffix {
        "" => 1,
        "b" => 512,
        "c" => 1,
        "w" => 2,
        _ => {
            let mut it = suffix.chars();
            let letter = it.next()?;
            let rest: String = it.collect();
            let exp = match letter.to_ascii_uppercase() {
                'K' => 1,
                'M' => 2,
                'G' => 3,
                'T' => 4,
                'P' => 5,
                'E' => 6,
                'Z' => 7,
                'Y' => 8,
                'R' => 9,
                'Q' => 10,
                _ => return None,
            };
            if letter == 'k' && rest.is_empty() {
                // GNU accepts lower-case k alone as KiB too.
            } else if letter.is_ascii_lowercase() && letter != 'k' {
                return None;
            }
            let base: u64 = match rest.as_str() {
                "" | "iB" => 1024,
                "B" => 1000,
                _ => return None,
            };
            let mut m: u64 = 1;
            for _ in 0..exp {
                m = m.saturating_mul(base);
            }
            m
        }
    };
    Some(v.saturating_mul(mult))
}

/// Runs `each` on every operand in turn, the way head and tail do: an operand that
/// cannot be opened is reported and skipped, `==> name <==` headers separate the
/// outputs when asked, a read error is reported with status 1, and a write error
/// ends the tool.
pub fn each_operand(
    ctx: &mut UtilCtx<'_>,
    files: &[String],
    show_headers: bool,
    mut each: impl FnMut(&mut Input<'_>, &mut dyn Write) -> Result<(), Failure>,
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut status = 0;
    let mut first = true;
    let mut out = io::BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    for f in files {
        let mut input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: cannot open '{f}' for reading: {}",
                    io_error_text(&e)
                );
                status = 1;
                continue;
            }
        };
        if show_headers {
            let shown = if f == "-" { "standard input" } else { f };
            let sep = if first { "" } else { "\n" };
            writeln!(out, "{sep}==> {shown} <==")?;
            first = false;
        }
        match each(&mut input, &mut out) {
            Ok(()) => {}
            Err(Failure::Read(e)) => {
                let _ = out.flush();
                warn_io(&mut *ctx.stderr, &name, &format!("error reading '{f}'"), &e);
                status = 1;
            }
            Err(Failure::Write(e)) => return Err(e),
        }
    }
    out.flush()?;
    Ok(status)
}

/// A read failure (reported, status 1) or a write failure (ends the tool).
pub enum Failure {
    /// Reading the input failed: reported, and the tool goes on with status 1.
    Read(io::Error),
    /// Writing stdout failed: the tool stops.
    Write(io::Error),
}

/// Reads into `buf`, retrying on EINTR; maps errors to [`Failure::Read`].
pub fn read_some(input: &mut impl Read, buf: &mut [u8]) -> Result<usize, Failure> {
    loop {
        match input.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Read(e)),
        }
    }
}

/// Strips the line delimiter from the end of `line`, reporting whether it was there.
pub fn strip_delim(line: &[u8], delim: u8) -> (&[u8], bool) {
    match line.split_last() {
        Some((&last, rest)) if last == delim => (rest, true),
        _ => (line, false),
    }
}

/// GNU's obsolete `-N…` option (`fold -20`, `expand -4,8`): each argument
/// before `--` that is `-` and a digit becomes `option` and the rest.
pub fn obsolete_number_option(argv: &[String], option: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len() + 1);
    let mut options = true;
    for a in argv {
        if a == "--" {
            options = false;
        }
        match a.strip_prefix('-') {
            Some(rest) if options && rest.bytes().next().is_some_and(|b| b.is_ascii_digit()) => {
                out.push(option.to_string());
                out.push(rest.to_string());
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Calls `each` with every line of `input` (its `\n` kept; the last may lack
/// one). A read error is reported (`name: file: error`) and ends the input
/// with status 1; an error of `each` (a write) ends the tool.
pub fn each_line(
    input: impl Read,
    stderr: &mut dyn Write,
    name: &str,
    file: &str,
    mut each: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<i32> {
    use std::io::BufRead;
    let mut r = io::BufReader::with_capacity(BUF, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(0),
            Ok(_) => each(&line)?,
            Err(e) => {
                warn_io(stderr, name, file, &e);
                return Ok(1);
            }
        }
    }
}

/// Feeds the bytes of every operand (`-`: stdin) to `each` in chunks, in
/// order, with buffered stdout: `Some(bytes)`, then `None` at the end of each
/// operand read. An operand that cannot be opened or read is reported
/// (`name: operand: error`) and gives status 1; a write error ends the tool.
pub fn each_chunk(
    ctx: &mut UtilCtx<'_>,
    files: &[String],
    mut each: impl FnMut(Option<&[u8]>, &mut dyn Write) -> io::Result<()>,
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut out = io::BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut buf = vec![0u8; BUF];
    for f in files {
        let mut input = match open_input(&mut *ctx.stdin, host, &cwd, f) {
            Ok(i) => i,
            Err(e) => {
                // What was written comes first, as GNU's error() flushes stdout.
                out.flush()?;
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        loop {
            match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => each(Some(&buf[..n]), &mut out)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    out.flush()?;
                    warn_io(&mut *ctx.stderr, &name, f, &e);
                    status = 1;
                    break;
                }
            }
        }
        each(None, &mut out)?;
    }
    out.flush()?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_suffixes() {
        assert_eq!(parse_count("10"), Some(10));
        assert_eq!(parse_count("2K"), Some(2048));
        assert_eq!(parse_count("2k"), Some(2048));
        assert_eq!(parse_count("1kB"), Some(1000));
        assert_eq!(parse_count("1MiB"), Some(1 << 20));
        assert_eq!(parse_count("3b"), Some(1536));
        assert_eq!(parse_count("x"), None);
        assert_eq!(parse_count("1x"), None);
        assert_eq!(parse_count("99999999999999999999999"), Some(u64::MAX));
    }
}
