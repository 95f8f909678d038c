//! `grep`: GNU grep 3.8 in the C locale (BRE/ERE/fixed strings, context, counts,
//! recursion). Files are searched a big buffer at a time, never line by line.

mod search;

use crate::glob;
use crate::matcher::{Config, Matcher, Syntax};
use safesh_utils::args::{self, Spec};
use safesh_utils::{Host, UtilCtx, UtilResult, io_error_text};
use search::{Searcher, Settings};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const SPEC: Spec = Spec {
    flags: "EFGPivwxclLnoqsrRhHbzaIUZy",
    valued: "efmABCdD",
    long: &[
        ("extended-regexp", false, "E"),
        ("fixed-strings", false, "F"),
        ("basic-regexp", false, "G"),
        ("perl-regexp", false, "P"),
        ("regexp", true, "e"),
        ("file", true, "f"),
        ("ignore-case", false, "i"),
        ("no-ignore-case", false, "no-ignore-case"),
        ("invert-match", false, "v"),
        ("word-regexp", false, "w"),
        ("line-regexp", false, "x"),
        ("count", false, "c"),
        ("files-with-matches", false, "l"),
        ("files-without-match", false, "L"),
        ("line-number", false, "n"),
        ("only-matching", false, "o"),
        ("quiet", false, "q"),
        ("silent", false, "q"),
        ("no-messages", false, "s"),
        ("recursive", false, "r"),
        ("dereference-recursive", false, "R"),
        ("no-filename", false, "h"),
        ("with-filename", false, "H"),
        ("max-count", true, "m"),
        ("byte-offset", false, "b"),
        ("after-context", true, "A"),
        ("before-context", true, "B"),
        ("context", true, "C"),
        ("include", true, "include"),
        ("exclude", true, "exclude"),
        ("exclude-dir", true, "exclude-dir"),
        ("color", true, "color"),
        ("colour", true, "color"),
        ("null-data", false, "z"),
        ("text", false, "a"),
        ("binary-files", true, "binary-files"),
        ("null", false, "Z"),
        ("label", true, "label"),
        ("line-buffered", false, "line-buffered"),
        ("directories", true, "d"),
        ("devices", true, "D"),
        ("binary", false, "U"),
        ("help", false, "help"),
        ("version", false, "version"),
    ],
    stop_at_operand: false,
};

/// `grep`.
pub fn grep(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, None)
}

/// `egrep` (`grep -E`).
pub fn egrep(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Some(Syntax::Extended))
}

/// `fgrep` (`grep -F`).
pub fn fgrep(ctx: &mut UtilCtx<'_>) -> UtilResult {
    run(ctx, Some(Syntax::Fixed))
}

fn usage(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    let _ = writeln!(ctx.stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...");
    let _ = writeln!(ctx.stderr, "Try 'grep --help' for more information.");
    Ok(2)
}

/// Rewrites arguments the shared parser cannot express: `--color` without a value
/// and the `-NUM` context shorthand.
fn preprocess(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut ended = false;
    for a in args {
        if ended {
            out.push(a.clone());
            continue;
        }
        if a == "--" {
            ended = true;
            out.push(a.clone());
        } else if a == "--color" || a == "--colour" {
            out.push("--color=auto".into());
        } else if a.len() > 1 && a.starts_with('-') && a[1..].bytes().all(|b| b.is_ascii_digit()) {
            out.push(format!("-C{}", &a[1..]));
        } else {
            out.push(a.clone());
        }
    }
    out
}

fn parse_num(ctx: &mut UtilCtx<'_>, v: &str, what: &str) -> Result<u64, i32> {
    match v.trim().parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) if v.trim().parse::<i64>().is_ok() && what == "max count" => Ok(u64::MAX),
        Err(_) => {
            ctx.warn(format_args!("invalid {what} argument"));
            Err(2)
        }
    }
}

fn run(ctx: &mut UtilCtx<'_>, forced: Option<Syntax>) -> UtilResult {
    let argv = preprocess(ctx.args());
    let p = match args::parse(&argv, &SPEC) {
        Ok(p) => p,
        Err(e) => return usage(ctx, &e),
    };
    if p.has("help") {
        let _ = writeln!(ctx.stdout, "Usage: grep [OPTION]... PATTERNS [FILE]...");
        return Ok(0);
    }
    if p.has("version") {
        let _ = writeln!(ctx.stdout, "grep (GNU grep) 3.8");
        return Ok(0);
    }
    let mut syntax = forced.unwrap_or(Syntax::Basic);
    let mut icase = false;
    let mut perl = false;
    let mut with_name: Option<bool> = None;
    let mut after = 0u64;
    let mut before = 0u64;
    for o in &p.opts {
        match o.name.as_str() {
            "E" => syntax = Syntax::Extended,
            "F" => syntax = Syntax::Fixed,
            "G" => syntax = Syntax::Basic,
            "P" => perl = true,
            "i" | "y" => icase = true,
            "no-ignore-case" => icase = false,
            "h" => with_name = Some(false),
            "H" => with_name = Some(true),
            "A" | "B" | "C" => {
                let v = o.value.as_deref().unwrap_or("");
                let n = match parse_num(ctx, v, "context length") {
                    Ok(n) => n,
                    Err(_) => {
                        ctx.warn(format_args!("{v}: invalid context length argument"));
                        return Ok(2);
                    }
                };
                match o.name.as_str() {
                    "A" => after = n,
                    "B" => before = n,
                    _ => {
                        after = n;
                        before = n;
                    }
                }
            }
            _ => {}
        }
    }
    let mut max_count = u64::MAX;
    if let Some(v) = p.value("m") {
        match parse_num(ctx, v, "max count") {
            Ok(n) => max_count = n,
            Err(c) => return Ok(c),
        }
    }
    if let Some(b) = p.value("binary-files")
        && !matches!(b, "binary" | "text" | "without-match")
    {
        ctx.warn("invalid argument for --binary-files");
        return Ok(2);
    }
    // Patterns: -e and -f, else the first operand.
    let mut operands = p.operands.clone();
    let mut patterns: Vec<String> = Vec::new();
    let mut have_patterns = false;
    for o in &p.opts {
        match o.name.as_str() {
            "e" => {
                have_patterns = true;
                patterns.extend(
                    o.value
                        .as_deref()
                        .unwrap_or("")
                        .split('\n')
                        .map(String::from),
                );
            }
            "f" => {
                have_patterns = true;
                let f = o.value.as_deref().unwrap_or("");
                let data = if f == "-" {
                    let mut v = Vec::new();
                    let _ = ctx.stdin.read_to_end(&mut v);
                    Ok(v)
                } else {
                    ctx.read_file(f)
                };
                match data {
                    Ok(d) => {
                        let text = String::from_utf8_lossy(&d).into_owned();
                        let body = text.strip_suffix('\n').unwrap_or(&text);
                        if !text.is_empty() {
                            patterns.extend(body.split('\n').map(String::from));
                        }
                    }
                    Err(e) => {
                        ctx.warn_io(f, &e);
                        return Ok(2);
                    }
                }
            }
            _ => {}
        }
    }
    if !have_patterns {
        if operands.is_empty() {
            return usage(ctx, "no pattern given").map(|_| 2).or(Ok(2));
        }
        let pat = operands.remove(0);
        patterns.extend(pat.split('\n').map(String::from));
    }
    let mut invert = p.has("v");
    let mut word = p.has("w");
    let mut line = p.has("x");
    if patterns.is_empty() {
        // No patterns (e.g. -f /dev/null): GNU matches nothing by inverting the
        // empty pattern.
        patterns.push(String::new());
        invert = !invert;
        word = false;
        line = false;
    }
    // GNU exits at once when nothing can be selected.
    let nothing = patterns.len() == 1 && patterns[0].is_empty() && invert && !word && !line;
    if (max_count == 0 || nothing) && !p.has("L") {
        return Ok(1);
    }
    let null_data = p.has("z");
    let term = if null_data { 0u8 } else { b'\n' };
    let mut cfg = Config::new(syntax);
    cfg.icase = icase;
    cfg.record_sep = Some(term);
    cfg.word = word;
    cfg.line = line;
    let matcher = if patterns.is_empty() {
        None
    } else {
        let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
        if syntax != Syntax::Fixed && !perl {
            for r in &refs {
                if let Some(cls) = stray_class(r) {
                    ctx.warn(format_args!(
                        "character class syntax is [[:{cls}:]], not [:{cls}:]"
                    ));
                    return Ok(2);
                }
            }
        }
        let compiled = if perl {
            if syntax == Syntax::Fixed || forced.is_some() {
                ctx.warn("conflicting matchers specified");
                return Ok(2);
            }
            Matcher::perl(&refs, &cfg)
        } else {
            Matcher::new(&refs, &cfg)
        };
        match compiled {
            Ok(m) => Some(m),
            Err(e) => {
                ctx.warn(e);
                return Ok(2);
            }
        }
    };
    let recursive = p.has("r") || p.has("R");
    let no_operands = operands.is_empty();
    if no_operands {
        operands.push(if recursive { ".".into() } else { "-".into() });
    }
    let out_file = match with_name {
        Some(v) => Some(v),
        None if operands.len() > 1 => Some(true),
        None => None,
    };
    let binary_mode = if p.has("a") {
        "text"
    } else if p.has("I") {
        "without-match"
    } else {
        p.value("binary-files").unwrap_or("binary")
    };
    // A count whose only names are the operands (no directory walk, which would
    // print names the files chose) is fixed-format text.
    if p.has("c") && !p.has("l") && !p.has("L") && !p.has("q") && !recursive {
        ctx.host.output_is_count();
    }
    let settings = Settings {
        invert,
        count: p.has("c"),
        list: p.has("l"),
        list_missing: p.has("L"),
        line_number: p.has("n"),
        only: p.has("o"),
        quiet: p.has("q"),
        byte_offset: p.has("b"),
        max_count,
        after,
        before,
        term,
        binary_text: binary_mode == "text" || null_data,
        binary_skip: binary_mode == "without-match",
        null_after_name: p.has("Z"),
    };
    let walk = Walk {
        recursive,
        deref: p.has("R"),
        include: p.values("include").into_iter().map(String::from).collect(),
        exclude: p.values("exclude").into_iter().map(String::from).collect(),
        exclude_dir: p
            .values("exclude-dir")
            .into_iter()
            .map(String::from)
            .collect(),
        silent: p.has("s"),
        skip_dirs: p.value("d") == Some("skip"),
    };
    let label = p.value("label").unwrap_or("(standard input)").to_string();

    let host = ctx.host;
    let cwd = ctx.cwd.clone();
    let mut out = BufWriter::with_capacity(64 * 1024, &mut *ctx.stdout);
    let err: &mut dyn Write = &mut *ctx.stderr;
    let stdin: &mut dyn Read = &mut *ctx.stdin;
    let cancel = || host.cancelled();
    let mut searcher = Searcher::new(matcher.as_ref(), &settings, &cancel);
    let mut state = RunState {
        host,
        cwd,
        err,
        stdin: Some(stdin),
        matched: false,
        error: false,
        label,
        cancelled: false,
    };
    for op in &operands {
        let display = if no_operands && recursive {
            None
        } else {
            Some(op.as_str())
        };
        let r = state.operand(op, display, out_file, &walk, &mut searcher, &mut out);
        if let Err(e) = r {
            drop(out);
            return Ok(ctx.write_failed(&e));
        }
        if state.cancelled || searcher.cancelled {
            return Ok(130);
        }
        if settings.quiet && state.matched {
            break;
        }
    }
    if let Err(e) = out.flush() {
        drop(out);
        return Ok(ctx.write_failed(&e));
    }
    drop(out);
    Ok(if settings.quiet && state.matched {
        0
    } else if state.error {
        2
    } else if state.matched {
        0
    } else {
        1
    })
}

/// `[:alpha:]` written outside brackets: GNU grep refuses it.
fn stray_class(p: &str) -> Option<&str> {
    let rest = p.strip_prefix("[:")?;
    let name = rest.strip_suffix(":]")?;
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase())).then_some(name)
}

struct Walk {
    recursive: bool,
    deref: bool,
    include: Vec<String>,
    exclude: Vec<String>,
    exclude_dir: Vec<String>,
    silent: bool,
    skip_dirs: bool,
}

impl Walk {
    fn file_excluded(&self, name: &[u8]) -> bool {
        let base = basename(name);
        if self
            .exclude
            .iter()
            .any(|g| glob::matches(g.as_bytes(), base))
        {
            return true;
        }
        !self.include.is_empty()
            && !self
                .include
                .iter()
                .any(|g| glob::matches(g.as_bytes(), base))
    }

    fn dir_excluded(&self, name: &[u8]) -> bool {
        let base = basename(name);
        self.exclude_dir
            .iter()
            .any(|g| glob::matches(g.as_bytes(), base))
    }
}

fn basename(name: &[u8]) -> &[u8] {
    let trimmed = match name.iter().rposition(|&b| b != b'/') {
        Some(i) => &name[..=i],
        None => name,
    };
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

struct RunState<'a> {
    host: &'a dyn Host,
    cwd: PathBuf,
    err: &'a mut dyn Write,
    stdin: Option<&'a mut dyn Read>,
    matched: bool,
    error: bool,
    label: String,
    cancelled: bool,
}

impl RunState<'_> {
    fn warn(&mut self, silent: bool, what: &str, e: &std::io::Error) {
        self.error = true;
        if !silent {
            let _ = writeln!(self.err, "grep: {what}: {}", io_error_text(e));
        }
    }

    fn resolve(&self, p: &str) -> PathBuf {
        let path = Path::new(p);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// Searches one command-line operand (a file, `-`, or a directory with -r).
    fn operand(
        &mut self,
        op: &str,
        display: Option<&str>,
        out_file: Option<bool>,
        walk: &Walk,
        s: &mut Searcher<'_>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        if op == "-" || op == "/dev/stdin" {
            let name = if op == "-" {
                self.label.clone()
            } else {
                op.to_string()
            };
            let Some(stdin) = self.stdin.take() else {
                return Ok(());
            };
            let show = out_file.unwrap_or(false);
            let r = s.search(stdin, &name, show, out, self.err);
            return self.finish(r, &name, walk.silent);
        }
        let path = self.resolve(op);
        // `/dev/fd/3`, `/proc/self/fd/0`: the script's stream, not the process's.
        if let Some(f) = self.host.open_descriptor(&path, false) {
            return match f {
                Ok(mut f) => {
                    let r = s.search(&mut f, op, out_file.unwrap_or(false), out, self.err);
                    self.finish(r, op, walk.silent)
                }
                Err(e) => {
                    self.warn(walk.silent, op, &e);
                    Ok(())
                }
            };
        }
        if let Err(e) = self.host.check_read(&path) {
            self.warn(walk.silent, op, &e);
            return Ok(());
        }
        // Read from the entry decided on (a symlink on the way is checked).
        let meta =
            match safesh_utils::beneath::metadata(&path, true, |real| self.host.check_stat(real)) {
                Ok(m) => m,
                Err(e) => {
                    self.warn(walk.silent, op, &e);
                    return Ok(());
                }
            };
        if meta.is_dir() {
            if walk.recursive {
                if walk.dir_excluded(op.as_bytes()) && display.is_some() {
                    return Ok(());
                }
                let show = out_file.unwrap_or(true);
                return self.walk_dir(&path, display.map(String::from), show, walk, s, out);
            }
            if walk.skip_dirs {
                return Ok(());
            }
            self.error = true;
            if !walk.silent {
                let _ = writeln!(self.err, "grep: {op}: Is a directory");
            }
            return s.zero_count(op, out_file.unwrap_or(false), out);
        }
        if walk.recursive && walk.file_excluded(op.as_bytes()) {
            return Ok(());
        }
        if !walk.recursive
            && (!walk.include.is_empty() || !walk.exclude.is_empty())
            && walk.file_excluded(op.as_bytes())
        {
            return Ok(());
        }
        let show = out_file.unwrap_or(false);
        self.file(&path, op, show, walk, s, out)
    }

    fn file(
        &mut self,
        path: &Path,
        name: &str,
        show: bool,
        walk: &Walk,
        s: &mut Searcher<'_>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        // The file reached through a symlink is decided on (and labeled) too.
        let f = match safesh_utils::open::open_read_decided(path, |real| self.host.check_read(real))
        {
            Ok(f) => f,
            Err(e) => {
                self.warn(walk.silent, name, &e);
                return Ok(());
            }
        };
        let mut f = f;
        let r = s.search(&mut f, name, show, out, self.err);
        self.finish(r, name, walk.silent)
    }

    fn finish(
        &mut self,
        r: Result<search::Outcome, search::Error>,
        name: &str,
        silent: bool,
    ) -> std::io::Result<()> {
        match r {
            Ok(o) => {
                self.matched |= o.success;
                Ok(())
            }
            Err(search::Error::Read(e)) => {
                self.warn(silent, name, &e);
                Ok(())
            }
            Err(search::Error::Write(e)) => Err(e),
        }
    }

    fn walk_dir(
        &mut self,
        dir: &Path,
        display: Option<String>,
        show: bool,
        walk: &Walk,
        s: &mut Searcher<'_>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        if self.host.cancelled() {
            self.cancelled = true;
            return Ok(());
        }
        let shown = display.clone().unwrap_or_else(|| ".".into());
        if let Err(e) = self.host.check_read(dir) {
            self.warn(walk.silent, &shown, &e);
            return Ok(());
        }
        // Listed from the directory checked (a symlink on the way is decided on).
        let host = self.host;
        let mut names =
            match safesh_utils::beneath::read_dir_names(dir, |real| host.check_read(real)) {
                Ok(n) => n,
                Err(e) => {
                    self.warn(walk.silent, &shown, &e);
                    return Ok(());
                }
            };
        names.sort();
        for n in names {
            let child = dir.join(&n);
            let nstr = n.to_string_lossy().into_owned();
            let cname = match &display {
                None => nstr.clone(),
                Some(d) if d.ends_with('/') => format!("{d}{nstr}"),
                Some(d) => format!("{d}/{nstr}"),
            };
            let lmeta = match safesh_utils::beneath::metadata(&child, false, |real| {
                self.host.check_stat(real)
            }) {
                Ok(m) => m,
                Err(e) => {
                    self.warn(walk.silent, &cname, &e);
                    continue;
                }
            };
            let meta = if lmeta.file_type().is_symlink() {
                if !walk.deref {
                    continue;
                }
                match safesh_utils::beneath::metadata(&child, true, |real| {
                    self.host.check_stat(real)
                }) {
                    Ok(m) => m,
                    Err(e) => {
                        self.warn(walk.silent, &cname, &e);
                        continue;
                    }
                }
            } else {
                lmeta
            };
            if meta.is_dir() {
                if walk.dir_excluded(nstr.as_bytes()) {
                    continue;
                }
                self.walk_dir(&child, Some(cname), show, walk, s, out)?;
            } else if meta.is_file() {
                if walk.file_excluded(nstr.as_bytes()) {
                    continue;
                }
                if let Err(e) = self.host.check_read(&child) {
                    self.warn(walk.silent, &cname, &e);
                    continue;
                }
                self.file(&child, &cname, show, walk, s, out)?;
            }
            if self.cancelled || s.cancelled || (s.quiet() && self.matched) {
                return Ok(());
            }
        }
        Ok(())
    }
}
