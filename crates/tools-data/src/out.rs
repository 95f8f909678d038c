//! Buffered standard output that remembers the first write error, so tools can write
//! freely and map a failure to the GNU status once, at the end.

use safesh_utils::UtilCtx;
use std::io;

/// A 64 KiB buffer in front of `ctx.stdout`.
pub struct Out<'c, 'a> {
    ctx: &'c mut UtilCtx<'a>,
    buf: Vec<u8>,
    err: Option<io::Error>,
}

impl<'c, 'a> Out<'c, 'a> {
    /// Wraps the context's stdout.
    pub fn new(ctx: &'c mut UtilCtx<'a>) -> Self {
        Out {
            ctx,
            // Grows on demand: small outputs (echo, printf) stay cheap.
            buf: Vec::new(),
            err: None,
        }
    }

    /// The context (for stderr, files and the host).
    pub fn ctx(&mut self) -> &mut UtilCtx<'a> {
        self.ctx
    }

    /// Queues `b`, flushing when the buffer is full. Returns false once writing failed.
    pub fn write(&mut self, b: &[u8]) -> bool {
        if self.err.is_some() {
            return false;
        }
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 64 * 1024 {
            self.flush();
        }
        self.err.is_none()
    }

    /// Writes the buffer out now.
    pub fn flush(&mut self) -> bool {
        if self.err.is_none() && !self.buf.is_empty() {
            let r = self
                .ctx
                .stdout
                .write_all(&self.buf)
                .and_then(|_| self.ctx.stdout.flush());
            self.buf.clear();
            if let Err(e) = r {
                self.err = Some(e);
            }
        }
        self.err.is_none()
    }

    /// Writes `name: msg` on stderr after flushing stdout (keeps the two in order).
    pub fn warn(&mut self, msg: impl std::fmt::Display) {
        self.flush();
        self.ctx.warn(msg);
    }

    /// Flushes and returns 0, or the write-failure status.
    pub fn finish(mut self) -> i32 {
        self.finish_with(0)
    }

    /// Flushes and returns `status`, or the write-failure status.
    pub fn finish_with(&mut self, status: i32) -> i32 {
        self.flush();
        match self.err.take() {
            Some(e) => self.ctx.write_failed(&e),
            None => status,
        }
    }
}
