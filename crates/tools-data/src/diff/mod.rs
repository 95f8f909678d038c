//! `diff` (GNU diffutils 3.8): normal, unified (`-u`, `-U N`) and context (`-c`,
//! `-C N`) output, `-q`, `-s`, `-r` over directories, `-N`, `-i`, `-w`, `-b`, `-B`,
//! `-a`, `-d`, `-L`, `-I`, `-t`, `-p`/`-F`, `--strip-trailing-cr`, ed (`-e`, `-f`)
//! and RCS (`-n`) scripts, side by side (`-y`, `-W`), line and group formats
//! (`ifdef`), `-` for stdin.
//! Exit status 0 same, 1 different, 2 trouble.

mod analyze;
mod ifdef;
mod names;
mod output;
mod script;
mod side;

use crate::out::Out;
use analyze::{LineCmp, Text, compare};
use names::{glob_match, quote_arg};
use output::{Style, hunks, mark, visible};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::path::Path;

const SPEC: Spec = Spec {
    flags: "qsucrNiwbBadTpefnty",
    valued: "UCLxIFW",
    long: &[
        ("brief", false, "q"),
        ("report-identical-files", false, "s"),
        ("recursive", false, "r"),
        ("new-file", false, "N"),
        ("ignore-case", false, "i"),
        ("ignore-all-space", false, "w"),
        ("ignore-space-change", false, "b"),
        ("ignore-blank-lines", false, "B"),
        ("text", false, "a"),
        ("minimal", false, "d"),
        ("label", true, "L"),
        ("normal", false, "normal"),
        ("unified", false, "u"),
        ("context", false, "c"),
        ("exclude", true, "x"),
        ("initial-tab", false, "T"),
        ("show-c-function", false, "p"),
        ("ed", false, "e"),
        ("forward-ed", false, "f"),
        ("rcs", false, "n"),
        ("expand-tabs", false, "t"),
        ("ignore-matching-lines", true, "I"),
        ("show-function-line", true, "F"),
        ("side-by-side", false, "y"),
        ("width", true, "W"),
        ("suppress-common-lines", false, "suppress-common-lines"),
        ("from-file", true, "from-file"),
        ("to-file", true, "to-file"),
        ("old-line-format", true, "old-line-format"),
        ("new-line-format", true, "new-line-format"),
        ("unchanged-line-format", true, "unchanged-line-format"),
        ("line-format", true, "line-format"),
        ("old-group-format", true, "old-group-format"),
        ("new-group-format", true, "new-group-format"),
        ("changed-group-format", true, "changed-group-format"),
        ("unchanged-group-format", true, "unchanged-group-format"),
        ("strip-trailing-cr", false, "strip-trailing-cr"),
    ],
    stop_at_operand: false,
};

/// Everything that shapes one run.
struct Opts {
    style: Style,
    context: usize,
    brief: bool,
    report_same: bool,
    recursive: bool,
    new_file: bool,
    text: bool,
    minimal: bool,
    blank_lines: bool,
    initial_tab: bool,
    show_function: Option<regex::bytes::Regex>,
    cmp: LineCmp,
    labels: Vec<String>,
    excludes: Vec<String>,
    /// `-I RE`: changes whose every line matches one are ignored.
    ignore: Vec<regex::bytes::Regex>,
    /// `-t`
    expand_tabs: bool,
    /// `--strip-trailing-cr`
    strip_cr: bool,
    /// Line or group formats were given: GNU's if-then-else output.
    formats: Option<ifdef::Formats>,
    /// `-y` layout.
    side: Option<side::Side>,
    /// `diff` plus the options as given, for `diff -r a/f b/f` headers.
    switches: String,
}

fn usage(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    ctx.warn("Try 'diff --help' for more information.");
    Ok(2)
}

/// Rewrites the optional-argument long options into their short forms.
fn normalize(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        if let Some(v) = a.strip_prefix("--unified=") {
            out.push("-U".into());
            out.push(v.into());
        } else if let Some(v) = a.strip_prefix("--context=") {
            out.push("-C".into());
            out.push(v.into());
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// Runs `diff`.
pub fn diff(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let args = normalize(ctx.args());
    let p = match parse(&args, &SPEC) {
        Ok(p) => p,
        Err(e) => return usage(ctx, &e),
    };
    // GNU: styles may not conflict; the context length only ever grows.
    let mut style: Option<Style> = None;
    let mut context: Option<usize> = None;
    for o in &p.opts {
        let (want, n) = match o.name.as_str() {
            "u" => (Style::Unified, Some(3)),
            "c" => (Style::Context, Some(3)),
            "normal" => (Style::Normal, None),
            "e" => (Style::Ed, None),
            "f" => (Style::ForwardEd, None),
            "n" => (Style::Rcs, None),
            "y" => (Style::Side, None),
            "U" | "C" => {
                let st = if o.name == "U" {
                    Style::Unified
                } else {
                    Style::Context
                };
                match o.value.as_deref().and_then(|v| v.parse::<usize>().ok()) {
                    Some(n) => (st, Some(n)),
                    None => {
                        let v = o.value.clone().unwrap_or_default();
                        return usage(ctx, &format!("invalid context length '{v}'"));
                    }
                }
            }
            _ => continue,
        };
        if style.is_some_and(|s| s != want) {
            return usage(ctx, "conflicting output style options");
        }
        style = Some(want);
        if let Some(n) = n {
            context = Some(context.map_or(n, |c| c.max(n)));
        }
    }
    let style = style.unwrap_or(Style::Normal);
    // The switch string: every argument that is not an operand, in order.
    let mut switches = String::from("diff");
    {
        let mut rest = p.operands.clone();
        for a in ctx.args() {
            if rest.first() == Some(a) && (a == "-" || !a.starts_with('-')) {
                rest.remove(0);
                continue;
            }
            switches.push(' ');
            switches.push_str(&quote_arg(a));
        }
    }
    // `-I` and `-F` patterns are basic regular expressions, as grep's.
    let bre = |pat: &str| {
        let mut o =
            safesh_utils::posix_regex::Options::new(safesh_utils::posix_regex::Dialect::Basic);
        o.target = safesh_utils::posix_regex::Target::Bytes;
        safesh_utils::posix_regex::translate_with(pat, &o)
            .and_then(|t| regex::bytes::Regex::new(&t.pattern).map_err(|e| e.to_string()))
    };
    let mut ignore = Vec::new();
    for pat in p.values("I") {
        match bre(pat) {
            Ok(r) => ignore.push(r),
            Err(e) => {
                ctx.warn(e);
                return Ok(2);
            }
        }
    }
    // `-p` is `-F '^[[:alpha:]$_]'`; the last `-F` given wins.
    let function_re = match p.values("F").last() {
        Some(pat) => Some(pat.to_string()),
        None => p.has("p").then(|| "^[[:alpha:]$_]".to_string()),
    };
    let show_function = match function_re.map(|pat| bre(&pat)) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            ctx.warn(e);
            return Ok(2);
        }
    };
    let formats = ifdef::Formats::from_opts(&p.opts);
    let side = if style == Style::Side {
        let width = match p.values("W").last() {
            None => 130,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n > 0 && n <= 1 << 20 => n,
                _ => return usage(ctx, &format!("invalid width '{v}'")),
            },
        };
        Some(side::Side::new(
            width,
            p.has("t"),
            p.has("suppress-common-lines"),
            ctx.env.utf8_locale(),
        ))
    } else {
        None
    };
    let opts = Opts {
        style,
        context: if style.bare() {
            0
        } else {
            context.unwrap_or(3)
        },
        brief: p.has("q"),
        report_same: p.has("s"),
        recursive: p.has("r"),
        new_file: p.has("N"),
        text: p.has("a"),
        minimal: p.has("d"),
        blank_lines: p.has("B"),
        initial_tab: p.has("T"),
        show_function,
        cmp: LineCmp {
            ignore_case: p.has("i"),
            ignore_all_space: p.has("w"),
            ignore_space_change: p.has("b"),
            newline_blind: matches!(style, Style::Ed | Style::ForwardEd),
        },
        labels: p.values("L").iter().map(|s| s.to_string()).collect(),
        excludes: p.values("x").iter().map(|s| s.to_string()).collect(),
        ignore,
        expand_tabs: p.has("t"),
        strip_cr: p.has("strip-trailing-cr"),
        formats,
        side,
        switches,
    };
    if opts.labels.len() > 2 {
        return usage(ctx, "too many file label options");
    }
    // `--from-file=F X Y…` compares F with each operand, `--to-file=F` each
    // operand with F.
    let from = p.values("from-file").last().map(|s| s.to_string());
    let to = p.values("to-file").last().map(|s| s.to_string());
    let pairs: Vec<(String, String)> = match (&from, &to) {
        (Some(_), Some(_)) => return usage(ctx, "--from-file and --to-file both specified"),
        (Some(f), None) => p.operands.iter().map(|o| (f.clone(), o.clone())).collect(),
        (None, Some(t)) => p.operands.iter().map(|o| (o.clone(), t.clone())).collect(),
        (None, None) => Vec::new(),
    };
    let pairs = if from.is_some() || to.is_some() {
        pairs
    } else {
        match p.operands.len() {
            0 => {
                let last = ctx.args().last().cloned().unwrap_or_else(|| "diff".into());
                return usage(ctx, &format!("missing operand after '{last}'"));
            }
            1 => {
                let o = p.operands[0].clone();
                return usage(ctx, &format!("missing operand after '{o}'"));
            }
            2 => {}
            _ => {
                let o = p.operands[2].clone();
                return usage(ctx, &format!("extra operand '{o}'"));
            }
        }
        vec![(p.operands[0].clone(), p.operands[1].clone())]
    };
    // Time stamps are shown in the script's TZ when it sets one.
    let tz = crate::tz::local(ctx.env.get("TZ"));
    let mut run = Run {
        opts,
        tz,
        stdin_used: false,
        out: Out::new(ctx),
    };
    let mut status = 0;
    for (a, b) in pairs {
        status = status.max(run.top(&a, &b)?);
    }
    Ok(run.out.finish_with(status))
}

struct Run<'c, 'a> {
    opts: Opts,
    tz: jiff::tz::TimeZone,
    stdin_used: bool,
    out: Out<'c, 'a>,
}

/// What kind of file a path is (symlinks followed), in GNU's words.
fn kind_name(path: &Path) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => "directory",
        Ok(m) if m.is_file() && m.len() == 0 => "regular empty file",
        Ok(m) if m.is_file() => "regular file",
        Ok(m) if m.file_type().is_fifo() => "fifo",
        Ok(m) if m.file_type().is_socket() => "socket",
        Ok(m) if m.file_type().is_char_device() => "character special file",
        Ok(m) if m.file_type().is_block_device() => "block special file",
        Ok(_) => "weird file",
        Err(_) => "regular file",
    }
}

/// Whether a directory entry is something diff reads (a regular file or a
/// directory, symlinks followed; a broken link counts, its read reports the
/// error). GNU never opens a fifo or device met inside a directory: reading
/// one could block forever.
fn readable_kind(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => m.is_file() || m.is_dir(),
        Err(_) => true,
    }
}

/// A loaded operand.
struct Loaded {
    data: Vec<u8>,
    mtime: Option<std::time::SystemTime>,
    blksize: usize,
}

impl Run<'_, '_> {
    fn is_dir(&mut self, name: &str) -> bool {
        name != "-"
            && self
                .out
                .ctx()
                .check_read(name)
                .map(|p| p.is_dir())
                .unwrap_or(false)
    }

    fn exists(&mut self, name: &str) -> bool {
        name == "-"
            || self
                .out
                .ctx()
                .check_read(name)
                .map(|p| p.exists())
                .unwrap_or(false)
    }

    fn top(&mut self, a: &str, b: &str) -> UtilResult {
        let (da, db) = (self.is_dir(a), self.is_dir(b));
        if da && db {
            return self.dirs(a, b, false);
        }
        if (da && b == "-") || (db && a == "-") {
            self.out.warn("cannot compare '-' to a directory");
            return Ok(2);
        }
        // A file against a directory means the file of the same name inside it.
        let base = |p: &str| {
            Path::new(p)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let a2 = if da {
            format!("{}/{}", a.trim_end_matches('/'), base(b))
        } else {
            a.to_string()
        };
        let b2 = if db {
            format!("{}/{}", b.trim_end_matches('/'), base(a))
        } else {
            b.to_string()
        };
        self.files(&a2, &b2, false)
    }

    fn load(&mut self, name: &str) -> std::io::Result<Loaded> {
        if name == "-" {
            let mut data = Vec::new();
            if !self.stdin_used {
                self.stdin_used = true;
                // Within the memory budget, as a named file ([`UtilCtx::read_file`]).
                let budget = self.out.ctx().host.memory_budget();
                std::io::Read::read_to_end(
                    &mut std::io::Read::take(&mut *self.out.ctx().stdin, budget.saturating_add(1)),
                    &mut data,
                )?;
                if data.len() as u64 > budget {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::OutOfMemory,
                        safesh_utils::ctx::MemoryLimit {
                            what: "-".into(),
                            budget,
                        },
                    ));
                }
            }
            return Ok(Loaded {
                data,
                mtime: Some(std::time::SystemTime::now()),
                blksize: 4096,
            });
        }
        let path = self.out.ctx().check_read(name)?;
        let meta = self.out.ctx().stat(&path, true)?;
        let data = self.out.ctx().read_file(name)?;
        use std::os::unix::fs::MetadataExt;
        Ok(Loaded {
            data,
            mtime: meta.modified().ok(),
            blksize: (meta.blksize() as usize).max(1),
        })
    }

    /// Compares two files (either may be absent under `-N`).
    fn files(&mut self, a: &str, b: &str, in_dir: bool) -> UtilResult {
        if a == "-" && b == "-" {
            // Standard input compared with itself.
            if self.opts.report_same {
                self.out.write(b"Files - and - are identical\n");
            }
            return Ok(0);
        }
        let mut loaded = Vec::new();
        let mut status = 0;
        for name in [a, b] {
            if self.opts.new_file && !self.exists(name) {
                loaded.push(Loaded {
                    data: Vec::new(),
                    mtime: None,
                    blksize: 4096,
                });
                continue;
            }
            match self.load(name) {
                Ok(l) => loaded.push(l),
                Err(e) => {
                    self.out.flush();
                    self.out.ctx().warn_io(name, &e);
                    status = 2;
                }
            }
        }
        if status != 0 {
            return Ok(status);
        }
        if self.opts.strip_cr {
            for l in &mut loaded {
                l.data = script::strip_cr(&l.data);
            }
        }
        let (la, lb) = (&loaded[0], &loaded[1]);
        if la.data == lb.data
            && let Some(f) = &self.opts.formats
        {
            // Formats show the common lines too, even of identical files.
            let (ta, tb) = (Text::new(&la.data), Text::new(&lb.data));
            let mut text = Vec::new();
            ifdef::write(&mut text, &ta, &tb, &[], f);
            self.out.write(&text);
            return Ok(0);
        }
        if la.data == lb.data
            && let Some(sd) = &self.opts.side
        {
            // Side by side shows the common lines of identical files too.
            let (ta, tb) = (Text::new(&la.data), Text::new(&lb.data));
            let mut text = Vec::new();
            if in_dir {
                text.extend_from_slice(format!("{} {a} {b}\n", self.opts.switches).as_bytes());
            }
            sd.write(&mut text, &ta, &tb, &[]);
            self.out.write(&text);
            return Ok(0);
        }
        if la.data == lb.data {
            if self.opts.report_same {
                self.out
                    .write(format!("Files {a} and {b} are identical\n").as_bytes());
            }
            return Ok(0);
        }
        let binary =
            |l: &Loaded| memchr::memchr(0, &l.data[..l.data.len().min(l.blksize)]).is_some();
        if !self.opts.text && (binary(la) || binary(lb)) {
            let msg = if self.opts.brief {
                format!("Files {a} and {b} differ\n")
            } else {
                format!("Binary files {a} and {b} differ\n")
            };
            self.out.write(msg.as_bytes());
            return Ok(1);
        }
        let (ta, tb) = (Text::new(&la.data), Text::new(&lb.data));
        let script = compare(
            &ta,
            &tb,
            &self.opts.cmp,
            self.opts.context,
            self.opts.minimal,
        );
        let skip_ws = self.opts.cmp.ignore_all_space || self.opts.cmp.ignore_space_change;
        let marked = mark(
            &ta,
            &tb,
            &script,
            self.opts.blank_lines,
            skip_ws,
            &self.opts.ignore,
        );
        let groups = hunks(&marked, self.opts.context, self.opts.style);
        if !groups.iter().any(|h| visible(h)) {
            if let Some(sd) = &self.opts.side {
                // Every change was ignorable: all lines show as common.
                let mut text = Vec::new();
                if in_dir {
                    text.extend_from_slice(format!("{} {a} {b}\n", self.opts.switches).as_bytes());
                }
                sd.write(&mut text, &ta, &tb, &marked);
                self.out.write(&text);
                return Ok(0);
            }
            if self.opts.report_same {
                self.out
                    .write(format!("Files {a} and {b} are identical\n").as_bytes());
            }
            return Ok(0);
        }
        if self.opts.brief {
            self.out
                .write(format!("Files {a} and {b} differ\n").as_bytes());
            return Ok(1);
        }
        let mut text = Vec::new();
        if let Some(sd) = &self.opts.side {
            if in_dir {
                text.extend_from_slice(format!("{} {a} {b}\n", self.opts.switches).as_bytes());
            }
            sd.write(&mut text, &ta, &tb, &marked);
            self.out.write(&text);
            return Ok(1);
        }
        if let Some(f) = &self.opts.formats {
            ifdef::write(&mut text, &ta, &tb, &script, f);
            self.out.write(&text);
            return Ok(1);
        }
        if in_dir {
            text.extend_from_slice(format!("{} {a} {b}\n", self.opts.switches).as_bytes());
        }
        let label = |k: usize, name: &str, l: &Loaded, style: Style| -> String {
            if let Some(lab) = self.opts.labels.get(k) {
                return lab.clone();
            }
            format!("{name}\t{}", stamp(l.mtime, style, &self.tz))
        };
        match self.opts.style {
            Style::Unified => {
                text.extend_from_slice(
                    format!("--- {}\n", label(0, a, la, Style::Unified)).as_bytes(),
                );
                text.extend_from_slice(
                    format!("+++ {}\n", label(1, b, lb, Style::Unified)).as_bytes(),
                );
            }
            Style::Context => {
                text.extend_from_slice(
                    format!("*** {}\n", label(0, a, la, Style::Context)).as_bytes(),
                );
                text.extend_from_slice(
                    format!("--- {}\n", label(1, b, lb, Style::Context)).as_bytes(),
                );
            }
            Style::Normal | Style::Ed | Style::ForwardEd | Style::Rcs | Style::Side => {}
        }
        // `-t` changes only what is shown: the texts were compared as read.
        let expanded = self
            .opts
            .expand_tabs
            .then(|| (script::expand_tabs(&la.data), script::expand_tabs(&lb.data)));
        let (ta, tb) = match &expanded {
            Some((x, y)) => (Text::new(x), Text::new(y)),
            None => (ta, tb),
        };
        match self.opts.style {
            Style::Ed => script::ed(&mut text, &tb, &groups),
            Style::ForwardEd => script::forward_ed(&mut text, &tb, &groups),
            Style::Rcs => script::rcs(&mut text, &tb, &groups),
            _ => {}
        }
        let tab = self.opts.initial_tab;
        let mut fmt = output::Fmt::new(self.opts.context, tab, self.opts.show_function.clone());
        for h in groups {
            match self.opts.style {
                Style::Normal => output::normal(&mut text, &ta, &tb, h, tab),
                Style::Unified => output::unified(&mut text, &ta, &tb, h, &mut fmt),
                Style::Context => output::context(&mut text, &ta, &tb, h, &mut fmt),
                Style::Ed | Style::ForwardEd | Style::Rcs | Style::Side => {}
            }
            if text.len() > 64 * 1024 {
                self.out.write(&text);
                text.clear();
            }
        }
        self.out.write(&text);
        // An ed script cannot express a missing final newline: GNU says so
        // for each such file, and the run is in trouble.
        if matches!(self.opts.style, Style::Ed | Style::ForwardEd) {
            let mut trouble = false;
            for (name, t) in [(a, &ta), (b, &tb)] {
                if t.missing_newline {
                    self.out
                        .warn(format_args!("{name}: No newline at end of file\n"));
                    trouble = true;
                }
            }
            if trouble {
                return Ok(2);
            }
        }
        Ok(1)
    }

    fn excluded(&self, name: &str) -> bool {
        self.opts
            .excludes
            .iter()
            .any(|p| glob_match(p.as_bytes(), name.as_bytes()))
    }

    fn list(&mut self, dir: &str) -> std::io::Result<Vec<String>> {
        let path = self.out.ctx().check_read(dir)?;
        let mut names: Vec<String> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !self.excluded(n))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Compares two directories (either may be absent under `-N`).
    fn dirs(&mut self, a: &str, b: &str, _nested: bool) -> UtilResult {
        let mut lists = Vec::new();
        for d in [a, b] {
            if !self.exists(d) && self.opts.new_file {
                lists.push(Vec::new());
                continue;
            }
            match self.list(d) {
                Ok(l) => lists.push(l),
                Err(e) => {
                    self.out.flush();
                    self.out.ctx().warn_io(d, &e);
                    return Ok(2);
                }
            }
        }
        let (la, lb) = (&lists[0], &lists[1]);
        let mut names: Vec<&String> = la.iter().chain(lb.iter()).collect();
        names.sort();
        names.dedup();
        let mut status = 0;
        let join = |d: &str, n: &str| format!("{}/{n}", d.trim_end_matches('/'));
        for name in names {
            if self.out.ctx().host.cancelled() {
                return Ok(130);
            }
            let (pa, pb) = (join(a, name), join(b, name));
            let (ina, inb) = (la.contains(name), lb.contains(name));
            let s = if ina && inb {
                self.entry(&pa, &pb)?
            } else if self.opts.new_file && {
                let present = if ina { &pa } else { &pb };
                readable_kind(&self.out.ctx().resolve(present))
            } {
                let present = if ina { &pa } else { &pb };
                if self.is_dir(present) {
                    if self.opts.recursive {
                        self.dirs(&pa, &pb, true)?
                    } else {
                        let msg = format!("Common subdirectories: {pa} and {pb}\n");
                        self.out.write(msg.as_bytes());
                        0
                    }
                } else {
                    self.files(&pa, &pb, true)?
                }
            } else {
                let dir = if ina { a } else { b };
                self.out
                    .write(format!("Only in {dir}: {name}\n").as_bytes());
                1
            };
            status = status.max(s);
        }
        Ok(status)
    }

    fn entry(&mut self, pa: &str, pb: &str) -> UtilResult {
        let (da, db) = (self.is_dir(pa), self.is_dir(pb));
        match (da, db) {
            (true, true) if self.opts.recursive => self.dirs(pa, pb, true),
            (true, true) => {
                self.out
                    .write(format!("Common subdirectories: {pa} and {pb}\n").as_bytes());
                Ok(0)
            }
            (false, false)
                if {
                    let ctx = self.out.ctx();
                    readable_kind(&ctx.resolve(pa)) && readable_kind(&ctx.resolve(pb))
                } =>
            {
                self.files(pa, pb, true)
            }
            _ => {
                let (ka, kb) = {
                    let ctx = self.out.ctx();
                    (kind_name(&ctx.resolve(pa)), kind_name(&ctx.resolve(pb)))
                };
                self.out
                    .write(format!("File {pa} is a {ka} while file {pb} is a {kb}\n").as_bytes());
                Ok(1)
            }
        }
    }
}

/// The header time stamp: `2026-11-22 01:02:03.123456789 +0000` for `-u`,
/// `Sun Nov 22 01:02:03 2026` for `-c`, in the local time zone.
fn stamp(t: Option<std::time::SystemTime>, style: Style, tz: &jiff::tz::TimeZone) -> String {
    let t = t.unwrap_or(std::time::UNIX_EPOCH);
    let Ok(ts) = jiff::Timestamp::try_from(t) else {
        return String::new();
    };
    let zoned = ts.to_zoned(tz.clone());
    if style == Style::Context {
        zoned.strftime("%a %b %e %H:%M:%S %Y").to_string()
    } else {
        zoned.strftime("%Y-%m-%d %H:%M:%S.%N %z").to_string()
    }
}
