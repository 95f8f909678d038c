//! In-process `jq`, behaving like jq 1.6: programs are compiled and run by the
//! jaq crates on our own value type (`val`, doubles and ordered objects as in
//! jq 1.6), with definitions and native filters of our own where jaq's library
//! differs from jq 1.6 (`prelude.jq`, `natives`). Input parsing (`read`),
//! output formatting (`write`), error messages and exit statuses are jq 1.6's.
//! Known differences: `DIFFERENCES.md`.

mod alt;
mod cli;
mod constkeys;
mod engine;
mod envuse;
mod errors;
mod math;
mod modules;
mod natives;
mod read;
mod time;
mod val;
mod write;

use cli::{Action, Named, Opts};
use engine::{Env, Inputs, Source};
use jaq_core::{Ctx, Vars};
use read::Reader;
use safesh_utils::ctx::MemoryLimit;
use safesh_utils::{UtilCtx, UtilFn, UtilResult, io_error_text};
use std::cell::RefCell;
use std::io::Write;
use val::Val;
use write::Style;

/// The utilities of this crate, by name.
pub static UTILS: &[(&str, UtilFn)] = &[("jq", jq)];

/// Parses every JSON value of `text`; the error is jq's parse message.
fn parse_all(text: &[u8]) -> Result<Vec<Val>, String> {
    let mut r = Reader::new(text.to_vec());
    let mut out = Vec::new();
    while let Some(v) = r.next_value() {
        out.push(v.map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// Names of `--arg`-style variables (with `$`), their values, and `$ARGS`.
type NamedVals = (Vec<String>, Vec<Val>, Val);

/// Builds the values of `--arg`-style variables and `$ARGS`; errors are
/// (stderr text, status).
/// Why the named values could not be built.
enum NamedError {
    /// A message for stderr and the exit status (jq's own errors).
    Usage(String, i32),
    /// A `--rawfile`/`--slurpfile` past the memory budget: stops the script
    /// as `LIMIT_EXCEEDED`, like every other budget.
    Stop(safesh_utils::Interrupt),
}

impl From<(String, i32)> for NamedError {
    fn from((msg, status): (String, i32)) -> Self {
        NamedError::Usage(msg, status)
    }
}

fn named_values(ctx: &UtilCtx<'_>, o: &Opts) -> Result<NamedVals, NamedError> {
    let mut names = Vec::new();
    let mut vals = Vec::new();
    let mut named = val::Map::default();
    for n in &o.named {
        let (name, v) = match n {
            Named::Str(name, s) => (name, Val::from(s.clone())),
            Named::Json(name, text) => {
                let mut vs = parse_all(text.as_bytes()).unwrap_or_default();
                if vs.len() != 1 {
                    return Err((
                        format!(
                            "jq: Invalid JSON text passed to --argjson\n{}",
                            cli::short_usage()
                        ),
                        2,
                    )
                        .into());
                }
                (name, vs.remove(0))
            }
            Named::SlurpFile(name, file) | Named::RawFile(name, file) => {
                let raw = matches!(n, Named::RawFile(..));
                let opt = if raw { "rawfile" } else { "slurpfile" };
                let data = match ctx.read_file(file) {
                    Ok(d) => d,
                    Err(e) => {
                        if let Some(stop) = MemoryLimit::from_io(&e, &format!("jq --{opt}")) {
                            return Err(NamedError::Stop(stop));
                        }
                        return Err(NamedError::Usage(
                            format!(
                                "jq: Bad JSON in --{opt} {name} {file}: Could not open {file}: {}\n",
                                io_error_text(&e)
                            ),
                            2,
                        ));
                    }
                };
                let v = if raw {
                    Val::from(String::from_utf8_lossy(&data).into_owned())
                } else {
                    let vs = parse_all(&data).map_err(|e| {
                        (format!("jq: Bad JSON in --{opt} {name} {file}: {e}\n"), 2)
                    })?;
                    Val::from_iter(vs)
                };
                (name, v)
            }
        };
        // The first definition of a name wins, as in jq.
        let var = format!("${name}");
        if names.contains(&var) {
            continue;
        }
        named.insert(Val::from(name.clone()), v.clone());
        names.push(var);
        vals.push(v);
    }
    let mut positional = Vec::new();
    for (text, json) in &o.positional {
        if *json {
            let mut vs = parse_all(text.as_bytes()).unwrap_or_default();
            if vs.len() != 1 {
                return Err((
                    format!(
                        "jq: Invalid JSON text passed to --jsonargs\n{}",
                        cli::short_usage()
                    ),
                    2,
                )
                    .into());
            }
            positional.push(vs.remove(0));
        } else {
            positional.push(Val::from(text.clone()));
        }
    }
    let mut args = val::Map::default();
    args.insert(
        Val::from("positional".to_string()),
        Val::from_iter(positional),
    );
    args.insert(Val::from("named".to_string()), Val::obj(named));
    Ok((names, vals, Val::obj(args)))
}

/// Where this run finds modules: `-L` directories (relative ones from the
/// working directory) or jq 1.6's default search path. `$HOME` is read only
/// when the program can use modules.
fn resolver<'h>(ctx: &UtilCtx<'h>, o: &Opts, program: &str) -> modules::Resolver<'h> {
    let lib_dirs = if o.lib_dirs.is_empty() {
        modules::DEFAULT_LIB_DIRS
            .iter()
            .map(|d| d.to_string())
            .collect()
    } else {
        o.lib_dirs
            .iter()
            .map(|d| {
                if d.starts_with('~') || d.starts_with("$ORIGIN/") {
                    d.clone()
                } else {
                    // jq makes each one absolute (realpath when it exists).
                    let p = ctx.cwd.join(d);
                    std::fs::canonicalize(&p)
                        .unwrap_or(p)
                        .to_string_lossy()
                        .into_owned()
                }
            })
            .collect()
    };
    let main_dir = match (&o.from_file, &o.program) {
        (true, Some(f)) => ctx
            .cwd
            .join(f)
            .parent()
            .map_or_else(|| ctx.cwd.clone(), std::path::Path::to_path_buf),
        _ => ctx.cwd.clone(),
    };
    let uses_modules = ["import", "include", "modulemeta", "get_search_list"]
        .iter()
        .any(|w| program.contains(w));
    modules::Resolver {
        cwd: ctx.cwd.clone(),
        main_dir,
        lib_dirs,
        home: uses_modules
            .then(|| ctx.env.get("HOME").map(std::path::PathBuf::from))
            .flatten(),
        host: ctx.host,
    }
}

/// The `jq` utility.
pub fn jq(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let o = match cli::parse(ctx.args()) {
        Action::Run(o) => o,
        Action::Print(s) => {
            let _ = ctx.stdout.write_all(s.as_bytes());
            return Ok(0);
        }
        Action::Fail(msg, st) => {
            let _ = ctx.stderr.write_all(msg.as_bytes());
            return Ok(st);
        }
    };
    let mut files = o.files.clone();
    let mut program = o.program.clone().unwrap_or_default();
    if o.from_file {
        match ctx.read_file(&program) {
            Ok(b) => program = String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                if let Some(stop) = MemoryLimit::from_io(&e, "jq -f") {
                    return Err(stop);
                }
                let msg = format!(
                    "jq: error: Could not open {program}: {}\n",
                    io_error_text(&e)
                );
                let _ = ctx.stderr.write_all(msg.as_bytes());
                return Ok(2);
            }
        }
    }
    let (names, named_vals, args_val) = match named_values(ctx, &o) {
        Ok(x) => x,
        Err(NamedError::Usage(msg, st)) => {
            let _ = ctx.stderr.write_all(msg.as_bytes());
            return Ok(st);
        }
        Err(NamedError::Stop(stop)) => return Err(stop),
    };
    let resolver = resolver(ctx, &o, &program);
    let compiled = match engine::compile(&program, &names, &resolver) {
        Ok(f) => f,
        Err((msg, n)) => {
            let plural = if n == 1 { "" } else { "s" };
            let _ = writeln!(ctx.stderr, "{msg}jq: {n} compile error{plural}");
            return Ok(3);
        }
    };
    // Only the variables the program can read are read (and labeled).
    let env_val = match envuse::env_names(&program) {
        None => Val::obj(
            ctx.env
                .iter()
                .map(|(k, v)| (Val::from(k.clone()), Val::from(v.clone())))
                .collect(),
        ),
        Some(names) => Val::obj(
            names
                .iter()
                .filter_map(|k| Some((Val::from(k.clone()), Val::from(ctx.env.get(k)?.clone()))))
                .collect(),
        ),
    };
    let mut loc = val::Map::default();
    loc.insert(
        Val::from("file".to_string()),
        Val::from("<top-level>".to_string()),
    );
    loc.insert(Val::from("line".to_string()), Val::Num(1.0));
    let mut globals = vec![env_val, Val::obj(loc), args_val];
    globals.extend(named_vals);
    globals.extend(compiled.data);
    let filter = compiled.filter;

    // Input: the files concatenated (as jq feeds them to one parser), or stdin,
    // within the utility's share of [limits] memory_mb (jq holds all of it).
    let budget = ctx.host.memory_budget();
    let mut data = Vec::new();
    let mut input_errors = false;
    let mut bounds = Vec::new();
    if files.is_empty() {
        let read = std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut *ctx.stdin, budget.saturating_add(1)),
            &mut data,
        );
        if data.len() as u64 > budget {
            return Err(safesh_utils::ctx::MemoryLimit::interrupt("jq", budget));
        }
        if let Err(e) = read {
            ctx.warn(format_args!("error: {}", io_error_text(&e)));
            input_errors = true;
        }
        bounds.push((data.len(), "<stdin>".to_string()));
    }
    for f in files.drain(..) {
        // The size is checked before the file is read, and the read stops
        // past the budget (a FIFO or a growing file has no size to ask).
        let room = budget.saturating_sub(data.len() as u64);
        match ctx.read_file_within(&f, &mut data, room) {
            Ok(false) => {
                return Err(safesh_utils::ctx::MemoryLimit::interrupt("jq", budget));
            }
            Ok(true) => bounds.push((data.len(), f)),
            Err(e) => {
                let _ = writeln!(
                    ctx.stderr,
                    "jq: error: Could not open {f}: {}",
                    io_error_text(&e)
                );
                input_errors = true;
            }
        }
    }
    // Evaluation runs on a big stack of its own; `engine::check_stack` stops
    // runaway recursion before that stack overflows.
    let mut ret =
        engine::on_big_stack(|| run_all(ctx, &o, &filter, &resolver, globals, data, bounds));
    if let Ok(r) = ret.as_mut()
        && input_errors
        && *r != 141
    {
        *r = 2;
    }
    ret
}

/// How one input's run ended (jq 1.6's `process` return value).
enum Outcome {
    /// A status in jq's encoding (14: no output, 11: last output false/null).
    Status(i32),
    /// `halt` / `halt_error` with this exit code.
    Halt(i32),
    /// Writing to stdout failed.
    WriteError(std::io::Error),
}

fn run_all(
    ctx: &mut UtilCtx<'_>,
    o: &Opts,
    filter: &engine::Program,
    resolver: &modules::Resolver<'_>,
    globals: Vec<Val>,
    data: Vec<u8>,
    files: Vec<(usize, String)>,
) -> UtilResult {
    let source = if o.raw_in && o.slurp {
        Source::Ready(vec![Val::from(String::from_utf8_lossy(&data).into_owned())].into_iter())
    } else if o.raw_in {
        Source::Lines(data, 0)
    } else if o.slurp {
        match parse_all(&data) {
            Ok(vs) => Source::Ready(vec![Val::from_iter(vs)].into_iter()),
            Err(e) => {
                let _ = writeln!(ctx.stderr, "parse error: {e}");
                return Ok(4);
            }
        }
    } else {
        Source::Json(Reader::new(data))
    };
    let inputs = RefCell::new(Inputs {
        source,
        error: None,
        exhausted: false,
        files,
    });
    let stderr_buf = RefCell::new(Vec::new());
    let env = Env {
        lut: &filter.lut,
        inputs: &inputs,
        stderr: &stderr_buf,
        host: ctx.host,
        ticks: std::cell::Cell::new(0),
        modules: resolver,
    };
    let style = Style {
        indent: o.indent,
        sort_keys: o.sort_keys,
        ascii: o.ascii,
    };
    // Outputs are buffered as jq's stdio buffers them; messages on stderr
    // are not (and do not flush the outputs first).
    let mut out = write::BlockWriter::new(&mut *ctx.stdout);
    let mut ret = 0;
    let mut halted = None;
    let mut write_err = None;
    let host = ctx.host;
    let run_one = |input: Val, out: &mut dyn Write, err: &mut dyn Write| {
        let vars = Vars::new(globals.iter().cloned());
        let jctx = Ctx::<engine::Jq>::new(&env, vars);
        let mut status = 14;
        let mut buf = Vec::new();
        let location = || {
            let loc = inputs.borrow().location(o.null_input);
            loc.unwrap_or_else(|| "<unknown>".to_string())
        };
        // A runaway program unwinds out of jaq (see `engine::Stop`): each
        // step of the evaluation is guarded, and the abandoned iterator is
        // only dropped afterwards.
        let stopped = |stop, err: &mut dyn Write| match stop {
            engine::Stop::Cancelled => Outcome::Halt(130),
            engine::Stop::TooDeep => {
                let _ = err.write_all(&stderr_buf.borrow_mut().split_off(0));
                let _ = writeln!(
                    err,
                    "jq: error (at {}): recursion too deep (safesh limit)",
                    location()
                );
                Outcome::Status(5)
            }
        };
        let mut outs = match engine::catch_stop(|| filter.id.run((jctx, input))) {
            Ok(it) => it,
            Err(stop) => return stopped(stop, err),
        };
        loop {
            let y = match engine::catch_stop(|| outs.next()) {
                Ok(Some(y)) => y,
                Ok(None) => break,
                Err(stop) => return stopped(stop, err),
            };
            if host.cancelled() {
                return Outcome::Halt(130);
            }
            let _ = err.write_all(&stderr_buf.borrow_mut().split_off(0));
            match y {
                Ok(v) => {
                    buf.clear();
                    if o.seq {
                        buf.push(0x1e);
                    }
                    match &v {
                        Val::Str(s) if o.raw_out && !o.ascii => buf.extend_from_slice(s.as_bytes()),
                        _ => write::write_val(&mut buf, &style, 0, &v),
                    }
                    if !o.join {
                        buf.push(b'\n');
                    }
                    if let Err(e) = out.write_all(&buf) {
                        return Outcome::WriteError(e);
                    }
                    status = if o.exit_status && matches!(v, Val::Null | Val::Bool(false)) {
                        11
                    } else {
                        0
                    };
                }
                Err(exn) => match exn.get_err() {
                    Ok(e) => {
                        let at = location();
                        let v = e.into_val();
                        let msg = match &v {
                            Val::Str(s) => format!(": {}", errors::translate(s)),
                            other => format!(
                                " (not a string): {}",
                                String::from_utf8_lossy(&write::to_json(other))
                            ),
                        };
                        let _ = writeln!(err, "jq: error (at {at}){msg}");
                        return Outcome::Status(5);
                    }
                    Err(exn) => {
                        let _ = err.write_all(&stderr_buf.borrow_mut().split_off(0));
                        let code = exn.get_halt().unwrap_or(5);
                        return Outcome::Halt(code);
                    }
                },
            }
        }
        let _ = err.write_all(&stderr_buf.borrow_mut().split_off(0));
        Outcome::Status(status)
    };
    let mut handle = |outcome: Outcome, ret: &mut i32| match outcome {
        Outcome::Status(s) => {
            *ret = s;
            true
        }
        Outcome::Halt(c) => {
            halted = Some(c);
            false
        }
        Outcome::WriteError(e) => {
            write_err = Some(e);
            false
        }
    };
    if o.null_input {
        let oc = run_one(Val::Null, &mut out, &mut *ctx.stderr);
        handle(oc, &mut ret);
    } else {
        loop {
            let next = inputs.borrow_mut().next_input();
            match next {
                Some(Ok(v)) => {
                    let oc = run_one(v, &mut out, &mut *ctx.stderr);
                    if !handle(oc, &mut ret) {
                        break;
                    }
                }
                Some(Err(msg)) => {
                    let _ = writeln!(ctx.stderr, "parse error: {msg}");
                    // The real jq 1.6 exits 4 after a parse error.
                    ret = 4;
                    break;
                }
                None => break,
            }
        }
    }
    let flushed = out.flush();
    drop(out);
    if let Some(e) = write_err.or(flushed.err()) {
        return Ok(ctx.write_failed(&e));
    }
    if let Some(c) = halted {
        return Ok(c);
    }
    Ok(if ret >= 10 {
        if o.exit_status { ret - 10 } else { 0 }
    } else {
        ret
    })
}
