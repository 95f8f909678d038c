//! `join`: join the lines of two sorted files on a common field, as GNU
//! coreutils 9.1 does: fields at runs of blanks (leading blanks skipped) or at
//! each `-t` character, byte order (`-i`: ignoring case), every pair of lines
//! with equal keys joined, `-a`/`-v` for unpaired lines, `-o` (`auto`, `0`,
//! `N.M`) with `-e` for missing fields, `--header`, `-z`; the order of the
//! inputs checked as GNU does (a warning and status 1 once lines could not be
//! paired, an error with `--check-order`).

use crate::common::{BUF, Input, finish, open_file, usage};
use safesh_utils::args::{self, OrderCheck, Spec};
use safesh_utils::{UtilCtx, UtilResult, io_error_text};
use std::cmp::Ordering;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const SPEC: Spec = Spec {
    flags: "iz",
    valued: "aejot12v",
    long: &[
        ("ignore-case", false, "i"),
        ("zero-terminated", false, "z"),
        ("check-order", false, "check-order"),
        ("nocheck-order", false, "nocheck-order"),
        ("header", false, "header"),
    ],
    stop_at_operand: false,
};

/// One field of an `-o` list: the join field, or field `.1` of file `.0`.
#[derive(Clone, Copy)]
enum OutField {
    Join,
    Of(usize, usize),
}

struct Opts {
    /// Join fields, 0-based, of file 1 and file 2.
    key: [usize; 2],
    /// `-t`: the one separator; `None`: runs of blanks.
    tab: Option<u8>,
    ignore_case: bool,
    eol: u8,
    unpaired: [bool; 2],
    paired: bool,
    empty: Option<Vec<u8>>,
    /// `-o` as a list; `auto` is [`Opts::auto`].
    format: Option<Vec<OutField>>,
    auto: bool,
    check: OrderCheck,
    header: bool,
}

/// Runs `join`.
pub fn join(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let o = match options(&p) {
        Ok(o) => o,
        Err(msg) => {
            let name = ctx.name().to_string();
            let _ = writeln!(ctx.stderr, "{name}: {msg}");
            return Ok(1);
        }
    };
    match p.operands.len() {
        0 => return Ok(usage(ctx, "missing operand", 1)),
        1 => {
            let msg = format!("missing operand after '{}'", p.operands[0]);
            return Ok(usage(ctx, &msg, 1));
        }
        2 => {}
        _ => {
            let msg = format!("extra operand '{}'", p.operands[2]);
            return Ok(usage(ctx, &msg, 1));
        }
    }
    let r = run(ctx, &o, [&p.operands[0], &p.operands[1]]);
    finish(ctx, r)
}

fn field_number(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n - 1),
        _ => Err(format!("invalid field number: '{text}'")),
    }
}

fn options(p: &args::Parsed) -> Result<Opts, String> {
    let mut key = [0usize; 2];
    let mut unpaired = [false; 2];
    let mut paired = true;
    let (mut format, mut auto) = (None::<Vec<OutField>>, false);
    let mut tab: Option<u8> = None;
    for opt in &p.opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.name.as_str() {
            "1" => key[0] = field_number(v)?,
            "2" => key[1] = field_number(v)?,
            "j" => {
                let n = field_number(v)?;
                key = [n, n];
            }
            "a" | "v" => {
                let which = match v {
                    "1" => 0,
                    "2" => 1,
                    _ => return Err(format!("invalid field number: '{v}'")),
                };
                unpaired[which] = true;
                if opt.name == "v" {
                    paired = false;
                }
            }
            "t" => {
                let b = v.as_bytes();
                let t = match b {
                    [] => b'\n',
                    [c] => *c,
                    [b'\\', b'0'] => 0,
                    _ => return Err(format!("multi-character tab '{v}'")),
                };
                if tab.is_some_and(|old| old != t) {
                    return Err("incompatible tabs".into());
                }
                tab = Some(t);
            }
            "o" => {
                if v == "auto" {
                    auto = true;
                    continue;
                }
                let list = format.get_or_insert_with(Vec::new);
                for spec in v.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
                    if spec == "0" {
                        list.push(OutField::Join);
                        continue;
                    }
                    let (file, field) = match spec.split_once('.') {
                        Some(("1", f)) => (0, f),
                        Some(("2", f)) => (1, f),
                        _ => return Err(format!("invalid field specifier: '{spec}'")),
                    };
                    list.push(OutField::Of(file, field_number(field)?));
                }
            }
            _ => {}
        }
    }
    let check = OrderCheck::from_options(p);
    Ok(Opts {
        key,
        tab,
        ignore_case: p.has("i"),
        eol: if p.has("z") { 0 } else { b'\n' },
        unpaired,
        paired,
        empty: p.value("e").map(|e| e.as_bytes().to_vec()),
        format: if auto { None } else { format },
        auto,
        check,
        header: p.has("header"),
    })
}

/// A line without its delimiter, and where its fields are.
#[derive(Default, Clone)]
struct Line {
    text: Vec<u8>,
    fields: Vec<(usize, usize)>,
}

impl Line {
    fn new(text: Vec<u8>, tab: Option<u8>) -> Line {
        let mut fields = Vec::new();
        let b = &text;
        match tab {
            _ if b.is_empty() => {}
            Some(b'\n') => fields.push((0, b.len())),
            Some(t) => {
                let mut start = 0;
                for (i, &c) in b.iter().enumerate() {
                    if c == t {
                        fields.push((start, i));
                        start = i + 1;
                    }
                }
                fields.push((start, b.len()));
            }
            None => {
                let blank = |c: u8| c == b' ' || c == b'\t' || c == b'\n';
                let mut i = 0;
                while i < b.len() {
                    while i < b.len() && blank(b[i]) {
                        i += 1;
                    }
                    if i == b.len() {
                        // Blanks at the end after a field: GNU adds an empty field.
                        if !fields.is_empty() {
                            fields.push((i, i));
                        }
                        break;
                    }
                    let start = i;
                    while i < b.len() && !blank(b[i]) {
                        i += 1;
                    }
                    fields.push((start, i));
                }
            }
        }
        Line { text, fields }
    }

    fn field(&self, n: usize) -> Option<&[u8]> {
        self.fields.get(n).map(|&(s, e)| &self.text[s..e])
    }
}

/// GNU's key order: a missing or empty key first, then bytes (`-i`: upper-cased).
fn key_cmp(a: &Line, fa: usize, b: &Line, fb: usize, ignore_case: bool) -> Ordering {
    key_order(
        a.field(fa).unwrap_or_default(),
        b.field(fb).unwrap_or_default(),
        ignore_case,
    )
}

/// [`key_cmp`] of two keys.
fn key_order(ka: &[u8], kb: &[u8], ignore_case: bool) -> Ordering {
    match (ka.is_empty(), kb.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ if ignore_case => ka
            .iter()
            .map(u8::to_ascii_uppercase)
            .cmp(kb.iter().map(u8::to_ascii_uppercase)),
        _ => ka.cmp(kb),
    }
}

/// Why reading stopped early.
enum Halt {
    Io(io::Error),
    /// `--check-order` found a line out of order (already reported).
    Disorder,
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Halt {
        Halt::Io(e)
    }
}

/// One input: its lines as read, with what the order check needs.
struct Source<'a> {
    name: String,
    /// 0 for file 1, 1 for file 2.
    which: usize,
    reader: BufReader<Input<'a>>,
    line_no: u64,
    /// The key of the line read before, kept while the order may be checked.
    prev_key: Option<Vec<u8>>,
    warned: bool,
}

/// The state of a join.
struct Join<'o, W: Write> {
    o: &'o Opts,
    out: W,
    seen_unpairable: bool,
    autocount: [usize; 2],
    warnings: Vec<String>,
}

impl<W: Write> Join<'_, W> {
    /// The next line of `src` (its order checked), or `None` at its end.
    fn next_line(&mut self, src: &mut Source<'_>) -> Result<Option<Line>, Halt> {
        let mut buf = Vec::new();
        if src.reader.read_until(self.o.eol, &mut buf)? == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&self.o.eol) {
            buf.pop();
        }
        src.line_no += 1;
        let line = Line::new(buf, self.o.tab);
        let checking = self.o.check.active(self.seen_unpairable);
        let key = self.o.key[src.which];
        if checking
            && !src.warned
            && let Some(prev) = &src.prev_key
            && key_order(
                prev,
                line.field(key).unwrap_or_default(),
                self.o.ignore_case,
            ) == Ordering::Greater
        {
            self.warnings.push(format!(
                "{}:{}: is not sorted: {}",
                src.name,
                src.line_no,
                String::from_utf8_lossy(&line.text)
            ));
            src.warned = true;
            if self.o.check == OrderCheck::Enabled {
                return Err(Halt::Disorder);
            }
        }
        if self.o.check != OrderCheck::Disabled {
            let k = line.field(key).unwrap_or_default();
            let prev = src.prev_key.get_or_insert_with(Vec::new);
            prev.clear();
            prev.extend_from_slice(k);
        }
        Ok(Some(line))
    }

    fn field(&mut self, line: &Line, n: usize) -> io::Result<()> {
        match line.field(n) {
            Some(f) if !f.is_empty() => self.out.write_all(f),
            _ => match &self.o.empty {
                Some(e) => self.out.write_all(e),
                None => Ok(()),
            },
        }
    }

    /// Writes the joined line of `a` (file 1) and `b` (file 2); `None` is the
    /// missing side of an unpaired line.
    fn write(&mut self, a: Option<&Line>, b: Option<&Line>) -> io::Result<()> {
        let blank = Line::default();
        let (l1, l2) = (a.unwrap_or(&blank), b.unwrap_or(&blank));
        let sep = [self.o.tab.unwrap_or(b' ')];
        let (keyed, key) = match a {
            Some(l) => (l, self.o.key[0]),
            None => (l2, self.o.key[1]),
        };
        if let Some(list) = &self.o.format {
            for (i, f) in list.iter().enumerate() {
                if i > 0 {
                    self.out.write_all(&sep)?;
                }
                match *f {
                    OutField::Join => self.field(keyed, key)?,
                    OutField::Of(file, n) => self.field([l1, l2][file], n)?,
                }
            }
        } else {
            self.field(keyed, key)?;
            for (side, line) in [l1, l2].into_iter().enumerate() {
                let count = if self.o.auto {
                    self.autocount[side]
                } else {
                    line.fields.len()
                };
                for n in (0..count).filter(|&n| n != self.o.key[side]) {
                    self.out.write_all(&sep)?;
                    self.field(line, n)?;
                }
            }
        }
        self.out.write_all(&[self.o.eol])
    }

    /// The lines of `src` after `first` whose key equals `other`'s, and the
    /// first line that does not (`None` at the end of `src`).
    fn group(
        &mut self,
        src: &mut Source<'_>,
        first: Line,
        other: &Line,
    ) -> Result<(Vec<Line>, Option<Line>), Halt> {
        let (mine, theirs) = (self.o.key[src.which], self.o.key[1 - src.which]);
        let mut group = vec![first];
        loop {
            let Some(l) = self.next_line(src)? else {
                return Ok((group, None));
            };
            if key_cmp(&l, mine, other, theirs, self.o.ignore_case) == Ordering::Equal {
                group.push(l);
            } else {
                return Ok((group, Some(l)));
            }
        }
    }

    /// The rest of `src` after `current`, written when its unpaired lines are
    /// asked for, read to check its order (`check_tail`) otherwise.
    fn tail(
        &mut self,
        src: &mut Source<'_>,
        current: Line,
        other_left: bool,
        check_tail: bool,
    ) -> Result<(), Halt> {
        let side = src.which;
        if !self.o.unpaired[side] && !check_tail {
            return Ok(());
        }
        let write = |j: &mut Self, l: &Line| {
            if side == 0 {
                j.write(Some(l), None)
            } else {
                j.write(None, Some(l))
            }
        };
        if self.o.unpaired[side] {
            write(self, &current)?;
        }
        if other_left {
            self.seen_unpairable = true;
        }
        while let Some(l) = self.next_line(src)? {
            if self.o.unpaired[side] {
                write(self, &l)?;
            } else if src.warned {
                break;
            }
        }
        Ok(())
    }

    fn join(&mut self, s1: &mut Source<'_>, s2: &mut Source<'_>) -> Result<(), Halt> {
        let mut cur1 = self.next_line(s1)?;
        let mut cur2 = self.next_line(s2)?;
        if self.o.auto {
            self.autocount = [
                cur1.as_ref().map_or(0, |l| l.fields.len()),
                cur2.as_ref().map_or(0, |l| l.fields.len()),
            ];
        }
        if self.o.header && (cur1.is_some() || cur2.is_some()) {
            self.write(cur1.as_ref(), cur2.as_ref())?;
            s1.prev_key = None;
            s2.prev_key = None;
            if cur1.is_some() {
                cur1 = self.next_line(s1)?;
            }
            if cur2.is_some() {
                cur2 = self.next_line(s2)?;
            }
        }
        while cur1.is_some() && cur2.is_some() {
            let (Some(l1), Some(l2)) = (cur1.take(), cur2.take()) else {
                break;
            };
            match key_cmp(&l1, self.o.key[0], &l2, self.o.key[1], self.o.ignore_case) {
                Ordering::Less => {
                    if self.o.unpaired[0] {
                        self.write(Some(&l1), None)?;
                    }
                    cur1 = self.next_line(s1)?;
                    cur2 = Some(l2);
                    self.seen_unpairable = true;
                }
                Ordering::Greater => {
                    if self.o.unpaired[1] {
                        self.write(None, Some(&l2))?;
                    }
                    cur2 = self.next_line(s2)?;
                    cur1 = Some(l1);
                    self.seen_unpairable = true;
                }
                Ordering::Equal => {
                    let (group1, next1) = self.group(s1, l1, &l2)?;
                    let (group2, next2) = self.group(s2, l2, &group1[0])?;
                    if self.o.paired {
                        for a in &group1 {
                            for b in &group2 {
                                self.write(Some(a), Some(b))?;
                            }
                        }
                    }
                    cur1 = next1;
                    cur2 = next2;
                }
            }
        }
        // The tails are read to check their order too, unless that is off
        // or both inputs were found out of order already.
        let check_tail = self.o.check != OrderCheck::Disabled && !(s1.warned && s2.warned);
        let (left2, left1) = (cur2.is_some(), cur1.is_some());
        if let Some(l) = cur1 {
            self.tail(s1, l, left2, check_tail)?;
        }
        if let Some(l) = cur2 {
            self.tail(s2, l, left1, check_tail)?;
        }
        Ok(())
    }
}

fn run(ctx: &mut UtilCtx<'_>, o: &Opts, names: [&String; 2]) -> io::Result<i32> {
    let name = ctx.name().to_string();
    if names[0] == "-" && names[1] == "-" {
        let _ = writeln!(ctx.stderr, "{name}: both files cannot be standard input");
        return Ok(1);
    }
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut files = Vec::with_capacity(2);
    for f in names.iter().filter(|f| **f != "-") {
        match open_file(host, &cwd, f) {
            Ok(file) => files.push(Some(file)),
            Err(e) => {
                let _ = writeln!(ctx.stderr, "{name}: {f}: {}", io_error_text(&e));
                return Ok(1);
            }
        }
    }
    let mut files = files.into_iter();
    let mut stdin = Some(&mut *ctx.stdin);
    let mut sources = Vec::with_capacity(2);
    for (which, f) in names.iter().enumerate() {
        let input = if *f == "-" {
            match stdin.take() {
                Some(s) => Input::stdin(s, host),
                None => return Ok(1),
            }
        } else {
            match files.next().flatten() {
                Some(file) => Input::from_file(file, host),
                None => return Ok(1),
            }
        };
        sources.push(Source {
            name: (*f).clone(),
            which,
            reader: BufReader::with_capacity(BUF, input),
            line_no: 0,
            prev_key: None,
            warned: false,
        });
    }
    let [mut s1, mut s2]: [Source<'_>; 2] = match sources.try_into() {
        Ok(s) => s,
        Err(_) => return Ok(1),
    };
    let mut j = Join {
        o,
        out: BufWriter::with_capacity(BUF, &mut *ctx.stdout),
        seen_unpairable: false,
        autocount: [0, 0],
        warnings: Vec::new(),
    };
    let halted = j.join(&mut s1, &mut s2);
    j.out.flush()?;
    let warned = !j.warnings.is_empty();
    for w in &j.warnings {
        let _ = writeln!(ctx.stderr, "{name}: {w}");
    }
    match halted {
        Err(Halt::Io(e)) => Err(e),
        Err(Halt::Disorder) => Ok(1),
        Ok(()) if warned => {
            let _ = writeln!(ctx.stderr, "{name}: input is not in sorted order");
            Ok(1)
        }
        Ok(()) => Ok(0),
    }
}
