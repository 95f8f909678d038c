//! The host functions: every capability a script has, each one bash command run
//! through the session ([`Session::code_exec`]), and the script's label.
//!
//! The label is coarse but sound: `acc` is the join of the labels of everything
//! the script has received from the host (file contents, program output, HTTP
//! replies, `$session.vars`). A value the script hands back to the host carries
//! `acc` — unless it is exactly a string literal of the script's source, which
//! the agent wrote (an argv word, a path, a URL typed in the code).

use crate::literals::Literals;
use safesh_core::code_host::CodeValue;
use safesh_core::error::{ErrorCode, Refusal};
use safesh_core::{ExecOutcome, InputSource, OutputTarget, Session};
use safesh_label::Label;
use serde_json::{Value, json};
use std::time::Instant;

/// What the host functions share during one run.
pub(crate) struct HostState {
    /// The session every host command runs in.
    pub session: Session,
    /// The join of everything the script has read.
    pub acc: Label,
    /// The source's string literals (the agent's words).
    pub literals: Literals,
    /// Where printed output goes.
    pub target: OutputTarget,
    /// Output of the prints, gathered for the outcome (captured targets).
    pub printed: Printed,
    /// Prints not yet flushed: (stderr?, text, label).
    pub pending: Vec<(bool, String, Label)>,
    /// Bytes pending.
    pub pending_bytes: usize,
    /// The run's deadline.
    pub deadline: Option<Instant>,
    /// The refusal that ends the run whatever the script does (an output limit).
    pub fatal: Option<Refusal>,
    /// Warnings of the host commands.
    pub warnings: Vec<String>,
    /// `$session.vars` as JSON text, and its label.
    pub vars: (String, Label),
    /// Whether the script read `$session.vars` (its label joins `acc` then).
    pub vars_read: bool,
    /// Bytes a captured host result may have (`[limits] string_bytes`).
    pub capture_cap: u64,
    /// Files open for `safesh/streams`, by handle.
    pub readers: Readers,
}

/// The files a script has open for streaming (`stream.open` … `stream.close`).
#[derive(Default)]
pub(crate) struct Readers {
    open: std::collections::HashMap<u64, Reader>,
    next: u64,
}

/// One open file: its reader and the bytes of a UTF-8 character cut by the
/// last chunk.
struct Reader {
    file: std::io::BufReader<std::fs::File>,
    carry: Vec<u8>,
}

/// At most this many files open at once (a script that never closes its
/// streams runs out here, not out of descriptors).
const MAX_READERS: usize = 64;
/// The largest chunk one `stream.read` returns.
const MAX_CHUNK: u64 = 16 << 20;

/// Output gathered from the print commands.
#[derive(Default)]
pub(crate) struct Printed {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_total: u64,
    pub stderr_total: u64,
    pub truncated: bool,
    pub label: Label,
}

/// Flush prints past this many bytes (and before every other host call).
const FLUSH_BYTES: usize = 64 * 1024;

/// A host error: a refusal the script gets as a `SafeshError`.
type HostResult = Result<Value, Refusal>;

impl HostState {
    /// The label of a value the script passes: the agent's for a literal.
    fn label_of(&self, text: &str) -> Label {
        if self.literals.contains(text) {
            Label::agent()
        } else {
            Label::agent().join(&self.acc)
        }
    }

    fn value(&self, text: &str) -> CodeValue {
        CodeValue::new(text, self.label_of(text))
    }

    /// Data (file contents, a request body): always carries what was read.
    fn data(&self, text: &str) -> CodeValue {
        CodeValue::new(text, Label::agent().join(&self.acc))
    }

    fn remaining_ms(&self) -> Result<Option<u64>, Refusal> {
        match self.deadline {
            None => Ok(Some(0)),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now()).as_millis() as u64;
                if left == 0 {
                    Err(timeout_refusal())
                } else {
                    Ok(Some(left))
                }
            }
        }
    }

    /// Runs a host command with its output captured.
    fn run(
        &mut self,
        script: &str,
        values: &[CodeValue],
        input: Option<CodeValue>,
    ) -> Result<ExecOutcome, Refusal> {
        self.flush()?;
        let timeout = self.remaining_ms()?;
        let (script, values) = match input {
            // stdin from the script: `printf %s "$N" | …`, labeled like any value.
            Some(v) => {
                let mut all = values.to_vec();
                all.push(v);
                (
                    format!(
                        "printf %s \"$__safesh_code_{}\" | {{ {script}\n}}",
                        all.len()
                    ),
                    all,
                )
            }
            None => (script.to_string(), values.to_vec()),
        };
        let o = self.session.code_exec(
            &script,
            &values,
            InputSource::Empty,
            OutputTarget::Separate {
                cap: self.capture_cap,
            },
            timeout,
        );
        self.acc.join_assign(&o.label);
        self.acc.join_assign(&o.status_label);
        self.warnings.extend(o.warnings.iter().cloned());
        if let Some(r) = &o.error {
            // The refusal's text may quote the command's words: the script holds
            // it from now on, so its label joins what the script has read.
            self.acc.join_assign(&o.error_label);
            let r = r.clone();
            return Err(r);
        }
        if o.truncated {
            return Err(Refusal::limit(
                "a host result in bytes",
                self.capture_cap,
                "string_bytes",
            ));
        }
        Ok(o)
    }

    /// Writes the pending prints with their labels, through the session (the
    /// face's sink redacts and labels them as bash output).
    pub(crate) fn flush(&mut self) -> Result<(), Refusal> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let mut script = String::new();
        let mut values = Vec::with_capacity(pending.len());
        for (i, (err, text, label)) in pending.into_iter().enumerate() {
            script.push_str(&format!(
                "printf %s \"$__safesh_code_{}\"{}\n",
                i + 1,
                if err { " >&2" } else { "" }
            ));
            values.push(CodeValue::new(text, label));
        }
        let timeout = match self.deadline {
            None => Some(0),
            // Output already produced is written even at the deadline.
            Some(d) => {
                Some((d.saturating_duration_since(Instant::now()).as_millis() as u64).max(1000))
            }
        };
        let o = self.session.code_exec(
            &script,
            &values,
            InputSource::Empty,
            self.target.clone(),
            timeout,
        );
        let p = &mut self.printed;
        p.stdout.extend_from_slice(&o.stdout);
        p.stderr.extend_from_slice(&o.stderr);
        p.stdout_total += o.stdout_total;
        p.stderr_total += o.stderr_total;
        p.truncated |= o.truncated;
        p.label.join_assign(&o.label);
        if let Some(r) = o.error {
            self.fatal.get_or_insert(r.clone());
            return Err(r);
        }
        Ok(())
    }

    /// Queues printed text with the script's label now.
    fn print(&mut self, stderr: bool, text: String) -> Result<(), Refusal> {
        if let Some(r) = &self.fatal {
            return Err(r.clone());
        }
        self.pending_bytes += text.len();
        let label = Label::agent().join(&self.acc);
        match self.pending.last_mut() {
            Some((e, t, l)) if *e == stderr && *l == label => t.push_str(&text),
            _ => self.pending.push((stderr, text, label)),
        }
        if self.pending_bytes >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// One host call: `op` with JSON arguments; the JSON answer the prelude reads.
    pub(crate) fn call(&mut self, op: &str, args: &str) -> String {
        let args: Value = serde_json::from_str(args).unwrap_or(Value::Null);
        let r = self.dispatch(op, &args);
        match r {
            Ok(v) => json!({ "ok": v }).to_string(),
            Err(r) => json!({ "err": refusal_json(&r) }).to_string(),
        }
    }

    fn dispatch(&mut self, op: &str, a: &Value) -> HostResult {
        let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let b = |k: &str| a.get(k).and_then(Value::as_bool).unwrap_or(false);
        match op {
            "print" => {
                self.print(s("stream") == "stderr", s("text"))?;
                Ok(Value::Null)
            }
            "fs.read" => {
                let o = self.run(
                    "command cat -- \"$__safesh_code_1\"",
                    &[self.value(&s("path"))],
                    None,
                )?;
                check_status(&o, "read")?;
                Ok(Value::String(
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                ))
            }
            "fs.cat" => {
                let paths: Vec<String> = strings(a.get("paths"));
                if paths.is_empty() {
                    return Ok(Value::String(String::new()));
                }
                let values: Vec<CodeValue> = paths.iter().map(|p| self.value(p)).collect();
                let o = self.run(
                    &format!("command cat -- {}", var_words(values.len(), 1)),
                    &values,
                    None,
                )?;
                check_status(&o, "read")?;
                Ok(Value::String(
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                ))
            }
            "fs.read_range" => {
                let offset = a.get("offset").and_then(Value::as_u64).unwrap_or(0);
                let length = a.get("length").and_then(Value::as_u64).unwrap_or(1 << 20);
                let values = [self.value(&s("path"))];
                let o = self.run(
                    &format!(
                        "command tail -c +{} -- \"$__safesh_code_1\" | command head -c {length}",
                        offset + 1
                    ),
                    &values,
                    None,
                )?;
                check_status(&o, "read")?;
                // A chunk may end inside a UTF-8 character: keep whole ones only.
                let bytes = &o.stdout;
                let whole = utf8_prefix(bytes, (bytes.len() as u64) < length);
                Ok(json!({
                    "text": String::from_utf8_lossy(&bytes[..whole]),
                    "bytes": whole,
                }))
            }
            "stream.open" => {
                self.flush()?;
                if self.readers.open.len() >= MAX_READERS {
                    return Err(Refusal::new(
                        ErrorCode::LimitExceeded,
                        format!("more than {MAX_READERS} streams open at once"),
                    )
                    .rule("limits.code_streams")
                    .suggest("finish (or break out of) a stream before opening the next"));
                }
                let r = self.session.code_open_read(&s("path"))?;
                // What the stream will yield is the file's: the script holds it.
                self.acc.join_assign(&r.label);
                let id = self.readers.next;
                self.readers.next += 1;
                self.readers.open.insert(
                    id,
                    Reader {
                        file: std::io::BufReader::with_capacity(64 * 1024, r.file),
                        carry: Vec::new(),
                    },
                );
                Ok(json!(id))
            }
            "stream.read" => {
                use std::io::Read;
                let id = a.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX);
                let want = a
                    .get("length")
                    .and_then(Value::as_u64)
                    .unwrap_or(1 << 20)
                    .clamp(1, MAX_CHUNK.min(self.capture_cap.max(1)));
                self.remaining_ms()?;
                let Some(r) = self.readers.open.get_mut(&id) else {
                    return Err(Refusal::new(
                        ErrorCode::ExecutionError,
                        "the stream is closed",
                    ));
                };
                let mut buf = std::mem::take(&mut r.carry);
                let had = buf.len();
                (&mut r.file)
                    .take(want)
                    .read_to_end(&mut buf)
                    .map_err(|e| Refusal::new(ErrorCode::ExecutionError, format!("read: {e}")))?;
                let eof = (buf.len() - had) < want as usize;
                // A chunk may end inside a UTF-8 character: the rest waits.
                let whole = utf8_prefix(&buf, eof);
                r.carry = buf.split_off(whole);
                Ok(json!({ "text": String::from_utf8_lossy(&buf), "eof": eof }))
            }
            "stream.close" => {
                let id = a.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX);
                self.readers.open.remove(&id);
                Ok(Value::Null)
            }
            "fs.write" => {
                let redirect = if b("append") { ">>" } else { ">" };
                let values = [self.value(&s("path")), self.data(&s("data"))];
                let o = self.run(
                    &format!("printf %s \"$__safesh_code_2\" {redirect} \"$__safesh_code_1\""),
                    &values,
                    None,
                )?;
                check_status(&o, "write")?;
                Ok(Value::Null)
            }
            "fs.copy" => self.simple(
                if b("recursive") {
                    "command cp -R --"
                } else {
                    "command cp --"
                },
                &[s("from"), s("to")],
                "copy",
            ),
            "fs.move" => self.simple("command mv --", &[s("from"), s("to")], "move"),
            "fs.remove" => self.simple(
                if b("recursive") {
                    "command rm -r --"
                } else {
                    "command rm --"
                },
                &[s("path")],
                "remove",
            ),
            "fs.mkdir" => self.simple(
                if b("recursive") {
                    "command mkdir -p --"
                } else {
                    "command mkdir --"
                },
                &[s("path")],
                "mkdir",
            ),
            "fs.exists" => {
                let o = self.run(
                    "test -e \"$__safesh_code_1\" || test -L \"$__safesh_code_1\"",
                    &[self.value(&s("path"))],
                    None,
                )?;
                Ok(Value::Bool(o.exit_code == 0))
            }
            "fs.stat" => {
                let o = self.run(
                    "command stat -c '%s %Y %a %F' -- \"$__safesh_code_1\"",
                    &[self.value(&s("path"))],
                    None,
                )?;
                check_status(&o, "stat")?;
                let text = String::from_utf8_lossy(&o.stdout);
                let mut it = text.trim_end().splitn(4, ' ');
                let size: u64 = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                let mtime: i64 = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                let mode = it
                    .next()
                    .and_then(|x| u32::from_str_radix(x, 8).ok())
                    .unwrap_or(0);
                let kind = it.next().unwrap_or("");
                Ok(json!({
                    "size": size,
                    "mtime": mtime * 1000,
                    "mode": mode,
                    "isFile": kind.contains("regular"),
                    "isDirectory": kind == "directory",
                    "isSymlink": kind == "symbolic link",
                }))
            }
            "fs.glob" => {
                // A subshell: nullglob/globstar/IFS stay the session's own. One
                // printf for all the names (no match: one empty name, dropped).
                let o = self.run(
                    "( IFS=; shopt -s nullglob globstar; printf '%s\\0' $__safesh_code_1 )",
                    &[self.value(&s("pattern"))],
                    None,
                )?;
                check_status(&o, "glob")?;
                let mut names: Vec<String> = split_nul(&o.stdout);
                names.sort();
                Ok(json!(names))
            }
            "fs.walk" => {
                let o = self.run(
                    "command find \"$__safesh_code_1\" -printf '%y %p\\0'",
                    &[self.value(&s("root"))],
                    None,
                )?;
                check_status(&o, "walk")?;
                let entries: Vec<Value> = split_nul(&o.stdout)
                    .into_iter()
                    .filter_map(|e| {
                        let (kind, path) = e.split_once(' ')?;
                        let name = std::path::Path::new(path)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| path.to_string());
                        Some(json!({
                            "path": path,
                            "name": name,
                            "isFile": kind == "f",
                            "isDirectory": kind == "d",
                            "isSymlink": kind == "l",
                        }))
                    })
                    .collect();
                Ok(Value::Array(entries))
            }
            "cmd" => {
                let argv = strings(a.get("argv"));
                if argv.is_empty() {
                    return Err(Refusal::new(
                        ErrorCode::ExecutionError,
                        "$.cmd needs a program name",
                    ));
                }
                let values: Vec<CodeValue> = argv.iter().map(|w| self.value(w)).collect();
                let input = a.get("input").and_then(Value::as_str).map(|t| self.data(t));
                let o = self.run(&var_words(values.len(), 1), &values, input)?;
                Ok(command_result(&o))
            }
            "sh" => {
                // The literal parts are the agent's script; each value is one
                // quoted word ("$__safesh_code_N"), never code.
                let parts = strings(a.get("parts"));
                let vals = strings(a.get("values"));
                let mut script = String::new();
                let mut values = Vec::new();
                for (i, part) in parts.iter().enumerate() {
                    script.push_str(part);
                    if let Some(v) = vals.get(i) {
                        values.push(self.data(v));
                        script.push_str(&format!("\"$__safesh_code_{}\"", values.len()));
                    }
                }
                let input = a.get("input").and_then(Value::as_str).map(|t| self.data(t));
                let o = self.run(&script, &values, input)?;
                Ok(command_result(&o))
            }
            "fetch" => self.fetch(a),
            "exec_check" => {
                let text = s("text");
                let label = self.label_of(&text);
                self.flush()?;
                self.session.code_commit_exec(&s("what"), &label)?;
                Ok(Value::Null)
            }
            "session.cwd" => Ok(Value::String(
                self.session.cwd().to_string_lossy().into_owned(),
            )),
            "session.env" => {
                let o = self.run(
                    "command printenv -- \"$__safesh_code_1\"",
                    &[self.value(&s("name"))],
                    None,
                )?;
                if o.exit_code != 0 {
                    return Ok(Value::Null);
                }
                let mut v = String::from_utf8_lossy(&o.stdout).into_owned();
                if v.ends_with('\n') {
                    v.pop();
                }
                Ok(Value::String(v))
            }
            "session.vars.get" => {
                if !self.vars_read {
                    self.vars_read = true;
                    let l = self.vars.1.clone();
                    self.acc.join_assign(&l);
                }
                Ok(Value::String(self.vars.0.clone()))
            }
            "session.vars.set" => {
                self.vars = (s("json"), self.vars.1.join(&self.acc));
                Ok(Value::Null)
            }
            other => Err(Refusal::new(
                ErrorCode::NotSupported,
                format!("unknown host function {other}"),
            )),
        }
    }

    fn simple(&mut self, command: &str, words: &[String], what: &str) -> HostResult {
        let values: Vec<CodeValue> = words.iter().map(|w| self.value(w)).collect();
        let o = self.run(
            &format!("{command} {}", var_words(values.len(), 1)),
            &values,
            None,
        )?;
        check_status(&o, what)?;
        Ok(Value::Null)
    }

    /// `fetch(url, {method, headers, body})` as `curl`: the same egress decision
    /// (host list, flow rules on the labels of the URL, headers and body, token
    /// brokering). Resolves to `{status, headers: {}, body}`.
    fn fetch(&mut self, a: &Value) -> HostResult {
        let url = a
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let method = a
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("GET")
            .to_uppercase();
        let mut values = vec![self.value(&url), self.value(&method)];
        let mut script = String::from("command curl -sS -X \"$__safesh_code_2\"");
        if let Some(h) = a.get("headers").and_then(Value::as_object) {
            for (k, v) in h {
                let line = format!(
                    "{k}: {}",
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                );
                values.push(self.value(&line));
                script.push_str(&format!(" -H \"$__safesh_code_{}\"", values.len()));
            }
        }
        if let Some(body) = a.get("body").and_then(Value::as_str) {
            values.push(self.data(body));
            script.push_str(&format!(" --data-raw \"$__safesh_code_{}\"", values.len()));
        }
        script.push_str(" -w '\\n%{http_code}' -- \"$__safesh_code_1\"");
        let o = self.run(&script, &values, None)?;
        if o.exit_code != 0 {
            let msg = String::from_utf8_lossy(&o.stderr).trim().to_string();
            return Err(Refusal::new(
                ErrorCode::ExecutionError,
                format!(
                    "fetch {url}: {}",
                    if msg.is_empty() {
                        format!("curl exited with {}", o.exit_code)
                    } else {
                        msg
                    }
                ),
            )
            .command("fetch"));
        }
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let (body, status) = match out.rsplit_once('\n') {
            Some((b, s)) => (b.to_string(), s.trim().parse::<u64>().unwrap_or(0)),
            None => (String::new(), out.trim().parse::<u64>().unwrap_or(0)),
        };
        Ok(json!({ "status": status, "body": body, "url": url }))
    }
}

impl HostState {
    /// The JavaScript of the user's module `name` (a path relative to the
    /// session's cwd) for an `import`: read as `cat` reads it (one check, on
    /// the opened file), through the exec commit point with the file's label
    /// (a downloaded module is `eval` of downloaded text), types stripped
    /// (`PARSE_ERROR` in that file). The script holds its text from now on.
    pub(crate) fn import_source(&mut self, name: &str) -> Result<String, Refusal> {
        use std::io::Read;
        self.flush()?;
        let r = self.session.code_open_read(name)?;
        let mut bytes = Vec::new();
        r.file
            .take(self.capture_cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Refusal::new(ErrorCode::ExecutionError, format!("{name}: {e}")))?;
        if bytes.len() as u64 > self.capture_cap {
            return Err(Refusal::limit(
                "an imported module in bytes",
                self.capture_cap,
                "string_bytes",
            ));
        }
        self.session
            .code_commit_exec(&format!("import {name}"), &r.label)?;
        self.acc.join_assign(&r.label);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        match crate::Language::of_file(name) {
            crate::Language::TypeScript => crate::strip::strip_types_in(&text, Some(name)),
            crate::Language::JavaScript => Ok(text),
        }
    }
}

/// `"$__safesh_code_FROM" … ` for `n` values.
fn var_words(n: usize, from: usize) -> String {
    (from..from + n)
        .map(|i| format!("\"$__safesh_code_{i}\""))
        .collect::<Vec<_>>()
        .join(" ")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| x.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// The length of the longest prefix of `bytes` made of whole UTF-8 characters
/// (all of it at the end of the data).
fn utf8_prefix(bytes: &[u8], at_end: bool) -> usize {
    if at_end {
        return bytes.len();
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    }
}

fn command_result(o: &ExecOutcome) -> Value {
    json!({
        "code": o.exit_code,
        "stdout": String::from_utf8_lossy(&o.stdout),
        "stderr": String::from_utf8_lossy(&o.stderr),
    })
}

/// A failed file operation as an error: the utility's message (stderr).
fn check_status(o: &ExecOutcome, what: &str) -> Result<(), Refusal> {
    if o.exit_code == 0 {
        return Ok(());
    }
    let msg = String::from_utf8_lossy(&o.stderr).trim().to_string();
    Err(Refusal::new(
        ErrorCode::ExecutionError,
        if msg.is_empty() {
            format!("{what} failed with status {}", o.exit_code)
        } else {
            msg
        },
    )
    .command(what.to_string()))
}

/// The refusal a run past its deadline ends with.
pub(crate) fn timeout_refusal() -> Refusal {
    Refusal::new(ErrorCode::Timeout, "the code ran past its time limit")
        .rule("timeout_ms")
        .suggest("do less per call, or pass a larger timeout_ms (at most [limits] max_timeout_ms)")
}

/// A refusal as the prelude's `SafeshError` reads it.
pub(crate) fn refusal_json(r: &Refusal) -> Value {
    json!({
        "code": r.code.as_str(),
        "message": r.message,
        "suggestion": r.suggestion,
        "rule": r.details.rule,
        "path": r.details.path,
        "command": r.details.command,
    })
}
