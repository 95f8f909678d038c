//! The script's descriptors by name. In a script `/dev/stdin`, `/dev/stdout`,
//! `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` (or any symlink resolving to
//! one) name the SCRIPT's descriptors — the shell's fd table, as in bash — never
//! the process's own (in `safesh mcp`/`rpc` fds 0 and 1 are the protocol, and the
//! label store and audit log are open too). Every open by a redirection, a
//! builtin or an in-process utility asks [`Shell::descriptor_path`] first; a
//! descriptor name is then served from the fd table and never opened by name,
//! and the path checks ([`Shell::check_read_resolved`], [`Shell::check_write_path`])
//! refuse it to anything that would open it by name.

use crate::error::{ErrorCode, Refusal};
use crate::interp::{Fd, Shell};
use crate::io::{Input, LabelCell, Output};
use safesh_policy::paths::{self, ProcessPath};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

impl Shell {
    /// What `path` (relative to the cwd) names when it leads into the process:
    /// one of the script's descriptors, or (refused) the rest of `/proc/self`.
    pub(crate) fn descriptor_path(&self, path: &Path) -> Option<ProcessPath> {
        paths::process_path(&self.cwd, path)
    }

    /// The script's descriptor `n` opened for output (`> /dev/fd/n`) or input.
    /// A descriptor the script has not opened is "No such file or directory"
    /// (bash's wording, from the kernel's `/proc/self/fd`); one open the other
    /// way is "Bad file descriptor".
    pub(crate) fn script_fd(&self, n: i32, output: bool) -> io::Result<Fd> {
        match (self.fds.get(&n), output) {
            (Some(fd @ Fd::Out(_)), true) | (Some(fd @ Fd::In(_)), false) => Ok(fd.clone()),
            (Some(_), _) => Err(io::Error::from_raw_os_error(libc::EBADF)),
            (None, _) => Err(io::Error::from_raw_os_error(libc::ENOENT)),
        }
    }

    /// The script's input named by `name` (`/dev/stdin`, `/dev/fd/3`), when it is
    /// one: `None` for an ordinary path; a path elsewhere into the process is
    /// refused.
    pub(crate) fn descriptor_input(
        &self,
        name: &Path,
    ) -> Option<Result<io::Result<Input>, Refusal>> {
        match self.descriptor_path(name)? {
            ProcessPath::Descriptor(n) => Some(Ok(self.script_fd(n, false).map(|fd| match fd {
                Fd::In(i) => i,
                // (script_fd gives an input for `output == false`.)
                Fd::Out(_) => crate::io::Source::empty(),
            }))),
            ProcessPath::OwnProcess => Some(Err(own_process_refusal(name))),
        }
    }
}

/// The refusal for a path into `/proc/self` that is not a descriptor name.
pub(crate) fn own_process_refusal(path: &Path) -> Refusal {
    match safesh_policy::own::process_path_verdict(path, ProcessPath::OwnProcess) {
        Err(r) => r,
        Ok(()) => Refusal::new(ErrorCode::PathViolation, "safesh's own process"),
    }
}

/// The refusal for a descriptor name reaching code that would open it by name:
/// the kernel would give the process's own descriptor, not the script's.
pub(crate) fn by_name_refusal(path: &Path, n: i32) -> Refusal {
    let mut r = Refusal::new(
        ErrorCode::PathViolation,
        format!(
            "{} names the script's descriptor {n}, which this command cannot open by name",
            path.display()
        ),
    )
    .rule("paths.process")
    .suggest("use a redirection instead (`cmd < /dev/fd/N`, `cmd > /dev/stderr`) or a pipe");
    r.details.path = Some(path.display().to_string());
    r
}

/// A file a utility writes that lands in `sink`: the write end of an OS pipe
/// whose bytes a thread forwards as chunks labeled with `cell` (the utility's
/// label at the time: its arguments, the PC and everything it read). Join the
/// handle once the utility has closed the file, before the next command runs.
pub(crate) fn pump_out(
    sink: Output,
    cell: LabelCell,
) -> io::Result<(File, std::thread::JoinHandle<()>)> {
    let (mut r, w) = io::pipe()?;
    let h = std::thread::Builder::new()
        .name("safesh-fd-out".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match r.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let data = buf.get(..n).unwrap_or(&[]);
                        // A closed reader or a spent budget: the utility sees a
                        // broken pipe once this end is gone.
                        if sink.write_chunk(data, &cell.get()).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })?;
    Ok((File::from(OwnedFd::from(w)), h))
}

/// A file a utility reads that comes from `src`: the read end of an OS pipe a
/// thread fills from the script's input, joining each chunk's label into `cell`
/// before the utility can read it. The thread ends at the input's end or when
/// the utility closes the file (it is not waited for: an input may never end).
pub(crate) fn pump_in(src: Input, cell: LabelCell) -> io::Result<File> {
    let (r, mut w) = io::pipe()?;
    std::thread::Builder::new()
        .name("safesh-fd-in".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match src.read_labeled(&mut buf) {
                    Ok((0, _)) | Err(_) => break,
                    Ok((n, label)) => {
                        cell.join(&label);
                        if w.write_all(buf.get(..n).unwrap_or(&[])).is_err() {
                            break;
                        }
                    }
                }
            }
        })?;
    Ok(File::from(OwnedFd::from(r)))
}
