//! `fold`: wrap each input line to fit a width, as GNU coreutils 9.1 does: on
//! bytes in every locale (GNU's fold has no multibyte support), a tab moving to
//! the next multiple of 8 and a backspace or carriage return moving back unless
//! `-b` counts bytes; `-s` breaks after the last blank that fits.

use crate::common::{each_chunk, finish, obsolete_number_option, usage};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, Write};

const SPEC: Spec = Spec {
    flags: "bs",
    valued: "w",
    long: &[
        ("bytes", false, "b"),
        ("spaces", false, "s"),
        ("width", true, "w"),
    ],
    stop_at_operand: false,
};

/// Runs `fold`.
pub fn fold(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let argv = obsolete_number_option(ctx.args(), "-w");
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let width = match p.value("w") {
        None => 80,
        Some(w) => match w.parse::<usize>() {
            Ok(n) if n > 0 => n,
            Ok(_) => {
                let name = ctx.name().to_string();
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: invalid number of columns: \u{2018}{w}\u{2019}: Numerical result out of range"
                );
                return Ok(1);
            }
            Err(_) => {
                let name = ctx.name().to_string();
                let _ = writeln!(
                    ctx.stderr,
                    "{name}: invalid number of columns: \u{2018}{w}\u{2019}"
                );
                return Ok(1);
            }
        },
    };
    let opts = Opts {
        width,
        count_bytes: p.has("b"),
        at_spaces: p.has("s"),
    };
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands.clone()
    };
    let r = run(ctx, &opts, &files);
    finish(ctx, r)
}

struct Opts {
    width: usize,
    count_bytes: bool,
    at_spaces: bool,
}

/// The column after `c` at `column`.
fn advance(column: usize, c: u8, count_bytes: bool) -> usize {
    if count_bytes {
        return column + 1;
    }
    match c {
        b'\x08' => column.saturating_sub(1),
        b'\r' => 0,
        b'\t' => column + 8 - column % 8,
        _ => column + 1,
    }
}

/// The line being built: its bytes and the column its end reaches.
struct Line {
    bytes: Vec<u8>,
    column: usize,
}

impl Line {
    /// Adds `c`, writing out what no longer fits.
    fn push(&mut self, c: u8, o: &Opts, out: &mut dyn Write) -> io::Result<()> {
        if c == b'\n' {
            self.bytes.push(c);
            out.write_all(&self.bytes)?;
            self.bytes.clear();
            self.column = 0;
            return Ok(());
        }
        loop {
            self.column = advance(self.column, c, o.count_bytes);
            if self.column <= o.width {
                self.bytes.push(c);
                return Ok(());
            }
            // `c` would make the line too long: end the line before it.
            if o.at_spaces
                && let Some(blank) = self.bytes.iter().rposition(|&b| b == b' ' || b == b'\t')
            {
                out.write_all(&self.bytes[..=blank])?;
                out.write_all(b"\n")?;
                self.bytes.drain(..=blank);
                self.column = self
                    .bytes
                    .iter()
                    .fold(0, |col, &b| advance(col, b, o.count_bytes));
                continue;
            }
            if self.bytes.is_empty() {
                // Alone it is still too wide: it gets a line of its own.
                self.bytes.push(c);
                return Ok(());
            }
            self.bytes.push(b'\n');
            out.write_all(&self.bytes)?;
            self.bytes.clear();
            self.column = 0;
        }
    }
}

fn run(ctx: &mut UtilCtx<'_>, o: &Opts, files: &[String]) -> io::Result<i32> {
    let mut line = Line {
        bytes: Vec::new(),
        column: 0,
    };
    each_chunk(ctx, files, |chunk, out| match chunk {
        Some(bytes) => bytes.iter().try_for_each(|&c| line.push(c, o, out)),
        // Each file is folded on its own: a last line without a newline is
        // written as it is.
        None => {
            out.write_all(&line.bytes)?;
            line.bytes.clear();
            line.column = 0;
            Ok(())
        }
    })
}
