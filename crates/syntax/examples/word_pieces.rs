//! Prints the pieces brush-parser makes of each word given: where a form it
//! does not know is left as text (see core's `join_dollar_brace`).
//!
//! `cargo run -p safesh-syntax --example word_pieces -- '${x~}' 'a${b}c'`

fn main() {
    for w in std::env::args().skip(1) {
        let pieces = safesh_syntax::parse_word(&w).map(|p| {
            p.into_iter()
                .map(|x| format!("{:?}", x.piece))
                .collect::<Vec<_>>()
        });
        println!("{w}: {pieces:?}");
    }
}
