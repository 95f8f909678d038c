// safesh:text — pure functions on strings: no authority, nothing printed.

function toRegExp(p, flags) {
  if (p instanceof RegExp) return new RegExp(p.source, (p.flags + flags).split("").filter((c, i, a) => a.indexOf(c) === i && c !== "g" && c !== "y").join(""));
  return new RegExp(String(p).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags);
}

/** The lines of a text (a final newline ends the last line, it does not start one). */
export function lines(text) {
  const s = String(text);
  if (s === "") return [];
  const a = s.split("\n");
  if (a[a.length - 1] === "") a.pop();
  return a;
}
/** Lines matching `pattern`: `[{line, text, match}]` (line numbers from 1);
 * `{invert: true}` keeps the lines that do not match. */
export function grep(pattern, text, options) {
  const re = toRegExp(pattern, options && options.ignoreCase ? "i" : "");
  const invert = !!(options && options.invert);
  const out = [];
  lines(text).forEach((l, i) => {
    const m = re.exec(l);
    if (!!m !== invert) out.push({ line: i + 1, text: l, match: m ? m[0] : null, groups: m && m.groups ? { ...m.groups } : undefined });
  });
  return out;
}
/** The first `n` lines (default 10), joined. */
export function head(text, n = 10) {
  const a = lines(text).slice(0, Math.max(0, n));
  return a.length ? a.join("\n") + "\n" : "";
}
/** The last `n` lines (default 10), joined. */
export function tail(text, n = 10) {
  const l = lines(text);
  const a = n <= 0 ? [] : l.slice(-n);
  return a.length ? a.join("\n") + "\n" : "";
}
/** `text.replace` with a string or RegExp (a string pattern replaces every occurrence). */
export function replace(text, pattern, replacement) {
  const s = String(text);
  if (pattern instanceof RegExp) return s.replace(pattern, replacement);
  return s.split(String(pattern)).join(String(replacement));
}
/** `{lines, words, chars, bytes}` as `wc` counts them. */
export function count(text) {
  const s = String(text);
  let nl = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) nl++;
  const words = s.split(/\s+/).filter((w) => w !== "").length;
  let bytes = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return { lines: nl, words, chars: [...s].length, bytes };
}
/** Sorted lines (`{numeric, reverse, unique}`), joined. */
export function sort(text, options) {
  const o = options || {};
  let a = lines(text).slice();
  if (o.numeric) a.sort((x, y) => (parseFloat(x) || 0) - (parseFloat(y) || 0) || (x < y ? -1 : x > y ? 1 : 0));
  else a.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  if (o.reverse) a.reverse();
  if (o.unique) a = a.filter((l, i) => i === 0 || l !== a[i - 1]);
  return a.length ? a.join("\n") + "\n" : "";
}
/** Adjacent duplicate lines dropped (`{count: true}`: `[{count, text}]`). */
export function uniq(text, options) {
  const groups = [];
  for (const l of lines(text)) {
    const g = groups[groups.length - 1];
    if (g && g.text === l) g.count++;
    else groups.push({ count: 1, text: l });
  }
  if (options && options.count) return groups;
  return groups.length ? groups.map((g) => g.text).join("\n") + "\n" : "";
}
/** A unified line diff of `a` and `b` ("" when equal); `{names: [A, B]}` for the header. */
export function diff(a, b, options) {
  const x = lines(a), y = lines(b);
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { ops.push([" ", x[i]]); i++; j++; }
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { ops.push(["-", x[i]]); i++; }
    else { ops.push(["+", y[j]]); j++; }
  }
  if (!ops.some((o) => o[0] !== " ")) return "";
  const names = (options && options.names) || ["a", "b"];
  let out = `--- ${names[0]}\n+++ ${names[1]}\n`;
  const ctx = 3;
  let k = 0, ai = 1, bi = 1;
  const pos = ops.map((o) => { const p = [ai, bi]; if (o[0] !== "+") ai++; if (o[0] !== "-") bi++; return p; });
  while (k < ops.length) {
    if (ops[k][0] === " ") { k++; continue; }
    let s = Math.max(0, k - ctx), e = k;
    for (;;) {
      let nx = e;
      while (nx < ops.length && ops[nx][0] !== " ") nx++;
      let run = nx;
      while (run < ops.length && ops[run][0] === " ") run++;
      if (run < ops.length && run - nx <= 2 * ctx) { e = run; continue; }
      e = Math.min(ops.length, nx + ctx);
      break;
    }
    const hunk = ops.slice(s, e);
    const la = hunk.filter((o) => o[0] !== "+").length, lb = hunk.filter((o) => o[0] !== "-").length;
    const sa = la ? pos[s][0] : pos[s][0] - 1, sb = lb ? pos[s][1] : pos[s][1] - 1;
    out += `@@ -${sa}${la === 1 ? "" : "," + la} +${sb}${lb === 1 ? "" : "," + lb} @@\n`;
    for (const o of hunk) out += o[0] + o[1] + "\n";
    k = e;
  }
  return out;
}
