// safesh:fs — files through the session: each call is the bash command of the
// same meaning (cat, a redirection, cp, mv, rm, mkdir, stat, find, a glob),
// with its path checks, labels and commit points.
const { call } = globalThis.__safesh_internal;

/** The text of a file. */
export async function read(path) {
  return call("fs.read", { path: String(path) });
}
/** Writes `data` to a file (created or replaced). */
export async function write(path, data) {
  call("fs.write", { path: String(path), data: String(data), append: false });
}
/** Appends `data` to a file. */
export async function append(path, data) {
  call("fs.write", { path: String(path), data: String(data), append: true });
}
/** Copies a file (`{recursive: true}`: a directory). */
export async function copy(from, to, options) {
  call("fs.copy", { from: String(from), to: String(to), recursive: !!(options && options.recursive) });
}
/** Moves or renames. */
export async function move(from, to) {
  call("fs.move", { from: String(from), to: String(to) });
}
/** Removes a file (`{recursive: true}`: a directory and what it holds). */
export async function remove(path, options) {
  call("fs.remove", { path: String(path), recursive: !!(options && options.recursive) });
}
/** True when the path exists. */
export async function exists(path) {
  return call("fs.exists", { path: String(path) });
}
/** `{size, mtime, mode, isFile, isDirectory, isSymlink}`. */
export async function stat(path) {
  return call("fs.stat", { path: String(path) });
}
/** Makes a directory (`{recursive: true}`: with its parents, no error if it exists). */
export async function mkdir(path, options) {
  call("fs.mkdir", { path: String(path), recursive: !!(options && options.recursive) });
}
/** The paths matching a bash glob (`**` crosses directories), sorted. */
export async function* glob(pattern) {
  for (const p of call("fs.glob", { pattern: String(pattern) })) yield p;
}
/** Every entry under `root` (itself first): `{path, name, isFile, isDirectory, isSymlink}`;
 * `{exts: [".ts"]}` keeps files with those extensions, `{includeDirs: false}` only files. */
export async function* walk(root, options) {
  const exts = options && options.exts ? Array.from(options.exts, String) : null;
  const dirs = !(options && (options.includeDirs === false || exts));
  for (const e of call("fs.walk", { root: String(root === undefined ? "." : root) })) {
    if (e.isDirectory && !dirs) continue;
    if (exts && !exts.some((x) => e.path.endsWith(x))) continue;
    yield e;
  }
}
/** Reads and parses a JSON file. */
export async function readJson(path) {
  return JSON.parse(await read(path));
}
/** Writes a value as JSON (2-space indent, final newline). */
export async function writeJson(path, value) {
  await write(path, JSON.stringify(value, null, 2) + "\n");
}
