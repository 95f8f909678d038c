// safesh/streams — line streams with bounded memory: a file is read through one
// open reader of the host (`stream.open`: checked once as `cat` checks it, on the
// opened file; `stream.read` chunk by chunk; `stream.close`), and written in
// chunks (each one `>>` through the session).
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
      const id = call("stream.open", { path });
      try {
        let rest = "";
        for (;;) {
          const chunk = call("stream.read", { id, length: CHUNK });
          const parts = (rest + chunk.text).split("\n");
          rest = parts.pop();
          for (const l of parts) yield l;
          if (chunk.eof) break;
        }
        if (rest !== "") yield rest;
      } finally {
        call("stream.close", { id });
      }
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
    let lines = [], size = 0, n = 0, first = true;
    const flush = () => {
      const data = lines.length ? lines.join("\n") + "\n" : "";
      call("fs.write", { path: String(path), data, append: !first });
      first = false; lines = []; size = 0;
    };
    for await (const l of gen()) { lines.push(l); size += l.length + 1; n++; if (size >= CHUNK) flush(); }
    flush();
    return n;
  };
}
