//! `[platforms.NAME]`: settings of the platform commands (`github:`, `http:`).
//!
//! ```toml
//! [platforms.github]
//! token_env = "GITHUB_TOKEN"          # the variable holding the token (never the token)
//! base_url = "https://api.github.com" # GitHub Enterprise or a test server
//! default_owner = "octocat"           # `github:pr:list repo` = octocat/repo
//!
//! [platforms.http]
//! allowed_domains = ["api.example.com"]   # joins [sandbox] network: one host list
//! ```
//!
//! After the layers merge ([`apply`]): `allowed_domains` join `[sandbox]
//! network`; a platform with a token gets a named label `platforms.NAME` for
//! its variable whose `may_flow_to` is its base URL's host (token brokering).
//! agsh's `.agsh/platforms.yaml` is read with the same keys
//! (`token: "${VAR}"` means `token_env = "VAR"`) under the same trust rule as
//! `safesh.toml` (see `load.rs`).

use super::load::ConfigError;
use super::schema::{Cx, Val, as_string, as_strings, as_table, entries, key_str, unknown};
use super::{Config, Network, Origin, PlatformConfig};

const S: &str = "[platforms]";
/// The platforms that have settings, and their keys.
pub(crate) const PLATFORMS: &[(&str, &[&str])] = &[
    ("github", &["token_env", "base_url", "default_owner"]),
    ("http", &["allowed_domains"]),
];
const GITHUB_HOST: &str = "api.github.com";
const GITHUB_TOKEN_ENV: &str = "GITHUB_TOKEN";

/// The host of an `http(s)://` URL (no port, lower case); `None` when it is
/// not one.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// A name an environment variable can have.
pub(crate) fn is_env_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Checks one setting's value; the message says what is wrong.
pub(crate) fn check_value(platform: &str, key: &str, value: &str) -> Result<(), String> {
    match key {
        "token_env" if !is_env_name(value) => Err(format!(
            "`token_env` in [platforms.{platform}] must name an environment variable (like GITHUB_TOKEN), not {value:?}"
        )),
        "base_url" if url_host(value).is_none() => Err(format!(
            "`base_url` in [platforms.{platform}] must be an http:// or https:// URL with a host, not {value:?}"
        )),
        _ => Ok(()),
    }
}

/// The `[platforms]` table of one file, in source order.
pub(crate) fn parse(cx: &Cx, t: &toml::de::DeTable) -> Result<Vec<PlatformConfig>, ConfigError> {
    let mut out = Vec::new();
    for (k, v) in entries(t) {
        let name = key_str(k);
        let Some((_, keys)) = PLATFORMS.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = PLATFORMS.iter().map(|(n, _)| *n).collect();
            return Err(unknown(cx, k, S, &known));
        };
        let section = format!("[platforms.{name}]");
        let mut p = PlatformConfig {
            name: name.to_string(),
            origins: vec![cx.origin(k.span())],
            ..PlatformConfig::default()
        };
        for (k, v) in entries(as_table(cx, name, S, v)?) {
            let key = key_str(k);
            if key == "token" {
                return Err(cx.err(
                    k.span(),
                    format!(
                        "a token is never written in the config: name the variable that holds it with `token_env` in {section}"
                    ),
                ));
            }
            if !keys.contains(&key) {
                return Err(unknown(cx, k, &section, keys));
            }
            setting(cx, &mut p, key, v, &section)?;
        }
        out.push(p);
    }
    Ok(out)
}

fn setting(
    cx: &Cx,
    p: &mut PlatformConfig,
    key: &str,
    v: &Val,
    section: &str,
) -> Result<(), ConfigError> {
    if key == "allowed_domains" {
        for (d, span) in as_strings(cx, key, section, v)? {
            if d.trim().is_empty() || d.contains(['/', ' ']) {
                return Err(cx.err(
                    span,
                    format!("`allowed_domains` in {section} holds host names, not {d:?}"),
                ));
            }
            p.allowed_domains.push(d);
        }
        return Ok(());
    }
    let value = as_string(cx, key, section, v)?;
    check_value(&p.name, key, &value).map_err(|m| cx.err(v.span(), m))?;
    let slot = match key {
        "token_env" => &mut p.token_env,
        "base_url" => &mut p.base_url,
        _ => &mut p.default_owner,
    };
    *slot = Some(value);
    Ok(())
}

/// Merges a later layer's settings: scalars replace, domains union.
pub(crate) fn merge(cfg: &mut Config, from: Vec<PlatformConfig>) {
    for p in from {
        let into = cfg
            .platforms
            .entry(p.name.clone())
            .or_insert_with(|| PlatformConfig {
                name: p.name.clone(),
                ..PlatformConfig::default()
            });
        into.base_url = p.base_url.or(into.base_url.take());
        into.token_env = p.token_env.or(into.token_env.take());
        into.default_owner = p.default_owner.or(into.default_owner.take());
        for d in p.allowed_domains {
            if !into.allowed_domains.contains(&d) {
                into.allowed_domains.push(d);
            }
        }
        into.origins.extend(p.origins);
    }
}

/// After every layer merged: `[platforms.http] allowed_domains` join
/// `[sandbox] network` (a host list; off becomes that list), and each
/// platform's token variable gets a named label `platforms.NAME` that may
/// flow to its base URL's host only.
pub(crate) fn apply(cfg: &mut Config) {
    if let Some(http) = cfg.platforms.get("http")
        && !http.allowed_domains.is_empty()
    {
        let domains = http.allowed_domains.clone();
        cfg.sandbox.network = match std::mem::replace(&mut cfg.sandbox.network, Network::Off) {
            Network::On => Network::On,
            Network::Off => Network::Hosts(domains),
            Network::Hosts(mut list) => {
                for d in domains {
                    if !list.contains(&d) {
                        list.push(d);
                    }
                }
                Network::Hosts(list)
            }
        };
    }
    if let Some(gh) = cfg.platforms.get("github") {
        let var = gh
            .token_env
            .clone()
            .unwrap_or_else(|| GITHUB_TOKEN_ENV.to_string());
        let host = gh
            .base_url
            .as_deref()
            .and_then(url_host)
            .unwrap_or_else(|| GITHUB_HOST.to_string());
        let label = cfg
            .labels
            .named
            .entry("platforms.github".to_string())
            .or_default();
        if !label.env.contains(&var) {
            label.env.push(var);
        }
        if !label.may_flow_to.contains(&host) {
            label.may_flow_to.push(host);
        }
    }
}

/// The file agsh keeps its platform settings in, relative to a project root.
pub const YAML_FILE: &str = ".agsh/platforms.yaml";

/// The nearest `.agsh/platforms.yaml` in `cwd` or one of its ancestors.
pub fn find_yaml(cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    cwd.ancestors()
        .map(|d| d.join(YAML_FILE))
        .find(|f| f.is_file())
}

/// One scalar of the YAML subset: quoted (`"…"`, `'…'`) or plain.
fn yaml_scalar(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return (!inner.contains(['"', '\\'])).then(|| inner.to_string());
    }
    if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return (!inner.contains('\'')).then(|| inner.to_string());
    }
    let plain = !s.is_empty()
        && !s.starts_with(['[', '{', '&', '*', '!', '|', '>', '%', '@', '`', '"', '\''])
        && !s.contains(": ");
    plain.then(|| s.to_string())
}

/// A line without its comment (a `#` at the start or after a blank, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev == ' ' || prev == '\t' => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// agsh's `.agsh/platforms.yaml`: a strict subset of YAML — platform names,
/// each a mapping of keys to scalars or lists of scalars (block `- x` or flow
/// `[x, y]`). Anything else is an error naming the line. `token: "${VAR}"`
/// means `token_env = "VAR"`; a literal token is refused (it would be a
/// credential in a file).
pub(crate) fn parse_yaml(
    file: &std::path::Path,
    text: &str,
) -> Result<Vec<PlatformConfig>, ConfigError> {
    let err = |line: usize, message: String| ConfigError::Invalid {
        path: file.to_path_buf(),
        line,
        column: 1,
        message,
    };
    let mut out: Vec<PlatformConfig> = Vec::new();
    let mut list_key: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = strip_comment(raw).trim_end();
        if line.trim().is_empty() || line.trim() == "---" {
            continue;
        }
        if line.contains('\t') {
            return Err(err(
                n,
                "tabs are not allowed for indentation in YAML".into(),
            ));
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if indent == 0 {
            let name = body
                .strip_suffix(':')
                .ok_or_else(|| err(n, format!("expected `PLATFORM:`, found {body:?}")))?;
            let Some((_, keys)) = PLATFORMS.iter().find(|(p, _)| *p == name) else {
                let known: Vec<&str> = PLATFORMS.iter().map(|(p, _)| *p).collect();
                return Err(err(
                    n,
                    format!(
                        "unknown platform `{name}`; expected one of: {}",
                        known.join(", ")
                    ),
                ));
            };
            let _ = keys;
            out.push(PlatformConfig {
                name: name.to_string(),
                origins: vec![Origin {
                    file: Some(file.to_path_buf()),
                    line: n,
                }],
                ..PlatformConfig::default()
            });
            list_key = None;
            continue;
        }
        let Some(p) = out.last_mut() else {
            return Err(err(n, "a setting before any `PLATFORM:` line".into()));
        };
        let section = format!("`{}` in {}", p.name, YAML_FILE);
        if let Some(item) = body.strip_prefix("- ").or((body == "-").then_some("")) {
            let Some(key) = &list_key else {
                return Err(err(n, format!("a list item outside a list in {section}")));
            };
            let v = yaml_scalar(item)
                .ok_or_else(|| err(n, format!("`{key}`: {item:?} is not a plain value")))?;
            p.allowed_domains.push(v);
            continue;
        }
        let (key, value) = body
            .split_once(':')
            .ok_or_else(|| err(n, format!("expected `key: value`, found {body:?}")))?;
        let key = key.trim();
        let value = value.trim();
        let keys = PLATFORMS
            .iter()
            .find(|(q, _)| *q == p.name)
            .map(|(_, k)| *k)
            .unwrap_or(&[]);
        list_key = None;
        match key {
            "token" => {
                let v = yaml_scalar(value).unwrap_or_default();
                let var = v
                    .strip_prefix("${")
                    .and_then(|r| r.strip_suffix('}'))
                    .filter(|v| is_env_name(v))
                    .ok_or_else(|| {
                        err(
                            n,
                            format!(
                                "`token` in {section} must name a variable as \"${{VAR}}\": a credential is never copied into config"
                            ),
                        )
                    })?;
                if !keys.contains(&"token_env") {
                    return Err(err(n, format!("{section} takes no token")));
                }
                p.token_env = Some(var.to_string());
            }
            "allowed_domains" if keys.contains(&key) => {
                if value.is_empty() {
                    list_key = Some(key.to_string());
                } else if let Some(inner) =
                    value.strip_prefix('[').and_then(|r| r.strip_suffix(']'))
                {
                    for item in inner.split(',').filter(|s| !s.trim().is_empty()) {
                        let v = yaml_scalar(item).ok_or_else(|| {
                            err(n, format!("`{key}`: {item:?} is not a plain value"))
                        })?;
                        p.allowed_domains.push(v);
                    }
                } else {
                    return Err(err(n, format!("`{key}` in {section} must be a list")));
                }
            }
            k if keys.contains(&k) => {
                let v = yaml_scalar(value)
                    .ok_or_else(|| err(n, format!("`{k}`: {value:?} is not a plain value")))?;
                check_value(&p.name, k, &v).map_err(|m| err(n, m))?;
                let slot = match k {
                    "token_env" => &mut p.token_env,
                    "base_url" => &mut p.base_url,
                    _ => &mut p.default_owner,
                };
                *slot = Some(v);
            }
            k => {
                return Err(err(
                    n,
                    format!(
                        "unknown key `{k}` in {section}; expected one of: {}",
                        keys.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// A platform's origin line for `config show`.
pub(crate) fn origin_text(p: &PlatformConfig) -> String {
    p.origins
        .first()
        .map(Origin::to_string)
        .unwrap_or_else(|| "built-in".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agsh_yaml_is_read_strictly() {
        let f = std::path::Path::new("/p/.agsh/platforms.yaml");
        let ok = "# agsh\ngithub:\n  token: \"${GITHUB_TOKEN}\"\n  default_owner: \"cgast\"\nhttp:\n  allowed_domains:\n    - \"api.github.com\"\n    - httpbin.org  # tests\n";
        let p = parse_yaml(f, ok).map_err(|e| e.to_string());
        let p = p.as_deref().unwrap_or(&[]);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].token_env.as_deref(), Some("GITHUB_TOKEN"));
        assert_eq!(p[0].default_owner.as_deref(), Some("cgast"));
        assert_eq!(p[1].allowed_domains, vec!["api.github.com", "httpbin.org"]);
        let literal = "github:\n  token: ghp_abcdef123456\n";
        let e = parse_yaml(f, literal)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(":2:") && e.contains("never copied"), "{e}");
        assert!(parse_yaml(f, "gitlab:\n  token: x\n").is_err());
        assert!(parse_yaml(f, "github:\n  colour: red\n").is_err());
    }

    #[test]
    fn hosts_of_urls() {
        assert_eq!(
            url_host("https://api.github.com").as_deref(),
            Some("api.github.com")
        );
        assert_eq!(
            url_host("http://127.0.0.1:8080/api/v3").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            url_host("http://u:p@Ghe.Example.com/").as_deref(),
            Some("ghe.example.com")
        );
        assert_eq!(url_host("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(url_host("ftp://x"), None);
        assert_eq!(url_host("https://"), None);
    }
}
