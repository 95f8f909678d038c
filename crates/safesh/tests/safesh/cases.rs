//! The `.cases` file format.
//!
//! ```text
//! # Comment lines before the first header describe the file.
//! ### name of the case
//! #! stdin: first line\nsecond line
//! #! skip: why safesh deliberately differs from bash here
//! #! files
//! #! locale: C C.UTF-8
//! echo the bash script
//! echo up to the next header
//! ```
//!
//! Directive lines (`#! …`) are only recognised right after the header; everything
//! after the first non-directive line is the script. Trailing blank lines of a script
//! are dropped so cases can be separated by blank lines.

use std::collections::BTreeSet;

/// One differential case: a bash script plus how to run and compare it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The name after `### `.
    pub name: String,
    /// 1-based line of the header in the case file.
    pub line: usize,
    /// The script passed to `-c`.
    pub script: String,
    /// Bytes fed to stdin (`/dev/null` when `None`).
    pub stdin: Option<Vec<u8>>,
    /// A deliberate difference: the reason why the case is not compared.
    pub skip: Option<String>,
    /// Also compare the file tree after the run.
    pub files: bool,
    /// The `LC_ALL` values to run it under, once each (`C` unless given).
    pub locales: Vec<String>,
    /// True when `#! locale:` named them (the harness may run the others under
    /// `SAFESH_HARNESS_LOCALES` instead).
    pub locale_given: bool,
}

/// Parse a whole `.cases` file.
pub fn parse(text: &str) -> Result<Vec<Case>, String> {
    let mut cases: Vec<Case> = Vec::new();
    let mut in_directives = false;
    let mut script_lines: Vec<&str> = Vec::new();

    for (idx, line) in text.lines().enumerate() {
        let lineno = idx + 1;
        if let Some(name) = line.strip_prefix("### ") {
            finish(&mut cases, &mut script_lines)?;
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("line {lineno}: empty case name"));
            }
            cases.push(Case {
                name: name.to_string(),
                line: lineno,
                script: String::new(),
                stdin: None,
                skip: None,
                files: false,
                locales: vec!["C".to_string()],
                locale_given: false,
            });
            in_directives = true;
            continue;
        }
        let Some(case) = cases.last_mut() else {
            // Preamble: only comments and blank lines are allowed.
            if !(line.trim().is_empty() || line.starts_with('#')) {
                return Err(format!(
                    "line {lineno}: text before the first `### ` header"
                ));
            }
            continue;
        };
        if in_directives {
            if let Some(d) = line.strip_prefix("#!") {
                apply_directive(case, d.trim(), lineno)?;
                continue;
            }
            in_directives = false;
        }
        script_lines.push(line);
    }
    finish(&mut cases, &mut script_lines)?;

    let mut seen = BTreeSet::new();
    for c in &cases {
        if !seen.insert(c.name.as_str()) {
            return Err(format!("line {}: duplicate case name `{}`", c.line, c.name));
        }
    }
    Ok(cases)
}

/// Store the collected script in the last case.
fn finish(cases: &mut [Case], lines: &mut Vec<&str>) -> Result<(), String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if let Some(case) = cases.last_mut() {
        if lines.is_empty() {
            return Err(format!(
                "line {}: case `{}` has no script",
                case.line, case.name
            ));
        }
        case.script = lines.join("\n");
    }
    lines.clear();
    Ok(())
}

fn apply_directive(case: &mut Case, d: &str, lineno: usize) -> Result<(), String> {
    if d == "files" {
        case.files = true;
    } else if let Some(text) = d.strip_prefix("stdin:") {
        let text = text.strip_prefix(' ').unwrap_or(text);
        case.stdin = Some(unescape(text).into_bytes());
    } else if let Some(reason) = d.strip_prefix("skip:") {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(format!("line {lineno}: `#! skip:` needs a reason"));
        }
        case.skip = Some(reason.to_string());
    } else if let Some(list) = d.strip_prefix("locale:") {
        let locales: Vec<String> = list.split_whitespace().map(str::to_string).collect();
        if locales.is_empty() {
            return Err(format!(
                "line {lineno}: `#! locale:` needs one or more names"
            ));
        }
        case.locales = locales;
        case.locale_given = true;
    } else {
        return Err(format!("line {lineno}: unknown directive `#!{d}`"));
    }
    Ok(())
}

/// Decode `\n`, `\t`, `\\` in a `stdin:` directive.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[test]
fn parses_directives_and_scripts() {
    let text = "# preamble\n\n### one\n#! stdin: a\\nb\n#! files\n#! locale: C C.UTF-8\necho 1\n\necho 2\n\n\n### two\n#! skip: because\necho x\n";
    let cases = parse(text).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].name, "one");
    assert_eq!(cases[0].line, 3);
    assert_eq!(cases[0].stdin.as_deref(), Some(&b"a\nb"[..]));
    assert!(cases[0].files);
    assert_eq!(cases[0].locales, ["C", "C.UTF-8"]);
    assert_eq!(cases[1].locales, ["C"]);
    assert_eq!(cases[0].script, "echo 1\n\necho 2");
    assert_eq!(cases[1].skip.as_deref(), Some("because"));
    assert_eq!(cases[1].script, "echo x");
}

#[test]
fn rejects_bad_files() {
    assert!(parse("### a\n#! skip:\necho\n").is_err());
    assert!(parse("### a\n\n### b\necho\n").is_err());
    assert!(parse("### a\necho\n### a\necho\n").is_err());
    assert!(parse("echo\n### a\necho\n").is_err());
    assert!(parse("### a\n#! bogus\necho\n").is_err());
    assert!(parse("### a\n#! locale:\necho\n").is_err());
}
