//! Searching one input: big buffers of whole records, the regex jumping from match
//! to match (line boundaries found with memchr only around matches), context
//! bookkeeping, and GNU's output formats.

use crate::matcher::Matcher;
use memchr::{memchr, memchr_iter, memrchr};
use std::collections::VecDeque;
use std::io::{self, Read, Write};

const CHUNK: usize = 256 * 1024;

/// What to print and when to stop (from the command line).
pub struct Settings {
    pub invert: bool,
    pub count: bool,
    pub list: bool,
    pub list_missing: bool,
    pub line_number: bool,
    pub only: bool,
    pub quiet: bool,
    pub byte_offset: bool,
    pub max_count: u64,
    pub after: u64,
    pub before: u64,
    pub term: u8,
    /// Treat binary files as text (-a, -z).
    pub binary_text: bool,
    /// -I: binary files never match.
    pub binary_skip: bool,
    /// -Z: a NUL after file names.
    pub null_after_name: bool,
}

/// The result of searching one input.
pub struct Outcome {
    /// The input counts as a success for the exit status.
    pub success: bool,
}

/// Why a search stopped early.
pub enum Error {
    /// Reading the input failed.
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
}

/// Searches inputs one after another, keeping the state that spans them.
pub struct Searcher<'a> {
    m: Option<&'a Matcher>,
    st: &'a Settings,
    buf: Vec<u8>,
    /// Something was printed already (for `--` between context groups).
    printed_any: bool,
    /// Polled between buffers: the script was cancelled.
    cancel: &'a dyn Fn() -> bool,
    /// The search stopped because of a cancellation.
    pub cancelled: bool,
}

/// Per-input state.
struct FileState<'n> {
    name: &'n str,
    show: bool,
    /// Line number of the line at the current position.
    lineno: u64,
    /// Byte offset of the current chunk in the input.
    base: u64,
    selected: u64,
    last_printed: Option<u64>,
    after_left: u64,
    /// The last lines of the previous chunk (number, offset, text) for -B.
    before_q: VecDeque<(u64, u64, Vec<u8>)>,
    binary: bool,
    stop: bool,
}

impl<'a> Searcher<'a> {
    /// A searcher for `m` (None: no patterns, nothing matches) with `st`.
    pub fn new(
        m: Option<&'a Matcher>,
        st: &'a Settings,
        cancel: &'a dyn Fn() -> bool,
    ) -> Searcher<'a> {
        Searcher {
            m,
            st,
            buf: Vec::new(),
            printed_any: false,
            cancel,
            cancelled: false,
        }
    }

    /// Prints the count line of an input that could not be searched (a directory
    /// under -c prints `name:0`, as GNU does).
    pub fn zero_count(&self, name: &str, show: bool, out: &mut dyn Write) -> io::Result<()> {
        if self.st.count {
            if show {
                self.name_prefix(out, name, b':')?;
            }
            writeln!(out, "0")?;
        }
        Ok(())
    }

    /// True under -q.
    pub fn quiet(&self) -> bool {
        self.st.quiet
    }

    fn context(&self) -> bool {
        (self.st.after > 0 || self.st.before > 0)
            && !self.st.only
            && !self.st.count
            && !self.st.list
            && !self.st.list_missing
            && !self.st.quiet
    }

    fn track_lines(&self) -> bool {
        self.st.line_number || self.context()
    }

    /// Searches `input`, printing under `name`.
    pub fn search(
        &mut self,
        input: &mut dyn Read,
        name: &str,
        show: bool,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<Outcome, Error> {
        let mut f = FileState {
            name,
            show,
            lineno: 1,
            base: 0,
            selected: 0,
            last_printed: None,
            after_left: 0,
            before_q: VecDeque::new(),
            binary: false,
            stop: self.st.max_count == 0,
        };
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.search_buf(input, &mut buf, &mut f, out, err);
        self.buf = buf;
        r?;
        let st = self.st;
        // -q overrides -l/-L, which override -c.
        if st.count && !st.quiet && !st.list && !st.list_missing {
            if show {
                self.name_prefix(out, name, b':').map_err(Error::Write)?;
            }
            writeln!(out, "{}", f.selected).map_err(Error::Write)?;
        }
        if st.list_missing && f.selected == 0 && !st.quiet {
            out.write_all(name.as_bytes()).map_err(Error::Write)?;
            out.write_all(if st.null_after_name { b"\0" } else { b"\n" })
                .map_err(Error::Write)?;
        }
        // GNU 3.8: the status reflects selected lines, even under -L.
        Ok(Outcome {
            success: f.selected > 0,
        })
    }

    fn search_buf(
        &mut self,
        input: &mut dyn Read,
        buf: &mut Vec<u8>,
        f: &mut FileState<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), Error> {
        let term = self.st.term;
        let mut eof = false;
        let mut scan_from = 0;
        // buf[..filled] holds unprocessed input (a partial record carried over);
        // the rest of `buf` is scratch space kept between reads, so it is zeroed
        // only when it grows.
        let mut filled = 0;
        while !f.stop && !eof {
            if (self.cancel)() {
                self.cancelled = true;
                return Ok(());
            }
            if buf.len() < filled + CHUNK {
                buf.resize(filled + CHUNK, 0);
            }
            let n = loop {
                match input.read(&mut buf[filled..filled + CHUNK]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::Read(e)),
                }
            };
            filled += n;
            if n == 0 {
                eof = true;
            }
            let end = if eof {
                filled
            } else {
                match memrchr(term, &buf[scan_from..filled]) {
                    Some(i) => scan_from + i + 1,
                    None => {
                        scan_from = filled;
                        continue;
                    }
                }
            };
            scan_from = 0;
            if end == 0 {
                break;
            }
            let data = &buf[..end];
            if !self.st.binary_text && !f.binary && memchr(0, data).is_some() {
                f.binary = true;
                if self.st.binary_skip {
                    return Ok(());
                }
            }
            if f.binary {
                // GNU treats NUL bytes of a binary file as line ends (its lines
                // are never printed, but counts and statuses see them).
                let term = self.st.term;
                let split: Vec<u8> = data
                    .iter()
                    .map(|&b| if b == 0 { term } else { b })
                    .collect();
                self.process(&split, f, out, err).map_err(Error::Write)?;
            } else {
                self.process(data, f, out, err).map_err(Error::Write)?;
            }
            f.base += end as u64;
            buf.copy_within(end..filled, 0);
            filled -= end;
        }
        Ok(())
    }

    /// The next selected line at or after `pos` (a line start): (start, end) where
    /// end is the terminator's index or the data length. Without `need_start`
    /// (nothing will print the line) the start may be any index inside the line
    /// at or before the match, which saves a backwards scan per match.
    fn next_selected(
        &self,
        data: &[u8],
        pos: usize,
        need_start: bool,
        next_match: &mut Option<Option<usize>>,
    ) -> Option<(usize, usize)> {
        let term = self.st.term;
        let len = data.len();
        if pos >= len {
            return None;
        }
        if let Some(m) = self.m
            && !m.is_fast()
        {
            // The back-tracking fallback runs record by record.
            let mut p = pos;
            while p < len {
                let le = memchr(term, &data[p..]).map_or(len, |i| p + i);
                if m.is_match(&data[p..le]) != self.st.invert {
                    return Some((p, le));
                }
                p = le + 1;
            }
            return None;
        }
        if !self.st.invert {
            let m = self.m?;
            let (s, _) = m.find_first_at(data, pos)?;
            if s >= len && data.last() == Some(&term) {
                return None;
            }
            let s = s.min(len);
            let ls = if need_start {
                memrchr(term, &data[pos..s]).map_or(pos, |i| pos + i + 1)
            } else {
                s
            };
            let le = memchr(term, &data[s..]).map_or(len, |i| s + i);
            return Some((ls, le));
        }
        let mut p = pos;
        while p < len {
            let le = memchr(term, &data[p..]).map_or(len, |i| p + i);
            let nm = match *next_match {
                Some(Some(x)) if x >= p => Some(x),
                Some(None) => None,
                _ => {
                    let x = self
                        .m
                        .and_then(|m| m.find_first_at(data, p))
                        .map(|(s, _)| s);
                    *next_match = Some(x);
                    x
                }
            };
            match nm {
                Some(x) if x <= le => p = le + 1,
                _ => return Some((p, le)),
            }
        }
        None
    }

    fn process(
        &mut self,
        data: &[u8],
        f: &mut FileState<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        let st = self.st;
        let term = st.term;
        let track = self.track_lines();
        let ctx = self.context();
        // Counting needs neither the line's text nor its start; the line count of
        // data[pos..ls] (for -n) is the same for any `ls` inside the line.
        let need_start = ctx || !st.count;
        let mut pos = 0usize;
        let mut next_match = None;
        while !f.stop {
            let Some((ls, le)) = self.next_selected(data, pos, need_start, &mut next_match) else {
                break;
            };
            if ctx {
                self.gap(data, pos, ls, f, out, true)?;
            } else if track {
                f.lineno += memchr_iter(term, &data[pos..ls]).count() as u64;
            }
            f.selected += 1;
            if st.quiet {
                f.stop = true;
                return Ok(());
            }
            if st.list {
                self.name_only(out, f.name)?;
                f.stop = true;
                return Ok(());
            }
            if st.list_missing {
                f.stop = true;
                return Ok(());
            }
            if !st.count {
                if f.binary {
                    out.flush()?;
                    let _ = writeln!(err, "grep: {}: binary file matches", f.name);
                    f.stop = true;
                    return Ok(());
                }
                self.print_selected(data, ls, le, f, out)?;
            }
            pos = if le < data.len() { le + 1 } else { data.len() };
            f.lineno += 1;
            if f.selected >= st.max_count {
                f.stop = true;
            }
        }
        if ctx {
            self.gap(data, pos, data.len(), f, out, false)?;
        } else if track && !f.stop {
            f.lineno += memchr_iter(term, &data[pos..]).count() as u64;
        }
        Ok(())
    }

    /// Handles the unselected lines in `data[from..to]`: trailing context of the
    /// previous match, then (when a match follows) leading context, else they are
    /// remembered for the next chunk.
    fn gap(
        &mut self,
        data: &[u8],
        from: usize,
        to: usize,
        f: &mut FileState<'_>,
        out: &mut dyn Write,
        match_follows: bool,
    ) -> io::Result<()> {
        let term = self.st.term;
        let start_line = f.lineno;
        let mut p = from;
        // Trailing context.
        while f.after_left > 0 && p < to {
            let le = memchr(term, &data[p..to]).map_or(to, |i| p + i);
            self.print_line(data, p, le, f.lineno, f.base + p as u64, b'-', f, out)?;
            f.after_left -= 1;
            f.lineno += 1;
            p = if le < to { le + 1 } else { to };
        }
        let rest_lines = memchr_iter(term, &data[p..to]).count() as u64
            + u64::from(to > p && data.get(to - 1) != Some(&term));
        let end_line = f.lineno + rest_lines;
        // Lines [p, to) numbered f.lineno .. end_line. Find the start of the last B.
        let want = self.st.before.min(rest_lines);
        let mut starts: Vec<usize> = Vec::with_capacity(want as usize);
        let mut q = to;
        for _ in 0..want {
            // q is the start of the line after; find the start of the line before.
            let search_end = q.saturating_sub(1);
            let s = memrchr(term, &data[p..search_end.max(p)]).map_or(p, |i| p + i + 1);
            starts.push(s);
            q = s;
        }
        starts.reverse();
        if match_follows {
            let first_gap_line = end_line - starts.len() as u64;
            // Earlier chunk lines still within reach.
            let need_from_q = self.st.before - starts.len() as u64;
            if need_from_q > 0 && p == from && start_line == f.lineno {
                let q = std::mem::take(&mut f.before_q);
                let skip = q.len().saturating_sub(need_from_q as usize);
                for (n, off, line) in q.into_iter().skip(skip) {
                    if f.last_printed.is_some_and(|l| n <= l) {
                        continue;
                    }
                    self.separator(n, f, out)?;
                    self.prefix(out, f, n, off, b'-')?;
                    out.write_all(&line)?;
                    out.write_all(&[term])?;
                    f.last_printed = Some(n);
                }
            }
            f.before_q.clear();
            for (k, &s) in starts.iter().enumerate() {
                let le = memchr(term, &data[s..to]).map_or(to, |i| s + i);
                let n = first_gap_line + k as u64;
                self.print_line(data, s, le, n, f.base + s as u64, b'-', f, out)?;
            }
        } else {
            // Remember for the next chunk.
            let first_gap_line = end_line - starts.len() as u64;
            for (k, &s) in starts.iter().enumerate() {
                let le = memchr(term, &data[s..to]).map_or(to, |i| s + i);
                f.before_q.push_back((
                    first_gap_line + k as u64,
                    f.base + s as u64,
                    data[s..le].to_vec(),
                ));
                if f.before_q.len() as u64 > self.st.before {
                    f.before_q.pop_front();
                }
            }
        }
        f.lineno = end_line;
        Ok(())
    }

    fn separator(&mut self, n: u64, f: &FileState<'_>, out: &mut dyn Write) -> io::Result<()> {
        if !self.context() {
            return Ok(());
        }
        let gap = match f.last_printed {
            None => self.printed_any,
            Some(l) => n > l + 1,
        };
        if gap {
            out.write_all(b"--\n")?;
        }
        self.printed_any = true;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn print_line(
        &mut self,
        data: &[u8],
        s: usize,
        e: usize,
        n: u64,
        off: u64,
        sep: u8,
        f: &mut FileState<'_>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        self.separator(n, f, out)?;
        self.prefix(out, f, n, off, sep)?;
        out.write_all(&data[s..e])?;
        out.write_all(&[self.st.term])?;
        f.last_printed = Some(n);
        Ok(())
    }

    fn print_selected(
        &mut self,
        data: &[u8],
        ls: usize,
        le: usize,
        f: &mut FileState<'_>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let n = f.lineno;
        if self.st.only {
            if self.st.invert {
                return Ok(());
            }
            let Some(m) = self.m else {
                return Ok(());
            };
            let hay = &data[ls..le];
            let mut p = 0;
            while p <= hay.len() {
                let Some((s, e)) = m.find_at(hay, p) else {
                    break;
                };
                let (s, e) = (s + ls, e + ls);
                if e > s {
                    self.prefix(out, f, n, f.base + s as u64, b':')?;
                    out.write_all(&data[s..e])?;
                    out.write_all(&[self.st.term])?;
                    p = e - ls;
                } else {
                    p = s - ls + 1;
                }
            }
            f.last_printed = Some(n);
            return Ok(());
        }
        self.print_line(data, ls, le, n, f.base + ls as u64, b':', f, out)?;
        f.after_left = self.st.after;
        Ok(())
    }

    fn prefix(
        &self,
        out: &mut dyn Write,
        f: &FileState<'_>,
        n: u64,
        off: u64,
        sep: u8,
    ) -> io::Result<()> {
        if f.show {
            self.name_prefix(out, f.name, sep)?;
        }
        if self.st.line_number {
            write!(out, "{n}")?;
            out.write_all(&[sep])?;
        }
        if self.st.byte_offset {
            write!(out, "{off}")?;
            out.write_all(&[sep])?;
        }
        Ok(())
    }

    fn name_prefix(&self, out: &mut dyn Write, name: &str, sep: u8) -> io::Result<()> {
        out.write_all(name.as_bytes())?;
        out.write_all(if self.st.null_after_name {
            b"\0"
        } else {
            std::slice::from_ref(&sep)
        })
    }

    fn name_only(&self, out: &mut dyn Write, name: &str) -> io::Result<()> {
        out.write_all(name.as_bytes())?;
        out.write_all(if self.st.null_after_name {
            b"\0"
        } else {
            b"\n"
        })
    }
}
