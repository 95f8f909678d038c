//! Output shaping, the one module every model-facing face uses: output modes, the
//! cap (first and last KiB past it), the spill file that holds the full output,
//! binary detection, invalid UTF-8 replaced with a note, and redaction of output
//! the model may not see (see [`Redaction`]).
//!
//! Output is never held whole in memory: [`Capture`] is a
//! [`StreamConsumer`] that keeps at most `cap` bytes of head plus a 1 KiB tail per
//! stream, and once the cap is passed streams every byte to a spill file.

use safesh_core::{ExecOutcome, Refusal, StreamConsumer, StreamKind};
use safesh_flow::Classifier;
use safesh_label::{Label, LabelSummary};
use safesh_policy::config::Config;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes kept from the start and from the end of an output past the cap.
pub const EDGE: usize = 1024;

/// How the interpreter reports a request stopped from outside (a client's
/// cancellation, a killed job): the start of its cancellation refusal's line.
pub const CANCEL_MESSAGE: &[u8] = b"safesh: EXECUTION_ERROR: the request was cancelled";

/// Which output a result returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    /// stdout and stderr interleaved as produced, in `output` (the default).
    #[default]
    Merged,
    /// stdout only, in `stdout`.
    Stdout,
    /// stderr only, in `stderr`.
    Stderr,
    /// Both, in `stdout` and `stderr`.
    Separate,
}

impl OutputMode {
    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputMode::Merged => "merged",
            OutputMode::Stdout => "stdout",
            OutputMode::Stderr => "stderr",
            OutputMode::Separate => "separate",
        }
    }
}

/// One shaped stream: head, tail, counts and (past the cap) the spill file.
#[derive(Debug)]
struct Stream {
    /// The first `cap` bytes.
    head: Vec<u8>,
    /// The last [`EDGE`] bytes (once past the cap).
    tail: Vec<u8>,
    total: u64,
    newlines: u64,
    last: Option<u8>,
    spill: Option<(PathBuf, std::fs::File)>,
    spill_error: Option<String>,
    /// Bytes written to the spill file; it stops at the limit (`spill_full`).
    spilled: u64,
    spill_full: bool,
    /// The output the model may not see since the last shown byte: only counted,
    /// never kept or spilled; shown as one placeholder where it was.
    hidden: Option<HiddenRun>,
    /// The last chunk label decided and whether it is hidden (the check is not free).
    decided: Option<(Label, bool)>,
    /// Shown bytes held back until the next chunk says whether they begin a
    /// known secret value split across the two (see [`Capture::set_known`]).
    hold: safesh_flow::HoldBack,
    /// Some of it was replaced by a placeholder (for the envelope's `payload`).
    redacted: bool,
}

/// A run of consecutive chunks the model may not see.
#[derive(Debug)]
struct HiddenRun {
    bytes: u64,
    newlines: u64,
    last: u8,
    label: Label,
}

impl HiddenRun {
    /// Its lines: newlines, plus one for an unterminated last line.
    fn lines(&self) -> u64 {
        self.newlines + u64::from(self.last != b'\n')
    }
}

impl Stream {
    fn new() -> Stream {
        Stream {
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            newlines: 0,
            last: None,
            spill: None,
            spill_error: None,
            spilled: 0,
            spill_full: false,
            hidden: None,
            decided: None,
            hold: safesh_flow::HoldBack::default(),
            redacted: false,
        }
    }

    fn lines(&self) -> u64 {
        match self.last {
            Some(b) if b != b'\n' => self.newlines + 1,
            _ => self.newlines,
        }
    }
}

/// Where spill files go and how many bytes a result may hold.
#[derive(Clone, Debug)]
pub struct ShapeConfig {
    /// Model-facing cap in bytes.
    pub cap: usize,
    /// The spill directory (`<state_dir>/spill`).
    pub spill_dir: PathBuf,
    /// Spill files older than this are removed when a new one is written.
    pub retention: Duration,
}

/// Which output the model may see: the session config's classifier decides from
/// each stream's label ([`Classifier::redaction_summary`]: may the label flow to
/// the pseudo-host `model`?). Absent when the human turned redaction off
/// (`[labels] redact = false`).
#[derive(Clone, Debug)]
pub struct Redaction {
    classifier: Classifier,
}

impl Redaction {
    /// From the merged config; `None` when `[labels] redact = false`.
    pub fn from_config(config: &Config) -> Option<Redaction> {
        config.labels.redacts().then(|| Redaction {
            classifier: Classifier::from_config(config),
        })
    }

    /// From a classifier (always redacting).
    pub fn new(classifier: Classifier) -> Redaction {
        Redaction { classifier }
    }

    /// `None` when output labeled `label` may be shown to the model, else the
    /// placeholder for `lines` lines of it (`[redacted: 3 lines, secret(.env)]`).
    pub fn placeholder(&self, label: &Label, lines: u64) -> Option<String> {
        let lines = usize::try_from(lines).unwrap_or(usize::MAX);
        self.classifier.redaction_summary(label, lines)
    }

    /// True when output labeled `label` may not be shown to the model.
    pub fn hides(&self, label: &Label) -> bool {
        self.classifier
            .hosts()
            .flows_to_host(label, safesh_flow::redact::MODEL)
            .is_err()
    }

    /// `data` as the model may see it: `None` when it may be shown as is, else the
    /// placeholder. Empty output is never redacted (there is nothing to hide).
    pub fn redact_bytes(&self, label: &Label, data: &[u8]) -> Option<String> {
        if data.is_empty() {
            return None;
        }
        self.placeholder(label, count_lines(data))
    }
}

/// The exit status the model may see: a status derived from data the model may
/// not see (`exit "$(printf %d "'${s:8:1}")"` would show a byte per call) is
/// shown as success (0) or failure (1) only, with a warning saying so. A
/// refusal's status is the refusal's, not the data's.
pub fn model_exit_code(
    outcome: &ExecOutcome,
    redaction: Option<&Redaction>,
) -> (i32, Option<String>) {
    let code = outcome.exit_code;
    if outcome.error.is_some()
        || code == 0
        || code == 1
        || !redaction.is_some_and(|r| r.hides(&outcome.status_label))
    {
        return (code, None);
    }
    (
        1,
        Some("the exit status depends on data the model may not see: shown as 1 (failure)".into()),
    )
}

/// The refusal as the model may see it (see [`model_refusal`]).
pub fn model_error(outcome: &ExecOutcome, redaction: Option<&Redaction>) -> Value {
    outcome
        .error
        .clone()
        .map(|e| model_refusal(e, &outcome.error_label, redaction))
        .map_or(Value::Null, |e| {
            serde_json::to_value(e).unwrap_or(Value::Null)
        })
}

/// A refusal as the model may see it: when its text may quote data the model may
/// not see (`label`, the words of the command it is about), the message says what
/// happened without the words and the details that name them are withheld; the
/// code, rule, allowed list and suggestion stay.
pub fn model_refusal(mut e: Refusal, label: &Label, redaction: Option<&Redaction>) -> Refusal {
    if redaction.is_some_and(|r| r.hides(label)) {
        e.message = format!(
            "{} (the message is withheld: it quotes data the model may not see)",
            e.code.as_str()
        );
        let d = &mut e.details;
        for field in [&mut d.command, &mut d.flag, &mut d.path, &mut d.location] {
            if field.is_some() {
                *field = Some("[withheld]".to_string());
            }
        }
    }
    e
}

/// Lines in `data`: newlines, plus one for an unterminated last line.
pub fn count_lines(data: &[u8]) -> u64 {
    let n = memchr_count(data);
    match data.last() {
        Some(b) if *b != b'\n' => n + 1,
        _ => n,
    }
}

/// A request's output as it is produced: a [`StreamConsumer`] for
/// `OutputTarget::Stream` that shapes while it receives.
#[derive(Debug)]
pub struct Capture {
    mode: OutputMode,
    config: ShapeConfig,
    /// `[0]`: stdout or the merged stream; `[1]`: stderr (separate mode).
    streams: Mutex<[Stream; 2]>,
    /// Bytes of a stream the mode does not return (reported in a warning).
    dropped: Mutex<u64>,
    /// How much the spill file may hold (set: [`Capture::with_spill_limits`]).
    spill_limits: crate::spill::SpillLimits,
    /// Set when the server stopped the request itself (its own timeout): the
    /// interpreter's generic stop message is then left out.
    interrupted: std::sync::atomic::AtomicBool,
    /// Redaction of output the model may not see (`None`: shown as is).
    redaction: Option<Arc<Redaction>>,
    /// The session's known secret values: a chunk containing one is hidden
    /// whatever its label says (a key printed from git's history).
    known: Mutex<Option<safesh_core::KnownSource>>,
    /// The raw stdout kept for a pipeline's next step (set: [`Capture::with_tap`]).
    tap: Option<Mutex<Tap>>,
    /// What [`Capture::result`] showed (for the envelope).
    facts: Mutex<Facts>,
}

/// What the model was shown of a result's first stream (`stdout`, or `output`
/// in merged mode): the envelope's `meta.content_type` and `payload` depend on it.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Some of the shown output is a redaction placeholder.
    pub redacted: bool,
    /// The output is binary (this description), shown only as a note.
    pub binary: Option<String>,
}

/// The raw stdout of a request, kept whole (up to a bound) with the join of
/// its chunks' labels: a pipeline step's data for the next one. Never shown.
#[derive(Debug)]
struct Tap {
    limit: usize,
    data: crate::piped::Piped,
}

impl Capture {
    /// A capture for `mode`.
    pub fn new(mode: OutputMode, config: ShapeConfig) -> Capture {
        let spill_limits = crate::spill::SpillLimits {
            max_bytes: crate::spill::DEFAULT_MAX_BYTES,
            total_bytes: crate::spill::DEFAULT_TOTAL_BYTES,
            retention: config.retention,
            roots: vec![config.spill_dir.clone()],
        };
        Capture {
            mode,
            spill_limits,
            config,
            streams: Mutex::new([Stream::new(), Stream::new()]),
            dropped: Mutex::new(0),
            interrupted: std::sync::atomic::AtomicBool::new(false),
            redaction: None,
            known: Mutex::new(None),
            tap: None,
            facts: Mutex::new(Facts::default()),
        }
    }

    /// Also keeps the raw stdout, up to `limit` bytes, with its label (a
    /// pipeline step's output for the next step; see [`Capture::take_tap`]).
    pub fn with_tap(mut self, limit: usize) -> Capture {
        self.tap = Some(Mutex::new(Tap {
            limit,
            data: crate::piped::Piped::default(),
        }));
        self
    }

    /// The raw stdout kept by [`Capture::with_tap`] (`overflow` when it passed
    /// the bound: then only the first `limit` bytes are there).
    pub fn take_tap(&self) -> Option<crate::piped::Piped> {
        let tap = self.tap.as_ref()?;
        Some(std::mem::take(&mut lock(tap).data))
    }

    /// What the result showed (after [`Capture::result`]).
    pub fn facts(&self) -> Facts {
        lock(&self.facts).clone()
    }

    /// Bounds the spill file (bytes per result, bytes of all full-output files).
    pub fn with_spill_limits(mut self, limits: crate::spill::SpillLimits) -> Capture {
        self.spill_limits = limits;
        self
    }

    /// Writes shown bytes to the stream's spill file, up to the limit; past it
    /// the file is complete no more (`spill_full`, said in the result).
    fn spill_write(&self, s: &mut Stream, data: &[u8]) {
        let Some((_, f)) = &mut s.spill else {
            return;
        };
        if s.spill_full {
            return;
        }
        let room = self.spill_limits.max_bytes.saturating_sub(s.spilled);
        let keep = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if let Err(e) = f.write_all(&data[..keep]) {
            s.spill_error = Some(e.to_string());
            s.spill = None;
            return;
        }
        s.spilled += keep as u64;
        s.spill_full = keep < data.len();
    }

    /// Redacts output whose label may not flow to the model (`None`: never).
    pub fn with_redaction(self, redaction: Option<Redaction>) -> Capture {
        self.with_shared_redaction(redaction.map(Arc::new))
    }

    /// [`Capture::with_redaction`] of one made once ([`crate::Settings::redaction`]).
    pub fn with_shared_redaction(mut self, redaction: Option<Arc<Redaction>>) -> Capture {
        self.redaction = redaction;
        self
    }

    /// Marks the request as stopped by the server: the interpreter's own
    /// `safesh: TIMEOUT: …` line that follows is dropped (the server reports why).
    pub fn mark_interrupted(&self) {
        self.interrupted
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Which slot a chunk goes to (`None`: not returned in this mode).
    fn slot(&self, kind: StreamKind) -> Option<usize> {
        match (self.mode, kind) {
            (OutputMode::Merged, _) => Some(0),
            (OutputMode::Stdout, StreamKind::Stdout) => Some(0),
            (OutputMode::Stderr, StreamKind::Stderr) => Some(0),
            (OutputMode::Separate, StreamKind::Stdout) => Some(0),
            (OutputMode::Separate, StreamKind::Stderr) => Some(1),
            _ => None,
        }
    }

    /// Adds public bytes to a stream (also usable without the interpreter, in tests).
    pub fn push(&self, kind: StreamKind, data: &[u8]) {
        self.push_labeled(kind, data, &Label::empty());
    }

    /// Adds bytes labeled `label` to a stream. A chunk whose label may not flow to
    /// the model is only counted (see [`Redaction`]); consecutive hidden chunks
    /// become one placeholder in their place, and the rest is shown.
    pub fn push_labeled(&self, kind: StreamKind, data: &[u8], label: &Label) {
        if kind == StreamKind::Stdout
            && let Some(tap) = &self.tap
        {
            let mut t = lock(tap);
            let room = t.limit.saturating_sub(t.data.bytes.len());
            let keep = room.min(data.len());
            t.data.bytes.extend_from_slice(&data[..keep]);
            t.data.overflow |= keep < data.len();
            t.data.label.join_assign(label);
        }
        if self.interrupted.load(std::sync::atomic::Ordering::SeqCst)
            && data.starts_with(CANCEL_MESSAGE)
        {
            return;
        }
        let Some(slot) = self.slot(kind) else {
            *lock(&self.dropped) += data.len() as u64;
            return;
        };
        let mut streams = lock(&self.streams);
        let Some(s) = streams.get_mut(slot) else {
            return;
        };
        let hide = match (&s.decided, &self.redaction) {
            (_, None) => false,
            (Some((l, h)), _) if l == label => *h,
            (_, Some(r)) => {
                let h = r.hides(label);
                s.decided = Some((label.clone(), h));
                h
            }
        };
        // Known secret values (only when redacting: the human turned it off else).
        let known = match (&self.redaction, &*lock(&self.known)) {
            (Some(_), Some(k)) => Some(k.get()).filter(|k| !k.is_empty()),
            _ => None,
        };
        let Some(known) = known else {
            if hide {
                Self::hide(s, data, label);
            } else {
                self.close_hidden(s, true);
                self.append(s, data);
            }
            return;
        };
        let found = s.hold.check(&known, data);
        if hide || found.label.is_some() {
            // Hidden by its label, or it holds a known value (hidden as the secret
            // it is). What was held back goes with it only when a value begins
            // there; otherwise it is shown first.
            let label = match &found.label {
                Some(f) => label.join(f),
                None => label.clone(),
            };
            let held = s.hold.finish();
            if found.from_held {
                Self::hide(s, &held, &label);
            } else if !held.is_empty() {
                self.close_hidden(s, true);
                self.append(s, &held);
            }
            Self::hide(s, data, &label);
            return;
        }
        let shown = s.hold.release(&known, data);
        if !shown.is_empty() {
            self.close_hidden(s, true);
            self.append(s, &shown);
        }
    }

    /// Counts `data` into the stream's run of hidden output.
    fn hide(s: &mut Stream, data: &[u8], label: &Label) {
        let Some(&last) = data.last() else {
            return;
        };
        let run = s.hidden.get_or_insert_with(|| HiddenRun {
            bytes: 0,
            newlines: 0,
            last,
            label: label.clone(),
        });
        run.bytes += data.len() as u64;
        run.newlines += memchr_count(data);
        run.last = last;
        run.label.join_assign(label);
    }

    /// The refusal as the model may see it: a message quoting a known secret
    /// value (`"$(git show HEAD~1:.env)"`: command not found) is withheld too.
    fn model_error(&self, outcome: &ExecOutcome) -> Value {
        let Some(e) = &outcome.error else {
            return Value::Null;
        };
        let known = lock(&self.known).as_ref().map(|k| k.get());
        let text = serde_json::to_string(e).unwrap_or_default();
        let found = known.and_then(|k| k.label_of(text.as_bytes()));
        let label = match found {
            Some(f) => outcome.error_label.join(&f),
            None => outcome.error_label.clone(),
        };
        serde_json::to_value(model_refusal(e.clone(), &label, self.redaction.as_deref()))
            .unwrap_or(Value::Null)
    }

    /// Gives the capture the session's known secret values (see
    /// [`StreamConsumer::set_known`]).
    pub fn set_known(&self, known: safesh_core::KnownSource) {
        *lock(&self.known) = Some(known);
    }

    /// Ends a run of hidden output: its placeholder takes its place in the stream
    /// (followed by a line break when more output follows a complete line).
    fn close_hidden(&self, s: &mut Stream, more: bool) {
        let Some(run) = s.hidden.take() else {
            return;
        };
        s.redacted = true;
        let text = self
            .redaction
            .as_ref()
            .and_then(|r| r.placeholder(&run.label, run.lines()))
            .unwrap_or_else(|| "[redacted]".to_string());
        let mut text = text.into_bytes();
        if more && run.last == b'\n' {
            text.push(b'\n');
        }
        let (total, newlines) = (s.total, s.newlines);
        self.append(s, &text);
        // Sizes of hidden output are a channel: rounded up to a power of two.
        s.total = total + run.bytes.next_power_of_two();
        s.newlines = newlines + run.lines().next_power_of_two() - u64::from(run.last != b'\n');
        s.last = Some(run.last);
    }

    /// Adds bytes the model may see: counted, kept (head, tail) and spilled.
    fn append(&self, s: &mut Stream, data: &[u8]) {
        s.total += data.len() as u64;
        s.newlines += memchr_count(data);
        if let Some(b) = data.last() {
            s.last = Some(*b);
        }
        let cap = self.config.cap;
        let room = cap.saturating_sub(s.head.len());
        if s.spill.is_none() && s.spill_error.is_none() && data.len() > room {
            // Passing the cap: from now on every byte also goes to a spill file.
            match crate::spill::open(&self.config.spill_dir, &self.spill_limits) {
                Ok((path, f)) => {
                    s.spill = Some((path, f));
                    let head = std::mem::take(&mut s.head);
                    self.spill_write(s, &head);
                    s.head = head;
                }
                Err(e) => s.spill_error = Some(e.to_string()),
            }
        }
        self.spill_write(s, data);
        let keep = room.min(data.len());
        s.head.extend_from_slice(&data[..keep]);
        if s.total > cap as u64 {
            if data.len() >= EDGE {
                s.tail.clear();
                s.tail.extend_from_slice(&data[data.len() - EDGE..]);
            } else {
                s.tail.extend_from_slice(data);
                if s.tail.len() > EDGE {
                    let cut = s.tail.len() - EDGE;
                    s.tail.drain(..cut);
                }
            }
        }
    }

    /// The result object (DESIGN "Contracts": Result) for this output and outcome.
    pub fn result(&self, outcome: &ExecOutcome) -> Value {
        let mut streams = lock(&self.streams);
        let dropped = *lock(&self.dropped);
        let mut warnings: Vec<String> = Vec::new();
        warnings.extend(model_exit_code(outcome, self.redaction.as_deref()).1);
        warnings.extend(outcome.warnings.iter().cloned());
        let mut v = json!({
            "schema_version": 1,
            "exit_code": model_exit_code(outcome, self.redaction.as_deref()).0,
            "signal": Value::Null,
            "output_mode": self.mode.as_str(),
            "truncated": false,
            "total_bytes": 0,
            "total_lines": 0,
            "log_path": Value::Null,
            "duration_ms": outcome.duration_ms,
            "label": model_label_json(&outcome.label, self.redaction.as_deref()),
            "warnings": [],
            "error": self.model_error(outcome),
        });
        let names: &[&str] = match self.mode {
            OutputMode::Merged => &["output"],
            OutputMode::Stdout => &["stdout"],
            OutputMode::Stderr => &["stderr"],
            OutputMode::Separate => &["stdout", "stderr"],
        };
        let mut total_bytes = 0u64;
        let mut total_lines = 0u64;
        let mut truncated = false;
        for (i, name) in names.iter().enumerate() {
            let Some(s) = streams.get_mut(i) else {
                continue;
            };
            // The end: what was held back is shown (it completed no value).
            let held = s.hold.finish();
            if !held.is_empty() {
                self.close_hidden(s, true);
                self.append(s, &held);
            }
            self.close_hidden(s, false);
            // Binary output is not shown: save it so the model can still get it.
            if s.spill.is_none()
                && s.spill_error.is_none()
                && binary_kind(&s.head).is_some()
                && let Ok((p, f)) = crate::spill::open(&self.config.spill_dir, &self.spill_limits)
            {
                s.spill = Some((p, f));
                let head = std::mem::take(&mut s.head);
                self.spill_write(s, &head);
                s.head = head;
            }
            // Close the spill file so the whole output is on disk.
            let path = s.spill.take().map(|(p, mut f)| {
                let _ = f.flush();
                // The output keeps its label: `<spill>.label.json` beside it.
                let _ = write_private(
                    &p.with_extension("label.json"),
                    label_json(&outcome.label).to_string().as_bytes(),
                );
                p
            });
            if i == 0 {
                *lock(&self.facts) = Facts {
                    redacted: s.redacted,
                    binary: binary_kind(&s.head),
                };
            }
            let shaped = render(s, self.config.cap, path.as_deref(), name, &mut warnings);
            total_bytes += s.total;
            total_lines += s.lines();
            truncated |= shaped.truncated;
            v[*name] = json!(shaped.text);
            if let Some(p) = path {
                let key = if i == 0 {
                    "log_path".to_string()
                } else {
                    format!("{name}_log_path")
                };
                v[key] = json!(p.to_string_lossy());
            }
            if let Some(e) = &s.spill_error {
                warnings.push(format!("{name}: the full output could not be saved: {e}"));
            }
            if s.spill_full {
                warnings.push(format!(
                    "{name}: the full-output file keeps only the first {} bytes (its limit); total_bytes and total_lines count all {} bytes",
                    s.spilled, s.total
                ));
            }
        }
        if dropped > 0 {
            let other = if self.mode == OutputMode::Stdout {
                "stderr"
            } else {
                "stdout"
            };
            warnings.push(format!(
                "{other} ({dropped} bytes) not shown: output_mode is {}",
                self.mode.as_str()
            ));
        }
        v["truncated"] = json!(truncated || outcome.truncated);
        v["total_bytes"] = json!(total_bytes);
        v["total_lines"] = json!(total_lines);
        v["warnings"] = json!(warnings);
        v
    }
}

impl StreamConsumer for Capture {
    fn write(&self, stream: StreamKind, data: &[u8], label: &Label) -> std::io::Result<()> {
        self.push_labeled(stream, data, label);
        Ok(())
    }

    fn set_known(&self, known: safesh_core::KnownSource) {
        Capture::set_known(self, known);
    }
}

/// A shaped text and whether bytes were left out.
struct Shaped {
    text: String,
    truncated: bool,
}

/// Renders one stream for the model.
fn render(
    s: &Stream,
    cap: usize,
    path: Option<&Path>,
    name: &str,
    warnings: &mut Vec<String>,
) -> Shaped {
    if let Some(kind) = binary_kind(&s.head) {
        let where_ = match path {
            Some(p) => format!("; full output in {}", p.display()),
            None => String::new(),
        };
        return Shaped {
            text: format!("<binary: {} bytes, {kind}{where_}>", s.total),
            truncated: s.total > 0,
        };
    }
    if s.total <= cap as u64 {
        return Shaped {
            text: lossy(&s.head, name, warnings),
            truncated: false,
        };
    }
    let head_end = char_floor(&s.head, EDGE.min(s.head.len()));
    let head = s.head.get(..head_end).unwrap_or(&[]);
    let tail_start = char_ceil(&s.tail, 0);
    let tail = s.tail.get(tail_start..).unwrap_or(&[]);
    // Saturating: with a cap under EDGE the head and tail may overlap.
    let omitted = s
        .total
        .saturating_sub(head.len() as u64 + tail.len() as u64);
    let where_ = match path {
        Some(p) if s.spill_full => format!(
            "only the first {} bytes were saved, in {}",
            s.spilled,
            p.display()
        ),
        Some(p) => format!("full output in {}", p.display()),
        None => "full output could not be saved".to_string(),
    };
    let text = format!(
        "{}\n… [{omitted} bytes omitted of {} bytes, {} lines; {where_}] …\n{}",
        lossy(head, name, warnings),
        s.total,
        s.lines(),
        lossy(tail, name, warnings)
    );
    Shaped {
        text,
        truncated: true,
    }
}

/// UTF-8 text, invalid sequences replaced with U+FFFD (noted once per stream).
fn lossy(data: &[u8], name: &str, warnings: &mut Vec<String>) -> String {
    match std::str::from_utf8(data) {
        Ok(s) => s.to_string(),
        Err(_) => {
            let note = format!("{name}: invalid UTF-8 replaced with U+FFFD");
            if !warnings.contains(&note) {
                warnings.push(note);
            }
            String::from_utf8_lossy(data).into_owned()
        }
    }
}

/// The largest index ≤ `at` that does not split a UTF-8 character.
fn char_floor(data: &[u8], at: usize) -> usize {
    let mut i = at.min(data.len());
    let mut steps = 0;
    while i > 0 && i < data.len() && steps < 3 && is_continuation(data[i]) {
        i -= 1;
        steps += 1;
    }
    if i < data.len() && is_continuation(data[i]) {
        at.min(data.len())
    } else {
        i
    }
}

/// The smallest index ≥ `at` that does not split a UTF-8 character.
fn char_ceil(data: &[u8], at: usize) -> usize {
    let mut i = at;
    while i < data.len() && i < at + 3 && is_continuation(data[i]) {
        i += 1;
    }
    i
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// `Some(description)` when `head` looks binary: a NUL byte, or mostly non-text.
pub fn binary_kind(head: &[u8]) -> Option<String> {
    if head.is_empty() {
        return None;
    }
    let sample = &head[..head.len().min(8192)];
    let magic = magic_name(sample);
    let nul = sample.contains(&0);
    let mut odd = 0usize;
    for chunk in sample.utf8_chunks() {
        odd += chunk.invalid().len();
        odd += chunk
            .valid()
            .bytes()
            .filter(|b| *b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x08 | 0x1b))
            .count();
    }
    // A few invalid bytes are a text with a stray byte; a third is binary.
    if nul || odd * 10 > sample.len() * 3 || magic.is_some_and(|m| m != "text") {
        Some(match magic {
            Some(m) => format!("looks like {m}"),
            None => "not text".to_string(),
        })
    } else {
        None
    }
}

fn magic_name(d: &[u8]) -> Option<&'static str> {
    let table: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "PNG"),
        (b"\xff\xd8\xff", "JPEG"),
        (b"GIF87a", "GIF"),
        (b"GIF89a", "GIF"),
        (b"%PDF-", "PDF"),
        (b"PK\x03\x04", "ZIP"),
        (b"\x1f\x8b", "gzip"),
        (b"\x7fELF", "ELF executable"),
        (b"BZh", "bzip2"),
        (b"\xfd7zXZ\x00", "xz"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"\x00asm", "WebAssembly"),
        (b"RIFF", "RIFF (WAV/AVI/WebP)"),
    ];
    for (m, name) in table {
        if d.starts_with(m) {
            return Some(name);
        }
    }
    if d.len() > 262 && &d[257..262] == b"ustar" {
        return Some("tar");
    }
    None
}

/// Counts newlines.
fn memchr_count(data: &[u8]) -> u64 {
    data.iter().filter(|b| **b == b'\n').count() as u64
}

/// The label summary as JSON.
pub fn label_json(label: &Label) -> Value {
    serde_json::to_value(LabelSummary::from(label)).unwrap_or(Value::Null)
}

/// The label summary shown to the model. For a label the model may not see,
/// file and variable atoms are named only when they are secrets themselves
/// ([`Classifier::is_secret_origin`]): a path read through a name built from the
/// secret (`cat "$(cat .env)"`) would otherwise show the secret.
pub fn model_label_json(label: &Label, redaction: Option<&Redaction>) -> Value {
    let Some(r) = redaction.filter(|r| r.hides(label)) else {
        return label_json(label);
    };
    let mut summary = LabelSummary::from(label);
    let keep = |a: &safesh_label::Atom| match a {
        safesh_label::Atom::File(_) | safesh_label::Atom::Env(_) => {
            r.classifier.is_secret_origin(a)
        }
        _ => true,
    };
    summary.origins = label
        .origins
        .iter()
        .filter(|a| keep(a))
        .map(ToString::to_string)
        .collect();
    if let safesh_label::Integrity::Atoms(a) = &label.integrity {
        summary.integrity = a
            .iter()
            .filter(|a| keep(a))
            .map(ToString::to_string)
            .collect();
    }
    serde_json::to_value(summary).unwrap_or(Value::Null)
}

/// Writes a new file readable only by this user.
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(data)
}

/// Locks a mutex, recovering from poisoning.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Renders a byte range read back from a log (job output): the whole range when it
/// fits in `cap`, else its first and last KiB with a note naming the log.
pub fn render_range(
    head: &[u8],
    tail: &[u8],
    total: u64,
    cap: usize,
    log: &Path,
    warnings: &mut Vec<String>,
) -> (String, bool) {
    if total <= cap as u64 {
        return (lossy(head, "output", warnings), false);
    }
    let h = head
        .get(..char_floor(head, EDGE.min(head.len())))
        .unwrap_or(&[]);
    let t = tail.get(char_ceil(tail, 0)..).unwrap_or(&[]);
    let omitted = total.saturating_sub(h.len() as u64 + t.len() as u64);
    (
        format!(
            "{}\n… [{omitted} bytes omitted of {total} bytes; full output in {}] …\n{}",
            lossy(h, "output", warnings),
            log.display(),
            lossy(t, "output", warnings)
        ),
        true,
    )
}
