//! Approvals: a human's single-use authorization of one exact action (the CFC
//! seed's IntentOnce; an *intent* is something else in safesh).
//!
//! * [`Approvals::request`] records a pending request: a short id (8 base32
//!   characters), the exact action text, the commit point and target, when it was
//!   made and when it expires (5 minutes by default).
//! * The human grants or denies it by id (`safesh approve ID` through the control
//!   socket, [`crate::control`]); the model can never reach that channel.
//! * [`Approvals::take`] consumes a granted approval whose action is *exactly*
//!   the action about to run: an approval for `rm -r build` never authorizes
//!   `rm -r src`. It works once; a granted approval unused by its expiry lapses.
//! * `[[approval]]` entries in the config are **standing**: they authorize their
//!   exact action every time, until their optional `expires`, optionally only at
//!   one commit point. The config is the human's (a project config only applies
//!   once trusted), so it is a deliberate, durable grant; making it single-use
//!   would need consumption state shared by every safesh process and would make a
//!   config line silently stop working after one use.
//!
//! With a state dir ([`Approvals::with_state_dir`]) requests live in the state
//! store (`safesh_store::ApprovalDb`), shared by every safesh process of the user:
//! `safesh approve ID` works after the requesting process has exited, and the same
//! request sent again by any process in the same working directory (the grant's
//! *scope*) then proceeds, once. Without one (or when the store fails) they live in
//! this process's memory.
//!
//! Time comes from a [`Clock`], so tests control expiry without sleeping.

use safesh_policy::config::{Config, PreApproval};
use safesh_store::{ApprovalDb, Decide, StoredApproval};
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// How long a request waits for a human by default.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5 * 60);

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> SystemTime;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told (tests).
#[derive(Debug)]
pub struct ManualClock(Mutex<SystemTime>);

impl ManualClock {
    /// A clock showing `t`.
    pub fn new(t: SystemTime) -> Self {
        ManualClock(Mutex::new(t))
    }

    /// Moves the clock forward.
    pub fn advance(&self, d: Duration) {
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *t += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One request for approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// Short random id the human types (`safesh approve ID`).
    pub id: String,
    /// The exact action text it authorizes.
    pub action: String,
    /// `network | exec | destructive | env`.
    pub commit_point: String,
    /// What the action affects (host, paths, variable), for the human.
    pub target: String,
    /// Where it was asked (the working directory; empty: anywhere in this
    /// process): a grant authorizes the action only there.
    pub scope: String,
    /// When it was requested.
    pub created: SystemTime,
    /// When it lapses if not used.
    pub expires: SystemTime,
}

/// Where a request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for the human.
    Pending,
    /// Granted and not yet used.
    Granted,
    /// Denied by the human.
    Denied,
    /// Not granted (or not used) in time.
    Expired,
    /// Granted and consumed.
    Used,
}

/// Why a grant or denial failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// No request has this id.
    #[error("no approval request `{0}`")]
    UnknownId(String),
    /// The request lapsed.
    #[error("approval request `{0}` has expired")]
    Expired(String),
    /// The request was already granted, denied or used.
    #[error("approval request `{id}` is already {status:?}")]
    AlreadyDecided {
        /// The id.
        id: String,
        /// Its status.
        status: Status,
    },
}

#[derive(Debug)]
struct Entry {
    req: ApprovalRequest,
    status: Status,
}

#[derive(Debug, Default)]
struct State {
    entries: BTreeMap<String, Entry>,
    counter: u64,
}

/// Pending and granted approvals (in the state store when there is one, else of
/// this process), plus the standing approvals from the config.
#[derive(Debug)]
pub struct Approvals {
    clock: Arc<dyn Clock>,
    ttl: Duration,
    standing: Vec<PreApproval>,
    state: Mutex<State>,
    changed: Condvar,
    /// The state dir, and its store once opened (`None` inside: it cannot be).
    store: Option<(PathBuf, OnceLock<Option<ApprovalDb>>)>,
}

/// How often a wait on a stored request looks for another process's decision.
const STORE_POLL: Duration = Duration::from_millis(50);

/// Writes a human's decision on approval request `req` to the audit log of
/// `state_dir`, like every other decision: the exact action (as requested: its
/// secret words already withheld, and the log redacts what it writes), what it
/// aimed at, the id, and which channel the human used. Best effort: the
/// decision stands whether or not it is recorded.
pub fn audit_decision(
    state_dir: &std::path::Path,
    req: &ApprovalRequest,
    granted: bool,
    channel: &str,
) {
    use safesh_store::CommitPoint as P;
    let point = [P::Network, P::Exec, P::Destructive, P::Env]
        .into_iter()
        .find(|p| p.as_str() == req.commit_point)
        .unwrap_or(P::Policy);
    let verdict = if granted {
        safesh_store::Verdict::Approved
    } else {
        safesh_store::Verdict::Denied
    };
    let entry = safesh_store::Entry::new("human", point, verdict)
        .with_command(req.action.clone())
        .with_target(req.target.clone())
        .with_rule(format!("approval decided by the human ({channel})"))
        .with_approval(req.id.clone());
    if let Ok(log) = safesh_store::AuditLog::open(state_dir) {
        let _ = log.append(&entry);
    }
}

fn status_of(s: &str) -> Status {
    match s {
        "pending" => Status::Pending,
        "granted" => Status::Granted,
        "denied" => Status::Denied,
        "used" => Status::Used,
        _ => Status::Expired,
    }
}

fn from_stored(a: StoredApproval) -> ApprovalRequest {
    ApprovalRequest {
        id: a.id,
        action: a.action,
        commit_point: a.commit_point,
        target: a.target,
        scope: a.scope,
        created: a.created,
        expires: a.expires,
    }
}

const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

impl Approvals {
    /// No approvals yet; requests expire after [`DEFAULT_TTL`].
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Approvals {
            clock,
            ttl: DEFAULT_TTL,
            standing: Vec::new(),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            store: None,
        }
    }

    /// Keeps requests in the state store of `dir` (opened on first use), so they
    /// outlive this process and any process may consume a grant.
    pub fn with_state_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.store = dir.map(|d| (d, OnceLock::new()));
        self
    }

    /// The state store, if there is one and it can be opened.
    fn db(&self) -> Option<&ApprovalDb> {
        let (dir, db) = self.store.as_ref()?;
        db.get_or_init(|| ApprovalDb::open(dir).ok()).as_ref()
    }

    /// With the config's `[[approval]]` entries as standing approvals.
    pub fn from_config(config: &Config, clock: Arc<dyn Clock>) -> Self {
        Approvals::new(clock).with_standing(config.approvals.clone())
    }

    /// Sets how long requests wait.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Adds standing approvals.
    pub fn with_standing(mut self, standing: Vec<PreApproval>) -> Self {
        self.standing.extend(standing);
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks lapsed entries expired and forgets long-finished ones.
    fn expire(&self, st: &mut State) {
        let now = self.clock.now();
        for e in st.entries.values_mut() {
            if matches!(e.status, Status::Pending | Status::Granted) && now >= e.req.expires {
                e.status = Status::Expired;
            }
        }
        let keep = self.ttl * 2;
        st.entries.retain(|_, e| {
            matches!(e.status, Status::Pending | Status::Granted) || now < e.req.expires + keep
        });
    }

    fn fresh_id(st: &mut State) -> String {
        loop {
            st.counter += 1;
            // RandomState is keyed from the OS's randomness per process.
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(st.counter);
            h.write_u32(std::process::id());
            let mut bits = h.finish();
            let id: String = (0..8)
                .map(|_| {
                    let c = BASE32[(bits & 31) as usize];
                    bits >>= 5;
                    c as char
                })
                .collect();
            if !st.entries.contains_key(&id) {
                return id;
            }
        }
    }

    /// Records a pending request for the exact `action` (any scope of this process).
    pub fn request(&self, action: &str, commit_point: &str, target: &str) -> ApprovalRequest {
        self.request_in(action, commit_point, target, "")
    }

    /// Records a pending request for the exact `action` in `scope` (the working
    /// directory): in the state store when there is one, else in memory.
    pub fn request_in(
        &self,
        action: &str,
        commit_point: &str,
        target: &str,
        scope: &str,
    ) -> ApprovalRequest {
        let mut st = self.lock();
        self.expire(&mut st);
        let created = self.clock.now();
        let mut req = ApprovalRequest {
            id: String::new(),
            action: action.to_string(),
            commit_point: commit_point.to_string(),
            target: target.to_string(),
            scope: scope.to_string(),
            created,
            expires: created + self.ttl,
        };
        if let Some(db) = self.db() {
            // A few tries: another process may hold the id already.
            for _ in 0..4 {
                req.id = Self::fresh_id(&mut st);
                let row = StoredApproval {
                    id: req.id.clone(),
                    action: req.action.clone(),
                    commit_point: req.commit_point.clone(),
                    target: req.target.clone(),
                    scope: req.scope.clone(),
                    created,
                    expires: req.expires,
                    status: "pending".into(),
                };
                match db.insert(&row, created) {
                    Ok(true) => return req,
                    Ok(false) => continue,
                    // The store failed: this process still honours its own requests.
                    Err(_) => break,
                }
            }
        }
        let id = Self::fresh_id(&mut st);
        req.id = id.clone();
        st.entries.insert(
            id,
            Entry {
                req: req.clone(),
                status: Status::Pending,
            },
        );
        req
    }

    fn decide(&self, id: &str, to: Status) -> Result<ApprovalRequest, ApprovalError> {
        let mut st = self.lock();
        self.expire(&mut st);
        let Some(e) = st.entries.get_mut(id) else {
            drop(st);
            return self.decide_stored(id, to);
        };
        match e.status {
            Status::Pending => {
                e.status = to;
                let req = e.req.clone();
                drop(st);
                self.changed.notify_all();
                Ok(req)
            }
            Status::Expired => Err(ApprovalError::Expired(id.to_string())),
            status => Err(ApprovalError::AlreadyDecided {
                id: id.to_string(),
                status,
            }),
        }
    }

    /// Decides a request kept in the state store.
    fn decide_stored(&self, id: &str, to: Status) -> Result<ApprovalRequest, ApprovalError> {
        let unknown = || ApprovalError::UnknownId(id.to_string());
        let db = self.db().ok_or_else(unknown)?;
        let word = if to == Status::Granted {
            "granted"
        } else {
            "denied"
        };
        let r = match db.decide(id, word, self.clock.now()) {
            Ok(Decide::Done(a)) => Ok(from_stored(a)),
            Ok(Decide::Unknown) | Err(_) => Err(unknown()),
            Ok(Decide::Expired) => Err(ApprovalError::Expired(id.to_string())),
            Ok(Decide::Already(s)) => Err(ApprovalError::AlreadyDecided {
                id: id.to_string(),
                status: status_of(&s),
            }),
        };
        self.changed.notify_all();
        r
    }

    /// The human grants request `id`.
    pub fn grant(&self, id: &str) -> Result<ApprovalRequest, ApprovalError> {
        self.decide(id, Status::Granted)
    }

    /// The human denies request `id`.
    pub fn deny(&self, id: &str) -> Result<ApprovalRequest, ApprovalError> {
        self.decide(id, Status::Denied)
    }

    /// The human decides request `id` through `channel` (the terminal prompt,
    /// MCP elicitation, `safesh approve`/`deny`); the decision is audited.
    pub fn decide_by(
        &self,
        id: &str,
        granted: bool,
        channel: &str,
    ) -> Result<ApprovalRequest, ApprovalError> {
        let to = if granted {
            Status::Granted
        } else {
            Status::Denied
        };
        let req = self.decide(id, to)?;
        if let Some((dir, _)) = &self.store {
            audit_decision(dir, &req, granted, channel);
        }
        Ok(req)
    }

    /// Where request `id` stands (`None` if unknown or forgotten).
    pub fn status(&self, id: &str) -> Option<Status> {
        let mut st = self.lock();
        self.expire(&mut st);
        if let Some(e) = st.entries.get(id) {
            return Some(e.status);
        }
        drop(st);
        let a = self.db()?.get(id, self.clock.now()).ok()??;
        Some(status_of(&a.status))
    }

    /// Requests still waiting for the human, oldest first.
    pub fn pending(&self) -> Vec<ApprovalRequest> {
        let mut st = self.lock();
        self.expire(&mut st);
        let mut v: Vec<_> = st
            .entries
            .values()
            .filter(|e| e.status == Status::Pending)
            .map(|e| e.req.clone())
            .collect();
        drop(st);
        if let Some(db) = self.db() {
            v.extend(
                db.pending(self.clock.now())
                    .unwrap_or_default()
                    .into_iter()
                    .map(from_stored),
            );
        }
        v.sort_by_key(|r| r.created);
        v
    }

    /// Blocks until request `id` is granted, denied or expired, or `timeout`
    /// passes (then `Pending`).
    pub fn wait(&self, id: &str, timeout: Duration) -> Result<Status, ApprovalError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        loop {
            self.expire(&mut st);
            let Some(e) = st.entries.get(id) else {
                drop(st);
                return self.wait_stored(id, deadline);
            };
            if e.status != Status::Pending {
                return Ok(e.status);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Status::Pending);
            }
            // Wake at the deadline or at expiry, whichever is first.
            let until_expiry = e
                .req
                .expires
                .duration_since(self.clock.now())
                .unwrap_or(Duration::ZERO);
            let nap = (deadline - now).min(until_expiry.max(Duration::from_millis(1)));
            st = self
                .changed
                .wait_timeout(st, nap)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// [`Approvals::wait`] for a request in the state store: another process
    /// decides it, so look again every [`STORE_POLL`].
    fn wait_stored(&self, id: &str, deadline: Instant) -> Result<Status, ApprovalError> {
        loop {
            let status = self
                .status(id)
                .ok_or_else(|| ApprovalError::UnknownId(id.to_string()))?;
            let now = Instant::now();
            if status != Status::Pending || now >= deadline {
                return Ok(status);
            }
            let st = self.lock();
            let _ = self
                .changed
                .wait_timeout(st, (deadline - now).min(STORE_POLL))
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn standing_allows(&self, action: &str, point: Option<&str>) -> bool {
        let now = self.clock.now();
        self.standing.iter().any(|a| {
            a.action == action
                && a.expires.is_none_or(|e| now < e)
                && match (&a.commit_point, point) {
                    (None, _) => true,
                    (Some(p), Some(q)) => p == q,
                    (Some(_), None) => false,
                }
        })
    }

    /// Consumes what authorizes `action`: `Some("")` for a standing approval,
    /// `Some(id)` for a request's grant.
    fn take_inner(&self, action: &str, point: Option<&str>, scope: &str) -> Option<String> {
        if self.standing_allows(action, point) {
            return Some(String::new());
        }
        let mut st = self.lock();
        self.expire(&mut st);
        let found = st.entries.values_mut().find(|e| {
            e.status == Status::Granted
                && e.req.action == action
                && e.req.scope == scope
                && point.is_none_or(|p| e.req.commit_point == p)
        });
        if let Some(e) = found {
            e.status = Status::Used;
            return Some(e.req.id.clone());
        }
        drop(st);
        self.db()?
            .take(action, point, scope, self.clock.now())
            .ok()?
    }

    /// Consumes an approval of exactly `action` (at any commit point); true when
    /// one authorized it.
    pub fn take(&self, action: &str) -> bool {
        self.take_inner(action, None, "").is_some()
    }

    /// Consumes an approval of exactly `action` at `commit_point`.
    pub fn take_at(&self, action: &str, commit_point: &str) -> bool {
        self.take_inner(action, Some(commit_point), "").is_some()
    }

    /// Consumes an approval of exactly `action` at `commit_point` in `scope`
    /// (standing approvals apply in every scope): the id of the request whose
    /// grant it used (empty for a standing approval), `None` when none did.
    pub fn take_in(&self, action: &str, commit_point: &str, scope: &str) -> Option<String> {
        self.take_inner(action, Some(commit_point), scope)
    }
}
