//! What curl sends besides the URL: request data (`-d` and friends, `--json`),
//! multipart forms (`-F`), headers (`-H`, `-u`, `-A`, `-e`, `-b`). Every file and
//! stdin is read here, through the context, before anything is sent.

use super::opts::Parsed;
use crate::error::NetError;
use base64::Engine;
use safesh_utils::UtilCtx;

/// The bytes of `@file` (`-` is stdin), read through the context.
pub fn read_source(ctx: &mut UtilCtx<'_>, name: &str) -> std::io::Result<Vec<u8>> {
    if name == "-" {
        let mut v = Vec::new();
        ctx.stdin.read_to_end(&mut v)?;
        Ok(v)
    } else {
        ctx.read_file(name)
    }
}

/// Like [`read_source`], but a file that cannot be opened is curl's warning and
/// no data. Any other failure — stdin that breaks off (the stage writing it was
/// refused), a read error — stops the transfer: what was read is not all that was
/// meant to be sent, and an empty or partial request is itself a signal.
fn read_or_warn(ctx: &mut UtilCtx<'_>, name: &str, quiet: bool) -> Result<Vec<u8>, NetError> {
    match read_source(ctx, name) {
        Ok(v) => Ok(v),
        Err(e)
            if name == "-"
                || !matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::PermissionDenied
                        | std::io::ErrorKind::IsADirectory
                ) =>
        {
            Err(NetError::Failed(
                26,
                format!(
                    "curl: (26) Failed to read data from {}: {e}",
                    if name == "-" { "stdin" } else { name }
                ),
            ))
        }
        Err(_) => {
            if !quiet {
                let _ = writeln!(
                    ctx.stderr,
                    "Warning: Couldn't read data from file \"{name}\", this makes an empty POST."
                );
            }
            Ok(Vec::new())
        }
    }
}

/// curl's form encoding: everything but ASCII letters, digits and `-._~`; space
/// is `+`.
pub fn urlencode(b: &[u8]) -> Vec<u8> {
    let mut o = Vec::with_capacity(b.len());
    for &c in b {
        if c == b' ' {
            o.push(b'+');
        } else if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            o.push(c);
        } else {
            o.extend_from_slice(format!("%{c:02X}").as_bytes());
        }
    }
    o
}

/// The request data: `-d` pieces joined by `&`, or `--json` pieces concatenated.
/// `None` when no data option was given.
pub struct Data {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// `--json` was used.
    pub json: bool,
}

/// Collects the request data in command-line order.
pub fn data(ctx: &mut UtilCtx<'_>, p: &Parsed, quiet: bool) -> Result<Option<Data>, NetError> {
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut json: Option<Vec<u8>> = None;
    for o in &p.opts {
        let Some(v) = o.value.as_deref() else {
            continue;
        };
        match o.name {
            "data" | "data-ascii" => {
                if let Some(f) = v.strip_prefix('@') {
                    let mut b = read_or_warn(ctx, f, quiet)?;
                    b.retain(|&c| c != b'\r' && c != b'\n');
                    pieces.push(b);
                } else {
                    pieces.push(v.as_bytes().to_vec());
                }
            }
            "data-binary" => match v.strip_prefix('@') {
                Some(f) => pieces.push(read_or_warn(ctx, f, quiet)?),
                None => pieces.push(v.as_bytes().to_vec()),
            },
            "data-raw" => pieces.push(v.as_bytes().to_vec()),
            "data-urlencode" => pieces.push(urlencoded_piece(ctx, v, quiet)?),
            "json" => {
                let b = match v.strip_prefix('@') {
                    Some(f) => read_or_warn(ctx, f, quiet)?,
                    None => v.as_bytes().to_vec(),
                };
                json.get_or_insert_with(Vec::new).extend_from_slice(&b);
            }
            _ => {}
        }
    }
    if let Some(j) = json {
        if !pieces.is_empty() {
            let mut all = pieces.join(&b'&');
            all.push(b'&');
            all.extend_from_slice(&j);
            return Ok(Some(Data {
                bytes: all,
                json: true,
            }));
        }
        return Ok(Some(Data {
            bytes: j,
            json: true,
        }));
    }
    if pieces.is_empty() {
        return Ok(None);
    }
    Ok(Some(Data {
        bytes: pieces.join(&b'&'),
        json: false,
    }))
}

/// One `--data-urlencode` piece: `content`, `=content`, `name=content`, `@file`,
/// `name@file`.
fn urlencoded_piece(ctx: &mut UtilCtx<'_>, v: &str, quiet: bool) -> Result<Vec<u8>, NetError> {
    let eq = v.find('=');
    let at = v.find('@');
    match (eq, at) {
        (Some(e), a) if a.is_none_or(|a| e < a) => {
            let (name, content) = v.split_at(e);
            let mut o = name.as_bytes().to_vec();
            if !name.is_empty() {
                o.push(b'=');
            }
            o.extend(urlencode(content.get(1..).unwrap_or("").as_bytes()));
            Ok(o)
        }
        (_, Some(a)) => {
            let (name, file) = v.split_at(a);
            let content = read_or_warn(ctx, file.get(1..).unwrap_or(""), quiet)?;
            let mut o = name.as_bytes().to_vec();
            if !name.is_empty() {
                o.push(b'=');
            }
            o.extend(urlencode(&content));
            Ok(o)
        }
        _ => Ok(urlencode(v.as_bytes())),
    }
}

/// A multipart body and its boundary.
pub struct Form {
    /// The body.
    pub body: Vec<u8>,
    /// The boundary (without the leading `--`).
    pub boundary: String,
}

/// The content type curl guesses from a file name's extension.
fn guess_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "gif" => "image/gif",
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "txt" => "text/plain",
        "htm" | "html" => "text/html",
        "pdf" => "application/pdf",
        "xml" => "application/xml",
        _ => "application/octet-stream",
    }
}

/// Builds the multipart body of `-F` / `--form-string`; a missing `@file` or
/// `<file` is curl's error 26.
pub fn form(ctx: &mut UtilCtx<'_>, p: &Parsed) -> Result<Option<Form>, NetError> {
    let mut parts: Vec<u8> = Vec::new();
    let boundary = boundary();
    let mut any = false;
    for o in &p.opts {
        let (Some(v), true) = (o.value.as_deref(), matches!(o.name, "form" | "form-string")) else {
            continue;
        };
        any = true;
        let (name, rest) = v.split_once('=').unwrap_or((v, ""));
        let mut disp = format!("Content-Disposition: form-data; name=\"{name}\"");
        let mut ctype: Option<String> = None;
        let content: Vec<u8>;
        if o.name == "form-string" {
            content = rest.as_bytes().to_vec();
        } else if let Some(spec) = rest.strip_prefix('@') {
            let (file, attrs) = split_attrs(spec);
            content = read_source(ctx, file).map_err(|_| missing())?;
            let fname = attrs
                .iter()
                .find_map(|(k, v)| (*k == "filename").then_some(*v))
                .unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file));
            disp.push_str(&format!("; filename=\"{fname}\""));
            ctype = Some(
                attrs
                    .iter()
                    .find_map(|(k, v)| (*k == "type").then(|| v.to_string()))
                    .unwrap_or_else(|| guess_type(file).to_string()),
            );
        } else if let Some(spec) = rest.strip_prefix('<') {
            let (file, attrs) = split_attrs(spec);
            content = read_source(ctx, file).map_err(|_| missing())?;
            ctype = attrs
                .iter()
                .find_map(|(k, v)| (*k == "type").then(|| v.to_string()));
        } else {
            let (val, attrs) = split_attrs(rest);
            content = val.as_bytes().to_vec();
            ctype = attrs
                .iter()
                .find_map(|(k, v)| (*k == "type").then(|| v.to_string()));
        }
        parts.extend_from_slice(format!("--{boundary}\r\n{disp}\r\n").as_bytes());
        if let Some(t) = ctype {
            parts.extend_from_slice(format!("Content-Type: {t}\r\n").as_bytes());
        }
        parts.extend_from_slice(b"\r\n");
        parts.extend_from_slice(&content);
        parts.extend_from_slice(b"\r\n");
    }
    if !any {
        return Ok(None);
    }
    parts.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok(Some(Form {
        body: parts,
        boundary,
    }))
}

fn missing() -> NetError {
    NetError::Failed(
        26,
        "Failed to open/read local data from file/application".into(),
    )
}

/// `value;type=x;filename=y` → (`value`, attributes).
fn split_attrs(s: &str) -> (&str, Vec<(&str, &str)>) {
    let mut it = s.split(';');
    let head = it.next().unwrap_or("");
    let attrs = it.filter_map(|a| a.split_once('=')).collect();
    (head, attrs)
}

/// A boundary shaped like curl's (24 dashes and 16 hex digits), varying per run.
fn boundary() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u64(0x5afe5);
    format!("------------------------{:016x}", h.finish())
}

/// The headers curl adds itself, in its order, before the user's `-H`.
pub fn base_headers(p: &Parsed) -> Vec<(String, Vec<u8>)> {
    let mut h: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(u) = p.value("user") {
        let cred = if u.contains(':') {
            u.to_string()
        } else {
            format!("{u}:")
        };
        let enc = base64::engine::general_purpose::STANDARD.encode(cred.as_bytes());
        h.push(("Authorization".into(), format!("Basic {enc}").into_bytes()));
    }
    let ua = p
        .value("user-agent")
        .map(str::to_string)
        .unwrap_or_else(|| crate::CURL_UA.to_string());
    if !ua.is_empty() {
        h.push(("User-Agent".into(), ua.into_bytes()));
    }
    if let Some(r) = p.value("referer") {
        h.push(("Referer".into(), r.as_bytes().to_vec()));
    }
    if let Some(c) = p.value("cookie") {
        // Only the string form; a cookie file (no `=`) is not read.
        if c.contains('=') {
            h.push(("Cookie".into(), c.as_bytes().to_vec()));
        }
    }
    h
}

/// Applies the user's `-H` lines (and `-H @file`) to `h`: `Name: v` replaces a
/// built-in header of that name, `Name:` removes it, `Name;` sends it empty.
pub fn user_headers(ctx: &mut UtilCtx<'_>, p: &Parsed, h: &mut Vec<(String, Vec<u8>)>) {
    let mut lines: Vec<String> = Vec::new();
    for o in p.opts.iter().filter(|o| o.name == "header") {
        let Some(v) = o.value.as_deref() else {
            continue;
        };
        if let Some(f) = v.strip_prefix('@') {
            if let Ok(b) = read_source(ctx, f) {
                for l in String::from_utf8_lossy(&b).lines() {
                    let l = l.trim_end_matches('\r');
                    if !l.trim().is_empty() {
                        lines.push(l.to_string());
                    }
                }
            }
        } else {
            lines.push(v.to_string());
        }
    }
    let builtin: Vec<String> = h.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
    for l in lines {
        if let Some((name, val)) = l.split_once(':') {
            let name = name.trim();
            let val = val.trim();
            if builtin.contains(&name.to_ascii_lowercase()) {
                h.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            }
            if val.is_empty() {
                // `Name:` removes (built-in or earlier) and sends nothing.
                h.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                continue;
            }
            h.push((name.to_string(), val.as_bytes().to_vec()));
        } else if let Some(name) = l.trim().strip_suffix(';') {
            h.push((name.to_string(), Vec::new()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlencode_like_curl() {
        assert_eq!(urlencode(b"a b&c=d~"), b"a+b%26c%3Dd~".to_vec());
    }

    #[test]
    fn attrs_split() {
        let (v, a) = split_attrs("x.txt;type=text/x;filename=y");
        assert_eq!(v, "x.txt");
        assert_eq!(a, vec![("type", "text/x"), ("filename", "y")]);
    }
}
