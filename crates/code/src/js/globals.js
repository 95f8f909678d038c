// The globals every script has without importing: fs, text, $, fetch, $session.
// `fs`, `text` and `$` are loaded when the script first touches them (most
// scripts touch none or one): `load` (engine.rs) evaluates the stdlib module,
// the same instance a static `import` of it gets, and returns its namespace.
const { call } = globalThis.__safesh_internal;
const load = globalThis.__safesh_load;
delete globalThis.__safesh_load;

/** A read-only global whose value is `pick(namespace of module)`, loaded on first use. */
function lazyGlobal(name, module, pick) {
  let value;
  let loaded = false;
  Object.defineProperty(globalThis, name, {
    get() {
      if (!loaded) {
        value = pick(load(module));
        loaded = true;
      }
      return value;
    },
    configurable: false,
    enumerable: false,
  });
}
lazyGlobal("fs", "safesh:fs", (ns) => ns);
lazyGlobal("text", "safesh:text", (ns) => ns);
lazyGlobal("$", "safesh:shell", (ns) => ns.default);

/** A fetched reply: `status`, `ok`, `url`, `text()`, `json()`. */
class Response {
  constructor(r) {
    this.status = r.status;
    this.ok = r.status >= 200 && r.status < 300;
    this.url = r.url;
    Object.defineProperty(this, "_body", { value: r.body });
  }
  async text() { return this._body; }
  async json() { return JSON.parse(this._body); }
}
Object.freeze(Response.prototype);

/** HTTP through the same egress decision as curl. */
async function fetch(url, init) {
  const i = init || {};
  const headers = {};
  if (i.headers) for (const [k, v] of Object.entries(i.headers)) headers[String(k)] = String(v);
  const args = { url: String(url), method: String(i.method || "GET"), headers };
  if (i.body !== undefined && i.body !== null) args.body = String(i.body);
  return new Response(call("fetch", args));
}

let vars;
const session = {
  /** The session's JSON store, kept across calls of the same session. */
  get vars() {
    if (vars === undefined) vars = JSON.parse(call("session.vars.get") || "{}");
    return vars;
  },
  set vars(v) {
    call("session.vars.get");
    vars = v;
  },
  /** The session's working directory. */
  get cwd() { return call("session.cwd"); },
  /** The session's environment: `$session.env.get("NAME")` (undefined when unset). */
  env: Object.freeze({ get: (name) => call("session.env", { name: String(name) }) }),
  /** The request's `input` (its stdin), or "". */
  input: globalThis.__safesh_input == null ? "" : String(globalThis.__safesh_input),
};

for (const [k, v] of [["fetch", fetch], ["Response", Response], ["$session", session]]) {
  Object.defineProperty(globalThis, k, { value: v, writable: false, configurable: false, enumerable: false });
}
delete globalThis.__safesh_input;
