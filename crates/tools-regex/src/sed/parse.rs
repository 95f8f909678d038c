//! Parsing a sed script into a flat program (blocks and branches resolved to
//! instruction indices), with GNU's error messages.

use crate::matcher::{Config, Matcher, Syntax};
use std::rc::Rc;

/// A regex in an address or `s` command; `None` means "the last regex used".
pub type Re = Option<Rc<Matcher>>;

/// One address.
pub enum Addr {
    /// Line number.
    Line(u64),
    /// `$`.
    Last,
    /// `/re/`.
    Re(Re),
    /// `first~step`.
    Step(u64, u64),
    /// `0` (only as `0,/re/`).
    Zero,
}

/// The second address of a range.
pub enum Addr2 {
    /// An ordinary address.
    Addr(Addr),
    /// `+N`.
    Plus(u64),
    /// `~N`.
    Tilde(u64),
}

/// A piece of an `s` replacement.
pub enum Repl {
    /// Literal bytes.
    Lit(Vec<u8>),
    /// `&` (0) or `\1`..`\9`.
    Group(usize),
    /// `\U` `\L` `\E` `\u` `\l`.
    Case(u8),
}

/// An `s` command.
pub struct Subst {
    /// The regex.
    pub re: Re,
    /// The replacement.
    pub repl: Vec<Repl>,
    /// `g`.
    pub global: bool,
    /// `N` (1 when absent).
    pub nth: u64,
    /// `p` flag.
    pub print: bool,
    /// `w FILE` (index into the program's write files).
    pub wfile: Option<usize>,
}

/// A command.
pub enum Kind {
    /// `{` (index of the instruction after the matching `}`).
    Block(usize),
    /// `}`.
    EndBlock,
    /// `s`.
    S(Box<Subst>),
    /// `y` (a full byte map).
    Y(Box<[u8; 256]>),
    /// `a` `i` `c` with their text.
    Text(u8, Vec<u8>),
    /// `b` `t` `T` with the target index (None: end of script).
    Branch(u8, Option<usize>),
    /// `q` `Q` with the exit code.
    Quit(u8, i32),
    /// `l` with an optional line length.
    List(Option<usize>),
    /// `r` `R` with a file name.
    ReadFile(u8, String),
    /// `w` `W` (index into write files).
    Write(u8, usize),
    /// A command without arguments: `= d D g G h H n N p P x z F`.
    Simple(u8),
    /// `:label` (a no-op at run time).
    Label,
}

/// A command with its addresses.
pub struct Cmd {
    /// First address.
    pub a1: Option<Addr>,
    /// Second address.
    pub a2: Option<Addr2>,
    /// `!`.
    pub negate: bool,
    /// What it does.
    pub kind: Kind,
}

/// A parsed script.
pub struct Program {
    /// The commands.
    pub cmds: Vec<Cmd>,
    /// Files named by `w` commands and flags (opened before the first line).
    pub wfiles: Vec<String>,
    /// The script began with `#n`.
    pub hash_n: bool,
}

/// A script chunk: its text and how errors name it.
pub struct Chunk {
    /// The text.
    pub text: Vec<u8>,
    /// `-e expression #N` or `file F`.
    pub origin: Origin,
}

/// Where a chunk came from.
pub enum Origin {
    /// `-e` (or the script operand) number N.
    Expr(usize),
    /// `-f FILE`.
    File(String),
}

/// A parse error (already worded like GNU, without the `sed: ` prefix).
#[derive(Debug)]
pub struct ParseError(pub String);

/// The message the policy layer relies on for `e`.
pub const E_REFUSED: &str = "e command is not supported in safesh (it would run a shell)";

struct P<'a> {
    s: &'a [u8],
    i: usize,
    /// (start offset, origin) of each chunk within `s`.
    chunks: &'a [(usize, &'a Origin)],
    extended: bool,
    cmds: Vec<Cmd>,
    wfiles: Vec<String>,
    labels: Vec<(String, usize)>,
    jumps: Vec<(usize, String)>,
    blocks: Vec<usize>,
}

/// Parses the chunks (joined by newlines) into a program.
pub fn parse(chunks: &[Chunk], extended: bool) -> Result<Program, ParseError> {
    let mut text = Vec::new();
    let mut starts = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        if k > 0 {
            text.push(b'\n');
        }
        starts.push((text.len(), &c.origin));
        text.extend_from_slice(&c.text);
    }
    let hash_n = text.starts_with(b"#n") && matches!(text.get(2), None | Some(b'\n'));
    let mut p = P {
        s: &text,
        i: 0,
        chunks: &starts,
        extended,
        cmds: Vec::new(),
        wfiles: Vec::new(),
        labels: Vec::new(),
        jumps: Vec::new(),
        blocks: Vec::new(),
    };
    p.script()?;
    if !p.blocks.is_empty() {
        // GNU reports the position as char 0.
        return Err(ParseError(format!(
            "{}, char 0: unmatched `{{'",
            p.origin_text()
        )));
    }
    for (at, label) in std::mem::take(&mut p.jumps) {
        let Some(&(_, target)) = p.labels.iter().find(|(l, _)| *l == label) else {
            return Err(ParseError(format!(
                "can't find label for jump to `{label}'"
            )));
        };
        if let Some(Cmd {
            kind: Kind::Branch(_, t),
            ..
        }) = p.cmds.get_mut(at)
        {
            *t = Some(target);
        }
    }
    Ok(Program {
        cmds: p.cmds,
        wfiles: p.wfiles,
        hash_n,
    })
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn origin_text(&self) -> String {
        let (start, origin) = self
            .chunks
            .iter()
            .rev()
            .find(|(st, _)| *st <= self.i)
            .copied()
            .unwrap_or((0, &Origin::Expr(1)));
        let _ = start;
        match origin {
            Origin::Expr(n) => format!("-e expression #{n}"),
            Origin::File(f) => format!("file {f}"),
        }
    }

    fn err(&self, msg: &str) -> ParseError {
        let (start, origin) = self
            .chunks
            .iter()
            .rev()
            .find(|(st, _)| *st <= self.i.saturating_sub(1))
            .copied()
            .unwrap_or((0, &Origin::Expr(1)));
        let rel = self.i.saturating_sub(start);
        match origin {
            Origin::Expr(n) => ParseError(format!("-e expression #{n}, char {rel}: {msg}")),
            Origin::File(f) => {
                let line = self.s[start..self.i.min(self.s.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                ParseError(format!("file {f} line {line}: {msg}"))
            }
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.i += 1;
        }
    }

    fn script(&mut self) -> Result<(), ParseError> {
        loop {
            while self
                .peek()
                .is_some_and(|b| is_space(b) || b == b'\n' || b == b';')
            {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == b'#' {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.i += 1;
                }
                continue;
            }
            self.command()?;
        }
    }

    fn number(&mut self) -> u64 {
        let mut v: u64 = 0;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            v = v.saturating_mul(10).saturating_add(u64::from(d - b'0'));
            self.i += 1;
        }
        v
    }

    fn address(&mut self) -> Result<Option<Addr>, ParseError> {
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        if c.is_ascii_digit() {
            let n = self.number();
            self.skip_ws();
            if self.peek() == Some(b'~') {
                self.i += 1;
                self.skip_ws();
                let step = self.number();
                if n == 0 && step == 0 {
                    return Ok(Some(Addr::Zero));
                }
                return Ok(Some(Addr::Step(n, step)));
            }
            return Ok(Some(if n == 0 { Addr::Zero } else { Addr::Line(n) }));
        }
        if c == b'$' {
            self.i += 1;
            return Ok(Some(Addr::Last));
        }
        if c == b'/' || c == b'\\' {
            self.i += 1;
            let delim = if c == b'\\' {
                let Some(d) = self.peek() else {
                    return Err(self.err("unexpected `,'"));
                };
                self.i += 1;
                d
            } else {
                b'/'
            };
            let Some(pat) = self.delimited(delim, true) else {
                return Err(self.err("unterminated address regex"));
            };
            let mut icase = false;
            let mut multi = false;
            loop {
                match self.peek() {
                    Some(b'I') => icase = true,
                    Some(b'M') => multi = true,
                    _ => break,
                }
                self.i += 1;
            }
            let re = self.compile(&pat, icase, multi)?;
            return Ok(Some(Addr::Re(re)));
        }
        Ok(None)
    }

    fn compile(&self, pat: &[u8], icase: bool, multi: bool) -> Result<Re, ParseError> {
        if pat.is_empty() {
            return Ok(None);
        }
        let mut cfg = Config::new(if self.extended {
            Syntax::Extended
        } else {
            Syntax::Basic
        });
        cfg.icase = icase;
        cfg.multiline = multi;
        cfg.sed_escapes = true;
        // Pattern bytes that are not UTF-8 are kept byte for byte via Latin-1-free
        // lossy decoding; the byte target reads the pattern's bytes.
        let text = String::from_utf8_lossy(pat);
        Matcher::new(&[&text], &cfg)
            .map(|m| Some(Rc::new(m)))
            .map_err(|e| self.err(&e))
    }

    /// Reads up to the unescaped `delim`; `\delim` becomes `delim` (kept escaped
    /// when `delim` is a regex character that must stay literal is not our concern:
    /// GNU also yields the bare character). Newlines as `\n` stay escapes.
    fn delimited(&mut self, delim: u8, is_regex: bool) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut in_bracket = false;
        loop {
            let c = self.peek()?;
            self.i += 1;
            if c == b'\\' {
                let d = self.peek()?;
                self.i += 1;
                if in_bracket && d == b'n' && is_regex {
                    out.push(b'\n');
                } else if d == delim && !in_bracket {
                    // The delimiter stands for itself; in a replacement `&`
                    // stays literal (GNU: `s&a&[\&]&` gives `[&]`).
                    if !is_regex && d == b'&' {
                        out.push(b'\\');
                    }
                    out.push(d);
                } else if d == b'\n' {
                    // Escaped newline: a newline.
                    if is_regex {
                        out.extend_from_slice(b"\\n");
                    } else {
                        out.extend_from_slice(b"\\\n");
                    }
                } else {
                    out.push(b'\\');
                    out.push(d);
                }
                continue;
            }
            if c == delim && !in_bracket {
                return Some(out);
            }
            if c == b'\n' && is_regex {
                return None;
            }
            if is_regex && c == b'[' && !in_bracket {
                in_bracket = true;
                out.push(c);
                // `]` right after `[` or `[^` is literal.
                if self.peek() == Some(b'^') {
                    out.push(b'^');
                    self.i += 1;
                }
                if self.peek() == Some(b']') {
                    out.push(b']');
                    self.i += 1;
                }
                continue;
            }
            if in_bracket && c == b'[' && matches!(self.peek(), Some(b':' | b'.' | b'=')) {
                let kind = self.peek().unwrap_or(b':');
                out.push(c);
                out.push(kind);
                self.i += 1;
                while let Some(x) = self.peek() {
                    self.i += 1;
                    out.push(x);
                    if x == kind && self.peek() == Some(b']') {
                        out.push(b']');
                        self.i += 1;
                        break;
                    }
                }
                continue;
            }
            if in_bracket && c == b']' {
                in_bracket = false;
            }
            out.push(c);
        }
    }

    fn command(&mut self) -> Result<(), ParseError> {
        let a1 = self.address()?;
        let mut a2 = None;
        if a1.is_some() {
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.i += 1;
                self.skip_ws();
                a2 = Some(match self.peek() {
                    Some(b'+') => {
                        self.i += 1;
                        Addr2::Plus(self.number())
                    }
                    Some(b'~') => {
                        self.i += 1;
                        Addr2::Tilde(self.number())
                    }
                    _ => match self.address()? {
                        Some(Addr::Zero) => return Err(self.err("invalid usage of line address 0")),
                        Some(a) => Addr2::Addr(a),
                        None => return Err(self.err("unexpected `,'")),
                    },
                });
            }
        }
        if matches!(a1, Some(Addr::Zero)) && !matches!(a2, Some(Addr2::Addr(Addr::Re(_)))) {
            return Err(self.err("invalid usage of line address 0"));
        }
        self.skip_ws();
        let mut negate = false;
        while self.peek() == Some(b'!') {
            negate = true;
            self.i += 1;
            self.skip_ws();
        }
        let Some(c) = self.peek() else {
            return Err(self.err("missing command"));
        };
        self.i += 1;
        let has_addr = a1.is_some();
        let kind = match c {
            b'{' => {
                self.blocks.push(self.cmds.len());
                Kind::Block(0)
            }
            b'}' => {
                if has_addr {
                    return Err(self.err("} doesn't want any addresses"));
                }
                let Some(open) = self.blocks.pop() else {
                    return Err(self.err("unexpected `}'"));
                };
                let after = self.cmds.len() + 1;
                if let Some(Cmd {
                    kind: Kind::Block(t),
                    ..
                }) = self.cmds.get_mut(open)
                {
                    *t = after;
                }
                Kind::EndBlock
            }
            b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P' | b'x'
            | b'z' | b'F' => Kind::Simple(c),
            b'e' => return Err(ParseError(E_REFUSED.into())),
            b'#' => {
                if has_addr {
                    return Err(self.err("comments don't accept any addresses"));
                }
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.i += 1;
                }
                return Ok(());
            }
            b':' => {
                if has_addr {
                    return Err(self.err(": doesn't want any addresses"));
                }
                self.skip_ws();
                let label = self.label();
                if label.is_empty() {
                    return Err(self.err("\":\" lacks a label"));
                }
                self.labels.push((label, self.cmds.len()));
                Kind::Label
            }
            b'b' | b't' | b'T' => {
                self.skip_ws();
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b'\n' | b';' | b'}') && !is_space(b))
                {
                    self.i += 1;
                }
                let label = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                if !label.is_empty() {
                    self.jumps.push((self.cmds.len(), label));
                }
                Kind::Branch(c, None)
            }
            b'q' | b'Q' => {
                if a2.is_some() {
                    return Err(self.err("command only uses one address"));
                }
                self.skip_ws();
                let code = if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.number() as i32
                } else {
                    0
                };
                Kind::Quit(c, code)
            }
            b'l' | b'L' => {
                self.skip_ws();
                let n = if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    Some(self.number() as usize)
                } else {
                    None
                };
                Kind::List(n)
            }
            b'a' | b'i' | b'c' => {
                let text = self.text()?;
                Kind::Text(c, text)
            }
            b'r' | b'R' | b'w' | b'W' => {
                let name = self.filename();
                if name.is_empty() {
                    return Err(self.err("missing filename in r/R/w/W commands"));
                }
                if c == b'r' || c == b'R' {
                    Kind::ReadFile(c, name)
                } else {
                    let idx = self.wfile(name);
                    Kind::Write(c, idx)
                }
            }
            b's' => self.subst()?,
            b'y' => self.translit()?,
            _ => {
                return Err(self.err(&format!("unknown command: `{}'", c as char)));
            }
        };
        let is_label = matches!(kind, Kind::Label);
        let takes_rest = matches!(kind, Kind::Text(..) | Kind::ReadFile(..) | Kind::Write(..));
        self.cmds.push(Cmd {
            a1,
            a2,
            negate,
            kind,
        });
        if c == b'{' || is_label || takes_rest {
            return Ok(());
        }
        if matches!(c, b'b' | b't' | b'T') {
            return Ok(());
        }
        // Only spaces, then `;`, newline, `}` or `#` may follow.
        self.skip_ws();
        match self.peek() {
            None | Some(b';') | Some(b'\n') | Some(b'}') | Some(b'#') => Ok(()),
            Some(_) => {
                self.i += 1;
                Err(self.err("extra characters after command"))
            }
        }
    }

    fn wfile(&mut self, name: String) -> usize {
        if let Some(i) = self.wfiles.iter().position(|w| *w == name) {
            return i;
        }
        self.wfiles.push(name);
        self.wfiles.len() - 1
    }

    /// A label: up to a newline or `;` (trailing spaces dropped).
    fn label(&mut self) -> String {
        let start = self.i;
        while self.peek().is_some_and(|b| b != b'\n' && b != b';') {
            self.i += 1;
        }
        let raw = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        raw.trim_end().to_string()
    }

    /// A file name: the rest of the line.
    fn filename(&mut self) -> String {
        self.skip_ws();
        let start = self.i;
        while self.peek().is_some_and(|b| b != b'\n') {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    /// The text of `a`, `i`, `c` (one-line GNU form or backslash-newline form),
    /// with its newline; empty when the script ends right after `a\` (GNU
    /// then prints nothing, while `a\\` at the end is an empty line).
    fn text(&mut self) -> Result<Vec<u8>, ParseError> {
        self.skip_ws();
        let mut out = Vec::new();
        match self.peek() {
            None => return Err(self.err("expected \\ after `a', `c' or `i'")),
            Some(b'\\') => {
                self.i += 1;
                if self.peek() == Some(b'\n') {
                    self.i += 1;
                }
            }
            Some(_) => {}
        }
        let mut line = false;
        while let Some(c) = self.peek() {
            self.i += 1;
            line = true;
            match c {
                b'\\' => match self.peek() {
                    Some(d) => {
                        self.i += 1;
                        out.push(self.text_escape(d));
                    }
                    None => break,
                },
                b'\n' => break,
                _ => out.push(c),
            }
        }
        if line {
            out.push(b'\n');
        }
        Ok(out)
    }

    /// The byte `\d` stands for in `a`/`i`/`c` text (GNU's escapes; any other
    /// escaped byte is itself). Numeric escapes read their digits here.
    fn text_escape(&mut self, d: u8) -> u8 {
        match d {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'f' => 0x0c,
            b'v' => 0x0b,
            b'a' => 0x07,
            b'c' => match self.peek() {
                Some(x) if x != b'\n' => {
                    self.i += 1;
                    x.to_ascii_uppercase() ^ 0x40
                }
                _ => d,
            },
            b'd' | b'o' | b'x' => {
                let (radix, max) = match d {
                    b'd' => (10, 3),
                    b'o' => (8, 3),
                    _ => (16, 2),
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    let Some(dig) = self.peek().and_then(|b| (b as char).to_digit(radix)) else {
                        break;
                    };
                    v = v * radix + dig;
                    self.i += 1;
                    n += 1;
                }
                if n == 0 { d } else { (v & 0xFF) as u8 }
            }
            _ => d,
        }
    }

    fn subst(&mut self) -> Result<Kind, ParseError> {
        let Some(delim) = self.peek() else {
            return Err(self.err("unterminated `s' command"));
        };
        if delim == b'\n' || delim == b'\\' {
            return Err(self.err("unterminated `s' command"));
        }
        self.i += 1;
        let Some(pat) = self.delimited(delim, true) else {
            return Err(self.err("unterminated `s' command"));
        };
        let Some(rep) = self.delimited(delim, false) else {
            return Err(self.err("unterminated `s' command"));
        };
        let mut s = Subst {
            re: None,
            repl: parse_repl(&rep),
            global: false,
            nth: 1,
            print: false,
            wfile: None,
        };
        let mut icase = false;
        let mut multi = false;
        let mut have_n = false;
        loop {
            match self.peek() {
                Some(b'g') => {
                    if s.global {
                        self.i += 1;
                        return Err(self.err("multiple `g' options to `s' command"));
                    }
                    s.global = true;
                }
                Some(b'p') => {
                    if s.print {
                        self.i += 1;
                        return Err(self.err("multiple `p' options to `s' command"));
                    }
                    s.print = true;
                }
                Some(b'i' | b'I') => icase = true,
                Some(b'm' | b'M') => multi = true,
                Some(b'e') => return Err(ParseError(E_REFUSED.into())),
                Some(d) if d.is_ascii_digit() => {
                    if have_n {
                        self.i += 1;
                        return Err(self.err("multiple number options to `s' command"));
                    }
                    let n = self.number();
                    if n == 0 {
                        return Err(self.err("number option to `s' command may not be zero"));
                    }
                    s.nth = n;
                    have_n = true;
                    continue;
                }
                Some(b'w') => {
                    self.i += 1;
                    let name = self.filename();
                    if name.is_empty() {
                        return Err(self.err("missing filename in r/R/w/W commands"));
                    }
                    s.wfile = Some(self.wfile(name));
                    break;
                }
                None | Some(b';' | b'\n' | b'}' | b'#') => break,
                Some(c) if is_space(c) => break,
                Some(_) => {
                    self.i += 1;
                    return Err(self.err("unknown option to `s'"));
                }
            }
            self.i += 1;
        }
        s.re = self.compile(&pat, icase, multi)?;
        if let Some(m) = &s.re {
            let max = s
                .repl
                .iter()
                .filter_map(|r| match r {
                    Repl::Group(g) => Some(*g),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            if max > m.groups() {
                return Err(self.err(&format!("invalid reference \\{max} on `s' command's RHS")));
            }
        }
        Ok(Kind::S(Box::new(s)))
    }

    fn translit(&mut self) -> Result<Kind, ParseError> {
        let Some(delim) = self.peek() else {
            return Err(self.err("unterminated `y' command"));
        };
        self.i += 1;
        let Some(a) = self.delimited(delim, false) else {
            return Err(self.err("unterminated `y' command"));
        };
        let Some(b) = self.delimited(delim, false) else {
            return Err(self.err("unterminated `y' command"));
        };
        let a = unescape_y(&a);
        let b = unescape_y(&b);
        if a.len() != b.len() {
            return Err(self.err("strings for `y' command are different lengths"));
        }
        let mut map = Box::new([0u8; 256]);
        for (i, m) in map.iter_mut().enumerate() {
            *m = i as u8;
        }
        for (x, y) in a.iter().zip(b.iter()) {
            map[usize::from(*x)] = *y;
        }
        Ok(Kind::Y(map))
    }
}

/// `y` strings: `\\` is a backslash, `\n` a newline, other escapes keep the char.
fn unescape_y(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && i + 1 < s.len() {
            let d = s[i + 1];
            out.push(match d {
                b'n' => b'\n',
                b't' => b'\t',
                b'\n' => b'\n',
                _ => d,
            });
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// Parses an `s` replacement.
fn parse_repl(s: &[u8]) -> Vec<Repl> {
    let mut out: Vec<Repl> = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    let flush = |lit: &mut Vec<u8>, out: &mut Vec<Repl>| {
        if !lit.is_empty() {
            out.push(Repl::Lit(std::mem::take(lit)));
        }
    };
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c == b'&' {
            flush(&mut lit, &mut out);
            out.push(Repl::Group(0));
            continue;
        }
        if c != b'\\' {
            lit.push(c);
            continue;
        }
        let Some(&d) = s.get(i) else {
            lit.push(b'\\');
            break;
        };
        i += 1;
        match d {
            b'0'..=b'9' => {
                flush(&mut lit, &mut out);
                out.push(Repl::Group(usize::from(d - b'0')));
            }
            b'U' | b'L' | b'E' | b'u' | b'l' => {
                flush(&mut lit, &mut out);
                out.push(Repl::Case(d));
            }
            b'n' => lit.push(b'\n'),
            b't' => lit.push(b'\t'),
            b'r' => lit.push(b'\r'),
            b'f' => lit.push(0x0c),
            b'v' => lit.push(0x0b),
            b'a' => lit.push(0x07),
            b'c' => {
                if let Some(&x) = s.get(i) {
                    i += 1;
                    lit.push(x.to_ascii_uppercase() ^ 0x40);
                }
            }
            b'd' | b'o' | b'x' => {
                let (radix, max) = match d {
                    b'd' => (10, 3),
                    b'o' => (8, 3),
                    _ => (16, 2),
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    let Some(dig) = s.get(i).and_then(|&b| (b as char).to_digit(radix)) else {
                        break;
                    };
                    v = v * radix + dig;
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    lit.push(d);
                } else {
                    lit.push((v & 0xFF) as u8);
                }
            }
            _ => lit.push(d),
        }
    }
    flush(&mut lit, &mut out);
    out
}
