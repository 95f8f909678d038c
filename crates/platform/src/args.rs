//! Arguments two ways: words (`--field value`, positional words for
//! `x-positional` fields in schema order) and a JSON object (JSON-RPC
//! `execute {command, args: {…}}`), which is turned into the same words so that
//! both take one path. The parsed object is validated against the command's
//! input schema before anything runs.

use crate::command::{Field, FieldKind, PlatformCommand};
use crate::error::PlatformError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Validated arguments: the JSON object, and which argv words gave each field
/// (their labels decide the commit points).
#[derive(Clone, Debug, Default)]
pub struct Args {
    values: Map<String, Value>,
    words: BTreeMap<String, Vec<usize>>,
}

impl Args {
    /// The arguments as a JSON object.
    pub fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    /// A string field.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(Value::as_str)
    }

    /// An integer field.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.values.get(name).and_then(Value::as_i64)
    }

    /// A boolean field (absent: false).
    pub fn flag(&self, name: &str) -> bool {
        self.values
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A string-map field, in key order.
    pub fn map(&self, name: &str) -> Vec<(String, String)> {
        match self.values.get(name) {
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Any JSON field.
    pub fn json(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The argv indices of the words that gave `name`.
    pub fn words_of(&self, name: &str) -> &[usize] {
        self.words.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
}

fn field_named<'f>(fields: &'f [Field], name: &str) -> Option<&'f Field> {
    let name = name.replace('-', "_");
    fields.iter().find(|f| f.name == name)
}

fn expected(f: &Field) -> String {
    format!("--{}: {}", f.name, f.description)
}

/// A word's value for a field of `kind`, merged into what an earlier word gave.
fn convert(
    cmd: &str,
    f: &Field,
    word: &str,
    previous: Option<Value>,
) -> Result<Value, PlatformError> {
    let bad = |what: &str| {
        PlatformError::field(
            cmd,
            f.name,
            format!("--{} {what} ({})", f.name, f.description),
        )
    };
    if previous.is_some() && f.kind != FieldKind::StringMap {
        return Err(bad("is given twice"));
    }
    Ok(match f.kind {
        FieldKind::String => Value::String(word.to_string()),
        FieldKind::Integer => Value::from(
            word.trim()
                .parse::<i64>()
                .map_err(|_| bad(&format!("must be an integer, not {word:?}")))?,
        ),
        FieldKind::Boolean => match word {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => return Err(bad(&format!("must be true or false, not {word:?}"))),
        },
        FieldKind::Json => {
            serde_json::from_str(word).map_err(|e| bad(&format!("must be JSON text ({e})")))?
        }
        FieldKind::StringMap => {
            let mut m = match previous {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            if word.trim_start().starts_with('{') {
                let v: Value = serde_json::from_str(word)
                    .map_err(|e| bad(&format!("must be a JSON object ({e})")))?;
                let Value::Object(o) = v else {
                    return Err(bad("must be a JSON object"));
                };
                m.extend(o);
            } else {
                // `Name: value` (headers) or `name=value` (query, form).
                let (k, v) = match (word.split_once('='), word.split_once(':')) {
                    (Some((k, v)), Some((k2, _))) if k.len() < k2.len() => (k, v),
                    (_, Some((k, v))) => (k, v.trim_start()),
                    (Some((k, v)), None) => (k, v),
                    (None, None) => {
                        return Err(bad(&format!("must be NAME=VALUE, not {word:?}")));
                    }
                };
                m.insert(k.trim().to_string(), Value::String(v.to_string()));
            }
            Value::Object(m)
        }
    })
}

/// Parses `argv` (argv[0] is the command's name) against the command's fields
/// and validates the result against its input schema.
pub fn parse_words(cmd: &dyn PlatformCommand, argv: &[String]) -> Result<Args, PlatformError> {
    let name = cmd.name();
    let fields = cmd.fields();
    let mut args = Args::default();
    let mut positional = fields.iter().filter(|f| f.positional);
    let mut only_operands = false;
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        let option = if only_operands {
            None
        } else {
            w.strip_prefix("--")
        };
        match option {
            Some("") => {
                only_operands = true;
                i += 1;
                continue;
            }
            Some(opt) => {
                let (key, inline) = match opt.split_once('=') {
                    Some((k, v)) => (k, Some(v.to_string())),
                    None => (opt, None),
                };
                let f = field_named(fields, key).ok_or_else(|| PlatformError::Usage {
                    command: name.to_string(),
                    field: Some(key.to_string()),
                    message: format!(
                        "unknown argument --{key}; {name} takes: {}",
                        fields.iter().map(expected).collect::<Vec<_>>().join("; ")
                    ),
                })?;
                let mut idx = vec![i];
                let value = match inline {
                    Some(v) => v,
                    None if f.kind == FieldKind::Boolean => {
                        match argv.get(i + 1).map(String::as_str) {
                            Some(v @ ("true" | "false")) => {
                                i += 1;
                                idx.push(i);
                                v.to_string()
                            }
                            _ => "true".to_string(),
                        }
                    }
                    None => {
                        i += 1;
                        idx.push(i);
                        argv.get(i).cloned().ok_or_else(|| {
                            PlatformError::field(
                                name,
                                f.name,
                                format!("--{} needs a value ({})", f.name, f.description),
                            )
                        })?
                    }
                };
                let prev = args.values.remove(f.name);
                let v = convert(name, f, &value, prev)?;
                args.values.insert(f.name.to_string(), v);
                args.words
                    .entry(f.name.to_string())
                    .or_default()
                    .extend(idx);
            }
            None => {
                let f = loop {
                    match positional.next() {
                        Some(f) if args.values.contains_key(f.name) => continue,
                        other => break other,
                    }
                };
                let f = f.ok_or_else(|| PlatformError::Usage {
                    command: name.to_string(),
                    field: None,
                    message: format!(
                        "unexpected argument {w:?}; {name} takes: {}",
                        fields.iter().map(expected).collect::<Vec<_>>().join("; ")
                    ),
                })?;
                let v = convert(name, f, w, None)?;
                args.values.insert(f.name.to_string(), v);
                args.words.entry(f.name.to_string()).or_default().push(i);
            }
        }
        i += 1;
    }
    if let Some(f) = fields
        .iter()
        .find(|f| f.required && !args.values.contains_key(f.name))
    {
        return Err(PlatformError::field(
            name,
            f.name,
            format!("missing --{} ({})", f.name, f.description),
        ));
    }
    crate::registry::validate(cmd, &Value::Object(args.values.clone()))?;
    Ok(args)
}

/// The words for a JSON object of arguments (JSON-RPC `execute` with an
/// object `args`): `--field value`, except `x-positional` fields given in
/// schema order, which come first as plain words. Keys the command does not
/// take are passed on as `--key value` too, so that parsing the words refuses
/// them with the same message as anywhere else.
pub fn object_to_words(
    cmd: &dyn PlatformCommand,
    object: &Map<String, Value>,
) -> Result<Vec<String>, PlatformError> {
    let mut words = Vec::new();
    let mut named = Vec::new();
    let mut in_order = true;
    for f in cmd.fields() {
        let Some(v) = object.get(f.name) else {
            if f.positional {
                in_order = false;
            }
            continue;
        };
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if f.positional && in_order && !text.starts_with('-') {
            words.push(text);
        } else {
            in_order &= !f.positional;
            named.push(format!("--{}", f.name));
            named.push(text);
        }
    }
    for (k, v) in object {
        if !cmd.fields().iter().any(|f| f.name == k) {
            named.push(format!("--{k}"));
            named.push(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
    }
    words.extend(named);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn positional_and_named_words() {
        let Some(cmd) = registry::get("github:pr:list") else {
            panic!("github:pr:list is registered");
        };
        let a = parse_words(cmd, &argv(&["github:pr:list", "o/r", "--state", "closed"]));
        let a = a.map_err(|e| e.to_string());
        assert_eq!(a.as_ref().ok().and_then(|a| a.str("repo")), Some("o/r"));
        assert_eq!(a.as_ref().ok().and_then(|a| a.str("state")), Some("closed"));
        assert_eq!(
            a.as_ref().map(|a| a.words_of("state").to_vec()),
            Ok(vec![2, 3])
        );
    }

    #[test]
    fn a_bad_value_names_the_field_and_its_description() {
        let Some(cmd) = registry::get("github:pr:list") else {
            panic!("github:pr:list is registered");
        };
        let e = parse_words(cmd, &argv(&["github:pr:list", "o/r", "--state", "weird"]));
        let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("state"), "{msg}");
        assert!(msg.contains("open"), "{msg}");
        let e = parse_words(cmd, &argv(&["github:pr:list"]));
        let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("missing --repo"), "{msg}");
    }

    #[test]
    fn objects_become_the_same_words() {
        let Some(cmd) = registry::get("fs:write") else {
            panic!("fs:write is registered");
        };
        let mut o = Map::new();
        o.insert("path".into(), Value::String("a.txt".into()));
        o.insert("content".into(), Value::String("-x".into()));
        let w = object_to_words(cmd, &o).map_err(|e| e.to_string());
        assert_eq!(w, Ok(argv(&["a.txt", "--content", "-x"])));
        o.insert("nope".into(), Value::Bool(true));
        let mut w = vec!["fs:write".to_string()];
        w.extend(object_to_words(cmd, &o).unwrap_or_default());
        let e = parse_words(cmd, &w)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("unknown argument --nope"), "{e}");
    }
}
