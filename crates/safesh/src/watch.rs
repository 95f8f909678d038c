//! `safesh task --watch`: run, then run again after each burst of file changes
//! under the roots (a debounce), ignoring `target/`, `.git/` and the task's own
//! writes (changes made while it runs are dropped).

use notify::{Event, EventKind, RecursiveMode, Watcher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// A burst ends after this long without a change.
const DEBOUNCE: Duration = Duration::from_millis(300);
/// After a run, changes still arriving this soon are the run's own (inotify
/// delivers them after the writer has finished).
const SETTLE: Duration = Duration::from_millis(150);
/// Directories whose changes never trigger a run.
const IGNORED: &[&str] = &["target", ".git"];

/// Runs `run` now and after every burst of changes under `roots`; returns only
/// when watching fails (the exit status).
pub fn watch(roots: &[PathBuf], mut run: impl FnMut() -> i32) -> i32 {
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    let mut watcher = match notify::recommended_watcher(move |ev| {
        let _ = tx.send(ev);
    }) {
        Ok(w) => w,
        Err(e) => return fail(format!("cannot watch files: {e}")),
    };
    for root in roots {
        if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
            return fail(format!("cannot watch {}: {e}", root.display()));
        }
    }
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    loop {
        let code = run();
        // Drop what the run itself wrote.
        loop {
            match rx.recv_timeout(SETTLE) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return fail("the file watcher stopped"),
            }
        }
        // Said once the run's own changes are dropped: from here on, a change counts.
        let _ = writeln!(
            std::io::stderr(),
            "safesh: task ended with status {code}; watching {} for changes (Ctrl-C stops)",
            shown.join(", ")
        );
        // Wait for a change that counts, then for the burst to end.
        loop {
            match rx.recv() {
                Ok(Ok(ev)) if counts(&ev) => break,
                Ok(_) => continue,
                Err(_) => return fail("the file watcher stopped"),
            }
        }
        loop {
            match rx.recv_timeout(DEBOUNCE) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return fail("the file watcher stopped"),
            }
        }
    }
}

/// A change to a file outside the ignored directories (reads do not count).
fn counts(ev: &Event) -> bool {
    let change = matches!(
        ev.kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
    );
    change && ev.paths.iter().any(|p| !ignored(p))
}

fn ignored(path: &Path) -> bool {
    path.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|name| IGNORED.contains(&name))
    })
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(std::io::stderr(), "safesh: task --watch: {msg}");
    1
}

#[cfg(test)]
mod tests {
    use super::ignored;
    use std::path::Path;

    #[test]
    fn build_output_and_git_are_ignored() {
        assert!(ignored(Path::new("/p/target/debug/x")));
        assert!(ignored(Path::new("/p/.git/index")));
        assert!(!ignored(Path::new("/p/src/targets.rs")));
        assert!(!ignored(Path::new("/p/src/main.rs")));
    }
}
