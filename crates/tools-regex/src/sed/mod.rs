//! `sed`: GNU sed 4.9 in the C locale. The script is parsed first (all errors,
//! including the refusal of `e`, come before any output), then run record by
//! record over the operands.

mod exec;
mod input;
mod parse;

use exec::{End, Exec, ExecError, FileAccess, Opts, Out};
use input::Input;
use parse::{Chunk, Origin};
use safesh_utils::args::{self, Spec};
use safesh_utils::{Host, UtilCtx, UtilResult};
use std::cell::RefCell;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub use parse::E_REFUSED;

const SPEC: Spec = Spec {
    flags: "nrEszu",
    valued: "efl",
    long: &[
        ("quiet", false, "n"),
        ("silent", false, "n"),
        ("regexp-extended", false, "E"),
        ("separate", false, "s"),
        ("null-data", false, "z"),
        ("zero-terminated", false, "z"),
        ("unbuffered", false, "u"),
        ("expression", true, "e"),
        ("file", true, "f"),
        ("line-length", true, "l"),
        ("in-place", true, "in-place"),
        ("posix", false, "posix"),
        ("debug", false, "debug"),
        ("sandbox", false, "sandbox"),
        ("follow-symlinks", false, "follow-symlinks"),
        ("binary", false, "binary"),
        ("help", false, "help"),
        ("version", false, "version"),
    ],
    stop_at_operand: false,
};

/// Rewrites `-i[SUFFIX]` (an optional attached value the shared parser cannot
/// express) into `--in-place=SUFFIX`.
fn preprocess(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a.clone());
            out.extend(it.cloned());
            break;
        }
        if a == "--in-place" {
            out.push("--in-place=".into());
            continue;
        }
        if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            let body = &a[1..];
            let mut flags = String::new();
            let mut handled = false;
            for (k, ch) in body.char_indices() {
                if ch == 'i' {
                    if !flags.is_empty() {
                        out.push(format!("-{flags}"));
                    }
                    out.push(format!("--in-place={}", &body[k + 1..]));
                    handled = true;
                    break;
                }
                if matches!(ch, 'e' | 'f' | 'l') {
                    break;
                }
                flags.push(ch);
            }
            if handled {
                continue;
            }
        }
        out.push(a.clone());
    }
    out
}

struct HostFiles<'a> {
    host: &'a dyn Host,
    cwd: PathBuf,
}

impl HostFiles<'_> {
    fn resolve(&self, p: &str) -> PathBuf {
        let path = Path::new(p);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }
}

impl FileAccess for HostFiles<'_> {
    fn read(&self, name: &str) -> Option<Vec<u8>> {
        if name == "/dev/stdin" {
            // The process's stdin is not the utility's.
            return None;
        }
        let path = self.resolve(name);
        let mut f = safesh_utils::open_read(self.host, &path).ok()?;
        let mut data = Vec::new();
        f.read_to_end(&mut data).ok()?;
        Some(data)
    }
}

/// A writer shared between the main output and `w /dev/stdout`.
#[derive(Clone)]
struct Shared<'a>(Rc<RefCell<BufWriter<&'a mut dyn Write>>>);

impl Write for Shared<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// `sed`.
pub fn sed(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let argv = preprocess(ctx.args());
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => {
            ctx.warn(e);
            let _ = writeln!(
                ctx.stderr,
                "Usage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]..."
            );
            return Ok(1);
        }
    };
    if p.has("help") {
        let _ = writeln!(
            ctx.stdout,
            "Usage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]..."
        );
        return Ok(0);
    }
    if p.has("version") {
        let _ = writeln!(ctx.stdout, "sed (GNU sed) 4.9");
        return Ok(0);
    }
    let extended = p.has("E") || p.has("r");
    let mut chunks = Vec::new();
    let mut operands = p.operands.clone();
    let mut expr_no = 0;
    for o in &p.opts {
        match o.name.as_str() {
            "e" => {
                expr_no += 1;
                chunks.push(Chunk {
                    text: o.value.clone().unwrap_or_default().into_bytes(),
                    origin: Origin::Expr(expr_no),
                });
            }
            "f" => {
                let f = o.value.clone().unwrap_or_default();
                let data = if f == "-" {
                    let mut v = Vec::new();
                    ctx.stdin.read_to_end(&mut v).map(|_| v)
                } else {
                    ctx.read_file(&f)
                };
                match data {
                    Ok(mut d) => {
                        if d.last() == Some(&b'\n') {
                            d.pop();
                        }
                        chunks.push(Chunk {
                            text: d,
                            origin: Origin::File(f),
                        });
                    }
                    Err(e) => {
                        if let Some(stop) = safesh_utils::ctx::MemoryLimit::from_io(&e, "sed -f") {
                            return Err(stop);
                        }
                        ctx.warn(format_args!(
                            "couldn't open file {f}: {}",
                            safesh_utils::io_error_text(&e)
                        ));
                        return Ok(1);
                    }
                }
            }
            _ => {}
        }
    }
    if chunks.is_empty() {
        if operands.is_empty() {
            let _ = writeln!(
                ctx.stderr,
                "Usage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]..."
            );
            return Ok(1);
        }
        chunks.push(Chunk {
            text: operands.remove(0).into_bytes(),
            origin: Origin::Expr(1),
        });
    }
    let prog = match parse::parse(&chunks, extended) {
        Ok(p) => p,
        Err(e) => {
            // GNU reports a missing label from its final pass, with status 4.
            if e.0 == E_REFUSED {
                return Err(safesh_utils::Interrupt(Box::new(
                    safesh_utils::ShellString(format!("sed: {}", e.0)),
                )));
            }
            let status = if e.0.starts_with("can't find label") {
                4
            } else {
                1
            };
            ctx.warn(e.0);
            return Ok(status);
        }
    };
    if p.has("sandbox")
        && (!prog.wfiles.is_empty()
            || prog
                .cmds
                .iter()
                .any(|c| matches!(c.kind, parse::Kind::ReadFile(..))))
    {
        ctx.warn("-e expression #1, char 0: e/r/w commands disabled in sandbox mode");
        return Ok(1);
    }
    let line_len = match p.value("l") {
        Some(v) => match v.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                ctx.warn(format_args!("invalid line length: {v}"));
                return Ok(1);
            }
        },
        None => 70,
    };
    let in_place = p.value("in-place").map(String::from);
    let opts = Opts {
        quiet: p.has("n") || prog.hash_n,
        term: if p.has("z") { 0 } else { b'\n' },
        line_len,
        separate: p.has("s") || in_place.is_some(),
    };
    if operands.is_empty() {
        if in_place.is_some() {
            ctx.warn("no input files");
            return Ok(1);
        }
        operands.push("-".into());
    }
    let host = ctx.host;
    let files = HostFiles {
        host,
        cwd: ctx.cwd.clone(),
    };
    // Open the `w` files before any input is read, as GNU does.
    let mut wouts: Vec<Option<Out<'_>>> = Vec::new();
    let shared = Shared(Rc::new(RefCell::new(BufWriter::with_capacity(
        64 * 1024,
        &mut *ctx.stdout,
    ))));
    let mut err_buf: Vec<u8> = Vec::new();
    for name in &prog.wfiles {
        if name == "/dev/stdout" {
            wouts.push(Some(Out {
                w: Box::new(shared.clone()),
                missing: false,
            }));
            continue;
        }
        if name == "/dev/stderr" {
            wouts.push(None);
            continue;
        }
        let path = files.resolve(name);
        let r = safesh_utils::open_write(host, &path, safesh_utils::WriteMode::Truncate);
        match r {
            Ok(f) => wouts.push(Some(Out {
                w: Box::new(BufWriter::new(f)),
                missing: false,
            })),
            Err(e) => {
                let _ = writeln!(
                    ctx.stderr,
                    "sed: couldn't open file {name}: {}",
                    safesh_utils::io_error_text(&e)
                );
                return Ok(4);
            }
        }
    }
    let open = |name: &str| -> io::Result<Box<dyn Read>> {
        let path = files.resolve(name);
        // `/dev/fd/3`, `/proc/self/fd/0`: the script's stream, not the process's.
        if let Some(f) = host.open_descriptor(&path, false) {
            return Ok(Box::new(f?));
        }
        host.check_read(&path)?;
        let meta = safesh_utils::beneath::metadata(&path, true, |real| host.check_read(real))?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc_eisdir()));
        }
        Ok(Box::new(safesh_utils::open::open_read_decided(
            &path,
            |real| host.check_read(real),
        )?))
    };
    let mut input_err: Vec<u8> = Vec::new();
    let mut input = Input::new(
        operands.clone(),
        &mut *ctx.stdin,
        &open,
        &mut input_err,
        opts.term,
        opts.separate,
    );
    let mut out = Out {
        w: Box::new(shared.clone()),
        missing: false,
    };
    let mut exec = Exec::new(&prog, &opts);
    let budget = ctx.host.memory_budget();
    exec.budget = budget;
    exec.wfiles = wouts;
    let mut inplace = InPlace {
        host,
        cwd: ctx.cwd.clone(),
        suffix: in_place.clone(),
        current: None,
        error: None,
    };
    let mut switch = |input: &mut Input<'_>, out: &mut Out<'_>| -> io::Result<()> {
        if inplace.suffix.is_none() {
            return Ok(());
        }
        inplace.finish(out)?;
        if let Some(name) = input.current_source() {
            inplace.start(name, out)?;
        }
        Ok(())
    };
    let cancelled = || host.cancelled();
    let r = exec.run(&mut input, &mut out, &files, &mut switch, &cancelled);
    let failed = input.failed;
    drop(input);
    let mut status = match r {
        Ok(End::Done) => 0,
        Ok(End::Quit(c)) => c,
        Err(ExecError::Memory) => {
            return Err(safesh_utils::ctx::MemoryLimit::interrupt(
                "sed: the pattern and hold spaces",
                budget,
            ));
        }
        Err(ExecError::NoPrevious) => {
            let _ = writeln!(err_buf, "sed: no previous regular expression");
            1
        }
        Err(ExecError::Write(e)) => {
            if e.kind() == io::ErrorKind::BrokenPipe {
                141
            } else {
                let _ = writeln!(
                    err_buf,
                    "sed: couldn't write: {}",
                    safesh_utils::io_error_text(&e)
                );
                4
            }
        }
    };
    if inplace.suffix.is_some()
        && let Err(e) = inplace.finish(&mut out)
    {
        let _ = writeln!(
            err_buf,
            "sed: couldn't edit: {}",
            safesh_utils::io_error_text(&e)
        );
        status = 4;
    }
    for w in exec.wfiles.iter_mut().flatten() {
        let _ = w.w.flush();
    }
    drop(exec);
    let flushed = out.w.flush();
    drop(out);
    let flushed2 = shared.0.borrow_mut().flush();
    drop(shared);
    let _ = ctx.stderr.write_all(&input_err);
    let _ = ctx.stderr.write_all(&err_buf);
    if let Err(e) = flushed.and(flushed2) {
        return Ok(ctx.write_failed(&e));
    }
    if status == 0 && failed {
        status = 2;
    }
    Ok(status)
}

fn libc_eisdir() -> i32 {
    21
}

/// In-place editing: output for each file goes to a temporary file next to it,
/// which replaces the original when the file is done.
struct InPlace<'a> {
    host: &'a dyn Host,
    cwd: PathBuf,
    suffix: Option<String>,
    /// (original path, temporary path).
    current: Option<(PathBuf, PathBuf)>,
    error: Option<io::Error>,
}

impl InPlace<'_> {
    fn start(&mut self, name: &str, out: &mut Out<'_>) -> io::Result<()> {
        let orig = if Path::new(name).is_absolute() {
            PathBuf::from(name)
        } else {
            self.cwd.join(name)
        };
        let dir = orig
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.cwd.clone());
        let base = orig
            .file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".sed{}{}", std::process::id(), base));
        // The temp file is created (exclusively, no symlink followed by name)
        // in the directory checked; the renames in `finish` act on the entries
        // checked too.
        safesh_utils::resolve_write(self.host, &orig, false)?;
        let f = safesh_utils::open_write(self.host, &tmp, safesh_utils::WriteMode::CreateNew)?;
        if let Some(mode) = safesh_utils::resolve_read(self.host, &orig, true)
            .ok()
            .and_then(|e| e.mode())
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = f.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777));
        }
        out.w = Box::new(BufWriter::with_capacity(64 * 1024, f));
        out.missing = false;
        self.current = Some((orig, tmp));
        Ok(())
    }

    fn finish(&mut self, out: &mut Out<'_>) -> io::Result<()> {
        out.w.flush()?;
        out.w = Box::new(io::sink());
        out.missing = false;
        let Some((orig, tmp)) = self.current.take() else {
            return Ok(());
        };
        let suffix = self.suffix.clone().unwrap_or_default();
        if !suffix.is_empty() {
            let base = orig
                .file_name()
                .map(|b| b.to_string_lossy().into_owned())
                .unwrap_or_default();
            let backup_name = if suffix.contains('*') {
                suffix.replace('*', &base)
            } else {
                format!("{base}{suffix}")
            };
            let backup = if backup_name.contains('/') {
                self.cwd.join(backup_name)
            } else {
                orig.with_file_name(backup_name)
            };
            let from = safesh_utils::resolve_write(self.host, &orig, false)?;
            from.rename_to(&safesh_utils::resolve_write(self.host, &backup, false)?)?;
        }
        let from = safesh_utils::resolve_write(self.host, &tmp, false)?;
        from.rename_to(&safesh_utils::resolve_write(self.host, &orig, false)?)?;
        let _ = &self.error;
        Ok(())
    }
}

/// Whether a sed command line with its script inline (`-e` or the first operand)
/// would run a shell (`e`, `s///e`): the refusal text, decided before anything
/// runs. Scripts from `-f` files are checked when they are read.
pub fn shell_escape(args: &[String]) -> Option<String> {
    let argv = preprocess(args);
    let p = args::parse(&argv, &SPEC).ok()?;
    if p.has("f") {
        return None;
    }
    let mut chunks: Vec<Chunk> = p
        .values("e")
        .iter()
        .enumerate()
        .map(|(n, v)| Chunk {
            text: v.as_bytes().to_vec(),
            origin: Origin::Expr(n + 1),
        })
        .collect();
    if chunks.is_empty() {
        chunks.push(Chunk {
            text: p.operands.first()?.as_bytes().to_vec(),
            origin: Origin::Expr(1),
        });
    }
    match parse::parse(&chunks, p.has("E") || p.has("r")) {
        Err(e) if e.0 == E_REFUSED => Some(format!("sed: {}", e.0)),
        _ => None,
    }
}

/// Exposed for the interpreter's policy tests: the exact refusal text for `e`.
pub fn refusal_message() -> &'static str {
    E_REFUSED
}
