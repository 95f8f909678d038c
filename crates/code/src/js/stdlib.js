// safesh:stdlib — the flat imports: grep, head, tail, find, replace over files.
import * as fs from "safesh:fs";
import * as text from "safesh:text";
const { call } = globalThis.__safesh_internal;

/** Matching lines of the files of a glob: `[{path, line, text, match}]`. */
export async function grep(pattern, re, options) {
  const out = [];
  for (const path of call("fs.glob", { pattern: String(pattern) })) {
    const st = await fs.stat(path);
    if (!st.isFile) continue;
    for (const m of text.grep(re, await fs.read(path), options)) out.push({ path, ...m });
  }
  return out;
}
/** The first `n` lines of a file. */
export async function head(path, n = 10) { return text.head(await fs.read(path), n); }
/** The last `n` lines of a file. */
export async function tail(path, n = 10) { return text.tail(await fs.read(path), n); }
/** Files under `root`: `{ext: ".ts", name: /re/}` filter them; returns paths. */
export async function find(root, options) {
  const o = options || {};
  const out = [];
  for await (const e of fs.walk(root)) {
    if (e.isDirectory) continue;
    if (o.ext && !e.path.endsWith(o.ext)) continue;
    if (o.name && !(o.name instanceof RegExp ? o.name.test(e.name) : e.name === String(o.name))) continue;
    out.push(e.path);
  }
  return out;
}
/** Replaces in a file, in place (sed -i); returns whether it changed. */
export async function replace(path, pattern, replacement) {
  const before = await fs.read(path);
  const after = text.replace(before, pattern, replacement);
  if (after !== before) await fs.write(path, after);
  return after !== before;
}
