//! The conventional command line (clap): `--help` (a checked-in snapshot),
//! `SUBCOMMAND --help`, `--version`, a wrong option named with the close one,
//! completions that load in real bash.

use std::process::{Command, Stdio};

fn safesh(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_safesh"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .expect("safesh runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `safesh --help` is exactly `expected/help.txt` (update both together: the file
/// is the reviewed text users see).
#[test]
fn help_matches_the_checked_in_text() {
    let (code, out, err) = safesh(&["--help"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/safesh/expected/help.txt");
    let want = std::fs::read_to_string(&path).expect("expected/help.txt");
    assert_eq!(
        out,
        want,
        "`safesh --help` changed; if intended, update {}",
        path.display()
    );
    // -h is the short form of the same text.
    let (code, short, _) = safesh(&["-h"]);
    assert_eq!(code, 0);
    assert!(short.starts_with("A safe shell") && short.len() < out.len());
}

#[test]
fn every_subcommand_has_help_that_describes_its_options() {
    for (sub, options) in [
        (
            "run",
            &[
                "--json",
                "--force",
                "--input",
                "--output-mode",
                "--timeout-ms",
            ][..],
        ),
        ("check", &["-c", "--json"]),
        (
            "audit",
            &[
                "--session",
                "--verdict",
                "--commit-point",
                "--rule",
                "--since",
                "--last",
                "--json",
            ],
        ),
        (
            "mcp",
            &[
                "--http",
                "--token-file",
                "--max-sessions",
                "--max-transport-sessions",
            ],
        ),
        ("rpc", &["--max-sessions"]),
        ("init", &["--force", "--template"]),
        ("task", &[]),
        ("tasks", &["--json"]),
        ("completions", &[]),
        ("spec", &[]),
    ] {
        // -h: one line per option, its description beside it.
        let (code, out, err) = safesh(&[sub, "-h"]);
        assert_eq!(code, 0, "{sub} --help: {err}");
        assert!(
            out.contains(&format!("Usage: safesh {sub}")),
            "{sub}:\n{out}"
        );
        for opt in options {
            let line = out
                .lines()
                .find(|l| l.trim_start().starts_with(opt))
                .unwrap_or_else(|| panic!("{sub} --help lacks {opt}:\n{out}"));
            // An option line with a description after it, not a bare flag.
            let described = line.trim_start()[opt.len()..]
                .split("  ")
                .any(|part| part.trim().len() > 3);
            assert!(described, "{sub} --help: {opt} has no description:\n{out}");
        }
    }
}

#[test]
fn version_prints_the_package_version() {
    let (code, out, _) = safesh(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out, format!("safesh {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn an_unknown_option_is_named_with_the_close_one_and_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("ran");
    let script = format!("touch {}", marker.display());
    let (code, out, err) = safesh(&["--jsn", "-c", &script]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("'--jsn'"), "{err}");
    assert!(err.contains("similar argument exists: '--json'"), "{err}");
    assert!(!marker.exists(), "the script ran despite the usage error");
    // In a subcommand too.
    let (code, _, err) = safesh(&["audit", "--sesion", "s1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("'--session'"), "{err}");
    // A mistyped command is taken for a script file that does not exist: said so,
    // with the command it is close to.
    let (code, _, err) = safesh(&["chek", "-c", "true"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean the command `check`"), "{err}");
    // Control: the right spelling works.
    let (code, out, err) = safesh(&["--json", "-c", "echo ok"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"stdout\":\"ok\\n\""), "{out}");
}

#[test]
fn words_after_the_script_are_its_arguments_even_when_they_look_like_options() {
    // As in bash: `-c SCRIPT NAME ARG…` stops option parsing at SCRIPT.
    let (code, out, _) = safesh(&["-c", "echo \"$0|$*\"", "--json", "--help", "x"]);
    assert_eq!((code, out.as_str()), (0, "--json|--help x\n"));
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.sh");
    std::fs::write(&f, "echo \"$*\"\n").unwrap();
    let (_, out, _) = safesh(&[f.to_str().unwrap(), "--json", "-c", "check"]);
    assert_eq!(out, "--json -c check\n");
}

#[test]
fn bash_completions_load_in_bash() {
    let bin = env!("CARGO_BIN_EXE_safesh");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{bin}' completions bash) && complete -p safesh"
        ))
        .output()
        .expect("bash runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.starts_with("complete ")
            && out.contains(" -F _safesh ")
            && out.trim_end().ends_with(" safesh"),
        "{out}"
    );
    // The function completes subcommands (including the task runner's).
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{bin}' completions bash); COMP_WORDS=(safesh ta); COMP_CWORD=1; _safesh safesh ta safesh; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        ))
        .output()
        .expect("bash runs");
    let words = String::from_utf8_lossy(&o.stdout);
    assert!(words.lines().any(|w| w == "task"), "{words}");
    assert!(words.lines().any(|w| w == "tasks"), "{words}");
}

#[test]
fn zsh_and_fish_completions_are_generated() {
    let (code, out, _) = safesh(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("#compdef safesh"), "{out}");
    let (code, out, _) = safesh(&["completions", "fish"]);
    assert_eq!(code, 0);
    assert!(out.contains("complete -c safesh"), "{out}");
    let (code, _, err) = safesh(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("possible values"), "{err}");
}

/// An arithmetic error in an array subscript: `bash -c` leaves the shell,
/// `bash FILE` and a script on stdin abandon the line and go on. safesh does
/// each, as bash does (bash the oracle, same script).
#[test]
fn subscript_errors_end_a_string_script_and_not_a_file_script() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.sh");
    let script = "a=(1 2)\necho ${a[1/0]}\necho \"next $?\"\na[1+]=3\necho \"after $?\"\n";
    std::fs::write(&f, script).unwrap();
    let path = f.to_str().unwrap();
    let run = |program: &str, args: &[&str], stdin: Stdio| {
        let o = Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .stdin(stdin)
            .output()
            .expect("the shell runs");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let bash = |args: &[&str], stdin: Stdio| run("bash", args, stdin);
    let ours = |args: &[&str], stdin: Stdio| run(env!("CARGO_BIN_EXE_safesh"), args, stdin);
    let from_string = bash(&["-c", script], Stdio::null());
    assert_eq!(from_string, (1, String::new()), "the oracle under -c");
    assert_eq!(ours(&["-c", script], Stdio::null()), from_string);
    let from_file = bash(&[path], Stdio::null());
    assert_eq!(
        from_file,
        (0, "next 1\nafter 1\n".to_string()),
        "the oracle on a file"
    );
    assert_eq!(ours(&[path], Stdio::null()), from_file);
    let stdin = || Stdio::from(std::fs::File::open(&f).unwrap());
    assert_eq!(ours(&[], stdin()), bash(&[], stdin()));
}
