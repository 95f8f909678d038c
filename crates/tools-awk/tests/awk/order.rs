//! `for (k in a)` visits keys in mawk's order (its hash table layout, which
//! depends on key types, lookups, deletions and growth), and the loop
//! variable is a string.

use super::check;

#[test]
fn small_arrays() {
    check(
        &["BEGIN { a[\"x\"]; a[\"y\"]; a[\"z\"]; for (k in a) print k }"],
        "",
    );
    check(
        &["BEGIN { for (i = 1; i <= 20; i++) a[i] = i; for (k in a) print k, a[k] }"],
        "",
    );
    check(
        &["BEGIN { a[1]; a[\"one\"]; a[2.5]; a[-3]; a[\"\"]; for (k in a) print \"[\" k \"]\" }"],
        "",
    );
    check(
        &["{ n[$1]++ } END { for (w in n) print w, n[w] }"],
        "b\na\nc\nb\na\nb\nd\n",
    );
}

#[test]
fn lookups_reorder_buckets() {
    // Counting words: every `n[$1]++` moves the key to the front of its list.
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("w{} {}\n", (i * 7919) % 911, i));
    }
    check(&["{ n[$1]++ } END { for (w in n) print w, n[w] }"], &text);
    check(
        &["{ if ($1 in seen) d++; seen[$1] } END { for (w in seen) printf \"%s \", w; print d }"],
        &text,
    );
}

#[test]
fn growth_and_deletion() {
    check(
        &[
            "BEGIN { for (i = 0; i < 2500; i++) a[i * 3] = i; for (i = 0; i < 2500; i += 4) delete a[i * 3]; for (k in a) printf \"%s \", k; print length(a) }",
        ],
        "",
    );
    check(
        &[
            "BEGIN { for (i = 0; i < 1200; i++) a[\"k\" i]; for (i = 0; i < 900; i++) a[i]; for (k in a) printf \"%s \", k }",
        ],
        "",
    );
    check(
        &[
            "BEGIN { for (i = 0; i < 900; i++) a[i]; for (i = 0; i < 900; i++) if ((\"\" i) in a) n++; for (k in a) printf \"%s \", k; print n }",
        ],
        "",
    );
    check(
        &[
            "BEGIN { a[1,2]; a[3,4]; a[\"x\",1]; for (k in a) { split(k, p, SUBSEP); print p[1], p[2] } }",
        ],
        "",
    );
}

#[test]
fn split_arrays() {
    check(
        &["BEGIN { n = split(\"e d c b a\", a); for (k in a) print k, a[k] }"],
        "",
    );
    check(
        &["BEGIN { split(\"p q r\", a); a[7] = 1; a[\"s\"]; for (k in a) print k }"],
        "",
    );
    check(
        &["BEGIN { split(\"p q r\", a); delete a[2]; for (k in a) print k }"],
        "",
    );
}

#[test]
fn nested_loops_share_the_variable() {
    check(
        &[
            "BEGIN { u[\"a\"]; u[\"b\"]; u[\"c\"]; v[\"d\"]; v[\"e\"]; for (l in u) { print \"o\", l; for (l in v) print \" i\", l; print \"o2\", l } print \"end\", l }",
        ],
        "",
    );
}

#[test]
fn deleted_keys_are_still_visited() {
    check(
        &["BEGIN { a[1]; a[2]; a[3]; for (k in a) { print k; delete a } print length(a) }"],
        "",
    );
    check(
        &[
            "BEGIN { a[\"x\"]; a[\"y\"]; for (k in a) { print k, (k in a); delete a[\"x\"]; delete a[\"y\"] } }",
        ],
        "",
    );
}

#[test]
fn loop_variable_is_a_string() {
    check(
        &["BEGIN { a[9]; a[10]; for (k in a) print k, (k < 10), (k == 9), (k + 0 < 10) }"],
        "",
    );
}
