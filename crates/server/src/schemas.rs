//! JSON schemas of the tools' inputs and outputs, written for models.

use serde_json::{Value, json};

fn common_props() -> Value {
    json!({
        "session": {"type": "string", "description": "Run in this session (from session_start): cwd, variables and functions persist between calls. Omit for a fresh one-off shell."},
        "timeout_ms": {"type": "integer", "minimum": 1, "description": "Stop the command after this many milliseconds (capped by the server's maximum). The result then has error.code TIMEOUT and exit_code 124."},
        "input": {"type": "string", "description": "Text fed to the command's stdin."},
        "output_mode": {"type": "string", "enum": ["merged", "stdout", "stderr", "separate"], "description": "merged (default): stdout and stderr interleaved in `output`; stdout / stderr: only that stream; separate: both, in `stdout` and `stderr`."},
        "force": {"type": "boolean", "description": "Run despite a NUDGE (advice that a better way exists). Overrides nothing else."},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Your tags, echoed in the result's meta.tags."},
        "intent": {"description": "The declared goal of this step; echoed back as `intent`."},
        "verify": verify_schema()
    })
}

fn verify_schema() -> Value {
    json!({
        "type": "array",
        "description": "Assertions checked after the run on the same redacted result you are shown (never an oracle on a secret). Bad assertions are refused before anything runs. Results in `verification` {passed, results: [{type, passed, detail, target, actual, message}], warnings}. The command succeeded but an assertion failed: exit_code 1 and error.code VERIFICATION_FAILED; a command that failed keeps its own status.",
        "items": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["not_empty", "contains", "count_gte", "matches_regex", "json_schema", "llm_judge", "exit_code", "file_exists", "file_contains"]},
                "target": {"type": "string", "description": "output (default), stdout, stderr, exit_code, payload.<json path>, context.<scope>.<key>, meta.tags.<k>, file:<path> (read like `cat`)."},
                "expected": {"description": "The text, count, regex, JSON schema, criterion (llm_judge) or exit status. `value` and `pattern` are aliases."},
                "message": {"type": "string", "description": "Shown when the assertion fails."}
            },
            "required": ["type"]
        }
    })
}

/// The envelope's properties (DESIGN "Agent runtime contracts"), added to a
/// result schema `v`: `meta`, `payload`, `provenance` (listed as required when
/// `required`: the exec Result of a worker that died has no envelope).
pub fn add_envelope(v: &mut Value, required: bool) {
    v["properties"]["meta"] = json!({
        "type": "object",
        "description": "What the output is: content_type (application/json when the whole shown output parses as JSON, text/plain otherwise, a binary type for binary output), tags (the request's), created_at (RFC 3339), source (the command that produced it).",
        "properties": {
            "content_type": {"type": "string"},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            "created_at": {"type": "string"},
            "source": {"type": "string"}
        },
        "required": ["content_type", "tags", "created_at", "source"]
    });
    v["properties"]["payload"] = json!({"description": "The parsed JSON of the shown output when meta.content_type is application/json; null when it is not JSON, was truncated or redacted."});
    v["properties"]["provenance"] = json!({
        "type": "array",
        "description": "The steps that produced this result.",
        "items": {"type": "object", "properties": {
            "command": {"type": "string"},
            "args": {"type": "array", "items": {"type": "string"}},
            "timestamp": {"type": ["string", "null"]},
            "duration_ms": {"type": ["integer", "null"]},
            "status": {"type": "string", "enum": ["ok", "error", "skipped"]},
            "label": {"type": ["object", "null"], "description": "The label summary of the step's output."}
        }, "required": ["command", "args", "status"]}
    });
    if let Some(r) = v["required"].as_array_mut().filter(|_| required) {
        for k in ["meta", "payload", "provenance"] {
            if !r.iter().any(|x| x == k) {
                r.push(json!(k));
            }
        }
    }
}

/// `exec`'s input schema.
pub fn exec_input() -> Value {
    let mut props = common_props();
    props["script"] = json!({"type": "string", "description": "A bash script (pipes, redirections, loops, functions, here-docs all work). Common tools run in-process; other programs must be allowed by the policy."});
    json!({"type": "object", "properties": props, "required": ["script"]})
}

/// `run`'s input schema.
pub fn run_input() -> Value {
    let mut props = common_props();
    props["command"] = json!({"type": "string", "description": "The program to run, e.g. \"git\". Not parsed by a shell: no globbing, quoting or variables."});
    props["args"] = json!({"type": "array", "items": {"type": "string"}, "description": "Its arguments, one string each, passed exactly as given."});
    json!({"type": "object", "properties": props, "required": ["command"]})
}

/// JSON-RPC `execute`'s parameters (also `commands.describe`).
pub fn execute_params() -> Value {
    let mut props = common_props();
    props["script"] =
        json!({"type": "string", "description": "A bash script (or use command + args)."});
    props["command"] =
        json!({"type": "string", "description": "A program, run from argv with no parsing."});
    props["args"] = json!({"type": "array", "items": {"type": "string"}});
    props["input"] = json!({"type": "string", "description": "Text fed to stdin (in a pipeline: instead of the previous step's stdout)."});
    json!({"type": "object", "properties": props})
}

fn refusal_schema() -> Value {
    json!({
        "type": ["object", "null"],
        "description": "null, or the refusal that stopped the script (partial output is kept).",
        "properties": {
            "code": {"type": "string", "description": "PARSE_ERROR, NOT_SUPPORTED, COMMAND_NOT_FOUND, COMMAND_NOT_WHITELISTED, FLAG_NOT_ALLOWED, PATH_VIOLATION, BLOCKED, NUDGE, PERMISSION_DENIED, SANDBOX_UNAVAILABLE, FLOW_VIOLATION, APPROVAL_REQUIRED, TIMEOUT, LIMIT_EXCEEDED, EXECUTION_ERROR"},
            "message": {"type": "string"},
            "details": {"type": "object", "description": "command, flag, path, rule, allowed, approval_id; `reason` is \"timeout\" (a time limit: code TIMEOUT) or \"cancelled\" (stopped by the client, job_kill or session_end: code EXECUTION_ERROR, rule \"cancelled\") when the script was stopped."},
            "suggestion": {"type": "string"}
        },
        "required": ["code", "message"]
    })
}

/// The Result object of `exec`/`run` (DESIGN "Contracts"), with the envelope.
pub fn result_output() -> Value {
    let mut v = result_fields();
    add_envelope(&mut v, false);
    v
}

fn result_fields() -> Value {
    json!({
        "type": "object",
        "properties": {
            "schema_version": {"type": "integer"},
            "exit_code": {"type": "integer", "description": "The exit status (126: refused by policy, 124: timeout, 127: not found)."},
            "signal": {"type": ["string", "null"]},
            "output_mode": {"type": "string"},
            "output": {"type": "string", "description": "stdout and stderr interleaved (merged mode)."},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "truncated": {"type": "boolean", "description": "True when output was longer than the cap: the first and last KiB are shown and log_path holds all of it."},
            "total_bytes": {"type": "integer"},
            "total_lines": {"type": "integer"},
            "log_path": {"type": ["string", "null"], "description": "A file with the full output when truncated (read it with cat/sed/grep in a later call)."},
            "duration_ms": {"type": "integer"},
            "label": {"type": "object", "description": "Where the output came from and how secret it is."},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "error": refusal_schema(),
            "stopped": {"type": "string", "enum": ["timeout", "cancelled"], "description": "Present when the script was stopped before it finished: `timeout` (timeout_ms or the config's limit passed) or `cancelled` (the client cancelled the request, or its session ended)."},
            "session": {"type": "string"},
            "intent": {"description": "The request's intent, echoed."},
            "verification": {"type": "object", "description": "{passed, results: [{type, passed, detail, target, actual, message}], warnings} when the request had `verify`."}
        },
        "required": ["schema_version", "exit_code", "truncated", "total_bytes", "total_lines", "duration_ms", "warnings", "error"]
    })
}

/// `session_start` / `session_update` input.
pub fn session_start_input(update: bool) -> Value {
    let mut v = json!({
        "type": "object",
        "properties": {
            "cwd": {"type": "string", "description": "Working directory (an existing directory)."},
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Environment variables to set (exported)."}
        }
    });
    if update {
        v["properties"]["session"] = json!({"type": "string", "description": "The session id."});
        v["required"] = json!(["session"]);
    }
    v
}

/// `session_start` / `session_update` output.
pub fn session_output() -> Value {
    json!({"type": "object", "properties": {"session": {"type": "string"}, "cwd": {"type": "string"}}, "required": ["session"]})
}

/// `session_end` input.
pub fn session_end_input() -> Value {
    json!({"type": "object", "properties": {"session": {"type": "string", "description": "The session id."}}, "required": ["session"]})
}

/// `session_end` output.
pub fn session_end_output() -> Value {
    json!({"type": "object", "properties": {"session": {"type": "string"}, "ended": {"type": "boolean"}}, "required": ["session", "ended"]})
}

/// `job_start` input.
pub fn job_start_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "script": {"type": "string", "description": "A bash script to run in the background."},
            "command": {"type": "string", "description": "Or a program, run from argv (with args)."},
            "args": {"type": "array", "items": {"type": "string"}},
            "session": {"type": "string", "description": "Copy cwd and env from this session; the job is killed when the session ends."},
            "force": {"type": "boolean", "description": "Run despite a nudge (advisory refusals only; never the blocklist or the policy)."}
        }
    })
}

fn job_info_props() -> Value {
    json!({
        "job_id": {"type": "string"},
        "pid": {"type": ["integer", "null"], "description": "The host pid of the sandbox's pid 1 for the external program the job started most recently (a signal to it reaches that program's whole tree; it may have exited since). null while the job has run only in-process commands (see in_process)."},
        "in_process": {"type": "boolean", "description": "True when the job has not started an external program (so far): it runs inside safesh and has no pid of its own."},
        "status": {"type": "string", "enum": ["running", "exited", "killed"]},
        "exit_code": {"type": ["integer", "null"]},
        "signal": {"type": ["string", "null"]},
        "runtime_ms": {"type": "integer"},
        "command": {"type": "string"},
        "session": {"type": ["string", "null"]},
        "output_bytes": {"type": "integer"},
        "log_path": {"type": "string"}
    })
}

/// A job's info (job_start, job_kill output).
pub fn job_info_output() -> Value {
    json!({"type": "object", "properties": job_info_props(), "required": ["job_id", "status"]})
}

/// `job_list` output.
pub fn job_list_output() -> Value {
    json!({"type": "object", "properties": {"jobs": {"type": "array", "items": {"type": "object", "properties": job_info_props()}}}, "required": ["jobs"]})
}

/// `job_output` / `job_follow` input.
pub fn job_output_input(follow: bool) -> Value {
    let mut v = json!({
        "type": "object",
        "properties": {
            "job_id": {"type": "string"},
            "session": {"type": "string", "description": "The session the job was started from (job_start's `session`, or the exec whose `cmd &` made it); omit for a job started without one. A job is only found from where it was started."},
            "since": {"type": "integer", "minimum": 0, "description": "Byte offset to read from: 0 first, then the previous call's next_offset."}
        },
        "required": ["job_id"]
    });
    if follow {
        v["properties"]["timeout_ms"] = json!({"type": "integer", "minimum": 1, "description": "Longest wait (capped by the server's maximum)."});
    } else {
        v["properties"]["max_bytes"] = json!({"type": "integer", "minimum": 1, "description": "Most bytes to return (default: the output cap)."});
    }
    v
}

/// `job_output` output.
pub fn job_output_output() -> Value {
    let mut props = job_info_props();
    props["data"] = json!({"type": "string", "description": "New output since `since`."});
    props["since"] = json!({"type": "integer"});
    props["next_offset"] = json!({"type": "integer", "description": "Pass as `since` next time."});
    props["total_bytes"] = json!({"type": "integer"});
    props["more"] = json!({"type": "boolean", "description": "More output is already available past next_offset."});
    json!({"type": "object", "properties": props, "required": ["job_id", "data", "next_offset", "status"]})
}

/// `job_follow` output.
pub fn job_follow_output() -> Value {
    let mut props = job_info_props();
    props["output"] = json!({"type": "string"});
    props["truncated"] = json!({"type": "boolean"});
    props["next_offset"] = json!({"type": "integer"});
    props["error"] = refusal_schema();
    json!({"type": "object", "properties": props, "required": ["job_id", "status", "output", "next_offset"]})
}

/// `job_kill` input.
pub fn job_kill_input() -> Value {
    json!({"type": "object", "properties": {"job_id": {"type": "string"}, "session": {"type": "string", "description": "The session the job was started from (job_start's `session`, or the exec whose `cmd &` made it); omit for a job started without one. A job is only found from where it was started."}, "signal": {"type": "string", "description": "TERM (default), KILL, INT, HUP, …"}}, "required": ["job_id"]})
}

/// `job_list` input.
pub fn empty_input() -> Value {
    json!({"type": "object", "properties": {"session": {"type": "string", "description": "List this session's jobs; omit for the jobs started without a session."}}})
}
