use super::harness::same_stdin;

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+] <- $input:expr;)*) => {
        $( #[test] fn $name() { same_stdin(&[$($arg),+], $input); } )*
    };
}

cases! {
    default_echo: ["xargs"] <- b"a b\nc\n";
    explicit_echo: ["xargs", "echo", "x"] <- b"1 2 3\n";
    empty_input: ["xargs", "echo", "ran"] <- b"";
    no_run_if_empty: ["xargs", "-r", "echo", "ran"] <- b"";
    no_run_blank_input: ["xargs", "-r", "echo", "ran"] <- b"  \n\n";
    max_args: ["xargs", "-n", "2", "echo"] <- b"a b c d e\n";
    max_args_one: ["xargs", "-n1"] <- b"a b c\n";
    max_lines: ["xargs", "-L", "1", "echo"] <- b"a b\nc\n\nd e f\n";
    max_lines_continuation: ["xargs", "-L", "1", "echo"] <- b"a b \nc\nd\n";
    max_lines_two: ["xargs", "-L", "2", "echo"] <- b"1\n2\n3\n4\n5\n";
    replace: ["xargs", "-I", "{}", "echo", "[{}]"] <- b"a b\n  c d  \n";
    replace_custom: ["xargs", "-I", "XX", "echo", "XX-XX", "end"] <- b"one\ntwo\n";
    replace_empty: ["xargs", "-I", "{}", "echo", "[{}]"] <- b"";
    replace_quotes: ["xargs", "-I{}", "echo", "<{}>"] <- b"\"q w\" 'e r'\n";
    single_quotes: ["xargs", "echo"] <- b"'a b' c\n";
    double_quotes: ["xargs", "echo"] <- b"\"a  b\" c\n";
    backslash: ["xargs", "echo"] <- b"a\\ b c\\\\d\n";
    unmatched_quote: ["xargs", "echo"] <- b"a\n\"b\n";
    null_sep: ["xargs", "-0", "echo"] <- b"a b\0c\nd\0";
    null_sep_n1: ["xargs", "-0", "-n", "1", "echo"] <- b"x y\0z\0";
    delim: ["xargs", "-d", ",", "echo"] <- b"a b,c,d\n";
    delim_newline: ["xargs", "-d", "\\n", "-n", "1", "echo"] <- b"a b\n'c\n";
    verbose_trace: ["xargs", "-t", "echo"] <- b"a b\n";
    parallel_accepted: ["xargs", "-P", "4", "-n", "1", "echo"] <- b"1\n";
    exit_123: ["xargs", "false"] <- b"a\n";
    exit_123_continues: ["xargs", "-n", "1", "sh", "-c", "exit 3"] <- b"a b\n";
    exit_255: ["xargs", "-n", "1", "sh", "-c", "exit 255"] <- b"a b\n";
    exit_ok: ["xargs", "sh", "-c", "exit 0"] <- b"a\n";
    eof_string: ["xargs", "-E", "STOP", "echo"] <- b"a b STOP c\n";
    max_chars: ["xargs", "-s", "20", "echo"] <- b"aaaa bbbb cccc dddd eeee ffff\n";
    no_trailing_newline: ["xargs", "echo"] <- b"a b";
    tabs_and_blanks: ["xargs", "echo"] <- b"\t a \t b\n\n c";
    unicode: ["xargs", "-n", "1", "echo"] <- "é ü 日本\n".as_bytes();
    bad_number: ["xargs", "-n", "x", "echo"] <- b"a\n";
    bad_option: ["xargs", "--bogus"] <- b"a\n";
}

#[test]
fn interactive_refused() {
    let t = super::harness::fixture();
    let o = safesh_utils::testing::run_util(
        super::harness::util("xargs"),
        &["xargs", "-p", "echo"],
        b"a\n",
        t.path(),
        &super::harness::table(),
    );
    assert_eq!(o.status, 1);
    assert!(o.stdout.is_empty());
}

#[test]
fn arg_file() {
    let t = super::harness::fixture();
    super::harness::same_in(&["xargs", "-a", "a", "echo", "got"], b"ignored", t.path());
    super::harness::same_in(&["xargs", "-a", "nope", "echo"], b"", t.path());
}

#[test]
fn inner_cat_reads_files() {
    let t = super::harness::fixture();
    super::harness::same_in(&["xargs", "cat"], b"a sub/c\n", t.path());
}

#[test]
fn old_style_options() {
    let t = super::harness::fixture();
    super::harness::same_in(&["xargs", "-i", "echo", "<{}>"], b"a b\nc\n", t.path());
    super::harness::same_in(&["xargs", "-iX", "echo", "<X>"], b"a b\nc\n", t.path());
    super::harness::same_in(&["xargs", "--replace", "echo", "<{}>"], b"a\n", t.path());
    super::harness::same_in(&["xargs", "-l", "echo"], b"a b\nc\n", t.path());
    super::harness::same_in(&["xargs", "-rn", "1", "echo"], b"a b\n", t.path());
    super::harness::same_in(&["xargs", "-n2", "-t", "echo"], b"a b c\n", t.path());
    super::harness::same_in(&["xargs", "--max-args", "2", "echo"], b"a b c\n", t.path());
    super::harness::same_in(
        &["xargs", "--max-args=2", "echo", "x"],
        b"a b c\n",
        t.path(),
    );
}

#[test]
fn limits() {
    let t = super::harness::fixture();
    super::harness::same_in(
        &["xargs", "-s", "12", "echo"],
        b"aaaaaaaaaaaaaaaa b\n",
        t.path(),
    );
    super::harness::same_in(
        &["xargs", "-n", "1", "-L", "2", "echo"],
        b"a b\nc d\ne\n",
        t.path(),
    );
    super::harness::same_in(
        &["xargs", "-L", "2", "-n", "1", "echo"],
        b"a b\nc d\ne\n",
        t.path(),
    );
}

cases! {
    replace_skips_blank_lines: ["xargs", "-I", "{}", "echo", "[{}]"] <- b"a\n\n  b c \n\t d\n\n";
    replace_only_blank_lines: ["xargs", "-I", "{}", "echo", "[{}]"] <- b"\n\n  \n\t\n";
    replace_leading_blank_stripped: ["xargs", "-I{}", "echo", "[{}]"] <- b" x\n\t\ty z\n";
    replace_trailing_blank_kept: ["xargs", "-I{}", "echo", "[{}]"] <- b"a \nb\t\n";
    replace_quotes_and_escapes: ["xargs", "-I{}", "echo", "[{}]"] <- b"a\\ b\n \"q r\"\n";
    replace_no_final_newline: ["xargs", "-I{}", "echo", "[{}]"] <- b"\n a";
    replace_with_dash_i: ["xargs", "-i", "echo", "<{}>"] <- b"\n p q\n";
}

cases! {
    max_chars_item_too_long_after_batch: ["xargs", "-s", "9", "echo"] <- b"one two three four\n";
    max_chars_exact_fit: ["xargs", "-s", "9", "echo"] <- b"one two six\n";
    max_chars_command_too_long: ["xargs", "-s", "4"] <- b"";
    max_chars_command_fits_no_input: ["xargs", "-s", "5"] <- b"";
    max_chars_counts_initial_args: ["xargs", "-s", "13", "echo", " ", " "] <- b"one\ntwo\n";
    max_chars_first_too_long: ["xargs", "-s", "6", "echo"] <- b"ab\n";
}
