//! `column`: lists in columns, as util-linux 2.38 does. Each line that is not
//! blank is an entry (its leading blanks kept). `-t` makes a table: fields split
//! at runs of blanks, or at each character of `-s` (empty fields kept), every
//! column as wide as its widest cell, `-o` between columns (two spaces), the
//! last visible column not padded; `-N` names the columns (a header line),
//! `-R` right-aligns and `-H` hides columns by name or number. Without `-t`
//! the entries fill columns (`-x`: rows) of tab stops within the width (`-c`,
//! else `$COLUMNS`, else 80). Widths are display columns in a UTF-8 locale;
//! a byte that is not text there (any byte past 0x7f in the C locale) is shown
//! as `\xHH`.

use crate::common::{BUF, Input, each_line, finish, open_file, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufWriter, Write};
use unicode_width::UnicodeWidthChar;

const SPEC: Spec = Spec {
    flags: "tx",
    valued: "cHNoRs",
    long: &[
        ("table", false, "t"),
        ("fillrows", false, "x"),
        ("output-width", true, "c"),
        ("columns", true, "c"),
        ("table-hide", true, "H"),
        ("table-columns", true, "N"),
        ("output-separator", true, "o"),
        ("table-right", true, "R"),
        ("separator", true, "s"),
    ],
    stop_at_operand: false,
};

/// Runs `column`.
pub fn column(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let name = ctx.name().to_string();
    let table = p.has("t");
    if table && p.has("x") {
        let _ = writeln!(
            ctx.stderr,
            "{name}: mutually exclusive arguments: --fillrows --table"
        );
        return Ok(1);
    }
    if !table && ["N", "R", "H"].iter().any(|o| p.has(o)) {
        let _ = writeln!(
            ctx.stderr,
            "{name}: option --table required for all --table-*"
        );
        return Ok(1);
    }
    let width = match p.value("c") {
        Some(c) => match c.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                let _ = writeln!(ctx.stderr, "{name}: invalid columns argument: '{c}'");
                return Ok(1);
            }
        },
        None => ctx
            .env
            .get("COLUMNS")
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(80),
    };
    let list = |o: &str| -> Vec<String> {
        p.value(o)
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let opts = Opts {
        table,
        by_rows: p.has("x"),
        width,
        separators: p.value("s").map(|s| s.chars().collect()),
        output_separator: p.value("o").unwrap_or("  ").to_string(),
        names: list("N"),
        right: list("R"),
        hidden: list("H"),
        utf8: ctx.env.utf8_locale(),
    };
    let r = run(ctx, &opts, &p.operands);
    finish(ctx, r)
}

struct Opts {
    table: bool,
    by_rows: bool,
    width: usize,
    /// `-s`: each character splits, empty fields kept; `None`: runs of blanks.
    separators: Option<Vec<char>>,
    output_separator: String,
    names: Vec<String>,
    right: Vec<String>,
    hidden: Vec<String>,
    utf8: bool,
}

/// An entry or a cell: its text as shown and its width in columns.
#[derive(Clone, Default)]
struct Cell {
    text: String,
    width: usize,
}

impl Cell {
    fn new(text: String) -> Cell {
        let width = text.chars().map(|c| c.width().unwrap_or(0)).sum();
        Cell { text, width }
    }
}

/// `line` as text: in a UTF-8 locale what decodes, else ASCII; any other byte
/// written `\xHH`.
fn shown(line: &[u8], utf8: bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        let good = if utf8 {
            match std::str::from_utf8(rest) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            }
        } else {
            rest.iter().take_while(|b| b.is_ascii()).count()
        };
        // The prefix is valid text (ASCII or checked UTF-8).
        out.push_str(&String::from_utf8_lossy(&rest[..good]));
        if let Some(&bad) = rest.get(good) {
            out.push_str(&format!("\\x{bad:02x}"));
            rest = &rest[good + 1..];
        } else {
            rest = &[];
        }
    }
    out
}

fn run(ctx: &mut UtilCtx<'_>, o: &Opts, files: &[String]) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut status = 0;
    let mut entries: Vec<String> = Vec::new();
    // No operand: stdin. util-linux opens every operand as a file, `-` too.
    let stdin_only = [None];
    let named: Vec<Option<&String>> = files.iter().map(Some).collect();
    let list = if files.is_empty() {
        &stdin_only[..]
    } else {
        &named[..]
    };
    for &f in list {
        let opened = match f {
            None => Ok(Input::stdin(&mut *ctx.stdin, host)),
            Some(f) => open_file(host, &cwd, f).map(|file| Input::from_file(file, host)),
        };
        let f = f.map_or("-", String::as_str);
        let input = match opened {
            Ok(i) => i,
            Err(e) => {
                warn_io(&mut *ctx.stderr, &name, f, &e);
                status = 1;
                continue;
            }
        };
        status |= each_line(input, &mut *ctx.stderr, &name, f, |line| {
            // util-linux reads C strings: a line ends at its first NUL.
            let end = memchr::memchr2(b'\n', 0, line).unwrap_or(line.len());
            let text = &line[..end];
            let blank = text
                .iter()
                .all(|b| matches!(b, b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r'));
            if !blank {
                entries.push(shown(text, o.utf8));
            }
            Ok(())
        })?;
    }
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    if o.table {
        // util-linux's status is the table's printing once it has rows: an
        // operand that could not be read no longer counts.
        if !entries.is_empty() {
            status = 0;
        }
        write_table(&mut out, o, &entries)?;
    } else {
        let cells: Vec<Cell> = entries.into_iter().map(Cell::new).collect();
        write_filled(&mut out, o, &cells)?;
    }
    out.flush()?;
    Ok(status)
}

/// The fields of a table row.
fn fields(entry: &str, separators: Option<&[char]>) -> Vec<String> {
    match separators {
        None => entry
            .split([' ', '\t'])
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect(),
        Some(seps) => {
            // A separator at the end ends the row: it does not start an empty field.
            let mut out: Vec<String> = entry.split(seps).map(str::to_string).collect();
            if out.len() > 1 && out.last().is_some_and(String::is_empty) {
                out.pop();
            }
            out
        }
    }
}

/// Whether column `i` (0-based) is named in `list` by name (any case) or number.
fn listed(list: &[String], names: &[String], i: usize) -> bool {
    list.iter().any(|item| {
        item.parse::<usize>().map_or_else(
            |_| names.get(i).is_some_and(|n| n.eq_ignore_ascii_case(item)),
            |n| n == i + 1,
        )
    })
}

fn write_table(out: &mut impl Write, o: &Opts, entries: &[String]) -> io::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<Vec<Cell>> = entries
        .iter()
        .map(|e| {
            fields(e, o.separators.as_deref())
                .into_iter()
                .map(Cell::new)
                .collect()
        })
        .collect();
    if !o.names.is_empty() {
        rows.insert(0, o.names.iter().cloned().map(Cell::new).collect());
    }
    let ncols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; ncols];
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            widths[i] = widths[i].max(c.width);
        }
    }
    let visible: Vec<usize> = (0..ncols)
        .filter(|&i| !listed(&o.hidden, &o.names, i))
        .collect();
    let right: Vec<bool> = (0..ncols).map(|i| listed(&o.right, &o.names, i)).collect();
    let empty = Cell::default();
    for row in &rows {
        let mut text = String::new();
        for (k, &i) in visible.iter().enumerate() {
            let cell = row.get(i).unwrap_or(&empty);
            let pad = " ".repeat(widths[i] - cell.width);
            let last = k + 1 == visible.len();
            if right[i] {
                if !(last && cell.text.is_empty()) {
                    text.push_str(&pad);
                }
                text.push_str(&cell.text);
            } else {
                text.push_str(&cell.text);
                if !last {
                    text.push_str(&pad);
                }
            }
            if !last {
                text.push_str(&o.output_separator);
            }
        }
        text.push('\n');
        out.write_all(text.as_bytes())?;
    }
    Ok(())
}

/// The next tab stop after column `at`.
fn next_tab(at: usize) -> usize {
    (at + 8) & !7
}

/// Writes tabs from column `at` up to `end`; the column reached.
fn tabs_to(out: &mut impl Write, mut at: usize, end: usize) -> io::Result<usize> {
    while next_tab(at) <= end {
        out.write_all(b"\t")?;
        at = next_tab(at);
    }
    Ok(at)
}

fn write_filled(out: &mut impl Write, o: &Opts, cells: &[Cell]) -> io::Result<()> {
    let Some(longest) = cells.iter().map(|c| c.width).max() else {
        return Ok(());
    };
    if longest >= o.width {
        for c in cells {
            writeln!(out, "{}", c.text)?;
        }
        return Ok(());
    }
    // Every column is as wide as the longest entry, rounded up to a tab stop.
    let slot = next_tab(longest);
    let per_row = o.width / slot;
    if o.by_rows {
        let (mut at, mut col, mut end) = (0, 0, slot);
        for (n, c) in cells.iter().enumerate() {
            out.write_all(c.text.as_bytes())?;
            at += c.width;
            if n + 1 == cells.len() {
                break;
            }
            col += 1;
            if col == per_row {
                (at, col, end) = (0, 0, slot);
                out.write_all(b"\n")?;
            } else {
                at = tabs_to(out, at, end)?;
                end += slot;
            }
        }
        if at > 0 {
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let per_row = per_row.max(1);
    let rows = cells.len().div_ceil(per_row);
    for row in 0..rows {
        let (mut at, mut end) = (0, slot);
        let mut i = row;
        for _ in 0..per_row {
            let c = &cells[i];
            out.write_all(c.text.as_bytes())?;
            at += c.width;
            i += rows;
            if i >= cells.len() {
                break;
            }
            at = tabs_to(out, at, end)?;
            end += slot;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}
