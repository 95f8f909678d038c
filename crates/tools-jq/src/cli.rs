//! jq 1.6's command line: short flags may be clustered (`-rc`), long options
//! match exactly, the first operand is the program and the rest are input files
//! (or positional arguments after `--args` / `--jsonargs`).

use crate::write::Indent;

/// A named variable given on the command line.
#[derive(Debug, Clone)]
pub enum Named {
    /// `--arg name value`
    Str(String, String),
    /// `--argjson name text`
    Json(String, String),
    /// `--slurpfile name file`
    SlurpFile(String, String),
    /// `--rawfile name file`
    RawFile(String, String),
}

/// Parsed options.
#[derive(Debug, Clone)]
pub struct Opts {
    /// `-r`
    pub raw_out: bool,
    /// `-j`
    pub join: bool,
    /// `-a`
    pub ascii: bool,
    /// `-n`
    pub null_input: bool,
    /// `-s`
    pub slurp: bool,
    /// `-R`
    pub raw_in: bool,
    /// `-e`
    pub exit_status: bool,
    /// `-S`
    pub sort_keys: bool,
    /// `--seq`
    pub seq: bool,
    /// `-f`: the program operand names a file.
    pub from_file: bool,
    /// Pretty-printing indentation; `None` is compact.
    pub indent: Option<Indent>,
    /// Named variables in order.
    pub named: Vec<Named>,
    /// Positional arguments (`$ARGS.positional`): (text, is JSON).
    pub positional: Vec<(String, bool)>,
    /// The program text (or file with `-f`).
    pub program: Option<String>,
    /// Input files.
    pub files: Vec<String>,
    /// `-L dir`: module search directories, in order (none given: the
    /// default search path).
    pub lib_dirs: Vec<String>,
}

/// What the command line asks for besides running a program.
#[derive(Debug)]
pub enum Action {
    /// Run with these options.
    Run(Box<Opts>),
    /// Print this to stdout and exit 0 (`--help`, `--version`).
    Print(String),
    /// Print this to stderr and exit with this status.
    Fail(String, i32),
}

const USAGE: &str = "Usage:\tjq [OPTIONS] FILTER [FILES...]\n\tjq [OPTIONS] --args FILTER [STRINGS...]\n\tjq [OPTIONS] --jsonargs FILTER [JSON_TEXTS...]\n";

/// `jq --help`, as jq 1.6 prints it.
const HELP: &str = r#"jq - commandline JSON processor [version 1.6]

Usage:	jq [options] <jq filter> [file...]
	jq [options] --args <jq filter> [strings...]
	jq [options] --jsonargs <jq filter> [JSON_TEXTS...]

jq is a tool for processing JSON inputs, applying the given filter to
its JSON text inputs and producing the filter's results as JSON on
standard output.

The simplest filter is ., which copies jq's input to its output
unmodified (except for formatting, but note that IEEE754 is used
for number representation internally, with all that that implies).

For more advanced filters see the jq(1) manpage ("man jq")
and/or https://stedolan.github.io/jq

Example:

	$ echo '{"foo": 0}' | jq .
	{
		"foo": 0
	}

Some of the options include:
  -c               compact instead of pretty-printed output;
  -n               use `null` as the single input value;
  -e               set the exit status code based on the output;
  -s               read (slurp) all inputs into an array; apply filter to it;
  -r               output raw strings, not JSON texts;
  -R               read raw strings, not JSON texts;
  -C               colorize JSON;
  -M               monochrome (don't colorize JSON);
  -S               sort keys of objects on output;
  --tab            use tabs for indentation;
  --arg a v        set variable $a to value <v>;
  --argjson a v    set variable $a to JSON value <v>;
  --slurpfile a f  set variable $a to an array of JSON texts read from <f>;
  --rawfile a f    set variable $a to a string consisting of the contents of <f>;
  --args           remaining arguments are string arguments, not files;
  --jsonargs       remaining arguments are JSON arguments, not files;
  --               terminates argument processing;

Named arguments are also available as $ARGS.named[], while
positional arguments are available as $ARGS.positional[].

See the manpage for more options.
"#;

/// The short usage text printed on errors.
pub fn short_usage() -> String {
    format!(
        "{USAGE}Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq\n"
    )
}

/// Parses jq's arguments (without argv[0]).
pub fn parse(args: &[String]) -> Action {
    let mut o = Opts {
        raw_out: false,
        join: false,
        ascii: false,
        null_input: false,
        slurp: false,
        raw_in: false,
        exit_status: false,
        sort_keys: false,
        seq: false,
        from_file: false,
        indent: Some(Indent::Spaces(2)),
        named: Vec::new(),
        positional: Vec::new(),
        program: None,
        files: Vec::new(),
        lib_dirs: Vec::new(),
    };
    // 0: files, 1: --args strings, 2: --jsonargs JSON texts.
    let mut further = 0;
    let mut args_done = false;
    let mut i = 0;
    let operand = |o: &mut Opts, further: i32, text: &str| {
        if o.program.is_none() {
            o.program = Some(text.to_string());
        } else if further == 0 {
            o.files.push(text.to_string());
        } else {
            o.positional.push((text.to_string(), further == 2));
        }
    };
    while i < args.len() {
        let text = args[i].as_str();
        i += 1;
        // jq 1.6 takes an argument for an option only when a letter or a
        // second `-` follows the `-` (`isoptish`): `-.`, `-1`, `-` are operands.
        let optish = text.starts_with('-')
            && text[1..].starts_with(|c: char| c == '-' || c.is_ascii_alphabetic());
        if args_done || !optish {
            operand(&mut o, further, text);
            continue;
        }
        if text == "--" {
            if o.program.is_none() {
                return Action::Fail(short_usage(), 2);
            }
            args_done = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let mut take = |n: usize| -> Option<Vec<String>> {
                let v = args.get(i..i + n)?.to_vec();
                i += n;
                Some(v)
            };
            match long {
                "slurp" => o.slurp = true,
                "raw-output" => o.raw_out = true,
                "join-output" => {
                    o.raw_out = true;
                    o.join = true
                }
                "ascii-output" => o.ascii = true,
                "compact-output" => o.indent = None,
                "color-output" | "monochrome-output" | "unbuffered" => {}
                "null-input" => o.null_input = true,
                "raw-input" => o.raw_in = true,
                "exit-status" => o.exit_status = true,
                "sort-keys" => o.sort_keys = true,
                "seq" => o.seq = true,
                "from-file" => o.from_file = true,
                "tab" => o.indent = Some(Indent::Tab),
                "args" => further = 1,
                "jsonargs" => further = 2,
                "indent" => {
                    let Some(v) = take(1) else {
                        return Action::Fail(
                            format!("jq: --indent takes one parameter\n{}", short_usage()),
                            2,
                        );
                    };
                    let n: i64 = v[0].trim().parse().unwrap_or(0);
                    if !(-1..=7).contains(&n) {
                        return Action::Fail(
                            format!(
                                "jq: --indent takes a number between -1 and 7\n{}",
                                short_usage()
                            ),
                            2,
                        );
                    }
                    o.indent = if n == -1 {
                        Some(Indent::Tab)
                    } else if n == 0 {
                        None
                    } else {
                        Some(Indent::Spaces(n as usize))
                    };
                }
                "arg" | "argjson" | "slurpfile" | "rawfile" => {
                    let Some(v) = take(2) else {
                        return Action::Fail(
                            format!(
                                "jq: --{long} takes two parameters (e.g. --{long} varname value)\n{}",
                                short_usage()
                            ),
                            2,
                        );
                    };
                    let (name, val) = (v[0].clone(), v[1].clone());
                    o.named.push(match long {
                        // A JSON string holds text: a byte that is not UTF-8
                        // is U+FFFD, as in jq (not the word's escape).
                        "arg" => Named::Str(
                            name,
                            String::from_utf8_lossy(&safesh_utils::word_bytes::word_to_bytes(&val))
                                .into_owned(),
                        ),
                        "argjson" => Named::Json(name, val),
                        "slurpfile" => Named::SlurpFile(name, val),
                        _ => Named::RawFile(name, val),
                    });
                }
                "help" => return Action::Print(HELP.to_string()),
                "version" => return Action::Print("jq-1.6\n".to_string()),
                "stream" => {
                    return Action::Fail("jq: --stream is not supported by safesh\n".into(), 2);
                }
                _ => {
                    return Action::Fail(
                        format!("jq: Unknown option: {text}\n{}", short_usage()),
                        2,
                    );
                }
            }
            continue;
        }
        // `-L dir` or `-Ldir` (jq 1.6 looks only at the second character).
        if let Some(dir) = text.strip_prefix("-L") {
            if !dir.is_empty() {
                o.lib_dirs.push(dir.to_string());
            } else if let Some(next) = args.get(i) {
                o.lib_dirs.push(next.clone());
                i += 1;
            } else {
                return Action::Fail(
                    "-L takes a parameter: (e.g. -L /search/path or -L/search/path)\n".into(),
                    2,
                );
            }
            continue;
        }
        // A cluster of short flags.
        for c in text[1..].chars() {
            match c {
                's' => o.slurp = true,
                'r' => o.raw_out = true,
                'j' => {
                    o.raw_out = true;
                    o.join = true
                }
                'a' => o.ascii = true,
                'c' => o.indent = None,
                'C' | 'M' => {}
                'n' => o.null_input = true,
                'R' => o.raw_in = true,
                'e' => o.exit_status = true,
                'S' => o.sort_keys = true,
                'f' => o.from_file = true,
                'h' => return Action::Print(HELP.to_string()),
                _ => {
                    return Action::Fail(
                        format!("jq: Unknown option: {text}\n{}", short_usage()),
                        2,
                    );
                }
            }
        }
    }
    if o.program.is_none() {
        // jq 1.6 defaults to `.` when stdin and stdout are not terminals, which
        // is always the case in safesh.
        o.program = Some(".".to_string());
    }
    Action::Run(Box::new(o))
}
