//! Times `safesh_syntax::parse` on a file (a development aid for the parse benchmark).
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let mode = std::env::args().nth(2).unwrap_or_default();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let t = std::time::Instant::now();
    if mode == "tok" {
        let toks = brush_parser::uncached_tokenize_str(
            &text,
            &safesh_syntax::options().tokenizer_options(),
        );
        println!(
            "tokens {} in {:?}",
            toks.map(|t| t.len()).unwrap_or(0),
            t.elapsed()
        );
        return;
    }
    if mode == "brush" {
        let mut parser =
            brush_parser::Parser::new(std::io::Cursor::new(&text), &safesh_syntax::options());
        let r = parser.parse_program();
        println!("brush {:?} in {:?}", r.is_ok(), t.elapsed());
        return;
    }
    let r = safesh_syntax::parse(&text);
    println!(
        "{} bytes: full {:?} in {:?}",
        text.len(),
        r.as_ref().map(|_| ()).map_err(|e| e.to_string()),
        t.elapsed()
    );
}
