//! The REPL as a person uses it: the real binary on a tmux terminal, driven with
//! send-keys and read with capture-pane (polled with a generous bound; no sleep is
//! an assertion). Each test has its own tmux server (`tmux -L <unique>`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a screen may take to show what a test waits for.
const PATIENCE: Duration = Duration::from_secs(30);

/// A secret value in the project's `.env` (classified secret by default).
const FILE_SECRET: &str = "file-secret-value-7f3a9c";
/// A secret typed into a secret-named variable.
const TYPED_SECRET: &str = "typed-secret-value-51be07";

const CONFIG: &str = r#"
[sandbox]
read = ["."]
write = ["."]

[tasks]
build = { cmd = "echo building", description = "build it" }
lint = "echo linting"
"#;

/// A project (cwd), `$HOME` and a state dir, and a tmux server of its own.
struct Term {
    _tmp: Option<tempfile::TempDir>,
    /// The arena (and its HTTP server) a test built the project from.
    _arena: Option<crate::flow_support::Arena>,
    dir: PathBuf,
    home: PathBuf,
    state: PathBuf,
    socket: String,
    /// The tmux session of the running safesh (a restart gets a new one).
    target: std::cell::RefCell<String>,
    starts: std::cell::Cell<u32>,
}

impl Term {
    fn new(name: &str) -> Term {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical");
        let dir = root.join("proj");
        let home = root.join("home");
        let state = root.join("state");
        for d in [&dir, &home, &state] {
            std::fs::create_dir(d).expect("mkdir");
        }
        std::fs::write(dir.join("safesh.toml"), CONFIG).expect("config");
        std::fs::write(dir.join(".env"), format!("API_TOKEN={FILE_SECRET}\n")).expect(".env");
        std::fs::write(dir.join("notes.txt"), "hello\n").expect("notes");
        let socket = format!("safesh-repl-{name}-{}", std::process::id());
        Term {
            _tmp: Some(tmp),
            _arena: None,
            dir,
            home,
            state,
            socket,
            target: std::cell::RefCell::new(String::new()),
            starts: std::cell::Cell::new(0),
        }
    }

    /// A terminal on the flow suite's project (its config, `.env`, and a local
    /// HTTP server for downloads).
    fn on_arena(name: &str, arena: crate::flow_support::Arena) -> Term {
        Term {
            _tmp: None,
            dir: arena.dir.clone(),
            home: arena.home.clone(),
            state: arena.state.clone(),
            socket: format!("safesh-repl-{name}-{}", std::process::id()),
            target: std::cell::RefCell::new(String::new()),
            starts: std::cell::Cell::new(0),
            _arena: Some(arena),
        }
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .output()
            .expect("run tmux (installed by scripts/test.sh)")
    }

    /// Starts `safesh --config safesh.toml EXTRA…` in a new window; when it exits the
    /// window shows `EXITED <status>`.
    fn start(&self, extra: &str) {
        let safesh = env!("CARGO_BIN_EXE_safesh");
        let script = format!(
            "env -i PATH=/usr/bin:/bin HOME={home} XDG_STATE_HOME={state} TERM=screen LANG=C.UTF-8 {safesh} --config {dir}/safesh.toml {extra}; echo EXITED $?; sleep 600",
            home = self.home.display(),
            state = self.state.display(),
            dir = self.dir.display(),
        );
        // The first start makes the server; a restart adds a session to it.
        let n = self.starts.get() + 1;
        self.starts.set(n);
        let name = format!("repl{n}");
        *self.target.borrow_mut() = name.clone();
        let out = self.tmux(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            &self.dir.display().to_string(),
            &script,
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        // (capture-pane drops the prompt's trailing space.)
        self.wait_for("the first prompt", |s| {
            s.lines()
                .any(|l| l.starts_with("safesh ") && l.ends_with(" $"))
        });
    }

    /// Waits for an empty prompt (primary or continuation) on the last line.
    fn ready(&self) {
        self.wait_for("an empty prompt", |s| {
            let last = s
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim_end();
            last == ">" || (last.starts_with("safesh ") && last.ends_with(" $"))
        });
    }

    /// Types `text` literally at the next empty prompt, until it shows whole (a
    /// line that does not show within 3 s, e.g. on a loaded machine, is cleared
    /// with Ctrl-U and typed again; `type_ahead_is_never_lost` sends without it).
    fn type_text(&self, text: &str) {
        let start = Instant::now();
        loop {
            self.ready();
            let target = self.target.borrow().clone();
            let out = self.tmux(&["send-keys", "-t", &target, "-l", text]);
            assert!(out.status.success(), "{out:?}");
            let typed = Instant::now();
            while typed.elapsed() < Duration::from_secs(3) {
                // (capture-pane drops trailing spaces.)
                if last_non_empty(&self.screen()).contains(text.trim_end()) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(
                start.elapsed() < PATIENCE,
                "typing {text:?} never showed:\n{}",
                self.screen()
            );
            self.keys(&["C-u"]);
        }
    }

    /// Presses keys (`Enter`, `C-c`, `Tab`, `Up`, …).
    fn keys(&self, keys: &[&str]) {
        let target = self.target.borrow().clone();
        let mut args = vec!["send-keys", "-t", &target];
        args.extend_from_slice(keys);
        let out = self.tmux(&args);
        assert!(out.status.success(), "{out:?}");
    }

    /// Ctrl-D at the next empty prompt.
    fn eof(&self) {
        self.ready();
        self.keys(&["C-d"]);
    }

    /// Types a line and Enter, and waits until the line editor took it (something
    /// shows below it: output, a prompt), so the next keys go to the next read.
    fn line(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
        self.wait_for("the line to be taken", |s| {
            !last_non_empty(s).contains(text.trim_end())
        });
    }

    /// The screen as text (`escapes`: with the colour and underline sequences).
    fn screen_with(&self, escapes: bool) -> String {
        let target = self.target.borrow().clone();
        let mut args = vec!["capture-pane", "-p", "-t", &target];
        if escapes {
            args.push("-e");
        }
        String::from_utf8_lossy(&self.tmux(&args).stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.screen_with(false)
    }

    /// Polls the screen until `ok` holds; fails with the screen after [`PATIENCE`].
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last non-empty line of the screen.
    fn last_line(&self) -> String {
        self.screen()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    }

    fn history_file(&self) -> PathBuf {
        self.state.join("safesh").join("repl_history")
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The last line of the screen with something on it.
fn last_non_empty(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("")
}

fn count(s: &str, needle: &str) -> usize {
    s.matches(needle).count()
}

#[test]
fn history_survives_a_restart() {
    let t = Term::new("history");
    t.start("");
    t.line("echo recalled-from-before");
    t.wait_for("the output", |s| {
        s.lines().any(|l| l == "recalled-from-before")
    });
    t.eof();
    t.wait_for("the exit", |s| s.contains("EXITED 0"));
    t.start("");
    t.keys(&["Up"]);
    t.wait_for("the recalled line on the prompt", |s| {
        s.lines().any(|l| l.contains("$ echo recalled-from-before"))
    });
    // And it runs.
    t.keys(&["Enter"]);
    t.wait_for("the recalled line's output", |s| {
        s.lines().any(|l| l == "recalled-from-before")
    });
}

#[test]
fn a_parse_error_is_marked_before_enter() {
    let t = Term::new("parse");
    t.start("");
    t.type_text("echo a )");
    let s = t.wait_for("the marker", |s| s.contains("<- PARSE_ERROR"));
    assert!(s.contains("unexpected `)`"), "{s}");
    // The offending token is underlined (SGR 4) in red.
    let esc = t.screen_with(true);
    assert!(esc.contains("\x1b[4") && esc.contains(')'), "{esc:?}");
    // Nothing ran; Enter gives the refusal the CLI prints.
    t.keys(&["Enter"]);
    t.wait_for("the refusal", |s| s.contains("safesh: PARSE_ERROR:"));
    t.wait_for("the status in the prompt", |s| s.contains("[2] $"));
    // Benign neighbour: a valid line has no marker.
    t.type_text("echo fine");
    // The hint is drawn with the text, so once the text shows, a marker would too.
    t.wait_for("the typed line", |s| s.contains("$ echo fine"));
    let last = t.last_line();
    assert!(
        last.contains("$ echo fine") && !last.contains("<-"),
        "{last}"
    );
    t.keys(&["Enter"]);
    t.wait_for("the output", |s| s.lines().any(|l| l == "fine"));
}

#[test]
fn a_multi_line_for_loop_runs_once_complete() {
    let t = Term::new("multiline");
    t.start("");
    t.line("for w in alpha beta; do");
    t.wait_for("the continuation prompt", |s| {
        s.lines().any(|l| l == ">" || l == "> ")
    });
    t.line("echo \"item-$w\"");
    // An open loop runs nothing.
    let s = t.wait_for("a second continuation prompt", |s| {
        s.lines()
            .filter(|l| l.starts_with("> ") || *l == ">")
            .count()
            >= 2
    });
    assert!(!s.lines().any(|l| l == "item-alpha"), "ran early:\n{s}");
    t.line("done");
    let s = t.wait_for("the loop's output", |s| s.lines().any(|l| l == "item-beta"));
    assert!(s.lines().any(|l| l == "item-alpha"), "{s}");
    assert_eq!(count(&s, "item-alpha\n"), 1, "{s}");
    // The session lives on: the loop's variable is still set.
    t.line("echo \"last=$w\"");
    t.wait_for("the variable", |s| s.lines().any(|l| l == "last=beta"));
}

#[test]
fn type_ahead_is_never_lost() {
    // Lines sent in one burst, without waiting for any prompt: the line editor
    // reads past the first Enter, and what it read ahead must reach the next
    // prompt (rustyline without `buffer-redux` dropped it).
    let t = Term::new("typeahead");
    t.start("");
    t.ready();
    // (A lost line shows in about one burst in three; ten bursts.)
    for burst in 0..10 {
        for i in 0..8 {
            t.keys(&[&format!("echo ahead-{burst}-{i}"), "Enter"]);
        }
        t.wait_for("every line's output", |s| {
            (0..8).all(|i| s.lines().any(|l| l == format!("ahead-{burst}-{i}")))
        });
    }
}

#[test]
fn ctrl_c_stops_a_command_waiting_on_the_terminal() {
    // `cat` and `read` block reading the terminal in-process: the kernel restarts
    // that read after SIGINT, so Ctrl-C must end the wait itself.
    let t = Term::new("ctrlc_read");
    t.start("");
    for (cmd, never) in [
        ("cat; echo cat-not-reached", "cat-not-reached"),
        ("read v; echo read-not-reached", "read-not-reached"),
    ] {
        t.type_text(cmd);
        t.keys(&["Enter"]);
        let start = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(300));
            t.keys(&["C-c"]);
            std::thread::sleep(Duration::from_millis(300));
            if t.last_line().ends_with("[130] $") {
                break;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "Ctrl-C did not stop `{cmd}`:\n{}",
                t.screen()
            );
        }
        let s = t.screen();
        assert!(!s.lines().any(|l| l == never), "{s}");
    }
    // Benign neighbour: a read that gets its line still works after the cancels.
    t.type_text("read w; echo got-$w");
    t.keys(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    // (No prompt while `read` waits: the keys go straight to it.)
    t.keys(&["-l", "typed-line"]);
    t.keys(&["Enter"]);
    t.wait_for("the line read", |s| {
        s.lines().any(|l| l == "got-typed-line")
    });
}

#[test]
fn ctrl_c_stops_the_running_command_and_the_repl_lives() {
    let t = Term::new("ctrlc");
    // --force: `sleep 100` is otherwise a nudge (a long sleep).
    t.start("--force");
    // (No output until it ends: typed and entered without waiting for one.)
    t.type_text("sleep 100; echo not-reached");
    t.keys(&["Enter"]);
    let start = Instant::now();
    // Ctrl-C until the prompt comes back (a key pressed before the command started
    // would only clear the next prompt's line).
    loop {
        t.keys(&["C-c"]);
        std::thread::sleep(Duration::from_millis(300));
        if t.screen().contains("[130] $") {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "Ctrl-C did not stop the command:\n{}",
            t.screen()
        );
    }
    let s = t.screen();
    assert!(!s.lines().any(|l| l == "not-reached"), "{s}");
    t.line("echo alive-after-ctrl-c");
    t.wait_for("the next command", |s| {
        s.lines().any(|l| l == "alive-after-ctrl-c")
    });
    // Ctrl-C at the prompt clears the line, nothing runs.
    t.type_text("echo never-run");
    t.keys(&["C-c"]);
    t.line("echo after-clear");
    let s = t.wait_for("the output", |s| s.lines().any(|l| l == "after-clear"));
    assert!(!s.lines().any(|l| l == "never-run"), "{s}");
}

#[test]
fn ctrl_d_exits_with_the_last_status() {
    let t = Term::new("ctrld");
    t.start("");
    t.line("false");
    t.wait_for("the failed status", |s| s.contains("[1] $"));
    t.eof();
    t.wait_for("the exit status", |s| s.contains("EXITED 1"));
    // Benign neighbour: `exit 3` ends it too, with its status.
    t.start("");
    t.line("exit 3");
    t.wait_for("exit's status", |s| s.contains("EXITED 3"));
}

#[test]
fn completion_lists_tasks_builtins_platform_commands_and_paths() {
    let t = Term::new("complete");
    t.start("");
    t.type_text("task ");
    t.keys(&["Tab", "Tab"]);
    t.wait_for("the task names", |s| {
        s.contains("build") && s.contains("lint")
    });
    t.keys(&["C-c"]);
    t.type_text("hel");
    t.keys(&["Tab"]);
    t.wait_for("the completed builtin", |s| s.contains("$ help"));
    t.keys(&["C-c"]);
    // Platform commands complete like any command.
    t.type_text("fs:rea");
    t.keys(&["Tab"]);
    t.wait_for("the completed platform command", |s| {
        s.contains("$ fs:read")
    });
    t.keys(&["C-c"]);
    t.type_text("cat not");
    t.keys(&["Tab"]);
    t.wait_for("the completed path", |s| s.contains("$ cat notes.txt"));
    t.keys(&["Enter"]);
    t.wait_for("the file", |s| s.lines().any(|l| l == "hello"));
    // A task runs from the REPL through the task runner.
    t.line("task lint");
    t.wait_for("the task's output", |s| s.lines().any(|l| l == "linting"));
}

#[test]
fn a_refused_command_shows_code_and_suggestion_and_the_repl_continues() {
    let t = Term::new("refused");
    t.start("");
    t.line("bash -c 'echo hi'");
    let s = t.wait_for("the refusal", |s| s.contains("safesh: BLOCKED:"));
    assert!(s.contains("suggestion:"), "{s}");
    t.wait_for("the status", |s| s.contains("[126] $"));
    t.line("echo still-here");
    t.wait_for("the next command", |s| s.lines().any(|l| l == "still-here"));
}

/// An error in an array subscript ends `bash -c`, but at a prompt it
/// abandons only the line, as interactive bash does.
#[test]
fn a_subscript_error_at_the_prompt_keeps_the_repl() {
    let t = Term::new("subscript");
    t.start("");
    t.line("a=(1 2); echo ${a[1/0]}");
    t.wait_for("the error", |s| s.contains("division by 0"));
    t.line("echo still-here");
    t.wait_for("the next command", |s| s.lines().any(|l| l == "still-here"));
}

#[test]
fn a_secret_value_never_lands_in_the_history_file() {
    let t = Term::new("secret");
    t.start("");
    t.line(&format!("export SERVICE_TOKEN={TYPED_SECRET}"));
    t.line(&format!("echo {FILE_SECRET} | wc -c"));
    t.line("echo public-words");
    t.wait_for("the last output", |s| {
        s.lines().any(|l| l == "public-words")
    });
    t.eof();
    t.wait_for("the exit", |s| s.contains("EXITED 0"));
    let history = std::fs::read_to_string(t.history_file()).expect("history file");
    assert!(!history.contains(TYPED_SECRET), "{history}");
    assert!(!history.contains(FILE_SECRET), "{history}");
    assert!(
        history.contains("export SERVICE_TOKEN=[secret]"),
        "{history}"
    );
    assert!(history.contains("echo [secret] | wc -c"), "{history}");
    assert!(history.contains("echo public-words"), "{history}");
    // Owner-only, outside the project.
    assert!(!t.history_file().starts_with(&t.dir));
    assert!(Path::new(&t.history_file()).exists());
}

#[test]
fn an_approval_is_asked_in_place_and_the_repl_goes_on() {
    let a = crate::flow_support::Arena::new();
    let rm = a.script("rm $(curl -s {URL}/list.txt) && echo removed");
    let keep = a.path("keep1.txt");
    let t = Term::on_arena("approve", a);
    t.start("");
    t.line(&rm);
    t.wait_for("the question", |s| s.contains("[y/N]"));
    assert!(keep.exists(), "removed before the answer");
    t.keys(&["y", "Enter"]);
    t.wait_for("the command's output", |s| {
        s.lines().any(|l| l == "removed")
    });
    assert!(!keep.exists());
    // The next line is a fresh request: no approval carried over.
    t.line("echo next-line");
    t.wait_for("the next line", |s| s.lines().any(|l| l == "next-line"));
}
