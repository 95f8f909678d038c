//! Where a response goes: stdout or a file created through the context (labels,
//! path policy) only once there is something to write; and the response head as
//! `-i` prints it.

use crate::error::NetError;
use reqwest::blocking::Response;
use safesh_utils::{UtilCtx, WriteMode};
use std::io::Write;

/// The destination of one transfer.
pub enum Sink {
    /// The utility's stdout.
    Stdout,
    /// A file, opened on first use.
    File {
        /// The path as given (relative to cwd).
        path: String,
        /// Make missing parent directories (`--create-dirs`).
        create_dirs: bool,
        /// The open file.
        file: Option<safesh_utils::WriteFile>,
    },
}

impl Sink {
    /// A file sink for `path`.
    pub fn file(path: &str, create_dirs: bool) -> Sink {
        Sink::File {
            path: path.to_string(),
            create_dirs,
            file: None,
        }
    }

    /// Creates the file now if it is not open yet.
    pub fn open(&mut self, ctx: &mut UtilCtx<'_>) -> Result<(), NetError> {
        let Sink::File {
            path,
            create_dirs,
            file,
        } = self
        else {
            return Ok(());
        };
        if file.is_some() {
            return Ok(());
        }
        if *create_dirs
            && let Some(parent) = std::path::Path::new(path.as_str()).parent()
            && !parent.as_os_str().is_empty()
        {
            let fail = |e: std::io::Error| {
                NetError::Failed(
                    23,
                    format!(
                        "Failed to create the file {path}: {}",
                        safesh_utils::io_error_text(&e)
                    ),
                )
            };
            // Every directory that will be made is checked, outermost first.
            let missing: Vec<&std::path::Path> = parent
                .ancestors()
                .filter(|a| !a.as_os_str().is_empty() && !ctx.resolve(a).exists())
                .collect();
            for dir in missing.iter().rev() {
                // Made in the directory checked (no symlink followed by name).
                let made = ctx
                    .resolve_write(dir, false)
                    .and_then(|e| e.create_dir(0o777));
                match made {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(fail(e));
                    }
                    _ => {}
                }
            }
        }
        let f = ctx
            .create(path.as_str(), WriteMode::Truncate)
            .map_err(|e| {
                NetError::Failed(
                    23,
                    format!(
                        "Failed to open the file {path}: {}",
                        safesh_utils::io_error_text(&e)
                    ),
                )
            })?;
        *file = Some(f);
        Ok(())
    }

    /// Writes `b`, creating the file first if needed.
    pub fn write(&mut self, ctx: &mut UtilCtx<'_>, b: &[u8]) -> Result<(), NetError> {
        self.open(ctx)?;
        self.write_with(ctx.stdout, b).map_err(NetError::Write)
    }

    /// Writes `b` to an already opened sink (`stdout` for the stdout sink).
    pub fn write_with(&mut self, stdout: &mut dyn Write, b: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Stdout => stdout.write_all(b),
            Sink::File { file: Some(f), .. } => f.write_all(b),
            Sink::File { file: None, .. } => Ok(()),
        }
    }

    /// Flushes what was written.
    pub fn finish(&mut self, ctx: &mut UtilCtx<'_>) -> Result<(), NetError> {
        match self {
            Sink::Stdout => ctx.stdout.flush().map_err(NetError::Write),
            Sink::File { file: Some(f), .. } => f.flush().map_err(NetError::Write),
            Sink::File { file: None, .. } => Ok(()),
        }
    }
}

/// `Content-Type` → `Content-Type`, `x-foo` → `X-Foo`: the client keeps header names
/// in lower case, servers mostly send them capitalized like this.
pub fn title_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = true;
    for c in name.chars() {
        out.push(if up { c.to_ascii_uppercase() } else { c });
        up = c == '-';
    }
    out
}

/// The status line as the server sent it (its own reason phrase when it had one).
pub fn status_line(resp: &Response) -> String {
    let version = match resp.version() {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    };
    let status = resp.status();
    let reason = resp
        .extensions()
        .get::<hyper::ext::ReasonPhrase>()
        .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
        .or_else(|| status.canonical_reason().map(str::to_string))
        .unwrap_or_default();
    if version == "HTTP/2" || version == "HTTP/3" {
        return format!("{version} {} ", status.as_u16());
    }
    format!("{version} {} {reason}", status.as_u16())
}

/// The response head as `curl -i` prints it (CRLF line ends, blank line after).
pub fn head_bytes(resp: &Response) -> Vec<u8> {
    let mut o = status_line(resp).into_bytes();
    o.extend_from_slice(b"\r\n");
    for (k, v) in resp.headers() {
        o.extend_from_slice(title_case(k.as_str()).as_bytes());
        o.extend_from_slice(b": ");
        o.extend_from_slice(v.as_bytes());
        o.extend_from_slice(b"\r\n");
    }
    o.extend_from_slice(b"\r\n");
    o
}
