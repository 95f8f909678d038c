//! May-flow-to: the hosts a label's data may be sent to (token brokering).
//!
//! Every confidentiality clause of the data must admit the host. A clause admits
//! it when one of its atoms is `Secret(NAME)` for a named label `[labels.NAME]`
//! whose `may_flow_to` matches the host. The generic `secret` class (secret files,
//! masked variables) admits no host; other atoms admit none either. Public data
//! (no clause) flows anywhere, so data that came *from* a host (origin
//! `Network(host)`) is public and may go anywhere unless joined with secrets.
//!
//! Host patterns: `api.github.com` matches exactly that host; `*.example.com`
//! matches any subdomain at any depth (`a.example.com`, `a.b.example.com`) but not
//! `example.com` itself. Matching ignores ASCII case and a trailing dot; a `:port`
//! suffix on the host being checked is ignored. The pseudo-host `model` stands for
//! the model's context (see [`crate::redact`]).

use safesh_label::{Atom, Clause, Label};
use safesh_policy::config::Config;
use std::collections::BTreeMap;

/// One `may_flow_to` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPattern {
    written: String,
    /// Normalized: lower case, no trailing dot; `*.` kept for suffix patterns.
    norm: String,
}

/// Lower case, without a trailing dot or a `:port` suffix.
pub fn normalize_host(host: &str) -> String {
    let mut h = host.trim().to_ascii_lowercase();
    if let Some((name, port)) = h.rsplit_once(':')
        && !name.contains(':')
        && !port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
    {
        h = name.to_string();
    }
    h.trim_end_matches('.').to_string()
}

impl HostPattern {
    /// A pattern as written in `may_flow_to`.
    pub fn new(written: &str) -> Self {
        let norm = written.trim().to_ascii_lowercase();
        HostPattern {
            written: written.to_string(),
            norm: norm.trim_end_matches('.').to_string(),
        }
    }

    /// Whether `host` matches (see the module docs).
    pub fn matches(&self, host: &str) -> bool {
        let host = normalize_host(host);
        if host.is_empty() {
            return false;
        }
        match self.norm.strip_prefix("*.") {
            Some(suffix) => host
                .strip_suffix(suffix)
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            None => host == self.norm,
        }
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.written
    }
}

/// Why data may not flow to a host.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct FlowDenied {
    /// The host it was going to.
    pub host: String,
    /// The confidentiality clause that blocked, as atoms (`secret:github_token`).
    pub atom: String,
    /// The label name(s) of that clause (`secret`, `github_token`).
    pub label: String,
    /// The hosts that clause does admit (empty for generic secrets).
    pub allowed: Vec<String>,
}

impl FlowDenied {
    fn message(&self) -> String {
        if self.allowed.is_empty() {
            format!(
                "data labeled `{}` may not be sent to {} (it may not leave this machine)",
                self.label, self.host
            )
        } else {
            format!(
                "data labeled `{}` may be sent only to {}, not to {}",
                self.label,
                self.allowed.join(", "),
                self.host
            )
        }
    }
}

/// The named labels' `may_flow_to` lists.
#[derive(Clone, Debug, Default)]
pub struct HostPolicy {
    named: BTreeMap<String, Vec<HostPattern>>,
}

impl HostPolicy {
    /// From `[labels.NAME] may_flow_to`.
    pub fn from_config(config: &Config) -> Self {
        HostPolicy::new(
            config
                .labels
                .named
                .iter()
                .map(|(n, l)| (n.clone(), l.may_flow_to.clone())),
        )
    }

    /// From (label name, host patterns) pairs.
    pub fn new(named: impl IntoIterator<Item = (String, Vec<String>)>) -> Self {
        HostPolicy {
            named: named
                .into_iter()
                .map(|(n, hosts)| (n, hosts.iter().map(|h| HostPattern::new(h)).collect()))
                .collect(),
        }
    }

    /// True when a named label of this name exists.
    pub fn is_named(&self, name: &str) -> bool {
        self.named.contains_key(name)
    }

    /// The patterns one atom admits.
    fn admitted(&self, atom: &Atom) -> &[HostPattern] {
        match atom {
            Atom::Secret(n) => self.named.get(&**n).map_or(&[], Vec::as_slice),
            _ => &[],
        }
    }

    fn clause_admits(&self, clause: &Clause, host: &str) -> bool {
        clause
            .0
            .iter()
            .any(|a| self.admitted(a).iter().any(|p| p.matches(host)))
    }

    /// The label of a reply from `host` to a request that sent data labeled
    /// `sent`: the clauses `host` is trusted with (a named label whose
    /// `may_flow_to` admits it: a brokered token) do not label what the host
    /// answers — the reply is the host's data, not the token. Every other clause
    /// stays (a generic secret a human let through still marks the reply, which
    /// may echo it). Integrity and origins are kept. A reply that quotes the
    /// token back is caught by the known-value scan at the model sink.
    pub fn reply_label(&self, sent: &Label, host: &str) -> Label {
        if sent.confidentiality.is_public() {
            return sent.clone();
        }
        let kept: std::collections::BTreeSet<Clause> = sent
            .confidentiality
            .0
            .iter()
            .filter(|c| !self.clause_admits(c, host))
            .cloned()
            .collect();
        if kept.len() == sent.confidentiality.0.len() {
            return sent.clone();
        }
        Label::new(
            safesh_label::Confidentiality(kept),
            sent.integrity.clone(),
            sent.origins.clone(),
        )
    }

    /// Whether data labeled `data` may be sent to `host`; the error names the
    /// first clause that does not admit it.
    pub fn flows_to_host(&self, data: &Label, host: &str) -> Result<(), FlowDenied> {
        for clause in &data.confidentiality.0 {
            if !self.clause_admits(clause, host) {
                let atom = clause
                    .0
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("|");
                let label = clause_names(clause).join("|");
                let allowed = clause
                    .0
                    .iter()
                    .flat_map(|a| self.admitted(a))
                    .map(|p| p.as_str().to_string())
                    .collect();
                return Err(FlowDenied {
                    host: normalize_host(host),
                    atom,
                    label,
                    allowed,
                });
            }
        }
        Ok(())
    }
}

/// The names of a clause's atoms (`secret`, `github_token`), for messages.
pub fn clause_names(clause: &Clause) -> Vec<String> {
    clause
        .0
        .iter()
        .map(|a| match a {
            Atom::Secret(n) => n.to_string(),
            other => other.to_string(),
        })
        .collect()
}
