//! Prints the syntax tree safesh runs for each script given (brush-parser's
//! AST after safesh's pre-pass), with source positions.
//!
//! `cargo run -p safesh-syntax --example ast_dump -- 'exec {fd}>f'`

fn main() {
    for s in std::env::args().skip(1) {
        println!("{:#?}", safesh_syntax::parse(&s));
    }
}
