//! The engine: one QuickJS runtime per run, with no ambient authority (no file,
//! network, process or environment access: QuickJS has none of its own and we
//! add only the host function), a memory limit, a stack limit, an interrupt
//! (the deadline, a cancellation) and a module loader that knows only the
//! stdlib.

use crate::host::{HostState, timeout_refusal};
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::promise::PromiseState;
use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Persistent, Promise,
    Runtime, Value,
};
use safesh_core::error::{ErrorCode, Refusal};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

/// A stdlib file compiled to QuickJS bytecode by `build.rs` (same engine crate).
macro_rules! bytecode {
    ($file:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/stdlib/", $file))
    };
}

/// The stdlib modules, by the names a script imports, as bytecode (loading
/// it skips parsing the JavaScript on every run: most of the startup).
const MODULES: &[(&str, &[u8])] = &[
    ("safesh:fs", bytecode!("safesh_fs.qjsbc")),
    ("safesh:text", bytecode!("safesh_text.qjsbc")),
    ("safesh:shell", bytecode!("safesh_shell.qjsbc")),
    ("safesh:stdlib", bytecode!("safesh_stdlib.qjsbc")),
    ("safesh/streams", bytecode!("safesh__streams.qjsbc")),
    ("safesh:streams", bytecode!("safesh_streams.qjsbc")),
];

/// The setup modules, evaluated before the user's, in this order: the
/// prelude (`js/prelude.js`: console, SafeshError, the guarded eval and
/// Function, timers, the host call), then the globals every script has
/// without importing (`fs`, `text`, `$`, `fetch`, `$session`). Scripts cannot
/// import them: the resolver knows them only during the setup.
const SETUP: &[(&str, &[u8])] = &[
    ("safesh:prelude", bytecode!("safesh_prelude.qjsbc")),
    ("safesh:globals", bytecode!("safesh_globals.qjsbc")),
];

/// The stdlib modules declared in this run, by name (the loader records
/// each), so the lazy globals get the instance a static `import` gets.
type Registry = Rc<RefCell<Vec<(String, Persistent<Declared<'static>>)>>>;

/// A declared module kept across calls (rquickjs has no `JsLifetime` for
/// its `Declared` marker, so `Persistent<Module>` cannot be written).
#[derive(Clone)]
struct Declared<'js>(Module<'js>);

// SAFETY: `Declared` only wraps a `Module<'js>` (a module pointer and its
// context), whose one lifetime is `'js`: changing it is what `Persistent`
// does for every rquickjs value.
unsafe impl<'js> rquickjs::JsLifetime<'js> for Declared<'js> {
    type Changed<'to> = Declared<'to>;
}

fn registered<'js>(ctx: &Ctx<'js>, registry: &Registry, name: &str) -> Option<Module<'js>> {
    let found = registry
        .borrow()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, m)| m.clone());
    found.and_then(|m| m.restore(ctx).ok()).map(|d| d.0)
}

/// The namespace of the stdlib module `name`, evaluated now if it was not
/// (the lazy globals `fs`, `text`, `$` call this on first use).
fn load_global<'js>(
    ctx: &Ctx<'js>,
    registry: &Registry,
    name: &str,
) -> rquickjs::Result<Object<'js>> {
    if stdlib_bytecode(name, false).is_none() {
        return Err(rquickjs::Exception::throw_message(
            ctx,
            &format!("{name:?} is not a stdlib module"),
        ));
    }
    let module = match registered(ctx, registry, name) {
        Some(m) => m,
        None => {
            // Loads it (through the loader, which registers it), links and
            // evaluates it now; the promise would only hand over the
            // namespace in a later job.
            let _ = Module::import(ctx, name)?;
            registered(ctx, registry, name).ok_or_else(|| {
                rquickjs::Exception::throw_message(ctx, &format!("{name} could not be loaded"))
            })?
        }
    };
    // Evaluating an evaluated module only returns its (settled) promise.
    let (module, done) = module.eval()?;
    match done.state() {
        PromiseState::Resolved => module.namespace(),
        PromiseState::Rejected => match done.result::<Value>() {
            Some(Ok(v)) => Err(ctx.throw(v)),
            Some(Err(e)) => Err(e),
            None => Err(rquickjs::Exception::throw_message(
                ctx,
                &format!("{name} failed to load"),
            )),
        },
        PromiseState::Pending => Err(rquickjs::Exception::throw_message(
            ctx,
            &format!("{name} is still being evaluated (it awaits at its top level)"),
        )),
    }
}

/// The `load` function `globals.js` takes (and removes from the globals).
fn load_function<'js>(ctx: &Ctx<'js>, registry: Registry) -> rquickjs::Result<Function<'js>> {
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String| {
        load_global(&ctx, &registry, &name)
    })
}

/// Declares the stdlib module compiled into `bytes`.
fn load_stdlib<'js>(ctx: &Ctx<'js>, bytes: &'static [u8]) -> rquickjs::Result<Module<'js>> {
    // SAFETY: `bytes` is bytecode `build.rs` wrote from our own `js/` files
    // with this very engine crate (Cargo.lock pins one version for both) in
    // the target's byte order, so it is valid for this engine; it is
    // 'static, as the ROM-data read `Module::load` does requires.
    unsafe { Module::load(ctx.clone(), bytes) }
}

/// The bytecode of the stdlib module `name` (the setup modules only while
/// `setup` is true).
fn stdlib_bytecode(name: &str, setup: bool) -> Option<&'static [u8]> {
    let setup_modules = if setup { SETUP } else { &[] };
    MODULES
        .iter()
        .chain(setup_modules)
        .find(|(n, _)| *n == name)
        .map(|(_, b)| *b)
}

/// How a run ended, before it is shaped into an outcome.
pub(crate) enum Ending {
    /// The module finished.
    Done,
    /// An uncaught exception: its text (message and stack), and the refusal it
    /// carries when it is a `SafeshError` (or a limit of the engine).
    Uncaught {
        text: String,
        refusal: Option<Refusal>,
    },
    /// The source does not parse.
    Parse(Refusal),
    /// The run was stopped (deadline, cancellation) or could not start.
    Stopped(Refusal),
}

/// Engine limits.
pub(crate) struct EngineLimits {
    pub memory_bytes: usize,
    pub stack_bytes: usize,
    pub deadline: Option<Instant>,
    pub cancelled: safesh_core::Interrupter,
}

/// Resolves the stdlib's names, and relative paths (`./lib.ts`, `../x.js`)
/// against the importing module's path (the main module's is relative to the
/// session's cwd).
struct ModuleResolver {
    /// True while the setup modules run (they are importable only then).
    setup: Rc<Cell<bool>>,
}

impl Resolver for ModuleResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if stdlib_bytecode(name, self.setup.get()).is_some() {
            return Ok(name.to_string());
        }
        if name.starts_with("./") || name.starts_with("../") {
            return Ok(join_relative(base, name));
        }
        let names: Vec<&str> = MODULES.iter().map(|(n, _)| *n).collect();
        Err(rquickjs::Exception::throw_message(
            ctx,
            &format!(
                "NOT_SUPPORTED: cannot import {name:?}: code mode imports the stdlib ({}) and your own files by a relative path (./lib.ts)",
                names.join(", ")
            ),
        ))
    }
}

/// `name` relative to the directory of module `base`, normalized lexically
/// (the path check of the read decides what it may reach).
pub(crate) fn join_relative(base: &str, name: &str) -> String {
    use std::path::{Component, Path, PathBuf};
    let dir = Path::new(base).parent().unwrap_or(Path::new(""));
    let mut out = PathBuf::new();
    let mut ups = 0usize;
    for c in dir.join(name).components() {
        match c {
            Component::CurDir => {}
            // `/..` is `/`.
            Component::ParentDir if out.as_os_str() == "/" => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() && ups > 0 {
                    ups += 1;
                    out = (0..ups).map(|_| "..").collect();
                    continue;
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out.to_string_lossy().into_owned()
}

/// Loads the stdlib from the binary and the user's modules through the host
/// (read as `cat`, the exec commit point, types stripped).
struct ModuleLoader {
    state: Rc<RefCell<HostState>>,
    /// Where the stdlib modules it declares are registered.
    registry: Registry,
    /// True while the setup modules run.
    setup: Rc<Cell<bool>>,
}

impl Loader for ModuleLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js>> {
        if let Some(bytes) = stdlib_bytecode(name, self.setup.get()) {
            let module = load_stdlib(ctx, bytes)?;
            self.registry.borrow_mut().push((
                name.to_string(),
                Persistent::save(ctx, Declared(module.clone())),
            ));
            return Ok(module);
        }
        let source = match self.state.try_borrow_mut() {
            Ok(mut s) => s.import_source(name),
            Err(_) => Err(Refusal::new(
                ErrorCode::ExecutionError,
                "a module was loaded during a host call",
            )),
        };
        match source {
            Ok(js) => Module::declare(ctx.clone(), name, js),
            Err(r) => Err(throw_refusal(ctx, &r)),
        }
    }
}

/// Throws `r` as the prelude's `SafeshError` (catchable, with its code).
fn throw_refusal(ctx: &Ctx<'_>, r: &Refusal) -> rquickjs::Error {
    let made = (|| -> rquickjs::Result<Value<'_>> {
        let ctor: rquickjs::function::Constructor = ctx.globals().get("SafeshError")?;
        let fields = ctx.json_parse(crate::host::refusal_json(r).to_string())?;
        ctor.construct((fields,))
    })();
    match made {
        Ok(v) => ctx.throw(v),
        Err(_) => {
            rquickjs::Exception::throw_message(ctx, &format!("{}: {}", r.code.as_str(), r.message))
        }
    }
}

/// Waits for timers, bounded by the run's deadline and its cancellation.
struct Clock {
    deadline: Option<Instant>,
    cancelled: safesh_core::Interrupter,
    stop: Rc<RefCell<Option<Refusal>>>,
}

impl Clock {
    /// Sleeps `ms`; false (and the stop recorded) when the run must end first.
    fn wait(&self, ms: f64) -> bool {
        let until =
            Instant::now() + std::time::Duration::from_micros((ms.max(0.0) * 1000.0) as u64);
        loop {
            if self.cancelled.is_interrupted() {
                self.stop
                    .borrow_mut()
                    .get_or_insert_with(safesh_core::session::cancelled_refusal);
                return false;
            }
            let now = Instant::now();
            if let Some(d) = self.deadline
                && now >= d
            {
                self.stop.borrow_mut().get_or_insert_with(timeout_refusal);
                return false;
            }
            if now >= until {
                return true;
            }
            let mut step = until - now;
            if let Some(d) = self.deadline {
                step = step.min(d - now);
            }
            std::thread::sleep(step.min(std::time::Duration::from_millis(20)));
        }
    }
}

/// Runs `js` (the stripped source) as the module `name`.
pub(crate) fn run(
    state: Rc<RefCell<HostState>>,
    name: &str,
    js: &str,
    input: Option<&str>,
    limits: &EngineLimits,
) -> Ending {
    let rt = match Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return Ending::Stopped(engine_failure(&e.to_string())),
    };
    rt.set_memory_limit(limits.memory_bytes);
    rt.set_max_stack_size(limits.stack_bytes);
    // Collect garbage early enough that a limit is about live data.
    rt.set_gc_threshold(limits.memory_bytes / 4);
    let stop_state = Rc::new(RefCell::new(None::<Refusal>));
    {
        let deadline = limits.deadline;
        let cancelled = limits.cancelled.clone();
        let stop = stop_state.clone();
        let mut ticks = 0u32;
        rt.set_interrupt_handler(Some(Box::new(move || {
            ticks = ticks.wrapping_add(1);
            if cancelled.is_interrupted() {
                stop.borrow_mut()
                    .get_or_insert_with(safesh_core::session::cancelled_refusal);
                return true;
            }
            if let Some(d) = deadline
                && Instant::now() >= d
            {
                stop.borrow_mut().get_or_insert_with(timeout_refusal);
                return true;
            }
            false
        })));
    }
    let in_setup = Rc::new(Cell::new(true));
    let registry = Registry::default();
    rt.set_loader(
        ModuleResolver {
            setup: in_setup.clone(),
        },
        ModuleLoader {
            state: state.clone(),
            registry: registry.clone(),
            setup: in_setup.clone(),
        },
    );
    let clock = Clock {
        deadline: limits.deadline,
        cancelled: limits.cancelled.clone(),
        stop: stop_state.clone(),
    };
    let ctx = match Context::full(&rt) {
        Ok(c) => c,
        Err(e) => return Ending::Stopped(engine_failure(&e.to_string())),
    };
    let ending = ctx.with(|ctx| -> Ending {
        let host_state = state.clone();
        let host = Function::new(ctx.clone(), move |op: String, args: String| -> String {
            match host_state.try_borrow_mut() {
                Ok(mut s) => s.call(&op, &args),
                Err(_) => r#"{"err":{"code":"EXECUTION_ERROR","message":"host function re-entered"}}"#.into(),
            }
        });
        let setup = host.and_then(|h| {
            ctx.globals().set("__safesh_host", h)?;
            ctx.globals().set("__safesh_input", input.map(str::to_string))?;
            ctx.globals()
                .set("__safesh_load", load_function(&ctx, registry.clone())?)?;
            Ok(())
        });
        if let Err(e) = setup.catch(&ctx) {
            return Ending::Stopped(engine_failure(&caught_text(&e)));
        }
        for (setup_module, _) in SETUP {
            if let Err(e) = settle(&ctx, Module::import(&ctx, *setup_module), &clock) {
                return Ending::Stopped(engine_failure(&e));
            }
        }
        in_setup.set(false);
        let promise = match Module::evaluate(ctx.clone(), name, js).catch(&ctx) {
            Ok(p) => p,
            Err(e) => {
                if let Some(r) = stop_state.borrow_mut().take() {
                    return Ending::Stopped(r);
                }
                if is_syntax_error(&e) {
                    return Ending::Parse(parse_refusal(&e, name));
                }
                return parse_or_uncaught(uncaught(&e, &state));
            }
        };
        // The module, then the timers it left (as node runs them before exiting).
        match drive(&ctx, &promise, &clock).and_then(|()| drain_timers(&ctx, &clock)) {
            Ok(()) => Ending::Done,
            Err(Drive::Rejected(v)) => {
                if let Some(r) = stop_state.borrow_mut().take() {
                    return Ending::Stopped(r);
                }
                let caught = match rquickjs::Exception::from_value(v.clone()) {
                    Ok(ex) => CaughtError::Exception(ex),
                    Err(_) => CaughtError::Value(v),
                };
                if is_syntax_error(&caught) {
                    return Ending::Parse(parse_refusal(&caught, name));
                }
                parse_or_uncaught(uncaught(&caught, &state))
            }
            Err(Drive::Stuck) => {
                if let Some(r) = stop_state.borrow_mut().take() {
                    return Ending::Stopped(r);
                }
                Ending::Uncaught {
                    text: "Error: the script awaits a promise that can never settle (nothing is left to run)\n".into(),
                    refusal: None,
                }
            }
            Err(Drive::Failed(msg)) => {
                if let Some(r) = stop_state.borrow_mut().take() {
                    return Ending::Stopped(r);
                }
                Ending::Uncaught { text: msg, refusal: None }
            }
        }
    });
    // `$session.vars` is written back while the engine still runs.
    if matches!(ending, Ending::Done | Ending::Uncaught { .. }) {
        ctx.with(|ctx| {
            let read = state.try_borrow().map(|s| s.vars_read).unwrap_or(false);
            if read
                && let Ok(Some(text)) = ctx.eval::<Option<String>, _>(
                    "(() => { const v = globalThis.$session && globalThis.$session.vars; return v === undefined ? undefined : JSON.stringify(v); })()",
                )
                && let Ok(mut s) = state.try_borrow_mut()
            {
                let acc = s.acc.clone();
                s.vars = (text, s.vars.1.join(&acc));
            }
        });
    }
    // The registered modules hold the context: let it go before the runtime.
    registry.borrow_mut().clear();
    drop(ctx);
    drop(rt);
    ending
}

enum Drive<'js> {
    Rejected(Value<'js>),
    Stuck,
    Failed(String),
}

/// Runs jobs until `promise` settles; with no job left, the next timer.
fn drive<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>, clock: &Clock) -> Result<(), Drive<'js>> {
    loop {
        match promise.state() {
            PromiseState::Resolved => return Ok(()),
            PromiseState::Rejected => {
                let v = match promise.result::<Value>() {
                    Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                    Some(Ok(v)) => v,
                    Some(Err(e)) => return Err(Drive::Failed(format!("{e}\n"))),
                    None => Value::new_undefined(ctx.clone()),
                };
                return Err(Drive::Rejected(v));
            }
            PromiseState::Pending => {
                if !ctx.execute_pending_job() && !next_timer(ctx, clock)? {
                    return Err(Drive::Stuck);
                }
            }
        }
    }
}

/// After the module: the jobs and timers left, until none is.
fn drain_timers<'js>(ctx: &Ctx<'js>, clock: &Clock) -> Result<(), Drive<'js>> {
    loop {
        if !ctx.execute_pending_job() && !next_timer(ctx, clock)? {
            return Ok(());
        }
    }
}

/// Waits for the earliest timer of the prelude and runs it; false when no
/// timer is set. A callback's exception is the run's uncaught one.
fn next_timer<'js>(ctx: &Ctx<'js>, clock: &Clock) -> Result<bool, Drive<'js>> {
    let failed = |e: rquickjs::Error| match e {
        rquickjs::Error::Exception => Drive::Rejected(ctx.catch()),
        e => Drive::Failed(format!("{e}\n")),
    };
    let timers: rquickjs::Object = ctx
        .globals()
        .get::<_, rquickjs::Object>("__safesh_internal")
        .and_then(|i| i.get("timers"))
        .map_err(failed)?;
    let next: Function = timers.get("next").map_err(failed)?;
    let ms: f64 = next.call(()).map_err(failed)?;
    if ms < 0.0 {
        return Ok(false);
    }
    if !clock.wait(ms) {
        return Err(Drive::Stuck);
    }
    let fire: Function = timers.get("fire").map_err(failed)?;
    fire.call::<_, ()>(()).map_err(failed)?;
    Ok(true)
}

/// Evaluates a setup module to its end.
fn settle<'js>(
    ctx: &Ctx<'js>,
    p: rquickjs::Result<Promise<'js>>,
    clock: &Clock,
) -> Result<(), String> {
    let p = p.catch(ctx).map_err(|e| caught_text(&e))?;
    drive(ctx, &p, clock).map_err(|d| match d {
        Drive::Rejected(v) => format!("{v:?}"),
        Drive::Stuck => "setup did not finish".into(),
        Drive::Failed(m) => m,
    })
}

/// A `PARSE_ERROR` refusal (a module that failed to strip) ends the run as
/// a parse error; anything else stays an uncaught exception.
fn parse_or_uncaught(e: Ending) -> Ending {
    match e {
        Ending::Uncaught {
            refusal: Some(r), ..
        } if r.code == ErrorCode::ParseError => Ending::Parse(r),
        other => other,
    }
}

fn is_syntax_error(e: &CaughtError<'_>) -> bool {
    match e {
        CaughtError::Exception(ex) => ex
            .as_object()
            .get::<_, String>("name")
            .is_ok_and(|n| n == "SyntaxError"),
        _ => false,
    }
}

/// `PARSE_ERROR` with the line and column QuickJS reports (in the user's
/// source: type stripping keeps every position), and the file when it is a
/// module the source imports.
fn parse_refusal(e: &CaughtError<'_>, name: &str) -> Refusal {
    let (message, stack) = match e {
        CaughtError::Exception(ex) => (
            ex.message().unwrap_or_default(),
            ex.stack().unwrap_or_default(),
        ),
        other => (other.to_string(), String::new()),
    };
    match first_location(&stack) {
        Some((file, l, c)) if file != name => {
            crate::parse_error_in(&message, Some(&file), Some((l, c)))
        }
        Some((_, l, c)) => crate::parse_error(&message, Some((l, c))),
        None => crate::parse_error(&message, location_in(&stack, name)),
    }
}

/// The first `FILE:LINE:COLUMN` of a stack (`at FILE:L:C` or `at f (FILE:L:C)`).
fn first_location(stack: &str) -> Option<(String, usize, usize)> {
    stack.lines().find_map(|line| {
        let at = line.trim().strip_prefix("at ")?;
        let at = match (at.rfind('('), at.ends_with(')')) {
            (Some(i), true) => &at[i + 1..at.len() - 1],
            _ => at,
        };
        let mut parts = at.rsplitn(3, ':');
        let col = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        let file = parts.next()?.to_string();
        Some((file, line, col))
    })
}

/// The first `NAME:LINE:COLUMN` of a stack.
pub(crate) fn location_in(stack: &str, name: &str) -> Option<(usize, usize)> {
    let i = stack.find(&format!("{name}:"))?;
    let rest = &stack[i + name.len() + 1..];
    let mut nums = rest.split(|c: char| !c.is_ascii_digit());
    let line = nums.next()?.parse().ok()?;
    let col = nums.next().and_then(|c| c.parse().ok()).unwrap_or(1);
    Some((line, col))
}

fn uncaught(e: &CaughtError<'_>, state: &Rc<RefCell<HostState>>) -> Ending {
    let _ = state;
    let text = caught_text(e);
    let refusal = match e {
        CaughtError::Exception(ex) => {
            let obj = ex.as_object();
            let code: Option<String> = obj.get("code").ok();
            let name: Option<String> = obj.get("name").ok();
            let message = ex.message().unwrap_or_default();
            if name.as_deref() == Some("SafeshError") {
                code.as_deref().and_then(code_from_str).map(|c| {
                    let mut r = Refusal::new(c, message.clone());
                    r.suggestion = obj.get::<_, Option<String>>("suggestion").ok().flatten();
                    r.details.rule = obj.get::<_, Option<String>>("rule").ok().flatten();
                    r.details.path = obj.get::<_, Option<String>>("path").ok().flatten();
                    r.details.command = obj.get::<_, Option<String>>("command").ok().flatten();
                    r
                })
            } else if message.contains("out of memory") {
                Some(memory_refusal())
            } else if message.contains("stack overflow") || message.contains("call stack size") {
                Some(
                    Refusal::new(
                        ErrorCode::LimitExceeded,
                        "the code's call stack exceeded its limit (deep recursion)",
                    )
                    .rule("limits.code_stack")
                    .suggest("recurse less deeply (use a loop or an explicit stack)"),
                )
            } else {
                None
            }
        }
        CaughtError::Value(v) if v.is_null() => Some(memory_refusal()),
        _ => None,
    };
    Ending::Uncaught { text, refusal }
}

pub(crate) fn memory_refusal() -> Refusal {
    Refusal::new(
        ErrorCode::LimitExceeded,
        "the code's memory exceeded its limit",
    )
    .rule("limits.memory_mb")
    .suggest(
        "use less memory (stream with safesh/streams), or raise [limits] memory_mb in safesh.toml",
    )
}

/// The text of an uncaught exception: `Uncaught Name: message` and its stack.
fn caught_text(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Exception(ex) => {
            let name: String = ex
                .as_object()
                .get("name")
                .unwrap_or_else(|_| "Error".into());
            let mut s = format!("Uncaught {name}: {}\n", ex.message().unwrap_or_default());
            if let Some(st) = ex.stack()
                && !st.trim().is_empty()
            {
                s.push_str(&st);
                if !st.ends_with('\n') {
                    s.push('\n');
                }
            }
            s
        }
        CaughtError::Value(v) => {
            let shown = v
                .as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| format!("{v:?}"));
            format!("Uncaught {shown}\n")
        }
        CaughtError::Error(e) => format!("Uncaught {e}\n"),
    }
}

/// The refusal code named `s` (`LIMIT_EXCEEDED`), by the type's own names.
fn code_from_str(s: &str) -> Option<ErrorCode> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}

fn engine_failure(msg: &str) -> Refusal {
    Refusal::new(
        ErrorCode::ExecutionError,
        format!("the JS engine failed: {msg}"),
    )
}

#[cfg(test)]
mod tests {
    use super::join_relative;

    #[test]
    fn relative_names_join_lexically() {
        for (base, name, want) in [
            ("main.ts", "./lib.ts", "lib.ts"),
            ("main.ts", "../x.js", "../x.js"),
            ("a/b.ts", "../../x.ts", "../x.ts"),
            ("a/b.ts", "./c/../d.ts", "a/d.ts"),
            ("main.ts", "../x/../../y.ts", "../../y.ts"),
            ("/p/a/b.ts", "../c.ts", "/p/c.ts"),
            ("/p/b.ts", "../../../etc/x.js", "/etc/x.js"),
        ] {
            assert_eq!(join_relative(base, name), want, "{base} + {name}");
        }
    }
}

#[cfg(test)]
mod bytecode_tests {
    use super::{MODULES, SETUP, load_stdlib};
    use rquickjs::{Context, Runtime};

    /// Each table entry's bytecode is the module of that name (build.rs and
    /// the tables agree), and it loads in this engine.
    #[test]
    fn stdlib_bytecode_is_the_named_module() {
        let rt = Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
        let ctx = Context::full(&rt).unwrap_or_else(|e| panic!("context: {e}"));
        ctx.with(|ctx| {
            for (name, bytes) in MODULES.iter().chain(SETUP) {
                let module = load_stdlib(&ctx, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
                let embedded: String = module.name().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(&embedded, name);
            }
        });
    }
}
