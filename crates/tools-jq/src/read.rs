//! A JSON text-stream reader with jq 1.6's leniency and error messages: values
//! may follow each other without separators, literals are scanned as tokens, and
//! every number becomes a double (big integers lose precision as in jq 1.6).

use crate::val::Val;

/// jq 1.6 refuses deeper nesting.
const MAX_DEPTH: usize = 256;

/// Converts a double to a value.
pub fn num_val(f: f64) -> Val {
    Val::Num(f)
}

/// Parses a number the way jq's literal scanner does; `None` when invalid.
pub fn parse_number(tok: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    // jq 1.6 hands other tokens to strtod, which also reads `NaN`, `inf` and
    // `Infinity` (any case, signed) — but a token starting with `n` is a
    // misspelt `null` ("Invalid literal"), so `nan` alone is refused.
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !s.starts_with(['t', 'f', 'n']) {
        let neg = s.starts_with('-');
        let special = match unsigned.to_ascii_lowercase().as_str() {
            "nan" => Some(f64::NAN),
            "inf" | "infinity" => Some(f64::INFINITY),
            _ => None,
        };
        if let Some(v) = special {
            return Some(if neg { -v } else { v });
        }
    }
    let valid = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        && s.bytes().any(|b| b.is_ascii_digit());
    if !valid {
        return None;
    }
    s.parse::<f64>().ok()
}

/// A stream of JSON values over an in-memory text.
pub struct Reader {
    data: Vec<u8>,
    pos: usize,
    line: usize,
    line_start: usize,
    failed: bool,
}

/// A parse error: jq's message and the position where it was noticed.
#[derive(Debug, Clone)]
pub struct ParseError {
    /// What went wrong (`Invalid numeric literal`).
    pub msg: String,
    /// 1-based line.
    pub line: usize,
    /// Bytes consumed on that line.
    pub col: usize,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at line {}, column {}", self.msg, self.line, self.col)
    }
}

fn is_structural(b: u8) -> bool {
    matches!(b, b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"')
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Reader {
    /// A reader over `data`.
    pub fn new(data: Vec<u8>) -> Self {
        // jq's parser skips a UTF-8 byte order mark at the start of its text.
        let pos = if data.starts_with(b"\xef\xbb\xbf") {
            3
        } else {
            0
        };
        Reader {
            data,
            pos,
            line: 1,
            line_start: 0,
            failed: false,
        }
    }

    /// How many bytes have been consumed.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Whether the data is empty or ends with a newline.
    pub fn ends_with_newline(&self) -> bool {
        self.data.last().is_none_or(|&b| b == b'\n')
    }

    /// The text not consumed yet.
    pub fn rest(&self) -> &[u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    /// The current line number (for `jq: error (at <stdin>:N)`).
    pub fn line(&self) -> usize {
        // jq counts the newlines it has consumed so far.
        self.line - 1
    }

    fn err(&self, msg: &str) -> ParseError {
        ParseError {
            msg: msg.to_string(),
            line: self.line,
            col: self.pos - self.line_start,
        }
    }

    fn bump(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(b)
    }

    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if !is_ws(b) {
                break;
            }
            self.bump();
        }
    }

    /// The next value, an error (after which the stream ends), or `None` at the end.
    pub fn next_value(&mut self) -> Option<Result<Val, ParseError>> {
        if self.failed {
            return None;
        }
        self.skip_ws();
        let first = self.peek()?;
        let mut r = self.value(0);
        // jq only emits a top-level literal once the next token is known to be
        // acceptable; a stray `,` `]` `}` `:` right after it is an error instead.
        if r.is_ok()
            && !matches!(first, b'[' | b'{' | b'"')
            && matches!(self.peek(), Some(b',' | b']' | b'}' | b':'))
        {
            r = self.value(0);
        }
        if r.is_err() {
            self.failed = true;
        } else {
            // Consume the rest of the line's whitespace, as jq's line count reflects.
            while let Some(b) = self.peek() {
                if b == b' ' || b == b'\t' || b == b'\r' {
                    self.bump();
                } else {
                    if b == b'\n' {
                        self.bump();
                    }
                    break;
                }
            }
        }
        Some(r)
    }

    fn eof_err(&self) -> ParseError {
        self.err("Unfinished JSON term at EOF")
    }

    fn value(&mut self, depth: usize) -> Result<Val, ParseError> {
        self.skip_ws();
        let Some(b) = self.peek() else {
            return Err(self.eof_err());
        };
        match b {
            b'[' | b'{' => {
                self.bump();
                if depth >= MAX_DEPTH {
                    return Err(self.err("Exceeds depth limit for parsing"));
                }
                if b == b'[' {
                    self.array(depth + 1)
                } else {
                    self.object(depth + 1)
                }
            }
            b'"' => {
                self.bump();
                self.string().map(Val::from)
            }
            b']' | b'}' => {
                self.bump();
                Err(self.err(if b == b']' {
                    "Unmatched ']'"
                } else {
                    "Unmatched '}'"
                }))
            }
            b',' => {
                self.bump();
                Err(self.err("Expected value before ','"))
            }
            b':' => {
                self.bump();
                Err(self.err("':' not as part of an object"))
            }
            _ => self.literal(),
        }
    }

    fn literal(&mut self) -> Result<Val, ParseError> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if is_ws(b) || is_structural(b) {
                break;
            }
            self.bump();
        }
        let tok = self.data[start..self.pos].to_vec();
        let tok = tok.as_slice();
        let v = match tok {
            b"true" => Some(Val::Bool(true)),
            b"false" => Some(Val::Bool(false)),
            b"null" => Some(Val::Null),
            _ => parse_number(tok).map(num_val),
        };
        match v {
            Some(v) => Ok(v),
            None => {
                // jq notices the bad token when the next character arrives.
                let at_eof = self.peek().is_none();
                if !at_eof {
                    self.bump();
                }
                let first = tok.first().copied().unwrap_or(b'0');
                let msg = if matches!(first, b't' | b'f' | b'n') {
                    "Invalid literal"
                } else {
                    "Invalid numeric literal"
                };
                if at_eof {
                    Err(self.err(&format!("{msg} at EOF")))
                } else {
                    Err(self.err(msg))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Val, ParseError> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Val::from_iter(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.bump() {
                Some(b',') => continue,
                Some(b']') => return Ok(Val::from_iter(items)),
                Some(b'}') => return Err(self.err("Unmatched '}' in the middle of an array")),
                Some(b':') => return Err(self.err("':' not as part of an object")),
                Some(_) => return Err(self.err("Expected separator between values")),
                None => return Err(self.eof_err()),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Val, ParseError> {
        let mut map = crate::val::Map::default();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Val::obj(map));
        }
        loop {
            self.skip_ws();
            let key = match self.bump() {
                Some(b'"') => self.string()?,
                None => return Err(self.eof_err()),
                Some(_) => return Err(self.err("Object keys must be strings")),
            };
            self.skip_ws();
            match self.bump() {
                Some(b':') => {}
                None => return Err(self.eof_err()),
                Some(_) => return Err(self.err("Objects must consist of key:value pairs")),
            }
            let v = self.value(depth)?;
            map.insert(Val::from(key), v);
            self.skip_ws();
            match self.bump() {
                Some(b',') => continue,
                Some(b'}') => return Ok(Val::obj(map)),
                Some(b']') => return Err(self.err("Unmatched ']' in the middle of an object")),
                Some(_) => return Err(self.err("Expected separator between values")),
                None => return Err(self.eof_err()),
            }
        }
    }

    /// Reads a string literal (after its opening quote). As in jq 1.6's
    /// tokenizer, the literal is first read to its closing quote and then
    /// decoded, so an error in an escape is reported after the quote.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let mut escaped = false;
        loop {
            let Some(b) = self.bump() else {
                return Err(self.err("Unfinished string at EOF"));
            };
            match b {
                b'"' if !escaped => break,
                b'\\' => escaped = !escaped,
                _ => escaped = false,
            }
        }
        let body = &self.data[start..self.pos - 1];
        decode(body).map_err(|msg| self.err(msg))
    }
}

/// Reads four hex digits at `b[i..]`; the error is jq 1.6's message.
fn hex4(b: &[u8], i: usize) -> Result<u32, &'static str> {
    let digits = b.get(i..i + 4).ok_or("Invalid \\uXXXX escape")?;
    let mut v = 0;
    for &d in digits {
        let d = (d as char)
            .to_digit(16)
            .ok_or("Invalid characters in \\uXXXX escape")?;
        v = v * 16 + d;
    }
    Ok(v)
}

/// Decodes the body of a string literal (escapes, surrogate pairs); raw
/// control characters are an error, as in jq 1.6.
fn decode(body: &[u8]) -> Result<String, &'static str> {
    let mut buf: Vec<u8> = Vec::with_capacity(body.len());
    let mut raw_control = false;
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        i += 1;
        if b != b'\\' {
            raw_control |= b < 0x20;
            buf.push(b);
            continue;
        }
        let e = body.get(i).copied().unwrap_or(0);
        i += 1;
        let c = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = hex4(body, i)?;
                i += 4;
                if (0xD800..0xDC00).contains(&hi) {
                    let bad = "Invalid \\uXXXX\\uXXXX surrogate pair escape";
                    if body.get(i..i + 2) != Some(b"\\u") {
                        return Err(bad);
                    }
                    let lo = hex4(body, i + 2).map_err(|_| bad)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(bad);
                    }
                    i += 6;
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    char::from_u32(c).unwrap_or('\u{FFFD}')
                } else {
                    char::from_u32(hi).unwrap_or('\u{FFFD}')
                }
            }
            _ => return Err("Invalid escape"),
        };
        let mut tmp = [0u8; 4];
        buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }
    if raw_control {
        return Err(
            "Invalid string: control characters from U+0000 through U+001F must be escaped",
        );
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &str) -> Vec<Result<Val, String>> {
        let mut r = Reader::new(s.as_bytes().to_vec());
        std::iter::from_fn(|| r.next_value())
            .map(|x| x.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn stream_and_errors() {
        assert_eq!(all("1 2[3]").len(), 3);
        let e = all("{\"a\":1} {\n");
        assert_eq!(
            e.last().cloned().and_then(Result::err).unwrap_or_default(),
            "Unfinished JSON term at EOF at line 2, column 0"
        );
        let e = all("[1,\n2,x]");
        assert_eq!(
            e.last().cloned().and_then(Result::err).unwrap_or_default(),
            "Invalid numeric literal at line 2, column 4"
        );
    }
}
