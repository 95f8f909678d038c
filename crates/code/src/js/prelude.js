// Code mode's prelude: runs once, before the user's module, as a script.
// Everything with authority is the host function `__safesh_host(op, json)`,
// decided in Rust through the session's interpreter; nothing here is a wall.
// This file only shapes values and errors, and closes the engine's own ways to
// run text as code (eval, the Function constructors) behind the exec commit point.
(function () {
  "use strict";
  const host = globalThis.__safesh_host;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const getPrototypeOf = Object.getPrototypeOf;

  /** An error carrying safesh's refusal code, message and suggestion. */
  class SafeshError extends Error {
    constructor(e) {
      super(e.message);
      this.name = "SafeshError";
      this.code = e.code;
      if (e.suggestion !== undefined) this.suggestion = e.suggestion;
      if (e.rule !== undefined) this.rule = e.rule;
      if (e.path !== undefined) this.path = e.path;
      if (e.command !== undefined) this.command = e.command;
    }
  }
  freeze(SafeshError.prototype);
  freeze(SafeshError);

  function call(op, args) {
    const r = parse(host(op, stringify(args === undefined ? {} : args)));
    if (r.err !== undefined) throw new SafeshError(r.err);
    return r.ok;
  }

  function show(v, depth) {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack ? `${v.name}: ${v.message}\n${v.stack}` : `${v.name}: ${v.message}`;
    if (typeof v === "function") return `[Function: ${v.name || "anonymous"}]`;
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "symbol") return v.toString();
    if (v === undefined) return "undefined";
    try {
      const s = stringify(v, (k, x) => (typeof x === "bigint" ? `${x}n` : x), depth ? undefined : 2);
      return s === undefined ? String(v) : s;
    } catch (_) {
      return String(v);
    }
  }
  function line(args) {
    let s = "";
    for (let i = 0; i < args.length; i++) s += (i ? " " : "") + show(args[i], false);
    return s + "\n";
  }
  const out = (text) => host("print", stringify({ text, stream: "stdout" }));
  const err = (text) => host("print", stringify({ text, stream: "stderr" }));
  const console = {
    log: (...a) => void out(line(a)),
    info: (...a) => void out(line(a)),
    debug: (...a) => void out(line(a)),
    error: (...a) => void err(line(a)),
    warn: (...a) => void err(line(a)),
  };
  freeze(console);

  // Text run as code passes the exec commit point with the label of what the
  // script has read (its literals are the agent's). The indirect eval runs in
  // the global scope: a direct eval's access to local variables is not kept.
  const realEval = globalThis.eval;
  function checkCode(what, texts) {
    for (const t of texts) {
      if (typeof t === "string") call("exec_check", { what, text: t });
    }
  }
  const safeEval = function (x) {
    checkCode("eval", [x]);
    return realEval(x);
  };
  function guardConstructor(proto, what) {
    const Real = proto.constructor;
    const Guarded = function (...args) {
      checkCode(what, args);
      return Reflect.construct(Real, args);
    };
    defineProperty(Guarded, "prototype", { value: proto });
    defineProperty(Guarded, "name", { value: Real.name });
    defineProperty(proto, "constructor", { value: Guarded, writable: false, configurable: false });
    freeze(Guarded);
    return Guarded;
  }
  const GuardedFunction = guardConstructor(Function.prototype, "new Function");
  guardConstructor(getPrototypeOf(async function () {}), "AsyncFunction");
  guardConstructor(getPrototypeOf(function* () {}), "GeneratorFunction");
  guardConstructor(getPrototypeOf(async function* () {}), "AsyncGeneratorFunction");

  // Timers: promise-driven by the engine (engine.rs waits for the earliest
  // when no job is left, bounded by the run's deadline). A callback must be a
  // function: a string is not run as code.
  const timers = new Map();
  let nextId = 1;
  const now = Date.now;
  function addTimer(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new TypeError("the timer's callback must be a function (text is not run as code)");
    const delay = Math.max(0, Number(ms) || 0);
    const id = nextId++;
    timers.set(id, { due: now() + delay, fn, args, repeat: repeat ? Math.max(1, delay) : 0 });
    return id;
  }
  const setTimeout = (fn, ms, ...args) => addTimer(fn, ms, args, false);
  const setInterval = (fn, ms, ...args) => addTimer(fn, ms, args, true);
  const clearTimeout = (id) => void timers.delete(id);
  const earliest = () => {
    let best;
    for (const [id, t] of timers) if (best === undefined || t.due < best[1].due) best = [id, t];
    return best;
  };
  const timerDriver = freeze({
    /** ms until the earliest timer (0: due), -1: none. */
    next: () => {
      const e = earliest();
      return e === undefined ? -1 : Math.max(0, e[1].due - now());
    },
    /** Runs the earliest timer. */
    fire: () => {
      const e = earliest();
      if (e === undefined) return;
      const [id, t] = e;
      if (t.repeat) t.due = now() + t.repeat;
      else timers.delete(id);
      t.fn(...t.args);
    },
  });

  const internal = freeze({ call, SafeshError, show, timers: timerDriver });
  for (const [k, v] of [
    ["eval", safeEval],
    ["Function", GuardedFunction],
    ["console", console],
    ["SafeshError", SafeshError],
    ["__safesh_internal", internal],
    ["setTimeout", setTimeout],
    ["clearTimeout", clearTimeout],
    ["setInterval", setInterval],
    ["clearInterval", clearTimeout],
  ]) {
    defineProperty(globalThis, k, { value: v, writable: false, configurable: false, enumerable: false });
  }
  delete globalThis.__safesh_host;
})();
