use reedline::{Completer, DefaultPrompt, FileBackedHistory, Highlighter, Reedline, Signal, Span, StyledText, Suggestion, ValidationResult, Validator};
struct V; impl Validator for V { fn validate(&self, l: &str) -> ValidationResult { if l.ends_with('\\') { ValidationResult::Incomplete } else { ValidationResult::Complete } } }
struct Hl; impl Highlighter for Hl { fn highlight(&self, l: &str, _c: usize) -> StyledText { let mut s = StyledText::new(); s.push((nu_ansi_term::Style::new().bold(), l.to_string())); s } }
struct C; impl Completer for C { fn complete(&mut self, _l: &str, p: usize) -> Vec<Suggestion> { vec![Suggestion { value: "x".into(), span: Span::new(p, p), ..Default::default() }] } }
fn main() {
    let h = FileBackedHistory::with_file(1000, "/tmp/h2".into()).unwrap();
    let mut r = Reedline::create().with_history(Box::new(h)).with_validator(Box::new(V)).with_highlighter(Box::new(Hl)).with_completer(Box::new(C));
    let p = DefaultPrompt::default();
    while let Ok(Signal::Success(_)) = r.read_line(&p) {}
}
