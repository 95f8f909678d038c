//! `fs:` — the local files, with structured results. Every access goes through
//! the host exactly as `cat`, `ls`, `stat`, `tee` and `mkdir` do: the same path
//! checks (read and write roots, protected names, symlinks resolved by an
//! fd-relative walk) and the same labels.
//!
//! This module is the worked example of a namespace: one unit struct per
//! command implementing [`PlatformCommand`], listed in [`COMMANDS`].

use crate::args::Args;
use crate::command::{Field, FieldKind, Output, PlatformCommand, Risk};
use crate::ctx::PlatformCtx;
use crate::error::PlatformError;
use base64::Engine;
use safesh_utils::{WriteMode, io_error_text, open_read, open_write};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The `fs:` commands.
pub static COMMANDS: &[&dyn PlatformCommand] = &[&FsList, &FsRead, &FsWrite, &FsStat, &FsMkdir];

/// The most bytes `fs:read` returns unless `max_bytes` says otherwise.
const DEFAULT_MAX_READ: i64 = 1 << 20;

fn resolve(ctx: &dyn PlatformCtx, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.cwd().join(p)
    }
}

fn failed(cmd: &str, what: &str, e: &std::io::Error) -> PlatformError {
    PlatformError::Failed(format!("{cmd}: {what}: {}", io_error_text(e)))
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (UTC).
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn type_of(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => "dir",
        libc::S_IFREG => "file",
        libc::S_IFLNK => "symlink",
        _ => "other",
    }
}

fn entry_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "type": {"enum": ["file", "dir", "symlink", "other"]},
            "size": {"type": "integer", "minimum": 0},
            "mtime": {"type": "string", "description": "RFC 3339, UTC"},
            "mode": {"type": "string", "description": "permission bits, octal"}
        },
        "required": ["name", "type", "size", "mtime", "mode"],
        "additionalProperties": false
    })
}

/// What an entry shows of its metadata (from `fstatat` or a [`std::fs::Metadata`]).
struct Shown {
    mode: u32,
    size: u64,
    mtime: i64,
}

impl From<&std::fs::Metadata> for Shown {
    fn from(m: &std::fs::Metadata) -> Self {
        Shown {
            mode: m.mode(),
            size: m.len(),
            mtime: m.mtime(),
        }
    }
}

fn entry_json(name: &str, m: &Shown) -> Value {
    json!({
        "name": name,
        "type": type_of(m.mode),
        "size": m.size,
        "mtime": rfc3339(m.mtime),
        "mode": format!("{:o}", m.mode & 0o7777),
    })
}

/// `fs:list`.
pub struct FsList;

impl PlatformCommand for FsList {
    fn name(&self) -> &'static str {
        "fs:list"
    }
    fn description(&self) -> &'static str {
        "List a directory: one entry per name (type, size, mtime, mode), sorted by name. Hidden names (starting with a dot) only with `all`. Confined to the read roots like `ls`."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            Field::positional(
                "path",
                "The directory to list (default: the working directory)",
            )
            .not_required(),
            Field::optional(
                "all",
                FieldKind::Boolean,
                "Include names starting with a dot",
            ),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "entries": {"type": "array", "items": entry_schema()}
            },
            "required": ["path", "entries"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn example(&self) -> &'static str {
        "fs:list src"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let shown = args.str("path").unwrap_or(".");
        let dir = resolve(ctx, shown);
        let host = ctx.host();
        host.list_dir(&dir)
            .map_err(|e| failed(self.name(), shown, &e))?;
        let names = safesh_utils::beneath::read_dir_names(&dir, |real| host.list_dir(real))
            .map_err(|e| failed(self.name(), &format!("cannot open directory {shown}"), &e))?;
        // Each entry's metadata from the directory the walk reached, never by a
        // name a symlink could redirect (`fstatat(dirfd, name, NOFOLLOW)`).
        let dirfd = safesh_utils::beneath::resolve(&dir, true)
            .and_then(|e| e.open(libc::O_RDONLY | libc::O_DIRECTORY, 0))
            .map_err(|e| failed(self.name(), &format!("cannot open directory {shown}"), &e))?;
        let mut names: Vec<(String, std::ffi::OsString)> = names
            .into_iter()
            .map(|n| (n.to_string_lossy().into_owned(), n))
            .filter(|(n, _)| args.flag("all") || !n.starts_with('.'))
            .collect();
        names.sort_unstable();
        let mut entries = Vec::with_capacity(names.len());
        for (shown, name) in names {
            if host.cancelled() {
                break;
            }
            if let Ok(m) = stat_at(&dirfd, &name) {
                entries.push(entry_json(&shown, &m));
            }
        }
        Ok(Output::local(json!({"path": shown, "entries": entries})))
    }
}

/// The metadata of `name` inside the open directory `dir`, not following it:
/// one `fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)` (what `ls -la` costs per
/// entry), never a path a symlink could redirect.
fn stat_at(dir: &std::fs::File, name: &std::ffi::OsStr) -> std::io::Result<Shown> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `dir` is an open directory fd, `c` a NUL-terminated name and `st`
    // room for one `struct stat`, which fstatat fills when it returns 0.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Ok(Shown {
        mode: st.st_mode,
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime: st.st_mtime,
    })
}

/// `fs:read`.
pub struct FsRead;

impl PlatformCommand for FsRead {
    fn name(&self) -> &'static str {
        "fs:read"
    }
    fn description(&self) -> &'static str {
        "Read a file: its content as UTF-8 text, or base64 when it is not valid UTF-8 (or `encoding` says so). At most `max_bytes` (default 1 MiB); `truncated` says when there was more. Confined to the read roots like `cat`; the result carries the file's label (a secret stays secret)."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            Field::positional("path", "The file to read"),
            Field::optional(
                "encoding",
                FieldKind::String,
                "utf-8 (default; falls back to base64 for binary data) or base64",
            )
            .one_of(&["utf-8", "base64"]),
            Field::optional(
                "max_bytes",
                FieldKind::Integer,
                "The most bytes to return (default 1048576)",
            ),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "size": {"type": "integer", "minimum": 0},
                "encoding": {"enum": ["utf-8", "base64"]},
                "content": {"type": "string"},
                "truncated": {"type": "boolean"}
            },
            "required": ["path", "size", "encoding", "content", "truncated"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn example(&self) -> &'static str {
        "fs:read README.md"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let shown = args.str("path").unwrap_or_default();
        let path = resolve(ctx, shown);
        let max = args.int("max_bytes").unwrap_or(DEFAULT_MAX_READ).max(0) as u64;
        let mut f = open_read(ctx.host(), &path).map_err(|e| failed(self.name(), shown, &e))?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut data = Vec::new();
        (&mut f)
            .take(max.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| failed(self.name(), shown, &e))?;
        let truncated = data.len() as u64 > max;
        data.truncate(max as usize);
        let want_base64 = args.str("encoding") == Some("base64");
        let (encoding, content) = match String::from_utf8(data) {
            Ok(s) if !want_base64 => ("utf-8", s),
            Ok(s) => (
                "base64",
                base64::engine::general_purpose::STANDARD.encode(s),
            ),
            Err(e) => (
                "base64",
                base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            ),
        };
        Ok(Output::local(json!({
            "path": shown,
            "size": size,
            "encoding": encoding,
            "content": content,
            "truncated": truncated,
        })))
    }
}

/// `fs:write`.
pub struct FsWrite;

impl PlatformCommand for FsWrite {
    fn name(&self) -> &'static str {
        "fs:write"
    }
    fn description(&self) -> &'static str {
        "Write a file (create or replace; `append` adds to the end). Confined to the write roots like `tee`; protected names (.bashrc, .git/hooks, safesh.toml…) are refused. Replacing an existing file is a destructive write: when the path comes from untrusted data a human must approve it. The file records the label of what was written."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            Field::positional("path", "The file to write"),
            Field::required("content", FieldKind::String, "What to write"),
            Field::optional(
                "encoding",
                FieldKind::String,
                "How `content` is encoded: utf-8 (default) or base64",
            )
            .one_of(&["utf-8", "base64"]),
            Field::optional("append", FieldKind::Boolean, "Append instead of replacing"),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "bytes_written": {"type": "integer", "minimum": 0},
                "created": {"type": "boolean"}
            },
            "required": ["path", "bytes_written", "created"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::Destructive
    }
    fn example(&self) -> &'static str {
        "fs:write notes.txt --content 'hello'"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let shown = args.str("path").unwrap_or_default();
        let path = resolve(ctx, shown);
        let content = args.str("content").unwrap_or_default();
        let bytes = if args.str("encoding") == Some("base64") {
            base64::engine::general_purpose::STANDARD
                .decode(content.trim())
                .map_err(|e| {
                    PlatformError::field(
                        self.name(),
                        "content",
                        format!("--content is not base64: {e}"),
                    )
                })?
        } else {
            content.as_bytes().to_vec()
        };
        // The names are checked (write roots, protected names) before anything else.
        ctx.host()
            .check_write(&path)
            .map_err(|e| failed(self.name(), shown, &e))?;
        let existed = std::fs::symlink_metadata(&path).is_ok();
        if existed {
            ctx.commit_write(&path, args.words_of("path"))?;
        }
        let mode = if args.flag("append") {
            WriteMode::Append
        } else {
            WriteMode::Truncate
        };
        let mut f =
            open_write(ctx.host(), &path, mode).map_err(|e| failed(self.name(), shown, &e))?;
        f.write_all(&bytes)
            .and_then(|()| f.flush())
            .map_err(|e| failed(self.name(), shown, &e))?;
        Ok(Output::local(json!({
            "path": shown,
            "bytes_written": bytes.len(),
            "created": !existed,
        })))
    }
}

/// `fs:stat`.
pub struct FsStat;

impl PlatformCommand for FsStat {
    fn name(&self) -> &'static str {
        "fs:stat"
    }
    fn description(&self) -> &'static str {
        "The metadata of a path (type, size, mtime, mode), not following a final symlink; `exists: false` when there is nothing there. Confined to the read roots like `stat`."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[Field::positional("path", "The path to look at")];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "exists": {"type": "boolean"},
                "type": {"enum": ["file", "dir", "symlink", "other"]},
                "size": {"type": "integer", "minimum": 0},
                "mtime": {"type": "string"},
                "mode": {"type": "string"}
            },
            "required": ["path", "exists"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    fn example(&self) -> &'static str {
        "fs:stat Cargo.toml"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let shown = args.str("path").unwrap_or_default();
        let path = resolve(ctx, shown);
        let host = ctx.host();
        host.check_stat(&path)
            .map_err(|e| failed(self.name(), shown, &e))?;
        match safesh_utils::beneath::metadata(&path, false, |real| host.check_stat(real)) {
            Ok(m) => {
                let mut v = entry_json(shown, &Shown::from(&m));
                v["path"] = json!(shown);
                v["exists"] = json!(true);
                if let Some(o) = v.as_object_mut() {
                    o.remove("name");
                }
                Ok(Output::local(v))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Output::local(json!({"path": shown, "exists": false})))
            }
            Err(e) => Err(failed(self.name(), shown, &e)),
        }
    }
}

/// `fs:mkdir`.
pub struct FsMkdir;

impl PlatformCommand for FsMkdir {
    fn name(&self) -> &'static str {
        "fs:mkdir"
    }
    fn description(&self) -> &'static str {
        "Make a directory (`parents`: its missing parents too, and no error when it exists). Confined to the write roots like `mkdir`."
    }
    fn fields(&self) -> &'static [Field] {
        const F: &[Field] = &[
            Field::positional("path", "The directory to make"),
            Field::optional(
                "parents",
                FieldKind::Boolean,
                "Make missing parents; an existing directory is not an error",
            ),
        ];
        F
    }
    fn output_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "created": {"type": "boolean"}
            },
            "required": ["path", "created"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> Risk {
        Risk::Write
    }
    fn example(&self) -> &'static str {
        "fs:mkdir build/out --parents"
    }
    fn run(&self, args: &Args, ctx: &dyn PlatformCtx) -> Result<Output, PlatformError> {
        let shown = args.str("path").unwrap_or_default();
        let path = resolve(ctx, shown);
        let parents = args.flag("parents");
        let mut todo = Vec::new();
        if parents {
            let mut p = path.parent();
            while let Some(d) = p {
                if d.is_dir() {
                    break;
                }
                todo.push(d.to_path_buf());
                p = d.parent();
            }
            todo.reverse();
        }
        for d in &todo {
            safesh_utils::resolve_write(ctx.host(), d, false)
                .and_then(|e| e.create_dir(0o777))
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists if d.is_dir() => Ok(()),
                    _ => Err(e),
                })
                .map_err(|e| failed(self.name(), &d.display().to_string(), &e))?;
        }
        let created = match safesh_utils::resolve_write(ctx.host(), &path, false)
            .and_then(|e| e.create_dir(0o777))
        {
            Ok(()) => true,
            Err(e) if parents && e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {
                false
            }
            Err(e) => return Err(failed(self.name(), shown, &e)),
        };
        Ok(Output::local(json!({"path": shown, "created": created})))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_737_600), "2026-11-27T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
