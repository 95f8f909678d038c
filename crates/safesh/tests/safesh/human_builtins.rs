//! The human's builtins (issue 16) in scripts, through the binary: `help [CMD]`,
//! `label NAME|FILE`, `policy [CMD]`, `config`. The REPL uses the same ones.

use crate::flow_support::{Arena, SECRET_VALUE};

#[test]
fn help_lists_builtins_utilities_and_subcommands() {
    let a = Arena::new();
    let r = a.run("help");
    r.assert_ok();
    for name in [
        "context",
        "checkpoint",
        "history",
        "help",
        "label",
        "policy",
        "config",
        "cd",
    ] {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))),
            "builtin {name} missing:\n{}",
            r.dump()
        );
    }
    assert!(r.stdout.contains("Utilities"), "{}", r.dump());
    assert!(
        r.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("grep ")),
        "{}",
        r.dump()
    );
    // The binary's subcommands, with their descriptions.
    assert!(r.stdout.contains("safesh commands"), "{}", r.dump());
    for sub in ["check", "task", "tasks", "explain", "trust"] {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "subcommand {sub} missing:\n{}",
            r.dump()
        );
    }
}

#[test]
fn help_cmd_gives_usage_and_description() {
    let a = Arena::new();
    let r = a.run("help checkpoint; help grep; help check; f() { :; }; help f");
    r.assert_ok();
    assert!(r.stdout.contains("checkpoint save [NAME]"), "{}", r.dump());
    assert!(r.stdout.contains("(builtin)"), "{}", r.dump());
    assert!(
        r.stdout
            .contains("print lines that match a pattern (utility)"),
        "{}",
        r.dump()
    );
    assert!(r.stdout.contains("safesh check"), "{}", r.dump());
    assert!(r.stdout.contains("f: a function"), "{}", r.dump());
    // A platform command: its example, description and risk.
    let r = a.run("help fs:read; help | grep -c '^  github:'");
    r.assert_ok();
    assert!(r.stdout.contains("fs:read "), "{}", r.dump());
    assert!(
        r.stdout.contains("(platform command, risk read-only"),
        "{}",
        r.dump()
    );
    let listed: usize = r.stdout.lines().last().unwrap_or("").parse().unwrap_or(0);
    assert!(listed >= 5, "github commands listed in help: {}", r.dump());
    // An unknown name: status 1 and a message that says what to do.
    let r = a.run("help no-such-thing");
    assert_eq!(r.status, 1, "{}", r.dump());
    assert!(
        r.stderr.contains("no help for `no-such-thing`"),
        "{}",
        r.dump()
    );
    assert!(r.stderr.contains("policy no-such-thing"), "{}", r.dump());
}

/// The lines `label` printed for `head` (`variable s:`, `file .env:`).
fn blocks(out: &str, head: &str) -> Option<String> {
    let mut lines = out.lines().skip_while(|l| *l != head);
    let first = lines.next()?;
    let rest: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).collect();
    Some(format!("{first}\n{}", rest.join("\n")))
}

#[test]
fn label_says_secret_untrusted_and_public_in_words() {
    let a = Arena::new();
    let r = a.run(
        "s=$(cat .env); label s; label .env; label public.txt; p=plain; label p; \
         d=$(curl -s {URL}/list.txt); label '$d'",
    );
    r.assert_ok();
    let out = &r.stdout;
    // Never the value, only what the label says.
    assert!(!out.contains(SECRET_VALUE), "{}", r.dump());
    let block =
        |head: &str| blocks(out, head).unwrap_or_else(|| panic!("{head} missing:\n{}", r.dump()));
    let s = block("variable s:");
    assert!(s.contains("secrecy: secret"), "{s}");
    assert!(s.contains(".env"), "{s}");
    let f = block("file .env:");
    assert!(f.contains("secrecy: secret"), "{f}");
    let p = block("file public.txt:");
    assert!(
        p.contains("secrecy: public") && p.contains("trust:   trusted"),
        "{p}"
    );
    let v = block("variable p:");
    assert!(
        v.contains("secrecy: public") && v.contains("text the agent wrote"),
        "{v}"
    );
    let d = block("variable d:");
    assert!(
        d.contains("untrusted") && d.contains("downloaded from 127.0.0.1"),
        "{d}"
    );
    // Neither a variable nor a file.
    let r = a.run("label nothing_here");
    assert_eq!(r.status, 1, "{}", r.dump());
    assert!(r.stderr.contains("no such variable"), "{}", r.dump());
}

#[test]
fn label_of_a_file_outside_the_roots_is_refused() {
    let a = Arena::new();
    let r = a.run("label /etc/passwd; echo after");
    assert_eq!(
        r.stderr_code().as_deref(),
        Some("PATH_VIOLATION"),
        "{}",
        r.dump()
    );
    assert!(!r.stdout.contains("after"), "{}", r.dump());
}

#[test]
fn policy_shows_what_is_allowed_and_decides_without_running() {
    let a = Arena::new();
    let r = a.run("policy");
    r.assert_ok();
    assert!(
        r.stdout
            .contains(&format!("read roots:   {}", a.dir.display())),
        "{}",
        r.dump()
    );
    assert!(
        r.stdout
            .contains("network:      only these hosts: 127.0.0.1"),
        "{}",
        r.dump()
    );
    assert!(r.stdout.contains("python3"), "{}", r.dump());
    // A refused command line: the code and suggestion, nothing runs, status 1.
    let r = a.run("policy 'bash -c \"touch pwned\"'; echo status=$?");
    assert!(r.stdout.contains("refuse    bash -c"), "{}", r.dump());
    assert!(r.stdout.contains("BLOCKED:"), "{}", r.dump());
    assert!(r.stdout.contains("suggestion:"), "{}", r.dump());
    assert!(r.stdout.contains("status=1"), "{}", r.dump());
    assert!(!a.path("pwned").exists());
    // Benign neighbour: an allowed line is allowed, and still not run.
    let r = a.run("policy touch made; echo status=$?");
    assert!(r.stdout.contains("allow     touch made"), "{}", r.dump());
    assert!(r.stdout.contains("status=0"), "{}", r.dump());
    assert!(!a.path("made").exists(), "policy ran the command");
}

#[test]
fn config_prints_what_config_show_prints() {
    let a = Arena::new();
    let builtin = a.run("config");
    builtin.assert_ok();
    let sub = a.run_args(&["config", "show"]);
    sub.assert_ok();
    assert_eq!(builtin.stdout, sub.stdout);
    assert!(builtin.stdout.contains("# safesh: merged configuration"));
    let r = a.run("config set x");
    assert_eq!(r.status, 2, "{}", r.dump());
}
