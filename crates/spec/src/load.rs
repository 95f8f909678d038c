//! Loading a spec: YAML (serde_yaml_ng) into the schema, then the checks serde
//! cannot make. Every error has `file:line:column` and the field path.

use crate::allowed::AllowedCommands;
use crate::error::SpecError;
use crate::interp;
use crate::model::{ProjectSpec, StepArgs};
use crate::params::{DATE, ParamType, Params};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// The accepted `apiVersion`s.
pub const API_VERSIONS: &[&str] = &["agsh/v1", "safesh/v1"];

/// Reads and validates the spec in `path`.
pub fn load(path: &Path) -> Result<ProjectSpec, SpecError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError {
        file: file.clone(),
        position: None,
        path: None,
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, &file)
}

/// Parses and validates spec `text` (`file` names it in errors).
pub fn parse(text: &str, file: &str) -> Result<ProjectSpec, SpecError> {
    let spec: ProjectSpec = serde_yaml_ng::from_str(text).map_err(|e| yaml_error(&e, file))?;
    check(&spec, file).map_err(|(path, message)| {
        SpecError::at(file, path.clone(), message).with_position(locate(text, &path))
    })?;
    Ok(spec)
}

fn yaml_error(e: &serde_yaml_ng::Error, file: &str) -> SpecError {
    let full = e.to_string();
    // "PATH: MESSAGE at line L column C": the position is kept apart.
    let msg = match full.rfind(" at line ") {
        Some(i) if full[i..].contains(" column ") => full[..i].to_string(),
        _ => full.clone(),
    };
    let (path, message) = match msg.split_once(": ") {
        Some((p, m)) if !p.contains(' ') && !p.is_empty() => (Some(p.to_string()), m.to_string()),
        _ => (None, msg),
    };
    SpecError {
        file: file.to_string(),
        position: e.location().map(|l| (l.line(), l.column())),
        path,
        message: format!("{message} (YAML)"),
    }
}

type Fault = (String, String);

/// The checks after deserialization: (field path, message) of the first fault.
fn check(spec: &ProjectSpec, _file: &str) -> Result<(), Fault> {
    let f = |p: &str, m: String| (p.to_string(), m);
    if !API_VERSIONS.contains(&spec.api_version.as_str()) {
        return Err(f(
            "apiVersion",
            format!(
                "{:?} is not supported (use {})",
                spec.api_version,
                API_VERSIONS.join(" or ")
            ),
        ));
    }
    if spec.kind != "ProjectSpec" {
        return Err(f(
            "kind",
            format!("{:?}: the kind must be ProjectSpec", spec.kind),
        ));
    }
    if spec.meta.name.trim().is_empty() {
        return Err(f("meta.name", "the spec needs a name".into()));
    }
    if spec.goal.trim().is_empty() {
        return Err(f(
            "goal",
            "the goal is empty: say what the agent should achieve".into(),
        ));
    }
    let mut names = HashSet::new();
    for (i, p) in spec.params.iter().enumerate() {
        let at = |field: &str| format!("params[{i}].{field}");
        if !interp::is_name(&p.name) {
            return Err((
                at("name"),
                format!("{:?} is not a param name (letters, digits, _)", p.name),
            ));
        }
        if p.name == DATE {
            return Err((
                at("name"),
                "`date` is reserved ({{date}} is today's UTC date)".into(),
            ));
        }
        if !names.insert(p.name.as_str()) {
            return Err((at("name"), format!("{} is declared twice", p.name)));
        }
        let Some(ty) = ParamType::parse(&p.kind) else {
            return Err((
                at("type"),
                format!("unknown type {:?} (types: {})", p.kind, ParamType::NAMES),
            ));
        };
        if let Some(d) = &p.default {
            ty.check(d).map_err(|m| (at("default"), m))?;
        }
    }
    if let Some(list) = &spec.allowed_commands {
        AllowedCommands::new(Some(list)).map_err(|(i, m)| (format!("allowed_commands[{i}]"), m))?;
    }
    for (i, a) in spec.success_criteria.iter().enumerate() {
        safesh_verify::Checked::new(i, a)
            .map_err(|e| (format!("success_criteria[{i}].{}", e.field), e.message))?;
    }
    // Interpolate with sample values: unknown params and unsafe placements show now.
    let params = sample_params(spec);
    if let Some(o) = &spec.output {
        if o.path.trim().is_empty() {
            return Err(f("output.path", "the output path is empty".into()));
        }
        interp::text(&o.path, &params).map_err(|m| f("output.path", m))?;
    }
    for (i, s) in spec.steps.iter().enumerate() {
        let at = |field: &str| format!("steps[{i}].{field}");
        match (&s.command, &s.script) {
            (Some(_), Some(_)) => {
                return Err((
                    format!("steps[{i}]"),
                    "give either command (+ args) or script, not both".into(),
                ));
            }
            (None, None) => {
                return Err((
                    format!("steps[{i}]"),
                    "a step needs a command (+ args) or a script".into(),
                ));
            }
            (Some(c), None) => {
                if c.trim().is_empty() || c.chars().any(char::is_whitespace) {
                    return Err((
                        at("command"),
                        format!("{c:?} is not a command name (arguments go in args)"),
                    ));
                }
                if c.contains("{{") {
                    return Err((
                        at("command"),
                        "a param cannot name the command (it is fixed so the plan can decide it)"
                            .into(),
                    ));
                }
            }
            (None, Some(script)) => {
                if s.args.is_some() {
                    return Err((at("args"), "args go with command, not with script".into()));
                }
                interp::script(script, &params).map_err(|m| (at("script"), m))?;
            }
        }
        match &s.args {
            Some(StepArgs::List(words)) => {
                for (j, w) in words.iter().enumerate() {
                    let Some(t) = scalar(w) else {
                        return Err((
                            format!("steps[{i}].args[{j}]"),
                            format!("an argument must be a word, not {w}"),
                        ));
                    };
                    interp::arg(&t, &params).map_err(|m| (format!("steps[{i}].args[{j}]"), m))?;
                }
            }
            Some(StepArgs::Map(m)) => {
                for (k, v) in m {
                    interp::json(v, &params).map_err(|e| (format!("steps[{i}].args.{k}"), e))?;
                }
            }
            None => {}
        }
        if let Some(intent) = &s.intent {
            interp::text(intent, &params).map_err(|m| (at("intent"), m))?;
        }
        for (j, a) in s.verify.iter().enumerate() {
            safesh_verify::Checked::new(j, a)
                .map_err(|e| (format!("steps[{i}].verify[{j}].{}", e.field), e.message))?;
        }
    }
    Ok(())
}

/// A word's text: strings, numbers and booleans.
pub(crate) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Params with their defaults, or a sample of their type (validation only).
fn sample_params(spec: &ProjectSpec) -> Params {
    let mut given = BTreeMap::new();
    for p in &spec.params {
        if p.default.is_none() {
            let sample = match ParamType::parse(&p.kind) {
                Some(ParamType::Integer | ParamType::Number) => "1",
                Some(ParamType::Boolean) => "true",
                _ => "x",
            };
            given.insert(p.name.clone(), sample.to_string());
        }
    }
    Params::resolve(&spec.params, &given, "2000-01-01").unwrap_or_default()
}

/// The 1-based line and column of the field `path` (`steps[2].args[0]`) in YAML
/// `text`, found by indentation (best effort: block style).
pub(crate) fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut lo = 0usize;
    let mut hi = lines.len();
    let mut indent: isize = -1;
    let mut pos = None;
    for seg in segments(path) {
        match seg {
            Seg::Key(k) => {
                // Not found (flow style, …): the parent's position.
                let Some((li, col)) = (lo..hi).find_map(|n| {
                    let l = lines[n];
                    let (col, rest) = key_start(l)?;
                    (col as isize > indent && (rest.starts_with(&format!("{k}:"))))
                        .then_some((n, col))
                }) else {
                    return pos;
                };
                pos = Some((li + 1, col + 1));
                indent = col as isize;
                lo = li;
                hi = block_end(&lines, li, col, hi);
            }
            Seg::Index(n) => {
                let mut seen = 0;
                let mut found = None;
                let mut dash_col = None;
                for (li, l) in lines.iter().enumerate().take(hi).skip(lo) {
                    let t = l.trim_start();
                    let col = l.len() - t.len();
                    if (t.starts_with("- ") || t == "-") && col as isize >= indent {
                        if dash_col.is_none() {
                            dash_col = Some(col);
                        }
                        if Some(col) == dash_col {
                            if seen == n {
                                found = Some((li, col));
                                break;
                            }
                            seen += 1;
                        }
                    }
                }
                let Some((li, col)) = found else {
                    return pos;
                };
                pos = Some((li + 1, col + 1));
                indent = col as isize;
                lo = li;
                hi = item_end(&lines, li, col, hi);
            }
        }
    }
    pos
}

/// A key's column and the text from the key on (after an optional `- `).
fn key_start(l: &str) -> Option<(usize, &str)> {
    let t = l.trim_start();
    if t.starts_with('#') || t.is_empty() {
        return None;
    }
    let col = l.len() - t.len();
    match t.strip_prefix("- ") {
        Some(r) => {
            let r2 = r.trim_start();
            Some((col + 2 + (r.len() - r2.len()), r2))
        }
        None => Some((col, t)),
    }
}

/// The line after the block of the key at (`li`, `col`).
fn block_end(lines: &[&str], li: usize, col: usize, hi: usize) -> usize {
    (li + 1..hi)
        .find(|&n| {
            let t = lines[n].trim_start();
            let c = lines[n].len() - t.len();
            // A sibling item (`- ` at the key's column) stays inside the block.
            let sibling_item = c == col && t.starts_with("- ");
            !t.is_empty() && !t.starts_with('#') && c <= col && !sibling_item
        })
        .unwrap_or(hi)
}

/// The line after the list item starting at (`li`, `col`).
fn item_end(lines: &[&str], li: usize, col: usize, hi: usize) -> usize {
    (li + 1..hi)
        .find(|&n| {
            let t = lines[n].trim_start();
            let c = lines[n].len() - t.len();
            !t.is_empty() && !t.starts_with('#') && c <= col
        })
        .unwrap_or(hi)
}

enum Seg {
    Key(String),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            if b > 0 {
                out.push(Seg::Key(rest[..b].to_string()));
            }
            rest = &rest[b..];
            while let Some(r) = rest.strip_prefix('[') {
                let Some(e) = r.find(']') else { break };
                if let Ok(n) = r[..e].parse() {
                    out.push(Seg::Index(n));
                }
                rest = &r[e + 1..];
            }
        } else if !rest.is_empty() {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_nested_fields() {
        let y = "apiVersion: agsh/v1\nmeta:\n  name: x\nsteps:\n  - command: ls\n    args: [a]\n  - script: |\n      echo\n    verify:\n      - type: contains\n      - type: bogus\n";
        assert_eq!(locate(y, "meta.name"), Some((3, 3)));
        assert_eq!(locate(y, "steps[0].command"), Some((5, 5)));
        assert_eq!(locate(y, "steps[1]"), Some((7, 3)));
        assert_eq!(locate(y, "steps[1].verify[1].type"), Some((11, 9)));
        assert_eq!(locate(y, "steps[1].verify[1]"), Some((11, 7)));
        assert_eq!(locate(y, "nothing"), None);
        assert_eq!(
            locate(y, "steps[0].args[0]"),
            Some((6, 5)),
            "flow style: the key's line"
        );
    }
}
