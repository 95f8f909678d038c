//! The input stream of sed: the operands read one record at a time, with one
//! record of look-ahead so `$` is known before it is processed.

use std::io::{self, BufRead, BufReader, Read, Write};

/// Opens an operand for reading (through the host).
pub type Opener<'a> = dyn Fn(&str) -> io::Result<Box<dyn Read + 'a>> + 'a;

/// The input files, in order.
pub struct Input<'a> {
    sources: Vec<String>,
    next_src: usize,
    cur_reader: Option<(usize, Box<dyn BufRead + 'a>)>,
    stdin: Option<&'a mut dyn Read>,
    open: &'a Opener<'a>,
    err: &'a mut dyn Write,
    look: Option<(Vec<u8>, bool, usize)>,
    spare: Vec<u8>,
    cur_src: Option<usize>,
    term: u8,
    separate: bool,
    /// The current line number.
    pub line: u64,
    /// Counts restarts of the line numbers (each file with -s/-i).
    pub numbering: u64,
    /// The record last returned starts a new file.
    pub new_file: bool,
    /// A file could not be read (exit status 2).
    pub failed: bool,
}

impl<'a> Input<'a> {
    /// Input over `sources` (`-` is standard input).
    pub fn new(
        sources: Vec<String>,
        stdin: &'a mut dyn Read,
        open: &'a Opener<'a>,
        err: &'a mut dyn Write,
        term: u8,
        separate: bool,
    ) -> Input<'a> {
        Input {
            sources,
            next_src: 0,
            cur_reader: None,
            stdin: Some(stdin),
            open,
            err,
            look: None,
            spare: Vec::new(),
            cur_src: None,
            term,
            separate,
            line: 0,
            numbering: 0,
            new_file: false,
            failed: false,
        }
    }

    /// The name of the file the current line came from (`-` for stdin).
    pub fn file_name(&self) -> &str {
        self.cur_src
            .and_then(|i| self.sources.get(i))
            .map_or("-", String::as_str)
    }

    /// The name of the current file, if it is a real file.
    pub fn current_source(&self) -> Option<&str> {
        self.cur_src
            .and_then(|i| self.sources.get(i))
            .map(String::as_str)
    }

    fn fill(&mut self) {
        while self.look.is_none() {
            if self.cur_reader.is_none() {
                let Some(name) = self.sources.get(self.next_src).cloned() else {
                    return;
                };
                let idx = self.next_src;
                self.next_src += 1;
                // `/dev/stdin` is the utility's stdin, not the process's.
                if name == "-" || name == "/dev/stdin" {
                    if let Some(s) = self.stdin.take() {
                        self.cur_reader =
                            Some((idx, Box::new(BufReader::with_capacity(64 * 1024, s))));
                    }
                } else {
                    match (self.open)(&name) {
                        Ok(r) => {
                            self.cur_reader =
                                Some((idx, Box::new(BufReader::with_capacity(64 * 1024, r))));
                        }
                        Err(e) => {
                            let _ = writeln!(
                                self.err,
                                "sed: can't read {name}: {}",
                                safesh_utils::io_error_text(&e)
                            );
                            self.failed = true;
                        }
                    }
                }
                continue;
            }
            let Some((idx, r)) = self.cur_reader.as_mut() else {
                return;
            };
            let idx = *idx;
            // Reuse the previous pattern space's allocation.
            let mut buf = std::mem::take(&mut self.spare);
            buf.clear();
            match r.read_until(self.term, &mut buf) {
                Ok(0) => self.cur_reader = None,
                Ok(_) => {
                    let terminated = buf.last() == Some(&self.term);
                    if terminated {
                        buf.pop();
                    }
                    self.look = Some((buf, terminated, idx));
                }
                Err(e) => {
                    let name = self.sources.get(idx).cloned().unwrap_or_default();
                    let _ = writeln!(
                        self.err,
                        "sed: read error on {name}: {}",
                        safesh_utils::io_error_text(&e)
                    );
                    self.failed = true;
                    self.cur_reader = None;
                }
            }
        }
    }

    /// Reads the next record into `ps`; Some(terminated) or None at the end.
    pub fn next_record(&mut self, ps: &mut Vec<u8>) -> Option<bool> {
        self.fill();
        let (data, terminated, src) = self.look.take()?;
        self.new_file = self.cur_src != Some(src);
        if self.new_file && self.separate {
            self.line = 0;
            self.numbering += 1;
        }
        self.cur_src = Some(src);
        self.line += 1;
        self.spare = std::mem::replace(ps, data);
        Some(terminated)
    }

    /// True when the current line is the last (of its file, with -s/-i).
    pub fn is_last(&mut self) -> bool {
        self.fill();
        match &self.look {
            None => true,
            Some((_, _, src)) => self.separate && Some(*src) != self.cur_src,
        }
    }

    /// True when no input at all remains.
    pub fn no_more(&mut self) -> bool {
        self.fill();
        self.look.is_none()
    }

    /// Used by `0,/re/`: never true (line 1 handles it).
    pub fn line_is_first_of_zero(&self) -> bool {
        false
    }
}
