//! The registry: every platform command by name, and schema validation.

use crate::command::PlatformCommand;
use crate::error::PlatformError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

struct Entry {
    command: &'static dyn PlatformCommand,
    /// Compiled on first use (most runs call few commands).
    validator: OnceLock<Option<jsonschema::Validator>>,
}

static REGISTRY: LazyLock<BTreeMap<&'static str, Entry>> = LazyLock::new(|| {
    let namespaces: [&[&'static dyn PlatformCommand]; 3] = [
        crate::fs::COMMANDS,
        crate::http::COMMANDS,
        crate::github::COMMANDS,
    ];
    namespaces
        .iter()
        .flat_map(|n| n.iter())
        .map(|c| {
            (
                c.name(),
                Entry {
                    command: *c,
                    validator: OnceLock::new(),
                },
            )
        })
        .collect()
});

/// Whether `name` looks like a platform command (`namespace:noun[:verb]`):
/// the interpreter asks the registry only for such names.
pub fn is_platform_name(name: &str) -> bool {
    name.contains(':') && !name.contains('/')
}

/// The command called `name`.
pub fn get(name: &str) -> Option<&'static dyn PlatformCommand> {
    if !is_platform_name(name) {
        return None;
    }
    REGISTRY.get(name).map(|e| e.command)
}

/// Every command, by name; only those of `namespace` when given.
pub fn list(namespace: Option<&str>) -> Vec<&'static dyn PlatformCommand> {
    REGISTRY
        .values()
        .map(|e| e.command)
        .filter(|c| namespace.is_none_or(|n| c.namespace() == n))
        .collect()
}

/// The namespaces, sorted.
pub fn namespaces() -> Vec<&'static str> {
    let mut v: Vec<&str> = REGISTRY.values().map(|e| e.command.namespace()).collect();
    v.dedup();
    v
}

/// Validates `instance` against the command's input schema: the first error
/// names the field and repeats its description.
pub fn validate(cmd: &dyn PlatformCommand, instance: &Value) -> Result<(), PlatformError> {
    let compiled;
    let validator = match REGISTRY.get(cmd.name()) {
        Some(e) => e
            .validator
            .get_or_init(|| jsonschema::validator_for(&cmd.input_schema()).ok()),
        None => {
            compiled = jsonschema::validator_for(&cmd.input_schema()).ok();
            &compiled
        }
    };
    let Some(validator) = validator else {
        return Err(PlatformError::Failed(format!(
            "{}: its input schema does not compile",
            cmd.name()
        )));
    };
    let Some(err) = validator.iter_errors(instance).next() else {
        return Ok(());
    };
    let path = err.instance_path().to_string();
    let field = path.trim_start_matches('/').split('/').next().unwrap_or("");
    let f = cmd.fields().iter().find(|f| f.name == field);
    let message = match f {
        Some(f) => {
            let allowed = if f.values.is_empty() {
                String::new()
            } else {
                format!("; one of: {}", f.values.join(", "))
            };
            format!("--{}: {err} ({}{allowed})", f.name, f.description)
        }
        None => {
            let takes: Vec<String> = cmd
                .fields()
                .iter()
                .map(|f| format!("{} ({})", f.name, f.description))
                .collect();
            format!("{err}; it takes: {}", takes.join("; "))
        }
    };
    Err(PlatformError::Usage {
        command: cmd.name().to_string(),
        field: f.map(|f| f.name.to_string()),
        message,
    })
}
