//! Typed params: definitions, values from `--param k=v`, defaults.

use crate::model::ParamDef;
use serde_json::Value;
use std::collections::BTreeMap;

/// A param's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` / `false`.
    Boolean,
    /// A list of texts (`a,b,c` or a JSON array on the command line).
    StringList,
}

impl ParamType {
    /// The type named `s`.
    pub fn parse(s: &str) -> Option<ParamType> {
        Some(match s {
            "string" => ParamType::String,
            "integer" | "int" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" | "bool" => ParamType::Boolean,
            "string[]" | "list" => ParamType::StringList,
            _ => return None,
        })
    }

    /// The accepted type names.
    pub const NAMES: &str = "string, integer, number, boolean, string[]";

    /// Checks a JSON value (a YAML default) against the type.
    pub fn check(self, v: &Value) -> Result<Value, String> {
        let ok = match (self, v) {
            (ParamType::String, Value::String(_)) => true,
            (ParamType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (ParamType::Number, Value::Number(_)) => true,
            (ParamType::Boolean, Value::Bool(_)) => true,
            (ParamType::StringList, Value::Array(a)) => a.iter().all(Value::is_string),
            _ => false,
        };
        if ok {
            Ok(v.clone())
        } else {
            Err(format!("{v} is not a {}", self.name()))
        }
    }

    /// Reads a value given as text (`--param k=v`).
    pub fn from_text(self, s: &str) -> Result<Value, String> {
        match self {
            ParamType::String => Ok(Value::String(s.to_string())),
            ParamType::Integer => s
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("{s:?} is not an integer")),
            ParamType::Number => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("{s:?} is not a number")),
            ParamType::Boolean => match s.trim() {
                "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(format!("{s:?} is not a boolean (true or false)")),
            },
            ParamType::StringList => {
                let t = s.trim();
                if t.starts_with('[') {
                    let v: Value = serde_json::from_str(t)
                        .map_err(|e| format!("{s:?}: not a JSON list: {e}"))?;
                    self.check(&v)
                } else if t.is_empty() {
                    Ok(Value::Array(Vec::new()))
                } else {
                    Ok(Value::Array(
                        t.split(',')
                            .map(|x| Value::String(x.trim().to_string()))
                            .collect(),
                    ))
                }
            }
        }
    }

    /// The type's name.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::StringList => "string[]",
        }
    }
}

/// The params' values for one plan: defaults, then what the human gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, Value>,
    date: String,
}

/// The name `{{date}}` takes (a param may not use it).
pub const DATE: &str = "date";

impl Params {
    /// Resolves `defs` with `given` (`name → text`) and today's date. Errors
    /// name the param.
    pub fn resolve(
        defs: &[ParamDef],
        given: &BTreeMap<String, String>,
        date: &str,
    ) -> Result<Params, (String, String)> {
        for name in given.keys() {
            if !defs.iter().any(|d| &d.name == name) {
                let known: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
                return Err((
                    name.clone(),
                    format!(
                        "the spec has no param {name:?} (params: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
        let mut values = BTreeMap::new();
        for d in defs {
            let ty = ParamType::parse(&d.kind)
                .ok_or_else(|| (d.name.clone(), format!("unknown type {:?}", d.kind)))?;
            let v = match (given.get(&d.name), &d.default) {
                (Some(t), _) => ty.from_text(t).map_err(|m| (d.name.clone(), m))?,
                (None, Some(v)) => ty.check(v).map_err(|m| (d.name.clone(), m))?,
                (None, None) => {
                    return Err((
                        d.name.clone(),
                        format!(
                            "the param {} has no default: give it with --param {}=VALUE",
                            d.name, d.name
                        ),
                    ));
                }
            };
            values.insert(d.name.clone(), v);
        }
        Ok(Params {
            values,
            date: date.to_string(),
        })
    }

    /// A param's value, or the date for `date`.
    pub fn get(&self, name: &str) -> Option<Value> {
        if name == DATE {
            return Some(Value::String(self.date.clone()));
        }
        self.values.get(name).cloned()
    }

    /// The resolved values (without `date`).
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.values
    }

    /// The date `{{date}}` gives.
    pub fn date(&self) -> &str {
        &self.date
    }
}

/// `k=v` → (k, v).
pub fn parse_assignment(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("--param takes NAME=VALUE, not {s:?}")),
    }
}
