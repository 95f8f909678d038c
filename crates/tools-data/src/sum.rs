//! `md5sum`, `sha1sum`, `sha224sum`, `sha256sum`, `sha384sum`, `sha512sum`:
//! print digests (`hash  name`, `--tag`, `-z`, names with backslashes or
//! newlines escaped as GNU does) or verify them (`-c`, `--quiet`, `--status`,
//! `--strict`, `-w`, `--ignore-missing`).

use crate::out::Out;
use md5::Md5;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};
use std::io::{BufReader, Read};

/// The digest algorithms.
#[derive(Clone, Copy)]
enum Algo {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl Algo {
    fn tag(self) -> &'static str {
        match self {
            Algo::Md5 => "MD5",
            Algo::Sha1 => "SHA1",
            Algo::Sha224 => "SHA224",
            Algo::Sha256 => "SHA256",
            Algo::Sha384 => "SHA384",
            Algo::Sha512 => "SHA512",
        }
    }

    fn hex_len(self) -> usize {
        match self {
            Algo::Md5 => 32,
            Algo::Sha1 => 40,
            Algo::Sha224 => 56,
            Algo::Sha256 => 64,
            Algo::Sha384 => 96,
            Algo::Sha512 => 128,
        }
    }

    /// Hashes a whole stream, returning lower-case hex.
    fn hash(self, r: &mut dyn Read) -> std::io::Result<String> {
        let bytes = match self {
            Algo::Md5 => digest_of::<Md5>(r)?,
            Algo::Sha1 => digest_of::<Sha1>(r)?,
            Algo::Sha224 => digest_of::<Sha224>(r)?,
            Algo::Sha256 => digest_of::<Sha256>(r)?,
            Algo::Sha384 => digest_of::<Sha384>(r)?,
            Algo::Sha512 => digest_of::<Sha512>(r)?,
        };
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The digest `D` of everything `r` gives.
fn digest_of<D: Digest>(r: &mut dyn Read) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut d = D::new();
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => d.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(d.finalize().to_vec())
}

const SPEC: Spec = Spec {
    flags: "bctwz",
    valued: "",
    long: &[
        ("binary", false, "b"),
        ("check", false, "c"),
        ("text", false, "t"),
        ("warn", false, "w"),
        ("zero", false, "z"),
        ("tag", false, "tag"),
        ("quiet", false, "quiet"),
        ("status", false, "status"),
        ("strict", false, "strict"),
        ("ignore-missing", false, "ignore-missing"),
    ],
    stop_at_operand: false,
};

/// Runs `md5sum`.
pub fn md5sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Md5)
}

/// Runs `sha1sum`.
pub fn sha1sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Sha1)
}

/// Runs `sha224sum`.
pub fn sha224sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Sha224)
}

/// Runs `sha256sum`.
pub fn sha256sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Sha256)
}

/// Runs `sha384sum`.
pub fn sha384sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Sha384)
}

/// Runs `sha512sum`.
pub fn sha512sum(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Algo::Sha512)
}

/// Escapes `\`, newline and carriage return; the bool says whether any was found.
fn escape(name: &str) -> (String, bool) {
    if !name.contains(['\\', '\n', '\r']) {
        return (name.to_string(), false);
    }
    let mut s = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            _ => s.push(c),
        }
    }
    (s, true)
}

/// Opens `name` (`-` is stdin) and hashes it.
fn hash_named(ctx: &mut UtilCtx<'_>, algo: Algo, name: &str) -> std::io::Result<String> {
    if name == "-" {
        return algo.hash(&mut *ctx.stdin);
    }
    let path = ctx.check_read(name)?;
    if ctx.stat(&path, true)?.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
    }
    let mut f = ctx.open(name)?;
    algo.hash(&mut f)
}

fn run(ctx: &mut UtilCtx<'_>, algo: Algo) -> UtilResult {
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => {
            ctx.warn(e);
            let name = ctx.name().to_string();
            ctx.warn(format_args!("Try '{name} --help' for more information."));
            return Ok(1);
        }
    };
    let mut files = p.operands.clone();
    if files.is_empty() {
        files.push("-".into());
    }
    if p.has("c") {
        return check(ctx, algo, &p, &files);
    }
    let zero = p.has("z");
    let tag = p.has("tag");
    let binary = p.has("b") && !p.has("t");
    let mut status = 0;
    let mut out = Out::new(ctx);
    for name in &files {
        let hash = match hash_named(out.ctx(), algo, name) {
            Ok(h) => h,
            Err(e) => {
                out.flush();
                out.ctx().warn_io(name, &e);
                status = 1;
                continue;
            }
        };
        let (shown, escaped) = if zero {
            (name.clone(), false)
        } else {
            escape(name)
        };
        let mut line = String::new();
        if escaped {
            line.push('\\');
        }
        if tag {
            line.push_str(&format!("{} ({shown}) = {hash}", algo.tag()));
        } else {
            line.push_str(&format!("{hash} {}{shown}", if binary { '*' } else { ' ' }));
        }
        line.push(if zero { '\0' } else { '\n' });
        out.write(line.as_bytes());
    }
    Ok(out.finish_with(status))
}

/// One parsed line of a checksum file: expected hash and file name.
fn parse_line(line: &str, algo: Algo) -> Option<(String, String)> {
    let line = line.trim_start_matches([' ', '\t']);
    let (escaped, line) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (hash, name) = if let Some(rest) = line.strip_prefix(algo.tag()) {
        // BSD/--tag form: `MD5 (name) = hash`.
        let rest = rest.strip_prefix(" (")?;
        let close = rest.rfind(") = ")?;
        (rest[close + 4..].to_string(), rest[..close].to_string())
    } else {
        let hex = line.get(..algo.hex_len())?;
        let rest = &line[algo.hex_len()..];
        let rest = rest.strip_prefix(' ')?;
        let name = rest.strip_prefix([' ', '*'])?;
        (hex.to_string(), name.to_string())
    };
    if hash.len() != algo.hex_len()
        || !hash.bytes().all(|b| b.is_ascii_hexdigit())
        || name.is_empty()
    {
        return None;
    }
    let name = if escaped { unescape(&name)? } else { name };
    Some((hash.to_ascii_lowercase(), name))
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn check(
    ctx: &mut UtilCtx<'_>,
    algo: Algo,
    p: &safesh_utils::args::Parsed,
    files: &[String],
) -> UtilResult {
    let quiet = p.has("quiet");
    let status_only = p.has("status");
    let strict = p.has("strict");
    let warn = p.has("w");
    let ignore_missing = p.has("ignore-missing");
    let mut status = 0;
    let mut out = Out::new(ctx);
    for list in files {
        let display = if list == "-" {
            "standard input".to_string()
        } else {
            list.clone()
        };
        let data = if list == "-" {
            let mut v = Vec::new();
            BufReader::new(&mut *out.ctx().stdin)
                .read_to_end(&mut v)
                .map(|_| v)
        } else {
            out.ctx().read_file(list)
        };
        let data = match data {
            Ok(d) => d,
            Err(e) => {
                out.flush();
                out.ctx().warn_io(list, &e);
                status = 1;
                continue;
            }
        };
        let (mut bad_format, mut mismatched, mut unreadable, mut good, mut verified) =
            (0, 0, 0, 0, 0);
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for (no, raw) in lines.into_iter().enumerate() {
            let text = String::from_utf8_lossy(raw);
            let text = text.strip_suffix('\r').unwrap_or(&text);
            let Some((want, name)) = parse_line(text, algo) else {
                bad_format += 1;
                if warn {
                    out.warn(format_args!(
                        "{display}: {}: improperly formatted {} checksum line",
                        no + 1,
                        algo.tag()
                    ));
                }
                continue;
            };
            good += 1;
            let (shown, escaped) = if name.contains('\n') {
                escape(&name)
            } else {
                (name.clone(), false)
            };
            let prefix = if escaped { "\\" } else { "" };
            match hash_named(out.ctx(), algo, &name) {
                Err(e) if ignore_missing && e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    unreadable += 1;
                    out.flush();
                    out.ctx().warn_io(&name, &e);
                    if !status_only {
                        out.write(format!("{prefix}{shown}: FAILED open or read\n").as_bytes());
                    }
                }
                Ok(h) => {
                    verified += 1;
                    let ok = h == want;
                    if !ok {
                        mismatched += 1;
                    }
                    if !status_only && (!ok || !quiet) {
                        let word = if ok { "OK" } else { "FAILED" };
                        out.write(format!("{prefix}{shown}: {word}\n").as_bytes());
                    }
                }
            }
        }
        if good == 0 {
            out.warn(format_args!(
                "{}: no properly formatted checksum lines found",
                quote_name(&display, list)
            ));
            status = 1;
            continue;
        }
        if !status_only {
            if bad_format > 0 {
                out.warn(format_args!(
                    "WARNING: {} improperly formatted",
                    plural(bad_format, "line is", "lines are")
                ));
            }
            if unreadable > 0 {
                out.warn(format_args!(
                    "WARNING: {} could not be read",
                    plural(unreadable, "listed file", "listed files")
                ));
            }
            if mismatched > 0 {
                out.warn(format_args!(
                    "WARNING: {} did NOT match",
                    plural(mismatched, "computed checksum", "computed checksums")
                ));
            }
        }
        if ignore_missing && verified == 0 {
            out.warn(format_args!(
                "{}: no file was verified",
                quote_name(&display, list)
            ));
            status = 1;
        }
        if mismatched > 0 || unreadable > 0 || (strict && bad_format > 0) {
            status = 1;
        }
    }
    Ok(out.finish_with(status))
}

/// Quotes a name in a message the way GNU does for names with spaces.
fn quote_name(display: &str, list: &str) -> String {
    if list == "-" || display.contains(' ') {
        format!("'{display}'")
    } else {
        display.to_string()
    }
}
