//! The command catalogue for `commands.list` / `commands.describe` (JSON-RPC),
//! `commands_list` / `commands_describe` (MCP) and `safesh commands [NAME]`:
//! the shell builtins, the in-process utilities, the platform commands (with
//! their own schemas) and the external programs the config allows (with their
//! allowed subcommands and flags). Each says whether this session may call it
//! (`callable`) and, when not, why (`reason`: the policy's refusal code and
//! message), decided by the same policy function that decides every command.

use rmcp::model::Tool;
use safesh_policy::config::{Allow, Config, Network};
use safesh_policy::{Decision, Kind, Policy, Refusal, Request, Resolver};
use serde_json::{Value, json};
use std::path::Path;

/// One-line descriptions of the common commands (others get a generic line).
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("awk", "pattern scanning and text processing language"),
    ("base64", "encode or decode base64"),
    ("basename", "strip directory and suffix from a path"),
    ("cat", "concatenate files to stdout"),
    ("cd", "change the working directory"),
    ("chmod", "change file mode bits"),
    ("column", "format lists and tables in columns"),
    ("comm", "compare two sorted files line by line"),
    ("cp", "copy files and directories"),
    ("cut", "select fields or bytes from each line"),
    ("date", "print or format the date and time"),
    ("diff", "compare files line by line"),
    ("dirname", "strip the last component of a path"),
    ("du", "estimate file space usage"),
    ("echo", "print arguments"),
    (
        "env",
        "print the environment or run a command with a changed one",
    ),
    ("expand", "convert tabs to spaces"),
    ("export", "mark variables for export to commands"),
    ("find", "search a directory tree"),
    ("fold", "wrap lines to a width"),
    ("grep", "print lines matching a pattern"),
    ("head", "print the first lines of files"),
    ("join", "join lines of two sorted files on a common field"),
    ("jq", "JSON processor"),
    ("ln", "make links between files"),
    ("ls", "list directory contents"),
    ("md5sum", "compute MD5 checksums"),
    ("mkdir", "make directories"),
    ("mktemp", "create a temporary file or directory"),
    ("mv", "move or rename files"),
    ("nl", "number lines"),
    ("paste", "merge lines of files"),
    ("printf", "format and print data"),
    ("pwd", "print the working directory"),
    ("read", "read a line from stdin into variables"),
    ("readlink", "print the target of a symbolic link"),
    ("realpath", "print the resolved absolute path"),
    ("rev", "reverse each line"),
    ("rm", "remove files or directories"),
    ("rmdir", "remove empty directories"),
    ("sed", "stream editor"),
    ("seq", "print a sequence of numbers"),
    ("sha1sum", "compute SHA-1 checksums"),
    ("sha224sum", "compute SHA-224 checksums"),
    ("sha256sum", "compute SHA-256 checksums"),
    ("sha384sum", "compute SHA-384 checksums"),
    ("sha512sum", "compute SHA-512 checksums"),
    ("sleep", "wait for a number of seconds"),
    ("sort", "sort lines of text"),
    ("split", "split a file into pieces"),
    ("stat", "display file status"),
    ("tac", "print lines in reverse order"),
    ("tail", "print the last lines of files"),
    (
        "context",
        "the shared context store: context get|set|delete|list SCOPE KEY [VALUE]",
    ),
    (
        "history",
        "the persistent history of scripts run through safesh (one JSON line each)",
    ),
    ("tee", "copy stdin to files and stdout"),
    ("test", "evaluate a conditional expression"),
    ("touch", "change file timestamps or create empty files"),
    ("tr", "translate or delete characters"),
    ("tree", "list a directory tree"),
    ("unexpand", "convert blanks to tabs"),
    ("uniq", "report or omit repeated lines"),
    ("wc", "count lines, words and bytes"),
    ("xargs", "build and run commands from stdin"),
];

/// Every builtin and utility: `(name, kind)`, sorted by name.
pub fn all() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&str, &str)> = safesh_core::builtins::names()
        .map(|n| (n, "builtin"))
        .collect();
    for n in safesh_core::registry::names() {
        if !v.iter().any(|(m, _)| *m == n) {
            v.push((n, "utility"));
        }
    }
    v.sort_unstable();
    v
}

/// The one-line description of `name`.
pub fn description(name: &str, kind: &str) -> String {
    match DESCRIPTIONS.iter().find(|(n, _)| *n == name) {
        Some((_, d)) => (*d).to_string(),
        None if kind == "builtin" => format!("shell builtin `{name}` (as in bash)"),
        None => format!("in-process utility `{name}` (GNU-compatible, C locale)"),
    }
}

/// Inner commands are not part of a catalogue entry: nothing to resolve.
struct NoInner;

impl Resolver for NoInner {
    fn kind(&self, _name: &str) -> Kind {
        Kind::NotFound
    }
    fn check_script(&self, _text: &str) -> Option<Refusal> {
        None
    }
}

fn reason(r: &Refusal) -> Value {
    json!({"code": r.code.as_str(), "message": r.message, "suggestion": r.suggestion})
}

/// The policy's verdict on calling `argv` as `kind`: `None` when allowed.
fn refusal(policy: &Policy, argv: &[String], kind: Kind) -> Option<Refusal> {
    let cwd = policy.config().base_dir.clone();
    let req = Request {
        argv,
        cwd: &cwd,
        kind,
        force: false,
        cwd_known: true,
    };
    match policy.decide(&req, &NoInner) {
        Decision::Refuse(r) => Some(r),
        Decision::Allow | Decision::NotFound => None,
    }
}

fn callable(v: &mut Value, why: Option<Value>) {
    v["callable"] = json!(why.is_none());
    if let Some(r) = why {
        v["reason"] = r;
    }
}

/// Why platform command `cmd` cannot run here, if it cannot: the policy's
/// verdict, the network (off), a missing token.
fn platform_reason(
    policy: &Policy,
    cmd: &dyn safesh_platform::PlatformCommand,
    env: &dyn Fn(&str) -> bool,
) -> Option<Value> {
    if let Some(r) = refusal(policy, &[cmd.name().to_string()], Kind::Utility) {
        return Some(reason(&r));
    }
    let config = policy.config();
    let ns = cmd.namespace();
    if matches!(ns, "http" | "github") {
        let profile = policy.profile(cmd.name(), Path::new(cmd.name()), &[], &config.base_dir);
        if profile.network == Network::Off {
            return Some(json!({
                "code": "PERMISSION_DENIED",
                "message": format!("{}: the network is off ([sandbox] network = false)", cmd.name()),
                "suggestion": "ask the human to allow hosts in [sandbox] network (or [platforms.http] allowed_domains)",
            }));
        }
    }
    for c in cmd.credentials() {
        let var = credential_var(config, c);
        if !env(&var) {
            return Some(json!({
                "code": "EXECUTION_ERROR",
                "message": format!("{}: the token variable {var} is not set", cmd.name()),
                "suggestion": format!("ask the human to set {var} in safesh's environment, or to name another variable with [platforms.{}] {}", c.platform, c.key),
            }));
        }
    }
    None
}

/// The variable a credential is read from with this config.
fn credential_var(config: &Config, c: &safesh_platform::Credential) -> String {
    safesh_core::platform_host::settings_of(config, c.platform)
        .token_env
        .unwrap_or_else(|| c.default_env.to_string())
}

fn is_set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

fn platform_entry(policy: &Policy, cmd: &dyn safesh_platform::PlatformCommand) -> Value {
    let mut v = json!({
        "name": cmd.name(),
        "kind": "platform",
        "namespace": cmd.namespace(),
        "description": cmd.description(),
        "risk": cmd.risk().as_str(),
        "params_schema": cmd.input_schema(),
    });
    callable(&mut v, platform_reason(policy, cmd, &is_set));
    v
}

fn external_entries(policy: &Policy) -> Vec<Value> {
    let config = policy.config();
    let mut out = Vec::new();
    for r in &config.commands {
        let subs = match &r.allow {
            Some(Allow::All) => None,
            Some(Allow::Subcommands(s)) => Some(s.clone()),
            _ => continue,
        };
        let name = r.key.clone();
        let mut v = json!({
            "name": name,
            "kind": "external",
            "description": format!("external program `{name}`, run in the sandbox after the policy check"),
            "params_schema": crate::schemas::execute_params(),
            "subcommands": subs,
            "deny_flags": r.deny_flags,
            "require_flags": r.require_flags,
        });
        let why = match policy.resolve_program(&name, &config.base_dir) {
            None => Some(json!({
                "code": "COMMAND_NOT_FOUND",
                "message": format!("{name}: not found on the trusted PATH ([sandbox] path)"),
            })),
            Some(p) => {
                let mut argv = vec![name.clone()];
                argv.extend(subs.iter().flatten().next().cloned());
                argv.extend(r.require_flags.iter().cloned());
                refusal(policy, &argv, Kind::External(p)).map(|r| reason(&r))
            }
        };
        callable(&mut v, why);
        out.push(v);
    }
    out
}

/// `commands.list {namespace?}`: everything this session may call (and what
/// it may not, with the reason). With `namespace`, only that platform's
/// commands (`builtin`, `utility` and `external` name the other kinds).
pub fn list(policy: &Policy, namespace: Option<&str>) -> Value {
    let mut items: Vec<Value> = Vec::new();
    let want = |kind: &str| namespace.is_none() || namespace == Some(kind);
    for (n, k) in all() {
        if !want(k) {
            continue;
        }
        let mut v = json!({"name": n, "kind": k, "description": description(n, k), "params_schema": crate::schemas::execute_params()});
        let kind = if k == "builtin" {
            Kind::Builtin
        } else {
            Kind::Utility
        };
        callable(
            &mut v,
            refusal(policy, &[n.to_string()], kind).map(|r| reason(&r)),
        );
        items.push(v);
    }
    let platform_ns = namespace.filter(|n| !matches!(*n, "builtin" | "utility" | "external"));
    if namespace.is_none() || platform_ns.is_some() {
        for c in safesh_platform::list(platform_ns) {
            items.push(platform_entry(policy, c));
        }
    }
    if want("external") {
        items.extend(external_entries(policy));
    }
    json!({
        "commands": items,
        "namespaces": safesh_platform::namespaces(),
    })
}

/// `commands.describe {name}`: the command's own schema, description, risk,
/// credentials and an example; `None` when there is no such command.
pub fn describe(policy: &Policy, name: &str) -> Option<Value> {
    if let Some(cmd) = safesh_platform::get(name) {
        let config = policy.config();
        let credentials: Vec<Value> = cmd
            .credentials()
            .iter()
            .map(|c| {
                let var = credential_var(config, c);
                json!({
                    "platform": c.platform,
                    "config_key": format!("platforms.{}.{}", c.platform, c.key),
                    "env": var,
                    "set": is_set(&var),
                })
            })
            .collect();
        let mut v = platform_entry(policy, cmd);
        v["input_schema"] = cmd.input_schema();
        v["output_schema"] = cmd.output_schema();
        v["credentials"] = json!(credentials);
        v["example"] = json!(cmd.example());
        v["content_type"] = json!("application/json");
        v["run_with"] = json!(format!(
            "a script: `{}`, or JSON-RPC execute {{\"command\": \"{}\", \"args\": {{…}}}} with args as in input_schema",
            cmd.example(),
            cmd.name()
        ));
        return Some(v);
    }
    if let Some((n, k)) = all().into_iter().find(|(n, _)| *n == name) {
        let kind = if k == "builtin" {
            Kind::Builtin
        } else {
            Kind::Utility
        };
        let mut v = json!({
            "name": n,
            "kind": k,
            "description": description(n, k),
            "run_with": "execute {\"command\": NAME, \"args\": [...]} or execute {\"script\": \"NAME ARGS…\"}",
            "params_schema": crate::schemas::execute_params(),
        });
        callable(
            &mut v,
            refusal(policy, &[n.to_string()], kind).map(|r| reason(&r)),
        );
        return Some(v);
    }
    external_entries(policy)
        .into_iter()
        .find(|v| v["name"] == json!(name))
        .map(|mut v| {
            v["run_with"] = json!("execute {\"command\": NAME, \"args\": [...]} or execute {\"script\": \"NAME ARGS…\"}");
            v
        })
}

/// The MCP tools of the catalogue.
pub fn tools() -> Vec<Tool> {
    let obj = |v: Value| match v {
        Value::Object(m) => std::sync::Arc::new(m),
        _ => std::sync::Arc::new(serde_json::Map::new()),
    };
    vec![
        Tool::new(
            "commands_list",
            "List every command this session can use: shell builtins, in-process utilities, platform commands (namespace:noun[:verb], e.g. fs:read, http:get, github:pr:list, each with its own input schema and risk) and the external programs the config allows (with allowed subcommands and flags). Each has `callable` and, when false, a `reason` (the policy's refusal code and message). Pass `namespace` (fs, http, github, builtin, utility, external) to narrow it.",
            obj(json!({
                "type": "object",
                "properties": {"namespace": {"type": "string", "description": "Only this namespace or kind (fs, http, github, builtin, utility, external)."}},
            })),
        )
        .with_raw_output_schema(obj(json!({
            "type": "object",
            "properties": {"commands": {"type": "array", "items": {"type": "object"}}, "namespaces": {"type": "array", "items": {"type": "string"}}},
            "required": ["commands"]
        }))),
        Tool::new(
            "commands_describe",
            "Describe one command: its description, input and output JSON Schemas (platform commands), risk (read-only, write, network, destructive), the credentials it needs (the variable, never its value), an example and whether it is callable here. Platform commands run from exec scripts (`github:pr:list o/r --state open | jq -r '.[].title'`): arguments as `--field value`, x-positional fields as plain words.",
            obj(json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The command's name (e.g. fs:read, grep, git)."}},
                "required": ["name"]
            })),
        )
        .with_raw_output_schema(obj(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))),
    ]
}

/// `commands.list` / `commands_list` parameters.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only this namespace or kind.
    #[serde(default)]
    pub namespace: Option<String>,
}

/// `commands.describe` / `commands_describe` parameters.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescribeParams {
    /// The command's name.
    pub name: String,
}

impl crate::Server {
    /// `commands.list`.
    pub fn commands_list(&self, p: ListParams) -> Value {
        list(&self.settings.policy, p.namespace.as_deref())
    }

    /// `commands.describe`.
    pub fn commands_describe(&self, p: DescribeParams) -> Result<Value, crate::error::ServerError> {
        describe(&self.settings.policy, &p.name).ok_or_else(|| {
            crate::error::ServerError::BadParams(format!(
                "no command named {:?}; commands.list shows them",
                p.name
            ))
        })
    }
}

/// The words a JSON object of arguments gives a platform command; an error
/// (-32602) for any other command.
pub fn object_args(
    command: &str,
    object: &serde_json::Map<String, Value>,
) -> Result<Vec<String>, crate::error::ServerError> {
    let Some(cmd) = safesh_platform::get(command) else {
        return Err(crate::error::ServerError::BadParams(format!(
            "`args` is an array of strings; an object is accepted only for platform commands (namespace:noun, e.g. github:pr:list), not {command:?}"
        )));
    };
    safesh_platform::object_to_words(cmd, object)
        .map_err(|e| crate::error::ServerError::BadParams(e.to_string()))
}
