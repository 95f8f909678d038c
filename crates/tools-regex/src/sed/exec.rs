//! Running a parsed sed program over the input stream.

use super::input::Input;
use super::parse::{Addr, Addr2, Cmd, Kind, Program, Re, Repl};
use crate::matcher::{Matcher, Spans};
use std::io::{self, BufRead, Write};
use std::rc::Rc;

/// Where output goes, and whether the last line written lacked its newline.
pub struct Out<'a> {
    /// The stream.
    pub w: Box<dyn Write + 'a>,
    /// The last record written had no terminator (it was the input's last line):
    /// anything written after it must first supply one.
    pub missing: bool,
}

/// Settings from the command line.
pub struct Opts {
    /// -n.
    pub quiet: bool,
    /// -z.
    pub term: u8,
    /// -l N.
    pub line_len: usize,
    /// -s or -i.
    pub separate: bool,
}

/// Why execution ended.
pub enum End {
    /// Input exhausted.
    Done,
    /// `q`/`Q` with an exit code.
    Quit(i32),
}

enum Append {
    Text(Vec<u8>),
    File(String),
    Line(Vec<u8>),
}

/// Run-time state.
pub struct Exec<'p> {
    prog: &'p Program,
    opts: &'p Opts,
    /// Range activity per command: Some(end line for numeric ends) when active.
    ranges: Vec<Option<u64>>,
    /// Per command, the line numbering ([`Input::numbering`]) in which a range
    /// with a line-number start last opened: such a range opens once per
    /// numbering.
    opened: Vec<Option<u64>>,
    hold: Vec<u8>,
    last_re: Option<Rc<Matcher>>,
    append: Vec<Append>,
    tflag: bool,
    spans: Spans,
    /// Opened `w` files, by index.
    pub wfiles: Vec<Option<Out<'p>>>,
    /// Readers for `R` files.
    rfiles: Vec<(String, Option<Box<dyn BufRead + 'p>>)>,
    /// Most bytes the pattern and hold spaces may hold together (the
    /// utility's memory budget): `H`, `G` and `N` grow them from input.
    pub budget: u64,
}

/// Errors during execution.
pub enum ExecError {
    /// Writing failed.
    Write(io::Error),
    /// No previous regex for `//`.
    NoPrevious,
    /// The pattern and hold spaces grew past [`Exec::budget`].
    Memory,
}

impl From<io::Error> for ExecError {
    fn from(e: io::Error) -> Self {
        ExecError::Write(e)
    }
}

/// Opens files for `r`/`R` (through the host).
pub trait FileAccess {
    /// Reads a whole file (None if it cannot be read: `r` ignores that).
    fn read(&self, name: &str) -> Option<Vec<u8>>;
}

impl<'p> Exec<'p> {
    /// Prepares to run `prog`.
    pub fn new(prog: &'p Program, opts: &'p Opts) -> Exec<'p> {
        Exec {
            prog,
            opts,
            ranges: vec![None; prog.cmds.len()],
            opened: vec![None; prog.cmds.len()],
            hold: Vec::new(),
            last_re: None,
            append: Vec::new(),
            tflag: false,
            spans: Vec::new(),
            wfiles: Vec::new(),
            rfiles: Vec::new(),
            budget: u64::MAX,
        }
    }

    fn regex(&mut self, re: &Re) -> Result<Rc<Matcher>, ExecError> {
        match re {
            Some(m) => {
                self.last_re = Some(m.clone());
                Ok(m.clone())
            }
            None => self.last_re.clone().ok_or(ExecError::NoPrevious),
        }
    }

    fn match_addr(
        &mut self,
        a: &Addr,
        ps: &[u8],
        input: &mut Input<'_>,
    ) -> Result<bool, ExecError> {
        Ok(match a {
            Addr::Line(n) => input.line == *n,
            Addr::Last => input.is_last(),
            Addr::Zero => false,
            Addr::Step(first, step) => {
                if *step == 0 {
                    input.line == *first
                } else {
                    input.line >= *first && (input.line - first).is_multiple_of(*step)
                }
            }
            Addr::Re(re) => {
                let m = self.regex(re)?;
                m.is_match(ps)
            }
        })
    }

    fn selected(&mut self, k: usize, ps: &[u8], input: &mut Input<'_>) -> Result<bool, ExecError> {
        let cmd: &Cmd = &self.prog.cmds[k];
        let Some(a1) = &cmd.a1 else {
            return Ok(true);
        };
        let Some(a2) = &cmd.a2 else {
            return self.match_addr(a1, ps, input);
        };
        let line = input.line;
        if let Some(end) = self.ranges[k] {
            // Active: does this line end the range?
            let close = match a2 {
                Addr2::Addr(Addr::Line(_)) | Addr2::Plus(_) => {
                    if line >= end {
                        self.ranges[k] = None;
                        return Ok(line <= end);
                    }
                    false
                }
                Addr2::Tilde(n) => *n == 0 || line.is_multiple_of(*n),
                Addr2::Addr(a) => self.match_addr(a, ps, input)?,
            };
            if close {
                self.ranges[k] = None;
            }
            return Ok(true);
        }
        let start = match a1 {
            Addr::Zero => {
                if line == 1 || input.line_is_first_of_zero() {
                    // `0,/re/`: the range is active from before line 1, so the
                    // end regex is tried on line 1 too.
                    if let Addr2::Addr(a) = a2
                        && self.match_addr(a, ps, input)?
                    {
                        return Ok(true);
                    }
                    self.ranges[k] = Some(u64::MAX);
                    return Ok(true);
                }
                false
            }
            // GNU: a range starting at line N opens on the first line at or
            // past N that reaches it, so `1d;1,3p` still prints lines 2-3.
            Addr::Line(n) => line >= *n && self.opened[k] != Some(input.numbering),
            a => self.match_addr(a, ps, input)?,
        };
        if !start {
            return Ok(false);
        }
        if matches!(a1, Addr::Line(_)) {
            self.opened[k] = Some(input.numbering);
        }
        // Opened past its start line: a numeric end already passed selects
        // nothing, and `~N` does not end on this line.
        let late = matches!(a1, Addr::Line(n) if line > *n);
        match a2 {
            Addr2::Addr(Addr::Line(n)) => {
                if late && *n < line {
                    return Ok(false);
                }
                if *n > line {
                    self.ranges[k] = Some(*n);
                }
            }
            Addr2::Tilde(n) if late && *n > 0 => self.ranges[k] = Some(u64::MAX),
            Addr2::Plus(n) => {
                if *n > 0 {
                    self.ranges[k] = Some(line + n);
                }
            }
            Addr2::Tilde(n) => {
                if *n > 0 && !line.is_multiple_of(*n) {
                    self.ranges[k] = Some(u64::MAX);
                }
            }
            Addr2::Addr(Addr::Last) => {
                if !input.is_last() {
                    self.ranges[k] = Some(u64::MAX);
                }
            }
            Addr2::Addr(_) => self.ranges[k] = Some(u64::MAX),
        }
        Ok(true)
    }

    /// Writes a record (with its terminator unless it is the unterminated last line).
    /// Refuses to hold `len` more bytes than the budget (with what is held).
    fn within_budget(&self, len: usize) -> Result<(), ExecError> {
        if len as u64 > self.budget {
            return Err(ExecError::Memory);
        }
        Ok(())
    }

    fn emit(out: &mut Out<'_>, data: &[u8], term: u8, terminated: bool) -> io::Result<()> {
        if out.missing {
            out.w.write_all(&[term])?;
            out.missing = false;
        }
        out.w.write_all(data)?;
        if terminated {
            out.w.write_all(&[term])?;
        } else {
            out.missing = true;
        }
        Ok(())
    }

    fn emit_raw(out: &mut Out<'_>, data: &[u8], term: u8) -> io::Result<()> {
        if out.missing {
            out.w.write_all(&[term])?;
            out.missing = false;
        }
        out.w.write_all(data)
    }

    fn flush_append(&mut self, out: &mut Out<'_>, files: &dyn FileAccess) -> io::Result<()> {
        let term = self.opts.term;
        if !self.append.is_empty() && out.missing {
            out.w.write_all(&[term])?;
            out.missing = false;
        }
        for a in std::mem::take(&mut self.append) {
            match a {
                // The text carries its own newline (empty: nothing at all).
                Append::Text(t) => {
                    if !t.is_empty() {
                        Self::emit_raw(out, &t, term)?;
                    }
                }
                Append::Line(l) => {
                    Self::emit_raw(out, &l, term)?;
                }
                Append::File(name) => {
                    if let Some(data) = files.read(&name)
                        && !data.is_empty()
                    {
                        Self::emit_raw(out, &data, term)?;
                        if data.last() != Some(&b'\n') {
                            out.missing = true;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the program over `input`.
    pub fn run(
        &mut self,
        input: &mut Input<'_>,
        out: &mut Out<'_>,
        files: &dyn FileAccess,
        switch: &mut dyn FnMut(&mut Input<'_>, &mut Out<'_>) -> io::Result<()>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<End, ExecError> {
        let term = self.opts.term;
        let mut ps: Vec<u8> = Vec::new();
        let mut terminated = true;
        let mut restart = false;
        let mut jumps = 0u64;
        loop {
            if (input.line.is_multiple_of(4096) || restart) && cancelled() {
                return Ok(End::Quit(130));
            }
            if !restart {
                match input.next_record(&mut ps) {
                    Some(t) => terminated = t,
                    None => return Ok(End::Done),
                }
                if input.new_file {
                    switch(input, out)?;
                }
                self.tflag = false;
            }
            restart = false;
            let mut pc = 0usize;
            let mut autoprint = !self.opts.quiet;
            let mut quit: Option<i32> = None;
            let cmds = &self.prog.cmds;
            while pc < cmds.len() {
                let k = pc;
                pc += 1;
                let cmd = &cmds[k];
                if matches!(cmd.kind, Kind::EndBlock | Kind::Label) {
                    continue;
                }
                let sel = self.selected(k, &ps, input)? != cmd.negate;
                if !sel {
                    if let Kind::Block(after) = cmd.kind {
                        pc = after;
                    }
                    continue;
                }
                match &cmd.kind {
                    Kind::Block(_) | Kind::EndBlock | Kind::Label => {}
                    Kind::S(s) => {
                        let m = self.regex(&s.re)?;
                        if self.substitute(&m, s, &mut ps) {
                            self.tflag = true;
                            if s.print {
                                Self::emit(out, &ps, term, terminated)?;
                            }
                            if let Some(w) = s.wfile {
                                self.write_file(w, &ps, terminated)?;
                            }
                        }
                    }
                    Kind::Y(map) => {
                        for b in ps.iter_mut() {
                            *b = map[usize::from(*b)];
                        }
                    }
                    Kind::Text(c, text) => match c {
                        b'a' => self.append.push(Append::Text(text.clone())),
                        b'i' => {
                            if !text.is_empty() {
                                Self::emit_raw(out, text, term)?;
                            }
                        }
                        _ => {
                            // `c`: in a range, print at its end only.
                            let in_range = cmd.a2.is_some() && !cmd.negate;
                            if (!in_range || self.ranges[k].is_none()) && !text.is_empty() {
                                Self::emit_raw(out, text, term)?;
                            }
                            autoprint = false;
                            break;
                        }
                    },
                    Kind::Branch(c, target) => {
                        let jump = match c {
                            b'b' => true,
                            b't' => std::mem::take(&mut self.tflag),
                            _ => !std::mem::take(&mut self.tflag),
                        };
                        if jump {
                            pc = target.unwrap_or(cmds.len());
                            // A branch loop may never reach the next cycle.
                            jumps += 1;
                            if jumps.is_multiple_of(4096) && cancelled() {
                                return Ok(End::Quit(130));
                            }
                        }
                    }
                    Kind::Quit(c, code) => {
                        if *c == b'Q' {
                            autoprint = false;
                        }
                        quit = Some(*code);
                        break;
                    }
                    Kind::List(n) => {
                        let width = n.unwrap_or(self.opts.line_len);
                        let text = list_line(&ps, width, term);
                        Self::emit_raw(out, &text, term)?;
                    }
                    Kind::ReadFile(c, name) => {
                        if *c == b'r' {
                            self.append.push(Append::File(name.clone()));
                        } else if let Some(line) = self.read_line_of(name, files) {
                            self.append.push(Append::Line(line));
                        }
                    }
                    Kind::Write(c, idx) => {
                        if *c == b'w' {
                            self.write_file(*idx, &ps, terminated)?;
                        } else {
                            let nl = memchr::memchr(term, &ps);
                            let first = ps[..nl.unwrap_or(ps.len())].to_vec();
                            self.write_file(*idx, &first, terminated || nl.is_some())?;
                        }
                    }
                    Kind::Simple(c) => match c {
                        b'=' => {
                            Self::emit_raw(out, input.line.to_string().as_bytes(), term)?;
                            out.w.write_all(&[term])?;
                        }
                        b'd' => {
                            autoprint = false;
                            break;
                        }
                        // Under -z the "line" separator inside the pattern
                        // and hold spaces is the NUL (GNU's buffer_delimiter)
                        // for D, G, H, N, P, W and l alike.
                        b'D' => match memchr::memchr(term, &ps) {
                            None => {
                                autoprint = false;
                                break;
                            }
                            Some(i) => {
                                ps.drain(..=i);
                                self.flush_append(out, files)?;
                                restart = true;
                                autoprint = false;
                                break;
                            }
                        },
                        b'g' => ps.clone_from(&self.hold),
                        b'G' => {
                            self.within_budget(ps.len() + 1 + self.hold.len())?;
                            ps.push(term);
                            ps.extend_from_slice(&self.hold);
                        }
                        b'h' => self.hold.clone_from(&ps),
                        b'H' => {
                            self.within_budget(ps.len() + 1 + self.hold.len())?;
                            self.hold.push(term);
                            self.hold.extend_from_slice(&ps);
                        }
                        b'x' => std::mem::swap(&mut ps, &mut self.hold),
                        b'z' => ps.clear(),
                        b'p' => Self::emit(out, &ps, term, terminated)?,
                        b'P' => {
                            let nl = memchr::memchr(term, &ps);
                            let end = nl.unwrap_or(ps.len());
                            Self::emit(out, &ps[..end], term, terminated || nl.is_some())?;
                        }
                        b'F' => {
                            let name = input.file_name().to_string();
                            Self::emit_raw(out, name.as_bytes(), term)?;
                            out.w.write_all(&[term])?;
                        }
                        b'n' => {
                            if input.is_last() {
                                // No next line: GNU ends as if the script ended.
                                if input.no_more() {
                                    quit = Some(0);
                                }
                                break;
                            }
                            if !self.opts.quiet {
                                Self::emit(out, &ps, term, terminated)?;
                            }
                            self.flush_append(out, files)?;
                            match input.next_record(&mut ps) {
                                Some(t) => terminated = t,
                                None => {
                                    autoprint = false;
                                    quit = Some(0);
                                    break;
                                }
                            }
                            if input.new_file {
                                switch(input, out)?;
                            }
                        }
                        b'N' => {
                            if input.is_last() {
                                if input.no_more() {
                                    quit = Some(0);
                                }
                                break;
                            }
                            self.flush_append(out, files)?;
                            let mut next = Vec::new();
                            match input.next_record(&mut next) {
                                Some(t) => terminated = t,
                                None => {
                                    quit = Some(0);
                                    break;
                                }
                            }
                            self.within_budget(ps.len() + 1 + next.len() + self.hold.len())?;
                            ps.push(term);
                            ps.extend_from_slice(&next);
                        }
                        _ => {}
                    },
                }
            }
            if autoprint {
                Self::emit(out, &ps, term, terminated)?;
            }
            if !restart {
                self.flush_append(out, files)?;
            }
            if let Some(code) = quit {
                return Ok(End::Quit(code));
            }
        }
    }

    fn write_file(&mut self, idx: usize, data: &[u8], terminated: bool) -> io::Result<()> {
        let term = self.opts.term;
        if let Some(Some(o)) = self.wfiles.get_mut(idx) {
            Self::emit(o, data, term, terminated)?;
        }
        Ok(())
    }

    fn read_line_of(&mut self, name: &str, files: &dyn FileAccess) -> Option<Vec<u8>> {
        let pos = match self.rfiles.iter().position(|(n, _)| n == name) {
            Some(p) => p,
            None => {
                let reader: Option<Box<dyn BufRead + 'p>> = files
                    .read(name)
                    .map(|d| Box::new(io::Cursor::new(d)) as Box<dyn BufRead + 'p>);
                self.rfiles.push((name.to_string(), reader));
                self.rfiles.len() - 1
            }
        };
        let r = self.rfiles.get_mut(pos)?.1.as_mut()?;
        let mut line = Vec::new();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                Some(line)
            }
        }
    }

    /// Applies `s` to `ps`; true if a replacement was made.
    fn substitute(&mut self, m: &Matcher, s: &super::parse::Subst, ps: &mut Vec<u8>) -> bool {
        let mut out: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        let mut copied = 0usize;
        let mut count = 0u64;
        let mut prev_end: Option<usize> = None;
        let mut did = false;
        let mut spans = std::mem::take(&mut self.spans);
        // Group spans cost a second engine pass: only ask when the replacement uses them.
        let need_groups = s.repl.iter().any(|r| matches!(r, Repl::Group(g) if *g > 0));
        while pos <= ps.len() {
            if need_groups {
                if !m.captures_at(ps, pos, &mut spans) {
                    break;
                }
            } else {
                let Some(found) = m.find_at(ps, pos) else {
                    break;
                };
                spans.clear();
                spans.push(Some(found));
            }
            let Some(Some((ms, me))) = spans.first().copied() else {
                break;
            };
            if ms == me && prev_end == Some(ms) {
                // An empty match right after the previous match does not count.
                pos = ms + 1;
                continue;
            }
            count += 1;
            if count >= s.nth {
                out.extend_from_slice(&ps[copied..ms]);
                build_replacement(&s.repl, ps, &spans, &mut out);
                copied = me;
                did = true;
                if !s.global {
                    break;
                }
            }
            prev_end = Some(me);
            pos = if me == ms { me + 1 } else { me };
        }
        self.spans = spans;
        if did {
            out.extend_from_slice(&ps[copied..]);
            *ps = out;
        }
        did
    }
}

/// Appends the replacement for one match.
fn build_replacement(repl: &[Repl], ps: &[u8], spans: &Spans, out: &mut Vec<u8>) {
    // Case state: persistent (\U \L, ended by \E) and one-shot (\u \l).
    let mut mode = 0u8;
    let mut once = 0u8;
    let put = |bytes: &[u8], out: &mut Vec<u8>, mode: u8, once: &mut u8| {
        for &b in bytes {
            let mut c = match mode {
                b'U' => b.to_ascii_uppercase(),
                b'L' => b.to_ascii_lowercase(),
                _ => b,
            };
            match *once {
                b'u' => {
                    c = c.to_ascii_uppercase();
                    *once = 0;
                }
                b'l' => {
                    c = c.to_ascii_lowercase();
                    *once = 0;
                }
                _ => {}
            }
            out.push(c);
        }
    };
    for r in repl {
        match r {
            Repl::Lit(l) => put(l, out, mode, &mut once),
            Repl::Group(g) => {
                if let Some(Some((a, b))) = spans.get(*g) {
                    put(&ps[*a..*b], out, mode, &mut once);
                }
            }
            Repl::Case(c) => match c {
                b'u' | b'l' => once = *c,
                b'E' => {
                    mode = 0;
                    once = 0;
                }
                _ => {
                    // `\U`/`\L` cancel a pending `\u`/`\l` (GNU).
                    mode = *c;
                    once = 0;
                }
            },
        }
    }
}

/// `l` output: escapes, octal for the rest, lines folded at `width` (0: never).
fn list_line(ps: &[u8], width: usize, term: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(ps.len() + 8);
    let mut col = 0usize;
    for &b in ps {
        let esc: Vec<u8> = match b {
            b'\\' => b"\\\\".to_vec(),
            0x07 => b"\\a".to_vec(),
            0x08 => b"\\b".to_vec(),
            0x0c => b"\\f".to_vec(),
            b'\n' => b"\\n".to_vec(),
            b'\r' => b"\\r".to_vec(),
            b'\t' => b"\\t".to_vec(),
            0x0b => b"\\v".to_vec(),
            0x20..=0x7e => vec![b],
            _ => format!("\\{b:03o}").into_bytes(),
        };
        if width > 0 && col + esc.len() > width - 1 {
            out.extend_from_slice(b"\\\n");
            col = 0;
        }
        col += esc.len();
        out.extend_from_slice(&esc);
    }
    out.push(b'$');
    out.push(term);
    out
}
