//! Record reading (RS as a byte, paragraph mode, or a regex) over any byte stream.

use crate::regex::AwkRegex as Regex;
use memchr::{memchr, memmem};
use std::io::{self, Read};
use std::rc::Rc;

/// How records are separated.
#[derive(Clone)]
pub enum RsMode {
    /// A single byte (default newline).
    Byte(u8),
    /// `RS = ""`: blank lines separate records.
    Paragraph,
    /// A regex (RS longer than one character).
    Regex(Rc<Regex>),
}

/// Buffered record reader; the source is passed to each call so a reader can sit
/// over `ctx.stdin` without borrowing it.
#[derive(Default)]
pub struct RecordReader {
    buf: Vec<u8>,
    start: usize,
    scanned: usize,
    eof: bool,
}

const CHUNK: usize = 64 * 1024;

impl RecordReader {
    /// Reads more bytes; returns false at end of input.
    fn fill(&mut self, src: &mut dyn Read) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned = self.scanned.saturating_sub(self.start);
            self.start = 0;
        }
        // What is buffered is one unfinished record: past the budget, stop
        // rather than hold a line without end.
        if self.buf.len() as u64 > crate::budget::budget() {
            return Err(crate::budget::record_too_long());
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        loop {
            match src.read(&mut self.buf[old..]) {
                Ok(n) => {
                    self.buf.truncate(old + n);
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            }
        }
    }

    /// Reads the next record into `out`; false at end of input.
    pub fn read(&mut self, src: &mut dyn Read, rs: &RsMode, out: &mut Vec<u8>) -> io::Result<bool> {
        match rs {
            RsMode::Byte(c) => self.read_byte(src, *c, out),
            RsMode::Paragraph => self.read_para(src, out),
            RsMode::Regex(re) => self.read_regex(src, re, out),
        }
    }

    fn take_rest(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.start >= self.buf.len() {
            return false;
        }
        out.extend_from_slice(&self.buf[self.start..]);
        self.start = self.buf.len();
        self.scanned = self.start;
        true
    }

    fn read_byte(&mut self, src: &mut dyn Read, c: u8, out: &mut Vec<u8>) -> io::Result<bool> {
        self.scanned = self.scanned.max(self.start);
        loop {
            if let Some(p) = memchr(c, &self.buf[self.scanned..]) {
                let end = self.scanned + p;
                out.clear();
                out.extend_from_slice(&self.buf[self.start..end]);
                self.start = end + 1;
                self.scanned = self.start;
                return Ok(true);
            }
            self.scanned = self.buf.len();
            if self.eof || !self.fill(src)? {
                return Ok(self.take_rest(out));
            }
        }
    }

    fn read_para(&mut self, src: &mut dyn Read, out: &mut Vec<u8>) -> io::Result<bool> {
        // Skip leading newlines.
        loop {
            while self.start < self.buf.len() && self.buf[self.start] == b'\n' {
                self.start += 1;
            }
            if self.start < self.buf.len() || self.eof || !self.fill(src)? {
                break;
            }
        }
        self.scanned = self.start;
        loop {
            if let Some(p) = memmem::find(&self.buf[self.scanned..], b"\n\n") {
                let end = self.scanned + p;
                out.clear();
                out.extend_from_slice(&self.buf[self.start..end]);
                self.start = end + 2;
                self.scanned = self.start;
                return Ok(true);
            }
            self.scanned = self.buf.len().saturating_sub(1).max(self.start);
            if self.eof || !self.fill(src)? {
                let got = self.take_rest(out);
                while out.last() == Some(&b'\n') {
                    out.pop();
                }
                return Ok(got && !out.is_empty());
            }
        }
    }

    fn read_regex(
        &mut self,
        src: &mut dyn Read,
        re: &Regex,
        out: &mut Vec<u8>,
    ) -> io::Result<bool> {
        loop {
            let hay = &self.buf[self.start..];
            let m = re.next_nonempty(hay, 0);
            if let Some(m) = m
                && (self.start + m.end < self.buf.len() || self.eof)
            {
                out.clear();
                out.extend_from_slice(&hay[..m.start]);
                self.start += m.end;
                return Ok(true);
            }
            if self.eof || !self.fill(src)? {
                if let Some(m) = re.next_nonempty(&self.buf[self.start..], 0) {
                    out.clear();
                    out.extend_from_slice(&self.buf[self.start..self.start + m.start]);
                    self.start += m.end;
                    return Ok(true);
                }
                return Ok(self.take_rest(out));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records() {
        let mut r = RecordReader::default();
        let mut src: &[u8] = b"a\nb\n\nc";
        let mut out = Vec::new();
        let mut got = Vec::new();
        while r
            .read(&mut src, &RsMode::Byte(b'\n'), &mut out)
            .unwrap_or(false)
        {
            got.push(out.clone());
        }
        assert_eq!(
            got,
            vec![b"a".to_vec(), b"b".to_vec(), b"".to_vec(), b"c".to_vec()]
        );
    }
}
