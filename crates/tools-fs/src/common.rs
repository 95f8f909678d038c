//! Helpers shared by the file utilities: byte paths, GNU-style messages, mode
//! strings, user and group names, human-readable sizes and the local time zone.

use safesh_utils::UtilCtx;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A path from bytes.
pub fn bpath(b: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(b))
}

/// GNU's shell-style quoting of a file name in messages: `'x'`, or `"x'y"` when
/// the name holds a single quote.
pub fn quote(s: &str) -> String {
    if s.contains('\'') {
        format!("\"{s}\"")
    } else {
        format!("'{s}'")
    }
}

/// Reports a usage error the GNU way and returns `status`.
pub fn usage(ctx: &mut UtilCtx<'_>, msg: &str, status: i32) -> i32 {
    let name = ctx.name().to_string();
    let _ = writeln!(ctx.stderr, "{name}: {msg}");
    let _ = writeln!(ctx.stderr, "Try '{name} --help' for more information.");
    status
}

/// The file type letter of `ls -l` for a raw `st_mode`.
pub fn type_char(mode: u32) -> char {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => 'd',
        libc::S_IFLNK => 'l',
        libc::S_IFIFO => 'p',
        libc::S_IFSOCK => 's',
        libc::S_IFBLK => 'b',
        libc::S_IFCHR => 'c',
        _ => '-',
    }
}

/// The ten-character mode string of `ls -l` (`drwxr-xr-x`).
pub fn mode_string(mode: u32) -> String {
    let mut s = String::with_capacity(10);
    s.push(type_char(mode));
    let bit = |m: u32, c: char| if mode & m != 0 { c } else { '-' };
    let special =
        |x: u32, s_bit: u32, lower: char, upper: char| match (mode & x != 0, mode & s_bit != 0) {
            (true, true) => lower,
            (false, true) => upper,
            (true, false) => 'x',
            (false, false) => '-',
        };
    s.push(bit(0o400, 'r'));
    s.push(bit(0o200, 'w'));
    s.push(special(0o100, 0o4000, 's', 'S'));
    s.push(bit(0o040, 'r'));
    s.push(bit(0o020, 'w'));
    s.push(special(0o010, 0o2000, 's', 'S'));
    s.push(bit(0o004, 'r'));
    s.push(bit(0o002, 'w'));
    s.push(special(0o001, 0o1000, 't', 'T'));
    s
}

/// The user name for `uid`, or the number when it has none.
pub fn user_name(uid: u32) -> String {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut res: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call; getpwuid_r writes only within them.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut res) };
    if rc == 0 && !res.is_null() && !pw.pw_name.is_null() {
        // SAFETY: on success pw_name points at a NUL-terminated string inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
        return name.to_string_lossy().into_owned();
    }
    uid.to_string()
}

/// The group name for `gid`, or the number when it has none.
pub fn group_name(gid: u32) -> String {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: all-zero is a valid `group` (null pointers, zero ids).
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut res: *mut libc::group = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call; getgrgid_r writes only within them.
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut res) };
    if rc == 0 && !res.is_null() && !gr.gr_name.is_null() {
        // SAFETY: on success gr_name points at a NUL-terminated string inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(gr.gr_name) };
        return name.to_string_lossy().into_owned();
    }
    gid.to_string()
}

/// GNU `human_readable` with ceiling rounding and powers of 1024 (`ls -h`, `du -h`):
/// `1000`, `1.0K`, `1.5K`, `10K`, `1.1M`.
pub fn human(bytes: u64) -> String {
    const UNITS: &[u8] = b"KMGTPEZY";
    if bytes < 1024 {
        return bytes.to_string();
    }
    let mut exp = 0usize;
    let mut div: u128 = 1024;
    while (bytes as u128) >= div * 1024 && exp + 1 < UNITS.len() {
        div *= 1024;
        exp += 1;
    }
    let v = bytes as u128;
    let unit = UNITS.get(exp).copied().unwrap_or(b'Y') as char;
    // Tenths, rounded up.
    let tenths = (v * 10).div_ceil(div);
    if tenths < 100 {
        return format!("{}.{}{unit}", tenths / 10, tenths % 10);
    }
    let whole = v.div_ceil(div);
    if whole >= 1024 && exp + 1 < UNITS.len() {
        let next = UNITS.get(exp + 1).copied().unwrap_or(b'Y') as char;
        return format!("1.0{next}");
    }
    format!("{whole}{unit}")
}

/// The time zone the tools print in: `TZ` from the shell's environment, or the
/// system zone (`/etc/localtime`) when unset, or UTC when neither works.
pub fn local_tz(ctx: &UtilCtx<'_>) -> jiff::tz::TimeZone {
    use jiff::tz::TimeZone;
    match ctx.env.get("TZ") {
        Some(tz) => {
            let tz = tz.strip_prefix(':').unwrap_or(tz);
            if tz.is_empty() {
                return TimeZone::UTC;
            }
            if let Ok(z) = TimeZone::get(tz) {
                return z;
            }
            if let Ok(z) = TimeZone::posix(tz) {
                return z;
            }
            TimeZone::UTC
        }
        None => std::fs::read("/etc/localtime")
            .ok()
            .and_then(|b| TimeZone::tzif("Local", &b).ok())
            .unwrap_or(TimeZone::UTC),
    }
}

/// Joins a directory path and a child name the way `find` and `ls -R` print it.
pub fn join_bytes(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(dir.len() + name.len() + 1);
    v.extend_from_slice(dir);
    if !dir.ends_with(b"/") {
        v.push(b'/');
    }
    v.extend_from_slice(name);
    v
}

/// Reads a directory's entry names (without `.` and `..`), sorted by bytes.
pub fn read_dir_sorted(ctx: &UtilCtx<'_>, dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    // A listing prints names: the labels of the names join, not the contents'.
    let path = ctx.list_dir(dir)?;
    // Listed from the directory checked (a symlink on the way is decided on).
    let mut names: Vec<Vec<u8>> =
        safesh_utils::beneath::read_dir_names(&path, |real| ctx.host.list_dir(real))?
            .into_iter()
            .map(std::os::unix::ffi::OsStringExt::into_vec)
            .collect();
    names.sort();
    Ok(names)
}

/// The last component of a path, as `basename` computes it (no suffix handling).
pub fn base_name(p: &[u8]) -> &[u8] {
    let mut end = p.len();
    while end > 1 && p.get(end - 1) == Some(&b'/') {
        end -= 1;
    }
    let trimmed = p.get(..end).unwrap_or(p);
    if trimmed == b"/" {
        return trimmed;
    }
    match trimmed.iter().rposition(|&c| c == b'/') {
        Some(i) => trimmed.get(i + 1..).unwrap_or(b""),
        None => trimmed,
    }
}

/// Handles `--help` and `--version` (GNU tools accept them before `--`; `find`
/// and `xargs` only as the first argument). Returns the status when one was given.
pub fn meta_option(ctx: &mut UtilCtx<'_>, first_only: bool) -> Option<i32> {
    let args = ctx.args();
    let limit = if first_only { 1 } else { args.len() };
    let found = args
        .iter()
        .take(limit)
        .take_while(|a| *a != "--")
        .find(|a| *a == "--help" || *a == "--version")?
        .clone();
    let name = ctx.name().to_string();
    let text = if found == "--help" {
        format!(
            "Usage: {name} [OPTION]... [ARG]...\nIn-process safesh implementation of {name}, compatible with the GNU tool in the C locale.\nSee the GNU documentation for the options; unsupported ones are reported as invalid.\n"
        )
    } else {
        format!("{name} (safesh in-process) 0.1.0\n")
    };
    Some(match ctx.stdout.write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => ctx.write_failed(&e),
    })
}
