//! Files a sandboxed program may be writing right now, and who is reading them.
//!
//! What a sandboxed program writes is labeled after it ends (`external.rs`
//! finds the files it changed), but a reader running at the same time — a
//! background job's output file, or a FIFO it writes while another command
//! reads — would see the file's old label: a channel with no label. So:
//!
//! - every sandboxed program registers as a **writer** for as long as it runs
//!   (until its writes are recorded), with its write roots and what it may
//!   have written so far: what it was given and what it has read (its live
//!   output label, raised before each read it makes);
//! - every in-process utility, every sandboxed program, every redirection
//!   (`< f`, followed after each read: `Source::following`) and `source`
//!   registers as a **reader** of the files it opens, with the cell its label
//!   lives in, for as long as it reads.
//!
//! A reader opening a file joins the label of each writer whose roots hold it
//! ([`Reading::read`], and [`label_of`] for any lookup of a file label). A
//! writer that starts while a reader has such a file open joins its label into
//! the reader's cell before it runs ([`register`]); a writer whose label rises
//! (it read another labeled file) raises its readers' cells too, before its
//! read proceeds ([`raised`]). Either way the reader's label covers every byte
//! the writer can have put in the file by the time the reader gets it. A
//! program's own reads leave its own writer out: it holds what it wrote.
//!
//! The registry is process-wide: sessions of one server process share it;
//! sessions in other processes on the same project do not see it.

use crate::io::{LabelCell, lock};
use safesh_label::Label;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One running sandboxed program that may write.
struct Writer {
    /// Its write roots, as given and resolved.
    roots: Vec<PathBuf>,
    /// What it was given (arguments, stdin, environment, the PC).
    given: Label,
    /// Its output label, raised as it reads (has the sandboxed-run mark).
    cell: LabelCell,
    /// The network's label once what it may have fetched counts as
    /// downloaded text (from the start when its fetches are not observed).
    network: Mutex<Option<Label>>,
}

impl Writer {
    /// What the files it wrote may hold now.
    fn label(&self) -> Label {
        let mut l = self
            .given
            .join(&crate::external::strip_sandboxed(&self.cell.get()));
        if let Some(n) = lock(&self.network).as_ref() {
            l = l.join(n);
        }
        l
    }

    fn holds(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(r))
    }
}

/// The files one command (a utility run, a sandboxed program) has opened to
/// read, and the cell its output label lives in.
struct Reader {
    cell: LabelCell,
    paths: Mutex<Vec<PathBuf>>,
}

#[derive(Default)]
struct Registry {
    writers: Vec<Arc<Writer>>,
    readers: Vec<Arc<Reader>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    writers: Vec::new(),
    readers: Vec::new(),
});

thread_local! {
    /// The output cell of the program whose read this thread is looking up.
    static READER: std::cell::RefCell<Option<LabelCell>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` (file label lookups) for a read by the program whose output cell
/// is `cell`: its own writer is left out.
pub(crate) fn as_writer<T>(cell: &LabelCell, f: impl FnOnce() -> T) -> T {
    let before = READER.with(|r| r.borrow_mut().replace(cell.clone()));
    let out = f();
    READER.with(|r| *r.borrow_mut() = before);
    out
}

/// A writer's registration: it ends when this is dropped.
pub(crate) struct Registration(Arc<Writer>);

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&REGISTRY).writers.retain(|w| !Arc::ptr_eq(w, &self.0));
    }
}

/// Registers a sandboxed program about to run with write access to `roots`;
/// the readers that have a file under them open take its label now.
pub(crate) fn register(
    roots: &[PathBuf],
    given: Label,
    cell: LabelCell,
    network: Option<Label>,
) -> Option<Registration> {
    if roots.is_empty() {
        return None;
    }
    let mut all: Vec<PathBuf> = roots.to_vec();
    all.extend(roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()));
    all.sort();
    all.dedup();
    let w = Arc::new(Writer {
        roots: all,
        given,
        cell,
        network: Mutex::new(network),
    });
    lock(&REGISTRY).writers.push(w.clone());
    raise_readers(&w);
    Some(Registration(w))
}

/// The writer whose output cell is `cell` got more (it read a labeled file,
/// or its stdin brought a higher label): its readers' cells follow, before
/// the data that raised it reaches the program.
pub(crate) fn raised(cell: &LabelCell) {
    if let Some(w) = writer_of(cell) {
        raise_readers(&w);
    }
}

/// The running writer whose output cell is `cell`.
fn writer_of(cell: &LabelCell) -> Option<Arc<Writer>> {
    lock(&REGISTRY)
        .writers
        .iter()
        .find(|w| w.cell.same(cell))
        .cloned()
}

/// The writer whose output cell is `cell` fetched from the network (`label`:
/// what that brings): what it writes from now on may hold it, and its
/// readers follow before the first byte arrives.
pub(crate) fn fetched(cell: &LabelCell, label: &Label) {
    if let Some(w) = writer_of(cell) {
        {
            let mut n = lock(&w.network);
            *n = Some(n.as_ref().map_or_else(|| label.clone(), |o| o.join(label)));
        }
        raise_readers(&w);
    }
}

/// Joins `w`'s label into every other reader that has a file under its roots,
/// and on through readers that are writers themselves (a sandboxed program
/// reading the file writes its own).
fn raise_readers(w: &Arc<Writer>) {
    let mut queue = vec![w.clone()];
    let mut done: Vec<Arc<Writer>> = Vec::new();
    while let Some(w) = queue.pop() {
        if done.iter().any(|d| Arc::ptr_eq(d, &w)) {
            continue;
        }
        done.push(w.clone());
        let (readers, writers): (Vec<Arc<Reader>>, Vec<Arc<Writer>>) = {
            let registry = lock(&REGISTRY);
            let readers: Vec<Arc<Reader>> = registry
                .readers
                .iter()
                .filter(|r| !r.cell.same(&w.cell))
                .filter(|r| lock(&r.paths).iter().any(|p| w.holds(p)))
                .cloned()
                .collect();
            let writers = registry
                .writers
                .iter()
                .filter(|o| readers.iter().any(|r| r.cell.same(&o.cell)))
                .cloned()
                .collect();
            (readers, writers)
        };
        if readers.is_empty() {
            continue;
        }
        let label = w.label();
        for r in readers {
            // (A raise hook that fails leaves the cell joined: the bytes are labeled.)
            if r.cell.join_checked(&label).is_err() {
                r.cell.join(&label);
            }
        }
        queue.extend(writers);
    }
}

/// A program's stdin, read on its behalf: when what it brings raises the
/// program's label, the readers of its files follow before it gets the bytes.
pub(crate) struct RaisingReader<R> {
    inner: R,
    cell: LabelCell,
}

impl<R> RaisingReader<R> {
    /// `inner` joins what it reads into `cell`.
    pub(crate) fn new(inner: R, cell: LabelCell) -> Self {
        RaisingReader { inner, cell }
    }
}

impl<R: std::io::Read> std::io::Read for RaisingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let before = self.cell.get();
        let n = self.inner.read(buf)?;
        if n > 0 && !self.cell.get().flows_to(&before) {
            raised(&self.cell);
        }
        Ok(n)
    }
}

/// What running sandboxed programs may have written to `path` (`real`: its
/// resolved form, when known); empty when none may write there.
pub(crate) fn label_of(path: &Path, real: Option<&Path>) -> Label {
    let me = READER.with(|r| r.borrow().clone());
    writers_label(path, real, me.as_ref())
}

fn writers_label(path: &Path, real: Option<&Path>, me: Option<&LabelCell>) -> Label {
    let registry = lock(&REGISTRY);
    if registry.writers.is_empty() {
        return Label::empty();
    }
    let writers: Vec<Arc<Writer>> = registry
        .writers
        .iter()
        .filter(|w| !me.is_some_and(|c| c.same(&w.cell)))
        .filter(|w| w.holds(path) || real.is_some_and(|r| w.holds(r)))
        .cloned()
        .collect();
    drop(registry);
    writers
        .iter()
        .fold(Label::empty(), |l, w| l.join(&w.label()))
}

/// A command's registration as a reader: it ends when this is dropped.
pub(crate) struct Reading(Arc<Reader>);

impl Drop for Reading {
    fn drop(&mut self) {
        lock(&REGISTRY).readers.retain(|r| !Arc::ptr_eq(r, &self.0));
    }
}

/// Registers a command whose output label lives in `cell` as a reader.
pub(crate) fn reader(cell: LabelCell) -> Reading {
    let r = Arc::new(Reader {
        cell,
        paths: Mutex::new(Vec::new()),
    });
    lock(&REGISTRY).readers.push(r.clone());
    Reading(r)
}

impl Reading {
    /// Notes that the command opens `path` (`real`: resolved) and returns
    /// what the writers that may be writing it hold now (the command's own
    /// writer left out). Noted first: a writer registering meanwhile finds it.
    pub(crate) fn read(&self, path: &Path, real: Option<&Path>) -> Label {
        {
            let mut paths = lock(&self.0.paths);
            paths.push(path.to_path_buf());
            if let Some(r) = real.filter(|r| *r != path) {
                paths.push(r.to_path_buf());
            }
        }
        writers_label(path, real, Some(&self.0.cell))
    }
}
