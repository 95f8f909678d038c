//! `safesh init` templates and `safesh explain` texts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use safesh_policy::ErrorCode;
use safesh_policy::config::{LoadOptions, Network, load};
use safesh_policy::explain;
use safesh_policy::init::{self, Ecosystem, InitError};
use std::path::Path;

fn project(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let p = dir.path().join(f);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, "").unwrap();
    }
    dir
}

fn detected(files: &[&str]) -> Vec<Ecosystem> {
    init::detect(project(files).path())
}

/// The template parsed as TOML (it must always be valid TOML).
fn parsed(text: &str) -> toml::Table {
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("template is not valid TOML: {e}\n{text}"))
}

fn strings(v: &toml::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn command<'a>(t: &'a toml::Table, name: &str) -> &'a toml::Table {
    t["commands"]
        .as_table()
        .unwrap()
        .get(name)
        .unwrap_or_else(|| panic!("no [commands.{name}]"))
        .as_table()
        .unwrap()
}

fn has_command(t: &toml::Table, name: &str) -> bool {
    t.get("commands")
        .and_then(|c| c.as_table())
        .is_some_and(|c| c.contains_key(name))
}

#[test]
fn detects_nothing_in_an_empty_dir() {
    assert_eq!(detected(&[]), vec![]);
}

#[test]
fn detects_rust_and_git() {
    assert_eq!(
        detected(&["Cargo.toml", ".git/HEAD"]),
        vec![Ecosystem::Rust, Ecosystem::Git]
    );
}

#[test]
fn detects_git_worktree_file() {
    assert_eq!(detected(&[".git"]), vec![Ecosystem::Git]);
}

#[test]
fn detects_node_package_managers_by_lock_file() {
    assert_eq!(
        detected(&["package.json"]),
        vec![Ecosystem::Node, Ecosystem::Npm]
    );
    assert_eq!(
        detected(&["package.json", "package-lock.json"]),
        vec![Ecosystem::Node, Ecosystem::Npm]
    );
    assert_eq!(
        detected(&["package.json", "yarn.lock"]),
        vec![Ecosystem::Node, Ecosystem::Yarn]
    );
    assert_eq!(
        detected(&["package.json", "pnpm-lock.yaml"]),
        vec![Ecosystem::Node, Ecosystem::Pnpm]
    );
    // A lock file without package.json is not a node project.
    assert_eq!(detected(&["yarn.lock"]), vec![]);
}

#[test]
fn detects_python_tools() {
    assert_eq!(
        detected(&["requirements.txt"]),
        vec![Ecosystem::Python, Ecosystem::Pip]
    );
    assert_eq!(
        detected(&["setup.py"]),
        vec![Ecosystem::Python, Ecosystem::Pip]
    );
    assert_eq!(
        detected(&["pyproject.toml", "uv.lock"]),
        vec![Ecosystem::Python, Ecosystem::Uv]
    );
    assert_eq!(
        detected(&["pyproject.toml", "poetry.lock"]),
        vec![Ecosystem::Python, Ecosystem::Poetry]
    );
    let dir = project(&[]);
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.poetry]\nname = \"x\"\n",
    )
    .unwrap();
    assert_eq!(
        init::detect(dir.path()),
        vec![Ecosystem::Python, Ecosystem::Poetry]
    );
}

#[test]
fn detects_go_ruby_java_make_cmake() {
    assert_eq!(detected(&["go.mod"]), vec![Ecosystem::Go]);
    assert_eq!(detected(&["Gemfile"]), vec![Ecosystem::Ruby]);
    assert_eq!(
        detected(&["pom.xml"]),
        vec![Ecosystem::Java, Ecosystem::Maven]
    );
    assert_eq!(
        detected(&["build.gradle.kts"]),
        vec![Ecosystem::Java, Ecosystem::Gradle]
    );
    assert_eq!(detected(&["Makefile"]), vec![Ecosystem::Make]);
    assert_eq!(detected(&["CMakeLists.txt"]), vec![Ecosystem::Cmake]);
}

#[test]
fn detects_many_at_once_sorted() {
    assert_eq!(
        detected(&[
            ".git/HEAD",
            "Makefile",
            "go.mod",
            "Cargo.toml",
            "package.json"
        ]),
        vec![
            Ecosystem::Rust,
            Ecosystem::Node,
            Ecosystem::Npm,
            Ecosystem::Go,
            Ecosystem::Make,
            Ecosystem::Git
        ]
    );
}

#[test]
fn detection_looks_only_at_the_dir_itself() {
    assert_eq!(detected(&["sub/Cargo.toml"]), vec![]);
}

#[test]
fn rust_template_has_cargo_profile_and_path() {
    let text = init::template(Path::new("/p/demo"), &[Ecosystem::Rust, Ecosystem::Git]);
    let t = parsed(&text);
    let sandbox = t["sandbox"].as_table().unwrap();
    let path = strings(&sandbox["path"]);
    assert_eq!(path[0], "~/.cargo/bin");
    assert!(path.contains(&"/usr/bin".to_string()));
    assert_eq!(strings(&sandbox["read"]), vec!["."]);
    assert_eq!(strings(&sandbox["write"]), vec!["."]);
    assert_eq!(sandbox["network"].as_bool(), Some(false));

    let cargo = command(&t, "cargo");
    let allow = strings(&cargo["allow"]);
    for sub in ["build", "test", "check", "clippy", "fmt"] {
        assert!(allow.contains(&sub.to_string()), "cargo allow lacks {sub}");
    }
    for sub in ["install", "publish"] {
        assert!(!allow.contains(&sub.to_string()), "cargo allows {sub}");
    }
    assert!(strings(&cargo["deny_flags"]).contains(&"--config".to_string()));
    let read = strings(&cargo["read"]);
    assert!(read.contains(&"~/.cargo".to_string()) && read.contains(&"~/.rustup".to_string()));
    let write = strings(&cargo["write"]);
    assert!(write.contains(&"~/.cargo/registry".to_string()));
    assert!(write.contains(&"target".to_string()));
    let exec = strings(&cargo["exec"]);
    for p in [
        "~/.rustup/toolchains/**",
        "/usr/bin/cc",
        "/usr/bin/ld",
        "target/**",
    ] {
        assert!(exec.contains(&p.to_string()), "cargo exec lacks {p}");
    }
    assert_eq!(
        strings(&cargo["network"]),
        vec!["index.crates.io", "static.crates.io"]
    );
    assert_eq!(
        command(&t, "./target/debug/*")["allow"].as_bool(),
        Some(true)
    );
    assert!(text.contains("[commands.\"./target/debug/*\"]"));
    // Builds need more time than the default.
    assert_eq!(t["limits"]["timeout_ms"].as_integer(), Some(600000));
    assert!(text.contains("CARGO_HOME"));
}

#[test]
fn git_template_allows_local_work_and_denies_command_flags() {
    let t = parsed(&init::template(Path::new("/p"), &[Ecosystem::Git]));
    let git = command(&t, "git");
    let allow = strings(&git["allow"]);
    for sub in [
        "status",
        "diff",
        "log",
        "show",
        "add",
        "commit",
        "branch",
        "switch",
        "checkout",
        "restore",
        "stash",
        "rev-parse",
        "ls-files",
        "blame",
    ] {
        assert!(allow.contains(&sub.to_string()), "git allow lacks {sub}");
    }
    for sub in ["push", "config", "clone", "fetch", "pull"] {
        assert!(!allow.contains(&sub.to_string()), "git allows {sub}");
    }
    assert_eq!(
        strings(&git["deny_flags"]),
        vec!["-c", "--exec", "--upload-pack", "--receive-pack"]
    );
    assert!(git["branch"]["deny_flags"].as_array().is_some());
    assert!(!git.contains_key("network"));
    // git alone is not a build: the default timeouts stay.
    assert!(t["limits"].get("timeout_ms").is_none());
    assert_eq!(t["sandbox"]["path"][0].as_str(), Some("/usr/local/bin"));
}

#[test]
fn node_template_has_registry_and_tools_rule() {
    let t = parsed(&init::template(
        Path::new("/p"),
        &[Ecosystem::Node, Ecosystem::Npm],
    ));
    let npm = command(&t, "npm");
    assert_eq!(strings(&npm["network"]), vec!["registry.npmjs.org"]);
    assert!(strings(&npm["deny_flags"]).contains(&"-g".to_string()));
    assert!(has_command(&t, "node"));
    assert!(has_command(&t, "./node_modules/.bin/*"));
    assert!(!has_command(&t, "npx"));
    assert!(!has_command(&t, "yarn"));
}

#[test]
fn python_templates_reach_pypi() {
    for (tool, name) in [
        (Ecosystem::Pip, "pip"),
        (Ecosystem::Uv, "uv"),
        (Ecosystem::Poetry, "poetry"),
    ] {
        let t = parsed(&init::template(Path::new("/p"), &[Ecosystem::Python, tool]));
        assert_eq!(
            strings(&command(&t, name)["network"]),
            vec!["pypi.org", "files.pythonhosted.org"],
            "{name}"
        );
        assert!(has_command(&t, "python3"));
        assert!(has_command(&t, "./.venv/bin/*"));
    }
}

#[test]
fn go_template_reaches_the_go_proxy() {
    let t = parsed(&init::template(Path::new("/p"), &[Ecosystem::Go]));
    let go = command(&t, "go");
    assert_eq!(
        strings(&go["network"]),
        vec!["proxy.golang.org", "sum.golang.org"]
    );
    assert!(strings(&go["deny_flags"]).contains(&"-toolexec".to_string()));
    assert!(!strings(&go["allow"]).contains(&"generate".to_string()));
    assert!(strings(&go["env"]["deny_flags"]).contains(&"-w".to_string()));
}

#[test]
fn every_ecosystem_alone_and_together_gives_valid_toml() {
    for e in Ecosystem::ALL {
        let text = init::template(Path::new("/p"), &[e]);
        let t = parsed(&text);
        assert!(t.contains_key("sandbox") && t.contains_key("env"), "{e}");
        if e != Ecosystem::Git {
            assert!(t["limits"].get("timeout_ms").is_some(), "{e}");
        }
    }
    let all = init::template(Path::new("/p"), &Ecosystem::ALL);
    let t = parsed(&all);
    for name in [
        "cargo", "npm", "yarn", "pnpm", "go", "pip", "uv", "poetry", "bundle", "mvn", "gradle",
        "make", "cmake", "git",
    ] {
        assert!(
            has_command(&t, name),
            "no [commands.{name}] with every ecosystem"
        );
    }
}

#[test]
fn empty_template_allows_no_program() {
    let text = init::template(Path::new("/p"), &[]);
    let t = parsed(&text);
    assert!(!has_command(&t, "git"));
    assert!(t.contains_key("sandbox"));
    assert!(text.contains("# Detected: nothing"));
}

#[test]
fn every_section_and_rule_is_commented() {
    let text = init::template(Path::new("/p"), &Ecosystem::ALL);
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let is_command_table = line.starts_with("[commands.") && line.matches('.').count() >= 1;
        if *line == "[sandbox]" || *line == "[limits]" || *line == "[env]" || is_command_table {
            // Path rules grouped with the one above may share its comment.
            let commented = (0..i)
                .rev()
                .take_while(|j| !lines[*j].is_empty())
                .any(|j| lines[j].starts_with('#'));
            let grouped = line.starts_with("[commands.\"./target/release")
                || *line == "[commands.python]"
                || *line == "[commands.javac]";
            assert!(commented || grouped, "no comment above {line}");
        }
    }
    assert!(text.contains("safesh trust"));
}

#[test]
fn template_is_deterministic_and_order_insensitive() {
    let a = init::template(
        Path::new("/p"),
        &[Ecosystem::Git, Ecosystem::Rust, Ecosystem::Rust],
    );
    let b = init::template(Path::new("/p"), &[Ecosystem::Rust, Ecosystem::Git]);
    assert_eq!(a, b);
    assert_eq!(
        b,
        init::template(Path::new("/p"), &[Ecosystem::Rust, Ecosystem::Git])
    );
}

#[test]
fn wrapper_scripts_get_path_rules_when_present() {
    let dir = project(&["gradlew", "build.gradle"]);
    let t = parsed(&init::template(dir.path(), &init::detect(dir.path())));
    assert!(has_command(&t, "./gradlew"));
    let t = parsed(&init::template(
        Path::new("/nonexistent"),
        &[Ecosystem::Java, Ecosystem::Gradle],
    ));
    assert!(!has_command(&t, "./gradlew"));
}

#[test]
fn write_creates_the_file_and_refuses_to_overwrite() {
    let dir = project(&["Cargo.toml"]);
    let path = init::write(dir.path(), false).unwrap();
    assert_eq!(path, dir.path().join("safesh.toml"));
    let first = std::fs::read_to_string(&path).unwrap();
    assert!(first.contains("[commands.cargo]"));

    std::fs::write(&path, "# mine\n").unwrap();
    match init::write(dir.path(), false) {
        Err(InitError::Exists { path: p }) => assert_eq!(p, path),
        other => panic!("expected Exists, got {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");

    assert_eq!(init::write(dir.path(), true).unwrap(), path);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    // No temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[cfg(unix)]
#[test]
fn force_replaces_a_symlink_instead_of_following_it() {
    let dir = project(&["Cargo.toml"]);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("safesh.toml")).unwrap();
    assert!(matches!(
        init::write(dir.path(), false),
        Err(InitError::Exists { .. })
    ));
    init::write(dir.path(), true).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(
        !dir.path()
            .join("safesh.toml")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn generated_config_loads() {
    let dir = project(&[
        "Cargo.toml",
        "package.json",
        "go.mod",
        "pyproject.toml",
        "Makefile",
        ".git/HEAD",
    ]);
    let home = tempfile::tempdir().unwrap();
    let path = init::write(dir.path(), false).unwrap();
    let opts = LoadOptions {
        cwd: dir.path().to_path_buf(),
        config_file: Some(path.clone()),
        home: Some(home.path().to_path_buf()),
        no_project: true,
        ..LoadOptions::default()
    };
    let config = match load(&opts) {
        Ok(c) => c,
        Err(e) => panic!(
            "generated config does not load: {e}\n{}",
            std::fs::read_to_string(&path).unwrap()
        ),
    };
    let cargo = config.rule_for_name("cargo").expect("cargo rule");
    assert_eq!(
        cargo.network,
        Some(Network::Hosts(vec![
            "index.crates.io".into(),
            "static.crates.io".into()
        ]))
    );
    assert!(cargo.deny_flags.contains(&"--config".to_string()));
    let git = config.rule_for_name("git").expect("git rule");
    assert!(git.subcommands.contains_key("branch"));
    let debug_bin = dir.path().canonicalize().unwrap().join("target/debug/app");
    assert!(!config.rules_for_path(&debug_bin).is_empty());
    // Every ecosystem's rules, all at once.
    std::fs::write(&path, init::template(dir.path(), &Ecosystem::ALL)).unwrap();
    if let Err(e) = load(&opts) {
        panic!("full template does not load: {e}");
    }
}

#[test]
fn explain_covers_every_code_with_its_status() {
    assert_eq!(explain::all().len(), 20);
    let codes = explain::codes();
    assert_eq!(codes.len(), 20);
    for code in explain::all() {
        let name = code.as_str();
        assert!(codes.contains(&name));
        let text = explain::explain(name).unwrap_or_else(|| panic!("no text for {name}"));
        assert!(text.starts_with(name), "{text}");
        assert!(
            text.contains(&format!("Exit status: {}\n", code.status())),
            "{name}: {text}"
        );
        for heading in [
            "What it means:",
            "When it happens:",
            "Examples",
            "How to fix it:",
            "Configure:",
        ] {
            assert!(text.contains(heading), "{name} lacks {heading}");
        }
        let examples = text.matches("\n  $ ").count();
        assert!((2..=3).contains(&examples), "{name}: {examples} examples");
        // Every example shows what safesh says, with the code itself.
        assert!(
            text.matches(&format!("safesh: {name}:")).count() >= examples,
            "{name}"
        );
    }
}

#[test]
fn explain_accepts_case_and_separators() {
    let want = explain::explain("PATH_VIOLATION").unwrap();
    for spelling in [
        "path_violation",
        "Path_Violation",
        "path-violation",
        "pathviolation",
        " PATH_VIOLATION\n",
    ] {
        assert_eq!(
            explain::explain(spelling).as_deref(),
            Some(want.as_str()),
            "{spelling}"
        );
    }
    assert_eq!(explain::parse("timeout"), Some(ErrorCode::Timeout));
    assert_eq!(explain::explain("NO_SUCH_CODE"), None);
    assert_eq!(explain::explain(""), None);
    assert!(
        explain::explain("COMMAND_NOT_FOUND")
            .unwrap()
            .contains("Exit status: 127")
    );
    assert!(
        explain::explain("LIMIT_EXCEEDED")
            .unwrap()
            .contains("[limits]")
    );
}
