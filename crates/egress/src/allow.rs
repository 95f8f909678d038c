//! The allowlist: which hosts (and ports) a sandboxed program may reach.
//!
//! Entries are exact host names (`api.github.com`), wildcards (`*.example.com`: any
//! name strictly below `example.com`, not `example.com` itself), or IP literals
//! (`127.0.0.1`, `::1`, `[::1]`). Any entry may carry a port (`host:443`,
//! `[::1]:8080`); without one every port is allowed. Names are compared without case
//! and without a trailing dot.
//!
//! The check is made on the host the client *asked for*: a name never matches an IP
//! entry and an IP never matches a name entry, whatever DNS says.

use std::fmt;
use std::net::IpAddr;

use crate::error::{InvalidEntry, RequestError};

/// A host as a client named it: a (normalized) DNS name or an IP literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lower-case, without a trailing dot.
    Name(String),
    /// An IP literal (IPv4-mapped IPv6 addresses are stored as IPv4).
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
        }
    }
}

impl Host {
    /// Parses a host as a client wrote it: an IP literal (IPv6 with or without
    /// brackets) or a DNS name (letters, digits, `-`, `_`, dot-separated labels of at
    /// most 63 bytes, at most 253 bytes in all, not ending in an all-digit label so that
    /// `127.1` or `0x7f.1` cannot reach the resolver as a disguised address).
    pub fn parse(s: &str) -> Option<Host> {
        let inner = s
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(s);
        if let Ok(ip) = inner.parse::<IpAddr>() {
            // Brackets belong to IPv6 only.
            if inner.len() != s.len() && ip.is_ipv4() {
                return None;
            }
            return Some(Host::Ip(ip.to_canonical()));
        }
        if inner.len() != s.len() {
            return None;
        }
        let name = s.strip_suffix('.').unwrap_or(s);
        if name.is_empty() || name.len() > 253 {
            return None;
        }
        let mut last = "";
        for label in name.split('.') {
            let ok = !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !label.starts_with('-')
                && !label.ends_with('-');
            if !ok {
                return None;
            }
            last = label;
        }
        if last.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Host::Name(name.to_ascii_lowercase()))
    }
}

/// Parses `host:port` (or `[v6]:port`), as in a CONNECT request or a URL authority.
/// Without a port, `default_port` is used, or the authority is rejected.
pub(crate) fn parse_authority(
    s: &str,
    default_port: Option<u16>,
) -> Result<(Host, u16), RequestError> {
    if s.contains('@') {
        return Err(RequestError::Bad("user info in the host is not supported"));
    }
    let (host, port) = split_host_port(s).ok_or(RequestError::Bad("malformed host:port"))?;
    let host = Host::parse(host).ok_or(RequestError::Bad("not a valid host name"))?;
    let port = match port {
        Some(p) => parse_port(p).ok_or(RequestError::Bad("not a valid port"))?,
        None => default_port.ok_or(RequestError::Bad("missing port"))?,
    };
    Ok((host, port))
}

/// Splits `host[:port]`, `[v6][:port]`; a bare IPv6 literal (several colons, no
/// brackets) is all host.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    if s.starts_with('[') {
        let end = s.find(']')?;
        let (host, rest) = s.split_at(end + 1);
        return match rest {
            "" => Some((host, None)),
            _ => Some((host, Some(rest.strip_prefix(':')?))),
        };
    }
    match s.matches(':').count() {
        0 => Some((s, None)),
        1 => s.split_once(':').map(|(h, p)| (h, Some(p))),
        _ => Some((s, None)),
    }
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse::<u16>().ok().filter(|&n| n != 0)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Exact(String),
    /// `.example.com` for `*.example.com`.
    Below(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    pattern: Pattern,
    port: Option<u16>,
}

/// Why a host was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denial {
    /// No entry names this host.
    #[error("host not in the allowlist")]
    Host,
    /// Entries name this host, but only with other ports.
    #[error("port {0} not allowed for this host")]
    Port(u16),
}

/// A parsed allowlist. See the module documentation for the entry syntax.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    entries: Vec<Entry>,
}

impl Allowlist {
    /// Parses entries; any entry that is not a host, wildcard or IP literal (with an
    /// optional port) is an error, so a typo never silently allows nothing or too much.
    pub fn parse<I, S>(entries: I) -> Result<Allowlist, InvalidEntry>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let entries = entries
            .into_iter()
            .map(|e| parse_entry(e.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Allowlist { entries })
    }

    /// Whether `host:port` may be reached.
    pub fn check(&self, host: &Host, port: u16) -> Result<(), Denial> {
        let mut host_named = false;
        for e in &self.entries {
            let matches = match (&e.pattern, host) {
                (Pattern::Exact(p), Host::Name(n)) => p == n,
                (Pattern::Below(suffix), Host::Name(n)) => {
                    n.len() > suffix.len() && n.ends_with(suffix.as_str())
                }
                (Pattern::Ip(p), Host::Ip(ip)) => p == ip,
                _ => false,
            };
            if matches {
                host_named = true;
                if e.port.is_none_or(|p| p == port) {
                    return Ok(());
                }
            }
        }
        Err(if host_named {
            Denial::Port(port)
        } else {
            Denial::Host
        })
    }

    /// Whether the list is empty (everything is denied).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn parse_entry(raw: &str) -> Result<Entry, InvalidEntry> {
    let bad = |reason| InvalidEntry {
        entry: raw.to_string(),
        reason,
    };
    let s = raw.trim();
    if s.is_empty() {
        return Err(bad("empty entry"));
    }
    if s.contains("://") || s.contains('/') {
        return Err(bad("write a host name, not a URL"));
    }
    if s.contains('@') {
        return Err(bad("user info is not allowed"));
    }
    let (host, port) = split_host_port(s).ok_or_else(|| bad("malformed host:port"))?;
    let port = match port {
        Some(p) => Some(parse_port(p).ok_or_else(|| bad("not a valid port (1-65535)"))?),
        None => None,
    };
    let pattern = if let Some(rest) = host.strip_prefix("*.") {
        match Host::parse(rest) {
            Some(Host::Name(n)) => Pattern::Below(format!(".{n}")),
            _ => return Err(bad("a wildcard must be `*.` followed by a host name")),
        }
    } else if host.contains('*') {
        return Err(bad("a wildcard is only allowed as a leading `*.`"));
    } else {
        match Host::parse(host) {
            Some(Host::Name(n)) => Pattern::Exact(n),
            Some(Host::Ip(ip)) => Pattern::Ip(ip),
            None => return Err(bad("not a host name or IP address")),
        }
    };
    Ok(Entry { pattern, port })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn name(s: &str) -> Host {
        Host::parse(s).unwrap()
    }

    #[test]
    fn exact_wildcard_ip_and_ports() {
        let a = Allowlist::parse([
            "api.github.com",
            "*.example.com",
            "127.0.0.1",
            "localhost:8080",
            "[::1]:443",
            "Upper.Case.",
        ])
        .unwrap();
        assert!(a.check(&name("api.github.com"), 443).is_ok());
        assert!(a.check(&name("API.GitHub.com."), 80).is_ok());
        assert_eq!(a.check(&name("github.com"), 443), Err(Denial::Host));
        assert_eq!(a.check(&name("xapi.github.com"), 443), Err(Denial::Host));
        assert!(a.check(&name("a.example.com"), 1).is_ok());
        assert!(a.check(&name("a.b.example.com"), 1).is_ok());
        assert_eq!(a.check(&name("example.com"), 1), Err(Denial::Host));
        assert_eq!(a.check(&name("evilexample.com"), 1), Err(Denial::Host));
        assert_eq!(a.check(&name("example.com.evil.org"), 1), Err(Denial::Host));
        assert!(a.check(&name("127.0.0.1"), 9).is_ok());
        assert!(a.check(&name("::ffff:127.0.0.1"), 9).is_ok());
        assert!(a.check(&name("localhost"), 8080).is_ok());
        assert_eq!(a.check(&name("localhost"), 8081), Err(Denial::Port(8081)));
        assert!(a.check(&name("[::1]"), 443).is_ok());
        assert!(a.check(&name("::1"), 443).is_ok());
        assert_eq!(a.check(&name("::1"), 80), Err(Denial::Port(80)));
        assert!(a.check(&name("upper.case"), 1).is_ok());
    }

    #[test]
    fn names_and_addresses_never_cross() {
        let a = Allowlist::parse(["127.0.0.1"]).unwrap();
        assert_eq!(a.check(&name("localhost"), 80), Err(Denial::Host));
        let a = Allowlist::parse(["localhost"]).unwrap();
        assert_eq!(a.check(&name("127.0.0.1"), 80), Err(Denial::Host));
    }

    #[test]
    fn disguised_addresses_are_not_names() {
        for s in [
            "127.1",
            "0x7f.1",
            "2130706433",
            "1.2.3.4.5",
            "[127.0.0.1]",
            "a..b",
        ] {
            assert_eq!(Host::parse(s), None, "{s}");
        }
        for s in ["a b", "a\0b", "-a.com", "a-.com", "", "."] {
            assert_eq!(Host::parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn bad_entries_are_errors() {
        for e in [
            "",
            "https://api.github.com",
            "api.github.com/x",
            "*",
            "*example.com",
            "a.*.com",
            "host:0",
            "host:99999",
            "host:",
            "u@host",
            "127.1",
        ] {
            assert!(Allowlist::parse([e]).is_err(), "{e:?}");
        }
    }

    #[test]
    fn authorities() {
        assert_eq!(
            parse_authority("h.com:443", None).unwrap(),
            (name("h.com"), 443)
        );
        assert_eq!(
            parse_authority("h.com", Some(80)).unwrap(),
            (name("h.com"), 80)
        );
        assert_eq!(parse_authority("[::1]:8", None).unwrap(), (name("::1"), 8));
        assert!(parse_authority("h.com", None).is_err());
        assert!(parse_authority("h.com:x", None).is_err());
        assert!(parse_authority("u:p@h.com:1", None).is_err());
        // An unbracketed IPv6 literal has no port.
        assert!(parse_authority("::1:80", None).is_err());
    }
}
