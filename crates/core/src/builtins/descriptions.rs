//! One line and a usage for every builtin and utility: what `help` prints (and the
//! REPL's completion shows). A unit test keeps it complete: a new builtin or
//! utility needs its line here.

/// A command's usage and one-line description.
#[derive(Debug, Clone, Copy)]
pub struct Description {
    /// The command's name.
    pub name: &'static str,
    /// Its usage line (without the name).
    pub usage: &'static str,
    /// What it does, in one line.
    pub about: &'static str,
}

const fn d(name: &'static str, usage: &'static str, about: &'static str) -> Description {
    Description { name, usage, about }
}

/// Shell builtins, sorted by name.
pub static BUILTINS: &[Description] = &[
    d(
        ".",
        "FILE [ARG...]",
        "run FILE's commands in this shell (same as `source`)",
    ),
    d(":", "[ARG...]", "do nothing, successfully"),
    d("[", "EXPR ]", "evaluate a test expression (same as `test`)"),
    d(
        "alias",
        "[-p] [NAME[=VALUE]...]",
        "define or show aliases (expanded with `shopt -s expand_aliases`)",
    ),
    d("break", "[N]", "leave the innermost N loops"),
    d(
        "builtin",
        "NAME [ARG...]",
        "run the builtin NAME, skipping functions",
    ),
    d(
        "cd",
        "[DIR]",
        "change the working directory (inside the read roots)",
    ),
    d(
        "checkpoint",
        "save [NAME] | restore NAME | list | diff A [B] | delete NAME [--json]",
        "save, restore, list and compare checkpoints of the write roots",
    ),
    d(
        "command",
        "[-v|-V] NAME [ARG...]",
        "run NAME skipping functions, or say what NAME is",
    ),
    d(
        "config",
        "",
        "show the configuration in force, with where each value came from (as `safesh config show`)",
    ),
    d(
        "context",
        "get|set|delete|list [--scope S] ...",
        "read and write the scoped context store (project, session, step, history)",
    ),
    d(
        "continue",
        "[N]",
        "go to the next iteration of the innermost N loops",
    ),
    d(
        "declare",
        "[-aAfFgilprux] [NAME[=VALUE]...]",
        "set variables and their attributes, or print them",
    ),
    d(
        "dirs",
        "[-clpv] [+N|-N]",
        "show or clear the directory stack",
    ),
    d(
        "env",
        "[-i] [-u NAME] [NAME=VALUE...] [CMD [ARG...]]",
        "run CMD with a changed environment, or print the environment",
    ),
    d(
        "eval",
        "[ARG...]",
        "run the arguments as a script (its text is checked like any other)",
    ),
    d(
        "exec",
        "[CMD [ARG...]] [REDIRECTIONS]",
        "run CMD in place of the script, or keep redirections",
    ),
    d("exit", "[N]", "end the script with status N"),
    d(
        "export",
        "[-n] [NAME[=VALUE]...]",
        "mark variables to be passed to programs",
    ),
    d("false", "", "do nothing, unsuccessfully"),
    d(
        "flock",
        "[OPTIONS] FILE CMD [ARG...]",
        "run CMD holding a lock on FILE",
    ),
    d(
        "getopts",
        "OPTSTRING NAME [ARG...]",
        "parse positional options",
    ),
    d(
        "hash",
        "[ARG...]",
        "accepted and ignored (safesh has no command hash)",
    ),
    d(
        "help",
        "[CMD]",
        "list every builtin, utility and subcommand, or describe CMD",
    ),
    d(
        "history",
        "[N] [--json] [--session ID] [--face F]",
        "show the scripts run in this project (commands with secrets withheld)",
    ),
    d(
        "ionice",
        "[OPTIONS] CMD [ARG...]",
        "run CMD (the I/O priority is not changed)",
    ),
    d(
        "label",
        "NAME | $NAME | FILE",
        "show the label of a variable or a file in words: secret or public, trusted or not, origins",
    ),
    d("let", "EXPR...", "evaluate arithmetic expressions"),
    d(
        "local",
        "[NAME[=VALUE]...]",
        "declare variables local to a function",
    ),
    d(
        "mapfile",
        "[-t] [-d DELIM] [-n N] [ARRAY]",
        "read lines of stdin into an array",
    ),
    d(
        "nice",
        "[-n N] CMD [ARG...]",
        "run CMD (the priority is not changed)",
    ),
    d("nohup", "CMD [ARG...]", "run CMD ignoring hangups"),
    d(
        "plan",
        "FILE [--param NAME=VALUE]... [--json]",
        "show a project spec's plan: each step's risk under the policy, checks, checkpoints, hash (runs nothing)",
    ),
    d(
        "policy",
        "[CMD...]",
        "show what is allowed (roots, network, programs), or the decision for a command line without running it",
    ),
    d("popd", "", "return to the directory on top of the stack"),
    d("printf", "[-v VAR] FORMAT [ARG...]", "print formatted text"),
    d(
        "pushd",
        "[DIR]",
        "change directory, remembering the current one",
    ),
    d("pwd", "[-LP]", "print the working directory"),
    d(
        "read",
        "[-r] [-d DELIM] [-n N] [-p PROMPT] [NAME...]",
        "read a line of stdin into variables",
    ),
    d(
        "readarray",
        "[-t] [ARRAY]",
        "read lines of stdin into an array (same as `mapfile`)",
    ),
    d("readonly", "[NAME[=VALUE]...]", "make variables read-only"),
    d("return", "[N]", "return from a function with status N"),
    d(
        "set",
        "[-euxo OPTION] [--] [ARG...]",
        "set shell options or the positional parameters",
    ),
    d(
        "setsid",
        "CMD [ARG...]",
        "run CMD (every program already runs in its own session)",
    ),
    d("shift", "[N]", "drop the first N positional parameters"),
    d(
        "shopt",
        "[-su] [OPTION...]",
        "set bash options (nullglob, dotglob, globstar, ...)",
    ),
    d(
        "source",
        "FILE [ARG...]",
        "run FILE's commands in this shell",
    ),
    d(
        "stdbuf",
        "[OPTIONS] CMD [ARG...]",
        "run CMD (buffering options are accepted)",
    ),
    d(
        "taskset",
        "[OPTIONS] CMD [ARG...]",
        "run CMD (the CPU affinity is not changed)",
    ),
    d("test", "EXPR", "evaluate a test expression"),
    d("time", "CMD [ARG...]", "run CMD and print how long it took"),
    d(
        "timeout",
        "[-s SIG] [-k T] DURATION CMD [ARG...]",
        "run CMD with a time limit",
    ),
    d(
        "trap",
        "[ACTION] [SIGNAL...]",
        "run ACTION when the script exits or gets SIGNAL",
    ),
    d("true", "", "do nothing, successfully"),
    d(
        "type",
        "[-atp] NAME...",
        "say whether NAME is a function, builtin, utility or program",
    ),
    d(
        "typeset",
        "[OPTIONS] [NAME[=VALUE]...]",
        "same as `declare`",
    ),
    d("umask", "[MODE]", "show or set the file creation mask"),
    d("unalias", "[-a] NAME...", "remove aliases"),
    d("unset", "[-fv] NAME...", "remove variables or functions"),
    d(
        "verify",
        "ASSERTION... (TYPE[@TARGET][:EXPECTED])",
        "check stdin against assertions and pass it through; a failure stops the script (VERIFICATION_FAILED)",
    ),
    d("wait", "[ID...]", "wait for background jobs"),
];

/// In-process utilities, sorted by name.
pub static UTILITIES: &[Description] = &[
    d(
        "awk",
        "[-F SEP] [-v VAR=VAL] PROGRAM [FILE...]",
        "pattern scanning and processing (mawk-compatible)",
    ),
    d("base64", "[-d] [-w N] [FILE]", "encode or decode base64"),
    d(
        "basename",
        "NAME [SUFFIX]",
        "strip the directory (and SUFFIX) from NAME",
    ),
    d("cat", "[-nAbsv] [FILE...]", "concatenate files to stdout"),
    d("chmod", "MODE FILE...", "change file modes"),
    d("cmp", "[-ls] FILE1 FILE2", "compare two files byte by byte"),
    d(
        "column",
        "[-tx] [-s SEP] [-o SEP] [-c WIDTH] [-N NAMES] [FILE...]",
        "format lists and tables in columns",
    ),
    d(
        "comm",
        "[-123] FILE1 FILE2",
        "compare two sorted files line by line",
    ),
    d(
        "cp",
        "[-rpfn] SRC... DEST",
        "copy files (inside the write roots)",
    ),
    d(
        "curl",
        "[OPTIONS] URL...",
        "transfer a URL (egress decided by host and label)",
    ),
    d(
        "cut",
        "-b|-c|-f LIST [-d DELIM] [FILE...]",
        "select parts of each line",
    ),
    d(
        "date",
        "[-u] [-d DATE] [+FORMAT]",
        "print or format the date",
    ),
    d(
        "diff",
        "[-u] [-r] FILE1 FILE2",
        "compare files line by line",
    ),
    d("dirname", "NAME...", "strip the last component from NAME"),
    d("du", "[-shac] [FILE...]", "estimate file space usage"),
    d("echo", "[-neE] [ARG...]", "print the arguments"),
    d("egrep", "[OPTIONS] PATTERN [FILE...]", "grep -E"),
    d(
        "expand",
        "[-i] [-t N|LIST] [FILE...]",
        "convert tabs to spaces",
    ),
    d("expr", "EXPR", "evaluate an expression"),
    d("fgrep", "[OPTIONS] STRING [FILE...]", "grep -F"),
    d(
        "find",
        "[PATH...] [EXPR]",
        "search for files in a directory tree",
    ),
    d(
        "fold",
        "[-bs] [-w WIDTH] [FILE...]",
        "wrap lines to a width",
    ),
    d(
        "grep",
        "[OPTIONS] PATTERN [FILE...]",
        "print lines that match a pattern",
    ),
    d(
        "head",
        "[-n N] [-c N] [FILE...]",
        "print the first lines of files",
    ),
    d(
        "join",
        "[-a N] [-v N] [-t C] [-1 F] [-2 F] [-o LIST] FILE1 FILE2",
        "join lines of two sorted files on a common field",
    ),
    d(
        "jq",
        "[OPTIONS] FILTER [FILE...]",
        "process JSON (jq 1.6 behaviour)",
    ),
    d("ln", "[-sf] TARGET LINK", "make links"),
    d("ls", "[-laRhtrS1d] [FILE...]", "list directory contents"),
    d("md5sum", "[-c] [FILE...]", "compute MD5 checksums"),
    d("mkdir", "[-p] DIR...", "make directories"),
    d(
        "mktemp",
        "[-d] [TEMPLATE]",
        "make a temporary file or directory",
    ),
    d("mv", "[-fn] SRC... DEST", "move or rename files"),
    d("nl", "[OPTIONS] [FILE]", "number lines"),
    d(
        "od",
        "[OPTIONS] [FILE...]",
        "dump files in octal and other formats",
    ),
    d("paste", "[-sd DELIMS] FILE...", "merge lines of files"),
    d("printenv", "[NAME...]", "print environment variables"),
    d("printf", "FORMAT [ARG...]", "print formatted text"),
    d(
        "readlink",
        "[-fem] FILE",
        "print where a symbolic link points",
    ),
    d(
        "realpath",
        "[-em] FILE...",
        "print the resolved absolute path",
    ),
    d("rev", "[FILE...]", "reverse each line"),
    d(
        "rm",
        "[-rfd] FILE...",
        "remove files (inside the write roots)",
    ),
    d("rmdir", "[-p] DIR...", "remove empty directories"),
    d("sed", "[-nEi] SCRIPT [FILE...]", "stream editor"),
    d("seq", "[FIRST [STEP]] LAST", "print a sequence of numbers"),
    d("sha1sum", "[-c] [FILE...]", "compute SHA-1 checksums"),
    d("sha224sum", "[-c] [FILE...]", "compute SHA-224 checksums"),
    d("sha256sum", "[-c] [FILE...]", "compute SHA-256 checksums"),
    d("sha384sum", "[-c] [FILE...]", "compute SHA-384 checksums"),
    d("sha512sum", "[-c] [FILE...]", "compute SHA-512 checksums"),
    d("sleep", "DURATION...", "wait for a while"),
    d("sort", "[-nrukt SEP] [FILE...]", "sort lines"),
    d("stat", "[-c FORMAT] FILE...", "print file status"),
    d("tac", "[FILE...]", "print files last line first"),
    d(
        "tail",
        "[-n N] [-c N] [FILE...]",
        "print the last lines of files",
    ),
    d("tee", "[-a] FILE...", "copy stdin to stdout and files"),
    d(
        "touch",
        "[-c] FILE...",
        "create files or update their times",
    ),
    d("tr", "[-dsc] SET1 [SET2]", "translate or delete characters"),
    d("tree", "[-a] [-L N] [DIR]", "list a directory as a tree"),
    d(
        "unexpand",
        "[-a] [--first-only] [-t N|LIST] [FILE...]",
        "convert blanks to tabs",
    ),
    d("uniq", "[-cdu] [FILE]", "drop repeated adjacent lines"),
    d("wc", "[-lwcm] [FILE...]", "count lines, words and bytes"),
    d(
        "wget",
        "[-O FILE] [-q] URL",
        "download a URL (egress decided by host and label)",
    ),
    d("which", "[-a] NAME...", "locate a command"),
    d(
        "xargs",
        "[-0] [-n N] [-I R] CMD [ARG...]",
        "build command lines from stdin",
    ),
    d("yes", "[STRING]", "print STRING forever"),
];

/// The description of builtin or utility `name`.
pub fn lookup(name: &str) -> Option<&'static Description> {
    BUILTINS
        .iter()
        .chain(UTILITIES.iter())
        .find(|d| d.name == name)
}
