//! Tokens of awk program text. Regex literals are read on demand by the parser
//! (it alone knows whether `/` starts a regex or divides).

use crate::ast::Builtin;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Newline (a statement terminator).
    Newline,
    /// End of program text.
    Eof,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `^`
    Caret,
    /// `!`
    Not,
    /// `>`
    Gt,
    /// `<`
    Lt,
    /// `|`
    Pipe,
    /// `?`
    Question,
    /// `:`
    Colon,
    /// `~`
    Tilde,
    /// `!~`
    NoMatch,
    /// `$`
    Dollar,
    /// `=`
    Assign,
    /// `+=`
    AddAssign,
    /// `-=`
    SubAssign,
    /// `*=`
    MulAssign,
    /// `/=`
    DivAssign,
    /// `%=`
    ModAssign,
    /// `^=`
    PowAssign,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `++`
    Incr,
    /// `--`
    Decr,
    /// `>>`
    Append,
    /// Number literal.
    Number(f64),
    /// String literal (escapes processed).
    Str(Vec<u8>),
    /// Identifier.
    Name(String),
    /// Identifier directly followed by `(`.
    FuncName(String),
    /// Builtin function name.
    Builtin(Builtin),
    /// `BEGIN`
    Begin,
    /// `END`
    End,
    /// `function`/`func`
    Function,
    /// `if`
    If,
    /// `else`
    Else,
    /// `while`
    While,
    /// `for`
    For,
    /// `do`
    Do,
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `next`
    Next,
    /// `nextfile`
    Nextfile,
    /// `exit`
    Exit,
    /// `return`
    Return,
    /// `delete`
    Delete,
    /// `in`
    In,
    /// `getline`
    Getline,
    /// `print`
    Print,
    /// `printf`
    Printf,
    /// `system` (refused).
    System,
}

/// The lexer over program text.
#[derive(Clone)]
pub struct Lexer<'a> {
    src: &'a [u8],
    /// Byte position.
    pub pos: usize,
    /// Current line (1-based).
    pub line: usize,
}

/// Processes awk string escapes (`\n`, `\t`, `\ddd`, `\"`, ...); unknown escapes keep
/// their backslash like mawk.
pub fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c != b'\\' || i + 1 >= s.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let (b, n) = escape_at(s, i + 1);
        match b {
            Some(b) => out.push(b),
            None => out.extend_from_slice(&s[i..i + 1 + n]),
        }
        i += 1 + n;
    }
    out
}

/// Decodes the escape whose character starts at `s[i]`: the byte (None: keep as is)
/// and how many bytes it used.
fn escape_at(s: &[u8], i: usize) -> (Option<u8>, usize) {
    let Some(&c) = s.get(i) else {
        return (None, 0);
    };
    let b = match c {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'\\' => b'\\',
        b'"' => b'"',
        b'a' => 7,
        b'b' => 8,
        b'f' => 12,
        b'v' => 11,
        b'0'..=b'7' => {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < 3 && matches!(s.get(i + n), Some(b'0'..=b'7')) {
                v = v * 8 + (s[i + n] - b'0') as u32;
                n += 1;
            }
            return (Some(v as u8), n);
        }
        // mawk: `\x` and up to two hex digits.
        b'x' => {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < 2
                && let Some(d) = s.get(i + 1 + n).and_then(|&b| (b as char).to_digit(16))
            {
                v = v * 16 + d;
                n += 1;
            }
            if n == 0 {
                return (None, 1);
            }
            return (Some(v as u8), 1 + n);
        }
        _ => return (None, 1),
    };
    (Some(b), 1)
}

fn keyword(w: &str) -> Option<Tok> {
    Some(match w {
        "BEGIN" => Tok::Begin,
        "END" => Tok::End,
        // mawk 1.3.4 has no `func` abbreviation: it is an ordinary name.
        "function" => Tok::Function,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "for" => Tok::For,
        "do" => Tok::Do,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "next" => Tok::Next,
        "nextfile" => Tok::Nextfile,
        "exit" => Tok::Exit,
        "return" => Tok::Return,
        "delete" => Tok::Delete,
        "in" => Tok::In,
        "getline" => Tok::Getline,
        "print" => Tok::Print,
        "printf" => Tok::Printf,
        "system" => Tok::System,
        "length" => Tok::Builtin(Builtin::Length),
        "substr" => Tok::Builtin(Builtin::Substr),
        "index" => Tok::Builtin(Builtin::Index),
        "split" => Tok::Builtin(Builtin::Split),
        "sub" => Tok::Builtin(Builtin::Sub),
        "gsub" => Tok::Builtin(Builtin::Gsub),
        "match" => Tok::Builtin(Builtin::Match),
        "sprintf" => Tok::Builtin(Builtin::Sprintf),
        "tolower" => Tok::Builtin(Builtin::Tolower),
        "toupper" => Tok::Builtin(Builtin::Toupper),
        "int" => Tok::Builtin(Builtin::Int),
        "sqrt" => Tok::Builtin(Builtin::Sqrt),
        "exp" => Tok::Builtin(Builtin::Exp),
        "log" => Tok::Builtin(Builtin::Log),
        "sin" => Tok::Builtin(Builtin::Sin),
        "cos" => Tok::Builtin(Builtin::Cos),
        "atan2" => Tok::Builtin(Builtin::Atan2),
        "rand" => Tok::Builtin(Builtin::Rand),
        "srand" => Tok::Builtin(Builtin::Srand),
        "close" => Tok::Builtin(Builtin::Close),
        "fflush" => Tok::Builtin(Builtin::Fflush),
        _ => return None,
    })
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a [u8]) -> Self {
        Lexer {
            src,
            pos: 0,
            line: 1,
        }
    }

    fn peek_byte(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    /// True when the next non-blank character is `(`.
    pub fn peek_paren(&self) -> bool {
        self.src[self.pos.min(self.src.len())..]
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t'))
            == Some(&b'(')
    }

    /// Reads a regex literal body after its opening `/` (already consumed); `prefix`
    /// is text already lexed as part of it (`=` from `/=`).
    pub fn read_regex(&mut self, prefix: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = prefix.to_vec();
        // A `/` inside a bracket expression does not end the regex (mawk).
        let mut bracket: Option<usize> = None;
        loop {
            let Some(c) = self.peek_byte(0) else {
                return Err("runaway regular expression".into());
            };
            self.pos += 1;
            if let Some(start) = bracket {
                let first = out.len() == start || (out.len() == start + 1 && out[start] == b'^');
                if c == b']' && !first {
                    bracket = None;
                }
                if c == b'\n' {
                    return Err("runaway regular expression".into());
                }
                out.push(c);
                continue;
            }
            match c {
                b'\n' => return Err("runaway regular expression".into()),
                b'/' => return Ok(out),
                b'[' => {
                    out.push(c);
                    bracket = Some(out.len());
                }
                b'\\' if self.peek_byte(0) == Some(b'/') => {
                    out.push(b'/');
                    self.pos += 1;
                }
                b'\\' => {
                    out.push(b'\\');
                    if let Some(n) = self.peek_byte(0) {
                        out.push(n);
                        self.pos += 1;
                    }
                }
                _ => out.push(c),
            }
        }
    }

    /// The next token.
    pub fn next_tok(&mut self) -> Result<Tok, String> {
        loop {
            match self.peek_byte(0) {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if self.peek_byte(1) == Some(b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                }
                Some(b'\\')
                    if self.peek_byte(1) == Some(b'\r') && self.peek_byte(2) == Some(b'\n') =>
                {
                    self.pos += 3;
                    self.line += 1;
                }
                Some(b'#') => {
                    while let Some(c) = self.peek_byte(0) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(c) = self.peek_byte(0) else {
            return Ok(Tok::Eof);
        };
        self.pos += 1;
        let two = |l: &mut Self, next: u8, yes: Tok, no: Tok| {
            if l.peek_byte(0) == Some(next) {
                l.pos += 1;
                yes
            } else {
                no
            }
        };
        let t = match c {
            b'\n' => {
                self.line += 1;
                Tok::Newline
            }
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b';' => Tok::Semi,
            b',' => Tok::Comma,
            b'?' => Tok::Question,
            b':' => Tok::Colon,
            b'~' => Tok::Tilde,
            b'$' => Tok::Dollar,
            b'+' => match self.peek_byte(0) {
                Some(b'+') => {
                    self.pos += 1;
                    Tok::Incr
                }
                Some(b'=') => {
                    self.pos += 1;
                    Tok::AddAssign
                }
                _ => Tok::Plus,
            },
            b'-' => match self.peek_byte(0) {
                Some(b'-') => {
                    self.pos += 1;
                    Tok::Decr
                }
                Some(b'=') => {
                    self.pos += 1;
                    Tok::SubAssign
                }
                _ => Tok::Minus,
            },
            b'*' => two(self, b'=', Tok::MulAssign, Tok::Star),
            b'/' => two(self, b'=', Tok::DivAssign, Tok::Slash),
            b'%' => two(self, b'=', Tok::ModAssign, Tok::Percent),
            b'^' => two(self, b'=', Tok::PowAssign, Tok::Caret),
            b'=' => two(self, b'=', Tok::Eq, Tok::Assign),
            b'!' => match self.peek_byte(0) {
                Some(b'=') => {
                    self.pos += 1;
                    Tok::Ne
                }
                Some(b'~') => {
                    self.pos += 1;
                    Tok::NoMatch
                }
                _ => Tok::Not,
            },
            b'<' => two(self, b'=', Tok::Le, Tok::Lt),
            b'>' => match self.peek_byte(0) {
                Some(b'=') => {
                    self.pos += 1;
                    Tok::Ge
                }
                Some(b'>') => {
                    self.pos += 1;
                    Tok::Append
                }
                _ => Tok::Gt,
            },
            b'&' => {
                if self.peek_byte(0) == Some(b'&') {
                    self.pos += 1;
                    Tok::And
                } else {
                    return Err("syntax error at or near &".into());
                }
            }
            b'|' => two(self, b'|', Tok::Or, Tok::Pipe),
            b'"' => {
                let start = self.pos;
                loop {
                    match self.peek_byte(0) {
                        None | Some(b'\n') => return Err("runaway string constant".into()),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            if self.peek_byte(1) == Some(b'\n') {
                                self.line += 1;
                            }
                            self.pos += 2;
                        }
                        Some(_) => self.pos += 1,
                    }
                }
                let raw = &self.src[start..self.pos.min(self.src.len())];
                self.pos += 1;
                // A backslash-newline inside a string is a continuation.
                let raw: Vec<u8> = {
                    let mut v = Vec::with_capacity(raw.len());
                    let mut i = 0;
                    while i < raw.len() {
                        if raw[i] == b'\\' && raw.get(i + 1) == Some(&b'\n') {
                            i += 2;
                        } else {
                            v.push(raw[i]);
                            i += 1;
                        }
                    }
                    v
                };
                Tok::Str(unescape(&raw))
            }
            b'0'..=b'9' | b'.' => {
                let (v, n) = decimal_prefix(&self.src[self.pos - 1..]);
                if n == 0 {
                    return Err("syntax error at or near .".into());
                }
                let text = &self.src[self.pos - 1..self.pos - 1 + n];
                if crate::value::out_of_range(text, v) {
                    let which = if v.is_infinite() {
                        "overflow"
                    } else {
                        "underflow"
                    };
                    return Err(format!(
                        "{} : decimal {which}",
                        String::from_utf8_lossy(text)
                    ));
                }
                self.pos += n - 1;
                Tok::Number(v)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos - 1;
                while self
                    .peek_byte(0)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    self.pos += 1;
                }
                let w = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
                if let Some(k) = keyword(&w) {
                    k
                } else if self.peek_byte(0) == Some(b'(') {
                    Tok::FuncName(w)
                } else {
                    Tok::Name(w)
                }
            }
            other => {
                return Err(format!(
                    "syntax error at or near {}",
                    String::from_utf8_lossy(&[other])
                ));
            }
        };
        Ok(t)
    }
}

/// A decimal number at the start of `s` (program text has no hex or inf).
fn decimal_prefix(s: &[u8]) -> (f64, usize) {
    let mut j = 0;
    let mut digits = 0;
    while s.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
        digits += 1;
    }
    if s.get(j) == Some(&b'.') {
        j += 1;
        while s.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return (0.0, 0);
    }
    if matches!(s.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if s.get(k).is_some_and(u8::is_ascii_digit) {
            while s.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            j = k;
        }
    }
    let v = std::str::from_utf8(&s[..j])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0);
    (v, j)
}
