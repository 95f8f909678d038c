//! `expand`: tabs to spaces, as GNU coreutils 9.1 does: on bytes, tab stops
//! every 8 columns or as `-t` lists them (`N`, `N,M,…`, a last `/N` for every
//! N after the list, a last `+N` for every N past the last stop; past the end
//! of a plain list a tab is one space), `-i` only in a line's leading blanks,
//! a backspace moving back a column. The inputs are one stream, as in GNU.

use crate::common::{each_chunk, finish, obsolete_number_option, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, Write};

const SPEC: Spec = Spec {
    flags: "i",
    valued: "t",
    long: &[("initial", false, "i"), ("tabs", true, "t")],
    stop_at_operand: false,
};

/// Runs `expand`.
pub fn expand(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let argv = obsolete_number_option(ctx.args(), "-t");
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let Some(stops) = TabStops::from_options(ctx, &p.values("t")) else {
        return Ok(1);
    };
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands.clone()
    };
    let r = run(ctx, &stops, p.has("i"), &files);
    finish(ctx, r)
}

/// Where tabs stop (`-t`'s list; `unexpand` reads the same).
pub(crate) struct TabStops {
    /// Every this many columns (a single size, or none given: 8).
    every: Option<u64>,
    /// Explicit stops, ascending.
    list: Vec<u64>,
    /// `/N`: every N columns after the list.
    extend: Option<u64>,
    /// `+N`: every N columns past the last stop.
    increment: Option<u64>,
}

impl TabStops {
    /// The stops the `-t` values list (each a list itself), or `None` after
    /// GNU's message on stderr.
    pub(crate) fn from_options(ctx: &mut UtilCtx<'_>, values: &[&str]) -> Option<TabStops> {
        TabStops::parse(&values.join(","))
            .map_err(|msg| {
                let name = ctx.name().to_string();
                let _ = writeln!(ctx.stderr, "{name}: {msg}");
            })
            .ok()
    }

    /// Parses a `-t` list (items joined by `,`); the message is GNU's.
    pub(crate) fn parse(text: &str) -> Result<TabStops, String> {
        let mut list = Vec::new();
        let (mut extend, mut increment) = (None, None);
        for item in text.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
            if let Some(last) = [(extend, '/'), (increment, '+')]
                .iter()
                .find_map(|(v, c)| v.map(|_| *c))
            {
                return Err(format!(
                    "'{last}' specifier only allowed with the last value"
                ));
            }
            let (prefix, digits) = match item.as_bytes()[0] {
                b'/' | b'+' => (Some(item.as_bytes()[0]), &item[1..]),
                _ => (None, item),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "tab size contains invalid character(s): \u{2018}{item}\u{2019}"
                ));
            }
            let n: u64 = digits
                .parse()
                .map_err(|_| format!("tab stop is too large \u{2018}{digits}\u{2019}"))?;
            match prefix {
                Some(b'/') => extend = Some(n),
                Some(_) => increment = Some(n),
                None => {
                    if n == 0 {
                        return Err("tab size cannot be 0".into());
                    }
                    if list.last().is_some_and(|&last| n <= last) {
                        return Err("tab sizes must be ascending".into());
                    }
                    list.push(n);
                }
            }
        }
        // GNU reads a size of 0 after `/` or `+` as none given.
        let (extend, increment) = (extend.filter(|&n| n > 0), increment.filter(|&n| n > 0));
        let every = match (list.len(), extend, increment) {
            (0, None, None) => Some(8),
            (1, None, None) => list.pop(),
            _ => None,
        };
        Ok(TabStops {
            every,
            list,
            extend,
            increment,
        })
    }

    /// The column of the next stop after `column` (`index`: the first list
    /// entry not yet passed on this line), or `None` past the last one.
    pub(crate) fn next(&self, column: u64, index: &mut usize) -> Option<u64> {
        if let Some(n) = self.every {
            return Some(column + (n - column % n));
        }
        while let Some(&tab) = self.list.get(*index) {
            if column < tab {
                return Some(tab);
            }
            *index += 1;
        }
        if let Some(n) = self.extend {
            return Some(column + (n - column % n));
        }
        if let Some(n) = self.increment {
            let end = self.list.last().copied().unwrap_or(0);
            return Some(column + (n - (column - end) % n));
        }
        None
    }
}

/// The state of the line being expanded.
struct Cursor {
    column: u64,
    index: usize,
    converting: bool,
}

fn run(
    ctx: &mut UtilCtx<'_>,
    stops: &TabStops,
    initial: bool,
    files: &[String],
) -> io::Result<i32> {
    // The inputs are one stream: a line may go on in the next file.
    let mut at = Cursor {
        column: 0,
        index: 0,
        converting: true,
    };
    each_chunk(ctx, files, |chunk, out| {
        chunk
            .unwrap_or_default()
            .iter()
            .try_for_each(|&c| put(c, stops, initial, &mut at, out))
    })
}

/// Writes `c` (a tab as spaces), moving the cursor.
fn put(
    c: u8,
    stops: &TabStops,
    initial: bool,
    at: &mut Cursor,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut c = c;
    if at.converting {
        match c {
            b'\t' => {
                let next = stops
                    .next(at.column, &mut at.index)
                    .unwrap_or(at.column + 1);
                while at.column + 1 < next {
                    out.write_all(b" ")?;
                    at.column += 1;
                }
                at.column += 1;
                c = b' ';
            }
            b'\x08' => {
                at.column = at.column.saturating_sub(1);
                at.index = at.index.saturating_sub(1);
            }
            _ => at.column += 1,
        }
        at.converting &= !initial || c == b' ' || c == b'\t';
    }
    out.write_all(&[c])?;
    if c == b'\n' {
        *at = Cursor {
            column: 0,
            index: 0,
            converting: true,
        };
    }
    Ok(())
}
