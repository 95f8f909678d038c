//! Platform commands in the interpreter (`fs:read`, `http:post`,
//! `github:pr:list`): resolved after utilities and before external programs
//! (`Shell::resolve`), their words parsed and validated by `safesh-platform`,
//! then run through [`PlatformHost`], core's implementation of
//! [`safesh_platform::PlatformCtx`]: file access through the utility host
//! (the path checks and labels of `cat`/`tee`), writes over existing files
//! through the destructive commit point, requests through the egress decision
//! of `curl` with the platform's own host added for its commands, tokens
//! brokered. The JSON result is written on stdout with the command's label
//! (a network reply: the host's, untrusted).

use crate::error::{ErrorCode, Refusal};
use crate::host::ShellHost;
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use crate::io::{LabelCell, StageReader, StageWriter};
use safesh_label::Label;
use safesh_platform::{PlatformCommand, PlatformError, PlatformSettings, Risk};
use safesh_utils::{Egress, Host, Interrupt};
use std::path::Path;

/// The settings of platform `name` in `config` (`[platforms.NAME]`).
pub fn settings_of(config: &safesh_policy::config::Config, name: &str) -> PlatformSettings {
    match config.platforms.get(name) {
        Some(p) => PlatformSettings {
            base_url: p.base_url.clone(),
            token_env: p.token_env.clone(),
            default_owner: p.default_owner.clone(),
        },
        None => PlatformSettings::default(),
    }
}

/// The host a platform's commands may reach beyond the network list: its
/// `base_url`'s (`github`: api.github.com unless configured).
pub fn platform_host(config: &safesh_policy::config::Config, namespace: &str) -> Option<String> {
    let configured = config
        .platforms
        .get(namespace)
        .and_then(|p| p.base_url.as_deref());
    let base = match (namespace, configured) {
        (_, Some(b)) => b,
        ("github", None) => safesh_platform::github::DEFAULT_BASE_URL,
        _ => return None,
    };
    safesh_policy::config::url_host(base)
}

/// [`safesh_platform::PlatformCtx`] over one command's utility host.
struct PlatformHost<'a, 'h> {
    shell: &'a Shell,
    host: &'h ShellHost<'a>,
    cell: LabelCell,
    command: &'static dyn PlatformCommand,
    argv: &'h [Field],
}

impl safesh_platform::PlatformCtx for PlatformHost<'_, '_> {
    fn host(&self) -> &dyn Host {
        self.host
    }

    fn cwd(&self) -> &Path {
        &self.shell.cwd
    }

    fn settings(&self, name: &str) -> PlatformSettings {
        match &self.shell.shared.policy {
            Some(p) => settings_of(p.config(), name),
            None => PlatformSettings::default(),
        }
    }

    fn credential(&self, var: &str) -> Option<String> {
        let v = self.shell.vars.get(var)?;
        let value = v.as_str().to_string();
        // Its label (the token's named label: where it may flow) joins what
        // the command sends; the reply scope drops it again.
        self.host.env_read(var);
        Some(value)
    }

    fn commit_write(&self, path: &Path, words: &[usize]) -> Result<(), Interrupt> {
        let data = words
            .iter()
            .filter_map(|&i| self.argv.get(i))
            .fold(Label::empty(), |l, f| l.join(&f.label));
        let trusted = safesh_flow::trust::is_trusted(&data)
            && safesh_flow::trust::is_trusted(&self.shell.pc)
            && data.confidentiality.is_public();
        if trusted || self.shell.shared.flow.is_none() {
            return Ok(());
        }
        let target = path.display().to_string();
        self.shell
            .commit_shared(
                safesh_flow::CommitPoint::Destructive {
                    targets: vec![target.clone()],
                    op: safesh_flow::DestructiveOp::Overwrite,
                },
                &data,
                crate::flow::command_text(self.argv),
                &target,
            )
            .map(|warning| {
                if let Some(w) = warning {
                    self.shell.diag(format!("safesh: warning: {w}"));
                }
            })
            .map_err(|r| Interrupt(Box::new(r)))
    }

    fn egress(&self, request: &Egress<'_>, risk: Risk) -> Result<(), Interrupt> {
        // A command refused anything on the way does not connect with what it has left.
        if let Some(r) = crate::io::lock(&self.shell.shared.refusal).clone() {
            return Err(Interrupt(Box::new(r)));
        }
        self.shell
            .platform_egress(request, &self.cell.get(), risk, self.command.namespace())
            .map_err(|r| Interrupt(Box::new(r)))
    }
}

/// The refusal for a platform command's error (`None`: it failed on its own,
/// exit 1 with the message on stderr).
fn refusal_of(cmd: &dyn PlatformCommand, e: PlatformError) -> Result<Refusal, String> {
    match e {
        PlatformError::Usage {
            command,
            field,
            message,
        } => {
            let mut r = Refusal::new(ErrorCode::FlagNotAllowed, format!("{command}: {message}"))
                .rule("platform.input-schema")
                .command(command.clone())
                .suggest(format!(
                    "fix the argument as the schema says (`commands.describe {command}` shows it); example: {}",
                    cmd.example()
                ));
            r.details.flag = field.map(|f| format!("--{f}"));
            r.details.allowed = cmd
                .fields()
                .iter()
                .map(|f| {
                    let req = if f.required { ", required" } else { "" };
                    format!("--{} ({}{req}): {}", f.name, kind_name(f), f.description)
                })
                .collect();
            Ok(r)
        }
        PlatformError::MissingCredential {
            command,
            platform,
            var,
        } => Ok(Refusal::new(
            ErrorCode::ExecutionError,
            format!("{command}: the token variable {var} is not set"),
        )
        .rule(format!("platforms.{platform}.token_env"))
        .command(command)
        .suggest(format!(
            "ask the human to set {var} in safesh's environment, or to name another variable with [platforms.{platform}] token_env"
        ))),
        PlatformError::Interrupt(i) => Ok(crate::host::refusal_of(i)),
        PlatformError::Failed(msg) => Err(msg),
    }
}

fn kind_name(f: &safesh_platform::Field) -> &'static str {
    use safesh_platform::FieldKind as K;
    match f.kind {
        K::String => "string",
        K::Integer => "integer",
        K::Boolean => "boolean",
        K::StringMap => "object",
        K::Json => "JSON",
    }
}

impl Shell {
    /// Runs a platform command on this shell's fds: parse and validate its
    /// words, run it, print its JSON result.
    pub(crate) fn run_platform(
        &mut self,
        cmd: &'static dyn PlatformCommand,
        argv: Vec<Field>,
    ) -> Exec {
        let texts: Vec<String> = argv.iter().map(|f| f.text.clone()).collect();
        let args = match safesh_platform::parse_words(cmd, &texts) {
            Ok(a) => a,
            Err(e) => {
                return match refusal_of(cmd, e) {
                    Ok(r) => {
                        let r = crate::flow::withhold_secrets(r, &argv);
                        self.set_status(r.status());
                        Err(r.into())
                    }
                    Err(msg) => {
                        self.diag(msg);
                        self.set_status(2);
                        Ok(())
                    }
                };
            }
        };
        let label = argv.iter().fold(self.pc.clone(), |l, a| l.join(&a.label));
        let word_labels: Vec<Label> = argv.iter().map(|f| f.label.clone()).collect();
        let cell = LabelCell::new(label);
        let outcome = {
            // (Its stdin is not read: arguments carry everything.)
            let _stdin = StageReader::new(self.in_fd(0), cell.clone());
            let mut stdout = StageWriter::new(self.out_fd(1), cell.clone());
            let mut stderr = StageWriter::unbuffered(self.out_fd(2), cell.clone());
            let host =
                ShellHost::new(self, cell.clone()).with_word_labels(&texts, word_labels, &self.pc);
            let ctx = PlatformHost {
                shell: self,
                host: &host,
                cell: cell.clone(),
                command: cmd,
                argv: &argv,
            };
            let r = cmd.run(&args, &ctx);
            use std::io::Write;
            let status = match r {
                Ok(out) => {
                    if let Some(h) = &out.reply_host {
                        host.reply_begin(h);
                    }
                    let mut text = serde_json::to_vec_pretty(&out.value).unwrap_or_default();
                    text.push(b'\n');
                    let w = stdout.write_all(&text).and_then(|()| stdout.flush());
                    if out.reply_host.is_some() {
                        host.reply_end();
                    }
                    match w {
                        Ok(()) => Ok(0),
                        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(141),
                        Err(e) => {
                            let _ = writeln!(stderr, "{}: write error: {e}", cmd.name());
                            Ok(1)
                        }
                    }
                }
                Err(e) => match refusal_of(cmd, e) {
                    Ok(r) => Err(r),
                    // A refusal the host raised says it better than the I/O error.
                    Err(_) if crate::io::lock(&self.shared.refusal).is_some() => Ok(126),
                    Err(msg) => {
                        let _ = writeln!(stderr, "{msg}");
                        Ok(1)
                    }
                },
            };
            let _ = stderr.flush();
            (status, host.take_changed())
        };
        let (status, changed) = outcome;
        if let Some(flow) = &self.shared.flow {
            for p in &changed {
                let p = crate::host::normalize(&self.cwd.join(p));
                if p.is_file() {
                    flow.record_write(&p, &cell.get(), true)?;
                }
            }
        }
        match status {
            Ok(s) => {
                self.status_label = cell.get();
                self.set_status(s);
                let raised = crate::io::lock(&self.shared.refusal).take();
                if let Some(r) = raised {
                    self.set_status(r.status());
                    return Err(r.into());
                }
                Ok(())
            }
            Err(r) => {
                // A refusal the host raised first is the one to report.
                let raised = crate::io::lock(&self.shared.refusal).take();
                let r = crate::flow::withhold_secrets(raised.unwrap_or(r), &argv);
                self.set_status(r.status());
                Err(r.into())
            }
        }
    }

    /// [`Shell::egress`] for a platform command: the host list is the
    /// command's network list (`[sandbox] network` with `[platforms.http]
    /// allowed_domains`, or a `[commands."NAME"] network`) plus the
    /// platform's own host unless the network is off; a `write`-risk command
    /// passes the network-write commit point (untrusted data needs approval).
    pub(crate) fn platform_egress(
        &self,
        request: &Egress<'_>,
        data: &Label,
        risk: Risk,
        namespace: &str,
    ) -> Result<(), Refusal> {
        use safesh_policy::config::Network;
        let Some(policy) = &self.shared.policy else {
            return Err(Refusal::new(
                ErrorCode::PermissionDenied,
                format!("{}: no network without a policy", request.tool),
            ));
        };
        let own = platform_host(policy.config(), namespace);
        let host = safesh_flow::hosts::normalize_host(request.host);
        let profile = policy.profile(request.tool, Path::new(request.tool), &[], &self.cwd);
        let allowed = match &profile.network {
            Network::Off => false,
            Network::On => true,
            Network::Hosts(list) => {
                own.as_deref()
                    .is_some_and(|o| safesh_flow::hosts::normalize_host(o) == host)
                    || list
                        .iter()
                        .any(|p| safesh_flow::HostPattern::new(p).matches(&host))
            }
        };
        let mut list: Vec<String> = match &profile.network {
            Network::Hosts(l) => l.clone(),
            _ => Vec::new(),
        };
        if !matches!(profile.network, Network::Off) {
            list.extend(own);
        }
        self.decide_egress(request, data, risk.writes(), allowed, &list)
    }
}
