//! How `ls` shows entries: sorting, `-F`/`-p` indicators and the long format.

use crate::common::{group_name, human, mode_string, user_name};
use crate::strftime;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

/// One thing to show: its display name and what `lstat`/`stat` said about it.
pub struct Entry {
    /// Name as printed (the operand as given, or the directory entry's name).
    pub name: Vec<u8>,
    /// Path to reach it from the working directory.
    pub path: Vec<u8>,
    /// Metadata (of the link itself unless dereferencing).
    pub meta: Option<Metadata>,
    /// For symlinks: the target text.
    pub target: Option<Vec<u8>>,
    /// For symlinks: the target's metadata, if it resolves.
    pub target_meta: Option<Metadata>,
}

/// Sort keys.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// Byte order of names (C locale strcoll).
    Name,
    /// Newest first.
    Time,
    /// Largest first.
    Size,
    /// Directory order (`-U`; here: name order, since listings are sorted).
    None,
}

/// Sorts entries as `ls` does (ties broken by name; `-r` reverses everything).
pub fn sort(entries: &mut [Entry], by: SortBy, reverse: bool, which: TimeKind) {
    let mtime = |e: &Entry| e.meta.as_ref().map_or((0, 0), |m| which.of(m));
    let size = |e: &Entry| e.meta.as_ref().map_or(0, |m| m.len());
    match by {
        SortBy::Name => entries.sort_by(|a, b| a.name.cmp(&b.name)),
        SortBy::Time => {
            entries.sort_by(|a, b| mtime(b).cmp(&mtime(a)).then_with(|| a.name.cmp(&b.name)))
        }
        SortBy::Size => {
            entries.sort_by(|a, b| size(b).cmp(&size(a)).then_with(|| a.name.cmp(&b.name)))
        }
        SortBy::None => {}
    }
    if reverse && by != SortBy::None {
        entries.reverse();
    }
}

/// The `-F` (`classify`) or `-p` (`slash`) indicator for a mode.
pub fn indicator(mode: u32, classify: bool) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => "/",
        _ if !classify => "",
        libc::S_IFLNK => "@",
        libc::S_IFIFO => "|",
        libc::S_IFSOCK => "=",
        libc::S_IFREG if mode & 0o111 != 0 => "*",
        _ => "",
    }
}

/// Which timestamp `-l` shows and `-t` sorts by.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TimeKind {
    /// Modification (default).
    Modify,
    /// Status change (`-c`).
    Change,
    /// Access (`-u`).
    Access,
}

impl TimeKind {
    /// The (seconds, nanoseconds) of this timestamp.
    pub fn of(self, m: &Metadata) -> (i64, i64) {
        match self {
            TimeKind::Modify => (m.mtime(), m.mtime_nsec()),
            TimeKind::Change => (m.ctime(), m.ctime_nsec()),
            TimeKind::Access => (m.atime(), m.atime_nsec()),
        }
    }
}

/// `--time-style`: strftime formats for old and recent files.
#[derive(Clone)]
pub struct TimeStyle {
    /// Files older than six months (or in the future).
    pub old: String,
    /// Recent files.
    pub recent: String,
}

impl TimeStyle {
    /// Parses a `--time-style` value (C locale: `posix-*` and `locale` are the default).
    pub fn parse(s: &str) -> Option<TimeStyle> {
        let both = |f: &str| {
            Some(TimeStyle {
                old: f.to_string(),
                recent: f.to_string(),
            })
        };
        if let Some(f) = s.strip_prefix('+') {
            return match f.split_once('\n') {
                Some((old, recent)) => Some(TimeStyle {
                    old: old.to_string(),
                    recent: recent.to_string(),
                }),
                None => both(f),
            };
        }
        match s {
            "full-iso" => both("%Y-%m-%d %H:%M:%S.%N %z"),
            "long-iso" => both("%Y-%m-%d %H:%M"),
            "iso" => Some(TimeStyle {
                old: "%Y-%m-%d ".into(),
                recent: "%m-%d %H:%M".into(),
            }),
            _ if s == "locale" || s.starts_with("posix-") => Some(TimeStyle::default()),
            _ => None,
        }
    }
}

impl Default for TimeStyle {
    fn default() -> Self {
        TimeStyle {
            old: "%b %e  %Y".into(),
            recent: "%b %e %H:%M".into(),
        }
    }
}

/// Options that shape long lines.
pub struct LongOpts {
    /// `-i`: inode numbers first.
    pub inode: bool,
    /// `-s`: allocated size (1K blocks) first.
    pub size: bool,
    /// `-h`.
    pub human: bool,
    /// `-n`: numeric ids.
    pub numeric: bool,
    /// Show the owner (not `-g`).
    pub owner: bool,
    /// Show the group (not `-o`, `-G`).
    pub group: bool,
    /// Indicator style: 0 none, 1 slash, 2 classify.
    pub indicator: u8,
    /// The time zone for dates.
    pub tz: jiff::tz::TimeZone,
    /// Now, for the six-months rule.
    pub now: i64,
    /// Which timestamp to show.
    pub time: TimeKind,
    /// How to show it.
    pub style: TimeStyle,
}

fn is_device(m: &Metadata) -> bool {
    let t = m.mode() & libc::S_IFMT;
    t == libc::S_IFCHR || t == libc::S_IFBLK
}

/// The size column; devices show `major, minor`, each aligned over the block.
fn size_text(m: &Metadata, o: &LongOpts, dev_w: (usize, usize)) -> String {
    if is_device(m) {
        let r = m.rdev();
        let (wa, wi) = dev_w;
        return format!("{:>wa$}, {:>wi$}", libc::major(r), libc::minor(r));
    }
    if o.human {
        human(m.len())
    } else {
        m.len().to_string()
    }
}

fn date_text(m: &Metadata, o: &LongOpts) -> String {
    let (secs, ns) = o.time.of(m);
    let ts = jiff::Timestamp::new(secs, ns as i32).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let z = ts.to_zoned(o.tz.clone());
    // GNU: "recent" means within the last half of an average Gregorian year.
    let six_months = 31_556_952 / 2;
    let recent = secs > o.now - six_months && secs <= o.now;
    let fmt = if recent {
        &o.style.recent
    } else {
        &o.style.old
    };
    String::from_utf8_lossy(&strftime::format(fmt, &z)).into_owned()
}

/// Writes a block of entries in long format, columns aligned over the block.
pub fn long_block(out: &mut Vec<u8>, entries: &[Entry], o: &LongOpts) {
    struct Row {
        mode: String,
        links: String,
        owner: String,
        group: String,
        size: String,
        date: String,
    }
    let devs = entries
        .iter()
        .filter_map(|e| e.meta.as_ref())
        .filter(|m| is_device(m));
    let dev_w = devs.fold((0, 0), |(a, i), m| {
        let r = m.rdev();
        (
            a.max(libc::major(r).to_string().len()),
            i.max(libc::minor(r).to_string().len()),
        )
    });
    // Name lookups are slow (NSS); most listings have one or two owners.
    let mut users: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let mut groups: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let rows: Vec<Option<Row>> = entries
        .iter()
        .map(|e| {
            e.meta.as_ref().map(|m| Row {
                mode: mode_string(m.mode()),
                links: m.nlink().to_string(),
                owner: if o.numeric {
                    m.uid().to_string()
                } else {
                    users
                        .entry(m.uid())
                        .or_insert_with(|| user_name(m.uid()))
                        .clone()
                },
                group: if o.numeric {
                    m.gid().to_string()
                } else {
                    groups
                        .entry(m.gid())
                        .or_insert_with(|| group_name(m.gid()))
                        .clone()
                },
                size: size_text(m, o, dev_w),
                date: date_text(m, o),
            })
        })
        .collect();
    let w = |f: &dyn Fn(&Row) -> usize| rows.iter().flatten().map(f).max().unwrap_or(0);
    let (wl, wo, wg, ws) = (
        w(&|r| r.links.len()),
        w(&|r| r.owner.len()),
        w(&|r| r.group.len()),
        w(&|r| r.size.len()),
    );
    let pre = prefixes(entries, o);
    for ((e, r), pre) in entries.iter().zip(rows.iter()).zip(pre.iter()) {
        out.extend_from_slice(pre.as_bytes());
        let Some(r) = r else {
            // Unstat-able entries (vanished between readdir and lstat).
            out.extend_from_slice(b"l????????? ? ? ? ?            ? ");
            out.extend_from_slice(&e.name);
            out.push(b'\n');
            continue;
        };
        let mut line = format!("{} {:>wl$} ", r.mode, r.links);
        if o.owner {
            line.push_str(&format!("{:<wo$} ", r.owner));
        }
        if o.group {
            line.push_str(&format!("{:<wg$} ", r.group));
        }
        line.push_str(&format!("{:>ws$} {} ", r.size, r.date));
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(&e.name);
        let mode = e.meta.as_ref().map_or(0, |m| m.mode());
        if let Some(t) = &e.target {
            out.extend_from_slice(b" -> ");
            out.extend_from_slice(t);
            if o.indicator > 0
                && let Some(tm) = &e.target_meta
            {
                out.extend_from_slice(indicator(tm.mode(), o.indicator == 2).as_bytes());
            }
        } else if o.indicator > 0 {
            out.extend_from_slice(indicator(mode, o.indicator == 2).as_bytes());
        }
        out.push(b'\n');
    }
}

/// The `-i` / `-s` columns in front of each entry, aligned over the block.
pub fn prefixes(entries: &[Entry], o: &LongOpts) -> Vec<String> {
    let inodes: Vec<String> = entries
        .iter()
        .map(|e| {
            e.meta
                .as_ref()
                .map_or("?".to_string(), |m| m.ino().to_string())
        })
        .collect();
    let sizes: Vec<String> = entries
        .iter()
        .map(|e| {
            e.meta.as_ref().map_or("?".to_string(), |m| {
                if o.human {
                    human(m.blocks() * 512)
                } else {
                    m.blocks().div_ceil(2).to_string()
                }
            })
        })
        .collect();
    let wi = inodes.iter().map(String::len).max().unwrap_or(0);
    let ws = sizes.iter().map(String::len).max().unwrap_or(0);
    inodes
        .iter()
        .zip(sizes.iter())
        .map(|(i, s)| {
            let mut p = String::new();
            if o.inode {
                p.push_str(&format!("{i:>wi$} "));
            }
            if o.size {
                p.push_str(&format!("{s:>ws$} "));
            }
            p
        })
        .collect()
}

/// The `total` line's value: 1K blocks in use, human-readable with `-h`.
pub fn total(entries: &[Entry], human_sizes: bool) -> String {
    let blocks: u64 = entries
        .iter()
        .filter_map(|e| e.meta.as_ref())
        .map(|m| m.blocks())
        .sum();
    if human_sizes {
        human(blocks * 512)
    } else {
        blocks.div_ceil(2).to_string()
    }
}
