//! jq 1.6's module system: `import "m" as m;`, `include "m";`,
//! `import "d" as $d;` (data), `module {…};`, `-L dir` and `modulemeta`.
//!
//! jaq parses and links modules; what is jq 1.6's is decided here: where a
//! module is found (the search path and the candidate file names), the
//! checks jq 1.6 makes on the header (constant metadata, constant import
//! paths), and the `modulemeta` object. Every module or data file is read
//! through the host's path check, like `cat` (its label joins the output).

use crate::val::{Map, Val};
use safesh_utils::Host;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where modules are searched, and how files are read.
pub struct Resolver<'h> {
    /// The shell's working directory (`.` in a search path).
    pub cwd: PathBuf,
    /// Directory of the main program (`-f` file's directory, else `cwd`):
    /// relative `search` paths of the main program's imports start here.
    pub main_dir: PathBuf,
    /// The library search path: `-L` directories, else jq 1.6's default
    /// (`~/.jq`, `$ORIGIN/../lib/jq`, `$ORIGIN/lib`).
    pub lib_dirs: Vec<String>,
    /// `$HOME`, for `~`.
    pub home: Option<PathBuf>,
    /// The host that allows (and labels) each read.
    pub host: &'h dyn Host,
}

/// jq 1.6's default library search path (used when no `-L` is given), as
/// its `get_search_list` prints it.
pub const DEFAULT_LIB_DIRS: &[&str] = &["~/.jq", "$ORIGIN/../lib/jq", "$ORIGIN/lib"];

/// `$ORIGIN`: the directory of the running executable (for jq, jq's own).
pub fn origin() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()?
        .parent()
        .map(Path::to_path_buf)
}

impl Resolver<'_> {
    /// Expands one search path entry as jq 1.6 does: `.` is the working
    /// directory, `~` is `$HOME`, `$ORIGIN/` the executable's directory,
    /// other relative paths start at `base` (the importing file's directory).
    fn expand(&self, entry: &str, base: &Path) -> Option<PathBuf> {
        if entry == "." {
            return Some(self.cwd.clone());
        }
        if entry == "~" {
            return self.home.clone();
        }
        if let Some(rest) = entry.strip_prefix("~/") {
            return Some(self.home.as_ref()?.join(rest));
        }
        if let Some(rest) = entry.strip_prefix("$ORIGIN/") {
            return Some(origin()?.join(rest));
        }
        let p = Path::new(entry);
        Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        })
    }

    /// The directories searched for an import from a file in `base` with
    /// the given metadata `search` (which replaces the default list).
    fn search_dirs(&self, base: &Path, search: Option<Vec<String>>) -> Vec<PathBuf> {
        let entries = match search {
            Some(list) => list,
            None => std::iter::once(".".to_string())
                .chain(self.lib_dirs.iter().cloned())
                .collect(),
        };
        // -L directories are relative to the working directory, as jq makes
        // them absolute when it reads its arguments.
        entries
            .iter()
            .filter(|e| !e.is_empty())
            .filter_map(|e| self.expand(e, base))
            .collect()
    }

    /// Finds module `rel` (`ext` "jq" or "json"): `DIR/rel.ext`,
    /// `DIR/rel/jq/main.ext`, `DIR/rel/BASENAME.ext` in each search directory.
    pub fn find(
        &self,
        rel: &str,
        base: &Path,
        search: Option<Vec<String>>,
        ext: &str,
    ) -> Result<PathBuf, String> {
        let bname = rel.rsplit('/').next().unwrap_or(rel);
        for dir in self.search_dirs(base, search) {
            // Joined as text, as jq does: an absolute `rel` stays under `dir`.
            let dir = dir.to_string_lossy();
            let candidates = [
                format!("{dir}/{rel}.{ext}"),
                format!("{dir}/{rel}/jq/main.{ext}"),
                format!("{dir}/{rel}/{bname}.{ext}"),
            ]
            .map(PathBuf::from);
            for c in candidates {
                if c.is_file() {
                    return Ok(std::fs::canonicalize(&c).unwrap_or(c));
                }
            }
        }
        Err(format!("module not found: {rel}"))
    }

    /// Reads a module or data file through the host's check.
    pub fn read(&self, path: &Path) -> Result<String, String> {
        let mut f = safesh_utils::ctx::open_read(self.host, path)
            .map_err(|e| format!("{}: {}", path.display(), safesh_utils::io_error_text(&e)))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)
            .map_err(|e| format!("{}: {}", path.display(), safesh_utils::io_error_text(&e)))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// `get_search_list`: the library search path.
    pub fn search_list(&self) -> Val {
        Val::from_iter(
            self.lib_dirs
                .iter()
                .map(|d| Val::from(d.clone()))
                .collect::<Vec<_>>(),
        )
    }

    /// `modulemeta`: the metadata of module `name` with its `deps`.
    pub fn modulemeta(&self, name: &Val) -> Result<Val, String> {
        let Val::Str(name) = name else {
            return Err("modulemeta input module not a string".into());
        };
        // jq 1.6 looks for it in the library path only (not in `.`).
        let path = self.find(name, &self.cwd, Some(self.lib_dirs.clone()), "jq")?;
        let code = self.read(&path)?;
        let h = header(&code)?;
        let mut m = match h.meta {
            Some(Val::Obj(o)) => (*o).clone(),
            _ => Map::default(),
        };
        let deps = h.deps.into_iter().map(|d| {
            let mut o = match d.meta {
                Some(Val::Obj(o)) => (*o).clone(),
                _ => Map::default(),
            };
            if let Some(name) = &d.name {
                let as_ = name.strip_prefix('$').unwrap_or(name);
                o.insert(Val::from("as".to_string()), Val::from(as_.to_string()));
            }
            o.insert(
                Val::from("is_data".to_string()),
                Val::Bool(d.name.as_deref().is_some_and(|n| n.starts_with('$'))),
            );
            o.insert(Val::from("relpath".to_string()), Val::from(d.path));
            Val::obj(o)
        });
        m.insert(
            Val::from("deps".to_string()),
            Val::from_iter(deps.collect::<Vec<_>>()),
        );
        Ok(Val::obj(m))
    }
}

/// The `search` entry of import metadata, as a list.
pub fn search_of(meta: Option<&Val>) -> Option<Vec<String>> {
    let Some(Val::Obj(o)) = meta else {
        return None;
    };
    match o.get(&Val::from("search".to_string()))? {
        Val::Str(s) => Some(vec![s.to_string()]),
        Val::Arr(a) => Some(
            a.iter()
                .filter_map(|v| match v {
                    Val::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect(),
        ),
        _ => Some(Vec::new()),
    }
}

/// One `import`/`include` of a module header.
pub struct Dep {
    /// The module path as written.
    pub path: String,
    /// `as NAME` (`$NAME` for data), `None` for `include`.
    pub name: Option<String>,
    /// The metadata object, if any.
    pub meta: Option<Val>,
}

/// A module header: `module META;` and the imports.
pub struct Header {
    /// The module's metadata.
    pub meta: Option<Val>,
    /// Index (in `alt::tokens`) of the first token after the header.
    pub body_token: usize,
    /// Its imports and includes, in order.
    pub deps: Vec<Dep>,
}

/// Reads the header of `code` with jq 1.6's checks; the error is jq's
/// message (`Module metadata must be constant`, …). A header this cannot
/// read is left to the parser (an empty header is returned).
pub fn header(code: &str) -> Result<Header, String> {
    let mut h = Header {
        meta: None,
        body_token: 0,
        deps: Vec::new(),
    };
    let Some(toks) = crate::alt::tokens(code) else {
        return Ok(h);
    };
    let text = |a: usize, b: usize| &code[toks[a].start..toks[b - 1].end];
    let is_word = |i: usize, w: &str| {
        toks.get(i)
            .is_some_and(|t| t.kind == crate::alt::Kind::Word && &code[t.start..t.end] == w)
    };
    // The index of the `;` ending the term that starts at `from`.
    let semi = |from: usize| {
        let mut depth = 0i32;
        for (k, t) in toks.iter().enumerate().skip(from) {
            match t.kind {
                crate::alt::Kind::Open => depth += 1,
                crate::alt::Kind::Close => depth -= 1,
                crate::alt::Kind::Semi if depth == 0 => return Some(k),
                _ => {}
            }
        }
        None
    };
    let mut i = 0;
    if is_word(0, "module") {
        let Some(end) = semi(1) else { return Ok(h) };
        if end > 1 {
            h.meta = Some(meta_value(text(1, end))?);
        }
        i = end + 1;
    }
    loop {
        let import = is_word(i, "import");
        if !import && !is_word(i, "include") {
            break;
        }
        let Some(p) = toks.get(i + 1) else { break };
        let lit = &code[p.start..p.end];
        if !lit.starts_with('"') {
            break;
        }
        let path = import_path(lit)?;
        let mut k = i + 2;
        let mut name = None;
        if import {
            if !is_word(k, "as") {
                break;
            }
            let Some(n) = toks.get(k + 1) else { break };
            name = Some(code[n.start..n.end].to_string());
            k += 2;
        }
        let Some(end) = semi(k) else { break };
        let meta = if end > k {
            Some(meta_value(text(k, end))?)
        } else {
            None
        };
        h.deps.push(Dep { path, name, meta });
        i = end + 1;
    }
    h.body_token = i;
    Ok(h)
}

/// Names defined by a module's text (after its header).
pub fn def_names(code: &str) -> Vec<String> {
    let (Some(toks), Ok(h)) = (crate::alt::tokens(code), header(code)) else {
        return Vec::new();
    };
    let body = toks.get(h.body_token).map_or("", |t| &code[t.start..]);
    jaq_core::load::parse(body, |p| p.defs())
        .unwrap_or_default()
        .into_iter()
        .map(|d: jaq_core::load::parse::Def<&str>| d.name.to_string())
        .collect()
}

/// jq 1.6 lets several imports share an alias (`import "a" as t; import
/// "b" as t;`): `t::f` is the `f` of the first of them that defines it.
/// jaq keeps only the last module, so such imports get aliases of their
/// own (`t__1`, `t__2`, …) and each `t::f` names the one that defines `f`
/// (`defs_of` gives a dependency's definitions). `None` when no alias is
/// shared.
pub fn split_shared_aliases(code: &str, defs_of: impl Fn(&Dep) -> Vec<String>) -> Option<String> {
    let h = header(code).ok()?;
    let toks = crate::alt::tokens(code)?;
    let mut shared: Vec<&str> = Vec::new();
    for (k, d) in h.deps.iter().enumerate() {
        if let Some(n) = d.name.as_deref()
            && !n.starts_with('$')
            && h.deps[..k].iter().any(|e| e.name.as_deref() == Some(n))
            && !shared.contains(&n)
        {
            shared.push(n);
        }
    }
    if shared.is_empty() {
        return None;
    }
    // (token index, replacement text), in order.
    let mut edits: Vec<(usize, String)> = Vec::new();
    // Which new alias defines each `alias::name`: the first import wins.
    let mut owner: std::collections::HashMap<(String, String), String> = Default::default();
    let mut k = 0;
    for (i, t) in toks.iter().enumerate().take(h.body_token) {
        let w = &code[t.start..t.end];
        let is_as = i > 0 && &code[toks[i - 1].start..toks[i - 1].end] == "as";
        if !is_as || !shared.contains(&w) {
            if is_as {
                k += 1;
            }
            continue;
        }
        // The import whose alias this is: count `as` words before it.
        let dep = h.deps.iter().filter(|d| d.name.is_some()).nth(k)?;
        k += 1;
        let alias = format!("{w}__{i}");
        for f in defs_of(dep) {
            owner
                .entry((w.to_string(), f))
                .or_insert_with(|| alias.clone());
        }
        edits.push((i, alias));
    }
    for (i, t) in toks.iter().enumerate().skip(h.body_token) {
        let w = &code[t.start..t.end];
        if t.kind != crate::alt::Kind::Word {
            continue;
        }
        let Some((m, f)) = w.split_once("::") else {
            continue;
        };
        if let Some(alias) = owner.get(&(m.to_string(), f.to_string())) {
            edits.push((i, format!("{alias}::{f}")));
        }
    }
    let mut out = String::new();
    let mut last = 0;
    for (i, text) in edits {
        out.push_str(&code[last..toks[i].start]);
        out.push_str(&text);
        last = toks[i].end;
    }
    out.push_str(&code[last..]);
    Some(out)
}

/// The value of constant metadata, as jq 1.6 requires it.
fn meta_value(text: &str) -> Result<Val, String> {
    let term = jaq_core::load::parse(text, |p| p.term())
        .ok_or_else(|| "Module metadata must be constant".to_string())?;
    match crate::constkeys::constant(&term, 0) {
        Some(v @ Val::Obj(_)) => Ok(v),
        Some(_) => Err("Module metadata must be an object".into()),
        None => Err("Module metadata must be constant".into()),
    }
}

/// An import path: a string literal without interpolation, read as JSON.
fn import_path(lit: &str) -> Result<String, String> {
    if lit.contains("\\(") {
        return Err("Import path must be constant".into());
    }
    let mut r = crate::read::Reader::new(lit.as_bytes().to_vec());
    match r.next_value() {
        Some(Ok(Val::Str(s))) => Ok(s.to_string()),
        Some(Err(e)) => Err(format!("{e} (while parsing '{lit}')")),
        _ => Err("Import path must be constant".into()),
    }
}

/// Rewrites `$name::name` (how jq 1.6 names the value of `import "d" as
/// $name`) to `$name`, the variable jaq binds. Strings and comments are
/// left alone.
pub fn rename_data_vars(code: &str) -> Option<String> {
    let toks = crate::alt::tokens(code)?;
    let mut out = String::new();
    let mut last = 0;
    for t in toks.iter().filter(|t| t.kind == crate::alt::Kind::Var) {
        let v = &code[t.start..t.end];
        if let Some((a, b)) = v[1..].split_once("::")
            && a == b
        {
            out.push_str(&code[last..t.start]);
            out.push('$');
            out.push_str(a);
            last = t.end;
        }
    }
    (last > 0).then(|| {
        out.push_str(&code[last..]);
        out
    })
}
