//! The context a utility runs in, and the host interface behind it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Why a utility stopped before finishing on its own: the script was cancelled
/// (timeout), or an inner command was refused. The payload is the host's own error
/// value; the interpreter downcasts it back.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Interrupt(pub Box<dyn std::error::Error + Send + Sync>);

/// A utility was asked to hand a string to a shell (awk `system()` or pipes, sed
/// `e`): the interpreter turns this into a BLOCKED refusal that stops the script.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ShellString(pub String);

/// A utility would hold more of its input in memory than the host's
/// [`Host::memory_budget`] (`tac`, `jq --slurp` …): the interpreter turns this
/// into a `LIMIT_EXCEEDED` refusal (rule `memory_mb`) that stops the script.
#[derive(Debug, thiserror::Error)]
#[error("{what}: holding more than {budget} bytes of input in memory")]
pub struct MemoryLimit {
    /// The utility (and what it holds).
    pub what: String,
    /// The budget in bytes.
    pub budget: u64,
}

impl MemoryLimit {
    /// The interruption that stops the script.
    pub fn interrupt(what: impl Into<String>, budget: u64) -> Interrupt {
        Interrupt(Box::new(MemoryLimit {
            what: what.into(),
            budget,
        }))
    }

    /// The interruption for an error of [`UtilCtx::read_file`] past the budget
    /// (kind `OutOfMemory` holding a [`MemoryLimit`]), naming `who` read the
    /// file (`jq --rawfile`, `awk -f`); `None` for any other error.
    pub fn from_io(e: &io::Error, who: &str) -> Option<Interrupt> {
        let m = e.get_ref()?.downcast_ref::<MemoryLimit>()?;
        Some(Self::interrupt(format!("{who} {}", m.what), m.budget))
    }
}

/// What a utility returns: its exit status, or an interruption to propagate.
pub type UtilResult = Result<i32, Interrupt>;

/// How a file is opened for writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Create or truncate.
    Truncate,
    /// Create or append.
    Append,
    /// Create; fail if it exists.
    CreateNew,
}

/// [`Host::memory_budget`] of a host without limits of its own.
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;

/// [`Host::max_field_bytes`] of a host without limits of its own.
pub const DEFAULT_MAX_FIELD_BYTES: usize = 64 << 20;

/// What the interpreter provides to utilities. Implementations record labels for
/// every file read, check paths against the roots, and route inner commands through
/// the same dispatch (and policy) as any command in the script.
pub trait Host: Send + Sync {
    /// Called before a file is read or a directory listed; joins the file's label
    /// into the utility's output label. May refuse (`PermissionDenied`).
    fn check_read(&self, path: &Path) -> io::Result<()>;
    /// Like [`Host::check_read`] for a probe that may fail quietly (`which`
    /// looking along `PATH`): `false` when the path may not be read, without
    /// stopping the script.
    fn may_read(&self, path: &Path) -> bool {
        self.check_read(path).is_ok()
    }
    /// Called before the metadata of `path` is read to be printed with its name
    /// (`ls`, `find`, `tree`, `realpath`): only the label of the entry's NAME joins
    /// the output, not its contents' (a listing of a directory holding a copy of a
    /// secret is not secret; a file named from a secret is). May refuse. The
    /// default is [`Host::check_read`].
    fn check_stat(&self, path: &Path) -> io::Result<()> {
        self.check_read(path)
    }
    /// Like [`Host::check_stat`] for a probe that may fail quietly (is the
    /// target of `cp`/`mv`/`ln` a directory?): `false` when the metadata of
    /// `path` may not be looked at, without stopping the script (the change
    /// that follows is decided on its own). The default is [`Host::may_read`].
    fn may_stat(&self, path: &Path) -> bool {
        self.may_read(path)
    }
    /// Called before the directory `dir` is listed (`readdir`) by a utility that
    /// prints the names: the labels of the entries' names join the output, not
    /// their contents'. May refuse. The default is [`Host::check_read`].
    fn list_dir(&self, dir: &Path) -> io::Result<()> {
        self.check_read(dir)
    }
    /// Called before any change to the filesystem at `path` (create, write, remove,
    /// rename, chmod, mkdir, touch). May refuse (`PermissionDenied`).
    fn check_write(&self, path: &Path) -> io::Result<()>;
    /// Called with a file opened for writing as `path` that has more than one
    /// name (hard links): may refuse when it is a protected file's inode, so
    /// the decision is on the file opened, not the name. The default allows.
    fn check_write_linked(&self, path: &Path, dev: u64, ino: u64) -> io::Result<()> {
        let _ = (path, dev, ino);
        Ok(())
    }
    /// Opens `path` (absolute) when it names one of the script's descriptors
    /// (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/1`, or a symlink to one): the
    /// file given is a pipe to or from that stream of the script, never the
    /// process's own descriptor. `None` for any other path, which is then checked
    /// and opened by name. Every open of a utility goes through here first
    /// ([`open_read`], [`open_write`]). The default knows no descriptors.
    fn open_descriptor(&self, path: &Path, write: bool) -> Option<io::Result<File>> {
        let _ = (path, write);
        None
    }
    /// Runs an inner command (from `xargs`, `find -exec`, ...) as a program
    /// (see [`Host::command_kind`]) through the shell's dispatch, the policy
    /// and the sandbox.
    fn run(
        &self,
        argv: &[String],
        cwd: &Path,
        stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> UtilResult;
    /// True once the script has been cancelled (timeout); long loops should stop.
    fn cancelled(&self) -> bool;
    /// Sleeps up to `d`, returning early (with an interrupt) when cancelled.
    fn sleep(&self, d: std::time::Duration) -> Result<(), Interrupt>;
    /// How `name` resolves when a utility runs it ([`Host::run`] from `xargs`,
    /// `find -exec`), as `execvp` would find a program: `builtin` (one that is
    /// a program too), `utility`, `platform` or `program` (on the trusted
    /// PATH); never a function or a shell-only builtin. `None`: nothing would run.
    fn command_kind(&self, name: &str) -> Option<&'static str>;
    /// Called by network utilities (curl, wget) before each connection, after every
    /// byte that will be sent (files, stdin, arguments) has been read through the
    /// context: the host decides egress on the exact label of that data, the PC label
    /// and the host list. A refusal is an interrupt that stops the script. The default
    /// refuses: a host that has not thought about the network gives none.
    fn egress(&self, request: &Egress<'_>) -> Result<(), Interrupt> {
        Err(Interrupt(Box::new(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{}: network access is not available here", request.tool),
        ))))
    }
    /// Called by a utility whose options (parsed as the real tool parses them) make
    /// its stdout a count in a fixed format (`wc`, `grep -c` without names from a
    /// directory walk): text whose bytes the input cannot choose. The host may then
    /// vouch for the output's integrity; its confidentiality stays that of the data.
    fn output_is_count(&self) {}
    /// Called when a utility reads exported variable `name` (through [`Env`]): its
    /// label (value and name) joins the utility's output, so that `printenv`,
    /// awk's `ENVIRON` or jq's `env` never show a secret as public. The default
    /// records nothing (a host without labels).
    fn env_read(&self, name: &str) {
        let _ = name;
    }
    /// The widest field a utility may pad or format to (a printf width or
    /// precision, `nl -w`, a strftime width): `[limits] string_bytes`. Wider ones
    /// are refused with a clear error, never allocated (an allocation failure
    /// aborts the whole process, server included).
    fn max_field_bytes(&self) -> usize {
        DEFAULT_MAX_FIELD_BYTES
    }
    /// The file size limit of in-process writes (`[limits] file_size_mb`):
    /// every file a utility opens for writing ([`open_write`]) is bound by it.
    /// `None` (the default): no limit.
    fn file_limit(&self) -> Option<crate::wfile::FileLimit> {
        None
    }
    /// The memory a utility that holds its input (`sort`) may use for it before
    /// it spills to disk: a share of `[limits] memory_mb`.
    fn memory_budget(&self) -> u64 {
        DEFAULT_MEMORY_BUDGET
    }
    /// A disk-backed directory where a utility may put temporary files that are
    /// safesh's, not the script's (`sort`'s spilled runs): never RAM-backed.
    /// `None`: none known (the utility keeps its data in memory). The
    /// utility creates it (mode 0700) when it first needs it.
    fn spill_dir(&self) -> Option<PathBuf> {
        None
    }
    /// Called when a network utility receives a response from `host`: what it
    /// prints or writes from then on is labeled with that origin (low integrity).
    fn received_from(&self, host: &str) {
        let _ = host;
    }
    /// Called by a network utility just before it writes the body of the final
    /// response from `host` (after every hop and every egress check): until
    /// [`Host::reply_end`], what it writes carries the reply's label, in which the
    /// secrets brokered to `host` (`may_flow_to`) no longer appear — the host is
    /// trusted with the token, and its answer is its own data. Only the body goes
    /// between the two calls (not `-v` request headers or `-w` variables, which
    /// repeat what was sent). The default changes nothing.
    fn reply_begin(&self, host: &str) {
        let _ = host;
    }
    /// Ends the scope [`Host::reply_begin`] opened: what the utility writes next
    /// carries everything it sent again.
    fn reply_end(&self) {}
}

/// One outgoing request, described to [`Host::egress`] before it is sent.
#[derive(Clone, Debug)]
pub struct Egress<'a> {
    /// The utility making it (`curl`, `wget`).
    pub tool: &'a str,
    /// The full URL (it is data sent to the host too).
    pub url: &'a str,
    /// `http` or `https`.
    pub scheme: &'a str,
    /// The host name or address, as in the URL.
    pub host: &'a str,
    /// The port connected to.
    pub port: u16,
    /// The request method.
    pub method: &'a str,
    /// The request headers (name, value), as they will be sent.
    pub headers: &'a [(String, Vec<u8>)],
    /// The request body, if any (read whole before the request is decided).
    pub body: Option<&'a [u8]>,
}

/// The exported environment as a utility sees it. Every variable a utility
/// actually reads ([`Env::get`], or each one [`Env::iter`] yields) is reported to
/// [`Host::env_read`], which joins its label into the utility's output; a utility
/// that never reads the environment costs nothing.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    vars: &'a BTreeMap<String, String>,
    host: &'a dyn Host,
}

impl<'a> Env<'a> {
    /// The environment `vars`, whose reads are reported to `host`.
    pub fn new(vars: &'a BTreeMap<String, String>, host: &'a dyn Host) -> Self {
        Env { vars, host }
    }

    /// The value of `name`, if exported (recording the read).
    pub fn get(&self, name: &str) -> Option<&'a String> {
        let v = self.vars.get(name);
        if v.is_some() {
            self.host.env_read(name);
        }
        v
    }

    /// True when the character type locale is UTF-8: the first non-empty of
    /// `LC_ALL`, `LC_CTYPE`, `LANG` names UTF-8 (as `C.UTF-8` does); false
    /// (the C locale, one byte per character) otherwise.
    pub fn utf8_locale(&self) -> bool {
        ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|n| self.get(n).filter(|v| !v.is_empty()))
            .is_some_and(|v| {
                let v = v.to_ascii_lowercase();
                v.contains("utf-8") || v.contains("utf8")
            })
    }

    /// Every exported variable in name order (recording each one yielded).
    pub fn iter(&self) -> impl Iterator<Item = (&'a String, &'a String)> + 'a {
        let host = self.host;
        self.vars.iter().inspect(move |(k, _)| host.env_read(k))
    }
}

/// Everything a utility needs to run.
pub struct UtilCtx<'a> {
    /// The full argv; `argv[0]` is the name the utility was called by.
    pub argv: Vec<String>,
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// The exported environment (reads are labeled through the host).
    pub env: Env<'a>,
    /// Standard input.
    pub stdin: &'a mut dyn Read,
    /// Standard output.
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
    /// Files, labels, inner commands, cancellation.
    pub host: &'a dyn Host,
}

impl UtilCtx<'_> {
    /// The utility's name (argv[0]).
    pub fn name(&self) -> &str {
        self.argv.first().map(String::as_str).unwrap_or("")
    }

    /// The arguments after argv[0].
    pub fn args(&self) -> &[String] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// Resolves `p` against the working directory (no symlink resolution).
    /// A path made from a word (`Path::new(arg)`) names the bytes the word
    /// stands for ([`crate::word_bytes`]): a non-UTF-8 file name round-trips.
    pub fn resolve(&self, p: impl AsRef<Path>) -> PathBuf {
        let p = crate::word_bytes::unescape_path(p.as_ref());
        let p = p.as_ref();
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// Opens a file for reading (relative to cwd), recording its label.
    pub fn open(&self, p: impl AsRef<Path>) -> io::Result<File> {
        open_read(self.host, &self.resolve(p))
    }

    /// Reads a whole file (relative to cwd), recording its label, within the
    /// utility's memory budget ([`Host::memory_budget`]): a bigger file is an
    /// error of kind `OutOfMemory` holding a [`MemoryLimit`] (checked on the
    /// file's size before reading, and while reading).
    pub fn read_file(&self, p: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        let p = p.as_ref();
        let budget = self.host.memory_budget();
        let mut buf = Vec::new();
        if self.read_file_within(p, &mut buf, budget)? {
            Ok(buf)
        } else {
            Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                MemoryLimit {
                    what: p.display().to_string(),
                    budget,
                },
            ))
        }
    }

    /// Reads a whole file (relative to cwd), recording its label, appending to
    /// `buf` at most `max` bytes: `Ok(false)` (with `buf` holding at most
    /// `max + 1` more bytes) when the file holds more. The size is asked of
    /// the file opened first, so a file known to be too big is never read.
    pub fn read_file_within(
        &self,
        p: impl AsRef<Path>,
        buf: &mut Vec<u8>,
        max: u64,
    ) -> io::Result<bool> {
        let f = self.open(p)?;
        if f.metadata().is_ok_and(|m| m.is_file() && m.len() > max) {
            return Ok(false);
        }
        let before = buf.len();
        f.take(max.saturating_add(1)).read_to_end(buf)?;
        Ok((buf.len() - before) as u64 <= max)
    }

    /// Opens a file for writing (relative to cwd) after the host allowed it;
    /// writes are bound by the host's file size limit.
    pub fn create(&self, p: impl AsRef<Path>, mode: WriteMode) -> io::Result<crate::WriteFile> {
        open_write(self.host, &self.resolve(p), mode)
    }

    /// Checks read access to `p` (stat, readdir) and records its label; returns the resolved path.
    pub fn check_read(&self, p: impl AsRef<Path>) -> io::Result<PathBuf> {
        let path = self.resolve(p);
        self.host.check_read(&path)?;
        Ok(path)
    }

    /// Checks access to the metadata of `p` and records its NAME's label
    /// ([`Host::check_stat`]); returns the resolved path.
    pub fn check_stat(&self, p: impl AsRef<Path>) -> io::Result<PathBuf> {
        let path = self.resolve(p);
        self.host.check_stat(&path)?;
        Ok(path)
    }

    /// Checks that the directory `p` may be listed and records the labels of its
    /// entries' names ([`Host::list_dir`]); returns the resolved path.
    pub fn list_dir(&self, p: impl AsRef<Path>) -> io::Result<PathBuf> {
        let path = self.resolve(p);
        self.host.list_dir(&path)?;
        Ok(path)
    }

    /// Checks write access to `p` (mkdir, rm, mv, chmod, touch); returns the resolved path.
    pub fn check_write(&self, p: impl AsRef<Path>) -> io::Result<PathBuf> {
        let path = self.resolve(p);
        self.host.check_write(&path)?;
        Ok(path)
    }

    /// Resolves `p` for a change ([`resolve_write`]): the name and the entry
    /// actually reached are checked; the entry acts on that one only.
    pub fn resolve_write(
        &self,
        p: impl AsRef<Path>,
        follow: bool,
    ) -> io::Result<crate::beneath::Entry> {
        resolve_write(self.host, &self.resolve(p), follow)
    }

    /// The metadata of `p` (its final symlink followed with `follow`), read from
    /// the entry the walk reached after its canonical path passed
    /// [`Host::check_stat`] when a symlink on the way makes it another
    /// ([`crate::beneath::metadata`]). The name itself is checked by the caller.
    pub fn stat(&self, p: impl AsRef<Path>, follow: bool) -> io::Result<std::fs::Metadata> {
        crate::beneath::metadata(&self.resolve(p), follow, |real| self.host.check_stat(real))
    }

    /// The metadata of `p` for a precheck (`cp`/`mv`/`ln`: is the target a
    /// directory? does it exist?), decided on the entry the walk reaches: `None`
    /// when nothing is there, or when the name or that entry may not be looked
    /// at ([`Host::may_stat`]; quiet: the change that follows is checked on its
    /// own). A check by name (`Path::is_dir`) would follow a symlink flipped
    /// outside and answer about a file no check covered.
    pub fn probe(&self, p: impl AsRef<Path>, follow: bool) -> Option<std::fs::Metadata> {
        let path = self.resolve(p);
        if !self.host.may_stat(&path) {
            return None;
        }
        crate::beneath::metadata(&path, follow, |real| {
            if self.host.may_stat(real) {
                Ok(())
            } else {
                Err(io::Error::from(io::ErrorKind::PermissionDenied))
            }
        })
        .ok()
    }

    /// The target of the symlink `p`, read from the link the walk reaches after
    /// its canonical path passed [`Host::check_stat`] when a symlink on the way
    /// makes it another (a read by name would read a link a flipped directory
    /// leads to). The name itself is checked by the caller.
    pub fn read_link(&self, p: impl AsRef<Path>) -> io::Result<std::ffi::OsString> {
        let path = self.resolve(p);
        let entry = crate::beneath::resolve(&path, false)?;
        if entry.real() != crate::beneath::lexical(&path) {
            self.host.check_stat(entry.real())?;
        }
        if !entry.is_symlink() {
            return Err(io::Error::from_raw_os_error(if entry.exists() {
                libc::EINVAL
            } else {
                libc::ENOENT
            }));
        }
        entry.read_link()
    }

    /// The canonical path of the existing `p` (every symlink resolved by the
    /// walk, none by the kernel), when the name and what it reaches may be
    /// looked at ([`UtilCtx::probe`]'s rule); `None` otherwise.
    pub fn canonical(&self, p: impl AsRef<Path>) -> Option<PathBuf> {
        let path = self.resolve(p);
        if !self.host.may_stat(&path) {
            return None;
        }
        let entry = crate::beneath::resolve(&path, true).ok()?;
        (entry.exists() && self.host.may_stat(entry.real())).then(|| entry.real().to_path_buf())
    }

    /// Writes `name: msg\n` to stderr (GNU style), ignoring write errors.
    pub fn warn(&mut self, msg: impl std::fmt::Display) {
        // Names in messages are words: their escaped bytes go out as bytes.
        let text = format!("{}: {msg}\n", self.name());
        let _ = self
            .stderr
            .write_all(&crate::word_bytes::word_to_bytes(&text));
    }

    /// Reports an I/O error on `what` the way GNU tools do
    /// (`cat: x: No such file or directory`).
    pub fn warn_io(&mut self, what: impl std::fmt::Display, e: &io::Error) {
        let msg = io_error_text(e);
        self.warn(format_args!("{what}: {msg}"));
    }

    /// The exit status for a failed write to stdout: a closed pipe ends the
    /// utility quietly with 141 (as SIGPIPE would); anything else is reported.
    pub fn write_failed(&mut self, e: &io::Error) -> i32 {
        if e.kind() == io::ErrorKind::BrokenPipe {
            141
        } else {
            let msg = io_error_text(e);
            self.warn(format_args!("write error: {msg}"));
            1
        }
    }
}

/// Opens `path` (absolute) for reading through `host`: one of the script's
/// descriptors ([`Host::open_descriptor`]), or a file checked (and its label
/// recorded) by [`Host::check_read`] and opened by
/// [`crate::open::open_decided`]: when a symlink on the way makes the file
/// opened another than the name says, that file's canonical path is checked
/// (and labeled) too, and a flip after the check cannot change what is opened.
pub fn open_read(host: &dyn Host, path: &Path) -> io::Result<File> {
    // A path made from a word names the bytes the word stands for.
    let path = crate::word_bytes::unescape_path(path);
    let path = path.as_ref();
    if let Some(f) = host.open_descriptor(path, false) {
        return f;
    }
    host.check_read(path)?;
    crate::open::open_decided(path, libc::O_RDONLY, 0, |real| host.check_read(real))
}

/// Opens `path` (absolute) for writing through `host`: one of the script's
/// descriptors ([`Host::open_descriptor`]; `mode` does not apply to a stream),
/// or a file allowed by [`Host::check_write`] and opened by
/// [`crate::open::open_decided`] (the file actually opened is allowed too: a
/// protected name or a path outside the roots reached through a symlink is
/// refused, whenever the symlink was flipped).
///
/// Writes to the file are bound by [`Host::file_limit`].
pub fn open_write(host: &dyn Host, path: &Path, mode: WriteMode) -> io::Result<crate::WriteFile> {
    // A path made from a word names the bytes the word stands for.
    let path = crate::word_bytes::unescape_path(path);
    let path = path.as_ref();
    let append = mode == WriteMode::Append;
    if let Some(f) = host.open_descriptor(path, true) {
        return f.map(|f| crate::WriteFile::new(f, append, None));
    }
    host.check_write(path)?;
    // Truncated only once the opened file is decided (a hard link to a
    // protected file must not lose its content to a refused write).
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | match mode {
            WriteMode::Truncate => 0,
            WriteMode::Append => libc::O_APPEND,
            WriteMode::CreateNew => libc::O_EXCL,
        };
    let f = crate::open::open_decided(path, flags, 0o666, |real| host.check_write(real))?;
    {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata()?;
        if m.is_file() && m.nlink() > 1 {
            host.check_write_linked(path, m.dev(), m.ino())?;
        }
        if mode == WriteMode::Truncate && m.is_file() {
            f.set_len(0)?;
        }
    }
    Ok(crate::WriteFile::new(f, append, host.file_limit()))
}

/// Resolves `path` (absolute) for a change that does not follow its final
/// name (remove, rename, mkdir, link, set times) or, with `follow`, does
/// (chmod): the name is checked by [`Host::check_write`], and so is the
/// canonical path of the entry the walk reached when a symlink on the way makes
/// it another. The [`crate::beneath::Entry`] acts on that entry only.
pub fn resolve_write(
    host: &dyn Host,
    path: &Path,
    follow: bool,
) -> io::Result<crate::beneath::Entry> {
    // A path made from a word names the bytes the word stands for.
    let path = crate::word_bytes::unescape_path(path);
    let path = path.as_ref();
    host.check_write(path)?;
    let entry = crate::beneath::resolve(path, follow)?;
    if entry.real() != crate::beneath::lexical(path) {
        host.check_write(entry.real())?;
    }
    Ok(entry)
}

/// [`resolve_write`] for reading (`cp` of a symlink, `readlink`).
pub fn resolve_read(
    host: &dyn Host,
    path: &Path,
    follow: bool,
) -> io::Result<crate::beneath::Entry> {
    // A path made from a word names the bytes the word stands for.
    let path = crate::word_bytes::unescape_path(path);
    let path = path.as_ref();
    host.check_read(path)?;
    let entry = crate::beneath::resolve(path, follow)?;
    if entry.real() != crate::beneath::lexical(path) {
        host.check_read(entry.real())?;
    }
    Ok(entry)
}

/// The C library's wording for an I/O error (`No such file or directory`), without
/// Rust's ` (os error 2)` suffix.
pub fn io_error_text(e: &io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        // SAFETY: strerror returns a pointer to a static, NUL-terminated string.
        let s = unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) };
        return s.to_string_lossy().into_owned();
    }
    match e.kind() {
        io::ErrorKind::NotFound => "No such file or directory".into(),
        io::ErrorKind::PermissionDenied => "Permission denied".into(),
        io::ErrorKind::AlreadyExists => "File exists".into(),
        _ => e.to_string(),
    }
}
