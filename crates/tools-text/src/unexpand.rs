//! `unexpand`: blanks to tabs, as GNU coreutils 9.1 does: on bytes, tab stops
//! as `expand` reads them, only a line's leading blanks unless `-a` (or `-t`,
//! which implies it; `--first-only` overrides both; the obsolete `-N` sets the
//! stops without it). A run of blanks that reaches a stop becomes a tab; a
//! single space that reaches one stays a space unless more blanks follow;
//! past the last stop of a plain list nothing more is converted on the line.
//! The inputs are one stream, as in GNU.

use crate::common::{each_chunk, finish, obsolete_number_option, usage};
use crate::expand::TabStops;
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, Write};

const SPEC: Spec = Spec {
    flags: "a",
    valued: "t",
    long: &[
        ("all", false, "a"),
        ("first-only", false, "first-only"),
        ("tabs", true, "t"),
    ],
    stop_at_operand: false,
};

/// Runs `unexpand`.
pub fn unexpand(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let given = ctx.args().to_vec();
    let argv = obsolete_number_option(&given, "-t");
    // `-N` sets the stops only; a `-t` also converts whole lines.
    let obsolete = argv.len() - given.len();
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let lists = p.values("t");
    let whole_lines = !p.has("first-only") && (p.has("a") || lists.len() > obsolete);
    let Some(stops) = TabStops::from_options(ctx, &lists) else {
        return Ok(1);
    };
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands.clone()
    };
    let mut line = Line::new();
    let r = each_chunk(ctx, &files, |chunk, out| match chunk {
        Some(bytes) => bytes
            .iter()
            .try_for_each(|&c| line.put(c, &stops, whole_lines, out)),
        None => Ok(()),
    });
    // What is held at the end of the input is written as it came.
    let r = r.and_then(|status| {
        line.flush(&mut *ctx.stdout)?;
        Ok(status)
    });
    finish(ctx, r)
}

/// The state of the line being converted.
struct Line {
    column: u64,
    /// The first tab-stop list entry not yet passed.
    index: usize,
    /// Still converting (leading blanks, or every blank with `-a`).
    converting: bool,
    /// The last byte was a blank (or the line has just begun).
    after_blank: bool,
    /// Blanks read but not written: a tab may replace them.
    held: Vec<u8>,
    /// The first held blank is a lone space that reached a stop: a tab if
    /// more blanks follow, else itself.
    lone_at_stop: bool,
}

impl Line {
    fn new() -> Line {
        Line {
            column: 0,
            index: 0,
            converting: true,
            // As after a blank: with stops 1 apart, a line's first space is a tab.
            after_blank: true,
            held: Vec::new(),
            lone_at_stop: false,
        }
    }

    fn put(
        &mut self,
        c: u8,
        stops: &TabStops,
        whole_lines: bool,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let blank = c == b' ' || c == b'\t';
        let mut c = c;
        if blank && self.converting {
            match stops.next(self.column, &mut self.index) {
                // Past the last stop: the rest of the line stays as it is.
                None => self.converting = false,
                Some(stop) if c == b'\t' => {
                    self.column = stop;
                    self.replace_held_by_tab();
                }
                Some(stop) => {
                    self.column += 1;
                    if !(self.after_blank && self.column == stop) {
                        if self.column == stop {
                            self.lone_at_stop = true;
                        }
                        self.held.push(c);
                        self.after_blank = true;
                        return Ok(());
                    }
                    // Blanks up to a stop: one tab.
                    c = b'\t';
                    self.replace_held_by_tab();
                }
            }
        } else if !blank {
            if c == b'\x08' {
                self.column = self.column.saturating_sub(1);
                self.index = self.index.saturating_sub(1);
            } else {
                self.column += 1;
            }
        }
        self.flush(out)?;
        self.after_blank = blank;
        self.converting &= whole_lines || blank;
        out.write_all(&[c])?;
        if c == b'\n' {
            *self = Line::new();
        }
        Ok(())
    }

    /// The held blanks end at a stop a tab now reaches: all but a lone space
    /// at an earlier stop (which is then a tab of its own) go.
    fn replace_held_by_tab(&mut self) {
        if self.lone_at_stop {
            self.held.truncate(1);
            self.held[0] = b'\t';
        } else {
            self.held.clear();
        }
    }

    /// Writes the held blanks (a lone space at a stop followed by more blanks
    /// becomes a tab).
    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.held.len() > 1 && self.lone_at_stop {
            self.held[0] = b'\t';
        }
        out.write_all(&self.held)?;
        self.held.clear();
        self.lone_at_stop = false;
        Ok(())
    }
}
