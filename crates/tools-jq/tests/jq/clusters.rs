//! The clusters where jq 1.6's own test suite failed, one differential table
//! each (jq 1.6 as the oracle), and jq 1.7 additions jq 1.6 lacks (checked
//! against their documented output, since the oracle cannot run them).

use crate::{both, check};

fn table(cases: &[(&str, &[&str])]) {
    for (input, args) in cases {
        check(args, input);
    }
}

const DIGITS: &str = "[0,1,2,3,4,5,6,7,8,9]";

#[test]
fn del_with_slices_and_negative_indices() {
    table(&[
        (DIGITS, &["-c", "del(.[1:3], .[-2:])"]),
        (DIGITS, &["-c", "del(.[2:4],.[0],.[-2:])"]),
        (DIGITS, &["-c", "del(.[-1], .[0])"]),
        (DIGITS, &["-c", "del(.[:2], .[5:])"]),
        (DIGITS, &["-c", "del(.[-3:-1])"]),
        (DIGITS, &["-c", "del(.[8:100], .[1.5:2.5])"]),
        (DIGITS, &["-c", "del(.[5:2])"]),
        (DIGITS, &["-c", "del(.[:2], .[5:])"]),
        (DIGITS, &["-c", "del(.[0], .[-1], .[1:3])"]),
        (DIGITS, &["-c", "del(.[3], .[1:4], .[-2])"]),
        (DIGITS, &["-c", "del(.[1.5], .[-1.5])"]),
        (
            DIGITS,
            &["-c", "delpaths([[1], [{\"start\": 4, \"end\": 6}], [-1]])"],
        ),
        (
            "{\"a\":1,\"b\":{\"c\":2,\"d\":3}}",
            &["-c", "del(.a, .b.c)"],
        ),
        ("{\"a\":1,\"b\":{\"c\":2}}", &["-c", "del(.b, .b.c)"]),
        ("[[1,2,3],[4,5]]", &["-c", "del(.[0][0], .[0][-1], .[1])"]),
        ("{\"a\":[1,2]}", &["-c", "delpaths([])"]),
        ("{\"a\":[1,2]}", &["-c", "delpaths([[]])"]),
        ("{\"a\":[1,2]}", &["-c", "try delpaths([1]) catch ."]),
        ("{\"a\":[1,2]}", &["-c", "try delpaths(1) catch ."]),
        ("[1,2]", &["-c", "try del(.a) catch ."]),
        ("{\"a\":1}", &["-c", "try del(.[0]) catch ."]),
        ("1", &["-c", "try del(.a) catch ."]),
        ("[[0,1,2],[3,4]]", &["-c", "del(.[0][1:])"]),
        ("[[0,1,2],[3,4],[5]]", &["-c", "del(.[1:][0])"]),
        ("{\"a\":[1,2,3]}", &["-c", "del(.a[:-1])"]),
        (DIGITS, &["-c", "try del(.[\"a\":]) catch ."]),
        // Neighbours: single indices and keys.
        (DIGITS, &["-c", "del(.[3], .[5])"]),
        ("{\"a\":1,\"b\":2}", &["-c", "del(.a)"]),
    ]);
}

#[test]
fn from_entries_key_and_value_names() {
    for e in [
        r#"{"key":"a","value":1}"#,
        r#"{"k":"a","v":1}"#,
        r#"{"K":"a","v":1}"#,
        r#"{"Key":"a","Value":1}"#,
        r#"{"Name":"a","value":1}"#,
        r#"{"name":"a"}"#,
        r#"{"key":null}"#,
        r#"{"key":1,"value":2}"#,
        r#"{"key":false,"k":"x"}"#,
        r#"{"key":"a","Value":3}"#,
        r#"{"key":"a","v":3,"value":null}"#,
        r#"{"key":true}"#,
    ] {
        check(&["-c", "try from_entries catch ."], &format!("[{e}]"));
    }
    check(&["-c", "from_entries"], "[]");
}

#[test]
fn nth_first_last_on_generators() {
    table(&[
        ("null", &["-c", "[nth(2; range(10))]"]),
        ("null", &["-c", "try nth(-1; range(10)) catch ."]),
        ("null", &["-c", "[nth(5; range(3))]"]),
        ("null", &["-c", "[range(10)] | nth(3), nth(-1)"]),
        (
            "null",
            &["-c", "[first(range(10)), last(range(10)), first(empty)]"],
        ),
        ("null", &["-c", "[nth(0, 2; 10, 20, 30)]"]),
    ]);
}

#[test]
fn utf8bytelength_of_every_type() {
    check(
        &["-c", "map(try utf8bytelength catch .)"],
        r#"["a","é","日本",1,null,true,[1],{"a":"b"}]"#,
    );
}

#[test]
fn join_index_in() {
    table(&[
        (
            "null",
            &["-c", "INDEX({\"a\":1,\"b\":2}|to_entries[]; .key)"],
        ),
        ("[[1,\"a\"],[2,\"b\"]]", &["-c", "INDEX(.[]; .[0])"]),
        ("[{\"id\":1},{\"id\":2}]", &["-c", "INDEX(.id)"]),
        (
            "null",
            &["-c", "[JOIN({\"1\":\"x\"}; [[1],[2]][]; .[0]|tostring)]"],
        ),
        (
            "null",
            &["-c", "JOIN({\"1\":\"x\"}; [[1],[2]]; .[0]|tostring)"],
        ),
        ("[[1],[2]]", &["-c", "JOIN({\"1\":\"x\"}; .[0]|tostring)"]),
        (
            "null",
            &[
                "-c",
                "[JOIN({\"1\":\"x\"}; [[1],[2]][]; .[0]|tostring; add)]",
            ],
        ),
        (
            "null",
            &["-c", "[JOIN({\"1\":[\"x\"]}; [[1]][]; .[0]|tostring; add)]"],
        ),
        ("null", &["-c", "IN(1,2;2), IN(1,2;3)"]),
        ("2", &["-c", "IN(1,2), IN(5)"]),
    ]);
}

#[test]
fn object_keys_must_be_strings() {
    table(&[
        ("null", &["-c", "{(1):2}"]),
        ("null", &["-c", "{(true):2}"]),
        ("null", &["-c", "{(null):1}"]),
        ("null", &["-c", "{(1): .a}"]),
        ("null", &["-c", "{(1,\"a\"): 2}"]),
        ("null", &["-c", "1 as $x | {($x): 2}"]),
        ("null", &["-c", "{(\"a\",\"b\"): 1}"]),
        ("{\"a\":1}", &["-c", "{(.a): 2}"]),
        ("{\"a\":\"k\"}", &["-c", "{(.a): 2}"]),
    ]);
}

#[test]
fn byte_order_mark_and_special_numbers_in_input() {
    table(&[
        ("\u{feff}{\"a\":1}", &["-c", "."]),
        ("\u{feff}[1] [2]", &["-c", "."]),
        ("\u{feff}", &["-c", "."]),
        ("[1]\u{feff}[2]", &["-c", "."]),
        ("\u{feff}abc", &["-R", "-c", "."]),
        ("\u{feff}[1,2]", &["-s", "-c", "."]),
        ("\"\\ufeff1\"", &["-c", "fromjson"]),
    ]);
    for t in [
        "nan",
        "NaN",
        "-NaN",
        "Infinity",
        "-Infinity",
        "infinity",
        "inf",
        "INF",
        "[nan]",
        "{\"a\":NaN}",
        "NaNx",
        "nan1",
        "Infinityx",
        "[-nan]",
        "[NaN, Infinity, -Infinity]",
        "1e1000",
        "NaN(1)",
    ] {
        check(&["-c", "."], t);
        check(&["-c", "[., (. | isnan?), type]"], t);
    }
    for t in ["\"nan\"", "\"NaN\"", "\"inf\"", "\"-Infinity\"", "\"0x1\""] {
        check(&["-c", "try tonumber catch ."], t);
    }
}

#[test]
fn huge_array_index_assignment_is_refused() {
    // jq 1.6 tries to allocate gigabytes; we stop with jq 1.7's message.
    for prog in [
        ".[999999999] = 0",
        ".[999999999] |= 0",
        "setpath([999999999]; 0)",
        "[1] | .[99999999] = 1",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (ours, _) = both_ours(&["-c", prog], "null", dir.path());
        assert_eq!(ours.status, 5, "{prog}: {}", ours.out());
        assert!(
            String::from_utf8_lossy(&ours.stderr).contains("Array index too large"),
            "{prog}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
    }
    // Neighbours: a modest index still grows the array, as in jq.
    check(&["-c", ".[3] = 0"], "[1]");
    check(&["-c", "try (.[-5] = 0) catch ."], "[1]");
    check(&["-c", ".[10000] = 1 | length"], "null");
}

/// Runs only our jq (for programs the oracle cannot run safely).
fn both_ours(
    args: &[&str],
    stdin: &str,
    dir: &std::path::Path,
) -> (safesh_utils::testing::Output, ()) {
    let mut argv = vec!["jq"];
    argv.extend_from_slice(args);
    let ours = safesh_utils::testing::run_util(
        safesh_tools_jq::UTILS[0].1,
        &argv,
        stdin.as_bytes(),
        dir,
        &[],
    );
    (ours, ())
}

/// jq 1.7/1.8 additions that jq 1.6 does not define: their documented output.
#[test]
fn jq17_additions_where_jq16_errors() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("\"hello\"", &["-r", "@base32"], "NBSWY3DP\n"),
        ("\"a\"", &["-r", "@base32"], "ME======\n"),
        ("\"\"", &["-r", "@base32"], "\n"),
        ("\"NBSWY3DP\"", &["-r", "@base32d"], "hello\n"),
        ("\"ME======\"", &["-r", "@base32d"], "a\n"),
        (
            "\"héllo wörld\"",
            &["-r", "@base32 | @base32d"],
            "héllo wörld\n",
        ),
        ("[1,[2]]", &["-c", "map(toarray)"], "[[1],[2]]\n"),
        (
            "null",
            &["-c", "[have_literal_numbers, have_decnum]"],
            "[false,false]\n",
        ),
        ("[-1, 1.5, 0]", &["-c", "map(abs)"], "[1,1.5,0]\n"),
        (
            "{\"a\":1,\"b\":{\"c\":2,\"d\":3}}",
            &["-c", "pick(.b.c)"],
            "{\"b\":{\"c\":2}}\n",
        ),
        ("[1,2,3]", &["-c", "pick(.[1])"], "[null,2]\n"),
        (
            "\"  a b  \"",
            &["-c", "trim, ltrim, rtrim"],
            "\"a b\"\n\"a b  \"\n\"  a b\"\n",
        ),
        (
            "\"aXbxc\"",
            &["-c", "[splits(\"x\"; \"i\")]"],
            "[\"a\",\"b\",\"c\"]\n",
        ),
        (
            "null",
            &["-c", "$__loc__"],
            "{\"file\":\"<top-level>\",\"line\":1}\n",
        ),
        ("null", &["-c", "getpath([\"a\",0,\"b\"])"], "null\n"),
        ("1", &["-c", "ltrimstr(\"x\"), rtrimstr(1)"], "1\n1\n"),
    ];
    for (input, args, want) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (ours, _) = both_ours(args, input, dir.path());
        assert_eq!(
            (ours.out().as_str(), ours.status),
            (*want, 0),
            "jq {args:?} <<< {input}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
    }
    // A bad @base32d input is an error, as for @base64d.
    let dir = tempfile::tempdir().expect("tempdir");
    let (ours, _) = both_ours(&["-r", "@base32d"], "\"a!\"", dir.path());
    assert_eq!(ours.status, 5);
    let _ = both;
}

#[test]
fn destructuring_alternatives() {
    table(&[
        ("[[1,2]]", &["-c", ".[] as [$a] ?// $a | $a"]),
        (
            "[[1,2],{\"a\":3},\"x\"]",
            &["-c", ".[] as [$a] ?// {a: $a} | $a"],
        ),
        ("{\"a\":[1]}", &["-c", ". as {a:[$x]} ?// {a:$x} | $x"]),
        (
            "[[3]]",
            &[
                "-c",
                ".[] as [$a] ?// [$b] | if $a != null then error(\"err: \\($a)\") else {$a,$b} end",
            ],
        ),
        (
            "[[1,2]]",
            &["-c", ".[] as [$a] ?// [$b, $c] | [$a, $b, $c]"],
        ),
        (
            "[[1,2],{\"a\":3},\"x\"]",
            &["-c", "[.[] | try (. as [$a] ?// {a: $a} | $a) catch .]"],
        ),
        (
            "{\"x\":[1,2]}",
            &["-c", ". as {x: [$a, $b]} ?// {x: $a} ?// $a | [$a, $b]"],
        ),
        (
            "[{\"a\":1},[2],3]",
            &["-c", "[.[] as {a: $v} ?// [$v] ?// $v | $v * 10]"],
        ),
        (
            "[[1]]",
            &["-c", ".[] as [$a] ?// $a | try error(\"x\") catch $a"],
        ),
        (
            "[[1]]",
            &["-c", "[.[] as [$a] ?// $a | $a, $a + 1], \"?//\""],
        ),
        (
            "{\"a\":1}",
            &["-c", ". as [$a] ?// $a | $a | if . then 1 else 2 end"],
        ),
        ("[1,[2]]", &["-c", "map(. as [$a] ?// $a | $a)"]),
        (
            "[[1,2]]",
            &["-c", ".[] as [$a] ?// $a | error(\"last: \\($a)\")"],
        ),
        ("[1]", &["-c", ". as {$a} ?// [$a] | $a"]),
    ]);
}

/// `try P catch .` on `input`, so that the message is compared too.
fn caught(input: &'static str, p: &str) -> (&'static str, String) {
    (input, format!("try ({p}) catch ."))
}

/// Like [`table`], reporting every case that differs at once.
fn table_owned(cases: &[(&str, String)]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bad = Vec::new();
    for (input, prog) in cases {
        let (ours, real) = both(&["-c", prog], input, dir.path());
        if (ours.out(), ours.status) != (real.out(), real.status) {
            bad.push(format!(
                "jq -c {prog:?} <<< {input:?}\n  ours {}: {:?} {:?}\n  real {}: {:?} {:?}",
                ours.status,
                ours.out(),
                String::from_utf8_lossy(&ours.stderr),
                real.status,
                real.out(),
                String::from_utf8_lossy(&real.stderr),
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A term that is not a path expression inside `path(…)` (or on the left of
/// `=`, `|=`, …): jq 1.6 evaluates it, and fails at the next path step
/// (`… near attempt to access element K of V`, `… iterate through V`) or at
/// the end of `path(…)` (`… with result V`), V being the term's result, unless
/// that result is the very value at the path (`jv_identical`).
#[test]
fn path_of_non_path_expressions() {
    let ab = "{\"a\":[{\"b\":0}]}";
    let ar = "[1,2]";
    let mut cases: Vec<(&str, String)> = Vec::new();
    // Each kind of path step after the non-path term, and the end of path().
    for p in [
        "path(reverse)",
        "path(reverse | .[0])",
        "path(reverse | .[0]?)",
        "path(reverse | .a)",
        "path(reverse | .a?)",
        "path(reverse | .[])",
        "path(reverse | .[]?)",
        "path(reverse | .[1:])",
        "path(reverse | .[:1])",
        "path(reverse | .[-1:])",
        "path(reverse | .[1.5])",
        "path(reverse | .[\"abcdefghijklmnopqrstuvwxyz\"])",
        "path(reverse | .[0] | .a)",
        "path(reverse | ..)",
        "path(reverse | .. | select(false))",
        "path(reverse | first(.[]))",
        "path(reverse | getpath([0]))",
        "path(reverse | getpath([0]) | .a)",
        "path(reverse | select(true))",
        "path(reverse | if true then . else 1 end)",
        "path(reverse | . // 1)",
        "[path(reverse | empty)]",
        "[path(reverse | select(false))]",
        // Truncated results and keys (jq's 30- and 15-byte buffers).
        "path([range(20)] | .[0])",
        "path([range(20)])",
        // Other non-path terms: literals, constructions, operators, natives,
        // variables, std definitions, a try's handler, nested path().
        "path([.[]])",
        "path({a: 1} | .a)",
        "path(\"x\")",
        "path(1, .[0])",
        "path(.[0], 5)",
        "path(-.[0])",
        "path(.[0] + 1 | .a)",
        "path(. == .)",
        "path(not)",
        "path(length)",
        "path(keys | .[0])",
        "path(sort | .[])",
        "path(tojson)",
        "path(\"\\(.)\")",
        "path(map(.) | .[])",
        "path(to_entries | .[0])",
        "path(add)",
        "path(min)",
        "path(null)",
        "path(true | .a)",
        "path(path(.[0]))",
        "path(.[0] = 5)",
        "path(.[0] |= 5 | .[1])",
        "path(try error(\"x\") catch .)",
        "path(try error(\"x\") catch .a)",
        "path(try (reverse | .[0]) catch .)",
        "path(. as $x | [$x] | .[0])",
        "path(def f: reverse; f | .[0])",
        "path(def f(g): g | .[0]; f(reverse))",
        "path(last(.[]))",
        "path(nth(1; .[]))",
        "path(reduce .[] as $x (0; . + $x))",
        "path(.[0] | tostring | .[0])",
    ] {
        cases.push(caught(ar, p));
    }
    // jq 1.6's own suite: `map(select(…))` is not a path expression.
    for p in [
        "path(.a | map(select(.b == 0)))",
        "path(.a | map(select(.b == 0)) | .[0])",
        "path(.a | map(select(.b == 0)) | .c)",
        "path(.a | map(select(.b == 0)) | .[])",
        "path(.a | map(select(.b == 0)) | .[0].b)",
    ] {
        cases.push(caught(ab, p));
    }
    // Identical results keep the path intact: the same number, null, boolean,
    // the input itself (a variable, `. + null`, `tostring` of a string).
    cases.extend([
        ("1", "path(1)".to_string()),
        ("1", "path(. + 0)".to_string()),
        ("2", "try path(1) catch .".to_string()),
        ("null", "path(null)".to_string()),
        ("true", "path(true)".to_string()),
        ("true", "try path(false) catch .".to_string()),
        ("{\"a\":1}", "path(.a | 1)".to_string()),
        ("{\"a\":2}", "try path(.a | 1) catch .".to_string()),
        (ar, ". as $x | path($x)".to_string()),
        (ar, "path(. as $x | reverse | $x | .[0])".to_string()),
        (ar, "path(. + null | .[1])".to_string()),
        ("{\"a\":\"x\"}", "path(.a | tostring)".to_string()),
        ("{\"a\":\"x\"}", "path(.a | ltrimstr(\"y\"))".to_string()),
        ("[]", "try path([]) catch .".to_string()),
        ("{}", "try path({}) catch .".to_string()),
        ("\"x\"", "try path(\"x\") catch .".to_string()),
        // A cut multi-byte character becomes U+FFFD, as in jq.
        (
            "{\"a\":\"ééééééééééééééé\"}",
            "try path(.a | [.]) catch .".to_string(),
        ),
    ]);
    // Uncaught: status 5 like jq (the message is on stderr).
    cases.extend([
        (ab, "path(.a | map(select(.b == 0)))".to_string()),
        (ar, "path(reverse | .[0])".to_string()),
        (ar, "[.[] | path(reverse)]".to_string()),
    ]);
    // Benign neighbours: valid paths through select, if, //, reduce,
    // first/limit, getpath, .., paths, del, to_entries, try.
    let doc = "{\"a\":[1,{\"b\":2}],\"c\":null}";
    for p in [
        "[paths]",
        "[leaf_paths]",
        "[paths(type == \"number\")]",
        "[path(..)]",
        "[path(.a[] | select(type == \"object\") | .b)]",
        "path(if .c then .c else .a[0] end)",
        "[path(.c // .a)]",
        "[path(.x // .c // .a[1].b)]",
        "[path(first(.a[]), limit(2; .a[]))]",
        "path(getpath([\"a\", 1, \"b\"]))",
        "path(getpath([\"x\", \"y\"]))",
        "try path(.a | getpath([0, \"b\"])) catch .",
        "getpath([\"a\", 1])",
        "[path(.a[1:] | .[0])]",
        "[path(.a[1:][0].b)]",
        "path(.a | . as $x | .[1])",
        "[path((.a | reverse | .[0])?)]",
        "[path(try (.a | reverse | .[0]) catch empty)]",
        "path(label $f | .a[] | ., break $f)",
        "path(def f: .a; f | .[0])",
        "del(.a[0])",
        "del(.a[] | select(. == 1))",
        "del(.. | select(. == null))",
        "to_entries",
        "with_entries(.value |= tojson)",
        "[tostream]",
        "fromstream(tostream)",
        "tostream | select(length == 2) | .[1]",
    ] {
        cases.push((doc, p.to_string()));
    }
    table_owned(&cases);
}

/// The same on the left of `=`, `|=`, `+=`, `//=`: jq 1.6 runs them as
/// `reduce path(LHS) as $p (.; setpath($p; …))`, so the messages are those of
/// `path(…)`, and terms jaq cannot update by value (`first(f)`, `limit`,
/// `try`, `label`) work.
#[test]
fn update_of_non_path_expressions() {
    let ao = "[{\"a\":0},{\"a\":1}]";
    let ar = "[0,1,2]";
    let mut cases: Vec<(&str, String)> = Vec::new();
    for p in [
        "(map(select(.a == 1))[].b) = 10",
        "(map(select(.a == 1))[].a) |= .+1",
        "(map(select(.a == 1)) | .[0]) += 1",
        "(map(select(.a == 1)) | .[0].a) //= 1",
        "map(select(.a == 1)) = 10",
        "map(select(.a == 1)) |= 10",
        "(.[] | select(.a == 1) | .a) |= . + 1",
        "(.[] | select(.a == 1)) = 10",
    ] {
        cases.push(caught(ao, p));
    }
    for p in [
        "def x: reverse; x = 10",
        "reverse |= 10",
        "reverse += 10",
        "reverse -= 10",
        "reverse *= 10",
        "reverse //= 10",
        "(reverse | .[0]) = 10",
        "(reverse | .[]) |= 10",
        "(reverse | .[1:]) |= 10",
        "(reverse | .a) |= 10",
        "(reverse | getpath([0])) |= 10",
        "(. as $x | reverse | $x | .[0]) |= 10",
        "(1, .[0]) |= 10",
        "(.[0], 1) |= 10",
        "[.[] | . += 1] |= 10",
        "last(.[]) |= 10",
        "(first(.[]), last(.[])) |= . * 10",
        "to_entries |= .",
        "(.[] | tostring) |= 10",
        // Empty or identical: no error, as in jq.
        "(reverse | select(false)) |= 10",
        "(reverse | empty) = 10",
        "(.[0] | . + 0) |= 10",
        // Terms jq updates through their paths and jaq could not.
        "first(.[]) |= 10",
        "first(.[] | select(. > 0)) = 10",
        "limit(2; .[]) |= 10",
        "(try .[1] catch .) |= 10",
        "(.[1]?) |= 10",
        "(label $f | .[2]) |= 10",
        "getpath([1]) += 10",
        "del(first(.[]))",
        "del(limit(2; .[]))",
        "del(reverse)",
        "del(reverse | .[0])",
    ] {
        cases.push(caught(ar, p));
    }
    cases.extend([
        ("[[1,2],[3]]", "(.[] | first(.[])) |= 9".to_string()),
        ("{\"a\":1}", "(.a | 1) = 5".to_string()),
        ("{\"a\":2}", "try ((.a | 1) = 5) catch .".to_string()),
        ("null", "getpath([\"a\", 0, \"b\"]) |= 5".to_string()),
        (
            "{\"a\":1}",
            "try (getpath([\"a\", \"b\"]) |= 5) catch .".to_string(),
        ),
        (ar, "reverse = 10".to_string()),
    ]);
    // Benign neighbours.
    let doc = "{\"a\":[1,2],\"b\":null,\"c\":{\"d\":1}}";
    for p in [
        ".a |= map(. + 1)",
        ".a[] |= . + 1",
        ".a += [3]",
        ".b //= 3",
        ".c.d = 5",
        ".x.y = 1",
        "(.a[] | select(. > 1)) |= 0",
        "(.a, .c.d) |= . * 10",
        "(if .b then .b else .c end) |= 1",
        "(.b // .c) |= 1",
        ".. |= (if type == \"number\" then . + 1 else . end)",
        ".a |= empty",
        ".a[] |= empty",
        "to_entries",
        "with_entries(.value |= tostring)",
        "del(.a[0], .c)",
        "delpaths([[\"a\", 0]])",
        "setpath([\"c\", \"e\"]; 2)",
    ] {
        cases.push((doc, p.to_string()));
    }
    table_owned(&cases);
}

/// jq 1.6's `last(f)` is `reduce f as $x (null; $x)`: `last(empty)` is null.
#[test]
fn last_of_a_generator_as_in_jq_1_6() {
    table(&[
        ("null", &["-c", "[last(empty)]"]),
        ("null", &["-c", "[nth(0; empty)]"]),
        ("null", &["-c", "[last(range(5)), nth(2; range(5))]"]),
        ("[1,2,3]", &["-c", "[last(.[]), last]"]),
    ]);
}

#[test]
fn spellings_jaq_lacks_and_constant_division() {
    table(&[
        ("null", &["-c", "[.5, -.5, 1.5, .25e1]"]),
        ("[1,2]", &["-c", ".[0] + .5"]),
        ("{\"a\":{\"5\":1}}", &["-c", "try .a.\"5\" catch ."]),
        ("\"x.5\"", &["-c", ". + \".5\""]),
        (
            "{\"a\":1,\"b\":[2,{\"c\":3}]}",
            &["-c", ". as {$a, $b:[$c, {$d}]} | [$a, $b, $c, $d]"],
        ),
        ("{\"b\":[2]}", &["-c", ". as {$b: [$c]} | [$b, $c]"]),
        ("{\"b\":[2]}", &["-c", "[.[] as [$x] | $x]"]),
        ("null", &["-c", "1/0"]),
        ("null", &["-c", "(1+1)/0"]),
        ("null", &["-c", "[1/0]"]),
        ("0", &["-c", "try (1/.) catch ."]),
        ("null", &["-c", "4/2"]),
        ("null", &["-c", ". as $foo | break $foo"]),
        ("null", &["-c", "label $f | 1, break $f"]),
    ]);
}
