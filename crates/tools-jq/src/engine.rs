//! Compiling a jq program with jaq and the run-time data its native filters see
//! (the shared input stream and a buffer for messages to stderr).

use crate::read::{ParseError, Reader};
use crate::val::Val;
use jaq_core::data::HasLut;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, DataT, Lut};
use std::cell::RefCell;

/// The data kind our filters run on.
pub struct Jq;

impl DataT for Jq {
    type V<'a> = Val;
    type Data<'a> = &'a Env<'a>;
}

/// What native filters can reach while a program runs.
pub struct Env<'a> {
    /// The compiled program's lookup table.
    pub lut: &'a Lut<Jq>,
    /// The input stream shared by the main loop and `input`/`inputs`.
    pub inputs: &'a RefCell<Inputs>,
    /// Text written by `debug`, `stderr`, `halt_error`, flushed by the main loop.
    pub stderr: &'a RefCell<Vec<u8>>,
    /// The shell, asked now and then whether the script was cancelled.
    pub host: &'a dyn safesh_utils::Host,
    /// Counts loop steps between cancellation checks.
    pub ticks: std::cell::Cell<u32>,
    /// Where `modulemeta` finds modules.
    pub modules: &'a crate::modules::Resolver<'a>,
}

impl Env<'_> {
    /// Counts one loop step; true when the script has been cancelled (checked
    /// every 1024 steps).
    pub fn tick(&self) -> bool {
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        t.is_multiple_of(1024) && self.host.cancelled()
    }
}

impl<'a> HasLut<'a, Jq> for &'a Env<'a> {
    /// jaq looks the program up before evaluating every term, in every
    /// recursion and loop of the evaluator: the one place where we can see a
    /// runaway program. It stops (by unwinding, see [`Stop`]) when the stack is
    /// nearly exhausted or the script was cancelled.
    fn lut(&self) -> &'a Lut<Jq> {
        check_stack();
        if self.tick() {
            std::panic::resume_unwind(Box::new(Stop::Cancelled));
        }
        self.lut
    }
}

/// Size of the stack programs are evaluated on (see [`on_big_stack`]). Only
/// the pages actually used are committed; the whole stack is released when
/// the evaluation ends.
const EVAL_STACK: usize = 256 << 20;

/// Stack that must remain free when jaq evaluates a term or one of our
/// recursive value functions takes a step: enough for what can run between
/// two checks (a bounded amount of evaluator and native frames, the
/// unwinding itself).
const RED_ZONE: usize = 2 << 20;

/// Why an evaluation was abandoned. jaq offers no hook that can fail, so we
/// unwind with this payload (`resume_unwind`, which prints nothing and runs no
/// panic hook) and catch it around each step of the main loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The stack is nearly exhausted: recursion too deep.
    TooDeep,
    /// The host cancelled the script.
    Cancelled,
}

/// Unwinds with [`Stop::TooDeep`] when less than [`RED_ZONE`] bytes of stack
/// remain. Cheap (a thread-local read and an address comparison).
pub fn check_stack() {
    if stacker::remaining_stack().is_some_and(|r| r < RED_ZONE) {
        std::panic::resume_unwind(Box::new(Stop::TooDeep));
    }
}

/// Runs `f` on a fresh stack of [`EVAL_STACK`] bytes, so that deep but finite
/// recursion works whatever thread the shell runs us on.
pub fn on_big_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::grow(EVAL_STACK, f)
}

/// Runs `f`, turning an unwinding [`Stop`] into `Err`; other panics go on.
pub fn catch_stop<R>(f: impl FnOnce() -> R) -> Result<R, Stop> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(p) => match p.downcast::<Stop>() {
            Ok(stop) => Err(*stop),
            Err(p) => std::panic::resume_unwind(p),
        },
    }
}

/// Where input values come from.
pub enum Source {
    /// JSON texts.
    Json(Reader),
    /// Lines of raw text (`-R`): the data and the read position.
    Lines(Vec<u8>, usize),
    /// Values already prepared (`-s`), handed out once each.
    Ready(std::vec::IntoIter<Val>),
}

/// The input stream.
pub struct Inputs {
    /// The source.
    pub source: Source,
    /// The parse error that ended the stream, if any.
    pub error: Option<ParseError>,
    /// Where each input file ends in the data, and its name (`<stdin>` for stdin).
    pub files: Vec<(usize, String)>,
    /// Whether a read found no more input.
    pub exhausted: bool,
}

impl Inputs {
    /// The next input: a value, a parse error message, or `None` at the end.
    pub fn next_input(&mut self) -> Option<Result<Val, String>> {
        let next = self.read_next();
        self.exhausted |= next.is_none();
        next
    }

    /// Where an error is, as jq 1.6 names it: `file:line`, or `None` once the
    /// inputs ran out unless the data ended with a newline (jq has closed
    /// the file then), and before any input was read with `-n`.
    pub fn location(&self, null_input: bool) -> Option<String> {
        let (started, newline_end) = match &self.source {
            Source::Json(r) => (r.pos() > 0, r.ends_with_newline()),
            Source::Lines(data, pos) => (*pos > 0, data.last().is_none_or(|&b| b == b'\n')),
            Source::Ready(_) => (true, true),
        };
        if (self.exhausted && !newline_end) || (null_input && !started && !self.exhausted) {
            return None;
        }
        let name = self.filename().unwrap_or("<stdin>");
        Some(format!("{name}:{}", self.line()))
    }

    fn read_next(&mut self) -> Option<Result<Val, String>> {
        match &mut self.source {
            Source::Json(r) => match r.next_value()? {
                Ok(v) => Some(Ok(v)),
                Err(e) => {
                    let msg = e.to_string();
                    self.error = Some(e);
                    Some(Err(msg))
                }
            },
            Source::Lines(data, pos) => {
                let rest = data.get(*pos..).filter(|r| !r.is_empty())?;
                let (line, used) = match rest.iter().position(|&b| b == b'\n') {
                    Some(i) => (&rest[..i], i + 1),
                    None => (rest, rest.len()),
                };
                let v = Val::from(String::from_utf8_lossy(line).into_owned());
                *pos += used;
                Some(Ok(v))
            }
            Source::Ready(it) => it.next().map(Ok),
        }
    }

    /// The name of the file the last input came from (`input_filename`).
    pub fn filename(&self) -> Option<&str> {
        let pos = match &self.source {
            Source::Json(r) => r.pos(),
            Source::Lines(_, pos) => *pos,
            Source::Ready(_) => usize::MAX,
        };
        if pos == 0 {
            return None;
        }
        let at = pos.saturating_sub(1);
        self.files
            .iter()
            .find(|(end, _)| at < *end)
            .or(self.files.last())
            .map(|(_, n)| n.as_str())
    }

    /// The current line, for error locations.
    pub fn line(&self) -> usize {
        match &self.source {
            Source::Json(r) => r.line(),
            Source::Lines(data, pos) => data
                .get(..*pos)
                .map_or(0, |d| d.iter().filter(|&&b| b == b'\n').count()),
            Source::Ready(_) => 0,
        }
    }
}

/// A compiled program.
pub type Program = jaq_core::Filter<Jq>;

/// Names of the global variables, in the order their values are given.
pub const FIXED_GLOBALS: &[&str] = &["$ENV", "$__loc__", "$ARGS"];

/// Applies the rewrites jaq's grammar needs (`?//`, `$d::d`, `.5`, `$b: pattern`) to the code of
/// the main program or a module.
pub fn rewrite(code: &str) -> String {
    let alt = crate::alt::rewrite(code);
    let code = alt.as_deref().unwrap_or(code);
    let code = crate::modules::rename_data_vars(code).unwrap_or_else(|| code.to_string());
    crate::alt::lexical(&code).unwrap_or(code)
}

/// A compiled program and the values of its data imports (`import "d" as
/// $d;`), to be bound after the global variables.
pub struct Compiled {
    /// The program.
    pub filter: Program,
    /// Values of the data imports, in jaq's order.
    pub data: Vec<Val>,
}

/// A compile error as jq 1.6 prints it: `jq: error: MSG at <top-level>, line
/// N:`, the line of the program where the error is (with its newline), and
/// as many spaces as the error's column (jq's `locfile_locate`).
fn top_level(msg: &str, code: &str, at: usize) -> String {
    let mut at = at.min(code.len());
    while !code.is_char_boundary(at) {
        at -= 1;
    }
    let start = code[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = code[at..].find('\n').map_or(code.len(), |i| at + i + 1);
    let line = code[..start].matches('\n').count() + 1;
    let column = at - start;
    format!(
        "jq: error: {msg} at <top-level>, line {line}:\n{}{:column$}\n",
        &code[start..end],
        ""
    )
}

/// Compiles `code` with the given extra global variable names (`$name` of
/// `--arg`), finding modules with `modules`. On failure returns jq's error
/// text (without the trailing count line) and the number of errors.
pub fn compile(
    code: &str,
    named: &[String],
    modules: &crate::modules::Resolver<'_>,
) -> Result<Compiled, (String, usize)> {
    use jaq_core::load::Import;
    use std::path::PathBuf;
    // jq 1.6's `null` is a constant: inside `path(…)` it leaves the path broken
    // with result null (intact on a null input). jaq's `def null: [][0];` would
    // fail at its `.[0]` step instead, also inside `add`, `min`, `max`.
    let null = jaq_core::load::parse("def null: [][0] as $x | $x;", |p| p.defs());
    let null = null.unwrap_or_default();
    // Our natives named as builtins (jq 1.6's C functions) replace jaq-std's
    // natives and definitions of the same name and arity; jaq-std's other
    // definitions then call ours.
    let ours: std::collections::HashSet<(&str, usize)> = crate::natives::funs()
        .map(|(name, args, _)| (name, args.len()))
        .collect();
    let replaced = move |name: &str, arity: usize| ours.contains(&(name, arity));
    let replaced_def = replaced.clone();
    let std_defs = jaq_std::defs().flat_map(move |d| match d.name {
        "null" => null.clone(),
        name if replaced_def(name, d.args.len()) => Vec::new(),
        _ => vec![d],
    });
    // jaq-json's definitions that the prelude redefines are left out: they
    // call jaq-json natives (`indices`) that are not loaded.
    let prelude_defs: Vec<_> = crate::natives::defs().collect();
    let prelude: std::collections::HashSet<(&str, usize)> = prelude_defs
        .iter()
        .map(|d| (d.name, d.args.len()))
        .collect();
    let json_defs = jaq_json::defs().filter(move |d| !prelude.contains(&(d.name, d.args.len())));
    let defs = jaq_core::defs()
        .chain(std_defs)
        .chain(json_defs)
        .chain(prelude_defs);
    let funs = jaq_core::funs::<Jq>()
        .chain(jaq_std::funs::<Jq>().filter(move |(n, a, _)| !replaced(n, a.len())))
        .chain(crate::natives::funs());
    crate::modules::header(code).map_err(|msg| (top_level(&msg, code, 0), 1))?;
    let search = |import: &Import<&str, PathBuf>| {
        let meta = import
            .meta
            .as_ref()
            .and_then(|t| crate::constkeys::constant(t, 0));
        let base = import.parent.parent().unwrap_or(&modules.cwd).to_path_buf();
        (base, crate::modules::search_of(meta.as_ref()))
    };
    // A dependency's definitions, for imports that share an alias.
    let defs_of = |dep: &crate::modules::Dep, base: &std::path::Path| {
        let dirs = crate::modules::search_of(dep.meta.as_ref());
        modules
            .find(&dep.path, base, dirs, "jq")
            .and_then(|p| modules.read(&p))
            .map(|t| crate::modules::def_names(&t))
            .unwrap_or_default()
    };
    let read = |import: Import<&str, PathBuf>| {
        let (base, dirs) = search(&import);
        let path = modules.find(import.path, &base, dirs, "jq")?;
        let text = modules.read(&path)?;
        crate::modules::header(&text)?;
        let code = rewrite(&text);
        let dir = path.parent().unwrap_or(&modules.cwd).to_path_buf();
        let code =
            crate::modules::split_shared_aliases(&code, |d| defs_of(d, &dir)).unwrap_or(code);
        Ok(File { code, path })
    };
    let loader = Loader::new(defs).with_read(read);
    let arena = Arena::default();
    let src = rewrite(code);
    let src = crate::modules::split_shared_aliases(&src, |d| defs_of(d, &modules.main_dir))
        .unwrap_or(src);
    let loaded = loader.load(
        &arena,
        File {
            code: src.as_str(),
            path: modules.main_dir.join("<top-level>"),
        },
    );
    let loaded = loaded.map_err(|errs| {
        let mut msg = String::new();
        let mut n = 0;
        for (_file, e) in &errs {
            match e {
                jaq_core::load::Error::Io(list) => {
                    for (_path, why) in list {
                        n += 1;
                        msg.push_str(&format!("jq: error: {why}\n\n"));
                    }
                }
                _ => {
                    n += 1;
                    msg.push_str(&top_level(
                        "syntax error, unexpected INVALID_CHARACTER (Unix shell quoting issues?)",
                        code,
                        0,
                    ));
                }
            }
        }
        (msg, n.max(1))
    })?;
    // Offsets into `src` are offsets into `code` when nothing was rewritten.
    let at = |offset: usize| if src == code { offset } else { 0 };
    if let Some((msg, offset)) = crate::constkeys::first_bad_key(&src) {
        return Err((top_level(&msg, code, at(offset)), 1));
    }
    let mut data = Vec::new();
    jaq_core::load::import(&loaded, |import| {
        let (base, dirs) = search(&import);
        let path = modules.find(import.path, &base, dirs, "json")?;
        let text = modules.read(&path)?;
        let mut r = crate::read::Reader::new(text.into_bytes());
        let mut vals = Vec::new();
        while let Some(v) = r.next_value() {
            vals.push(v.map_err(|e| format!("{e} (while parsing {})", path.display()))?);
        }
        data.push(Val::from_iter(vals));
        Ok(())
    })
    .map_err(|errs| {
        let mut msg = String::new();
        for (_file, e) in &errs {
            if let jaq_core::load::Error::Io(list) = e {
                for (_path, why) in list {
                    msg.push_str(&format!("jq: error: {why}\n\n"));
                }
            }
        }
        (msg, errs.len().max(1))
    })?;
    let mut globals: Vec<&str> = FIXED_GLOBALS.to_vec();
    globals.extend(named.iter().map(String::as_str));
    let filter = Compiler::default()
        .with_funs(funs)
        .with_global_vars(globals)
        .compile(loaded)
        .map_err(|errs| {
            let mut msg = String::new();
            let mut n = 0;
            for (_file, undefs) in errs {
                for (name, undef) in undefs {
                    n += 1;
                    // Where the name is in the main program (jq places a
                    // `break $label` at `break`).
                    let base = src.as_ptr() as usize;
                    let p = name.as_ptr() as usize;
                    let mut offset = if p >= base && p <= base + src.len() {
                        p - base
                    } else {
                        0
                    };
                    let what = match undef {
                        jaq_core::compile::Undefined::Filter(arity) => format!("{name}/{arity}"),
                        jaq_core::compile::Undefined::Label => {
                            offset = src[..offset].rfind("break").unwrap_or(offset);
                            format!("$*label-{}", name.trim_start_matches('$'))
                        }
                        _ => name.to_string(),
                    };
                    let m = format!("{what} is not defined");
                    msg.push_str(&top_level(&m, code, at(offset)));
                }
            }
            (msg, n.max(1))
        })?;
    Ok(Compiled { filter, data })
}
