//! Labeled streams: where a command's bytes come from and go to.
//!
//! Every chunk that moves between commands carries the [`Label`] of the data it was
//! made from. A command reads through a [`StageReader`] (joining the label of what it
//! read into its own label) and writes through a [`StageWriter`] (tagging what it
//! writes with everything it has seen so far). Pipes between in-process stages are
//! bounded channels of chunks, so memory stays bounded however much flows.

use safesh_label::Label;
use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes with their label.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The bytes.
    pub data: Vec<u8>,
    /// Their label.
    pub label: Label,
}

/// The label a command accumulates: its PC label, its arguments, and everything it read.
#[derive(Clone, Default)]
pub struct LabelCell(Arc<CellInner>);

/// Called with the cell's new label when data read raises it, BEFORE the reader
/// gets the bytes (a utility's files record it first); an error fails the read.
pub(crate) type RaiseHook = Box<dyn Fn(&Label) -> io::Result<()> + Send + Sync>;

#[derive(Default)]
struct CellInner {
    label: Mutex<Label>,
    on_raise: std::sync::OnceLock<RaiseHook>,
}

impl std::fmt::Debug for LabelCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LabelCell").field(&self.get()).finish()
    }
}

impl LabelCell {
    /// A cell starting at `l`.
    pub fn new(l: Label) -> Self {
        LabelCell(Arc::new(CellInner {
            label: Mutex::new(l),
            on_raise: std::sync::OnceLock::new(),
        }))
    }
    /// True when `other` is this same cell (not merely an equal label).
    pub(crate) fn same(&self, other: &LabelCell) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// Joins `l` into the cell.
    pub fn join(&self, l: &Label) {
        lock(&self.0.label).join_assign(l);
    }
    /// Joins `l` into the cell for data about to be handed to the command: when
    /// it raises the label, the cell's hook (if any) runs first.
    pub fn join_checked(&self, l: &Label) -> io::Result<()> {
        let Some(hook) = self.0.on_raise.get() else {
            self.join(l);
            return Ok(());
        };
        let mut cur = lock(&self.0.label);
        let raised = !l.flows_to(&cur);
        let new = cur.join(l);
        if raised {
            hook(&new)?;
        }
        *cur = new;
        Ok(())
    }
    /// True once a raise hook is set.
    pub(crate) fn has_raise_hook(&self) -> bool {
        self.0.on_raise.get().is_some()
    }
    /// Sets the hook run when read data raises the label (once per cell).
    pub(crate) fn on_raise(&self, hook: RaiseHook) {
        let _ = self.0.on_raise.set(hook);
    }
    /// The current label.
    pub fn get(&self) -> Label {
        lock(&self.0.label).clone()
    }
    /// Replaces the label without running the raise hook: for the narrow
    /// scope of a brokered reply ([`safesh_utils::Host::reply_begin`]), whose
    /// label is lower than what was sent, and for restoring it afterwards.
    pub(crate) fn replace(&self, l: Label) -> Label {
        std::mem::replace(&mut *lock(&self.0.label), l)
    }
}

/// Locks a mutex, recovering from poisoning (a panicking stage must not wedge others).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Bytes captured from `$(…)` or for a model-facing result.
#[derive(Debug, Default)]
pub struct Captured {
    /// The bytes.
    pub data: Vec<u8>,
    /// The join of the labels of everything written.
    pub label: Label,
    /// Set when more than the cap was offered; the rest was dropped.
    pub overflowed: bool,
    /// Total bytes offered (kept + dropped).
    pub total: u64,
}

/// Where output goes.
pub enum SinkKind {
    /// The process's standard output.
    Stdout,
    /// The process's standard error.
    Stderr,
    /// An open file.
    File(Mutex<File>),
    /// The write end of a pipe to another stage.
    Pipe(Mutex<Option<SyncSender<Chunk>>>),
    /// A memory buffer with a cap.
    Capture(Mutex<Captured>, u64),
    /// Discard (`/dev/null`).
    Null,
    /// A descriptor closed with `>&-`: every write fails with EBADF, as in bash
    /// (`echo: write error: Bad file descriptor`, status 1).
    Closed,
    /// Handed to a consumer as it is written (a job's log, a streaming face).
    Stream(Arc<dyn StreamConsumer>, StreamKind),
}

/// Which of a request's outputs a streamed chunk belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Receives a request's output as it is produced. An error (the consumer is
/// gone) reaches the writer as a broken pipe.
pub trait StreamConsumer: Send + Sync {
    /// One chunk of output with its label.
    fn write(&self, stream: StreamKind, data: &[u8], label: &Label) -> io::Result<()>;

    /// The session's known secret values, given before the request's first
    /// chunk: a model-facing consumer treats a chunk containing one as secret
    /// (see `safesh_flow::known`). Ignored by default.
    fn set_known(&self, _known: crate::known::KnownSource) {}
}

/// An output destination, shared by every fd that points at it.
pub struct Sink {
    kind: SinkKind,
    label: Mutex<Label>,
    budget: Option<Arc<OutputBudget>>,
    /// A redirected file whose label is recorded before each byte that raises it
    /// is written, and again when the last fd closes it.
    record: Option<FileRecord>,
    /// A redirected file's size limit (`[limits] file_size_mb`) and whether it
    /// was opened to append.
    limit: Option<(safesh_utils::FileLimit, bool)>,
}

/// Where a file sink's label goes: into the label store BEFORE bytes with a
/// higher label than recorded so far are written (a writer killed mid-write
/// leaves the file labeled at least as high as its bytes), and once more when it
/// is closed (with the final fingerprint).
pub(crate) struct FileRecord {
    path: std::path::PathBuf,
    append: bool,
    flow: Arc<crate::flow::Flow>,
    /// The label already recorded for the bytes to come (the PC at open, then
    /// raised by each chunk that carried more).
    prepared: Mutex<Label>,
    /// Where a store failure goes, for the interpreter to stop the script with.
    shared: Arc<crate::interp::Shared>,
}

impl FileRecord {
    /// Records `opened` (the writer's label at open: at least its PC) for `path`
    /// before the file is opened; a refusal when the label store cannot keep it.
    pub(crate) fn open(
        path: std::path::PathBuf,
        append: bool,
        flow: Arc<crate::flow::Flow>,
        shared: Arc<crate::interp::Shared>,
        opened: &Label,
    ) -> Result<FileRecord, crate::error::Refusal> {
        flow.prepare_write(&path, opened)?;
        Ok(FileRecord {
            path,
            append,
            flow,
            prepared: Mutex::new(opened.clone()),
            shared,
        })
    }

    /// Before a chunk labeled `label` is written: raise the recorded label when
    /// the chunk carries more than it (one comparison otherwise).
    fn before_write(&self, label: &Label) -> io::Result<()> {
        let mut prepared = lock(&self.prepared);
        if label.flows_to(&prepared) {
            return Ok(());
        }
        let new = prepared.join(label);
        if let Err(r) = self.flow.prepare_write(&self.path, &new) {
            let msg = r.message.clone();
            self.raise(r);
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, msg));
        }
        *prepared = new;
        Ok(())
    }

    /// Keeps the first refusal for the interpreter to raise.
    fn raise(&self, r: crate::error::Refusal) {
        let mut slot = lock(&self.shared.refusal);
        if slot.is_none() {
            *slot = Some(r);
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(r) = self.record.take() {
            let label = lock(&self.label).clone();
            if let Err(e) = r.flow.record_write(&r.path, &label, r.append) {
                r.raise(e);
            }
        }
    }
}

/// A request's allowance of output bytes (`limits.output_bytes`), shared by its
/// stdout and stderr. Once spent, writes fail and the interpreter stops the script
/// with `LIMIT_EXCEEDED` at its next command.
#[derive(Debug)]
pub struct OutputBudget {
    limit: u64,
    used: std::sync::atomic::AtomicU64,
}

impl OutputBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(OutputBudget {
            limit,
            used: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Spends `n` bytes; false once the budget is exceeded.
    fn spend(&self, n: usize) -> bool {
        let used = self
            .used
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed)
            + n as u64;
        used <= self.limit
    }

    /// True once more than the limit was offered.
    pub fn exceeded(&self) -> bool {
        self.used.load(std::sync::atomic::Ordering::Relaxed) > self.limit
    }

    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

/// A shared output.
pub type Output = Arc<Sink>;

impl Sink {
    /// Wraps a sink kind.
    pub fn new(kind: SinkKind) -> Output {
        Arc::new(Sink {
            kind,
            label: Mutex::new(Label::empty()),
            budget: None,
            record: None,
            limit: None,
        })
    }

    /// A redirected file: its label is recorded (label store) once it is closed.
    /// Writes past `limit` (with whether the file appends) fail, after the
    /// bytes that fit.
    pub(crate) fn recorded_file(
        file: std::fs::File,
        record: Option<FileRecord>,
        limit: Option<(safesh_utils::FileLimit, bool)>,
    ) -> Output {
        Arc::new(Sink {
            kind: SinkKind::File(Mutex::new(file)),
            label: Mutex::new(Label::empty()),
            budget: None,
            record,
            limit,
        })
    }

    /// Wraps a sink kind whose writes spend `budget`.
    pub fn with_budget(kind: SinkKind, budget: Arc<OutputBudget>) -> Output {
        Arc::new(Sink {
            kind,
            label: Mutex::new(Label::empty()),
            budget: Some(budget),
            record: None,
            limit: None,
        })
    }

    /// A capture sink keeping at most `cap` bytes.
    pub fn capture(cap: u64) -> Output {
        Sink::new(SinkKind::Capture(Mutex::new(Captured::default()), cap))
    }

    /// Writes safesh's own final message, even past the output budget.
    pub fn write_unmetered(&self, data: &[u8], label: &Label) -> io::Result<()> {
        match &self.budget {
            None => self.write_chunk(data, label),
            Some(_) => {
                lock(&self.label).join_assign(label);
                self.write_kind(data, label)
            }
        }
    }

    /// Writes one labeled chunk.
    pub fn write_chunk(&self, data: &[u8], label: &Label) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if let Some(b) = &self.budget
            && !b.spend(data.len())
        {
            return Err(io::Error::other("output limit exceeded"));
        }
        lock(&self.label).join_assign(label);
        self.write_kind(data, label)
    }

    fn write_kind(&self, data: &[u8], label: &Label) -> io::Result<()> {
        match &self.kind {
            SinkKind::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(data)?;
                out.flush()
            }
            SinkKind::Stderr => io::stderr().lock().write_all(data),
            SinkKind::File(f) => {
                if let Some(r) = &self.record {
                    r.before_write(label)?;
                }
                let mut f = lock(f);
                let Some((limit, append)) = &self.limit else {
                    return f.write_all(data);
                };
                let mut rest = data;
                while !rest.is_empty() {
                    match limit.write(&mut f, *append, rest)? {
                        0 => return Err(io::ErrorKind::WriteZero.into()),
                        n => rest = rest.get(n..).unwrap_or_default(),
                    }
                }
                Ok(())
            }
            // An empty chunk is the stop mark (`Sink::stop_refused`), never data.
            SinkKind::Pipe(_) if data.is_empty() => Ok(()),
            SinkKind::Pipe(tx) => send(tx, data.to_vec(), label),
            SinkKind::Capture(c, cap) => {
                let mut c = lock(c);
                c.total += data.len() as u64;
                c.label.join_assign(label);
                let room = cap.saturating_sub(c.data.len() as u64) as usize;
                if data.len() > room {
                    c.overflowed = true;
                    c.data.extend_from_slice(&data[..room]);
                } else {
                    c.data.extend_from_slice(data);
                }
                Ok(())
            }
            SinkKind::Null => Ok(()),
            SinkKind::Closed => Err(io::Error::from_raw_os_error(libc::EBADF)),
            SinkKind::Stream(c, kind) => c.write(*kind, data, label),
        }
    }

    /// Writes one labeled chunk the caller no longer needs: a pipe takes the
    /// buffer as it is instead of copying it.
    pub fn write_owned(&self, data: Vec<u8>, label: &Label) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let SinkKind::Pipe(tx) = &self.kind else {
            return self.write_chunk(&data, label);
        };
        lock(&self.label).join_assign(label);
        send(tx, data, label)
    }

    /// Marks the end of a pipe whose writer was refused: its reader gets an error,
    /// never a clean end of data. (An empty chunk is never sent otherwise.)
    pub fn stop_refused(&self) {
        if let SinkKind::Pipe(tx) = &self.kind {
            let _ = send(tx, Vec::new(), &Label::empty());
        }
    }

    /// The join of every label written so far.
    pub fn label(&self) -> Label {
        lock(&self.label).clone()
    }

    /// Takes the captured bytes out of a capture sink.
    pub fn take_captured(&self) -> Captured {
        match &self.kind {
            SinkKind::Capture(c, _) => std::mem::take(&mut *lock(c)),
            _ => Captured::default(),
        }
    }

    /// True for a pipe whose reader went away (a write to it failed): the
    /// writing stage is done, as SIGPIPE would end it.
    pub fn reader_gone(&self) -> bool {
        matches!(&self.kind, SinkKind::Pipe(tx) if lock(tx).is_none())
    }

    /// True for the discard sink.
    pub fn is_null(&self) -> bool {
        matches!(self.kind, SinkKind::Null)
    }

    /// True for a closed descriptor (see [`SinkKind::Closed`]).
    pub fn is_closed(&self) -> bool {
        matches!(self.kind, SinkKind::Closed)
    }
}

/// The error a reader gets after the stage writing its pipe was refused.
fn refused_writer() -> io::Error {
    io::Error::other("the command writing this pipe was refused")
}

/// Sends a chunk down a pipe; a closed pipe (reader gone) is a broken pipe.
/// The sender is dropped then, so [`Sink::reader_gone`] can tell.
fn send(tx: &Mutex<Option<SyncSender<Chunk>>>, data: Vec<u8>, label: &Label) -> io::Result<()> {
    let mut guard = lock(tx);
    let sent = match guard.as_ref() {
        Some(tx) => tx.send(Chunk {
            data,
            label: label.clone(),
        }),
        None => return Err(io::Error::from(io::ErrorKind::BrokenPipe)),
    };
    sent.map_err(|_| {
        *guard = None;
        io::Error::from(io::ErrorKind::BrokenPipe)
    })
}

/// Waits until fd 0 has data (or its end) to read, checking `cancel` between
/// short polls; a cancelled request gets an error instead of a read that would
/// block until the user types.
fn wait_for_stdin(cancel: &crate::interp::Cancel) -> io::Result<()> {
    loop {
        if cancel.is_cancelled() {
            return Err(io::Error::other("interrupted"));
        }
        let mut fd = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut fd, 1, 50) };
        if n > 0 {
            // Readable, at its end, or in error: `read` tells which, without blocking.
            return Ok(());
        }
        if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            // Not pollable: fall back to a plain read.
            return Ok(());
        }
    }
}

/// Creates a pipe between two stages: a bounded channel of labeled chunks.
pub fn pipe() -> (Output, Input) {
    let (tx, rx) = sync_channel::<Chunk>(16);
    let sink = Sink::new(SinkKind::Pipe(Mutex::new(Some(tx))));
    let source = Source::new(SourceKind::Pipe(rx), Label::empty());
    (sink, source)
}

/// Where input comes from.
pub enum SourceKind {
    /// The process's standard input.
    Stdin,
    /// Any reader with a fixed label (a file, a here-document).
    Reader(Box<dyn Read + Send>),
    /// The read end of a pipe.
    Pipe(Receiver<Chunk>),
    /// Nothing (`/dev/null`, closed).
    Empty,
}

/// The reader of a closed descriptor (see [`Source::closed`]).
struct ClosedReader;

impl Read for ClosedReader {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(libc::EBADF))
    }
}

/// How much a file-like source reads at a time into its own buffer.
const READ_BUF: usize = 64 * 1024;

struct SourceState {
    kind: SourceKind,
    label: Label,
    buf: Vec<u8>,
    pos: usize,
    buf_label: Label,
    /// The stage writing this pipe was refused: its reader must not take the end
    /// of its output for a clean end of data (`refused | curl -d @- …` sends nothing).
    refused: bool,
    /// The request a read of the process's stdin belongs to: a read blocked on a
    /// terminal or an idle pipe ends when the request is interrupted or times out
    /// (the kernel restarts `read` after SIGINT, so waiting in it would never end).
    cancel: Option<Arc<crate::interp::Cancel>>,
    /// A file a sandboxed program may be writing while it is read: the label
    /// its writers raise (`running_writers.rs`), joined after each read.
    follow: Option<(LabelCell, crate::running_writers::Reading)>,
}

/// An input, shared by every fd (and every command) that reads it, so that
/// `while read l; do …; done < f` consumes the file once.
pub struct Source {
    state: Mutex<SourceState>,
}

/// A shared input.
pub type Input = Arc<Source>;

impl Source {
    /// The process's own standard input when nothing of it has been buffered yet:
    /// a program can then be handed the descriptor itself.
    pub fn unbuffered_process_stdin(&self) -> bool {
        let st = lock(&self.state);
        matches!(st.kind, SourceKind::Stdin) && st.pos >= st.buf.len()
    }

    /// True for an input with nothing in it (`/dev/null`, closed).
    pub fn is_empty_source(&self) -> bool {
        matches!(lock(&self.state).kind, SourceKind::Empty)
    }

    /// Wraps a source kind whose bytes carry `label`.
    pub fn new(kind: SourceKind, label: Label) -> Input {
        Arc::new(Source {
            state: Mutex::new(SourceState {
                kind,
                label: label.clone(),
                buf: Vec::new(),
                pos: 0,
                buf_label: label,
                refused: false,
                cancel: None,
                follow: None,
            }),
        })
    }

    /// The process's standard input for one request: reads stop waiting when
    /// `cancel` ends (Ctrl-C in the REPL, the request's timeout).
    pub fn process_stdin(label: Label, cancel: Arc<crate::interp::Cancel>) -> Input {
        let source = Source::new(SourceKind::Stdin, label);
        lock(&source.state).cancel = Some(cancel);
        source
    }

    /// A source over fixed bytes (here-documents, here-strings).
    pub fn bytes(data: Vec<u8>, label: Label) -> Input {
        Source::new(SourceKind::Reader(Box::new(io::Cursor::new(data))), label)
    }

    /// An empty source.
    pub fn empty() -> Input {
        Source::new(SourceKind::Empty, Label::empty())
    }

    /// A descriptor closed with `<&-`: every read fails with EBADF, as in bash
    /// (`cat: -: Bad file descriptor`, status 1).
    pub fn closed() -> Input {
        Source::new(SourceKind::Reader(Box::new(ClosedReader)), Label::empty())
    }

    /// A file read while sandboxed programs may write it (a redirection):
    /// `follow` is its registration as a reader, whose cell starts at `label`.
    pub(crate) fn following(
        kind: SourceKind,
        follow: (LabelCell, crate::running_writers::Reading),
    ) -> Input {
        let src = Source::new(kind, follow.0.get());
        lock(&src.state).follow = Some(follow);
        src
    }

    /// Joins what the writers of a followed file raised, after bytes were read
    /// (they raise before writing, so the bytes are covered).
    fn follow_writers(st: &mut SourceState) {
        if let Some((cell, _)) = &st.follow {
            let l = cell.get();
            st.label.join_assign(&l);
        }
    }

    fn fill(st: &mut SourceState) -> io::Result<bool> {
        if st.pos < st.buf.len() {
            return Ok(true);
        }
        st.pos = 0;
        match &mut st.kind {
            SourceKind::Empty => {
                st.buf.clear();
                Ok(false)
            }
            SourceKind::Pipe(_) if st.refused => Err(refused_writer()),
            SourceKind::Pipe(rx) => match rx.recv() {
                Ok(chunk) if chunk.data.is_empty() => {
                    // The writer's stop mark (see `Sink::stop_refused`).
                    st.refused = true;
                    st.buf.clear();
                    Err(refused_writer())
                }
                Ok(chunk) => {
                    st.buf = chunk.data;
                    st.buf_label = chunk.label;
                    Ok(true)
                }
                Err(_) => {
                    st.buf.clear();
                    Ok(false)
                }
            },
            SourceKind::Stdin | SourceKind::Reader(_) => {
                // Only the tail past the last short read gets zeroed again.
                st.buf.resize(READ_BUF, 0);
                let r = Source::read_raw(&mut st.kind, st.cancel.as_deref(), &mut st.buf);
                let n = r.as_ref().map_or(0, |n| *n);
                st.buf.truncate(n);
                Source::follow_writers(st);
                st.buf_label = st.label.clone();
                r.map(|n| n > 0)
            }
        }
    }

    /// One read from a file-like source (stdin or a reader), retrying on EINTR.
    /// Pipes and empty sources give 0.
    fn read_raw(
        kind: &mut SourceKind,
        cancel: Option<&crate::interp::Cancel>,
        out: &mut [u8],
    ) -> io::Result<usize> {
        loop {
            let r = match kind {
                SourceKind::Stdin => {
                    if let Some(cancel) = cancel {
                        wait_for_stdin(cancel)?;
                    }
                    io::stdin().lock().read(out)
                }
                SourceKind::Reader(r) => r.read(out),
                SourceKind::Pipe(_) | SourceKind::Empty => Ok(0),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }

    /// The label of everything this input will yield, when it is fixed (a file, a
    /// here-document, safesh's stdin); `None` for a pipe, whose chunks each carry
    /// their own.
    pub fn fixed_label(&self) -> Option<Label> {
        let st = lock(&self.state);
        match st.kind {
            SourceKind::Pipe(_) => None,
            _ => Some(st.label.join(&st.buf_label)),
        }
    }

    /// Reads up to `out.len()` bytes; returns the count and the label of those bytes.
    pub fn read_labeled(&self, out: &mut [u8]) -> io::Result<(usize, Label)> {
        let mut st = lock(&self.state);
        if out.is_empty() {
            return Ok((0, Label::empty()));
        }
        // Nothing buffered and the caller's buffer is at least as big as ours: a
        // file or stdin is read straight into it, saving a copy per byte.
        if st.pos >= st.buf.len()
            && out.len() >= READ_BUF
            && matches!(st.kind, SourceKind::Stdin | SourceKind::Reader(_))
        {
            let cancel = st.cancel.clone();
            let n = Source::read_raw(&mut st.kind, cancel.as_deref(), out)?;
            Source::follow_writers(&mut st);
            let label = if n > 0 {
                st.label.clone()
            } else {
                Label::empty()
            };
            return Ok((n, label));
        }
        if !Source::fill(&mut st)? {
            return Ok((0, Label::empty()));
        }
        let n = out.len().min(st.buf.len() - st.pos);
        out[..n].copy_from_slice(&st.buf[st.pos..st.pos + n]);
        st.pos += n;
        Ok((n, st.buf_label.clone()))
    }

    /// Reads up to and including `delim` (or to end of input). Returns the bytes, the
    /// label and whether the delimiter was found.
    pub fn read_until(&self, delim: u8) -> io::Result<(Vec<u8>, Label, bool)> {
        let mut st = lock(&self.state);
        let mut out = Vec::new();
        let mut label = Label::empty();
        loop {
            if !Source::fill(&mut st)? {
                return Ok((out, label, false));
            }
            label.join_assign(&st.buf_label);
            let avail = &st.buf[st.pos..];
            if let Some(i) = memchr::memchr(delim, avail) {
                out.extend_from_slice(&avail[..=i]);
                st.pos += i + 1;
                return Ok((out, label, true));
            }
            out.extend_from_slice(avail);
            st.pos = st.buf.len();
        }
    }

    /// Reads exactly up to `n` bytes (fewer at end of input).
    pub fn read_n(&self, n: usize) -> io::Result<(Vec<u8>, Label)> {
        let mut out = vec![0u8; n];
        let mut got = 0;
        let mut label = Label::empty();
        while got < n {
            let (k, l) = self.read_labeled(&mut out[got..])?;
            if k == 0 {
                break;
            }
            label.join_assign(&l);
            got += k;
        }
        out.truncate(got);
        Ok((out, label))
    }
}

/// A command's view of an input: reads join the data's label into the command's cell.
pub struct StageReader {
    src: Input,
    cell: LabelCell,
}

impl StageReader {
    /// Reads `src` on behalf of the command whose label is `cell`.
    pub fn new(src: Input, cell: LabelCell) -> Self {
        StageReader { src, cell }
    }
}

impl Read for StageReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, l) = self.src.read_labeled(buf)?;
        if n > 0 {
            self.cell.join_checked(&l)?;
        }
        Ok(n)
    }
}

/// A command's view of an output: buffered, each flushed chunk labeled with the
/// command's cell.
pub struct StageWriter {
    sink: Output,
    cell: LabelCell,
    buf: Vec<u8>,
    unbuffered: bool,
    count: Option<CountOutput>,
}

/// A utility's declaration that its stdout is a count (see [`StageWriter::count_output`]).
#[derive(Clone)]
pub(crate) struct CountOutput {
    /// Set by the utility (through its host) once its real options say it prints
    /// counts: GNU option parsing decides, never the text of the arguments.
    pub(crate) declared: Arc<std::sync::atomic::AtomicBool>,
    /// The label of the utility's own words and the PC: what the count's text
    /// (file names, the format) comes from.
    pub(crate) words: Label,
}

const WRITE_BUF: usize = 64 * 1024;

impl StageWriter {
    /// Writes to `sink` on behalf of the command whose label is `cell`.
    pub fn new(sink: Output, cell: LabelCell) -> Self {
        StageWriter {
            sink,
            cell,
            buf: Vec::new(),
            unbuffered: false,
            count: None,
        }
    }

    /// Output that may be a count (`wc`, `grep -c`), once the utility declares it
    /// through `count.declared`. A count of untrusted text cannot carry an
    /// injection, so it is vouched for (integrity) — but a count of secret data
    /// is as secret as the data (it is a channel: `head -c $byte | wc -c`), so its
    /// confidentiality is kept whole. Declassification needs a human.
    pub(crate) fn count_output(mut self, count: CountOutput) -> Self {
        self.count = Some(count);
        self
    }

    fn label(&self) -> Label {
        let l = self.cell.get();
        match &self.count {
            Some(c) if c.declared.load(std::sync::atomic::Ordering::Relaxed) => {
                counted(&l).join(&c.words)
            }
            _ => l,
        }
    }

    /// Like [`StageWriter::new`] but every write goes through at once (stderr).
    pub fn unbuffered(sink: Output, cell: LabelCell) -> Self {
        StageWriter {
            sink,
            cell,
            buf: Vec::new(),
            unbuffered: true,
            count: None,
        }
    }
}

/// The label of a count of data labeled `data`: the data's confidentiality and its
/// origins as places (files, env), without the marks that make text untrusted
/// (the digits were computed by safesh, not written by the source).
fn counted(data: &Label) -> Label {
    let origins = data
        .origins
        .iter()
        .filter(|a| !safesh_flow::trust::is_tainting(a))
        .cloned()
        .collect();
    Label::new(
        data.confidentiality.clone(),
        safesh_label::Integrity::Top,
        origins,
    )
}

impl Write for StageWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.sink.is_null() {
            return Ok(data.len());
        }
        if self.unbuffered {
            self.sink.write_chunk(data, &self.label())?;
            return Ok(data.len());
        }
        if self.buf.len() + data.len() > WRITE_BUF {
            self.flush()?;
            if data.len() >= WRITE_BUF {
                self.sink.write_chunk(data, &self.label())?;
                return Ok(data.len());
            }
        }
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(WRITE_BUF);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let label = self.label();
        if matches!(self.sink.kind, SinkKind::Pipe(_)) {
            // The pipe keeps the buffer itself (no copy); a fresh one is
            // allocated on the next write.
            let data = std::mem::take(&mut self.buf);
            return self.sink.write_owned(data, &label);
        }
        // Other sinks copy what they keep, so the buffer is reused.
        let r = self.sink.write_chunk(&self.buf, &label);
        self.buf.clear();
        r
    }
}

impl Drop for StageWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
