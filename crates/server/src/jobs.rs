//! Background jobs: a script (or argv) running in its own session on its own
//! thread. Its output goes to a bounded in-memory ring and to a log file
//! (`<state_dir>/jobs/<id>.log`), so reading "output since byte offset N" works for
//! any N while memory stays bounded.
//!
//! A job is started by `job_start`, or by a script's top-level `cmd &` (the
//! session's background sink adopts it; its command is shown as `cmd &`).
//! Jobs run in the interpreter; `pid` is the host pid of the sandbox's pid 1 for
//! the external program the job started most recently (a signal to it reaches
//! that program's whole tree), null with `in_process: true` while the job has
//! run only in-process commands. Killing a job interrupts it, which stops
//! in-process utilities and kills every program it started. Jobs have no time
//! limit of their own: they run until they end, are killed, or their session ends.

use crate::error::ServerError;
use crate::settings::{Settings, private_dir};
use crate::shape::{Redaction, lock, render_range};
use safesh_core::session::{BackgroundEnd, BackgroundHooks, BackgroundSink};
use safesh_core::{InputSource, Interrupter, OutputTarget, Refusal, StreamConsumer, StreamKind};
use safesh_label::Label;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Running jobs allowed at once.
pub const MAX_RUNNING: usize = 64;
/// Finished jobs remembered (older ones are forgotten, their logs stay until retention).
pub const MAX_FINISHED: usize = 256;

/// A job's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still running.
    Running,
    /// Ended by itself.
    Exited,
    /// Ended by `job_kill` (or its session ending).
    Killed,
}

impl Status {
    /// The status's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Exited => "exited",
            Status::Killed => "killed",
        }
    }
}

#[derive(Debug)]
struct State {
    status: Status,
    exit_code: Option<i32>,
    ended: Option<Instant>,
    signal: Option<String>,
    error: Option<Refusal>,
    label: Label,
    kill_requested: bool,
    /// The host pid of the sandbox pid 1 of the program the job started last.
    pid: Option<u32>,
}

/// Ends an adopted job if the core drops its hooks without calling them (the
/// job could not start).
struct Finisher(Option<Arc<Job>>);

impl Drop for Finisher {
    fn drop(&mut self) {
        if let Some(j) = self.0.take() {
            j.end(Some((
                126,
                Some(Refusal::new(
                    safesh_core::ErrorCode::ExecutionError,
                    "the background job could not start",
                )),
                Label::empty(),
                Label::empty(),
            )));
        }
    }
}

/// The last bytes of a job's output, and where they start.
#[derive(Debug)]
struct Ring {
    buf: VecDeque<u8>,
    /// The offset of `buf[0]` in the whole output.
    start: u64,
    cap: usize,
    newlines: u64,
    /// The join of the labels of the output so far.
    label: Label,
    /// The last bytes written were hidden: the placeholder standing for them is
    /// in the log, and further hidden bytes join it (one marker per run).
    hidden_run: bool,
    /// Bytes written to the log file; it stops at `log_cap` (the ring goes on).
    logged: u64,
    log_cap: u64,
}

impl Ring {
    fn total(&self) -> u64 {
        self.start + self.buf.len() as u64
    }
}

/// How a job started with `job_start` runs.
#[derive(Default)]
pub struct JobOptions {
    /// A channel to the human for the job's approvals.
    pub approver: Option<Arc<dyn safesh_core::ApprovalChannel>>,
    /// Overrides nudges (advisories only), as `force` does for `exec`.
    pub force: bool,
    /// The scope that owns the job ([`crate::owner::scope`]): only it finds it.
    pub owner: String,
}

/// Stops a running job (called repeatedly until it has ended).
pub type StopFn = Arc<dyn Fn() + Send + Sync>;

/// A [`StopFn`] that interrupts an in-process job.
pub fn stop_local(i: Interrupter) -> StopFn {
    Arc::new(move || i.interrupt())
}

/// One background job.
pub struct Job {
    /// Its id.
    pub id: String,
    /// What it runs (as given).
    pub command: String,
    /// The session it was started from, if any.
    pub session: Option<String>,
    /// The scope that owns it ([`crate::owner::scope`]).
    pub owner: String,
    /// The full output (up to [`Settings::spill_max_bytes`]).
    pub log_path: PathBuf,
    started: Instant,
    started_unix_ms: u64,
    state: Mutex<State>,
    ring: Mutex<Ring>,
    log: Mutex<Option<std::fs::File>>,
    changed: Condvar,
    /// Stops it: its session's interrupter, or a frame to the worker running it.
    interrupter: Mutex<Option<StopFn>>,
    /// Redaction of output the model may not see (`None`: turned off).
    redaction: Option<Redaction>,
    /// The session's known secret values and the window over the last chunk's
    /// end: output holding one is redacted like secret output.
    known: Mutex<Option<(safesh_core::KnownSource, safesh_flow::HoldBack)>>,
}

/// A job's output sink: log file first (so older bytes can always be read back),
/// then the ring.
pub(crate) struct JobSink(pub(crate) Arc<Job>);

impl StreamConsumer for JobSink {
    fn write(&self, _kind: StreamKind, data: &[u8], label: &Label) -> std::io::Result<()> {
        let job = &self.0;
        // A killed job's interpreter reports the interrupt as a timeout: leave it
        // out, the job's status says what happened.
        if data.starts_with(crate::shape::CANCEL_MESSAGE) && lock(&job.state).kill_requested {
            return Ok(());
        }
        // A known secret value in the output (or spanning from the last chunk):
        // the output is secret whatever its label says.
        let found = match (&job.redaction, &mut *lock(&job.known)) {
            (Some(_), Some((source, hold))) => {
                let k = source.get();
                let f = hold.check(&k, data).label;
                hold.release(&k, data);
                f
            }
            _ => None,
        };
        let joined_label;
        let label = match found {
            Some(f) => {
                joined_label = label.join(&f);
                &joined_label
            }
            None => label,
        };
        {
            let mut r = lock(&job.ring);
            r.label = r.label.join(label);
            // Only the chunks the model may not see are hidden, each run of them
            // by one marker in place (no sizes: they are a channel).
            let marker = job
                .redaction
                .as_ref()
                .filter(|x| x.hides(label))
                .and_then(|x| x.placeholder(label, 0));
            if let Some(marker) = marker {
                if !r.hidden_run {
                    r.hidden_run = true;
                    let mut text = marker.into_bytes();
                    text.push(b'\n');
                    drop(r);
                    return self.append(&text);
                }
                drop(r);
                let _guard = lock(&job.state);
                job.changed.notify_all();
                return Ok(());
            }
            r.hidden_run = false;
            drop(r);
            self.append(data)
        }
    }

    fn set_known(&self, known: safesh_core::KnownSource) {
        *lock(&self.0.known) = Some((known, safesh_flow::HoldBack::default()));
    }
}

impl JobSink {
    /// Appends bytes the model may see to the log and the ring.
    fn append(&self, data: &[u8]) -> std::io::Result<()> {
        let job = &self.0;
        {
            let mut r = lock(&job.ring);
            // The log keeps the first `log_cap` bytes; past them only the ring
            // (the last bytes) and the counts go on.
            let room = r.log_cap.saturating_sub(r.logged);
            let keep = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            if keep > 0
                && let Some(f) = lock(&job.log).as_mut()
            {
                f.write_all(&data[..keep])?;
                r.logged += keep as u64;
            }
            r.newlines += data.iter().filter(|b| **b == b'\n').count() as u64;
            r.buf.extend(data.iter().copied());
            if r.buf.len() > r.cap {
                let drop = r.buf.len() - r.cap;
                r.buf.drain(..drop);
                r.start += drop as u64;
            }
        }
        // Wake followers (they wait on the state lock).
        let _guard = lock(&job.state);
        job.changed.notify_all();
        Ok(())
    }
}

impl Job {
    /// Sets what stops it.
    pub(crate) fn set_stop(&self, stop: StopFn) {
        *lock(&self.interrupter) = Some(stop);
    }

    /// The hooks that feed this job from elsewhere (a worker process's frames).
    pub(crate) fn hooks(self: &Arc<Self>) -> BackgroundHooks {
        let j = self.clone();
        let finisher = Finisher(Some(self.clone()));
        BackgroundHooks {
            output: Arc::new(JobSink(self.clone())),
            on_start: Some(self.pid_hook()),
            finished: Box::new(move |end: BackgroundEnd| {
                let mut f = finisher;
                f.0.take();
                j.end(Some((end.exit_code, end.error, end.label, end.error_label)));
            }),
        }
    }

    fn status(&self) -> Status {
        lock(&self.state).status
    }

    /// The hook the sandbox tells each started program's pid 1 to.
    pub(crate) fn pid_hook(self: &Arc<Self>) -> safesh_core::session::StartHook {
        let weak = Arc::downgrade(self);
        Arc::new(move |pid| {
            if let Some(j) = weak.upgrade() {
                lock(&j.state).pid = Some(pid);
            }
        })
    }

    /// Records the end: `(exit code, error, output label, error label)`.
    pub(crate) fn end(&self, outcome: Option<(i32, Option<Refusal>, Label, Label)>) {
        *lock(&self.log) = None;
        let mut st = lock(&self.state);
        if st.status != Status::Running {
            return;
        }
        st.ended = Some(Instant::now());
        if st.kill_requested {
            st.status = Status::Killed;
            st.exit_code = Some(128 + signal_number(st.signal.as_deref()));
        } else {
            st.status = Status::Exited;
            st.exit_code = outcome.as_ref().map(|o| o.0);
        }
        if let Some((_, error, label, error_label)) = outcome {
            st.error = error
                .map(|e| crate::shape::model_refusal(e, &error_label, self.redaction.as_ref()));
            st.label = label;
        }
        self.changed.notify_all();
    }

    /// The job as listed: id, status, runtime, exit code, command.
    pub fn info(&self) -> Value {
        let st = lock(&self.state);
        let total = lock(&self.ring).total();
        let mut v = self.info_locked(&st, total);
        v["started_unix_ms"] = json!(self.started_unix_ms);
        v
    }

    /// Reads `[from, to)` of the output (ring, else log file).
    fn read_range(&self, from: u64, to: u64) -> Vec<u8> {
        if to <= from {
            return Vec::new();
        }
        {
            let r = lock(&self.ring);
            if from >= r.start {
                let a = (from - r.start) as usize;
                let b = ((to.min(r.total())) - r.start) as usize;
                return r.buf.range(a..b).copied().collect();
            }
        }
        let mut out = vec![0u8; (to - from) as usize];
        let got = std::fs::File::open(&self.log_path).and_then(|mut f| {
            f.seek(SeekFrom::Start(from))?;
            let mut n = 0;
            while n < out.len() {
                let k = f.read(&mut out[n..])?;
                if k == 0 {
                    break;
                }
                n += k;
            }
            Ok(n)
        });
        out.truncate(got.unwrap_or(0));
        out
    }

    /// A warning when `[from, …)` starts in bytes neither the ring nor the
    /// capped log file still holds.
    fn lost_warning(&self, from: u64) -> Option<String> {
        let r = lock(&self.ring);
        (from < r.start && from >= r.logged).then(|| {
            format!(
                "bytes {from}..{} are not kept: the job log keeps the first {} bytes and memory the last {} bytes",
                r.start, r.log_cap, r.cap
            )
        })
    }

    /// New output since byte `since`, at most `max` bytes:
    /// `{data, since, next_offset, total_bytes, status, exit_code, …}`.
    pub fn output(&self, since: u64, max: usize) -> Value {
        let total = lock(&self.ring).total();
        let from = since.min(total);
        let mut to = total.min(from.saturating_add(max as u64));
        let mut data = self.read_range(from, to);
        if to < total {
            // Do not split a UTF-8 character across two reads: when the next byte
            // continues a character, end this read before that character's lead byte.
            let next = self.read_range(to, to + 1);
            if next.first().is_some_and(|b| b & 0xC0 == 0x80) {
                let mut cut = data.len();
                for _ in 0..3 {
                    if cut == 0 {
                        break;
                    }
                    cut -= 1;
                    if data.get(cut).is_some_and(|b| b & 0xC0 != 0x80) {
                        break;
                    }
                }
                if cut > 0 {
                    data.truncate(cut);
                    to = from + cut as u64;
                }
            }
        }
        let mut warnings: Vec<String> = self.lost_warning(from).into_iter().collect();
        if data.is_empty() && from < r_start(self) && from < to {
            // Not kept anywhere: go on from the oldest byte still held.
            to = r_start(self);
        }
        let text = match std::str::from_utf8(&data) {
            Ok(s) => s.to_string(),
            Err(_) => {
                warnings.push("invalid UTF-8 replaced with U+FFFD".to_string());
                String::from_utf8_lossy(&data).into_owned()
            }
        };
        let mut v = self.info();
        v["data"] = json!(text);
        v["since"] = json!(from);
        v["next_offset"] = json!(to);
        v["total_bytes"] = json!(total);
        v["more"] = json!(to < total);
        v["warnings"] = json!(warnings);
        v
    }

    /// Waits until the job ends or `timeout` passes; true when it has ended.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = lock(&self.state);
        while st.status == Status::Running {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = match self.changed.wait_timeout(st, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        true
    }

    /// Waits until there is output past `offset`, the job ends, or `timeout` passes.
    pub fn wait_output(&self, offset: u64, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut st = lock(&self.state);
        loop {
            if st.status != Status::Running || lock(&self.ring).total() > offset {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            st = match self.changed.wait_timeout(st, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// The final result once ended: the output since `since` shaped with `cap`
    /// (first and last KiB past it, `log_path` naming the full log), exit code, error.
    pub fn final_result(&self, since: u64, cap: usize) -> Value {
        let total = lock(&self.ring).total();
        let from = since.min(total);
        let len = total - from;
        let mut warnings: Vec<String> = self.lost_warning(from).into_iter().collect();
        let (text, truncated) = if len <= cap as u64 {
            let d = self.read_range(from, total);
            render_range(&d, &[], len, cap, &self.log_path, &mut warnings)
        } else {
            let head = self.read_range(from, from + crate::shape::EDGE as u64);
            let tail = self.read_range(total - crate::shape::EDGE as u64, total);
            render_range(&head, &tail, len, cap, &self.log_path, &mut warnings)
        };
        let st = lock(&self.state);
        let mut v = self.info_locked(&st, total);
        v["schema_version"] = json!(1);
        v["output"] = json!(text);
        v["truncated"] = json!(truncated);
        v["since"] = json!(from);
        v["next_offset"] = json!(total);
        v["total_bytes"] = json!(len);
        v["total_lines"] = json!(lock(&self.ring).newlines);
        v["error"] = json!(st.error);
        v["label"] = crate::shape::model_label_json(&st.label, self.redaction.as_ref());
        v["warnings"] = json!(warnings);
        v["duration_ms"] = v["runtime_ms"].clone();
        v
    }

    fn info_locked(&self, st: &State, total: u64) -> Value {
        let end = st.ended.unwrap_or_else(Instant::now);
        json!({
            "job_id": self.id,
            "pid": st.pid,
            "in_process": st.pid.is_none(),
            "status": st.status.as_str(),
            "exit_code": st.exit_code,
            "signal": st.signal,
            "runtime_ms": end.duration_since(self.started).as_millis() as u64,
            "command": self.command,
            "session": self.session,
            "output_bytes": total,
            "log_path": self.log_path.to_string_lossy(),
        })
    }

    /// Stops the job (any signal name ends it: in-process jobs have no process of
    /// their own); waits up to `grace` for it to end.
    pub fn kill(&self, signal: &str, grace: Duration) {
        {
            let mut st = lock(&self.state);
            if st.status != Status::Running {
                return;
            }
            st.kill_requested = true;
            st.signal = Some(signal.to_string());
        }
        let deadline = Instant::now() + grace;
        loop {
            let stop = lock(&self.interrupter).clone();
            if let Some(stop) = stop {
                stop();
            }
            if self.wait(Duration::from_millis(20)) || Instant::now() >= deadline {
                return;
            }
        }
    }
}

/// Normalises a signal name (`TERM`, `SIGTERM`, `15`, `kill`) to `SIGTERM` form.
pub fn signal_name(s: &str) -> Result<String, ServerError> {
    let names = [
        (1, "HUP"),
        (2, "INT"),
        (3, "QUIT"),
        (6, "ABRT"),
        (9, "KILL"),
        (10, "USR1"),
        (12, "USR2"),
        (14, "ALRM"),
        (15, "TERM"),
    ];
    let up = s.trim().to_ascii_uppercase();
    let bare = up.strip_prefix("SIG").unwrap_or(&up);
    if let Ok(n) = bare.parse::<i32>() {
        if let Some((_, name)) = names.iter().find(|(k, _)| *k == n) {
            return Ok(format!("SIG{name}"));
        }
    } else if names.iter().any(|(_, name)| *name == bare) {
        return Ok(format!("SIG{bare}"));
    }
    Err(ServerError::BadParams(format!(
        "unknown signal {s:?}; use one of TERM, KILL, INT, HUP, QUIT, USR1, USR2, ALRM"
    )))
}

/// A session's background sink: hands its top-level `cmd &` to [`Jobs::adopt`].
pub struct Adopter {
    /// The server's jobs.
    pub jobs: Arc<Jobs>,
    /// The session the jobs belong to (killed when it ends); `None` for a fresh one.
    pub session: Option<String>,
    /// The scope that owns them ([`crate::owner::scope`]).
    pub owner: String,
}

impl BackgroundSink for Adopter {
    fn start(&self, command: &str, stop: Interrupter) -> Result<BackgroundHooks, Refusal> {
        self.jobs.adopt(
            command,
            self.session.clone(),
            self.owner.clone(),
            stop_local(stop),
        )
    }
}

/// All jobs of one server.
pub struct Jobs {
    settings: Arc<Settings>,
    map: Mutex<HashMap<String, Arc<Job>>>,
    order: Mutex<VecDeque<String>>,
}

impl Jobs {
    /// No jobs yet.
    pub fn new(settings: Arc<Settings>) -> Jobs {
        Jobs {
            settings,
            map: Mutex::new(HashMap::new()),
            order: Mutex::new(VecDeque::new()),
        }
    }

    /// Registers a new running job (log file open, listed) without starting it.
    pub(crate) fn create(
        &self,
        command: String,
        session: Option<String>,
        owner: String,
    ) -> Result<Arc<Job>, ServerError> {
        let running = lock(&self.map)
            .values()
            .filter(|j| j.status() == Status::Running)
            .count();
        if running >= MAX_RUNNING {
            return Err(ServerError::TooManyJobs(MAX_RUNNING));
        }
        let base = self.settings.jobs_dir();
        crate::spill::make_room(&self.settings);
        let dir = crate::owner::scoped(&base, &owner);
        private_dir(&dir)?;
        let id = crate::ids::short("job");
        let log_path = dir.join(format!("{}.log", crate::ids::unique(&id)));
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&log_path)?
        };
        let job = Arc::new(Job {
            id: id.clone(),
            command,
            session,
            owner,
            log_path,
            started: Instant::now(),
            started_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            state: Mutex::new(State {
                status: Status::Running,
                exit_code: None,
                ended: None,
                signal: None,
                error: None,
                label: Label::empty(),
                kill_requested: false,
                pid: None,
            }),
            ring: Mutex::new(Ring {
                buf: VecDeque::new(),
                start: 0,
                cap: self.settings.job_ring.max(1),
                newlines: 0,
                label: Label::empty(),
                hidden_run: false,
                logged: 0,
                log_cap: self.settings.spill_max_bytes,
            }),
            log: Mutex::new(Some(file)),
            changed: Condvar::new(),
            interrupter: Mutex::new(None),
            redaction: Redaction::from_config(self.settings.policy.config()),
            known: Mutex::new(None),
        });
        let mut map = lock(&self.map);
        map.insert(id.clone(), job.clone());
        let mut order = lock(&self.order);
        order.push_back(id);
        // Forget the oldest finished jobs past the limit.
        while order.len() > MAX_FINISHED + MAX_RUNNING {
            let Some(old) = order.front().cloned() else {
                break;
            };
            if map.get(&old).is_some_and(|j| j.status() == Status::Running) {
                break;
            }
            order.pop_front();
            map.remove(&old);
        }
        Ok(job)
    }

    /// Starts `script` (shown as `command`) in a new session with `cwd`/`env`;
    /// `approver` asks the human for its approvals.
    pub fn start(
        &self,
        script: String,
        command: String,
        session: Option<String>,
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
        options: JobOptions,
    ) -> Result<Arc<Job>, ServerError> {
        let JobOptions {
            approver,
            force,
            owner,
        } = options;
        let job = self.create(command, session, owner)?;
        let settings = self.settings.clone();
        let j = job.clone();
        // The session is made on the job's thread: a Session is not Sync.
        let spawned = std::thread::Builder::new()
            .name(format!("safesh-{}", job.id))
            .stack_size(crate::settings::SHELL_STACK)
            .spawn(move || {
                let mut session = settings.new_session_on(cwd, &env, true);
                *lock(&j.interrupter) = Some(stop_local(session.interrupter()));
                session.set_on_start(Some(j.pid_hook()));
                session.set_approval_channel(approver);
                session.set_force(force);
                // No time limit of its own: a job runs until it ends or is killed.
                session.set_script_timeout_ms(Some(0));
                let killed_early = lock(&j.state).kill_requested;
                let outcome = if killed_early {
                    None
                } else {
                    Some(session.exec(
                        &script,
                        InputSource::Empty,
                        OutputTarget::Stream(Arc::new(JobSink(j.clone()))),
                    ))
                };
                drop(session);
                j.end(outcome.map(|o| (o.exit_code, o.error, o.label, o.error_label)));
            });
        if let Err(e) = spawned {
            job.end(Some((
                126,
                Some(Refusal::new(
                    safesh_core::ErrorCode::ExecutionError,
                    format!("cannot start the job: {e}"),
                )),
                Label::empty(),
                Label::empty(),
            )));
            return Err(e.into());
        }
        Ok(job)
    }

    /// Takes over a top-level `cmd &` of a request (the core's background sink):
    /// a job listed like any other, killed with its session.
    pub fn adopt(
        &self,
        command: &str,
        session: Option<String>,
        owner: String,
        stop: StopFn,
    ) -> Result<BackgroundHooks, Refusal> {
        let job = self
            .create(format!("{command} &"), session, owner)
            .map_err(|e| {
                Refusal::new(
                    safesh_core::ErrorCode::LimitExceeded,
                    format!("cannot start a background job: {e}"),
                )
                .rule("jobs")
                .suggest("wait for (or job_kill) running jobs first")
            })?;
        *lock(&job.interrupter) = Some(stop);
        let finisher = Finisher(Some(job.clone()));
        Ok(BackgroundHooks {
            output: Arc::new(JobSink(job.clone())),
            on_start: Some(job.pid_hook()),
            finished: Box::new(move |end: BackgroundEnd| {
                let mut f = finisher;
                if let Some(j) = f.0.take() {
                    j.end(Some((end.exit_code, end.error, end.label, end.error_label)));
                }
            }),
        })
    }

    /// The job `id` of scope `owner` ([`crate::owner::scope`]): another scope's
    /// job is unknown to it.
    pub fn get(&self, id: &str, owner: &str) -> Result<Arc<Job>, ServerError> {
        lock(&self.map)
            .get(id)
            .filter(|j| j.owner == owner)
            .cloned()
            .ok_or_else(|| ServerError::UnknownJob(id.to_string()))
    }

    /// The jobs of scope `owner`, oldest first.
    pub fn list(&self, owner: &str) -> Vec<Value> {
        let map = lock(&self.map);
        lock(&self.order)
            .iter()
            .filter_map(|id| map.get(id))
            .filter(|j| j.owner == owner)
            .map(|j| j.info())
            .collect()
    }

    /// Tells the running jobs of scope `owner` to stop, without waiting for them.
    pub fn stop_scope(&self, owner: &str) {
        let jobs: Vec<Arc<Job>> = lock(&self.map)
            .values()
            .filter(|j| j.owner == owner)
            .cloned()
            .collect();
        for j in jobs {
            j.kill("SIGTERM", Duration::ZERO);
        }
    }

    /// True when connection `conn` has a running job (its own or one of its
    /// shell sessions').
    pub fn running_of_conn(&self, conn: &str) -> bool {
        let own = crate::owner::scope(conn, None);
        let sessions = format!("s:{conn}:");
        lock(&self.map).values().any(|j| {
            (j.owner == own || j.owner.starts_with(&sessions)) && j.status() == Status::Running
        })
    }

    /// Kills the running jobs of session `id`.
    pub fn kill_session(&self, id: &str) {
        let jobs: Vec<Arc<Job>> = lock(&self.map)
            .values()
            .filter(|j| j.session.as_deref() == Some(id))
            .cloned()
            .collect();
        for j in jobs {
            j.kill("SIGTERM", Duration::from_secs(2));
        }
    }

    /// Tells the running jobs of session `id` to stop, without waiting for them.
    pub fn stop_session(&self, id: &str) {
        let jobs: Vec<Arc<Job>> = lock(&self.map)
            .values()
            .filter(|j| j.session.as_deref() == Some(id))
            .cloned()
            .collect();
        for j in jobs {
            j.kill("SIGTERM", Duration::ZERO);
        }
    }

    /// Kills every running job.
    pub fn shutdown(&self) {
        let jobs: Vec<Arc<Job>> = lock(&self.map).values().cloned().collect();
        for j in &jobs {
            j.kill("SIGTERM", Duration::from_millis(0));
        }
        for j in &jobs {
            j.kill("SIGTERM", Duration::from_secs(2));
        }
    }
}

/// The offset of the oldest byte the job's ring still holds.
fn r_start(job: &Job) -> u64 {
    lock(&job.ring).start
}

fn signal_number(name: Option<&str>) -> i32 {
    match name.unwrap_or("SIGTERM") {
        "SIGHUP" => 1,
        "SIGINT" => 2,
        "SIGQUIT" => 3,
        "SIGABRT" => 6,
        "SIGKILL" => 9,
        "SIGUSR1" => 10,
        "SIGUSR2" => 12,
        "SIGALRM" => 14,
        _ => 15,
    }
}
