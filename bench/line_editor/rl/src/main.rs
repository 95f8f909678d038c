use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Editor, Helper, history::FileHistory};
use std::borrow::Cow;
struct H;
impl Completer for H { type Candidate = Pair; fn complete(&self, _l: &str, p: usize, _c: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> { Ok((p, vec![])) } }
impl Hinter for H { type Hint = String; }
impl Highlighter for H { fn highlight<'l>(&self, l: &'l str, _p: usize) -> Cow<'l, str> { Cow::Owned(format!("\x1b[1m{l}\x1b[0m")) } }
impl Validator for H { fn validate(&self, c: &mut ValidationContext) -> rustyline::Result<ValidationResult> { Ok(if c.input().ends_with('\\') { ValidationResult::Incomplete } else { ValidationResult::Valid(None) }) } }
impl Helper for H {}
fn main() {
    let mut e: Editor<H, FileHistory> = Editor::new().unwrap();
    e.set_helper(Some(H));
    let _ = e.load_history("/tmp/h");
    while let Ok(l) = e.readline("> ") { let _ = e.add_history_entry(l); }
    let _ = e.save_history("/tmp/h");
}
