//! mawk's grammar corners: assignments as the right operand of comparisons
//! and logical operators, chained comparisons, `func` as a plain name,
//! function parameter lists and argument counts, and `srand`/`rand`.

use super::check;

#[test]
fn assignment_as_right_operand() {
    check(&["$2 == $2 = \"x\" {print; print $2}"], "a x\nb y\n");
    check(&["BEGIN { v = 1; print 3 == v = 3; print v }"], "");
    check(
        &["BEGIN { print 0 || w = 7; print w; print 1 && z = 0; print z }"],
        "",
    );
    check(&["BEGIN { print \"ab\" ~ r = \"b\"; print r }"], "");
    check(&["BEGIN { n = 5; print 2 < n -= 4; print n }"], "");
    check(&["{ print $1 != t = $1 \"\"; print t }"], "q\n");
    // Still errors: the operand of arithmetic or concatenation is no lvalue.
    check(&["BEGIN { print 1 + y = 2 }"], "");
    check(&["BEGIN { print \"a\" y = 2 }"], "");
    check(&["BEGIN { print -y = 2 }"], "");
}

#[test]
fn comparisons_chain_left_to_right() {
    check(
        &["BEGIN { print (3 > 2 > 1), (1 < 2 < 3), (2 == 2 == 1) }"],
        "",
    );
    check(&["{ print ($1 < $2 < $3) }"], "1 2 3\n3 2 1\n");
}

#[test]
fn func_is_not_a_keyword() {
    check(&["func f(){print \"F\"} BEGIN{f()}"], "");
    check(&["BEGIN { func = 3; print func }"], "");
    check(&["function g(x){return x+1} BEGIN{print g(g(1))}"], "");
}

#[test]
fn parameter_lists() {
    for prog in [
        "function f(a,) { } BEGIN { print 1 }",
        "function f(,) { } BEGIN { print 1 }",
        "function f(a b) { } BEGIN { print 1 }",
        "function f(a,,b) { } BEGIN { print 1 }",
        "function f(a, a) { } BEGIN { print 1 }",
        "function f(a,\n b) { print a b } BEGIN { f(1, 2) }",
        "function f(x) { return x } BEGIN { print f(1, 2) }",
        "BEGIN { print f(1, 2, 3) } function f(x, y) { return x }",
        "function f(x, y, z) { return x y z } BEGIN { print f(1), f(1, 2) }",
    ] {
        check(&[prog], "");
    }
}

#[test]
fn arguments_are_evaluated_in_order() {
    check(
        &["function f(a, b) { return a \"-\" b } BEGIN { i = 1; print f(i++, i++), i }"],
        "",
    );
    check(
        &["function g() { print \"g\" } function f(a, b) { print \"f\" } BEGIN { f(g(), g()) }"],
        "",
    );
}

#[test]
fn srand_seeds_like_mawk() {
    for seed in ["1", "0", "42", "-7", "2.9", "1e12", "-1e12", "\"9\"", "x"] {
        check(
            &[&format!(
                "BEGIN {{ srand({seed}); for (i = 0; i < 5; i++) printf \"%.12f\\n\", rand() }}"
            )],
            "",
        );
    }
    check(
        &["BEGIN { srand(3); a = rand(); srand(3); print (a == rand()), srand(5) }"],
        "",
    );
    check(
        &[
            "-v",
            "s=42",
            "BEGIN { srand(s); print rand(); print rand() }",
        ],
        "",
    );
}

#[test]
fn negative_nf_is_a_run_time_error() {
    check(&["{ NF = -1; print \"after\" }"], "a b\n");
    check(&["{ print; NF = -3 } END { print \"end\" }"], "a b\nc\n");
    check(&["{ NF = 1; print; NF = 0; print length() }"], "a b\n");
}

#[test]
fn numbers_out_of_double_range() {
    // Input text that overflows or underflows a double stays a string.
    check(
        &["{ print ($1 == $2), ($3 > 1), ($4 > 1e308), ($5 < 0), ($6 > 0), $1 + 0, $4 + 1 }"],
        "1e-400 0 1e308 1e309 -1e309 4e-320\n",
    );
    check(
        &["-v", "v=1e400", "BEGIN { print (v > 5), (v < \"5\") }"],
        "",
    );
    // In the program text it is a compile error.
    check(&["BEGIN { print 1e309 }"], "");
    check(&["BEGIN { print 1e-400 }"], "");
    check(&["BEGIN { print 0e-999, 1e308, 2.5e-308 }"], "");
}

#[test]
fn not_operand_concatenates() {
    check(
        &["BEGIN { a = \"x\"; print a !0; print a !a; b = 1 !1; print b; print !0 !0 }"],
        "",
    );
    check(&["{ print $1 !$2, \"v\" !/a/ }"], "a b\n0 1\n");
    check(
        &["$1 !~ /a/ { print \"no a:\", $1 } $1 != \"b\""],
        "a\nb\nc\n",
    );
}

#[test]
fn printf_corners() {
    // %c of input that looks numeric is a character code.
    check(
        &["{ printf \"[%c][%c][%c][%c][%c]\\n\", $1, $2, $3, $4, $5 }"],
        "65 0x41 7.9 abc 321\n",
    );
    check(
        &[
            "BEGIN { printf \"[%#.0g][%#5.0g][%#.0e][%#.3g][%#g][%#.0f]\\n\", 123456789, 5, 7, 1, 2, 3 }",
        ],
        "",
    );
    check(
        &[
            "BEGIN { printf \"[% s][%+s][% 3s][% -3s][%5s][% .2s][% s][% s]\\n\", \"\", \"\", \"\", \"\", \"\", \"\", x, \"a\" }",
        ],
        "",
    );
    check(
        &["BEGIN { printf \"[% .0s][% 1.0s][% #12.0s]\\n\", \"12abc\", -2.5, 1e-5 }"],
        "",
    );
}
