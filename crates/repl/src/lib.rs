//! The interactive face of safesh: `safesh` with a terminal on stdin.
//!
//! One [`Session`] lives across lines (variables, functions, cwd), and every line
//! goes through [`Session::exec`] exactly as `safesh -c` runs a script: the same
//! parse, policy, sandbox and labels, refusals printed with the same text, and
//! approvals asked on the terminal by the channel the binary set on the session.
//! This crate adds the line editor (rustyline): highlighting and the parse error
//! before Enter ([`highlight`], [`input`]), continuation lines for open
//! constructs, completion ([`complete`]), the prompt ([`prompt`]), a history
//! file without secret values ([`history`]) and Ctrl-C ([`interrupt`]).

pub mod complete;
pub mod helper;
pub mod highlight;
pub mod history;
pub mod input;
pub mod interrupt;
pub mod prompt;

use helper::{ReplHelper, State};
use input::{Shape, classify};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{CompletionType, Config, EditMode, Editor};
use safesh_core::{InputSource, OutputTarget, Session};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

/// Runs a REPL command with the words after its name; returns the status.
pub type RunCommand = Box<dyn FnMut(&[String]) -> i32>;

/// A command the REPL runs itself instead of the session (the binary's task
/// runner: `task NAME ARG…`), when a line is that name followed by plain words.
pub struct ReplCommand {
    /// The first word.
    pub name: String,
    /// Runs it with the words after the name; returns the status.
    pub run: RunCommand,
}

/// How the REPL is set up (the binary fills this in).
pub struct ReplOptions {
    /// The history file (`<state dir>/repl_history`); `None`: in memory only.
    pub history_file: Option<PathBuf>,
    /// At most this many history entries are kept.
    pub history_max: usize,
    /// Task names (from `[tasks]`), completed after `task `.
    pub tasks: Vec<String>,
    /// External programs the policy allows, completed as commands.
    pub programs: Vec<String>,
    /// Directories whose entries may be completed (the read roots).
    pub read_roots: Vec<PathBuf>,
    /// The user's home directory (the prompt writes it `~`).
    pub home: Option<PathBuf>,
    /// Commands the REPL runs itself.
    pub commands: Vec<ReplCommand>,
    /// Paint with ANSI colours.
    pub colour: bool,
}

impl Default for ReplOptions {
    fn default() -> Self {
        ReplOptions {
            history_file: None,
            history_max: history::DEFAULT_MAX_ENTRIES,
            tasks: Vec::new(),
            programs: Vec::new(),
            read_roots: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            commands: Vec::new(),
            colour: colour_wanted(),
        }
    }
}

/// Colours unless `NO_COLOR` is set or the terminal is `dumb`.
pub fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Why the REPL could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplError {
    /// The line editor could not take the terminal.
    #[error("cannot start the line editor: {0}")]
    Editor(#[from] ReadlineError),
}

/// Runs the REPL until Ctrl-D on an empty line (or `exit`); returns the last status.
pub fn run(session: Session, opts: ReplOptions) -> Result<i32, ReplError> {
    Repl::new(session, opts)?.run()
}

struct Repl {
    session: Session,
    opts: ReplOptions,
    editor: Editor<ReplHelper, FileHistory>,
    state: Rc<RefCell<State>>,
    ctrl_c: Option<interrupt::CtrlC>,
    status: i32,
}

impl Repl {
    fn new(session: Session, opts: ReplOptions) -> Result<Repl, ReplError> {
        let config = Config::builder()
            .max_history_size(opts.history_max)?
            .auto_add_history(false)
            .history_ignore_dups(true)?
            .history_ignore_space(true)
            .completion_type(CompletionType::List)
            .edit_mode(EditMode::Emacs)
            .build();
        let mut editor: Editor<ReplHelper, FileHistory> = Editor::with_config(config)?;
        let state = Rc::new(RefCell::new(State::default()));
        editor.set_helper(Some(ReplHelper::new(state.clone(), opts.colour)));
        if let Some(path) = &opts.history_file {
            history::prepare(path);
            // A missing or unreadable file is a fresh history.
            let _ = editor.load_history(path);
        }
        let ctrl_c = interrupt::CtrlC::install(session.interrupter());
        Ok(Repl {
            status: session.last_status(),
            session,
            opts,
            editor,
            state,
            ctrl_c,
        })
    }

    /// The names completion offers, from the session as it is now (platform
    /// commands included: they resolve between utilities and programs).
    fn refresh_names(&mut self) {
        let mut commands: Vec<String> = safesh_core::builtins::names()
            .map(str::to_string)
            .chain(
                safesh_core::registry::names()
                    .into_iter()
                    .map(str::to_string),
            )
            .chain(
                safesh_platform::registry::list(None)
                    .into_iter()
                    .map(|c| c.name().to_string()),
            )
            .chain(self.opts.programs.iter().cloned())
            .chain(self.session.function_names())
            .chain(self.opts.commands.iter().map(|c| c.name.clone()))
            .collect();
        commands.sort();
        commands.dedup();
        let mut state = self.state.borrow_mut();
        state.names = complete::Names {
            commands,
            tasks: self.opts.tasks.clone(),
            variables: self.session.variable_names(),
            cwd: self.session.cwd().to_path_buf(),
            read_roots: self.opts.read_roots.clone(),
        };
    }

    fn run(mut self) -> Result<i32, ReplError> {
        loop {
            self.refresh_names();
            let prompt = if self.state.borrow().pending.is_empty() {
                prompt::primary(self.session.cwd(), self.opts.home.as_deref(), self.status)
            } else {
                prompt::CONTINUATION.to_string()
            };
            match self.editor.readline(&prompt) {
                Ok(line) => {
                    let text = {
                        let mut state = self.state.borrow_mut();
                        let text = format!("{}{line}", state.pending);
                        if classify(&text) == Shape::Incomplete {
                            state.pending = text + "\n";
                            continue;
                        }
                        state.pending.clear();
                        text
                    };
                    if text.trim().is_empty() {
                        continue;
                    }
                    self.status = self.run_line(&text);
                    self.remember(&text);
                    if self.exited() {
                        break;
                    }
                }
                Err(ReadlineError::Interrupted) => {
                    // Ctrl-C at the prompt: the line (and any open construct) is dropped.
                    self.state.borrow_mut().pending.clear();
                }
                Err(ReadlineError::Eof) => {
                    let dropped = !self.state.borrow().pending.is_empty();
                    if dropped {
                        self.state.borrow_mut().pending.clear();
                        eprintln!("safesh: the unfinished command was dropped (Ctrl-D)");
                        continue;
                    }
                    break;
                }
                Err(e) => return Err(ReplError::Editor(e)),
            }
        }
        Ok(self.status)
    }

    /// Runs one complete text; returns its status.
    fn run_line(&mut self, text: &str) -> i32 {
        if let Some(status) = self.run_repl_command(text) {
            self.session.set_last_status(status);
            return status;
        }
        if let Some(c) = &self.ctrl_c {
            c.take();
        }
        let outcome = self
            .session
            .exec(text, InputSource::Inherit, OutputTarget::Inherit);
        let _ = std::io::stdout().flush();
        self.session
            .record_history(safesh_core::context::HistoryRecord::new(
                "repl", text, &outcome,
            ));
        let interrupted = self.ctrl_c.as_ref().is_some_and(|c| c.take());
        if interrupted {
            // As bash: a command stopped by Ctrl-C leaves 128 + SIGINT.
            self.session.set_last_status(130);
            return 130;
        }
        outcome.exit_code
    }

    /// `exit` ran: the session asked to end.
    fn exited(&self) -> bool {
        self.session.exit_requested()
    }

    /// A REPL command (`task NAME ARG…`) when the line is its name followed by
    /// plain words (no expansion, redirection or operator) and no function of
    /// that name exists.
    fn run_repl_command(&mut self, text: &str) -> Option<i32> {
        let words = plain_words(text)?;
        let (name, args) = words.split_first()?;
        if self.session.function_names().iter().any(|f| f == name) {
            return None;
        }
        let cmd = self.opts.commands.iter_mut().find(|c| &c.name == name)?;
        Some((cmd.run)(args))
    }

    /// Adds `text` to the history (memory and file), with secret values withheld.
    fn remember(&mut self, text: &str) {
        let redacted = self.session.redact_for_history(text);
        let Some(entry) = history::entry(text, redacted) else {
            return;
        };
        if self.editor.add_history_entry(entry).unwrap_or(false)
            && let Some(path) = &self.opts.history_file
        {
            let _ = self.editor.append_history(path);
        }
    }
}

/// The words of `text` when it is only plain words (single or double quotes
/// around plain text allowed); `None` when anything would need the shell.
fn plain_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.trim().chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '$' | '`' | '\\') => return None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, ' ' | '\t') => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) if "\n;&|<>()$`\\*?[]{}~#=".contains(c) => return None,
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn plain_words_only() {
        assert_eq!(plain_words("task build a").unwrap(), ["task", "build", "a"]);
        assert_eq!(plain_words("task '[a, b]'").unwrap(), ["task", "[a, b]"]);
        assert!(plain_words("task build | tee x").is_none());
        assert!(plain_words("task $x").is_none());
        assert!(plain_words("task b; rm x").is_none());
    }
}
