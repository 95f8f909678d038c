//! The decision function on real configs: command rules, flags, subcommands,
//! paths, the git rule, wrappers and the environment external programs get.

use safesh_policy::config::{LoadOptions, load};
use safesh_policy::{Decision, ErrorCode, Kind, Policy, Refusal, Request, Resolver};
use std::path::{Path, PathBuf};

struct Project {
    dir: tempfile::TempDir,
    policy: Policy,
}

/// Inner commands resolve like the interpreter would: a few utilities, the rest
/// through the policy's trusted PATH.
struct TestResolver<'a>(&'a Policy, &'a Path);

impl Resolver for TestResolver<'_> {
    fn kind(&self, name: &str) -> Kind {
        if matches!(name, "cat" | "echo" | "grep" | "rm" | "xargs" | "find") {
            return Kind::Utility;
        }
        if matches!(name, "env" | "timeout" | "nice") {
            return Kind::Builtin;
        }
        match self.0.resolve_program(name, self.1) {
            Some(p) => Kind::External(p),
            None => Kind::NotFound,
        }
    }
    fn check_script(&self, _text: &str) -> Option<Refusal> {
        None
    }
}

fn project(extra: &str) -> Project {
    project_with(&format!(
        "[sandbox]\nread = [\".\"]\nwrite = [\".\"]\n[commands.git]\nallow = [\"status\", \"log\", \"diff\"]\ndeny_flags = [\"-c\"]\n{extra}"
    ))
}

fn project_with(text: &str) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("proj/src")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    let cfg = root.join("proj/safesh.toml");
    std::fs::write(&cfg, text).unwrap();
    let config = load(&LoadOptions {
        cwd: root.join("proj"),
        home: Some(root.join("home")),
        config_file: Some(cfg),
        ..LoadOptions::default()
    })
    .unwrap();
    Project {
        dir,
        policy: Policy::new(config),
    }
}

impl Project {
    fn cwd(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap().join("proj")
    }

    fn decide(&self, argv: &[&str]) -> Decision {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let cwd = self.cwd();
        let r = TestResolver(&self.policy, &cwd);
        let kind = r.kind(&argv[0]);
        self.policy.decide(
            &Request {
                argv: &argv,
                cwd: &cwd,
                kind,
                force: false,
                cwd_known: true,
            },
            &r,
        )
    }

    fn code(&self, argv: &[&str]) -> Option<ErrorCode> {
        match self.decide(argv) {
            Decision::Refuse(r) => Some(r.code),
            _ => None,
        }
    }
}

#[test]
fn allowed_subcommands_pass_and_others_are_refused_with_the_list() {
    let p = project("");
    assert_eq!(p.decide(&["git", "status"]), Decision::Allow);
    assert_eq!(
        p.decide(&["git", "-C", ".", "log", "--oneline"]),
        Decision::Allow
    );
    match p.decide(&["git", "push"]) {
        Decision::Refuse(r) => {
            assert_eq!(r.code, ErrorCode::CommandNotWhitelisted);
            assert_eq!(r.details.allowed, ["status", "log", "diff"]);
            assert!(r.suggestion.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn denied_flags_are_found_combined_attached_and_never_inside_values() {
    let p = project("[commands.grep]\ndeny_flags = [\"--recursive\"]\n");
    assert_eq!(
        p.code(&["git", "-c", "core.pager=less", "log"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(
        p.code(&["git", "-ccore.pager=less", "log"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(p.decide(&["git", "log", "--grep=-c"]), Decision::Allow);
    assert_eq!(p.decide(&["git", "log", "--", "-c"]), Decision::Allow);
    assert_eq!(
        p.code(&["grep", "-rn", "x", "src"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(
        p.code(&["grep", "--recur", "x", "src"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(p.decide(&["grep", "-n", "x", "src"]), Decision::Allow);
}

#[test]
fn required_flags_and_arg_patterns() {
    let p = project(
        "[commands.grep]\nrequire_flags = [\"-n\"]\narg_patterns = { \"*\" = \"^(src|x)\" }\n",
    );
    assert_eq!(
        p.code(&["grep", "x", "src"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(p.decide(&["grep", "-n", "x", "src"]), Decision::Allow);
    assert_eq!(
        p.code(&["grep", "-n", "x", "docs"]),
        Some(ErrorCode::FlagNotAllowed)
    );
}

#[test]
fn subcommand_rules_refine_the_command() {
    let p = project("[commands.git.log]\ndeny_flags = [\"--output\"]\n");
    assert_eq!(
        p.code(&["git", "log", "--output=x"]),
        Some(ErrorCode::FlagNotAllowed)
    );
    assert_eq!(p.decide(&["git", "diff", "--stat"]), Decision::Allow);
}

#[test]
fn a_deny_beats_an_allow() {
    let p = project("[commands.cat]\nallow = false\n");
    assert_eq!(
        p.code(&["cat", "f"]),
        Some(ErrorCode::CommandNotWhitelisted)
    );
}

#[test]
fn the_git_rule_refuses_config_that_runs_programs_even_when_git_is_allowed() {
    let p = project_with("[commands.git]\nallow = true\n");
    for argv in [
        &["git", "--config-env=core.pager=X", "log"][..],
        &["git", "fetch", "--upload-pack=touch /tmp/x", "origin"],
        &["git", "clone", "ext::sh -c touch% /tmp/x", "d"],
        &["git", "config", "alias.x", "!sh"],
        &["git", "config", "core.hooksPath", "h"],
        &["git", "diff", "--ext-diff"],
        &["git", "submodule", "foreach", "id"],
    ] {
        assert_eq!(p.code(argv), Some(ErrorCode::FlagNotAllowed), "{argv:?}");
    }
    assert_eq!(
        p.decide(&["git", "config", "user.name", "me"]),
        Decision::Allow
    );
}

#[test]
fn blocked_names_cannot_be_allowed_by_config() {
    let p = project("[commands.bash]\nallow = true\n[commands.sudo]\nallow = true\n");
    assert_eq!(p.code(&["bash", "-c", "id"]), Some(ErrorCode::Blocked));
    assert_eq!(p.code(&["/bin/sh"]), Some(ErrorCode::Blocked));
    assert_eq!(p.code(&["sudo", "id"]), Some(ErrorCode::Blocked));
    // Blocked even when not installed.
    assert_eq!(p.code(&["doas", "id"]), Some(ErrorCode::Blocked));
}

#[test]
fn wrappers_are_decided_by_their_inner_command() {
    let p = project("");
    for argv in [
        &["env", "-i", "X=1", "bash"][..],
        &["timeout", "5", "git", "push"],
        &["nice", "-n", "5", "sudo", "id"],
        &["xargs", "-0", "sh", "-c", "id"],
        &["find", ".", "-exec", "git", "push", ";"],
    ] {
        assert!(p.code(argv).is_some(), "{argv:?}");
    }
    assert_eq!(p.decide(&["env", "X=1", "git", "status"]), Decision::Allow);
}

#[test]
fn paths_outside_the_roots_and_protected_paths_are_refused() {
    let p = project("");
    assert_eq!(
        p.code(&["cat", "/etc/passwd"]),
        Some(ErrorCode::PathViolation)
    );
    assert_eq!(
        p.code(&["cat", "../home/x"]),
        Some(ErrorCode::PathViolation)
    );
    assert_eq!(p.code(&["rm", "-rf", ".."]), None); // rm itself refuses `..`
    assert_eq!(
        p.code(&["rm", "-rf", "../home"]),
        Some(ErrorCode::PathViolation)
    );
    assert_eq!(
        p.code(&["rm", "-rf", "safesh.toml"]),
        Some(ErrorCode::PathViolation)
    );
    assert_eq!(
        p.code(&["git", "diff", "/etc/passwd"]),
        Some(ErrorCode::PathViolation)
    );
    assert_eq!(
        p.code(&["git", "log", "--output=.git/hooks/x"]),
        Some(ErrorCode::PathViolation)
    );
    let cwd = p.cwd();
    assert!(
        p.policy
            .check_write(&cwd, Path::new(".git/hooks/pre-commit"))
            .is_err()
    );
    assert!(
        p.policy
            .check_write(&cwd, Path::new(".git/config"))
            .is_err()
    );
    assert!(p.policy.check_write(&cwd, Path::new("src/new.rs")).is_ok());
    std::os::unix::fs::symlink("/etc", cwd.join("etc-link")).unwrap();
    assert!(
        p.policy
            .check_read(&cwd, Path::new("etc-link/passwd"))
            .is_err()
    );
    assert!(p.policy.check_read(&cwd, Path::new("/dev/null")).is_ok());
}

#[test]
fn externals_resolve_only_through_the_trusted_path() {
    let p = project("");
    let cwd = p.cwd();
    std::fs::create_dir_all(cwd.join("evil")).unwrap();
    let planted = cwd.join("evil/git");
    std::fs::write(&planted, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let git = p.policy.resolve_program("git", &cwd).unwrap();
    assert!(!git.starts_with(&cwd), "{}", git.display());
    assert_eq!(
        p.code(&["./evil/git", "status"]),
        Some(ErrorCode::CommandNotWhitelisted)
    );
}

#[test]
fn children_get_only_allowed_unmasked_variables_and_the_trusted_path() {
    let p = project("[env]\nallow = [\"GITHUB_TOKEN\", \"LD_PRELOAD\", \"MY_*\"]\n");
    let env = safesh_policy::env::child_env(
        p.policy.config(),
        [
            ("HOME", "/h"),
            ("PATH", "/evil:/usr/bin"),
            ("GITHUB_TOKEN", "secret"),
            ("LD_PRELOAD", "/x.so"),
            ("MY_VAR", "1"),
            ("OTHER", "2"),
            ("BASH_ENV", "/x"),
        ],
    );
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("HOME"), Some("/h"));
    assert_eq!(get("MY_VAR"), Some("1"));
    assert_eq!(get("GITHUB_TOKEN"), None, "masked even though allowed");
    assert_eq!(get("LD_PRELOAD"), None);
    assert_eq!(get("BASH_ENV"), None);
    assert_eq!(get("OTHER"), None);
    assert_eq!(get("PATH"), Some("/usr/local/bin:/usr/bin:/bin"));
    assert_eq!(get("PAGER"), Some("cat"));
}

#[test]
fn normalize_cow_borrows_exactly_the_paths_normalize_keeps() {
    use safesh_policy::paths::{is_normalized_absolute, normalize, normalize_cow};
    for p in [
        "/", "/a", "/a/b.rs", "/a/.env", "/a/..b", "/a/b.", "a", "a/b", "", ".", "/.", "/..",
        "//a", "/a//b", "/a/./b", "/a/../b", "/a/", "/a/.", "/a/..", "./a", "/...", "/a/.../b",
        "/.a/b", "/a/b/", "/a/b/..", "/a/b/.", "///", "/a/b//",
    ] {
        let p = Path::new(p);
        let kept = p.is_absolute() && normalize(p).as_os_str() == p.as_os_str();
        assert_eq!(is_normalized_absolute(p), kept, "{}", p.display());
        assert_eq!(
            normalize_cow(p).as_ref(),
            normalize(p).as_path(),
            "{}",
            p.display()
        );
    }
}
