//! Files an interpreter run executes that its arguments do not name: Python's
//! `-m module` and the local modules its code imports directly. A downloaded
//! `m.py` run as `python3 -m m`, or imported by `python3 -c 'import m'`, is code
//! like a script file, and needs the same integrity.
//!
//! Only the first level is followed (a trusted local module that imports a
//! downloaded one is not traced), and only Python: other interpreters load local
//! code through explicit paths, which their arguments already show.

use std::path::{Path, PathBuf};

/// The local files `argv` (a `python…` command line) will run as modules: the
/// `-m` target, and the modules that the `-c` code or the script imports, found
/// in the directory Python puts first on `sys.path` (the script's, or `cwd`).
pub(crate) fn python_modules(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    if !base.starts_with("python") {
        return Vec::new();
    }
    let mut modules: Vec<String> = Vec::new();
    let mut code: Option<String> = None;
    let mut home = cwd.to_path_buf();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        match a.as_str() {
            "-m" | "-c" => {
                let Some(v) = argv.get(i + 1) else { break };
                if a == "-m" {
                    modules.push(v.clone());
                } else {
                    code = Some(v.clone());
                }
                break;
            }
            // Options with a value: skip the value.
            "-W" | "-X" | "-Q" => i += 1,
            _ if a.starts_with("-m") && a.len() > 2 => {
                modules.push(a[2..].to_string());
                break;
            }
            _ if a.starts_with("-c") && a.len() > 2 => {
                code = Some(a[2..].to_string());
                break;
            }
            "-" => break,
            _ if a.starts_with('-') => {}
            script => {
                let path = cwd.join(script);
                home = path.parent().map_or(home, Path::to_path_buf);
                code = std::fs::read_to_string(&path).ok();
                break;
            }
        }
        i += 1;
    }
    if let Some(code) = code {
        modules.extend(imported_names(&code));
    }
    let mut files = Vec::new();
    for m in modules {
        files.extend(module_files(&home, &m));
    }
    files.sort();
    files.dedup();
    files
}

/// The top-level module names in `import a, b.c` and `from a import …` lines.
fn imported_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    // `;` separates statements on one line (`python3 -c 'import m; m.run()'`).
    for stmt in code.lines().flat_map(|l| l.split(';')) {
        let stmt = stmt.trim_start();
        if let Some(rest) = stmt.strip_prefix("import ") {
            for part in rest.split(',') {
                if let Some(name) = part.split_whitespace().next() {
                    names.push(name.to_string());
                }
            }
        } else if let Some(rest) = stmt.strip_prefix("from ")
            && let Some(name) = rest.split_whitespace().next()
            && !name.starts_with('.')
        {
            names.push(name.to_string());
        }
    }
    names
}

/// The files that `import name` (dotted) can load from `home`: `a.py`,
/// `a/__init__.py`, `a/__main__.py`, and for `a.b` also `a/b.py` and
/// `a/b/__init__.py`.
fn module_files(home: &Path, name: &str) -> Vec<PathBuf> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut dir = home.to_path_buf();
    for part in parts {
        for candidate in [
            dir.join(format!("{part}.py")),
            dir.join(part).join("__init__.py"),
            dir.join(part).join("__main__.py"),
        ] {
            if candidate.is_file() {
                out.push(candidate);
            }
        }
        dir = dir.join(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_the_module_of_dash_m_and_the_imports_of_code() {
        let d = tempfile::tempdir().expect("tempdir");
        for f in [
            "m.py",
            "helper.py",
            "pkg/__init__.py",
            "pkg/sub.py",
            "other.py",
        ] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, "").expect("write");
        }
        std::fs::write(
            d.path().join("main.py"),
            "import os, helper\nfrom pkg.sub import x\n",
        )
        .expect("write");
        let names = |a: &[&str]| -> Vec<String> {
            python_modules(&argv(a), d.path())
                .iter()
                .map(|p| {
                    p.strip_prefix(d.path())
                        .expect("inside")
                        .display()
                        .to_string()
                })
                .collect()
        };
        assert_eq!(names(&["python3", "-m", "m"]), ["m.py"]);
        assert_eq!(names(&["python3", "-mm"]), ["m.py"]);
        assert_eq!(
            names(&["python3", "-u", "-c", "import m; m.go()"]),
            ["m.py"]
        );
        assert_eq!(
            names(&["python3", "main.py"]),
            ["helper.py", "pkg/__init__.py", "pkg/sub.py"]
        );
        assert!(names(&["python3", "-c", "print('import m')"]).is_empty());
        assert!(names(&["node", "-e", "import m"]).is_empty());
        assert!(names(&["python3", "-m", "../etc"]).is_empty());
    }
}
