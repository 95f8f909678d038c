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

#[test]
fn path_of_non_path_expressions() {
    table(&[
        // (Uncaught: the message is jq's; a caught one keeps jaq's words.)
        (
            "{\"a\":[{\"b\":0}]}",
            &["-c", "path(.a | map(select(.b == 0)))"],
        ),
        ("{\"a\":\"x\"}", &["-c", "path(.a | tostring)"]),
        ("{\"a\":[1,2]}", &["-c", "[paths]"]),
        ("{\"a\":[1,2]}", &["-c", "path(.a[0], .a[1:])"]),
        ("{\"a\":[1,{\"b\":2}]}", &["-c", "[path(..)]"]),
        ("[1,[2]]", &["-c", "try path(first(.[])) catch ."]),
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
