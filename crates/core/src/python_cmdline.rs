//! What a `python…` command line runs, read the way Python reads it: the program
//! comes from `-c CODE`, `-m MODULE`, a script file, or standard input.
//!
//! Two uses at the exec commit point: local modules the run loads that its
//! arguments do not name (a downloaded `m.py` run as `python3 -m m` or imported by
//! `python3 -c 'import m'` is code like a script file), and whether its stdin is
//! the program (`curl … | python3`) or data (`curl … | python3 -c 'json.load(…)'`).
//!
//! Only the first level of imports is followed (a trusted local module that
//! imports a downloaded one is not traced), and only Python: other interpreters
//! load local code through explicit paths, which their arguments already show,
//! and their stdin is always treated as code.

use std::path::{Path, PathBuf};

/// Where a Python run takes its program from.
#[derive(Debug, PartialEq, Eq)]
enum Program {
    /// `-c CODE`.
    Code(String),
    /// `-m MODULE`.
    Module(String),
    /// A script file (relative to the cwd).
    Script(String),
    /// Standard input (no program argument, or `-`).
    Stdin,
}

/// True for `python`, `python3`, `python3.11`, `pypy3`…
fn is_python(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    base.starts_with("python") || base.starts_with("pypy")
}

/// Reads the options as Python does: short flags cluster (`-uc CODE`), `-c` and
/// `-m` end the options and take the rest of the cluster or the next argument,
/// `-W` and `-X` take a value, the first operand is the script.
fn program(args: &[String]) -> Program {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-" {
            return Program::Stdin;
        }
        if a == "--" {
            return args
                .get(i + 1)
                .map_or(Program::Stdin, |s| script_or_stdin(s));
        }
        if let Some(long) = a.strip_prefix("--") {
            // The one long option with a separate value.
            if long == "check-hash-based-pycs" {
                i += 1;
            }
            i += 1;
            continue;
        }
        let Some(cluster) = a.strip_prefix('-') else {
            return script_or_stdin(a);
        };
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            match c {
                'c' | 'm' | 'W' | 'X' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i).cloned()
                    } else {
                        Some(rest.to_string())
                    };
                    match (c, value) {
                        ('c', Some(v)) => return Program::Code(v),
                        ('m', Some(v)) => return Program::Module(v),
                        // A missing value: Python refuses to start.
                        ('c' | 'm', None) => return Program::Code(String::new()),
                        _ => break,
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    Program::Stdin
}

fn script_or_stdin(a: &str) -> Program {
    if a == "-" {
        Program::Stdin
    } else {
        Program::Script(a.to_string())
    }
}

/// Whether `argv`'s standard input may run as code: always for an interpreter
/// other than Python (conservative); for Python when no `-c`, `-m` or script gives
/// the program, or when the program that reads it can run text as code
/// (`exec(sys.stdin.read())`, `pickle.load`, a subprocess…).
pub(crate) fn stdin_is_program(argv: &[String], cwd: &Path) -> bool {
    let Some((p, args)) = argv.split_first() else {
        return true;
    };
    if !is_python(p) {
        return true;
    }
    match program(args) {
        Program::Stdin => true,
        Program::Code(code) => runs_text(&code),
        Program::Script(s) => std::fs::read_to_string(cwd.join(s)).map_or(true, |t| runs_text(&t)),
        // A module's code is not read here: stdin stays code, except for standard
        // filters that only read data (when no local file shadows them).
        Program::Module(m) => {
            !(DATA_FILTERS.contains(&m.as_str()) && module_files(cwd, &m).is_empty())
        }
    }
}

/// Standard-library modules run with `-m` that treat stdin as data.
const DATA_FILTERS: &[&str] = &["json.tool", "base64", "gzip", "quopri"];

/// Python that can turn data into code: what it reads must then pass as code.
fn runs_text(code: &str) -> bool {
    const RUNNERS: &[&str] = &[
        "exec",
        "eval",
        "compile",
        "__import__",
        "importlib",
        "runpy",
        "pickle",
        "marshal",
        "shelve",
        "subprocess",
        "os.system",
        "os.popen",
        "os.exec",
        "os.spawn",
        "pty",
        "code.",
        "ctypes",
    ];
    RUNNERS.iter().any(|r| code.contains(r))
}

/// The local files `argv` (a `python…` command line) may run besides its script:
/// the `-m` target, the modules that the `-c` code or the script imports (found
/// in the directory Python puts first on `sys.path`: the script's, or `cwd`), and,
/// when that code can run text, the files its string literals name.
pub(crate) fn python_code_files(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    let Some((first, args)) = argv.split_first() else {
        return Vec::new();
    };
    if !is_python(first) {
        return Vec::new();
    }
    let mut modules: Vec<String> = Vec::new();
    let mut home = cwd.to_path_buf();
    let code = match program(args) {
        Program::Code(c) => Some(c),
        Program::Module(m) => {
            modules.push(m);
            None
        }
        Program::Script(s) => {
            let path = cwd.join(s);
            home = path.parent().map_or(home, Path::to_path_buf);
            std::fs::read_to_string(&path).ok()
        }
        Program::Stdin => None,
    };
    let mut files = Vec::new();
    if let Some(code) = code {
        modules.extend(imported_names(&code));
        // Code that runs text (`exec(open("x.py").read())`, `runpy.run_path(…)`):
        // the files its string literals name may be what it runs.
        if runs_text(&code) {
            files.extend(
                string_literals(&code)
                    .into_iter()
                    .map(|l| cwd.join(l))
                    .filter(|p| p.is_file()),
            );
        }
    }
    for m in modules {
        files.extend(module_files(&home, &m));
    }
    files.sort();
    files.dedup();
    files
}

/// The contents of the `'…'` and `"…"` literals in `code` (no escapes, one line).
fn string_literals(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in code.lines() {
        let mut rest = line;
        while let Some(start) = rest.find(['\'', '"']) {
            let quote = rest[start..].chars().next().unwrap_or('"');
            let after = &rest[start + 1..];
            let Some(end) = after.find(quote) else { break };
            if end > 0 {
                out.push(&after[..end]);
            }
            rest = &after[end + 1..];
        }
    }
    out
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
            python_code_files(&argv(a), d.path())
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
        assert_eq!(names(&["python3", "-Bc", "import m"]), ["m.py"]);
        // Files named in code that runs text; not in code that does not.
        assert_eq!(
            names(&["python3", "-c", "exec(open('other.py').read())"]),
            ["other.py"]
        );
        assert!(names(&["python3", "-c", "print(open('other.py').read())"]).is_empty());
        assert_eq!(
            names(&["python3", "-W", "ignore", "main.py"]),
            ["helper.py", "pkg/__init__.py", "pkg/sub.py"]
        );
    }

    #[test]
    fn stdin_is_the_program_only_without_c_m_or_a_script() {
        let yes = |a: &[&str]| stdin_is_program(&argv(a), Path::new("/nonexistent"));
        assert!(yes(&["python3"]));
        assert!(yes(&["python3", "-"]));
        assert!(yes(&["python3", "-u", "-"]));
        // `-W VALUE` and `-X VALUE` take the next argument: it is not a script.
        assert!(yes(&["python3", "-W", "ignore"]));
        assert!(yes(&["python3", "-X", "dev"]));
        assert!(yes(&["python3", "-uW", "ignore"]));
        assert!(yes(&["/usr/bin/python3.11", "-I"]));
        assert!(!yes(&[
            "python3",
            "-c",
            "import sys; print(sys.stdin.read())"
        ]));
        assert!(!yes(&["python3", "-uc", "pass"]));
        assert!(!yes(&["python3", "-cpass"]));
        assert!(!yes(&["python3", "-m", "json.tool"]));
        assert!(yes(&["python3", "-m", "code"]));
        // A script that cannot be read, or code that runs text: code.
        assert!(yes(&["python3", "script.py"]));
        assert!(yes(&[
            "python3",
            "-c",
            "import sys; exec(sys.stdin.read())"
        ]));
        assert!(yes(&[
            "python3",
            "-c",
            "import pickle,sys; pickle.load(sys.stdin.buffer)"
        ]));
        assert!(yes(&[
            "python3",
            "-c",
            "import subprocess,sys; subprocess.run(sys.stdin.read(), shell=True)"
        ]));
        // Other interpreters: always code.
        assert!(yes(&["node", "-e", "1"]));
        assert!(yes(&["perl", "script.pl"]));
    }
}
