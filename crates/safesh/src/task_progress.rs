//! Progress of `safesh task` on a terminal: a status line when each task starts
//! and ends (with its time and status), and every [`TICK`] a line naming the tasks
//! still running and for how long. Off when stderr is not a terminal, so piped
//! and captured output stays exactly the tasks' own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the still-running line is printed.
const TICK: Duration = Duration::from_secs(10);

/// Status lines for the tasks of one run.
pub struct Progress {
    running: Arc<Mutex<Vec<(String, Instant)>>>,
    done: Arc<AtomicBool>,
}

impl Progress {
    /// Status lines when stderr is a terminal; `None` otherwise.
    pub fn on_terminal() -> Option<Progress> {
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(2) } != 1 {
            return None;
        }
        let progress = Progress {
            running: Arc::new(Mutex::new(Vec::new())),
            done: Arc::new(AtomicBool::new(false)),
        };
        let running = progress.running.clone();
        let done = progress.done.clone();
        // A detached ticker: it only reads the table and writes stderr, and ends
        // within a step of the run's end.
        let _ = std::thread::Builder::new()
            .name("task-progress".into())
            .spawn(move || {
                let mut last = Instant::now();
                while !done.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(200));
                    if last.elapsed() < TICK {
                        continue;
                    }
                    last = Instant::now();
                    let line = match running.lock() {
                        Ok(r) if !r.is_empty() => r
                            .iter()
                            .map(|(name, since)| format!("{name} {}", seconds(since.elapsed())))
                            .collect::<Vec<_>>()
                            .join(", "),
                        _ => continue,
                    };
                    if !done.load(Ordering::SeqCst) {
                        status(&format!("… running: {line}"));
                    }
                }
            });
        Some(progress)
    }

    /// A task starts.
    pub fn start(&self, task: &str) {
        if let Ok(mut r) = self.running.lock() {
            r.push((task.to_string(), Instant::now()));
        }
        status(&format!("▶ {task}"));
    }

    /// A task ended with `code`.
    pub fn end(&self, task: &str, code: i32) {
        let since = self.running.lock().ok().and_then(|mut r| {
            let i = r.iter().position(|(n, _)| n == task)?;
            Some(r.remove(i).1)
        });
        let took = since.map(|s| seconds(s.elapsed())).unwrap_or_default();
        if code == 0 {
            status(&format!("✔ {task} ({took})"));
        } else {
            status(&format!("✘ {task}: status {code} ({took})"));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// One status line on stderr, after the tasks' own output so far. One
/// `write(2)`: `writeln!` writes its pieces separately, and the tasks' output
/// (written from other threads straight to the descriptors) landed between
/// them on the terminal.
fn status(text: &str) {
    let _ = std::io::stdout().flush();
    let line = format!("safesh: {text}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `1.2 s`, `12 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{} s", d.as_secs())
    }
}
