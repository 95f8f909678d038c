//! Output: stdout buffering, `>`/`>>` redirections, close and fflush.

use crate::ast::Redirect;
use crate::interp::{Ctl, Interp, Res};
use safesh_utils::WriteMode;
use std::io::{BufWriter, Write};

/// An open output stream.
pub(crate) enum OutFile {
    File(BufWriter<safesh_utils::WriteFile>),
    Stdout,
    Stderr,
}

impl Interp<'_, '_> {
    pub(crate) fn flush_stdout(&mut self) -> Res<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let r = self
            .ctx
            .stdout
            .write_all(&self.out)
            .and_then(|_| self.ctx.stdout.flush());
        self.out.clear();
        match r {
            Ok(()) => Ok(()),
            Err(e) => Err(Ctl::Quiet(self.ctx.write_failed(&e))),
        }
    }

    pub(crate) fn write_stdout(&mut self, data: &[u8]) -> Res<()> {
        self.out.extend_from_slice(data);
        if self.out.len() >= 64 * 1024 {
            self.flush_stdout()?;
        }
        Ok(())
    }

    /// Writes to stdout or a redirection target.
    pub(crate) fn emit(&mut self, redir: Option<&Redirect>, data: &[u8]) -> Res<()> {
        let Some(r) = redir else {
            return self.write_stdout(data);
        };
        let (e, mode) = match r {
            Redirect::Truncate(e) => (e, WriteMode::Truncate),
            Redirect::Append(e) => (e, WriteMode::Append),
        };
        let name = self.eval_str(e)?.to_vec();
        if !self.files.contains_key(&name) {
            let f = match &name[..] {
                b"/dev/stdout" | b"-" => OutFile::Stdout,
                b"/dev/stderr" => OutFile::Stderr,
                _ => {
                    let path = String::from_utf8_lossy(&name).into_owned();
                    match self.ctx.create(&path, mode) {
                        Ok(f) => OutFile::File(BufWriter::new(f)),
                        Err(_) => {
                            return Err(Ctl::Err(format!("cannot open \"{path}\" for output")));
                        }
                    }
                }
            };
            self.files.insert(name.clone(), f);
        }
        let r = match self.files.get_mut(&name) {
            Some(OutFile::Stdout) | None => return self.write_stdout(data),
            Some(OutFile::Stderr) => {
                self.flush_stdout()?;
                self.ctx.stderr.write_all(data)
            }
            Some(OutFile::File(f)) => f.write_all(data),
        };
        r.map_err(|e| {
            Ctl::Err(format!(
                "write failure ({})",
                safesh_utils::io_error_text(&e)
            ))
        })
    }

    /// Closes an output or input stream by name; 0 on success, -1 if unknown.
    pub(crate) fn close_stream(&mut self, name: &[u8]) -> Res<f64> {
        let mut found = false;
        if let Some(f) = self.files.remove(name) {
            found = true;
            match f {
                OutFile::File(mut w) => {
                    let _ = w.flush();
                }
                OutFile::Stdout => self.flush_stdout()?,
                OutFile::Stderr => {}
            }
        }
        if self.readers.remove(name).is_some() {
            found = true;
        }
        Ok(if found { 0.0 } else { -1.0 })
    }

    /// Flushes all output streams.
    pub(crate) fn flush_all(&mut self) -> Res<()> {
        self.flush_stdout()?;
        for f in self.files.values_mut() {
            if let OutFile::File(w) = f {
                let _ = w.flush();
            }
        }
        let _ = self.ctx.stderr.flush();
        Ok(())
    }
}
