// safesh:shell — the `$` fluent API. External programs (`$.cmd`, `$.git`) and
// bash (`$.sh`) run through the session's interpreter: the same policy, sandbox
// and refusals as in bash. Template values of `$.sh` are quoted words, never code.
import * as fs from "safesh:fs";
import * as text from "safesh:text";
const { call } = globalThis.__safesh_internal;

/** What a program or script left: `{code, stdout, stderr, ok}`. */
export class CommandResult {
  constructor(r) {
    this.code = r.code;
    this.stdout = r.stdout;
    this.stderr = r.stderr;
    this.ok = r.code === 0;
  }
  /** stdout. */
  text() { return this.stdout; }
  /** stdout's lines. */
  lines() { return text.lines(this.stdout); }
  /** stdout parsed as JSON. */
  json() { return JSON.parse(this.stdout); }
  toString() { return this.stdout; }
}

/** `pattern` (a RegExp, or a string matched literally) as a RegExp without
 * state between lines (no `g`/`y`), as `text.grep` matches. */
function lineRegExp(p) {
  if (p instanceof RegExp) return new RegExp(p.source, p.flags.replace(/[gy]/g, ""));
  return new RegExp(String(p).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
}

/** A program or script to run when awaited; `.pipe()` feeds its stdout on. */
export class Command {
  constructor(run) {
    this._run = run;
    this._input = undefined;
  }
  /** Gives `data` (text, or a Command whose stdout is used) as stdin. */
  stdin(data) {
    this._input = data;
    return this;
  }
  /** This command's stdout into `next` (a Command, a Lines stage like `$.grep()`, or a function of the text). */
  pipe(next) {
    if (next instanceof Command) return next.stdin(this);
    if (next instanceof Lines) return next._from(async () => text.lines((await this.result()).stdout));
    if (typeof next === "function") return new Lines(async () => text.lines(String(await next((await this.result()).stdout))));
    throw new TypeError("pipe: expected a Command, a $.grep()/$.lines() stage or a function");
  }
  /** Runs it: a CommandResult. */
  async result() {
    let input = this._input;
    if (input instanceof Command) input = (await input.result()).stdout;
    else if (input instanceof Lines) input = await input.text();
    return new CommandResult(this._run(input === undefined ? undefined : String(input)));
  }
  /** stdout. */
  async text() { return (await this.result()).stdout; }
  /** stdout's lines. */
  async lines() { return text.lines(await this.text()); }
  /** stdout parsed as JSON. */
  async json() { return JSON.parse(await this.text()); }
  /** Prints stdout (and stderr on stderr). */
  async print() {
    const r = await this.result();
    if (r.stdout) call("print", { text: r.stdout, stream: "stdout" });
    if (r.stderr) call("print", { text: r.stderr, stream: "stderr" });
    return r;
  }
  then(ok, fail) { return this.result().then(ok, fail); }
  catch(fail) { return this.result().catch(fail); }
}

/** Lines flowing through `.filter() .map() .grep() .take()` to `.count() .save() .print()`. */
export class Lines {
  constructor(source) { this._source = source; this._stages = []; }
  _from(source) { this._source = source; return this; }
  _with(stage) { const l = new Lines(this._source); l._stages = this._stages.concat([stage]); return l; }
  async _lines() {
    if (!this._source) throw new TypeError("this stage has no input: use it in .pipe()");
    let a = await this._source();
    for (const s of this._stages) a = await s(a);
    return a;
  }
  /** Itself (the lines are already lines). */
  lines() { return this; }
  /** Keeps the lines for which `f(line, index)` is true. */
  filter(f) { return this._with((a) => a.filter(f)); }
  /** Each line through `f(line, index)`. */
  map(f) { return this._with((a) => a.map((l, i) => String(f(l, i)))); }
  /** Lines matching `pattern` (a RegExp or a string). */
  grep(pattern) { return this._with((a) => { const re = lineRegExp(pattern); return a.filter((l) => re.test(l)); }); }
  /** The first `n` lines. */
  take(n) { return this._with((a) => a.slice(0, n)); }
  /** The last `n` lines. */
  last(n) { return this._with((a) => (n <= 0 ? [] : a.slice(-n))); }
  /** Sorted. */
  sort() { return this._with((a) => a.slice().sort()); }
  /** Adjacent duplicates dropped. */
  uniq() { return this._with((a) => a.filter((l, i) => i === 0 || l !== a[i - 1])); }
  /** How many lines. */
  async count() { return (await this._lines()).length; }
  /** The lines as an array. */
  async toArray() { return (await this._lines()).slice(); }
  /** The lines joined, each ending with a newline. */
  async text() { const a = await this._lines(); return a.length ? a.join("\n") + "\n" : ""; }
  /** Same as text(). */
  async read() { return this.text(); }
  /** Writes the lines to a file. */
  async save(path) { await fs.write(path, await this.text()); }
  /** Prints the lines. */
  async print() { const t = await this.text(); if (t) call("print", { text: t, stream: "stdout" }); }
  then(ok, fail) { return this.toArray().then(ok, fail); }
  [Symbol.asyncIterator]() { let a, i = 0; const self = this; return { async next() { if (!a) a = await self._lines(); return i < a.length ? { value: a[i++], done: false } : { value: undefined, done: true }; } }; }
}

/** The lines of every file matching a glob (concatenated, as `cat GLOB`). */
function $(pattern) {
  return new Lines(async () => text.lines(call("fs.cat", { paths: call("fs.glob", { pattern: String(pattern) }) })));
}
/** Runs one external program (or builtin/utility) from an argv, as in bash. */
$.cmd = (name, ...args) => new Command((input) => call("cmd", { argv: [String(name), ...args.map(String)], input }));
/** `git` with these arguments (the git rule of the policy applies). */
$.git = (...args) => $.cmd("git", ...args);
/** A bash script run by safesh's interpreter; `${values}` are quoted words. */
$.sh = (strings, ...values) => {
  if (!strings || !Array.isArray(strings.raw)) throw new TypeError("$.sh is a tag: $.sh`script ${value}`");
  return new Command((input) => call("sh", { parts: Array.from(strings.raw, String), values: values.map(String), input }));
};
/** A stage for `.pipe()`: lines matching `pattern`. */
$.grep = (pattern) => new Lines(undefined).grep(pattern);
/** A stage for `.pipe()`: the lines as they are. */
$.lines = () => new Lines(undefined);
Object.freeze($);
Object.freeze(Command.prototype);
Object.freeze(Lines.prototype);
Object.freeze(CommandResult.prototype);
export default $;
export { $ };
