//! The pieces' program must be the whole parse's program, locations included.

use super::*;

/// Parses `source` whole (brush's own path) and in pieces of `piece` tokens.
fn both(source: &str, piece: usize) -> (String, String) {
    let whole = crate::parse_program(source).map(|p| format!("{p:?}"));
    let split = parse_in_pieces(source, &Budget::default(), piece, piece)
        .map(|r| r.map(|p| format!("{p:?}")));
    let whole = whole.unwrap_or_else(|e| format!("error {e}"));
    let split = match split {
        Some(r) => r.unwrap_or_else(|e| format!("error {e}")),
        None => whole.clone(),
    };
    (whole, split)
}

const SCRIPTS: &[&str] = &[
    "echo a\necho b\n\n\necho c; echo d &\necho e\n",
    "cat <<EOF; echo x\nbody $HOME\nline two\nEOF\necho after\ncat <<-'Q'\n\tq\n\tQ\necho last\n",
    "if true\nthen\n echo a\nelse\n echo b\nfi\necho c\n",
    "for x in 1 2\ndo\n echo $x\ndone\nwhile false\ndo :\ndone\necho z\n",
    "case a in\n a) echo a\n ;;\n b)\n echo b;;\nesac\necho after\n",
    "f()\n{\n echo f\n}\nfunction g\n{\n echo g\n}\nf\ng\n",
    "echo a \\\nb \\\nc\necho 'multi\nline' \"also\nthis\"\necho $(echo a\necho b)\n",
    "true &&\nfalse ||\necho or\necho a |\ncat\n",
    "{ echo a\n echo b\n}\n( echo c\n echo d\n)\necho e\n",
    "a=(1\n2\n3)\necho ${a[@]}\n[[ a == a &&\n b == b ]]\necho ok\n",
    "coproc\n{ echo x; }\necho y\n",
    "coproc NAME\n{ echo x; }\necho y\n",
    "time\necho timed\n! \necho bang\n",
    "echo if\necho fi\necho done\necho then\necho {\necho }\necho end\n",
    "echo a # comment ) fi\n# another ( if\necho b\n",
    "echo `echo a\necho b`\necho c\n",
    "if true; then\n echo a\n",
    "echo a\necho 'unterminated\n",
    "echo a\nfi\necho b\n",
    "echo a\n)\necho b\n",
    "select x in a b\ndo\n break\ndone\necho after\n",
    "cat <<A <<B\na\nA\nb\nB\necho x\n",
    "cat <<'E'\nline \\\nE\necho y\ncat <<E\nline \\\nE\necho z\n",
    "x=$(cat <<E\nin\nE\n)\necho $x\n",
    "# comment \\\necho z\necho $((1 +\n2))\n",
    "echo \"a\\\nb\"\necho 'c\\\n'\necho é\necho ü\n",
    "cat <<E\nunterminated\n",
    "echo a\n\necho \"open\necho b\n",
    "echo a\necho $(echo\necho b\n",
    "echo a\necho b\ncat <<E\nx\n",
    "echo a\necho `b\n",
    "echo a\necho b\ncat <<E <<F\nx\nE\ny\n",
];

#[test]
fn pieces_equal_the_whole_parse_at_every_piece_size() {
    for s in SCRIPTS {
        for piece in [0, 1, 2, 3, 5, 8] {
            let (whole, split) = both(s, piece);
            assert_eq!(whole, split, "script {s:?} with pieces of {piece}");
        }
    }
}

#[test]
fn a_long_script_is_cut_into_many_pieces_and_stays_the_same() {
    let mut s = String::new();
    for i in 0..3000 {
        s.push_str(&format!(
            "echo {i}; if true\nthen echo in\nfi\ncat <<E\n{i}\nE\n"
        ));
    }
    let (whole, split) = both(&s, PIECE_TOKENS);
    assert_eq!(whole, split);
    let tokens = brush_parser::uncached_tokenize_str(&s, &crate::options().tokenizer_options())
        .unwrap_or_default();
    assert!(
        cuts(&tokens).len() >= 3000,
        "the scan finds the top-level newlines"
    );
}

#[test]
fn a_cancelled_budget_stops_between_pieces() {
    let s = "echo a\n".repeat(20_000);
    let stop = || true;
    let budget = Budget {
        max_bytes: 0,
        cancelled: &stop,
    };
    let r = parse_in_pieces(&s, &budget, PIECE_TOKENS, crate::tokens::CHUNK_BYTES);
    assert!(matches!(r, Some(Err(ParseError::Cancelled))));
}

#[test]
fn every_cut_the_scan_proposes_in_an_ordinary_script_is_a_top_level_one() {
    let block = "case $x in\n a) echo a ;;\n (b) echo b ;;\nesac\nf() {\n  echo f\n}\n\
                 while read -r l; do\n  echo \"$l\"\ndone < f\nfor i in 1 2; do echo $i; done\n\
                 cat <<EOF\nfi done esac )\nEOF\n[[ -n $x &&\n -z $y ]]\n( cd /tmp\n ls )\n\
                 echo 'fi\n}' # done\n";
    let s = block.repeat(50);
    let tokens = brush_parser::uncached_tokenize_str(&s, &crate::options().tokenizer_options())
        .unwrap_or_default();
    let cuts = cuts(&tokens);
    assert!(cuts.len() >= 50 * 8, "{} cuts", cuts.len());
    let mut start = 0;
    for cut in cuts {
        let piece = brush_parser::parse_tokens(&tokens[start..cut], &crate::options());
        assert!(piece.is_ok(), "cut at token {cut} is not at the top level");
        start = cut + 1;
    }
}

#[test]
fn chunked_tokens_equal_the_whole_texts_at_every_chunk_size() {
    let options = crate::options().tokenizer_options();
    for s in SCRIPTS {
        let whole = brush_parser::uncached_tokenize_str(s, &options).map(|t| format!("{t:?}"));
        for chunk in [0, 1, 2, 5, 9, 20] {
            let chunked = crate::tokens::tokenize(s, &Budget::default(), chunk);
            match (&whole, chunked) {
                (Ok(w), Ok(Some(c))) => {
                    assert_eq!(w, &format!("{c:?}"), "script {s:?} in chunks of {chunk}")
                }
                // The error itself is compared by the parse test above.
                (Err(_), Ok(None) | Err(_)) => {}
                (w, c) => panic!("script {s:?} in chunks of {chunk}: whole {w:?}, chunked {c:?}"),
            }
        }
    }
}
