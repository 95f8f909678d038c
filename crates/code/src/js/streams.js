// safesh/streams — line streams with bounded memory: files are read and written
// in chunks through the session (each chunk one `tail -c`/`head -c` and one `>>`).
const { call } = globalThis.__safesh_internal;
const CHUNK = 1 << 20;

class Stream {
  constructor(gen) { this._gen = gen; }
  /** The next stage: `filter(f)`, `transform(f)` or `dest(path)`. */
  pipe(stage) { return stage(this._gen); }
  [Symbol.asyncIterator]() { return this._gen(); }
}

/** Lines of the files matching a glob, read 1 MiB at a time. */
export function src(pattern) {
  return new Stream(async function* () {
    for (const path of call("fs.glob", { pattern: String(pattern) })) {
      let offset = 0, rest = "";
      for (;;) {
        const chunk = call("fs.read_range", { path, offset, length: CHUNK });
        offset += chunk.bytes;
        const parts = (rest + chunk.text).split("\n");
        rest = parts.pop();
        for (const l of parts) yield l;
        if (chunk.bytes < CHUNK) break;
      }
      if (rest !== "") yield rest;
    }
  });
}
/** Keeps the lines for which `f(line)` is true. */
export function filter(f) {
  return (gen) => new Stream(async function* () { for await (const l of gen()) if (await f(l)) yield l; });
}
/** Each line through `f(line)`. */
export function transform(f) {
  return (gen) => new Stream(async function* () { for await (const l of gen()) yield String(await f(l)); });
}
/** Writes the lines to a file (replaced), in chunks; resolves to the number of lines. */
export function dest(path) {
  return async (gen) => {
    let buf = "", n = 0, first = true;
    const flush = () => { call("fs.write", { path: String(path), data: buf, append: !first }); first = false; buf = ""; };
    for await (const l of gen()) { buf += l + "\n"; n++; if (buf.length >= CHUNK) flush(); }
    flush();
    return n;
  };
}
