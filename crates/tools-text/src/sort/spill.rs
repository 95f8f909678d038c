//! Sorting more than fits the memory budget, as GNU sort does: the input is cut
//! into runs that fit, each run is sorted and written to an unnamed file in the
//! host's spill dir (disk-backed, never RAM-backed `/dev/shm`; `O_TMPFILE`, so
//! nothing is left behind when the process dies), and the runs are merged,
//! at most [`NMERGE`] at a time. Ties go to the earlier run, so the merge keeps
//! the input order of equal lines (`-s`, and the first of equal lines for `-u`).

use super::Config;
use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};
use std::path::Path;

/// Runs merged at once (GNU sort's default `--batch-size`).
pub(super) const NMERGE: usize = 16;

/// What one line costs in memory besides its bytes while it is sorted: the
/// row `sort_write` holds for it (a line slice, with its first key's slice or
/// integer value when there are keys).
pub(super) fn line_cost(cfg: &Config) -> usize {
    match cfg.keys.first() {
        None => 16,
        Some(k) if super::key::fast_numeric_key(&k.flags) => 24,
        Some(_) => 32,
    }
}

/// How often (in lines) the merge looks at the deadline.
const CHECK_EVERY: u64 = 4096;

/// The error a long loop returns once the script is cancelled.
pub(super) fn cancelled() -> io::Error {
    io::Error::other("cancelled")
}

/// A new unnamed file in `dir`, gone once closed.
pub(super) fn spill_file(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    // Made on the first spill only: a sort that fits leaves no trace.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let r = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir);
    match r {
        Ok(f) => Ok(f),
        // A filesystem without O_TMPFILE: a named file, unlinked at once.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = dir.join(format!(".sort-{}-{n}", std::process::id()));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_CLOEXEC)
                .open(&p)?;
            std::fs::remove_file(&p)?;
            Ok(f)
        }
        Err(e) => Err(e),
    }
}

/// Sorts the lines of `data` (each ended by `delim`) and writes them to a new
/// spill file in `dir`, rewound for reading.
pub(super) fn spill_run(data: &[u8], cfg: &Config, delim: u8, dir: &Path) -> io::Result<File> {
    let mut f = spill_file(dir)?;
    {
        let mut w = BufWriter::with_capacity(super::BUF, &mut f);
        super::sort_write(data, cfg, delim, &mut w)?;
        w.flush()?;
    }
    f.rewind()?;
    Ok(f)
}

/// Merges the sorted `runs` (in input order) into `out`, at most [`NMERGE`]
/// files open at once; `stop` is the deadline.
pub(super) fn merge(
    mut runs: Vec<File>,
    cfg: &Config,
    delim: u8,
    dir: &Path,
    out: &mut dyn Write,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    while runs.len() > NMERGE {
        let first: Vec<File> = runs.drain(..NMERGE).collect();
        let mut f = spill_file(dir)?;
        {
            let mut w = BufWriter::with_capacity(super::BUF, &mut f);
            merge_into(first, cfg, delim, &mut w, stop)?;
            w.flush()?;
        }
        f.rewind()?;
        // In the place of the runs it merged: the input order is kept.
        runs.insert(0, f);
    }
    merge_into(runs, cfg, delim, out, stop)
}

/// One merge pass of at most [`NMERGE`] runs. Each run's current line is
/// kept in a buffer reused for the next one (no allocation per line).
fn merge_into(
    runs: Vec<File>,
    cfg: &Config,
    delim: u8,
    out: &mut dyn Write,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    let mut readers: Vec<BufReader<File>> = runs
        .into_iter()
        .map(|f| BufReader::with_capacity(super::BUF, f))
        .collect();
    let mut heads: Vec<Vec<u8>> = vec![Vec::new(); readers.len()];
    let mut live: Vec<bool> = Vec::with_capacity(readers.len());
    for (r, h) in readers.iter_mut().zip(heads.iter_mut()) {
        live.push(next_line(r, delim, h)?);
    }
    let mut prev: Option<Vec<u8>> = None;
    let mut n = 0u64;
    loop {
        n += 1;
        if n.is_multiple_of(CHECK_EVERY) && stop() {
            return Err(cancelled());
        }
        // The least head; on a tie the earlier run.
        let mut best: Option<usize> = None;
        for i in (0..heads.len()).filter(|&i| live[i]) {
            best = match best {
                Some(b) if cfg.compare(&heads[i], &heads[b]) != Ordering::Less => Some(b),
                _ => Some(i),
            };
        }
        let Some(i) = best else {
            return Ok(());
        };
        let line = &heads[i];
        let dup = cfg.unique
            && prev
                .as_deref()
                .is_some_and(|p| cfg.compare(p, line) == Ordering::Equal);
        if !dup {
            out.write_all(line)?;
            out.write_all(&[delim])?;
            if cfg.unique {
                let p = prev.get_or_insert_with(Vec::new);
                p.clear();
                p.extend_from_slice(line);
            }
        }
        live[i] = next_line(&mut readers[i], delim, &mut heads[i])?;
    }
}

/// Reads the next line of a run into `line`, without its delimiter; false at
/// the end of the run.
fn next_line(r: &mut BufReader<File>, delim: u8, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    if r.read_until(delim, line)? == 0 {
        return Ok(false);
    }
    if line.last() == Some(&delim) {
        line.pop();
    }
    Ok(true)
}

/// GNU's `-S SIZE`: a number with an optional unit (`b`, `K` (the default),
/// `M`, `G`, `T`, …); `%` (of physical memory) is left to the host's budget.
pub(super) fn parse_buffer_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = v.get(..digits)?.parse().ok()?;
    let mult: u64 = match v.get(digits..)? {
        "" | "k" | "K" => 1 << 10,
        "b" => 1,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        "t" | "T" => 1 << 40,
        "%" => return None,
        _ => return None,
    };
    Some(n.saturating_mul(mult))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_sizes_parse_like_gnu() {
        assert_eq!(parse_buffer_size("1"), Some(1024));
        assert_eq!(parse_buffer_size("10b"), Some(10));
        assert_eq!(parse_buffer_size("2M"), Some(2 << 20));
        assert_eq!(parse_buffer_size("50%"), None);
        assert_eq!(parse_buffer_size("x"), None);
    }
}
