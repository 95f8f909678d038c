//! Runaway recursion and deep values must end with a jq error, never crash
//! the process (a stack overflow would abort this whole test binary).

use crate::check;
use safesh_utils::testing::{Output, run_util};

/// Runs our jq only (the real jq 1.6 may crash or loop on these).
fn ours(args: &[&str], stdin: &str) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut argv = vec!["jq"];
    argv.extend_from_slice(args);
    run_util(
        safesh_tools_jq::UTILS[0].1,
        &argv,
        stdin.as_bytes(),
        dir.path(),
        &[],
    )
}

/// Asserts the program stops with status 5 and the recursion error.
fn too_deep(args: &[&str], stdin: &str) {
    let o = ours(args, stdin);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status, 5, "jq {args:?}: stderr {err}");
    assert!(
        err.contains("recursion too deep (safesh limit)"),
        "jq {args:?}: stderr {err}"
    );
}

macro_rules! deep_cases {
    ($($name:ident: [$($arg:expr),*] $input:expr;)*) => {
        $(
            #[test]
            fn $name() {
                too_deep(&[$($arg),*], $input);
            }
        )*
    };
}

deep_cases! {
    deep_collect: ["-n", "def f: [f]; f"] "";
    deep_add_left: ["-n", "def f: f + 1; f"] "";
    deep_add_right: ["-n", "def f: 1 + f; f"] "";
    deep_object: ["-n", "def f: {a: f}; f"] "";
    deep_pipe_nontail: ["-n", "def f: (.+1 | f) + 1; 0 | f"] "";
    deep_with_args: ["-n", "def f(g): [g | f(g)]; 1 | f(.)"] "";
    deep_mutual: ["-n", "def a: def b: [a]; [b]; a"] "";
    deep_update: ["-n", "def f: .a |= f; {} | f"] "";
    deep_reduce: ["-n", "def f: reduce f as $x (0; . + $x); f"] "";
    deep_foreach: ["-n", "def f: foreach f as $x (0; . + $x); f"] "";
    deep_per_input: [".[0] as $n | def f: [f]; f"] "[1]";
}

/// After a recursion error, later inputs are still processed (as after any
/// jq run-time error).
#[test]
fn deep_then_next_input() {
    let o = ours(&["def f: if . == 1 then [f] else . end; f"], "1 2");
    assert_eq!(o.status, 0);
    assert_eq!(o.out(), "2\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("recursion too deep"));
}

/// Values nested very deeply, built without recursion, can be compared,
/// printed (elided past 256 levels, like jq 1.6) and converted.
#[test]
fn deep_values_built_by_reduce() {
    let prog =
        "reduce range(100000) as $i (null; [.]) | [. == ., (tojson | length) > 0, (. < [.])]";
    let o = ours(&["-c", "-n", prog], "");
    assert_eq!(o.status, 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.out(), "[true,true,true]\n");
}

/// Deeply nested input is refused by the parser's depth limit, like jq 1.6.
#[test]
fn deep_input_nesting() {
    let deep = "[".repeat(100_000);
    check(&["."], &deep);
    let o = ours(&["."], &deep);
    assert_ne!(o.status, 0);
    let deep_obj = "{\"a\":".repeat(100_000);
    check(&["-c", "."], &deep_obj);
}

/// Deep but finite recursion that agents use keeps working.
#[test]
fn finite_recursion_still_works() {
    let fact = "def fact: if . <= 1 then 1 else . * (. - 1 | fact) end; 20 | fact";
    check(&["-n", fact], "");
    check(&["-n", "[limit(1000; repeat(1))] | length"], "");
    check(&["-n", "reduce range(100000) as $i (0; .+$i)"], "");
    check(&["-n", "[range(100000)] | length"], "");
    check(
        &["-c", "walk(if type == \"number\" then . + 1 else . end)"],
        &format!("{}1{}", "[{\"a\":".repeat(40), "}]".repeat(40)),
    );
    // Non-tail recursion thousands of levels deep.
    check(
        &[
            "-n",
            "def f: if . == 0 then 0 else (. - 1 | f) + 1 end; 10000 | f",
        ],
        "",
    );
    check(
        &[
            "-n",
            "def f: if . == 0 then [] else [(. - 1 | f)] end; 200 | f | tojson | length",
        ],
        "",
    );
}
