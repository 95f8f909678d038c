//! What an external program reads by itself (issue 14, channel 4).
//!
//! A program's outputs carry what it was handed (argv, named files, stdin, the PC)
//! *and* what it read on its own: the sandbox reports every file its tree opens for
//! reading, renames, links or executes, before the kernel does it
//! (`safesh_sandbox::Observer`, seccomp user notification). [`ReadLabels`] looks each
//! distinct file up once (`Flow::file_label`) and joins a label that says something
//! (secret or untrusted) into the run's output cell right away, so every byte the
//! program prints after the read carries it; after the run the same label goes to
//! the files it wrote and to its exit status (`external.rs`).
//!
//! Executing a file is reading it as code: an untrusted file the program `execve`s
//! passes the exec commit point; refused, the `execve` fails with `EACCES` and the
//! refusal stops the script after the program ends.
//!
//! Not observable (an old kernel, a failed notifier, a path that cannot be
//! resolved): the CFC seed's conservative taint — every confidential file visible to
//! the program, and "untrusted" — never "read nothing".

use crate::approval::ApprovalChannel;
use crate::error::Refusal;
use crate::flow::{Asker, Flow};
use crate::io::{LabelCell, lock};
use safesh_label::Label;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The run's record of what it read, and the gate for what it executes.
pub(crate) struct ReadLabels {
    flow: Arc<Flow>,
    /// The shell's shared state: labels of its own temp files (`<(…)`).
    shared: Arc<crate::interp::Shared>,
    /// `(canonical, as the shell names it)` for each root where labels can exist.
    roots: Vec<(PathBuf, PathBuf)>,
    /// The label of the program's output, joined as reads are reported.
    cell: LabelCell,
    /// Its registration as a reader of the files it opens: a program that
    /// starts writing one of them later raises `cell` (`running_writers.rs`).
    reading: crate::running_writers::Reading,
    /// What a connection through the egress proxy brings (downloaded text);
    /// `None` when the command's own hosts are endorsed.
    fetch: Option<Label>,
    state: Mutex<State>,
    /// The conservative taint, computed on the first unknown read.
    conservative: OnceLock<Label>,
    /// Confidential files hidden from the program (they read as empty).
    hidden: Vec<PathBuf>,
    gate: ExecGate,
    /// The program's own execve (decided before it started) was seen.
    started: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct State {
    /// Label of each distinct file reported (looked up once).
    seen: HashMap<PathBuf, Label>,
    /// The join of everything read that says something.
    read: Label,
    /// A read could not be observed.
    unknown: bool,
    /// It renamed a directory (its files got new names: see `record_external_writes`).
    moved_dirs: bool,
}

/// Most entries looked at beneath a renamed directory (past it: conservative taint).
const MOVED_DIR_LIMIT: usize = 10_000;

/// What is needed to decide an exec commit point off the shell's thread.
pub(crate) struct ExecGate {
    pub(crate) pc: Label,
    pub(crate) command: String,
    /// The program itself (canonical): its exec was decided before it started.
    pub(crate) program: PathBuf,
    /// The hosts it can reach (`*`: any); empty: none.
    pub(crate) hosts: Vec<String>,
    pub(crate) approver: Option<Arc<dyn ApprovalChannel>>,
    pub(crate) cancel: Arc<crate::interp::Cancel>,
    /// The working directory the approvals are scoped to.
    pub(crate) scope: String,
    /// The first refusal, raised once the program is done.
    pub(crate) refused: Arc<Mutex<Option<Refusal>>>,
}

impl ReadLabels {
    /// A record for one run: `roots` as the shell names them (cwd, read and write
    /// roots, the temp dir), `cell` the output label.
    pub(crate) fn new(
        flow: Arc<Flow>,
        shared: Arc<crate::interp::Shared>,
        roots: &[PathBuf],
        cell: LabelCell,
        hidden: &[PathBuf],
        gate: ExecGate,
        fetch: Option<Label>,
    ) -> ReadLabels {
        let mut pairs: Vec<(PathBuf, PathBuf)> = roots
            .iter()
            .map(|r| {
                (
                    std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()),
                    r.clone(),
                )
            })
            .collect();
        pairs.sort();
        pairs.dedup();
        let hidden = hidden
            .iter()
            .map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()))
            .collect();
        ReadLabels {
            flow,
            shared,
            roots: pairs,
            reading: crate::running_writers::reader(cell.clone()),
            fetch,
            cell,
            state: Mutex::new(State::default()),
            conservative: OnceLock::new(),
            hidden,
            gate,
            started: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether it renamed a directory holding files.
    pub(crate) fn moved_dirs(&self) -> bool {
        lock(&self.state).moved_dirs
    }

    /// A directory about to be renamed: the labels of every file beneath it
    /// (their bytes get new names), bounded.
    fn moving(&self, dir: &Path) -> Label {
        let mut label = Label::empty();
        let mut stack = vec![dir.to_path_buf()];
        let mut seen = 0usize;
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > MOVED_DIR_LIMIT {
                    return label.join(&self.conservative());
                }
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(t) if t.is_file() => {
                        let l = self.lookup(&e.path()).unwrap_or_default();
                        if says_something(&l) {
                            label.join_assign(&l);
                        }
                    }
                    _ => {}
                }
            }
        }
        label
    }

    /// The refusal of an exec it attempted, if any.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        lock(&self.gate.refused).take()
    }

    /// The label of the file at `path` (canonical): the store knows files by the
    /// name the shell used, which may go through a symlinked root. `None` outside
    /// every root: no label can exist there (system files).
    fn lookup(&self, path: &Path) -> Option<Label> {
        let l = crate::running_writers::as_writer(&self.cell, || self.lookup_in_roots(path))?;
        // Noted as read: a program that starts writing it later raises the cell.
        Some(l.join(&self.reading.read(path, Some(path))))
    }

    /// Joins `l` into the output label; programs reading files this one may
    /// be writing follow it up before its read proceeds.
    fn join_cell(&self, l: &Label) {
        self.cell.join(l);
        crate::running_writers::raised(&self.cell);
    }

    fn lookup_in_roots(&self, path: &Path) -> Option<Label> {
        let (canon, named) = self.roots.iter().find(|(c, _)| path.starts_with(c))?;
        let mut l = self.flow.file_label(path, Some(path));
        if let Some(t) = lock(&self.shared.temp_labels).get(path) {
            l = l.join(t);
        }
        if canon != named
            && let Ok(rest) = path.strip_prefix(canon)
        {
            let alias = named.join(rest);
            l = l.join(&self.flow.file_label(&alias, Some(path)));
        }
        Some(l)
    }

    /// Every confidential file visible to the program, and "untrusted": what it
    /// may have read when its reads are not known.
    fn conservative(&self) -> Label {
        self.conservative
            .get_or_init(|| {
                let roots: Vec<PathBuf> = self.roots.iter().map(|(c, _)| c.clone()).collect();
                let unobserved = Label::from_network("an unobserved read");
                // The store cannot say which files are confidential: any may be.
                let Ok((files, _)) = self.flow.confidential_files(&roots) else {
                    return unobserved.join(&Label::secret("secret"));
                };
                files
                    .iter()
                    .filter(|f| !self.hidden.contains(f))
                    .fold(unobserved, |l, f| l.join(&self.flow.file_label(f, None)))
            })
            .clone()
    }

    /// A program that can reach the network opens a confidential file: the
    /// network commit point for each host, before it holds a byte (refused: the
    /// open fails with `EACCES`).
    fn send_refused(&self, path: &Path, label: &Label) -> bool {
        use safesh_flow::{CommitPoint, CommitRequest};
        if label.confidentiality.is_public() {
            return false;
        }
        for host in &self.gate.hosts {
            let req = CommitRequest {
                point: CommitPoint::Network { host: host.clone() },
                data: label.clone(),
                pc: self.gate.pc.clone(),
                command: self.gate.command.clone(),
            };
            if let Err(r) = self.decide(req, &format!("{host} ({})", path.display())) {
                self.refuse(r);
                return true;
            }
        }
        false
    }

    fn decide(
        &self,
        req: safesh_flow::CommitRequest,
        target: &str,
    ) -> Result<Option<String>, Refusal> {
        let stop = || self.gate.cancel.is_cancelled();
        let asker = Asker {
            channel: self.gate.approver.as_deref(),
            stop: &stop,
            scope: &self.gate.scope,
        };
        self.flow.decide(req, target, &asker)
    }

    fn refuse(&self, r: Refusal) {
        let mut slot = lock(&self.gate.refused);
        if slot.is_none() {
            *slot = Some(r);
        }
    }

    fn exec_refused(&self, path: &Path, label: &Label) -> bool {
        use safesh_flow::{CommitPoint, CommitRequest, ExecKind};
        if safesh_flow::trust::is_trusted(label) || path == self.gate.program {
            return false;
        }
        let req = CommitRequest {
            point: CommitPoint::Exec {
                what: ExecKind::ScriptFile,
            },
            data: label.clone(),
            pc: self.gate.pc.clone(),
            command: self.gate.command.clone(),
        };
        match self.decide(req, &path.display().to_string()) {
            Ok(_) => false,
            Err(r) => {
                self.refuse(r);
                true
            }
        }
    }
}

/// A label worth carrying: secret, or not to be trusted.
fn says_something(l: &Label) -> bool {
    !l.confidentiality.is_public() || !safesh_flow::trust::is_trusted(l)
}

impl safesh_sandbox::Observer for ReadLabels {
    fn fetched(&self, _what: &str) {
        // The files it writes from now on may hold downloaded text: readers of
        // them follow before the first byte arrives.
        if let Some(l) = &self.fetch {
            crate::running_writers::fetched(&self.cell, l);
        }
    }

    fn access(&self, a: safesh_sandbox::Access<'_>) -> bool {
        let Some(path) = a.path else {
            let taint = self.conservative();
            let mut st = lock(&self.state);
            st.unknown = true;
            st.read.join_assign(&taint);
            drop(st);
            self.join_cell(&taint);
            return true;
        };
        if a.kind == safesh_sandbox::AccessKind::MoveDir {
            let l = self.moving(path);
            let mut st = lock(&self.state);
            st.moved_dirs = true;
            st.read.join_assign(&l);
            drop(st);
            self.join_cell(&l);
            return true;
        }
        // The loader as a program runs what the exec allowlist forbids; the
        // sandbox refuses the exec whatever is answered here: say why.
        if a.kind == safesh_sandbox::AccessKind::Exec && safesh_sandbox::is_loader(path) {
            self.refuse(
                Refusal::new(
                    crate::error::ErrorCode::Blocked,
                    format!(
                        "a program tried to start the dynamic loader {}: it would run programs that are not allowed",
                        path.display()
                    ),
                )
                .rule("blocklist.loader")
                .suggest("run the program itself; it must be allowed in safesh.toml"),
            );
            return false;
        }
        let cached = lock(&self.state).seen.get(path).cloned();
        let label = match cached {
            Some(l) => l,
            None => {
                let l = self.lookup(path).unwrap_or_default();
                // Decided before it is read (once per file: a refusal stops the
                // script anyway).
                if self.send_refused(path, &l) {
                    return false;
                }
                let mut st = lock(&self.state);
                if says_something(&l) {
                    st.read.join_assign(&l);
                }
                st.seen.insert(path.to_path_buf(), l.clone());
                drop(st);
                if says_something(&l) {
                    self.join_cell(&l);
                }
                l
            }
        };
        if a.kind != safesh_sandbox::AccessKind::Exec {
            return true;
        }
        // The first exec is the program safesh started: decided already.
        if path == self.gate.program
            && !self.started.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return true;
        }
        !(self.exec_refused(path, &label) || self.script_refused(path, a.argv, a.cwd))
    }
}

impl ReadLabels {
    /// An interpreter started inside the run: its script files and local modules
    /// are code, as for an interpreter safesh starts itself (`commit_external`).
    /// The ELF loader counts (`ld.so ./prog` runs `prog` without executing it).
    fn script_refused(&self, program: &Path, argv: &[String], cwd: Option<&Path>) -> bool {
        let name = program.to_string_lossy();
        let loader = program
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("ld-") || n == "ld.so");
        if !loader
            && !crate::flow::is_interpreter(&name)
            && !argv.first().is_some_and(|a| crate::flow::is_interpreter(a))
        {
            return false;
        }
        let Some(cwd) = cwd else {
            return false;
        };
        let mut files: Vec<PathBuf> = argv
            .iter()
            .skip(1)
            .map(|a| cwd.join(a))
            .filter(|p| p.is_file())
            .collect();
        files.extend(crate::python_cmdline::python_code_files(argv, cwd));
        files.iter().any(|f| {
            let real = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
            let label = self.lookup(&real).unwrap_or_default();
            says_something(&label) && {
                let mut st = lock(&self.state);
                st.read.join_assign(&label);
                drop(st);
                self.join_cell(&label);
                self.exec_refused(&real, &label)
            }
        })
    }
}
