//! `stat`: display file status, in GNU's default layout or a `-c`/`--printf`
//! format.

use crate::common::{group_name, mode_string, usage, user_name};
use safesh_utils::args::{Spec, parse};
use safesh_utils::word_bytes::{word_from_bytes, word_to_bytes};
use safesh_utils::{UtilCtx, UtilResult};
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "Lt",
    valued: "c",
    long: &[
        ("dereference", false, "L"),
        ("format", true, "c"),
        ("printf", true, "printf"),
        ("terse", false, "t"),
    ],
    stop_at_operand: false,
};

/// Quotes a name like GNU's shell-escape-always style (`'a'`, `"it's"`).
pub fn shell_quote(name: &[u8]) -> String {
    let s = String::from_utf8_lossy(name);
    if !s.contains('\'') {
        return format!("'{s}'");
    }
    if !s.contains(['"', '$', '`', '\\']) {
        return format!("\"{s}\"");
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn file_type(m: &Metadata) -> &'static str {
    match m.mode() & libc::S_IFMT {
        libc::S_IFDIR => "directory",
        libc::S_IFLNK => "symbolic link",
        libc::S_IFIFO => "fifo",
        libc::S_IFSOCK => "socket",
        libc::S_IFCHR => "character special file",
        libc::S_IFBLK => "block special file",
        _ if m.len() == 0 => "regular empty file",
        _ => "regular file",
    }
}

struct Info<'m> {
    name: &'m [u8],
    m: &'m Metadata,
    target: Option<Vec<u8>>,
    tz: &'m jiff::tz::TimeZone,
}

fn human_time(secs: i64, ns: i64, tz: &jiff::tz::TimeZone) -> String {
    let z = jiff::Timestamp::new(secs, ns as i32)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned(tz.clone());
    String::from_utf8_lossy(&crate::strftime::format("%Y-%m-%d %H:%M:%S.%N %z", &z)).into_owned()
}

fn birth(m: &Metadata) -> Option<(i64, i64)> {
    let c = m.created().ok()?;
    let d = c.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some((d.as_secs() as i64, i64::from(d.subsec_nanos())))
}

/// Expands one `%` directive.
fn directive(d: u8, i: &Info<'_>) -> Option<String> {
    let m = i.m;
    Some(match d {
        // Escaped as a word; written back as the name's bytes.
        b'n' => word_from_bytes(i.name).into_owned(),
        b'N' => {
            let mut s = shell_quote(i.name);
            if let Some(t) = &i.target {
                s.push_str(" -> ");
                s.push_str(&shell_quote(t));
            }
            s
        }
        b's' => m.len().to_string(),
        b'a' => format!("{:o}", m.mode() & 0o7777),
        b'A' => mode_string(m.mode()),
        b'F' => file_type(m).to_string(),
        b'U' => user_name(m.uid()),
        b'G' => group_name(m.gid()),
        b'u' => m.uid().to_string(),
        b'g' => m.gid().to_string(),
        b'i' => m.ino().to_string(),
        b'h' => m.nlink().to_string(),
        b'b' => m.blocks().to_string(),
        b'B' => "512".to_string(),
        b'o' => m.blksize().to_string(),
        b'd' => m.dev().to_string(),
        b'D' => format!("{:x}", m.dev()),
        b'f' => format!("{:x}", m.mode()),
        b't' => format!("{:x}", libc::major(m.rdev())),
        b'T' => format!("{:x}", libc::minor(m.rdev())),
        b'r' => m.rdev().to_string(),
        b'R' => format!("{:x}", m.rdev()),
        b'X' => m.atime().to_string(),
        b'Y' => m.mtime().to_string(),
        b'Z' => m.ctime().to_string(),
        b'W' => birth(m).map_or("0".to_string(), |b| b.0.to_string()),
        b'x' => human_time(m.atime(), m.atime_nsec(), i.tz),
        b'y' => human_time(m.mtime(), m.mtime_nsec(), i.tz),
        b'z' => human_time(m.ctime(), m.ctime_nsec(), i.tz),
        b'w' => birth(m).map_or("-".to_string(), |b| human_time(b.0, b.1, i.tz)),
        b'%' => "%".to_string(),
        _ => return None,
    })
}

fn expand(fmt: &[u8], i: &Info<'_>, escapes: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(&c) = fmt.get(k) {
        k += 1;
        if c == b'\\' && escapes {
            let Some(&e) = fmt.get(k) else {
                out.push(b'\\');
                break;
            };
            k += 1;
            let byte = match e {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'e' => 27,
                b'\\' => b'\\',
                b'"' => b'"',
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    for _ in 0..2 {
                        match fmt.get(k) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                k += 1;
                            }
                            _ => break,
                        }
                    }
                    (v & 0xff) as u8
                }
                other => {
                    out.push(b'\\');
                    other
                }
            };
            out.push(byte);
            continue;
        }
        if c != b'%' {
            out.push(c);
            continue;
        }
        let spec_start = k;
        while matches!(fmt.get(k), Some(b'-' | b'+' | b' ' | b'#' | b'0' | b'\'')) {
            k += 1;
        }
        while matches!(fmt.get(k), Some(b'0'..=b'9' | b'.')) {
            k += 1;
        }
        let spec = String::from_utf8_lossy(fmt.get(spec_start..k).unwrap_or(b"")).into_owned();
        let Some(&d) = fmt.get(k) else {
            out.push(b'%');
            out.extend_from_slice(spec.as_bytes());
            break;
        };
        k += 1;
        match directive(d, i) {
            Some(text) => {
                let text = word_to_bytes(&text);
                let left = spec.starts_with('-');
                let zero = spec.starts_with('0');
                let width: usize = spec
                    .trim_start_matches(['-', '0', '+', ' ', '#', '\''])
                    .split('.')
                    .next()
                    .and_then(|w| w.parse().ok())
                    .unwrap_or(0);
                let fill = width.saturating_sub(text.len());
                if left {
                    out.extend_from_slice(&text);
                    out.extend(std::iter::repeat_n(b' ', fill));
                } else {
                    out.extend(std::iter::repeat_n(if zero { b'0' } else { b' ' }, fill));
                    out.extend_from_slice(&text);
                }
            }
            None => {
                out.push(b'?');
            }
        }
    }
    out
}

fn default_format(i: &Info<'_>) -> Vec<u8> {
    let m = i.m;
    // coreutils 9.1 prints the name and link target unquoted here.
    let mut name = word_from_bytes(i.name).into_owned();
    if let Some(t) = &i.target {
        name.push_str(" -> ");
        name.push_str(&word_from_bytes(t));
    }
    let dev = m.dev();
    let mut s = format!("  File: {name}\n");
    s.push_str(&format!(
        "  Size: {:<10}\tBlocks: {:<10} IO Block: {:<6} {}\n",
        m.len(),
        m.blocks(),
        m.blksize(),
        file_type(m)
    ));
    let t = m.mode() & libc::S_IFMT;
    if t == libc::S_IFCHR || t == libc::S_IFBLK {
        s.push_str(&format!(
            "Device: {},{}\tInode: {:<11} Links: {:<5} Device type: {},{}\n",
            libc::major(dev),
            libc::minor(dev),
            m.ino(),
            m.nlink(),
            libc::major(m.rdev()),
            libc::minor(m.rdev())
        ));
    } else {
        s.push_str(&format!(
            "Device: {},{}\tInode: {:<11} Links: {}\n",
            libc::major(dev),
            libc::minor(dev),
            m.ino(),
            m.nlink()
        ));
    }
    s.push_str(&format!(
        "Access: ({:04o}/{})  Uid: ({:>5}/{:>8})   Gid: ({:>5}/{:>8})\n",
        m.mode() & 0o7777,
        mode_string(m.mode()),
        m.uid(),
        user_name(m.uid()),
        m.gid(),
        group_name(m.gid())
    ));
    s.push_str(&format!(
        "Access: {}\n",
        human_time(m.atime(), m.atime_nsec(), i.tz)
    ));
    s.push_str(&format!(
        "Modify: {}\n",
        human_time(m.mtime(), m.mtime_nsec(), i.tz)
    ));
    s.push_str(&format!(
        "Change: {}\n",
        human_time(m.ctime(), m.ctime_nsec(), i.tz)
    ));
    s.push_str(&format!(
        " Birth: {}\n",
        birth(m).map_or("-".to_string(), |b| human_time(b.0, b.1, i.tz))
    ));
    word_to_bytes(&s).into_owned()
}

/// Runs `stat`.
pub fn stat(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.operands.is_empty() {
        return Ok(usage(ctx, "missing operand", 1));
    }
    let tz = crate::common::local_tz(ctx);
    let follow = p.has("L");
    let mut out = Vec::new();
    let mut status = 0;
    for name in &p.operands {
        let r = ctx.check_read(name).and_then(|full| {
            // Read from the entry checked (a symlink on the way is decided on).
            let m = ctx.stat(&full, follow)?;
            let target = if m.file_type().is_symlink() {
                ctx.read_link(&full)
                    .ok()
                    .map(|t| t.as_os_str().as_bytes().to_vec())
            } else {
                None
            };
            Ok((m, target))
        });
        let (m, target) = match r {
            Ok(v) => v,
            Err(e) => {
                ctx.warn_io(
                    format_args!("cannot statx {}", crate::common::quote(name)),
                    &e,
                );
                status = 1;
                continue;
            }
        };
        let name_bytes = safesh_utils::word_bytes::word_to_bytes(name);
        let info = Info {
            name: &name_bytes,
            m: &m,
            target,
            tz: &tz,
        };
        if let Some(f) = p.value("printf") {
            out.extend(expand(f.as_bytes(), &info, true));
        } else if let Some(f) = p.value("c") {
            out.extend(expand(f.as_bytes(), &info, false));
            out.push(b'\n');
        } else if p.has("t") {
            out.extend(expand(
                b"%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o",
                &info,
                false,
            ));
            out.push(b'\n');
        } else {
            out.extend(default_format(&info));
        }
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(status)
}
