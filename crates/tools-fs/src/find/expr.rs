//! `find` expressions: the tree and its parser (operators `! -not ( ) -a -and
//! -o -or ,`, tests, actions and the global options mixed among them).

use crate::mode;
use regex::bytes::Regex;

/// A numeric comparison: `+n`, `-n` or `n`.
#[derive(Clone, Copy, Debug)]
pub enum Cmp {
    /// Greater than.
    Gt(i64),
    /// Less than.
    Lt(i64),
    /// Equal.
    Eq(i64),
}

impl Cmp {
    /// Parses `+n`, `-n`, `n`.
    pub fn parse(s: &str) -> Option<Cmp> {
        let (ctor, rest): (fn(i64) -> Cmp, &str) = match s.as_bytes().first() {
            Some(b'+') => (Cmp::Gt, &s[1..]),
            Some(b'-') => (Cmp::Lt, &s[1..]),
            _ => (Cmp::Eq, s),
        };
        if rest.is_empty() || !rest.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some(ctor(rest.parse().ok()?))
    }

    /// True if `v` satisfies the comparison.
    pub fn test(self, v: i64) -> bool {
        match self {
            Cmp::Gt(n) => v > n,
            Cmp::Lt(n) => v < n,
            Cmp::Eq(n) => v == n,
        }
    }
}

/// Which timestamp a time test reads.
#[derive(Clone, Copy, Debug)]
pub enum Stamp {
    /// Modification.
    M,
    /// Access.
    A,
    /// Status change.
    C,
}

/// How `-perm` compares.
#[derive(Clone, Copy, Debug)]
pub enum PermKind {
    /// Exactly these bits.
    Exact,
    /// All of these bits (`-mode`).
    All,
    /// Any of these bits (`/mode`).
    Any,
}

/// An expression node.
#[derive(Debug)]
pub enum Expr {
    /// `a -a b` (b only when a is true).
    And(Box<Expr>, Box<Expr>),
    /// `a -o b` (b only when a is false).
    Or(Box<Expr>, Box<Expr>),
    /// `a , b` (both; the value is b's).
    Comma(Box<Expr>, Box<Expr>),
    /// `! a`.
    Not(Box<Expr>),
    /// `-true` and the global options.
    True,
    /// `-false`.
    False,
    /// `-name`/`-iname` (pattern, case-insensitive).
    Name(Vec<u8>, bool),
    /// `-path`/`-ipath`/`-wholename`.
    Path(Vec<u8>, bool),
    /// `-regex`/`-iregex` on the whole path.
    Regex(Regex),
    /// `-type`/`-xtype` (letters, look through links).
    Type(Vec<u8>, bool),
    /// `-size` (comparison in units of the given bytes, rounded up).
    Size(Cmp, u64),
    /// `-mtime`/`-mmin` and friends (units of the given seconds).
    Time(Stamp, Cmp, i64),
    /// `-newer`/`-newerXY`: the stamp is later than the time.
    Newer(Stamp, (i64, i64)),
    /// `-empty`.
    Empty,
    /// `-perm`.
    Perm(u32, PermKind),
    /// `-links`.
    Links(Cmp),
    /// `-inum`.
    Inum(Cmp),
    /// `-uid`.
    Uid(u32),
    /// `-gid`.
    Gid(u32),
    /// `-user` (name or number).
    UserName(String),
    /// `-group` (name or number).
    GroupName(String),
    /// `-readable`/`-writable`/`-executable` (access(2) mode).
    Access(i32),
    /// `-print`.
    Print,
    /// `-print0`.
    Print0,
    /// `-printf`.
    Printf(Vec<u8>),
    /// `-ls`.
    Ls,
    /// `-delete`.
    Delete,
    /// `-prune`.
    Prune,
    /// `-quit`.
    Quit,
    /// `-exec`/`-execdir`.
    Exec(Exec),
}

/// One `-exec`/`-execdir` action.
#[derive(Debug)]
pub struct Exec {
    /// The command template (with `{}`).
    pub argv: Vec<String>,
    /// `+` form: batch many files per command.
    pub plus: bool,
    /// `-execdir`: run in the file's directory.
    pub dir: bool,
    /// Index of its batch buffer.
    pub id: usize,
}

/// Options found while parsing (GNU's "global options").
#[derive(Default)]
pub struct Globals {
    /// `-maxdepth`.
    pub maxdepth: Option<usize>,
    /// `-mindepth`.
    pub mindepth: usize,
    /// `-depth` (or implied by `-delete`).
    pub depth_first: bool,
    /// `-L` / `-follow`.
    pub follow: bool,
    /// `-daystart`.
    pub daystart: bool,
    /// Number of `-exec ... +` batches.
    pub batches: usize,
    /// The expression has an action other than -prune/-quit.
    pub has_action: bool,
}

/// Looks up the reference time of a `-newer` file.
/// The reference file's (modification, access, change) times.
pub type NewerLookup<'a> = &'a dyn Fn(&str) -> Result<Times, String>;

/// (modification, access, change) as (seconds, nanoseconds).
pub type Times = ((i64, i64), (i64, i64), (i64, i64));

/// Parser state over the expression arguments.
pub struct Parser<'a> {
    args: &'a [String],
    pos: usize,
    /// Globals collected on the way.
    pub g: Globals,
    /// Reference times read for `-newer` (resolved by the caller).
    pub newer_lookup: NewerLookup<'a>,
    regextype_extended: bool,
    /// The zone `-newermt` dates are read in.
    pub tz: jiff::tz::TimeZone,
}

impl<'a> Parser<'a> {
    /// A parser over `args`.
    pub fn new(args: &'a [String], newer_lookup: NewerLookup<'a>) -> Self {
        Parser {
            args,
            pos: 0,
            g: Globals::default(),
            newer_lookup,
            regextype_extended: false,
            tz: jiff::tz::TimeZone::UTC,
        }
    }

    fn peek(&self) -> Option<&'a str> {
        self.args.get(self.pos).map(String::as_str)
    }

    /// Parses the whole expression (`None` when empty).
    pub fn parse_all(&mut self) -> Result<Option<Expr>, String> {
        if self.peek().is_none() {
            return Ok(None);
        }
        let e = self.comma()?;
        if let Some(t) = self.peek() {
            if t == ")" {
                return Err("invalid expression; you have too many ')'".into());
            }
            return Err(format!("paths must precede expression: `{t}'"));
        }
        Ok(Some(e))
    }

    fn comma(&mut self) -> Result<Expr, String> {
        let mut l = self.or()?;
        while self.peek() == Some(",") {
            self.pos += 1;
            let r = self.or()?;
            l = Expr::Comma(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut l = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.pos += 1;
            if self.peek().is_none() {
                return Err("invalid expression; you have used a binary operator '-o' with nothing after it.".into());
            }
            let r = self.and()?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut l = self.unary()?;
        loop {
            match self.peek() {
                Some("-a" | "-and") => {
                    self.pos += 1;
                    if self.peek().is_none() {
                        return Err("invalid expression; you have used a binary operator '-a' with nothing after it.".into());
                    }
                }
                Some("-o" | "-or" | "," | ")") | None => return Ok(l),
                Some(_) => {}
            }
            let r = self.unary()?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some("!" | "-not") => {
                self.pos += 1;
                if self.peek().is_none() {
                    return Err("invalid expression; you have used a binary operator '!' with nothing after it.".into());
                }
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.pos += 1;
                if self.peek() == Some(")") {
                    return Err("invalid expression; empty parentheses are not allowed.".into());
                }
                let e = self.comma()?;
                if self.peek() != Some(")") {
                    return Err("invalid expression; I was expecting to find a ')' somewhere but did not see one.".into());
                }
                self.pos += 1;
                Ok(e)
            }
            Some(_) => self.primary(),
            None => Err("invalid expression".into()),
        }
    }

    fn arg(&mut self, pred: &str) -> Result<&'a str, String> {
        let v = self
            .args
            .get(self.pos)
            .ok_or_else(|| format!("missing argument to `{pred}'"))?;
        self.pos += 1;
        Ok(v.as_str())
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(p) = self.peek() else {
            return Err("invalid expression".into());
        };
        self.pos += 1;
        let e = match p {
            "-true" => Expr::True,
            "-false" => Expr::False,
            "-name" | "-iname" => Expr::Name(self.arg(p)?.as_bytes().to_vec(), p == "-iname"),
            "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                Expr::Path(self.arg(p)?.as_bytes().to_vec(), p.starts_with("-i"))
            }
            "-regex" | "-iregex" => {
                let r = self.arg(p)?;
                let body = if self.regextype_extended {
                    r.to_string()
                } else {
                    emacs_to_regex(r)
                };
                let pat = format!("{}^(?:{body})$", if p == "-iregex" { "(?i)" } else { "" });
                Expr::Regex(
                    Regex::new(&pat).map_err(|_| format!("Invalid regular expression `{r}'"))?,
                )
            }
            "-regextype" => {
                let t = self.arg(p)?;
                self.regextype_extended = matches!(
                    t,
                    "posix-extended" | "egrep" | "posix-egrep" | "awk" | "gnu-awk"
                );
                Expr::True
            }
            "-type" | "-xtype" => {
                let t = self.arg(p)?;
                let letters: Vec<u8> = t.split(',').filter_map(|s| s.bytes().next()).collect();
                let valid = t.split(',').all(|s| s.len() == 1 && "fdlpsbcD".contains(s));
                if !valid {
                    return Err(format!("Unknown argument to {p}: {t}"));
                }
                Expr::Type(letters, p == "-xtype")
            }
            "-size" => {
                let s = self.arg(p)?;
                let (num, unit) = match s.as_bytes().last() {
                    Some(b'c') => (&s[..s.len() - 1], 1),
                    Some(b'w') => (&s[..s.len() - 1], 2),
                    Some(b'b') => (&s[..s.len() - 1], 512),
                    Some(b'k') => (&s[..s.len() - 1], 1024),
                    Some(b'M') => (&s[..s.len() - 1], 1 << 20),
                    Some(b'G') => (&s[..s.len() - 1], 1 << 30),
                    _ => (s, 512),
                };
                let c = Cmp::parse(num).ok_or_else(|| format!("invalid -size type `{s}'"))?;
                Expr::Size(c, unit)
            }
            "-mtime" | "-atime" | "-ctime" | "-mmin" | "-amin" | "-cmin" => {
                let s = self.arg(p)?;
                let c = Cmp::parse(s).ok_or_else(|| format!("invalid argument `{s}' to `{p}'"))?;
                let stamp = match p.as_bytes().get(1) {
                    Some(b'a') => Stamp::A,
                    Some(b'c') => Stamp::C,
                    _ => Stamp::M,
                };
                Expr::Time(stamp, c, if p.ends_with("min") { 60 } else { 86400 })
            }
            "-newer" | "-anewer" | "-cnewer" => {
                let f = self.arg(p)?;
                let (t, _, _) = (self.newer_lookup)(f)?;
                let stamp = match p {
                    "-anewer" => Stamp::A,
                    "-cnewer" => Stamp::C,
                    _ => Stamp::M,
                };
                Expr::Newer(stamp, t)
            }
            _ if p.starts_with("-newer") && p.len() == 8 => {
                let b = p.as_bytes();
                let stamp = |c: u8| match c {
                    b'a' => Some(Stamp::A),
                    b'c' => Some(Stamp::C),
                    b'm' => Some(Stamp::M),
                    _ => None,
                };
                let (Some(&x), Some(&y)) = (b.get(6), b.get(7)) else {
                    return Err(format!("unknown predicate `{p}'"));
                };
                let Some(mine) = stamp(x) else {
                    return Err(format!("unknown predicate `{p}'"));
                };
                let v = self.arg(p)?;
                let t = if y == b't' {
                    let ts = crate::date::parse_date(v, &self.tz, jiff::Timestamp::now())
                        .ok_or_else(|| {
                            format!("I cannot figure out how to interpret `{v}' as a date or time")
                        })?;
                    (ts.as_second(), i64::from(ts.subsec_nanosecond()))
                } else {
                    if stamp(y).is_none() {
                        return Err(format!("unknown predicate `{p}'"));
                    }
                    let (m, a, c) = (self.newer_lookup)(v)?;
                    match y {
                        b'a' => a,
                        b'c' => c,
                        _ => m,
                    }
                };
                Expr::Newer(mine, t)
            }
            "-empty" => Expr::Empty,
            "-perm" => {
                let s = self.arg(p)?;
                let (kind, m) = match s.as_bytes().first() {
                    Some(b'-') => (PermKind::All, &s[1..]),
                    Some(b'/') => (PermKind::Any, &s[1..]),
                    _ => (PermKind::Exact, s),
                };
                let parsed = mode::parse(m).ok_or_else(|| format!("invalid mode `{s}'"))?;
                Expr::Perm(mode::apply(&parsed, 0, false, 0), kind)
            }
            "-links" => {
                let s = self.arg(p)?;
                Expr::Links(
                    Cmp::parse(s).ok_or_else(|| format!("invalid argument `{s}' to `{p}'"))?,
                )
            }
            "-inum" => {
                let s = self.arg(p)?;
                Expr::Inum(Cmp::parse(s).ok_or_else(|| format!("invalid argument `{s}' to `{p}'"))?)
            }
            "-uid" | "-gid" => {
                let s = self.arg(p)?;
                let n: u32 = s
                    .parse()
                    .map_err(|_| format!("invalid argument `{s}' to `{p}'"))?;
                if p == "-uid" {
                    Expr::Uid(n)
                } else {
                    Expr::Gid(n)
                }
            }
            "-user" => Expr::UserName(self.arg(p)?.to_string()),
            "-group" => Expr::GroupName(self.arg(p)?.to_string()),
            "-readable" => Expr::Access(libc::R_OK),
            "-writable" => Expr::Access(libc::W_OK),
            "-executable" => Expr::Access(libc::X_OK),
            "-print" => {
                self.g.has_action = true;
                Expr::Print
            }
            "-print0" => {
                self.g.has_action = true;
                Expr::Print0
            }
            "-printf" => {
                self.g.has_action = true;
                Expr::Printf(self.arg(p)?.as_bytes().to_vec())
            }
            "-ls" => {
                self.g.has_action = true;
                Expr::Ls
            }
            "-delete" => {
                self.g.has_action = true;
                self.g.depth_first = true;
                Expr::Delete
            }
            "-prune" => Expr::Prune,
            "-quit" => Expr::Quit,
            "-ok" | "-okdir" => {
                return Err(format!(
                    "{p} is interactive and not supported here (no terminal to answer prompts); use -exec"
                ));
            }
            "-exec" | "-execdir" => {
                self.g.has_action = true;
                let mut argv = Vec::new();
                let mut plus = false;
                loop {
                    let Some(a) = self.args.get(self.pos) else {
                        return Err(format!("missing argument to `{p}'"));
                    };
                    self.pos += 1;
                    if a == ";" {
                        break;
                    }
                    if a == "+" && argv.last().is_some_and(|l: &String| l == "{}") {
                        plus = true;
                        break;
                    }
                    argv.push(a.clone());
                }
                if argv.is_empty() {
                    return Err(format!("missing argument to `{p}'"));
                }
                let id = self.g.batches;
                if plus {
                    argv.pop();
                    self.g.batches += 1;
                }
                Expr::Exec(Exec {
                    argv,
                    plus,
                    dir: p == "-execdir",
                    id,
                })
            }
            "-maxdepth" | "-mindepth" => {
                let s = self.arg(p)?;
                let n: usize = s.parse().map_err(|_| {
                    format!("Expected a positive decimal integer argument to {p}, but got `{s}'")
                })?;
                if p == "-maxdepth" {
                    self.g.maxdepth = Some(n);
                } else {
                    self.g.mindepth = n;
                }
                Expr::True
            }
            "-depth" | "-d" => {
                self.g.depth_first = true;
                Expr::True
            }
            "-follow" => {
                self.g.follow = true;
                Expr::True
            }
            "-daystart" => {
                self.g.daystart = true;
                Expr::True
            }
            "-xdev"
            | "-mount"
            | "-noleaf"
            | "-ignore_readdir_race"
            | "-noignore_readdir_race"
            | "-nowarn"
            | "-warn" => Expr::True,
            _ => {
                if p.starts_with('-') && p.len() > 1 {
                    return Err(format!("unknown predicate `{p}'"));
                }
                return Err(format!("paths must precede expression: `{p}'"));
            }
        };
        Ok(e)
    }
}

/// Translates an Emacs regular expression (find's default `-regextype`) into
/// `regex` syntax: `\( \) \|` are operators, bare `( ) | { }` are literals.
pub fn emacs_to_regex(r: &str) -> String {
    let mut out = String::new();
    let mut chars = r.chars().peekable();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        if in_bracket {
            if c == ']' {
                in_bracket = false;
            }
            if c == '\\' || c == '[' && chars.peek() != Some(&':') {
                out.push('\\');
            }
            out.push(c);
            continue;
        }
        match c {
            '\\' => match chars.next() {
                Some('(') => out.push('('),
                Some(')') => out.push(')'),
                Some('|') => out.push('|'),
                Some(d) if d.is_ascii_digit() => out.push_str(&format!("\\{d}")),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push_str("\\\\"),
            },
            '(' | ')' | '|' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '[' => {
                in_bracket = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}
