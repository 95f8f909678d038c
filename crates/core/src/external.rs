//! External programs: an allowed program runs in the kernel sandbox
//! (`safesh-sandbox`), never directly. The spec comes from the policy's profile
//! (roots, the command's own read/write/exec/network, protected paths, limits) and
//! the environment the policy builds; output is streamed into the shell's fds and
//! labeled conservatively: everything the program was given, joined with the
//! sandboxed run itself as its only integrity.

use crate::error::{ErrorCode, Refusal};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use crate::io::{LabelCell, StageReader, StageWriter};
use safesh_label::Label;
use safesh_policy::Policy;
use safesh_policy::config::Network;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Streams a sandboxed program's output into the shell's stdout and stderr.
struct ShellOutput {
    out: StageWriter,
    err: StageWriter,
}

impl safesh_sandbox::Output for ShellOutput {
    fn stdout(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.out.write_all(data)
    }

    fn stderr(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.err.write_all(data)
    }
}

impl Shell {
    /// Runs the allowed external `program` with `argv` in the sandbox.
    pub(crate) fn run_external(&mut self, policy: &Policy, program: &Path, argv: &[Field]) -> Exec {
        let texts: Vec<String> = argv.iter().map(|f| f.text.clone()).collect();
        let profile = policy.profile(&texts[0], program, &texts, &self.cwd);
        let Some(tmp_dir) = self.shared.temp_dir.clone() else {
            return Err(Refusal::new(
                ErrorCode::SandboxUnavailable,
                "the session has no private temp dir for the sandbox",
            )
            .into());
        };
        let exported = self.vars.environment();
        let mut env = safesh_policy::env::child_env(
            policy.config(),
            exported.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        self.warn_dropped_env(policy.config(), exported.keys(), &texts[0]);
        // git treats an unreadable ~/.gitconfig as fatal: when the profile does not
        // let the program read it, git sees an empty global config instead.
        if let Some(home) = &policy.config().home {
            let global = home.join(".gitconfig");
            let readable = profile
                .read
                .iter()
                .chain(&profile.write)
                .any(|r| global.starts_with(r));
            if !readable {
                env.retain(|(k, _)| k != "GIT_CONFIG_GLOBAL");
                env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
            }
        }
        // The labels of the variables it gets (the fixed ones safesh adds are its own).
        let env_label = env
            .iter()
            .filter(|(k, v)| exported.get(k) == Some(v))
            .filter_map(|(k, _)| self.vars.get(k))
            .fold(Label::empty(), |l, v| l.join(&v.label));
        // The label of what it prints: everything it was given (arguments, the PC,
        // files named in its arguments, stdin), plus the sandboxed run.
        let mut label = argv.iter().fold(self.pc.clone(), |l, a| l.join(&a.label));
        // Its environment is given to it too (`export LANG="$(cat .env)"`).
        label = label.join(&env_label);
        // And its working directory (`os.getcwd()` after `cd "$n"`): the words
        // that chose it and the labels of the names along its path.
        label = label
            .join(&self.cwd_label)
            .join(&self.path_names_label(&self.cwd));
        for a in &texts[1..] {
            let p = self.cwd.join(a);
            if p.is_file() {
                label = label.join(&self.file_label(&p));
            }
        }
        // Known secret values in its arguments and environment (a backstop behind
        // the labels: a key from git's history); its stdin is searched below.
        let known = self.known_values();
        let given_bytes = texts.iter().map(|t| t.as_bytes());
        let env_bytes = env.iter().map(|(_, v)| v.as_bytes());
        if let Some(l) = known
            .as_deref()
            .and_then(|k| k.label_of_all(given_bytes.chain(env_bytes)))
        {
            label = label.join(&l);
        }
        let guard = self.commit_external(program, argv, &label, &env_label, &profile.network)?;
        // What it was given, before the sandboxed-run mark: files it writes carry it.
        let given = label.clone();
        let started = std::time::SystemTime::now();
        let write_roots = profile.write.clone();
        let network_on = matches!(profile.network, Network::On);
        let network_off = matches!(profile.network, Network::Off);
        // A command whose own rule names its hosts (`[commands.cargo] network =
        // ["index.crates.io"]`) fetches from sources the human chose for it: what it
        // builds from them is not treated as downloaded text.
        let endorsed_network = profile.network != policy.config().sandbox.network;
        label = label.join(&Label::sandboxed(program.display().to_string()));
        if let Network::On | Network::Hosts(_) = &profile.network {
            label = label.join(&Label::from_network("network"));
        }
        let cell = LabelCell::new(label);
        // Until its writes are recorded below, a file it may be writing reads
        // as what it may hold (a background job's output, a FIFO). What it
        // fetches through the proxy raises it as it happens (`fetched`); with
        // the whole network, or no observer, it may hold downloaded text from
        // the start.
        let observed_fetches = matches!(profile.network, Network::Hosts(_))
            && self.shared.flow.is_some()
            && !cfg!(feature = "untracked");
        let _writing = crate::running_writers::register(
            &write_roots,
            given.clone(),
            cell.clone(),
            (!network_off && !endorsed_network && !observed_fetches)
                .then(|| Label::from_network("network")),
        );
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), tmp_dir.display().to_string()));
        let stdin_src = self.in_fd(0);
        let mut refused = None;
        let stdin = if stdin_src.is_empty_source() {
            safesh_sandbox::Stdin::Null
        } else if stdin_src.unbuffered_process_stdin() {
            // safesh's own stdin, untouched so far: hand the program a duplicate of
            // the descriptor (no pump thread) — never a terminal.
            use std::os::fd::AsFd;
            let stdin = std::io::stdin();
            // SAFETY: isatty only inspects the descriptor.
            let tty = unsafe { libc::isatty(0) } == 1;
            match stdin.as_fd().try_clone_to_owned() {
                Ok(fd) if !tty => safesh_sandbox::Stdin::Fd(fd),
                _ => safesh_sandbox::Stdin::Null,
            }
        } else if let Some(mut g) = guard {
            // A file or here-document: its label is known, so the program does not
            // start at all when it may not have it.
            if let Some(l) = stdin_src.fixed_label() {
                g.check(&l)?;
            }
            refused = Some(g.refused.clone());
            safesh_sandbox::Stdin::Reader(Box::new(crate::running_writers::RaisingReader::new(
                crate::flow::GuardedReader::new(stdin_src, cell.clone(), Some(g), known),
                cell.clone(),
            )))
        } else if known.is_some() {
            safesh_sandbox::Stdin::Reader(Box::new(crate::running_writers::RaisingReader::new(
                crate::flow::GuardedReader::new(stdin_src, cell.clone(), None, known),
                cell.clone(),
            )))
        } else {
            safesh_sandbox::Stdin::Reader(Box::new(crate::running_writers::RaisingReader::new(
                StageReader::new(stdin_src, cell.clone()),
                cell.clone(),
            )))
        };
        let remaining = self.cancel.remaining();
        let timeout = Duration::from_millis(profile.timeout_ms);
        let hide = self.secrets_to_hide(&profile.write, &texts)?;
        let hidden = HiddenFiles::note(&hide);
        // What it reads by itself joins `cell` as it happens (external_reads.rs).
        let reads = self.read_labels(program, argv, &profile, &tmp_dir, &cell, &hide);
        let bound_read_only: Vec<PathBuf> = profile
            .protect
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        // Spill files and job logs are read in-process only, each server session
        // its own (Policy::set_state_scope): a program sees no one's, whatever
        // path it was given.
        let mut hide = hide;
        if let Some(state) = self
            .shared
            .policy
            .as_ref()
            .and_then(|p| p.config().state_dir.clone())
            && profile.read.iter().any(|r| state.starts_with(r))
        {
            hide.extend(["spill", "jobs"].map(|d| state.join(d)));
        }
        let spec = safesh_sandbox::Spec {
            program: program.to_path_buf(),
            argv: texts.clone(),
            cwd: self.cwd.clone(),
            env,
            read: profile.read,
            write: profile.write,
            exec: profile.exec,
            protect: profile.protect,
            hide,
            tmp_dir,
            network: match profile.network {
                Network::Off => safesh_sandbox::Network::Off,
                Network::On => safesh_sandbox::Network::On,
                Network::Hosts(h) => safesh_sandbox::Network::Hosts(h),
            },
            limits: safesh_sandbox::Limits {
                timeout: remaining.map_or(timeout, |r| r.min(timeout)),
                kill_grace: Duration::from_millis(500),
                memory_bytes: profile.memory_mb.map(|m| m.saturating_mul(1 << 20)),
                processes: profile.processes,
                file_size_bytes: profile.file_size_mb.map(|m| m.saturating_mul(1 << 20)),
                cpu_seconds: None,
            },
            stdin,
            allow_weaker: profile.allow_weaker,
            on_start: self.on_start.clone(),
            observer: reads
                .clone()
                .map(|r| r as Arc<dyn safesh_sandbox::Observer>),
        };
        // A program whose stdout/stderr was closed (`>&-`) gets a pipe like any
        // other and its output is discarded: the sandbox cannot hand it a closed
        // descriptor, and a failed write would kill it (docs/DIFFERENCES.md).
        let open_or_null = |sink: crate::io::Output| {
            if sink.is_closed() {
                crate::io::Sink::new(crate::io::SinkKind::Null)
            } else {
                sink
            }
        };
        let mut output = ShellOutput {
            out: StageWriter::new(open_or_null(self.out_fd(1)), cell.clone()),
            err: StageWriter::unbuffered(open_or_null(self.out_fd(2)), cell.clone()),
        };
        let cancel = self.cancel.clone();
        // Protected names it may create where nothing can be bound yet
        // (protect_walk.rs): saved before, reverted after, however it ends.
        let walk = crate::protect_walk::Walk {
            home: policy.config().home.clone(),
            // git itself: named so, and not a file the agent could have written.
            git_program: program.file_name() == Some(std::ffi::OsStr::new("git"))
                && std::fs::canonicalize(program).is_ok_and(|real| {
                    !write_roots
                        .iter()
                        .filter_map(|w| std::fs::canonicalize(w).ok())
                        .any(|w| real.starts_with(w))
                }),
            bound: bound_read_only,
        };
        let snapshot = (!write_roots.is_empty())
            .then(|| crate::protect_walk::Snapshot::take(walk, &write_roots));
        let result = safesh_sandbox::run(spec, &mut output, &|| cancel.is_cancelled());
        let _ = output.out.flush();
        let _ = output.err.flush();
        if let Some(snapshot) = snapshot {
            let notes = snapshot.revert(&texts[0]);
            for n in &notes {
                self.diag(format!("warning: {n}"));
            }
            crate::io::lock(&self.shared.warnings).extend(notes);
        }
        self.status_label = cell.get();
        // Files it wrote: what it was given, its stdin, and the network if it used it
        // (a proxied run that reached no host fetched nothing) — however the run
        // ended: a program killed mid-write (timeout, cancel, refused stdin, a
        // sandbox error after it started) leaves its files labeled too.
        let mut wrote = given.join(&strip_sandboxed(&cell.get()));
        let fetched = match &result {
            Ok(o) => network_on || o.proxy_log.iter().any(|l| l.starts_with("allow ")),
            Err(_) => !network_off,
        };
        if fetched && !endorsed_network {
            wrote = wrote.join(&Label::from_network("network"));
        }
        let moved_dirs = reads.as_ref().is_some_and(|r| r.moved_dirs());
        self.record_external_writes(&write_roots, started, &wrote, moved_dirs)?;
        // Its stdin carried what it may not receive: it got none of it, and the
        // script stops here.
        if let Some(slot) = refused
            && let Some(r) = crate::io::lock(&slot).take()
        {
            return Err(r.into());
        }
        let outcome = match result {
            Ok(o) => o,
            Err(safesh_sandbox::SandboxError::Unavailable(why)) => {
                return Err(Refusal::new(
                    ErrorCode::SandboxUnavailable,
                    format!("cannot run `{}` safely here: {why}", texts[0]),
                )
                .rule("sandbox")
                .command(texts[0].clone())
                .suggest("run `safesh doctor` to see what this host lacks; the human may accept a weaker sandbox with [sandbox] allow_weaker = true")
                .into());
            }
            Err(e) => {
                return Err(Refusal::new(
                    ErrorCode::ExecutionError,
                    format!("could not run `{}`: {e}", texts[0]),
                )
                .command(texts[0].clone())
                .into());
            }
        };
        self.follow_moved_secrets(&hidden, &write_roots, &texts[0])?;
        // It tried to execute a file it may not run: the exec failed (EACCES) and
        // the script stops here.
        if let Some(r) = reads.as_ref().and_then(|r| r.refusal()) {
            self.status_label = wrote;
            return Err(r.into());
        }
        // Its exit status says as much as the files it wrote: what it was given (and
        // what it fetched), not merely that it ran sandboxed — `cargo build &&
        // ./target/debug/app` stays under a clean PC.
        self.status_label = wrote;
        if outcome.cancelled {
            return Err(self.timeout_refusal().into());
        }
        if outcome.timed_out {
            let mut r = Refusal::new(
                ErrorCode::Timeout,
                format!(
                    "`{}` ran longer than {} ms and was stopped (with everything it started)",
                    texts[0],
                    timeout.as_millis()
                ),
            )
            .rule("limits.timeout_ms")
            .command(texts[0].clone())
            .suggest("start it as a background job, or ask the human to raise [limits] timeout_ms");
            r.details.path = Some(program.display().to_string());
            return Err(r.into());
        }
        // Killed for a limit (memory, file size, CPU): a limit refusal, like the
        // interpreter's own limits. A process-count limit only makes forks fail; the
        // program decides what that means.
        if outcome.signal.is_some()
            && let Some(hit) = outcome
                .limits_hit
                .iter()
                .find(|h| !matches!(h, safesh_sandbox::LimitHit::Processes))
        {
            let (what, key) = match hit {
                safesh_sandbox::LimitHit::Memory => ("memory", "memory_mb"),
                safesh_sandbox::LimitHit::FileSize => ("file size", "file_size_mb"),
                _ => ("CPU time", "timeout_ms"),
            };
            return Err(Refusal::new(
                ErrorCode::LimitExceeded,
                format!("`{}` exceeded the {what} limit and was stopped", texts[0]),
            )
            .rule(format!("limits.{key}"))
            .command(texts[0].clone())
            .suggest(format!(
                "use less {what} (stream instead of loading everything), or ask the human to raise [limits] {key}"
            ))
            .into());
        }
        if outcome.output_closed {
            // The reader went away (`prog | head -1`): like SIGPIPE.
            self.set_status(141);
            return Ok(());
        }
        if let safesh_sandbox::Observed::Incomplete(why) = &outcome.observed {
            self.diag(format!(
                "{}: warning: {why}; its output counts as having read every labelled file it could see",
                texts[0]
            ));
        }
        for w in &outcome.warnings {
            self.diag(format!("{}: sandbox: {w}", texts[0]));
        }
        let status = match (outcome.status, outcome.signal) {
            (Some(s), _) => s,
            (None, Some(sig)) => 128 + sig,
            (None, None) => 1,
        };
        self.set_status(status);
        Ok(())
    }
}

impl Shell {
    /// Says (in the result's `warnings`) which variables the script set and
    /// exported that `program` does not get, and why. Variables inherited from
    /// safesh's own environment are not mentioned: the config filters them on
    /// purpose, every time.
    fn warn_dropped_env<'k>(
        &self,
        config: &safesh_policy::config::Config,
        names: impl Iterator<Item = &'k String>,
        program: &str,
    ) {
        let mut warnings = crate::io::lock(&self.shared.warnings);
        for name in names {
            let Some(why) = safesh_policy::env::why_not_passed(config, name) else {
                continue;
            };
            // Exactly the inherited value (`PATH=/x:$PATH` is the script's).
            let inherited = self.vars.get(name).is_some_and(|v| {
                let mut origins = v.label.origins.iter();
                matches!(
                    (origins.next(), origins.next()),
                    (Some(safesh_label::Atom::Env(n)), None) if **n == **name
                )
            });
            // The shell's own (and the sandbox's own `TMPDIR`).
            let own = matches!(name.as_str(), "PWD" | "OLDPWD" | "TMPDIR" | "SHLVL" | "_");
            if inherited || own {
                continue;
            }
            // The name is the script's own word; a name made from secret data is
            // not repeated.
            let shown = match self.vars.get(name) {
                Some(v) if !v.name_label.confidentiality.is_public() => "a variable",
                _ => name.as_str(),
            };
            let w = format!("{shown} was not passed to {program}: {why}");
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }

    /// The observer of what the program reads by itself (`None` without flow
    /// control, or with label tracking compiled out).
    fn read_labels(
        &self,
        program: &Path,
        argv: &[Field],
        profile: &safesh_policy::profile::Profile,
        tmp_dir: &Path,
        cell: &LabelCell,
        hide: &[PathBuf],
    ) -> Option<Arc<crate::external_reads::ReadLabels>> {
        let flow = self.shared.flow.clone()?;
        if cfg!(feature = "untracked") {
            return None;
        }
        let mut roots = vec![self.cwd.clone(), tmp_dir.to_path_buf()];
        roots.extend(
            profile
                .read
                .iter()
                .chain(&profile.write)
                .map(|r| self.cwd.join(r)),
        );
        // A command whose own rule names its hosts fetches from sources the
        // human chose: not downloaded text (as `endorsed_network` above).
        let endorsed = self
            .shared
            .policy
            .as_ref()
            .is_some_and(|p| profile.network != p.config().sandbox.network);
        let gate = crate::external_reads::ExecGate {
            pc: self.pc.clone(),
            command: crate::flow::command_text(argv),
            program: std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf()),
            hosts: match &profile.network {
                Network::Off => Vec::new(),
                Network::On => vec!["*".to_string()],
                Network::Hosts(h) => h.clone(),
            },
            approver: self.approver.clone(),
            cancel: self.cancel.clone(),
            scope: self.cwd.to_string_lossy().into_owned(),
            refused: Arc::new(std::sync::Mutex::new(None)),
        };
        Some(Arc::new(crate::external_reads::ReadLabels::new(
            flow,
            self.shared.clone(),
            &roots,
            cell.clone(),
            hide,
            gate,
            (!endorsed).then(|| Label::from_network("network")),
        )))
    }

    /// Confidential files the program was not given: hidden from it (`/dev/null`
    /// inside the sandbox). Looked for at any depth under the working directory and
    /// the write roots — by the classification (`.env`, keys) and by the labels
    /// safesh recorded (a copy of a secret under another name); a file named in
    /// the arguments stays visible (and labels the output).
    fn secrets_to_hide(
        &self,
        write: &[std::path::PathBuf],
        argv: &[String],
    ) -> Result<Vec<std::path::PathBuf>, Refusal> {
        let Some(flow) = &self.shared.flow else {
            return Ok(Vec::new());
        };
        let resolve = |p: std::path::PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        let named: Vec<std::path::PathBuf> = argv
            .iter()
            .skip(1)
            .map(|a| resolve(crate::host::normalize(&self.cwd.join(a))))
            .collect();
        let mut roots = vec![resolve(self.cwd.clone())];
        roots.extend(write.iter().filter(|w| w.is_dir()).cloned().map(resolve));
        roots.sort();
        roots.dedup();
        let (mut hide, complete) = flow.confidential_files(&roots)?;
        if !complete {
            // Said, not silent: what lies past the limit is not hidden.
            self.diag(format!(
                "{}: warning: the search for secret files stopped after {} directories; \
                 secret files beyond them are not hidden from this program",
                argv[0],
                safesh_flow::scan::MAX_DIRS
            ));
        }
        hide.retain(|p| !named.contains(p));
        Ok(hide)
    }
}

/// How many directory entries the scan for an external's written files may visit.
const WRITE_SCAN_LIMIT: usize = 20_000;

impl Shell {
    /// After an external program given or reading secret or untrusted data ran:
    /// every file it changed in the write roots carries what it was given (its
    /// stdin included) and what it read. Changed = modified or its inode changed
    /// (ctime): a file it renamed or linked keeps its mtime but is a new name for
    /// the bytes. Programs that touched only clean data are not scanned (builds
    /// stay fast and their outputs stay runnable). When it renamed a directory
    /// (`moved_dirs`), every file beneath a directory changed since is a new name
    /// too (a file's own ctime does not move with its directory).
    fn record_external_writes(
        &self,
        roots: &[std::path::PathBuf],
        since: std::time::SystemTime,
        wrote: &Label,
        moved_dirs: bool,
    ) -> Result<(), Refusal> {
        let Some(flow) = &self.shared.flow else {
            return Ok(());
        };
        if wrote.confidentiality.is_public() && safesh_flow::trust::is_trusted(wrote) {
            return Ok(());
        }
        let mut changed_dirs: Vec<std::path::PathBuf> = Vec::new();
        let mut failed = None;
        self.walk_write_roots(roots, |e, ft| {
            let path = e.path();
            let meta = e.metadata();
            // A file or directory it created may be named from what it was given:
            // the name carries that too (birth time where the filesystem keeps one).
            if meta
                .as_ref()
                .ok()
                .and_then(|m| m.created().or_else(|_| m.modified()).ok())
                .is_some_and(|c| c >= since)
            {
                flow.record_name(&path, wrote);
            }
            if ft.is_dir() {
                if moved_dirs && meta.as_ref().is_ok_and(|m| changed_since(m, since)) {
                    changed_dirs.push(path);
                }
                return true;
            }
            let moved = changed_dirs.iter().any(|d| path.starts_with(d));
            if ft.is_file()
                && (moved || meta.as_ref().is_ok_and(|m| changed_since(m, since)))
                && let Err(r) = flow.record_write(&path, wrote, true)
            {
                failed = Some(r);
                return false;
            }
            true
        });
        failed.map_or(Ok(()), Err)
    }

    /// Visits the entries (directories too) under `roots` and the cwd, at any
    /// depth (a directory before what it holds), at most [`WRITE_SCAN_LIMIT`]
    /// entries, until `visit` returns false.
    fn walk_write_roots(
        &self,
        roots: &[std::path::PathBuf],
        mut visit: impl FnMut(&std::fs::DirEntry, std::fs::FileType) -> bool,
    ) {
        let mut stack: Vec<std::path::PathBuf> = roots.to_vec();
        stack.push(self.cwd.clone());
        stack.sort();
        stack.dedup();
        let mut visited = 0usize;
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                visited += 1;
                if visited > WRITE_SCAN_LIMIT {
                    return;
                }
                let Ok(ft) = e.file_type() else { continue };
                if !visit(&e, ft) {
                    return;
                }
                if ft.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
}

/// The files hidden from a run, by identity: a program that may write can rename
/// the directory holding a hidden file (the file itself is a mount point and
/// cannot move), and the file must stay secret under its new name.
struct HiddenFiles(Vec<(std::path::PathBuf, u64, u64)>);

impl HiddenFiles {
    /// Device and inode of each hidden file, before the run.
    fn note(hide: &[std::path::PathBuf]) -> HiddenFiles {
        use std::os::unix::fs::MetadataExt;
        HiddenFiles(
            hide.iter()
                .filter_map(|p| {
                    let m = std::fs::symlink_metadata(p).ok()?;
                    Some((p.clone(), m.dev(), m.ino()))
                })
                .collect(),
        )
    }

    /// The hidden files no longer at their path after the run.
    fn moved(&self) -> Vec<&(std::path::PathBuf, u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        self.0
            .iter()
            .filter(|(p, dev, ino)| {
                std::fs::symlink_metadata(p).map_or(true, |m| (m.dev(), m.ino()) != (*dev, *ino))
            })
            .collect()
    }
}

impl Shell {
    /// After a run: a hidden file that is no longer where it was (its directory was
    /// renamed) is looked for in the write roots by inode, and its new path gets
    /// the label the old one had (recorded in the label store, so every later read
    /// and every later program's mask sees it). One `lstat` per hidden file when
    /// nothing moved.
    fn follow_moved_secrets(
        &self,
        hidden: &HiddenFiles,
        roots: &[std::path::PathBuf],
        program: &str,
    ) -> Result<(), Refusal> {
        use std::os::unix::fs::{DirEntryExt, MetadataExt};
        let Some(flow) = &self.shared.flow else {
            return Ok(());
        };
        let mut moved = hidden.moved();
        if moved.is_empty() {
            return Ok(());
        }
        let mut failed = None;
        self.walk_write_roots(roots, |e, ft| {
            if ft.is_dir() {
                return true;
            }
            // The inode comes with the directory entry; the device only on a hit.
            let ino = e.ino();
            if let Some(i) = moved.iter().position(|(_, _, i)| *i == ino)
                && e.metadata().is_ok_and(|m| m.dev() == moved[i].1)
            {
                let (old, _, _) = moved.swap_remove(i);
                let label = flow.file_label(old, None);
                if let Err(r) = flow.record_write(&e.path(), &label, true) {
                    failed = Some(r);
                    return false;
                }
            }
            !moved.is_empty()
        });
        if let Some(r) = failed {
            return Err(r);
        }
        for (old, _, _) in moved {
            // Deleted, or moved where the walk does not reach.
            if std::fs::symlink_metadata(old).is_err() {
                self.diag(format!(
                    "{program}: the hidden file {} is gone from its place; if it was moved, \
                     its new name is not known to be secret",
                    old.display()
                ));
            }
        }
        Ok(())
    }
}

/// A label without the sandboxed-run origin and the generic network mark (what the
/// program was given, not how it ran).
pub(crate) fn strip_sandboxed(l: &Label) -> Label {
    let origins = l
        .origins
        .iter()
        .filter(|a| {
            !matches!(a, safesh_label::Atom::Sandboxed(_))
                && !matches!(a, safesh_label::Atom::Network(h) if &**h == "network")
        })
        .cloned()
        .collect();
    Label::new(l.confidentiality.clone(), l.integrity.clone(), origins)
}

/// Modified, or its inode changed (renamed, linked, chmod), at or after `since`.
fn changed_since(m: &std::fs::Metadata, since: std::time::SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    if m.modified().is_ok_and(|t| t >= since) {
        return true;
    }
    let since = since
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ctime = std::time::Duration::new(
        m.ctime().max(0) as u64,
        m.ctime_nsec().clamp(0, 999_999_999) as u32,
    );
    ctime >= since
}
