//! `tac`: each input's records in reverse order (separator `\n` or `-s STRING`,
//! attached after each record, or before with `-b`).

use crate::common::{BUF, finish, open_input, usage, warn_io};
use safesh_utils::args::{self, Spec};
use safesh_utils::posix_regex::{Dialect, Options, Target, translate_with};
use safesh_utils::{UtilCtx, UtilResult};
use std::io::{self, BufWriter, Read, Write};

const SPEC: Spec = Spec {
    flags: "br",
    valued: "s",
    long: &[
        ("before", false, "b"),
        ("regex", false, "r"),
        ("separator", true, "s"),
    ],
    stop_at_operand: false,
};

/// Rewrites a pattern in GNU's default (Emacs) regex syntax, which tac uses, as
/// an ERE: `\(` `\)` `\|` are the operators, while `(` `)` `|` `{` `}` are
/// literals; `*` `+` `?`, brackets and anchors mean the same in both.
fn emacs_to_ere(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut chars = p.chars().peekable();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        if in_bracket {
            out.push(c);
            if c == ']' {
                in_bracket = false;
            }
            continue;
        }
        match c {
            '[' => {
                in_bracket = true;
                out.push(c);
                // A leading `]` (or `^]`) is a member, not the end.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            '\\' => match chars.next() {
                Some(n @ ('(' | ')' | '|')) => out.push(n),
                Some(n @ ('{' | '}')) => {
                    out.push('\\');
                    out.push(n);
                }
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str("\\\\"),
            },
            '(' | ')' | '|' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Non-empty matches of the anchored `re`, found from the end of `data` backwards
/// (each match must end before the previous one starts), in ascending order.
fn backward_matches(re: &regex::bytes::Regex, data: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut limit = data.len();
    let mut pos = limit;
    while pos > 0 {
        pos -= 1;
        if let Some(m) = re.find(&data[pos..limit]).filter(|m| !m.is_empty()) {
            found.push((pos, pos + m.end()));
            limit = pos;
        }
    }
    found.reverse();
    found
}

/// Runs `tac`.
pub fn tac(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let p = match args::parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    let sep = p.value("s").unwrap_or("\n").as_bytes().to_vec();
    let regex = if p.has("r") {
        let mut opts = Options::new(Dialect::Extended);
        opts.target = Target::Bytes;
        let ere = emacs_to_ere(p.value("s").unwrap_or("\n"));
        // Anchored: matches are tried at each start position from the end, as
        // GNU's backward search finds them.
        let compiled = translate_with(&ere, &opts).and_then(|t| {
            regex::bytes::Regex::new(&format!("^(?:{})", t.pattern)).map_err(|e| e.to_string())
        });
        match compiled {
            Ok(re) => Some(re),
            Err(e) => {
                let name = ctx.name().to_string();
                let _ = writeln!(ctx.stderr, "{name}: {e}");
                return Ok(1);
            }
        }
    } else {
        None
    };
    if sep.is_empty() {
        let name = ctx.name().to_string();
        let _ = writeln!(ctx.stderr, "{name}: separator cannot be empty");
        return Ok(1);
    }
    let before = p.has("b");
    let files = if p.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        p.operands
    };
    let budget = ctx.host.memory_budget();
    let r = run(ctx, &sep, regex.as_ref(), before, &files, budget);
    match r {
        // Its input would not fit its share of [limits] memory_mb.
        Err(e) if e.get_ref().is_some_and(|i| i.is::<OverBudget>()) => {
            Err(safesh_utils::ctx::MemoryLimit::interrupt("tac", budget))
        }
        r => finish(ctx, r),
    }
}

/// The input of one file is larger than the memory budget.
#[derive(Debug)]
struct OverBudget;

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("over the memory budget")
    }
}

impl std::error::Error for OverBudget {}

fn run(
    ctx: &mut UtilCtx<'_>,
    sep: &[u8],
    regex: Option<&regex::bytes::Regex>,
    before: bool,
    files: &[String],
    budget: u64,
) -> io::Result<i32> {
    let name = ctx.name().to_string();
    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut out = BufWriter::with_capacity(BUF, &mut *ctx.stdout);
    let mut status = 0;
    let mut data = Vec::new();
    for f in files {
        data.clear();
        // Reads at most one byte past the budget: enough to know it is over.
        let res = open_input(&mut *ctx.stdin, host, &cwd, f)
            .and_then(|i| i.take(budget.saturating_add(1)).read_to_end(&mut data));
        if res.is_ok() && data.len() as u64 > budget {
            return Err(io::Error::other(OverBudget));
        }
        if let Err(e) = res {
            warn_io(&mut *ctx.stderr, &name, f, &e);
            status = 1;
            continue;
        }
        // Separator matches as (start, end); empty regex matches separate nothing.
        let matches: Vec<(usize, usize)> = match regex {
            Some(re) => backward_matches(re, &data),
            None => {
                // From the end, as GNU searches (matters for separators like `aa`).
                let mut v: Vec<(usize, usize)> = memchr::memmem::rfind_iter(&data, sep)
                    .map(|s| (s, s + sep.len()))
                    .collect();
                v.reverse();
                v
            }
        };
        // Record boundaries: with separators after records, a record ends after
        // each separator; with -b, a record starts at each separator.
        let mut bounds = vec![0];
        for (s, e) in matches {
            let b = if before { s } else { e };
            if b != 0 && b != data.len() {
                bounds.push(b);
            }
        }
        bounds.push(data.len());
        bounds.dedup();
        for w in bounds.windows(2).rev() {
            out.write_all(&data[w[0]..w[1]])?;
        }
    }
    out.flush()?;
    Ok(status)
}
