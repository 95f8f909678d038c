//! Redirections: files, descriptors, here-documents and here-strings.

use super::{Exec, Fd, Shell, Stop};
use crate::io::{Sink, SinkKind, Source, SourceKind};
use safesh_label::Label;
use safesh_syntax::ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};

/// Why a redirection could not be set up (the command then fails with status 1).
pub(crate) struct RedirectFailed;

impl Shell {
    /// Runs `f` with `redirects` applied to this shell's fds, restoring them after.
    pub(crate) fn with_redirects(
        &mut self,
        redirects: &[R],
        f: impl FnOnce(&mut Shell) -> Exec,
    ) -> Exec {
        if redirects.is_empty() {
            // (`exec` alone asks to keep redirections: there are none here.)
            let r = f(self);
            self.keep_redirects = false;
            return r;
        }
        let saved = self.fds.clone();
        let temps = self.temp_files.len();
        let r = self.with_redirects_inner(redirects, saved, f);
        self.remove_temp_files(temps);
        r
    }

    fn with_redirects_inner(
        &mut self,
        redirects: &[R],
        saved: std::collections::HashMap<i32, Fd>,
        f: impl FnOnce(&mut Shell) -> Exec,
    ) -> Exec {
        self.fd_moves.clear();
        match self.apply_redirects(redirects) {
            Ok(Ok(())) => {}
            Ok(Err(RedirectFailed)) => {
                self.fds = saved;
                self.set_status(1);
                return Ok(());
            }
            Err(e) => {
                self.fds = saved;
                return Err(e);
            }
        }
        let moves = std::mem::take(&mut self.fd_moves);
        let outside = std::mem::replace(&mut self.redirect_outside, false);
        let r = f(self);
        if self.keep_redirects {
            self.keep_redirects = false;
        } else {
            // bash's undo list after a builtin, function or compound command
            // with `N>&M-` where N was closed: N is closed again, M stays closed.
            let lost: Vec<i32> = moves
                .iter()
                .filter(|(to, _)| !outside && !saved.contains_key(to))
                .map(|&(_, from)| from)
                .collect();
            self.fds = saved;
            for fd in lost {
                self.fds.remove(&fd);
            }
        }
        // A redirected file whose label the store could not keep: the bytes were
        // not written, and the script stops here with the store's refusal.
        if r.is_ok()
            && let Some(refusal) = self.take_store_refusal()
        {
            return Err(refusal.into());
        }
        r
    }

    /// The label store's refusal raised by a file sink, if any.
    fn take_store_refusal(&self) -> Option<crate::error::Refusal> {
        let mut slot = crate::io::lock(&self.shared.refusal);
        if slot.as_ref()?.details.rule.as_deref() == Some("labels.store") {
            slot.take()
        } else {
            None
        }
    }

    /// Applies redirections permanently (`exec >file`), or to a command about to run.
    pub(crate) fn apply_redirects(
        &mut self,
        redirects: &[R],
    ) -> Result<Result<(), RedirectFailed>, Stop> {
        for r in redirects {
            if let Err(RedirectFailed) = self.apply_one(r)? {
                return Ok(Err(RedirectFailed));
            }
        }
        Ok(Ok(()))
    }

    fn redirect_target(
        &mut self,
        w: &safesh_syntax::ast::Word,
    ) -> Result<Result<(String, Label), RedirectFailed>, Stop> {
        let fields = self.expand_word_fields(w)?;
        if fields.len() != 1 {
            self.diag(format!("{}: ambiguous redirect", w.value));
            return Ok(Err(RedirectFailed));
        }
        let f = fields
            .into_iter()
            .next()
            .map(|f| (f.text, f.label))
            .unwrap_or_default();
        Ok(Ok(f))
    }

    /// True when `path` (with no `..`) is `/` or a directory that holds a read
    /// root: a directory, by the config alone.
    pub(crate) fn above_a_root(&self, path: &std::path::Path) -> bool {
        if path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return false;
        }
        let dir = safesh_utils::beneath::lexical(path);
        if dir.as_os_str() == "/" {
            return true;
        }
        self.shared.policy.as_ref().is_some_and(|p| {
            p.read_roots()
                .iter()
                .any(|root| root != &dir && root.starts_with(&dir))
        })
    }

    fn open_output(
        &mut self,
        name: &str,
        name_label: &Label,
        append: bool,
        clobber: bool,
    ) -> Result<Result<Fd, RedirectFailed>, Stop> {
        if name == "/dev/null" {
            return Ok(Ok(Fd::Out(Sink::new(SinkKind::Null))));
        }
        let path = self.cwd.join(safesh_utils::word_bytes::word_to_path(name));
        if let Some(r) = self.open_descriptor(name, &path, true)? {
            return Ok(r);
        }
        if let Err(r) = self.check_write_path(&path) {
            // `/` or another directory on the way to a root (`2> /`): known to be
            // a directory whatever is on disk, so bash's answer tells nothing.
            if self.above_a_root(&path) {
                self.diag(format!("{name}: Is a directory"));
                return Ok(Err(RedirectFailed));
            }
            return Err(r.into());
        }
        // (Is there a file? Decided on the entry reached, as the open below:
        // a symlink flipped outside must not answer about an outside file.)
        if self.opts.noclobber
            && !append
            && !clobber
            && safesh_utils::beneath::metadata(&path, true, |real| {
                self.check_write_path(real)
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::PermissionDenied))
            })
            .is_ok_and(|m| m.is_file())
        {
            self.diag(format!("{name}: cannot overwrite existing file"));
            return Ok(Err(RedirectFailed));
        }
        // Truncated only once the file opened is decided (below): a second
        // name of a protected file must not lose its content to a refusal.
        let flags = libc::O_WRONLY | libc::O_CREAT | if append { libc::O_APPEND } else { 0 };
        // A file this redirection creates is named by its word (`> "$n"`).
        let creates = crate::names::worth_labeling(&name_label.join(&self.pc))
            && path.symlink_metadata().is_err();
        // Open what was checked: the walk reaches the file without the kernel
        // following any symlink, and when the file is another than the name
        // says (a symlink on the way, maybe flipped since the check), its own
        // canonical path is checked before anything is opened or truncated.
        // The label is recorded (for the file reached) before it is opened, and
        // raised before each chunk that carries more: a kill mid-write never
        // leaves it unlabeled.
        let mut refused = None;
        let mut record = None;
        let opened = safesh_utils::open::open_resolved(&path, flags, 0o666, |real| {
            self.check_write_path(real).map_err(|r| {
                refused = Some(r);
                std::io::Error::from(std::io::ErrorKind::PermissionDenied)
            })
        })
        .and_then(|(f, real)| {
            // A file with more than one name: decided by its inode (a hard
            // link to a protected file is that file).
            {
                use std::os::unix::fs::MetadataExt;
                let m = f.metadata()?;
                if m.is_file()
                    && m.nlink() > 1
                    && let Some(p) = &self.shared.policy
                    && let Err(r) = p.check_linked(&path, m.dev(), m.ino())
                {
                    refused = Some(r);
                    return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
                }
                if !append && m.is_file() {
                    f.set_len(0)?;
                }
            }
            // The file opened is named by the walk: the record follows it.
            if let Some(flow) = self.shared.flow.clone() {
                match crate::io::FileRecord::open(real, append, flow, self.shared.clone(), &self.pc)
                {
                    Ok(r) => record = Some(r),
                    Err(r) => {
                        refused = Some(r);
                        return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
                    }
                }
            }
            Ok(f)
        });
        if let Some(r) = refused {
            return Err(r.into());
        }
        match opened {
            Ok(f) => {
                if creates {
                    self.record_name(&path, &name_label.join(&self.pc));
                }
                let limit = self.file_limit().map(|l| (l, append));
                Ok(Ok(Fd::Out(Sink::recorded_file(f, record, limit))))
            }
            Err(e) => {
                self.diag(format!("{name}: {}", safesh_utils::io_error_text(&e)));
                Ok(Err(RedirectFailed))
            }
        }
    }

    fn open_input(&mut self, name: &str) -> Result<Result<Fd, RedirectFailed>, Stop> {
        if name == "/dev/null" {
            return Ok(Ok(Fd::In(Source::empty())));
        }
        let path = self.cwd.join(safesh_utils::word_bytes::word_to_path(name));
        if let Some(r) = self.open_descriptor(name, &path, false)? {
            return Ok(r);
        }
        let real = self.check_read_resolved(&path)?;
        // Noted as read before it is opened and labeled: a sandboxed program
        // that writes it meanwhile (a FIFO, a background job's file) raises it.
        let cell = crate::io::LabelCell::new(Label::empty());
        let reading = crate::running_writers::reader(cell.clone());
        cell.join(&reading.read(&path, real.as_deref()));
        // Open what was checked: when the file reached is another than the name
        // says (a symlink on the way, maybe flipped since the check), its own
        // canonical path is checked too, and it is what is labeled.
        let mut refused = None;
        let opened = safesh_utils::open::open_resolved(&path, libc::O_RDONLY, 0, |other| {
            self.check_read_path(other).map_err(|r| {
                refused = Some(r);
                std::io::Error::from(std::io::ErrorKind::PermissionDenied)
            })
        });
        if let Some(r) = refused {
            return Err(r.into());
        }
        match opened {
            Ok((f, opened_real)) => {
                if f.metadata().is_ok_and(|m| m.is_dir()) {
                    self.diag(format!("{name}: Is a directory"));
                    return Ok(Err(RedirectFailed));
                }
                // Fail closed: a file whose recorded label cannot be asked is not read.
                let mut label = self.file_label_checked(&path, real.as_deref())?;
                if real.as_deref() != Some(opened_real.as_path()) {
                    cell.join(&reading.read(&opened_real, Some(&opened_real)));
                    let other = self.file_label_checked(&opened_real, Some(&opened_real))?;
                    label = label.join(&other);
                }
                cell.join(&label);
                Ok(Ok(Fd::In(Source::following(
                    SourceKind::Reader(Box::new(f)),
                    (cell, reading),
                ))))
            }
            Err(e) => {
                self.diag(format!("{name}: {}", safesh_utils::io_error_text(&e)));
                Ok(Err(RedirectFailed))
            }
        }
    }

    /// `> /dev/stderr`, `< /dev/fd/3`, `> /proc/self/fd/1` (or a symlink to
    /// one): the script's own descriptor, never the process's. `None` for an
    /// ordinary path.
    fn open_descriptor(
        &mut self,
        name: &str,
        path: &std::path::Path,
        output: bool,
    ) -> Result<Option<Result<Fd, RedirectFailed>>, Stop> {
        use safesh_policy::paths::ProcessPath;
        match self.descriptor_path(path) {
            None => Ok(None),
            Some(ProcessPath::OwnProcess) => {
                Err(crate::fdpath::own_process_refusal(std::path::Path::new(name)).into())
            }
            Some(ProcessPath::Descriptor(n)) => match self.script_fd(n, output) {
                Ok(fd) => Ok(Some(Ok(fd))),
                Err(e) => {
                    self.diag(format!("{name}: {}", safesh_utils::io_error_text(&e)));
                    Ok(Some(Err(RedirectFailed)))
                }
            },
        }
    }

    fn dup_fd(
        &mut self,
        to: i32,
        from_word: &str,
        word_label: &Label,
        output: bool,
    ) -> Result<Result<(), RedirectFailed>, Stop> {
        if from_word == "-" {
            self.fds.remove(&to);
            return Ok(Ok(()));
        }
        let (num, close) = match from_word.strip_suffix('-') {
            Some(n) => (n, true),
            None => (from_word, false),
        };
        match num.parse::<i32>() {
            Ok(n) => match self.fds.get(&n).cloned() {
                Some(fd) => {
                    self.fds.insert(to, fd);
                    if close {
                        self.fds.remove(&n);
                        self.fd_moves.push((to, n));
                    }
                    Ok(Ok(()))
                }
                None => {
                    self.diag(format!("{n}: Bad file descriptor"));
                    Ok(Err(RedirectFailed))
                }
            },
            Err(_) if output => {
                // `>&file` means `&>file`.
                match self.open_output(from_word, word_label, false, false)? {
                    Ok(fd) => {
                        self.fds.insert(1, fd.clone());
                        self.fds.insert(2, fd);
                        Ok(Ok(()))
                    }
                    Err(e) => Ok(Err(e)),
                }
            }
            Err(_) => {
                self.diag(format!("{from_word}: ambiguous redirect"));
                Ok(Err(RedirectFailed))
            }
        }
    }

    fn apply_one(&mut self, r: &R) -> Result<Result<(), RedirectFailed>, Stop> {
        match r {
            R::File(fd, kind, target) => {
                let output = matches!(kind, K::Write | K::Append | K::Clobber | K::DuplicateOutput);
                let to = fd.unwrap_or(if output { 1 } else { 0 });
                match (kind, target) {
                    (K::DuplicateOutput | K::DuplicateInput, T::Fd(n)) => {
                        self.dup_fd(to, &n.to_string(), &Label::agent(), output)
                    }
                    (K::DuplicateOutput | K::DuplicateInput, T::Duplicate(w))
                    | (K::DuplicateOutput | K::DuplicateInput, T::Filename(w)) => {
                        let (name, name_label) = match self.redirect_target(w)? {
                            Ok(t) => t,
                            Err(e) => return Ok(Err(e)),
                        };
                        self.dup_fd(to, &name, &name_label, output)
                    }
                    (_, T::Filename(w)) | (_, T::Duplicate(w)) => {
                        let (name, target_label) = match self.redirect_target(w)? {
                            Ok(t) => t,
                            Err(e) => return Ok(Err(e)),
                        };
                        if !matches!(kind, K::Read | K::ReadAndWrite | K::Append) {
                            self.commit_overwrite(&name, &target_label)?;
                        }
                        let opened = match kind {
                            K::Read | K::ReadAndWrite => self.open_input(&name)?,
                            K::Append => self.open_output(&name, &target_label, true, false)?,
                            K::Clobber => self.open_output(&name, &target_label, false, true)?,
                            _ => self.open_output(&name, &target_label, false, false)?,
                        };
                        match opened {
                            Ok(fdv) => {
                                self.fds.insert(to, fdv);
                                Ok(Ok(()))
                            }
                            Err(e) => Ok(Err(e)),
                        }
                    }
                    (_, T::Fd(n)) => self.dup_fd(to, &n.to_string(), &Label::agent(), output),
                    (_, T::ProcessSubstitution(_, sub)) => {
                        let f = self.process_substitution(sub)?;
                        match self.open_input(&f.text)? {
                            Ok(fdv) => {
                                self.fds.insert(to, fdv);
                                Ok(Ok(()))
                            }
                            Err(e) => Ok(Err(e)),
                        }
                    }
                }
            }
            R::HereDocument(fd, doc) => {
                let (text, label) = if doc.requires_expansion {
                    let f = self.expand_heredoc(&doc.doc.value)?;
                    (f.text, f.label)
                } else {
                    (doc.doc.value.clone(), self.code_label.clone())
                };
                self.fds.insert(
                    fd.unwrap_or(0),
                    Fd::In(Source::bytes(
                        safesh_utils::word_bytes::word_to_bytes(&text).into_owned(),
                        label,
                    )),
                );
                Ok(Ok(()))
            }
            R::HereString(fd, w) => {
                let f = self.expand_word_single(w)?;
                let mut data = safesh_utils::word_bytes::word_to_bytes(&f.text).into_owned();
                data.push(b'\n');
                self.fds
                    .insert(fd.unwrap_or(0), Fd::In(Source::bytes(data, f.label)));
                Ok(Ok(()))
            }
            R::OutputAndError(w, append) => {
                let (name, target_label) = match self.redirect_target(w)? {
                    Ok(t) => t,
                    Err(e) => return Ok(Err(e)),
                };
                if !append {
                    self.commit_overwrite(&name, &target_label)?;
                }
                match self.open_output(&name, &target_label, *append, false)? {
                    Ok(fdv) => {
                        self.fds.insert(1, fdv.clone());
                        self.fds.insert(2, fdv);
                        Ok(Ok(()))
                    }
                    Err(e) => Ok(Err(e)),
                }
            }
        }
    }
}
