//! `github:` — GitHub's REST API v3 (or GitHub Enterprise, or a test server:
//! `[platforms.github] base_url`). The token (`token_env`, default
//! `GITHUB_TOKEN`) is brokered: sent only in the `Authorization` header, only
//! to the base URL's host, never printed. Lists follow `Link: rel="next"`;
//! error and rate-limit responses become clear messages.

use crate::args::Args;
use crate::command::{Credential, Field, FieldKind, Output, PlatformCommand, Risk};
use crate::ctx::PlatformCtx;
use crate::error::PlatformError;
use crate::net::{Request, Response, send};
use reqwest::Url;
use serde_json::{Value, json};
use std::time::Duration;

/// The `github:` commands.
pub static COMMANDS: &[&dyn PlatformCommand] =
    &[&RepoInfo, &PrList, &PrView, &IssueList, &IssueCreate];

/// The API when the config names none.
pub const DEFAULT_BASE_URL: &str = "https://api.github.com";
/// The token variable when the config names none.
pub const DEFAULT_TOKEN_ENV: &str = "GITHUB_TOKEN";

const TOKEN: &[Credential] = &[Credential {
    platform: "github",
    key: "token_env",
    default_env: DEFAULT_TOKEN_ENV,
}];

const REPO: Field = Field::positional(
    "repo",
    "The repository as OWNER/NAME (or NAME with [platforms.github] default_owner)",
);
const STATE: Field = Field::optional("state", FieldKind::String, "open (default), closed or all")
    .one_of(&["open", "closed", "all"]);
const LIMIT: Field = Field::optional(
    "limit",
    FieldKind::Integer,
    "The most items returned (default 30, at most 1000); pages are followed",
);
const MAX_BODY: u64 = 16 << 20;

/// One call to the API: the base URL, the token and the error mapping.
struct Api<'a> {
    ctx: &'a dyn PlatformCtx,
    command: &'static str,
    base: Url,
    token: String,
    default_owner: Option<String>,
}

impl<'a> Api<'a> {
    fn new(ctx: &'a dyn PlatformCtx, command: &'static str) -> Result<Api<'a>, PlatformError> {
        let s = ctx.settings("github");
        let base_text = s.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let mut base = Url::parse(base_text).map_err(|e| {
            PlatformError::Failed(format!(
                "{command}: [platforms.github] base_url {base_text:?} is not a URL: {e}"
            ))
        })?;
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        let var = s.token_env.as_deref().unwrap_or(DEFAULT_TOKEN_ENV);
        let token = ctx
            .credential(var)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| PlatformError::MissingCredential {
                command: command.to_string(),
                platform: "github".to_string(),
                var: var.to_string(),
            })?;
        Ok(Api {
            ctx,
            command,
            base,
            token: token.trim().to_string(),
            default_owner: s.default_owner,
        })
    }

    fn host(&self) -> Option<String> {
        self.base.host_str().map(str::to_string)
    }

    /// `OWNER/NAME` from the argument (or the default owner).
    fn repo(&self, args: &Args) -> Result<(String, String), PlatformError> {
        let text = args.str("repo").unwrap_or_default();
        let valid = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        let (owner, name) = match text.split_once('/') {
            Some((o, n)) => (o.to_string(), n.to_string()),
            None => match &self.default_owner {
                Some(o) => (o.clone(), text.to_string()),
                None => {
                    return Err(PlatformError::field(
                        self.command,
                        "repo",
                        format!(
                            "--repo {text:?}: give OWNER/NAME (no [platforms.github] default_owner is set)"
                        ),
                    ));
                }
            },
        };
        if !valid(&owner) || !valid(&name) {
            return Err(PlatformError::field(
                self.command,
                "repo",
                format!("--repo {text:?} is not OWNER/NAME"),
            ));
        }
        Ok((owner, name))
    }

    fn url(&self, path: &str) -> Result<Url, PlatformError> {
        self.base
            .join(path.trim_start_matches('/'))
            .map_err(|e| PlatformError::Failed(format!("{}: {e}", self.command)))
    }

    fn request(&self, method: &'static str, url: Url, body: Option<&Value>) -> Request {
        let mut headers = vec![
            (
                "Accept".to_string(),
                b"application/vnd.github+json".to_vec(),
            ),
            ("X-GitHub-Api-Version".to_string(), b"2022-11-28".to_vec()),
            ("User-Agent".to_string(), b"safesh".to_vec()),
            (
                "Authorization".to_string(),
                format!("Bearer {}", self.token).into_bytes(),
            ),
        ];
        if body.is_some() {
            headers.push(("Content-Type".to_string(), b"application/json".to_vec()));
        }
        Request {
            method,
            url,
            headers,
            body: body.map(|b| b.to_string().into_bytes()),
            timeout: Duration::from_secs(30),
            max_bytes: MAX_BODY,
        }
    }

    /// One request; a non-2xx answer becomes a clear error.
    fn call(
        &self,
        risk: Risk,
        method: &'static str,
        url: Url,
        body: Option<&Value>,
    ) -> Result<(Response, Value), PlatformError> {
        let req = self.request(method, url, body);
        let resp = send(self.ctx, self.command, risk, &req)?;
        if !(200..300).contains(&resp.status) {
            return Err(PlatformError::Failed(error_message(self.command, &resp)));
        }
        let v = serde_json::from_slice(&resp.body).map_err(|e| {
            PlatformError::Failed(format!(
                "{}: the answer from {} is not JSON: {e}",
                self.command, resp.url
            ))
        })?;
        Ok((resp, v))
    }

    /// GETs every page of a list (`Link: <…>; rel="next"`) up to `limit` items.
    fn list(&self, first: Url, limit: usize) -> Result<Vec<Value>, PlatformError> {
        let mut items = Vec::new();
        let mut next = Some(first);
        while let Some(url) = next.take() {
            if self.ctx.host().cancelled() {
                break;
            }
            let (resp, v) = self.call(Risk::ReadOnly, "GET", url, None)?;
            let Value::Array(page) = v else {
                return Err(PlatformError::Failed(format!(
                    "{}: expected a list from {}",
                    self.command, resp.url
                )));
            };
            let empty = page.is_empty();
            items.extend(page);
            if items.len() >= limit || empty {
                break;
            }
            next = resp
                .header("link")
                .and_then(next_link)
                .and_then(|u| Url::parse(&u).ok());
        }
        items.truncate(limit);
        Ok(items)
    }
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

/// What a failed API call says: status, GitHub's message, validation errors,
/// and for a rate limit when it resets.
fn error_message(command: &str, r: &Response) -> String {
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let msg = body["message"].as_str().unwrap_or("").to_string();
    let remaining = r.header("x-ratelimit-remaining");
    let detail = match r.status {
        401 => "bad credentials: the token was refused (check the variable [platforms.github] token_env names)".to_string(),
        403 | 429 if remaining == Some("0") || msg.to_ascii_lowercase().contains("rate limit") => {
            let reset = r
                .header("x-ratelimit-reset")
                .and_then(|s| s.parse::<i64>().ok())
                .map(|t| format!("; it resets at {}", crate::fs::rfc3339(t)))
                .unwrap_or_default();
            let after = r
                .header("retry-after")
                .map(|s| format!("; retry after {s} s"))
                .unwrap_or_default();
            format!("rate limit exceeded{reset}{after}")
        }
        403 => "forbidden: the token may not do this".to_string(),
        404 => "not found (or the token cannot see it)".to_string(),
        422 => {
            let errors: Vec<String> = body["errors"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|e| match e {
                            Value::String(s) => s.clone(),
                            e => {
                                let field = e["field"].as_str().unwrap_or("");
                                let code = e["code"].as_str().unwrap_or("");
                                let m = e["message"].as_str().unwrap_or("");
                                format!("{field} {code} {m}").trim().to_string()
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            if errors.is_empty() {
                "validation failed".to_string()
            } else {
                format!("validation failed: {}", errors.join("; "))
            }
        }
        s => format!("HTTP {s}"),
    };
    let shown = if msg.is_empty() {
        String::new()
    } else {
        format!(" (GitHub: {msg})")
    };
    format!("{command}: {} {}: {detail}{shown}", r.status, r.url.path())
}

fn limit(args: &Args) -> usize {
    args.int("limit").unwrap_or(30).clamp(1, 1000) as usize
}

fn user(v: &Value) -> Value {
    v["login"].as_str().map_or(Value::Null, |s| json!(s))
}

fn nullable(t: &str) -> Value {
    json!({"type": [t, "null"]})
}

fn pr_summary(p: &Value) -> Value {
    json!({
        "number": p["number"],
        "title": p["title"],
        "state": p["state"],
        "user": user(&p["user"]),
        "draft": p["draft"].as_bool().unwrap_or(false),
        "head": p["head"]["ref"],
        "base": p["base"]["ref"],
        "html_url": p["html_url"],
        "created_at": p["created_at"],
        "updated_at": p["updated_at"],
    })
}

fn pr_summary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "number": {"type": "integer"},
            "title": {"type": "string"},
            "state": {"type": "string"},
            "user": nullable("string"),
            "draft": {"type": "boolean"},
            "head": nullable("string"),
            "base": nullable("string"),
            "html_url": {"type": "string"},
            "created_at": {"type": "string"},
            "updated_at": {"type": "string"}
        },
        "required": ["number", "title", "state", "html_url"],
    })
}

fn issue_summary(i: &Value) -> Value {
    let labels: Vec<Value> = i["labels"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l["name"].as_str().or(l.as_str()))
                .map(|s| json!(s))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "number": i["number"],
        "title": i["title"],
        "state": i["state"],
        "user": user(&i["user"]),
        "labels": labels,
        "comments": i["comments"].as_u64().unwrap_or(0),
        "html_url": i["html_url"],
        "created_at": i["created_at"],
        "updated_at": i["updated_at"],
    })
}

fn issue_summary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "number": {"type": "integer"},
            "title": {"type": "string"},
            "state": {"type": "string"},
            "user": nullable("string"),
            "labels": {"type": "array", "items": {"type": "string"}},
            "comments": {"type": "integer"},
            "html_url": {"type": "string"},
            "created_at": {"type": "string"},
            "updated_at": {"type": "string"}
        },
        "required": ["number", "title", "state", "html_url"],
    })
}

/// `github:repo:info`.
pub struct RepoInfo;

impl PlatformCommand for RepoInfo {
    fn name(&self) -> &'static str {
        "github:repo:info"
    }
    fn description(&self) -> &'static str {
        "A GitHub repository's facts: description, default branch, visibility, stars, forks, open issues, language, topics, URLs."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[REPO];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "full_name": {"type": "string"},
                "description": nullable("string"),
                "default_branch": {"type": "string"},
                "private": {"type": "boolean"},
                "archived": {"type": "boolean"},
                "stargazers_count": {"type": "integer"},
                "forks_count": {"type": "integer"},
                "open_issues_count": {"type": "integer"},
                "language": nullable("string"),
                "topics": {"type": "array", "items": {"type": "string"}},
                "html_url": {"type": "string"},
                "clone_url": nullable("string"),
                "updated_at": nullable("string")
            },
            "required": ["full_name", "default_branch", "private", "html_url"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn credentials(&self) -> &'static [Credential] {
        TOKEN
    }
    fn example(&self) -> &'static str {
        "github:repo:info octocat/hello-world"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let api = Api::new(ctx, self.name())?;
        let (o, r) = api.repo(args)?;
        let (_, v) = api.call(
            Risk::ReadOnly,
            "GET",
            api.url(&format!("repos/{o}/{r}"))?,
            None,
        )?;
        let topics = v["topics"].as_array().cloned().unwrap_or_default();
        let value = json!({
            "full_name": v["full_name"],
            "description": v["description"],
            "default_branch": v["default_branch"],
            "private": v["private"].as_bool().unwrap_or(false),
            "archived": v["archived"].as_bool().unwrap_or(false),
            "stargazers_count": v["stargazers_count"].as_u64().unwrap_or(0),
            "forks_count": v["forks_count"].as_u64().unwrap_or(0),
            "open_issues_count": v["open_issues_count"].as_u64().unwrap_or(0),
            "language": v["language"],
            "topics": topics,
            "html_url": v["html_url"],
            "clone_url": v["clone_url"],
            "updated_at": v["updated_at"],
        });
        Ok(Output {
            value,
            reply_host: api.host(),
        })
    }
}

/// `github:pr:list`.
pub struct PrList;

impl PlatformCommand for PrList {
    fn name(&self) -> &'static str {
        "github:pr:list"
    }
    fn description(&self) -> &'static str {
        "A repository's pull requests (newest first): number, title, state, author, draft, head and base branches, URL, times. `state` open (default), closed or all; pages are followed up to `limit`."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[REPO, STATE, LIMIT];
        F
    }
    fn output_schema(&self) -> Value {
        json!({"type": "array", "items": pr_summary_schema()})
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn credentials(&self) -> &'static [Credential] {
        TOKEN
    }
    fn example(&self) -> &'static str {
        "github:pr:list octocat/hello-world --state open | jq -r '.[].title'"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let api = Api::new(ctx, self.name())?;
        let (o, r) = api.repo(args)?;
        let n = limit(args);
        let mut url = api.url(&format!("repos/{o}/{r}/pulls"))?;
        url.query_pairs_mut()
            .append_pair("state", args.str("state").unwrap_or("open"))
            .append_pair("per_page", &n.min(100).to_string());
        let items = api.list(url, n)?;
        Ok(Output {
            value: Value::Array(items.iter().map(pr_summary).collect()),
            reply_host: api.host(),
        })
    }
}

/// `github:pr:view`.
pub struct PrView;

impl PlatformCommand for PrView {
    fn name(&self) -> &'static str {
        "github:pr:view"
    }
    fn description(&self) -> &'static str {
        "One pull request in full: title, body, state, author, branches, merged/mergeable, size of the change (additions, deletions, changed files), URL, times."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            REPO,
            Field::required("number", FieldKind::Integer, "The pull request's number"),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        let mut s = pr_summary_schema();
        if let Some(p) = s["properties"].as_object_mut() {
            p.insert("body".into(), nullable("string"));
            p.insert("merged".into(), json!({"type": "boolean"}));
            p.insert("mergeable".into(), nullable("boolean"));
            p.insert("additions".into(), json!({"type": "integer"}));
            p.insert("deletions".into(), json!({"type": "integer"}));
            p.insert("changed_files".into(), json!({"type": "integer"}));
        }
        s
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn credentials(&self) -> &'static [Credential] {
        TOKEN
    }
    fn example(&self) -> &'static str {
        "github:pr:view octocat/hello-world --number 42"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let api = Api::new(ctx, self.name())?;
        let (o, r) = api.repo(args)?;
        let n = args.int("number").unwrap_or_default();
        let (_, p) = api.call(
            Risk::ReadOnly,
            "GET",
            api.url(&format!("repos/{o}/{r}/pulls/{n}"))?,
            None,
        )?;
        let mut v = pr_summary(&p);
        v["body"] = p["body"].clone();
        v["merged"] = json!(p["merged"].as_bool().unwrap_or(false));
        v["mergeable"] = p["mergeable"].clone();
        for k in ["additions", "deletions", "changed_files"] {
            v[k] = json!(p[k].as_u64().unwrap_or(0));
        }
        Ok(Output {
            value: v,
            reply_host: api.host(),
        })
    }
}

/// `github:issue:list`.
pub struct IssueList;

impl PlatformCommand for IssueList {
    fn name(&self) -> &'static str {
        "github:issue:list"
    }
    fn description(&self) -> &'static str {
        "A repository's issues (pull requests left out): number, title, state, author, labels, comment count, URL, times. `state` open (default), closed or all; pages are followed up to `limit`."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[REPO, STATE, LIMIT];
        F
    }
    fn output_schema(&self) -> Value {
        json!({"type": "array", "items": issue_summary_schema()})
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn credentials(&self) -> &'static [Credential] {
        TOKEN
    }
    fn example(&self) -> &'static str {
        "github:issue:list octocat/hello-world --state all --limit 50"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let api = Api::new(ctx, self.name())?;
        let (o, r) = api.repo(args)?;
        let n = limit(args);
        let mut url = api.url(&format!("repos/{o}/{r}/issues"))?;
        url.query_pairs_mut()
            .append_pair("state", args.str("state").unwrap_or("open"))
            .append_pair("per_page", &n.min(100).to_string());
        // The issues endpoint lists pull requests too: asked for more, kept out.
        let items = api.list(url, (n * 2).min(1000))?;
        let issues: Vec<Value> = items
            .iter()
            .filter(|i| i.get("pull_request").is_none())
            .take(n)
            .map(issue_summary)
            .collect();
        Ok(Output {
            value: Value::Array(issues),
            reply_host: api.host(),
        })
    }
}

/// `github:issue:create`.
pub struct IssueCreate;

impl PlatformCommand for IssueCreate {
    fn name(&self) -> &'static str {
        "github:issue:create"
    }
    fn description(&self) -> &'static str {
        "Open an issue (title, optional body). A write into the user's account: the title and body pass the network commit point with their labels — a secret cannot be posted, and untrusted (downloaded) text needs a human's approval."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            REPO,
            Field::required("title", FieldKind::String, "The issue's title"),
            Field::optional("body", FieldKind::String, "The issue's text (Markdown)"),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        issue_summary_schema()
    }
    fn risk(&self) -> Risk {
        Risk::Write
    }
    fn credentials(&self) -> &'static [Credential] {
        TOKEN
    }
    fn example(&self) -> &'static str {
        "github:issue:create octocat/hello-world --title 'Crash on start' --body 'Steps: …'"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let api = Api::new(ctx, self.name())?;
        let (o, r) = api.repo(args)?;
        let mut body = json!({"title": args.str("title").unwrap_or_default()});
        if let Some(b) = args.str("body") {
            body["body"] = json!(b);
        }
        let (_, v) = api.call(
            Risk::Write,
            "POST",
            api.url(&format!("repos/{o}/{r}/issues"))?,
            Some(&body),
        )?;
        Ok(Output {
            value: issue_summary(&v),
            reply_host: api.host(),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn next_links() {
        let l = r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(
            super::next_link(l).as_deref(),
            Some("https://api.github.com/x?page=2")
        );
        assert_eq!(
            super::next_link(r#"<https://a/x?page=1>; rel="prev""#),
            None
        );
    }
}
