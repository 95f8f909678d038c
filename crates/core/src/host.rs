//! The [`safesh_utils::Host`] the interpreter gives to in-process utilities: file
//! access records labels (and, with the policy, checks paths), inner commands run
//! through the shell's own dispatch, and cancellation follows the script's deadline.

use crate::error::{ErrorCode, Refusal};
use crate::interp::expand::Field;
use crate::interp::simple::Resolved;
use crate::interp::{Fd, Shell, Stop};
use crate::io::{LabelCell, Sink, lock};
use safesh_label::Label;
use safesh_utils::{Host, Interrupt, UtilResult};
use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Duration;

/// The host for one utility invocation.
pub(crate) struct ShellHost<'a> {
    shell: &'a Shell,
    cell: LabelCell,
    /// The label of the utility's own arguments (and the PC): what an inner
    /// command's name comes from (`xargs rm`: `rm` is the script's, not stdin's).
    argv_label: Label,
    /// Paths the utility asked to change, to record their labels afterwards.
    changed: std::sync::Mutex<Vec<std::path::PathBuf>>,
    /// Files the utility may be writing: their recorded label follows the cell up
    /// before the utility gets the data that raised it.
    writing: std::sync::Arc<std::sync::Mutex<Vec<std::path::PathBuf>>>,
    /// Paths that did not exist when the utility asked to write them: those it
    /// created are named by its words (`touch "$n"`), whose label becomes their
    /// name label once it returns.
    created: std::sync::Mutex<Vec<std::path::PathBuf>>,
    /// The labels of the names the utility read from the disk (listings, stats):
    /// names it creates may be copies of them (`cp -r d e`). Not the contents'
    /// labels: `cp .env vault/notes.txt` names `notes.txt` by the agent's word.
    names_seen: std::sync::Mutex<Label>,
    /// The name labels, looked up once per utility run (not once per file).
    names: std::sync::OnceLock<Option<std::sync::Arc<crate::names::NameMap>>>,
    /// The utility's own words: an inner command name found among them is the
    /// script's; one built from input (`xargs -I{} {}`) is the input's.
    own_words: Vec<String>,
    /// Each word of the utility's argv with its own label, and the PC: a name it
    /// creates is labeled by the words that spell it, not by every word
    /// (`curl -o out.json -H "…$TOKEN"` names `out.json` by the agent's word).
    word_labels: Vec<(String, Label)>,
    pc: Label,
    /// The utility only removes files (`rm`, `rmdir`, `unlink`, `shred`).
    removes: bool,
    /// Its registration as a reader of the files it opens (made on the first):
    /// a sandboxed program that starts writing one raises the cell.
    reading: std::sync::OnceLock<crate::running_writers::Reading>,
    /// Set when the utility declares its stdout a count ([`Host::output_is_count`]).
    count: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The cell's label before [`Host::reply_begin`] lowered it for a brokered
    /// reply; restored by [`Host::reply_end`].
    reply_saved: std::sync::Mutex<Option<(Label, usize)>>,
    /// Files written inside a brokered reply's scope, with the reply's label.
    reply_changed: std::sync::Mutex<Vec<(std::path::PathBuf, Label)>>,
    /// Threads forwarding what the utility writes to the script's descriptors
    /// (`cp f /dev/stdout`): joined when the utility is done.
    pumps: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl Drop for ShellHost<'_> {
    fn drop(&mut self) {
        // The utility has returned and closed its files: each pump reaches the
        // end of its pipe, so its bytes are in the stream before the next command.
        for h in std::mem::take(&mut *lock(&self.pumps)) {
            let _ = h.join();
        }
        // The names it created come from its words (and the PC): `cp a "$n"`,
        // `mkdir -p "$n"/x` — the words that spell them, or all of them when none
        // does (an over-label, never a loss).
        let created = std::mem::take(&mut *lock(&self.created));
        for p in created {
            let label = self.created_name_label(&p);
            self.shell.record_name(&p, &label);
        }
    }
}

impl<'a> ShellHost<'a> {
    pub(crate) fn new(shell: &'a Shell, cell: LabelCell) -> Self {
        let argv_label = cell.get();
        let writing = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        ShellHost {
            shell,
            cell,
            argv_label,
            changed: std::sync::Mutex::new(Vec::new()),
            writing,
            created: std::sync::Mutex::new(Vec::new()),
            names_seen: std::sync::Mutex::new(Label::empty()),
            names: std::sync::OnceLock::new(),
            own_words: Vec::new(),
            word_labels: Vec::new(),
            pc: Label::empty(),
            removes: false,
            reading: std::sync::OnceLock::new(),
            count: None,
            pumps: std::sync::Mutex::new(Vec::new()),
            reply_saved: std::sync::Mutex::new(None),
            reply_changed: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Marks a utility that only removes files.
    pub(crate) fn removing(mut self, removes: bool) -> Self {
        self.removes = removes;
        self
    }

    /// Lets the utility declare its stdout a count, which sets `flag`.
    pub(crate) fn with_count_flag(
        mut self,
        flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        self.count = Some(flag);
        self
    }

    /// Remembers each word's label, to label the names the utility creates by
    /// the words that spell them (see [`ShellHost::created_name_label`]).
    pub(crate) fn with_word_labels(
        mut self,
        argv: &[String],
        labels: Vec<Label>,
        pc: &Label,
    ) -> Self {
        // Names are labeled only when a word is worth labeling (check_write):
        // the common public command line keeps nothing (no copy per utility).
        if !crate::names::worth_labeling(&self.argv_label) {
            return self;
        }
        self.word_labels = argv.iter().cloned().zip(labels).collect();
        self.pc = pc.clone();
        self
    }

    /// The label of a name the utility created: the PC's, the names it read
    /// (`cp -r d e` copies names), and the words that contain the new entry's
    /// name — or every word when none does (a name the utility derived).
    fn created_name_label(&self, path: &std::path::Path) -> Label {
        let base = self.argv_label.join(&lock(&self.names_seen));
        // Compared as a word: a name that is not UTF-8 is spelled escaped.
        let Some(name) = path.file_name().map(safesh_utils::word_bytes::word_from_os) else {
            return base;
        };
        let name = name.as_ref();
        let spelled: Vec<&Label> = self
            .word_labels
            .iter()
            .filter(|(w, _)| w.contains(name))
            .map(|(_, l)| l)
            .collect();
        if spelled.is_empty() {
            return base;
        }
        spelled
            .into_iter()
            .fold(self.pc.join(&lock(&self.names_seen)), |l, w| l.join(w))
    }

    /// Remembers the utility's own argv (for utilities that run inner commands).
    pub(crate) fn with_own_words(mut self, argv: &[String]) -> Self {
        self.own_words = argv.to_vec();
        self
    }

    /// From the first file the utility may write on: data it reads that raises
    /// its label raises the recorded label of every such file first (`tee f`
    /// opens `f` before the secret arrives on its stdin). Read-only utilities
    /// never pay for it.
    fn follow_reads(&self, flow: &std::sync::Arc<crate::flow::Flow>) {
        if self.cell.has_raise_hook() {
            return;
        }
        let (writing, shared, flow) = (
            self.writing.clone(),
            self.shell.shared.clone(),
            flow.clone(),
        );
        self.cell.on_raise(Box::new(move |label: &Label| {
            // (A directory it made holds files, recorded on their own.)
            for p in lock(&writing).iter().filter(|p| !p.is_dir()) {
                if let Err(r) = flow.prepare_write(p, label) {
                    let msg = r.message.clone();
                    let mut slot = lock(&shared.refusal);
                    if slot.is_none() {
                        *slot = Some(r);
                    }
                    return Err(io::Error::new(io::ErrorKind::PermissionDenied, msg));
                }
            }
            Ok(())
        }));
    }

    /// The paths the utility changed (created, wrote, removed, renamed).
    pub(crate) fn take_changed(&self) -> Vec<std::path::PathBuf> {
        std::mem::take(&mut *lock(&self.changed))
    }

    /// The files the utility wrote inside a brokered reply's scope, each with
    /// the reply's label ([`Host::reply_begin`]).
    pub(crate) fn take_reply_changed(&self) -> Vec<(std::path::PathBuf, Label)> {
        std::mem::take(&mut *lock(&self.reply_changed))
    }

    /// The name labels (see [`Shell::names`]), once per utility run.
    fn names(&self) -> Option<std::sync::Arc<crate::names::NameMap>> {
        self.names.get_or_init(|| self.shell.names()).clone()
    }

    /// Joins the name label of the entry at `path` and, with `entries`, of the
    /// entries of the directory there.
    fn join_names(&self, names: &crate::names::NameMap, path: &Path, entries: bool) {
        let mut seen = crate::names::entry_label(names, path).unwrap_or_else(Label::empty);
        if entries && path.is_dir() {
            seen = seen.join(&crate::names::dir_entries_label(names, path));
        }
        if !seen.is_empty() {
            self.cell.join(&seen);
            let mut all = lock(&self.names_seen);
            *all = all.join(&seen);
        }
    }

    /// Records a refusal for the interpreter to raise once the utility returns.
    fn refuse(&self, mut r: Refusal) -> io::Error {
        // A path built from secret data is not repeated in clear.
        if !self.cell.get().confidentiality.is_public()
            && let Some(p) = r.details.path.clone()
        {
            crate::flow::withhold(&mut r, &p);
        }
        let msg = r.message.clone();
        let mut slot = lock(&self.shell.shared.refusal);
        if slot.is_none() {
            *slot = Some(r);
        }
        io::Error::new(io::ErrorKind::PermissionDenied, msg)
    }
}

/// Turns a utility's interruption back into the refusal it carries.
pub(crate) fn refusal_of(i: Interrupt) -> Refusal {
    let e = match i.0.downcast::<Refusal>() {
        Ok(r) => return *r,
        Err(e) => e,
    };
    let e = match e.downcast::<safesh_utils::ctx::MemoryLimit>() {
        Ok(m) => {
            return Refusal::new(
                ErrorCode::LimitExceeded,
                format!(
                    "{} would hold more than {} MiB of input in memory (its share of [limits] memory_mb)",
                    m.what,
                    m.budget >> 20
                ),
            )
            .rule("memory_mb")
            .suggest("give it less input (head, a narrower grep first), or process the data in a stream (a pipeline that does not need all of it at once)");
        }
        Err(e) => e,
    };
    match e.downcast::<safesh_utils::ShellString>() {
        Ok(s) => shell_string_refusal(&s.0),
        Err(e) => Refusal::new(ErrorCode::ExecutionError, e.to_string()),
    }
}

/// A utility would hand a string to a shell: blocked like a shell itself.
pub(crate) fn shell_string_refusal(what: &str) -> Refusal {
    let name = what.split(':').next().unwrap_or(what).to_string();
    Refusal::new(
        ErrorCode::Blocked,
        format!("{what}: this would hand a string to a shell"),
    )
    .rule("blocklist.shell-strings")
    .command(name)
    .suggest("run the command directly in the script (pipe the data to it, or loop over the lines with `while read`)")
}

impl Host for ShellHost<'_> {
    fn check_read(&self, path: &Path) -> io::Result<()> {
        let real = match self.shell.check_read_resolved(path) {
            Ok(real) => real,
            Err(r) => return Err(self.refuse(r)),
        };
        // Noted as read before its label is looked up: a sandboxed program
        // that starts writing it meanwhile finds this reader.
        let writers = self
            .reading
            .get_or_init(|| crate::running_writers::reader(self.cell.clone()))
            .read(path, real.as_deref());
        // Fail closed: a file whose recorded label cannot be asked is not read.
        let label = match self.shell.file_label_checked(path, real.as_deref()) {
            Ok(l) => l.join(&writers),
            Err(r) => return Err(self.refuse(r)),
        };
        // What reads a directory sees its entries' names (`grep -r`, `grep -l`).
        if let Some(names) = self.names() {
            self.join_names(&names, path, true);
        }
        // (A file it writes already records what it reads from here on.)
        self.cell.join_checked(&label)
    }

    fn check_stat(&self, path: &Path) -> io::Result<()> {
        if let Err(r) = self.shell.check_read_resolved(path) {
            return Err(self.refuse(r));
        }
        if let Some(names) = self.names() {
            self.join_names(&names, path, false);
        }
        Ok(())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<()> {
        if let Err(r) = self.shell.check_read_resolved(dir) {
            return Err(self.refuse(r));
        }
        if let Some(names) = self.names() {
            self.join_names(&names, dir, true);
        }
        Ok(())
    }

    fn may_stat(&self, path: &Path) -> bool {
        if self.shell.check_read_resolved(path).is_err() {
            return false;
        }
        if let Some(names) = self.names() {
            self.join_names(&names, path, false);
        }
        true
    }

    fn may_read(&self, path: &Path) -> bool {
        // The trusted PATH (`[sandbox] path`) is where allowed programs come
        // from: looking a program up there (`which python3`) reads no data.
        if let Some(policy) = &self.shell.shared.policy
            && path.parent().is_some_and(|dir| {
                policy
                    .config()
                    .sandbox
                    .path
                    .iter()
                    .any(|p| p.path.as_path() == dir)
            })
        {
            return true;
        }
        match self.shell.check_read_resolved(path) {
            Ok(real) => {
                self.cell
                    .join(&self.shell.file_label_resolved(path, real.as_deref()));
                true
            }
            Err(_) => false,
        }
    }

    fn max_field_bytes(&self) -> usize {
        usize::try_from(self.shell.shared.limits.string_bytes).unwrap_or(usize::MAX)
    }

    fn file_limit(&self) -> Option<safesh_utils::FileLimit> {
        self.shell.file_limit()
    }

    fn memory_budget(&self) -> u64 {
        self.shell.memory_budget()
    }

    fn spill_dir(&self) -> Option<std::path::PathBuf> {
        self.shell.spill_dir()
    }

    fn output_is_count(&self) {
        if let Some(f) = &self.count {
            f.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn check_write_linked(&self, path: &Path, dev: u64, ino: u64) -> io::Result<()> {
        match &self.shell.shared.policy {
            Some(p) => p.check_linked(path, dev, ino).map_err(|r| self.refuse(r)),
            None => Ok(()),
        }
    }

    fn check_write(&self, path: &Path) -> io::Result<()> {
        if let Err(r) = self.shell.check_write_path(path) {
            return Err(self.refuse(r));
        }
        // Recorded before the utility writes (`cp .env copy` has read `.env`
        // already): a utility killed mid-write leaves the file labeled.
        if let Some(flow) = &self.shell.shared.flow {
            let p = normalize(&self.shell.cwd.join(path));
            let label = self.cell.get();
            // A removal writes no data: nothing to label (and a name that does
            // not exist is not put in the store).
            if crate::flow::worth_storing(&label)
                && !self.removes
                && !p.is_dir()
                && let Err(r) = flow.prepare_write(&p, &label)
            {
                return Err(self.refuse(r));
            }
            self.follow_reads(flow);
            lock(&self.writing).push(p);
        }
        lock(&self.changed).push(path.to_path_buf());
        if !crate::names::worth_labeling(&self.argv_label)
            && !crate::names::worth_labeling(&lock(&self.names_seen))
        {
            return Ok(());
        }
        let missing = crate::names::missing_components(path);
        lock(&self.created).extend(missing);
        Ok(())
    }

    fn open_descriptor(&self, path: &Path, write: bool) -> Option<io::Result<std::fs::File>> {
        use safesh_policy::paths::ProcessPath;
        let n = match self.shell.descriptor_path(path)? {
            ProcessPath::Descriptor(n) => n,
            ProcessPath::OwnProcess => {
                return Some(Err(self.refuse(crate::fdpath::own_process_refusal(path))));
            }
        };
        Some(match self.shell.script_fd(n, write) {
            Ok(Fd::Out(sink)) => crate::fdpath::pump_out(sink, self.cell.clone()).map(|(f, h)| {
                lock(&self.pumps).push(h);
                f
            }),
            Ok(Fd::In(src)) => crate::fdpath::pump_in(src, self.cell.clone()),
            Err(e) => Err(e),
        })
    }

    fn run(
        &self,
        argv: &[String],
        cwd: &Path,
        _stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> UtilResult {
        let mut sub = self.shell.subshell();
        sub.cwd = cwd.to_path_buf();
        let cap = self.shell.shared.limits.string_bytes;
        let out = Sink::capture(cap);
        let err = Sink::capture(cap);
        sub.fds.insert(0, Fd::In(crate::io::Source::empty()));
        sub.fds.insert(1, Fd::Out(out.clone()));
        sub.fds.insert(2, Fd::Out(err.clone()));
        let label = self.cell.get();
        let fields: Vec<Field> = argv
            .iter()
            .enumerate()
            .map(|(i, a)| Field {
                text: a.clone(),
                // (`echo` is xargs's own default command.)
                label: if i == 0 && (a == "echo" || self.own_words.iter().skip(1).any(|w| w == a)) {
                    self.argv_label.clone()
                } else {
                    label.clone()
                },
            })
            .collect();
        let r = sub.dispatch_program(fields);
        let status = sub.last_status;
        drop(sub);
        let o = out.take_captured();
        let e = err.take_captured();
        self.cell.join(&o.label);
        let _ = stdout.write_all(&o.data);
        let _ = stderr.write_all(&e.data);
        match r {
            Err(Stop::Refused(r)) => Err(Interrupt(r)),
            _ => Ok(status),
        }
    }

    fn cancelled(&self) -> bool {
        self.shell.cancel.is_cancelled()
    }

    fn sleep(&self, d: Duration) -> Result<(), Interrupt> {
        let end = std::time::Instant::now() + d;
        loop {
            if self.shell.cancel.is_cancelled() {
                return Err(Interrupt(Box::new(self.shell.timeout_refusal())));
            }
            let now = std::time::Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(10)));
        }
    }

    fn egress(&self, request: &safesh_utils::Egress<'_>) -> Result<(), Interrupt> {
        // A utility refused anything on the way (a file it may not read, a label
        // store that cannot be asked) does not connect with what it has left
        // (`curl -d @refused-file` would send an empty body).
        if let Some(r) = lock(&self.shell.shared.refusal).clone() {
            return Err(Interrupt(Box::new(r)));
        }
        self.shell
            .egress(request, &self.cell.get())
            .map_err(|r| Interrupt(Box::new(r)))
    }

    fn env_read(&self, name: &str) {
        // The utility's environment is this shell's exported variables.
        if let Some(v) = self.shell.vars.get(name) {
            self.cell.join(&v.shown_label());
        }
    }

    fn received_from(&self, host: &str) {
        self.cell.join(&Label::from_network(host));
    }

    fn reply_begin(&self, host: &str) {
        let Some(flow) = &self.shell.shared.flow else {
            return;
        };
        let mut saved = lock(&self.reply_saved);
        if saved.is_some() {
            return;
        }
        let sent = self.cell.get();
        let reply = flow
            .reply_label(&sent, host)
            .join(&Label::from_network(host));
        let from = lock(&self.changed).len();
        *saved = Some((self.cell.replace(reply), from));
    }

    fn reply_end(&self) {
        if let Some((sent, from)) = lock(&self.reply_saved).take() {
            // Whatever joined during the reply joins what was sent.
            let during = self.cell.get();
            // The files written inside the scope (`curl -o f`) hold the reply.
            let files: Vec<_> = lock(&self.changed).drain(from..).collect();
            lock(&self.reply_changed).extend(files.into_iter().map(|p| (p, during.clone())));
            self.cell.replace(sent.join(&during));
        }
    }

    fn command_kind(&self, name: &str) -> Option<&'static str> {
        match self.shell.resolve_program(name) {
            Resolved::Function(_) => Some("function"),
            Resolved::Builtin => Some("builtin"),
            Resolved::Utility(_) => Some("utility"),
            Resolved::Platform(_) => Some("platform"),
            Resolved::NotFound => self.shell.program_exists(name).then_some("program"),
        }
    }
}

/// The share of `[limits] memory_mb` one in-process utility may hold (`sort`'s
/// buffer): pipeline stages run side by side in the one process.
const MEMORY_SHARE: u64 = 4;

impl Shell {
    /// `[limits] file_size_mb` for in-process writes (redirections and
    /// utilities), as `RLIMIT_FSIZE` binds external programs: a write that would
    /// pass it fails and the script stops with `LIMIT_EXCEEDED`.
    pub(crate) fn file_limit(&self) -> Option<safesh_utils::FileLimit> {
        let mb = self.shared.policy.as_ref()?.config().limits.file_size_mb?;
        let shared = self.shared.clone();
        Some(safesh_utils::FileLimit {
            bytes: mb.saturating_mul(1 << 20),
            hit: std::sync::Arc::new(move || {
                let mut slot = lock(&shared.refusal);
                if slot.is_none() {
                    *slot = Some(Refusal::limit("a file's size in MB", mb, "file_size_mb"));
                }
                io::Error::from_raw_os_error(libc::EFBIG)
            }),
        })
    }

    /// What an in-process utility may hold in memory before it spills to disk
    /// (`sort`): a share of `[limits] memory_mb`, or the default budget.
    pub(crate) fn memory_budget(&self) -> u64 {
        self.shared
            .policy
            .as_ref()
            .and_then(|p| p.config().limits.memory_mb)
            .map(|mb| mb.saturating_mul(1 << 20) / MEMORY_SHARE)
            .unwrap_or(safesh_utils::ctx::DEFAULT_MEMORY_BUDGET)
    }

    /// Where in-process utilities spill (`sort`'s runs): `spill/` in the state
    /// dir, which is on disk (the session temp dir is RAM-backed). Created by
    /// the utility when it first spills, never before.
    pub(crate) fn spill_dir(&self) -> Option<std::path::PathBuf> {
        Some(self.shared.flow.as_ref()?.state_dir()?.join("spill"))
    }

    /// Checks that a path may be read: inside the policy's read roots.
    pub(crate) fn check_read_path(&self, path: &Path) -> Result<(), Refusal> {
        self.check_read_resolved(path).map(|_| ())
    }

    /// [`Shell::check_read_path`], also returning the canonical path when the
    /// check resolved an existing one (for [`Shell::file_label_resolved`]).
    pub(crate) fn check_read_resolved(
        &self,
        path: &Path,
    ) -> Result<Option<std::path::PathBuf>, Refusal> {
        let real = match &self.shared.policy {
            Some(p) => p.check_read_resolved(&self.cwd, path)?,
            None => None,
        };
        // The policy allows a descriptor name (as `None`, like a device or a
        // missing file): an existing, resolved path is none, so only the rest
        // pays for the second look.
        if real.is_none() {
            self.refuse_by_name(path)?;
        }
        Ok(real)
    }

    /// Checks that a path may be changed: inside the policy's write roots and not
    /// protected (or inside `write_roots` for a library session without a policy).
    pub(crate) fn check_write_path(&self, path: &Path) -> Result<(), Refusal> {
        self.refuse_by_name(path)?;
        if let Some(p) = &self.shared.policy {
            return p.check_write(&self.cwd, path);
        }
        let Some(roots) = &self.shared.write_roots else {
            return Ok(());
        };
        let normalized = normalize(path);
        if roots.iter().any(|r| normalized.starts_with(r)) {
            return Ok(());
        }
        let mut r = Refusal::new(
            ErrorCode::PathViolation,
            format!("writing {} is outside the write roots", path.display()),
        )
        .rule("sandbox.write")
        .suggest("write inside the project directory");
        r.details.path = Some(path.display().to_string());
        r.details.allowed = roots.iter().map(|p| p.display().to_string()).collect();
        Err(r)
    }

    /// The path checks come right before an access by name, where the kernel
    /// would give the process's own descriptors and `/proc/self`: a descriptor
    /// name is served from the script's fd table by the callers that can
    /// ([`Shell::descriptor_path`]), and refused to the rest.
    fn refuse_by_name(&self, path: &Path) -> Result<(), Refusal> {
        use safesh_policy::paths::ProcessPath;
        match self.descriptor_path(path) {
            None => Ok(()),
            Some(ProcessPath::Descriptor(n)) => Err(crate::fdpath::by_name_refusal(path, n)),
            Some(ProcessPath::OwnProcess) => Err(crate::fdpath::own_process_refusal(path)),
        }
    }

    /// The label of bytes read from `path`.
    pub(crate) fn file_label(&self, path: &Path) -> Label {
        self.file_label_resolved(path, None)
    }

    /// [`Shell::file_label`] given `real`, the canonical form of `path` from the
    /// read check ([`Shell::check_read_resolved`]), so that classification does not
    /// resolve the path a second time. It is used only when resolving the
    /// normalized path would give the same (see [`resolves_as_normalized`]).
    pub(crate) fn file_label_resolved(&self, path: &Path, real: Option<&Path>) -> Label {
        self.file_label_checked(path, real)
            .unwrap_or_else(|_| crate::flow::unavailable_label(path))
    }

    /// [`Shell::file_label_resolved`], or the label store's refusal when the
    /// store that may hold the file's label cannot be asked.
    pub(crate) fn file_label_checked(
        &self,
        path: &Path,
        real: Option<&Path>,
    ) -> Result<Label, Refusal> {
        // (A normalized absolute path resolves as written: one scan, not two.)
        let (path, real) = if safesh_policy::paths::is_normalized_absolute(path) {
            (Cow::Borrowed(path), real)
        } else {
            let real = real.filter(|_| resolves_as_normalized(path));
            (Cow::Owned(normalize(path)), real)
        };
        // (Hashing a `Path` walks its components: only when a `<(…)` file exists.)
        let temp = lock(&self.shared.temp_labels);
        if !temp.is_empty()
            && let Some(l) = temp.get(path.as_ref())
        {
            return Ok(l.clone());
        }
        drop(temp);
        match &self.shared.flow {
            Some(flow) => flow.file_label_checked(&path, real),
            None => Ok(Label::from_file(path.to_string_lossy())),
        }
    }
}

/// True when the kernel resolves `path` exactly as its lexical normalization
/// (absolute; no `..`, which would apply after a symlink; no trailing `/` or `/.`,
/// which fail on a file): the policy resolves the path as written, the
/// classification the normalized one.
fn resolves_as_normalized(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    match path.as_os_str().as_bytes() {
        [b'/', rest @ ..] => {
            !rest.ends_with(b"/")
                && !rest.ends_with(b"/.")
                && rest != b"."
                && !rest.split(|&c| c == b'/').any(|seg| seg == b"..")
        }
        _ => false,
    }
}

/// Lexical normalization (`a/./b/../c` → `a/c`) without touching the disk.
pub(crate) use safesh_policy::paths::normalize;

impl Shell {
    /// Before running: a refusal when a network utility's fixed command line
    /// names a host its network list does not allow (the same rule
    /// [`Shell::egress`] applies when it connects), so the script stops before
    /// any stage starts and `safesh check` says so.
    pub(crate) fn network_precheck(
        &self,
        policy: &safesh_policy::Policy,
        argv: &[String],
    ) -> Option<Refusal> {
        use safesh_policy::config::Network;
        let tool = argv.first()?.as_str();
        let hosts = safesh_tools_net::first_hosts(tool, argv.get(1..)?)?;
        let profile = policy.profile(tool, Path::new(tool), &[], &self.cwd);
        let list = match &profile.network {
            Network::On => return None,
            Network::Off => Vec::new(),
            Network::Hosts(list) => list.clone(),
        };
        let host = hosts.into_iter().find(|h| {
            let h = safesh_flow::hosts::normalize_host(h);
            !list
                .iter()
                .any(|p| safesh_flow::HostPattern::new(p).matches(&h))
        })?;
        let mut r = Refusal::new(
            ErrorCode::PermissionDenied,
            format!(
                "{tool}: {} is not on the network list",
                safesh_flow::hosts::normalize_host(&host)
            ),
        )
        .rule(format!("commands.{tool}.network"))
        .command(tool.to_string())
        .suggest("use a host the config allows, or ask the human to add it to [sandbox] network");
        r.details.allowed = list;
        Some(r)
    }

    /// A network utility is about to connect: the host must be on the command's
    /// network list, and `data` (everything it will send: arguments, files, stdin,
    /// the PC) must be allowed to flow there.
    pub(crate) fn egress(
        &self,
        request: &safesh_utils::Egress<'_>,
        data: &Label,
    ) -> Result<(), Refusal> {
        use safesh_policy::config::Network;
        let Some(policy) = &self.shared.policy else {
            return Err(Refusal::new(
                ErrorCode::PermissionDenied,
                format!("{}: no network without a policy", request.tool),
            ));
        };
        let profile = policy.profile(request.tool, Path::new(request.tool), &[], &self.cwd);
        let host = safesh_flow::hosts::normalize_host(request.host);
        let (allowed, list) = match &profile.network {
            Network::On => (true, Vec::new()),
            Network::Off => (false, Vec::new()),
            Network::Hosts(list) => (
                list.iter()
                    .any(|p| safesh_flow::HostPattern::new(p).matches(&host)),
                list.clone(),
            ),
        };
        self.decide_egress(request, data, false, allowed, &list)
    }

    /// The egress decision once the host list is known (`allowed`: the host
    /// is on it; `list`: what to name as allowed): the flow rules on `data`
    /// first (with `write`, the network-write commit point of a platform
    /// command), then the list.
    pub(crate) fn decide_egress(
        &self,
        request: &safesh_utils::Egress<'_>,
        data: &Label,
        write: bool,
        allowed: bool,
        list: &[String],
    ) -> Result<(), Refusal> {
        let tool = request.tool;
        // A backstop behind the labels: bytes that contain a known secret value
        // (from git's history, a file safesh never saw written) carry its label.
        let found = self.known_values().and_then(|k| {
            let headers = request.headers.iter().map(|(_, v)| v.as_slice());
            k.label_of_all(
                [request.url.as_bytes()]
                    .into_iter()
                    .chain(headers)
                    .chain(request.body),
            )
        });
        let data = &match found {
            Some(l) => data.join(&l),
            None => data.clone(),
        };
        let host = safesh_flow::hosts::normalize_host(request.host);
        // The flow rules first: an attack is stopped by what it would send, whether
        // or not the host is on the list.
        let shown = if data.confidentiality.is_public() {
            request.url.to_string()
        } else {
            format!("{}://{}:{}/[withheld]", request.scheme, host, request.port)
        };
        let point = if write {
            safesh_flow::CommitPoint::NetworkWrite { host: host.clone() }
        } else {
            safesh_flow::CommitPoint::Network { host: host.clone() }
        };
        self.commit_shared(
            point,
            data,
            format!("{tool} {} {shown}", request.method),
            &host,
        )?;
        if !allowed {
            let mut r = Refusal::new(
                ErrorCode::PermissionDenied,
                format!("{tool}: {host} is not on the network list"),
            )
            .rule(format!("commands.{tool}.network"))
            .command(tool.to_string())
            .suggest(
                "use a host the config allows, or ask the human to add it to [sandbox] network",
            );
            r.details.allowed = list.to_vec();
            return Err(r);
        }
        Ok(())
    }
}
