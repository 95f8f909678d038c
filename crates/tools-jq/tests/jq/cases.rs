//! One differential test per case: (args, stdin).

use crate::{check, check_in};

macro_rules! cases {
    ($($name:ident: [$($arg:expr),*] $input:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check(&[$($arg),*], $input);
            }
        )*
    };
}

const OBJ: &str =
    r#"{"name":"x","a":{"b":[1,2,{"c":null}]},"n":3,"t":true,"s":"héllo\t/\u0001\u007f"}"#;
const ARR: &str = r#"[{"id":1,"x":5,"g":"a"},{"id":2,"x":0,"g":"b"},{"id":3,"x":7,"g":"a"}]"#;

cases! {
    identity_pretty: ["."] OBJ;
    identity_compact: ["-c", "."] OBJ;
    field_path: [".a.b"] OBJ;
    index0: [".a.b[0]"] OBJ;
    iterate: [".[]"] ARR;
    select_gt: ["-c", ".[] | select(.x > 1)"] ARR;
    map_field: ["-c", "map(.id)"] ARR;
    keys_sorted: ["-c", "keys"] r#"{"b":1,"a":2,"c":3}"#;
    keys_unsorted: ["-c", "keys_unsorted"] r#"{"b":1,"a":2,"c":3}"#;
    length_all: ["-c", "map(length)"] r#"["abc",[1,2],{"a":1},null,-5]"#;
    to_entries: ["-c", "to_entries"] r#"{"a":1,"b":[2]}"#;
    from_entries: ["-c", "from_entries"] r#"[{"key":"a","value":1},{"k":"b","v":2},{"name":"c","value":null},{"key":"d","value":3}]"#;
    from_entries_bad_key: ["-c", "from_entries"] r#"[{"key":1,"value":3}]"#;
    with_entries: ["-c", "with_entries(.value += 1)"] r#"{"a":1,"b":2}"#;
    group_by: ["-c", "group_by(.g)"] ARR;
    sort_by: ["-c", "sort_by(.x)"] ARR;
    sort_by_multi: ["-c", "sort_by(.g, -.x)"] ARR;
    unique: ["-c", "unique"] "[3,1,2,1,\"a\",null,3]";
    add_numbers: ["add"] "[1,2,3.5]";
    add_strings: ["add"] r#"["a","b"]"#;
    add_empty: ["add"] "[]";
    join_mixed: ["join(\",\")"] r#"["a",1,null,true]"#;
    join_error: ["join(\",\")"] "[[1]]";
    split_str: ["-c", "split(\",\")"] r#""a,b,,c,""#;
    test_regex: ["-c", "map(test(\"^a.c$\"))"] r#"["abc","abd","xabc"]"#;
    ascii_down: ["ascii_downcase"] r#""HeLLo World""#;
    csv: ["-r", "@csv"] r#"[1,"a\"b",null,true,1.5]"#;
    tsv: ["-r", "@tsv"] r#"["a\tb","c\\d\ne",2]"#;
    base64: ["-r", "@base64"] r#""hello world!""#;
    base64d: ["-r", "@base64d"] r#""aGVsbG8gd29ybGQh""#;
    html_uri_sh: ["-r", "@html, @uri, @sh"] r#""<a href='x'>&\"ü é""#;
    tostring_all: ["-c", "map(tostring)"] r#"[1,1.5,"s",[1,{"a":2.0}],null,true]"#;
    tonumber: ["-c", "map(tonumber)"] r#"["1","1.5","-2e3",4]"#;
    tonumber_bad: ["tonumber"] r#""abc""#;
    has_key: ["-c", "[has(\"a\"), has(\"z\")]"] r#"{"a":1}"#;
    has_index: ["-c", "[has(0), has(5)]"] "[1,2]";
    del_keeps_order: ["-c", "del(.a)"] r#"{"a":1,"b":2,"c":3}"#;
    del_multi: ["-c", "del(.[1,2])"] "[0,1,2,3]";
    update_pipe: ["-c", ".a |= . + 1"] r#"{"a":1,"b":2}"#;
    update_plus: ["-c", ".[] += 10"] "[1,2]";
    interpolation: ["-r", "\"\\(.a) and \\(.b / 2) and \\(.c)\""] r#"{"a":"x","b":4,"c":[1.0,{"d":0.5}]}"#;
    alternative: ["-c", "[.a // \"dflt\", .b // \"dflt\"]"] r#"{"a":null,"b":false}"#;
    if_elif: ["-c", "map(if . > 2 then \"big\" elif . > 1 then \"mid\" else \"small\" end)"] "[1,2,3]";
    reduce_sum: ["reduce .[] as $x (0; . + $x)"] "[1,2,3,4]";
    first_last: ["-c", "[first, last, first(.[]|select(.>1))]"] "[1,2,3]";
    range_forms: ["-c", "[range(3)], [range(1;5)], [range(0;10;3)]"] "null";
    min_max_by: ["-c", "[min_by(.x), max_by(.x), min_by(.g), max_by(.g)]"] ARR;
    paths_all: ["-c", "[paths]"] r#"{"a":{"b":[1]},"c":2}"#;
    leaf_paths: ["-c", "[leaf_paths]"] r#"{"a":{"b":[1]},"c":2}"#;
    getpath: ["-c", "getpath([\"a\",\"b\",1]), getpath([\"x\",\"y\"])"] OBJ;
    env_types: ["-n", "-c", "[(env|type), ($ENV|type), ($ENV|has(\"PATH\")), (env.PATH|type)]"] "";
    input_filter: ["-c", "[., input]"] "1 2 3 4";
    inputs_null: ["-c", "-n", "[inputs]"] "1 2 3";
    inputs_after_first: ["-c", "[inputs]"] "1 2 3";
    input_none: ["-c", "[., input]"] "1 2 3";
    raw_output: ["-r", ".[]"] r#"["a\nb","c",1]"#;
    join_output: ["-j", ".[]"] r#"["a","b",1]"#;
    null_input: ["-n", "1+1"] "";
    slurp: ["-c", "-s", "."] "1 [2] {\"a\":3}";
    slurp_empty: ["-c", "-s", "."] "";
    raw_input: ["-c", "-R", "."] "line1\nline2\nlast";
    raw_slurp: ["-c", "-R", "-s", "."] "line1\nline2\n";
    sort_keys: ["-S", "."] r#"{"b":1,"a":{"d":1,"c":2}}"#;
    tab_indent: ["--tab", "."] r#"{"a":[1,{"b":2}]}"#;
    indent_4: ["--indent", "4", "."] r#"{"a":[1,{"b":2}]}"#;
    indent_0: ["--indent", "0", "."] r#"{"a":[1,{"b":2}]}"#;
    indent_bad: ["--indent", "9", "."] "1";
    ascii_out: ["-a", "-c", "."] r#"["é","😀","x"]"#;
    arg_var: ["-n", "-c", "--arg", "v", "hi", "[$v, $ARGS.named]"] "";
    argjson_var: ["-n", "-c", "--argjson", "v", "{\"a\":[1]}", "$v.a"] "";
    argjson_bad: ["-n", "--argjson", "v", "{bad", "$v"] "";
    args_positional: ["-n", "-c", "$ARGS", "--args", "a", "b"] "";
    jsonargs_positional: ["-n", "-c", "$ARGS.positional", "--jsonargs", "1", "{\"a\":2}"] "";
    exit_status_false: ["-e", ".a"] r#"{"a":false}"#;
    exit_status_null: ["-e", ".a"] "{}";
    exit_status_true: ["-e", ".a"] r#"{"a":1}"#;
    exit_status_empty: ["-e", "empty"] "1";
    compile_error: [".a |"] "1";
    undefined_function: ["foo"] "1";
    runtime_error: [".a.b"] "[1]";
    runtime_error_continues: [".+1"] r#"1 "a" 2"#;
    runtime_error_last: [".+1"] r#"1 "a""#;
    error_object: ["error({})"] "1";
    try_catch: ["-c", "[.[] | try error(\"x\\(.)\") catch .]"] "[1,2]";
    parse_error: ["."] "{\"a\":1} {";
    parse_error_literal: ["-c", "."] "[1,\n2,x]";
    numbers_format: ["-c", "."] "[1.0,1e1000,-1e1000,0.1,1e17,1e-5,100000000000000000000,12345678901234567890,0.0001,1e15,1e16,3.14159,-0,5e-324,2e-7,1.5e300]";
    number_arith: ["-c", "[.[0]/3, .[0]*1.5, .[1]/2, 1e17+1, pow(2;64), 10/4]"] "[1,4]";
    string_escapes: ["."] r#""\u0000\u001f\u007f\u0080é/\\\"\b\f\n\r\t""#;
    empty_containers: ["."] r#"{"a":[],"b":{},"c":[[]]}"#;
    limit_forms: ["-c", "[limit(2; .[])], [limit(0; .[])], [limit(-1; .[])]"] "[1,2,3]";
    loc: ["-c", "$__loc__"] "null";
    walk: ["-c", "walk(if type == \"number\" then . + 1 else . end)"] r#"{"b":{"d":1,"c":2},"a":[1]}"#;
    ltrimstr: ["-c", "[.[] | ltrimstr(\"a\")]"] r#"["abc","bc",1]"#;
    splits_sub: ["-c", "[sub(\"a\";\"X\"), gsub(\"a\";\"Y\")]"] r#""banana""#;
    tostream: ["-c", "tostream"] r#"{"a":[1,2]}"#;
    fromstream: ["-c", "fromstream(tostream)"] r#"{"a":[1,{"b":2}]}"#;
    keys_error: ["keys"] "1";
    iterate_error: [".[]"] "1";
    recurse_dots: ["-c", "[..|numbers]"] r#"[1,[2,{"a":3}]]"#;
    any_all: ["-c", "[any, all, (map(. > 1) | any)]"] "[1,2]";
    flatten: ["-c", "flatten, flatten(1)"] "[1,[2,[3,[4]]]]";
    indices: ["-c", "[index(\"b\"), rindex(\"b\"), indices(\"b\")]"] r#""abcb""#;
    contains_inside: ["-c", "[contains({\"a\":[1]}), ({\"a\":1}|inside({\"a\":1,\"b\":2}))]"] r#"{"a":[1,2]}"#;
    object_construction: ["-c", "{name, n, (.name): 1, \"k\\(.n)\": 2}"] OBJ;
    array_slice: ["-c", ".[1:3], .[-2:], .[:1]"] "[0,1,2,3,4]";
    string_slice: ["-c", ".[1:3]"] r#""abcdef""#;
    optional_access: ["-c", "[.[] | .a?]"] r#"[1,{"a":2},"x"]"#;
    type_builtin: ["-c", "map(type)"] r#"[null,true,1,"s",[],{}]"#;
    string_multiply_divide: ["-c", "[\"ab\" * 3, (\"a,b\" / \",\")]"] "null";
    object_merge: ["-c", ". * {\"a\":{\"y\":2}}, . + {\"b\":1}"] r#"{"a":{"x":1}}"#;
    unique_by: ["-c", "unique_by(.g)"] ARR;
    to_from_json: ["-c", "tojson, (tojson|fromjson)"] r#"{"a":[1,2.5,"x"]}"#;
    no_program: [] "";
    unknown_option: ["--bogus", "."] "1";
    combined_flags: ["-rc", ".[]"] r#"["a",{"b":1}]"#;
    setpath_delpaths: ["-c", "setpath([\"a\",\"b\"]; 1) | delpaths([[\"a\",\"b\"]])"] "{}";
    halt_error_msg: ["-n", "\"bye\\n\" | halt_error(1)"] "";
    empty_input: ["."] "";
    whitespace_input: ["."] "  \n ";
    deep_output: ["-c", "reduce range(300) as $i (0; [.])"] "null";
    deep_output_pretty: ["reduce range(258) as $i (0; {a: .})"] "null";
    deep_input: ["-c", "."] "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]";
    raw_control_in_string: ["-r", ".a"] "{\"a\":\"line1\nline2\"}";
    slurp_parse_error: ["-c", "-s", "."] "1 [";
    lone_surrogate: ["-c", "."] r#""\ud83d""#;
    top_level_comma: ["-c", "."] "1,2";
    argjson_first_wins: ["-n", "-c", "--argjson", "x", "1", "--arg", "x", "s", "$x"] "";
    map_values_empty_quirk: ["-c", "map_values(empty)"] "[1,2]";
    update_select_empty_quirk: ["-c", "(.[] | select(. >= 2)) |= empty"] "[1,2,3]";
    input_filename_stdin: ["input_filename"] "1";
    fractional_index: ["-c", ".[1.5], (.[1.5] = 9)"] "[1,2]";
    null_paths_created: ["-c", ".b.c = 2 | .d[2] = 1"] r#"{"a":1}"#;
    error_null_is_quiet: ["-c", "if . == 1 then error(null) else . end, 5"] "1 2";
    repeat_doubling: ["-c", "[limit(3; repeat(. * 2))], [limit(3; 1 | repeat(. * 2))]"] "1";
    while_until: ["-c", "[1 | while(. < 100; . * 3)], (1 | until(. > 100; . * 3))"] "null";
    range_generators: ["-c", "[range(0, 1; 3, 4)], [range(5; 0; -2)], [range(0; 1; 0.25)]"] "null";
    exit_status_no_input: ["-e", "."] "";
    halt_plain: ["-n", "1, halt, 2"] "";
    halt_error_object: ["-n", "{\"a\":1} | halt_error(3)"] "";
    generator_product_object: ["-c", "[{a: (1,2), b: (3,4)}]"] "null";
    debug_passthrough: ["-c", "[.[] | debug]"] "[1,2]";
    stderr_passthrough: ["-c", "stderr"] "[1]";
    input_line_number: ["-c", "input_line_number"] "1\n2\n\n3";
    getpath_error: ["-c", "getpath([\"a\",\"b\"])"] r#"{"a":1}"#;
    object_key_error: ["-c", "{(.a): 1}"] r#"{"a":1}"#;
    deep_unicode: ["-c", "[.[] | ascii_downcase, length, utf8bytelength]"] r#"["ÀB","😀"]"#;
    nan_inf: ["-c", "[nan, infinite, -infinite] | ., map(isinfinite)"] "null";
    floor_sqrt: ["-c", "[(3.7|floor), (16|sqrt), (2.5|round), (-1.5|fabs)]"] "null";
    until_while: ["-c", "[.[]|until(. > 100; . * 2)], [1|while(. < 20; . * 3)]"] "[1,5]";
    min_max_empty: ["-c", "[min, max], ([]|[min,max])"] "[3,1,2]";
    transpose: ["-c", "transpose"] "[[1,2],[3]]";
    split_regex: ["-c", "[splits(\", *\")]"] r#""a, b,c""#;
    capture: ["-c", "capture(\"(?<y>[0-9]+)-(?<m>[0-9]+)\")"] r#""2024-05""#;
    ascii_explode: ["-c", "explode, (explode|implode)"] r#""aé""#;
    startswith_endswith: ["-c", "[startswith(\"ab\"), endswith(\"z\")]"] r#""abc""#;
    reverse: ["-c", "reverse"] "[1,2,3]";
    reverse_null: ["-c", "reverse"] "null";
    to_entries_numbers: ["-c", "to_entries | map(.value) | add / length"] r#"{"a":1,"b":2,"c":4}"#;
}

#[test]
fn file_operands() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.json"), "{\"a\":1}\n").expect("write");
    std::fs::write(dir.path().join("b.json"), "[2,3]").expect("write");
    check_in(&["-c", ".", "a.json", "b.json"], "", dir.path());
    check_in(&["-c", "-s", ".", "a.json", "b.json"], "", dir.path());
    check_in(&["-c", ".", "missing.json", "a.json"], "", dir.path());
    check_in(
        &["-n", "-c", "[inputs]", "a.json", "b.json"],
        "",
        dir.path(),
    );
}

#[test]
fn from_file_and_slurpfile() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("p.jq"),
        "# doubles\n.a | map(. * 2) # trailing\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("d.json"), "1 2").expect("write");
    std::fs::write(dir.path().join("r.txt"), "raw\ntext").expect("write");
    check_in(&["-c", "-f", "p.jq"], "{\"a\":[1,2]}", dir.path());
    check_in(&["-c", "-f", "missing.jq"], "{\"a\":[1,2]}", dir.path());
    check_in(
        &[
            "-n",
            "-c",
            "--slurpfile",
            "d",
            "d.json",
            "--rawfile",
            "r",
            "r.txt",
            "[$d, $r]",
        ],
        "",
        dir.path(),
    );
}

/// A host whose script has been cancelled: endless loops must stop with 130.
struct Cancelled;

impl safesh_utils::Host for Cancelled {
    fn check_read(&self, _: &std::path::Path) -> std::io::Result<()> {
        Ok(())
    }
    fn check_write(&self, _: &std::path::Path) -> std::io::Result<()> {
        Ok(())
    }
    fn run(
        &self,
        _: &[String],
        _: &std::path::Path,
        _: &mut dyn std::io::Read,
        _: &mut dyn std::io::Write,
        _: &mut dyn std::io::Write,
    ) -> safesh_utils::UtilResult {
        Ok(127)
    }
    fn cancelled(&self) -> bool {
        true
    }
    fn sleep(&self, _: std::time::Duration) -> Result<(), safesh_utils::Interrupt> {
        Ok(())
    }
    fn command_kind(&self, _: &str) -> Option<&'static str> {
        None
    }
}

#[test]
fn endless_loops_stop_when_cancelled() {
    for prog in [
        "last(range(1e18))",
        "[limit(1e9; repeat(1))] | length",
        "0 | until(. < 0; . + 1)",
        "try last(range(1e18)) catch 1",
        "range(1e18)",
    ] {
        let env = std::collections::BTreeMap::new();
        let mut stdin: &[u8] = b"";
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut ctx = safesh_utils::UtilCtx {
            argv: vec!["jq".into(), "-n".into(), prog.into()],
            cwd: std::env::temp_dir(),
            env: safesh_utils::Env::new(&env, &Cancelled),
            stdin: &mut stdin,
            stdout: &mut out,
            stderr: &mut err,
            host: &Cancelled,
        };
        let status = (safesh_tools_jq::UTILS[0].1)(&mut ctx).unwrap_or(125);
        assert_eq!(status, 130, "{prog}");
    }
}
