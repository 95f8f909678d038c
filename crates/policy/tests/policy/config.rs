//! Config loading, merging, errors and trust.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use safesh_policy::config::{
    self, Allow, Config, ConfigError, LoadOptions, NameMatcher, Network, trust,
};
use std::fs;
use std::path::{Path, PathBuf};

/// A scratch world: `home`, XDG dirs and a project dir, never the real HOME.
pub(crate) struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    proj: PathBuf,
}

impl World {
    pub(crate) fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        // Canonical, so expectations compare with resolved paths.
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&proj).unwrap();
        World {
            _tmp: tmp,
            root,
            home,
            proj,
        }
    }

    pub(crate) fn opts(&self) -> LoadOptions {
        LoadOptions {
            cwd: self.proj.clone(),
            home: Some(self.home.clone()),
            xdg_state_home: Some(self.root.join("state")),
            xdg_config_home: Some(self.root.join("xdg-config")),
            config_file: None,
            no_project: false,
        }
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.root.join("state/safesh")
    }

    pub(crate) fn user(&self, text: &str) -> PathBuf {
        let p = self.root.join("xdg-config/safesh/config.toml");
        write(&p, text);
        p
    }

    /// Writes the project file and trusts it.
    pub(crate) fn project(&self, text: &str) -> PathBuf {
        let p = self.proj.join("safesh.toml");
        write(&p, text);
        trust::trust_file(&self.state(), &p).unwrap();
        p
    }

    pub(crate) fn proj_path(&self, rel: &str) -> PathBuf {
        self.proj.join(rel)
    }

    pub(crate) fn load(&self) -> Config {
        config::load(&self.opts()).unwrap()
    }
}

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

pub(crate) fn invalid(r: Result<Config, ConfigError>) -> (PathBuf, usize, usize, String) {
    match r {
        Err(ConfigError::Invalid {
            path,
            line,
            column,
            message,
        }) => (path, line, column, message),
        Err(e) => panic!("expected Invalid, got {e}"),
        Ok(_) => panic!("expected an error"),
    }
}

fn subs(a: &Option<Allow>) -> Vec<String> {
    match a {
        Some(Allow::Subcommands(s)) => s.clone(),
        other => panic!("expected a subcommand list, got {other:?}"),
    }
}

#[test]
fn builtin_defaults() {
    let w = World::new();
    let c = w.load();
    assert!(c.sources.is_empty());
    assert!(c.warnings.is_empty());
    assert_eq!(c.base_dir, w.proj);
    assert_eq!(c.state_dir, Some(w.state()));
    assert_eq!(c.sandbox.read.len(), 1);
    assert_eq!(c.sandbox.read[0].path, w.proj);
    assert_eq!(c.sandbox.write[0].path, w.proj);
    assert_eq!(c.sandbox.read[0].origin, config::Origin::builtin());
    let path: Vec<_> = c.sandbox.path.iter().map(|e| e.path.clone()).collect();
    assert_eq!(
        path,
        ["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from)
    );
    assert_eq!(c.sandbox.network, Network::Off);
    assert!(!c.sandbox.allow_weaker);
    let allow: Vec<_> = c.env.allow.iter().map(|g| g.written.as_str()).collect();
    assert_eq!(
        allow,
        ["HOME", "PATH", "LANG", "LC_ALL", "TERM", "USER", "TZ"]
    );
    assert!(
        c.env
            .mask
            .iter()
            .any(|g| g.matcher.is_match("GITHUB_TOKEN"))
    );
    assert!(c.env.mask.iter().any(|g| g.matcher.is_match("AWS_REGION")));
    assert!(c.env.mask.iter().any(|g| g.matcher.is_match("DB_PASSWORD")));
    assert!(!c.env.mask.iter().any(|g| g.matcher.is_match("HOME")));
    assert!(c.commands.is_empty(), "no external program by default");
    assert_eq!(c.limits, config::Limits::default());
}

#[test]
fn builtin_secret_labels() {
    let w = World::new();
    let c = w.load();
    let secret = |p: &str| {
        // In order; the last matching entry decides (gitignore-like).
        let mut hit = false;
        for (include, g) in &c.labels.secret {
            if g.matcher.is_match(p) {
                hit = *include;
            }
        }
        hit
    };
    assert!(secret("/x/y/.env"));
    assert!(secret(&format!("{}/.env.local", w.proj.display())));
    assert!(!secret("/x/.env.example"));
    assert!(secret("/srv/tls/server.pem"));
    assert!(secret(&format!("{}/.ssh/config", w.home.display())));
    assert!(secret(&format!("{}/.aws/credentials", w.home.display())));
    assert!(!secret("/x/README.md"));
    let (include, g) = &c.labels.secret[2];
    assert!(!include);
    assert_eq!(g.written, "!.env.example");
}

#[test]
fn user_layer_applies() {
    let w = World::new();
    let user = w.user("[commands.git]\nallow = [\"status\"]\n\n[limits]\ntimeout_ms = 5\n");
    let c = w.load();
    assert_eq!(c.sources.len(), 1);
    assert_eq!(c.sources[0].path, user);
    assert_eq!(c.sources[0].layer, "user");
    assert!(c.sources[0].applied);
    let git = c.rule_for_name("git").unwrap();
    assert_eq!(subs(&git.allow), ["status"]);
    assert_eq!(git.origins[0].file.as_deref(), Some(user.as_path()));
    assert_eq!(git.origins[0].line, 1);
    assert_eq!(c.limits.timeout_ms, Some(5));
}

#[test]
fn user_layer_defaults_to_home_config() {
    let w = World::new();
    let mut o = w.opts();
    o.xdg_config_home = None;
    o.xdg_state_home = None;
    write(
        &w.home.join(".config/safesh/config.toml"),
        "[commands.ls]\nallow = true\n",
    );
    let c = config::load(&o).unwrap();
    assert_eq!(c.rule_for_name("ls").unwrap().allow, Some(Allow::All));
    assert_eq!(c.state_dir, Some(w.home.join(".local/state/safesh")));
}

#[test]
fn project_layer_applies_when_trusted() {
    let w = World::new();
    let p = w.project("[sandbox]\nnetwork = [\"api.github.com\"]\n");
    let c = w.load();
    assert_eq!(c.sources.len(), 1);
    assert_eq!(c.sources[0].path, p);
    assert_eq!(c.sources[0].layer, "project");
    assert!(c.sources[0].applied);
    assert!(c.warnings.is_empty());
    assert_eq!(
        c.sandbox.network,
        Network::Hosts(vec!["api.github.com".into()])
    );
}

#[test]
fn untrusted_project_is_ignored_with_warning() {
    let w = World::new();
    let p = w.proj.join("safesh.toml");
    write(&p, "[commands.curl]\nallow = true\n");
    let c = w.load();
    assert!(c.rule_for_name("curl").is_none());
    assert_eq!(c.sources.len(), 1);
    assert!(!c.sources[0].applied);
    assert_eq!(c.warnings.len(), 1);
    let msg = &c.warnings[0];
    assert!(msg.contains("not trusted"), "{msg}");
    assert!(
        msg.contains(&format!("safesh trust {}", p.display())),
        "{msg}"
    );

    // Trusted: applies.
    trust::trust_file(&w.state(), &p).unwrap();
    let c = w.load();
    assert_eq!(c.rule_for_name("curl").unwrap().allow, Some(Allow::All));
    assert!(c.sources[0].applied);
    assert!(c.warnings.is_empty());

    // Edited after trust (as a command could do): ignored again.
    write(
        &p,
        "[commands.curl]\nallow = true\n[commands.sh]\nallow = true\n",
    );
    let c = w.load();
    assert!(c.rule_for_name("curl").is_none());
    assert!(c.rule_for_name("sh").is_none());
    assert!(!c.sources[0].applied);
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn untrusted_broken_project_is_not_an_error() {
    // A planted file must not be able to break safesh either.
    let w = World::new();
    write(&w.proj.join("safesh.toml"), "[[[ not toml");
    let c = w.load();
    assert!(!c.sources[0].applied);
}

#[test]
fn config_file_is_trusted_as_given_and_skips_project() {
    let w = World::new();
    w.project("[commands.make]\nallow = true\n");
    let f = w.root.join("elsewhere/my.toml");
    write(&f, "[commands.git]\nallow = [\"log\"]\n");
    let mut o = w.opts();
    o.config_file = Some(f.clone());
    let c = config::load(&o).unwrap();
    assert!(c.rule_for_name("make").is_none(), "project search skipped");
    assert_eq!(subs(&c.rule_for_name("git").unwrap().allow), ["log"]);
    assert_eq!(c.sources.len(), 1);
    assert_eq!(c.sources[0].layer, "command-line");
    assert!(c.sources[0].applied);
    assert!(c.warnings.is_empty());
}

#[test]
fn config_file_relative_to_cwd() {
    let w = World::new();
    write(
        &w.proj.join("conf/x.toml"),
        "[sandbox]\nread = [\"data\"]\n",
    );
    let mut o = w.opts();
    o.config_file = Some(PathBuf::from("conf/x.toml"));
    let c = config::load(&o).unwrap();
    assert!(
        c.sandbox
            .read
            .iter()
            .any(|e| e.path == w.proj.join("conf/data"))
    );
}

#[test]
fn no_project_skips_search() {
    let w = World::new();
    w.project("[commands.make]\nallow = true\n");
    let mut o = w.opts();
    o.no_project = true;
    let c = config::load(&o).unwrap();
    assert!(c.rule_for_name("make").is_none());
    assert!(c.sources.is_empty());
}

#[test]
fn project_search_walks_up() {
    let w = World::new();
    let p = w.project("[commands.make]\nallow = true\n");
    let deep = w.proj.join("a/b/c");
    fs::create_dir_all(&deep).unwrap();
    let mut o = w.opts();
    o.cwd = deep.clone();
    let c = config::load(&o).unwrap();
    assert_eq!(c.sources[0].path, p);
    assert!(c.rule_for_name("make").is_some());
    // `.` of the built-in layer is still the working directory.
    assert_eq!(c.sandbox.read[0].path, deep);
    assert_eq!(config::find_project_file(&deep), Some(p));

    // The nearest one wins.
    let nearer = w.proj.join("a/safesh.toml");
    write(&nearer, "[commands.cargo]\nallow = true\n");
    trust::trust_file(&w.state(), &nearer).unwrap();
    let c = config::load(&o).unwrap();
    assert_eq!(c.sources[0].path, nearer);
    assert!(c.rule_for_name("cargo").is_some());
    assert!(c.rule_for_name("make").is_none());
}

#[test]
fn lists_union_and_deny_beats_allow() {
    let w = World::new();
    let user = w.user(
        r#"
[sandbox]
read = ["/usr/share"]
network = ["a.example"]
[env]
allow = ["CARGO_HOME"]
mask = ["*_PAT"]
[commands.git]
allow = ["status", "diff"]
deny_flags = ["-c"]
[commands.rm]
allow = false
[commands.cargo]
allow = ["build"]
"#,
    );
    let proj = w.project(
        r#"
[sandbox]
read = ["/usr/share", "/opt"]
network = ["b.example", "a.example"]
[env]
allow = ["CARGO_HOME", "RUSTUP_HOME"]
[commands.git]
allow = ["log", "status"]
deny_flags = ["--force", "-c"]
require_flags = ["--no-pager"]
[commands.rm]
allow = true
[commands.cargo]
allow = true
"#,
    );
    let c = w.load();
    assert_eq!(c.sources.len(), 2);
    assert_eq!(c.sources[0].layer, "user");
    assert_eq!(c.sources[1].layer, "project");
    let read: Vec<_> = c.sandbox.read.iter().map(|e| e.path.clone()).collect();
    assert_eq!(
        read,
        [
            w.proj.clone(),
            PathBuf::from("/usr/share"),
            PathBuf::from("/opt")
        ]
    );
    assert_eq!(
        c.sandbox.network,
        Network::Hosts(vec!["a.example".into(), "b.example".into()])
    );
    let allow: Vec<_> = c.env.allow.iter().map(|g| g.written.as_str()).collect();
    assert_eq!(&allow[allow.len() - 2..], ["CARGO_HOME", "RUSTUP_HOME"]);
    assert!(c.env.mask.iter().any(|g| g.written == "*_PAT"));

    let git = c.rule_for_name("git").unwrap();
    assert_eq!(subs(&git.allow), ["status", "diff", "log"]);
    assert_eq!(git.deny_flags, ["-c", "--force"]);
    assert_eq!(git.require_flags, ["--no-pager"]);
    let files: Vec<_> = git
        .origins
        .iter()
        .map(|o| o.file.clone().unwrap())
        .collect();
    assert_eq!(files, [user.clone(), proj.clone()]);
    assert_eq!(git.origins[0].line, 8);
    assert_eq!(git.origins[1].line, 7);

    // A deny in any layer beats an allow in any other.
    assert_eq!(c.rule_for_name("rm").unwrap().allow, Some(Allow::Deny));
    // `true` beats a list.
    assert_eq!(c.rule_for_name("cargo").unwrap().allow, Some(Allow::All));
}

#[test]
fn network_true_beats_hosts() {
    let w = World::new();
    w.user("[sandbox]\nnetwork = [\"a.example\"]\n");
    w.project("[sandbox]\nnetwork = true\n");
    assert_eq!(w.load().sandbox.network, Network::On);
    w.project("[sandbox]\nnetwork = false\n");
    assert_eq!(
        w.load().sandbox.network,
        Network::Hosts(vec!["a.example".into()])
    );
}

#[test]
fn limits_override_per_key() {
    let w = World::new();
    w.user("[limits]\ntimeout_ms = 1000\nmemory_mb = 512\n");
    w.project("[limits]\ntimeout_ms = 2000\nstring_bytes = 0x100\n");
    let c = w.load();
    assert_eq!(c.limits.timeout_ms, Some(2000));
    assert_eq!(c.limits.memory_mb, Some(512));
    assert_eq!(c.limits.string_bytes, Some(256));
    assert_eq!(c.limits.processes, None);
}

#[test]
fn checkpoint_journal_is_on_unless_a_layer_turns_it_off() {
    let w = World::new();
    assert!(w.load().checkpoints.journal);
    w.user("[checkpoints]\njournal = false\nkeep = 3\n");
    let c = w.load();
    assert!(!c.checkpoints.journal);
    assert_eq!(c.checkpoints.keep, 3);
    assert!(
        config::render(&c).contains("journal = false"),
        "{}",
        config::render(&c)
    );
    let p = w.project("[checkpoints]\njournal = \"no\"\n");
    let (path, line, _, msg) = invalid(config::load(&w.opts()));
    assert_eq!((path, line), (p, 2));
    assert!(msg.contains("journal"), "{msg}");
}

#[test]
fn subcommand_rules_merge() {
    let w = World::new();
    w.user(
        r#"
[commands.git]
allow = ["log", "remote"]
[commands.git.log]
deny_flags = ["--output"]
[commands.git.remote.add]
allow = false
"#,
    );
    w.project(
        r#"
[commands.git.log]
deny_flags = ["-p"]
value_flags = ["--grep"]
arg_patterns = { "--grep" = "^[a-z]+$" }
[commands.git.push]
allow = false
[commands.docker.network]
allow = ["ls"]
"#,
    );
    let c = w.load();
    let git = c.rule_for_name("git").unwrap();
    let log = &git.subcommands["log"];
    assert_eq!(log.deny_flags, ["--output", "-p"]);
    assert_eq!(log.value_flags, ["--grep"]);
    assert_eq!(log.arg_patterns.len(), 1);
    assert!(log.arg_patterns[0].regex.is_match("fix"));
    assert!(!log.arg_patterns[0].regex.is_match("-c"));
    assert!(matches!(&log.matcher, NameMatcher::Name(n) if n == "log"));
    assert_eq!(git.subcommands["push"].allow, Some(Allow::Deny));
    // A subcommand named like a rule key is still a subcommand.
    let docker = c.rule_for_name("docker").unwrap();
    assert_eq!(subs(&docker.subcommands["network"].allow), ["ls"]);
    assert_eq!(docker.network, None);
    assert_eq!(
        git.subcommands["remote"].subcommands["add"].allow,
        Some(Allow::Deny)
    );
}

#[test]
fn relative_paths_are_relative_to_the_declaring_file() {
    let w = World::new();
    let sub = w.proj.join("sub");
    fs::create_dir_all(&sub).unwrap();
    fs::create_dir_all(w.proj.join("data")).unwrap();
    fs::create_dir_all(w.proj.join("tools")).unwrap();
    fs::write(w.root.join("gcc"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(w.root.join("gcc"), w.proj.join("tools/cc")).unwrap();
    w.project(
        r#"
[sandbox]
read = ["data", "../shared", "./x/../y"]
write = ["."]
[commands."./bin/tool"]
allow = true
[commands."./target/debug/*"]
allow = true
[commands.cargo]
write = ["target"]
exec = ["target/**", "tools/cc"]
"#,
    );
    let mut o = w.opts();
    o.cwd = sub.clone();
    let c = config::load(&o).unwrap();
    let read: Vec<_> = c.sandbox.read.iter().map(|e| e.path.clone()).collect();
    assert_eq!(
        read,
        [
            sub.clone(),
            w.proj.join("data"),
            w.root.join("shared"),
            w.proj.join("y")
        ]
    );
    assert_eq!(c.sandbox.read[1].written, "data");
    let write: Vec<_> = c.sandbox.write.iter().map(|e| e.path.clone()).collect();
    assert_eq!(write, [sub.clone(), w.proj.clone()]);

    let tool = c.rules_for_path(&w.proj.join("bin/tool"));
    assert_eq!(tool.len(), 1);
    assert!(matches!(&tool[0].matcher, NameMatcher::Path(p) if *p == w.proj.join("bin/tool")));
    let built = c.rules_for_path(&w.proj.join("target/debug/app"));
    assert_eq!(built.len(), 1);
    assert!(matches!(built[0].matcher, NameMatcher::Glob(_)));
    assert!(
        c.rules_for_path(&w.proj.join("target/debug/deps/x"))
            .is_empty()
    );
    assert!(c.rules_for_path(&sub.join("target/debug/app")).is_empty());

    let cargo = c.rule_for_name("cargo").unwrap();
    assert!(cargo.write[0].matcher.is_match(w.proj.join("target")));
    assert!(
        cargo.exec[0]
            .matcher
            .is_match(w.proj.join("target/debug/build/x/build-script"))
    );
    // Literal paths are canonical: a symlink names its target.
    assert!(cargo.exec[1].matcher.is_match(w.root.join("gcc")));
    assert!(!cargo.exec[0].matcher.is_match("/tmp/target/x"));
}

#[test]
fn tilde_is_home() {
    let w = World::new();
    w.project(
        r#"
[sandbox]
read = ["~", "~/notes"]
[commands.cargo]
read = ["~/.cargo", "~/.rustup/**"]
[mcp]
http_token_file = "~/.config/safesh/token"
"#,
    );
    let c = w.load();
    let read: Vec<_> = c.sandbox.read.iter().map(|e| e.path.clone()).collect();
    assert_eq!(read[1..], [w.home.clone(), w.home.join("notes")]);
    let cargo = c.rule_for_name("cargo").unwrap();
    assert_eq!(
        cargo.read[0].pattern,
        w.home.join(".cargo").to_string_lossy()
    );
    assert!(
        cargo.read[1]
            .matcher
            .is_match(w.home.join(".rustup/toolchains/x/bin/rustc"))
    );
    assert_eq!(c.mcp_token_file, Some(w.home.join(".config/safesh/token")));
}

#[test]
fn tilde_user_is_an_error() {
    let w = World::new();
    let p = w.project("[sandbox]\nread = [\"~root/x\"]\n");
    let (path, line, col, msg) = invalid(config::load(&w.opts()));
    assert_eq!((path, line, col), (p, 2, 9));
    assert!(msg.contains("~user"), "{msg}");
}

#[cfg(unix)]
#[test]
fn symlinked_root_is_canonicalized() {
    let w = World::new();
    let real = w.root.join("real");
    fs::create_dir_all(real.join("data")).unwrap();
    let link = w.root.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let p = link.join("safesh.toml");
    write(
        &p,
        "[sandbox]\nread = [\"data\", \"newdir/sub\"]\n[commands.\"./bin/*\"]\nallow = true\n",
    );
    trust::trust_file(&w.state(), &p).unwrap();
    let mut o = w.opts();
    o.cwd = link.clone();
    let c = config::load(&o).unwrap();
    assert!(c.sources[0].applied, "trust is by canonical path");
    assert_eq!(c.base_dir, real);
    assert_eq!(c.sandbox.read[0].path, real);
    assert_eq!(c.sandbox.read[1].path, real.join("data"));
    // Not existing yet: the existing prefix is still resolved.
    assert_eq!(c.sandbox.read[2].path, real.join("newdir/sub"));
    assert_eq!(c.rules_for_path(&real.join("bin/x")).len(), 1);
}

#[test]
fn unknown_key_error() {
    let w = World::new();
    let p = w.project("[commands.git]\nalow = [\"status\"]\n");
    let (path, line, col, msg) = invalid(config::load(&w.opts()));
    assert_eq!(path, p);
    assert_eq!((line, col), (2, 1));
    assert!(
        msg.contains("unknown key `alow` in [commands.git]"),
        "{msg}"
    );
    assert!(msg.contains("expected one of: allow, deny_flags"), "{msg}");
}

#[test]
fn unknown_key_errors_everywhere() {
    let w = World::new();
    for (text, line, col, needle) in [
        (
            "sandbx = {}\n",
            1,
            1,
            "unknown key `sandbx` at the top level",
        ),
        (
            "[sandbox]\n  reed = []\n",
            2,
            3,
            "unknown key `reed` in [sandbox]",
        ),
        (
            "[limits]\ntimeout = 5\n",
            2,
            1,
            "unknown key `timeout` in [limits]",
        ),
        (
            "[env]\nallowed = []\n",
            2,
            1,
            "unknown key `allowed` in [env]",
        ),
        (
            "[[nudge]]\ncommands = [\"vim\"]\nmessage = \"m\"\nsugest = \"x\"\n",
            4,
            1,
            "unknown key `sugest` in [[nudge]]",
        ),
        (
            "[labels]\nsecrets = []\n",
            2,
            1,
            "unknown key `secrets` in [labels]",
        ),
        (
            "[labels.tok]\nenvs = []\n",
            2,
            1,
            "unknown key `envs` in [labels.tok]",
        ),
        (
            "[mcp]\ntoken = \"x\"\n",
            2,
            1,
            "unknown key `token` in [mcp]",
        ),
        (
            "[commands.git.log]\ndeny = []\n",
            2,
            1,
            "unknown key `deny` in [commands.git.log]",
        ),
    ] {
        let p = w.project(text);
        let (path, l, c, msg) = invalid(config::load(&w.opts()));
        assert_eq!(path, p);
        assert_eq!((l, c), (line, col), "{text}: {msg}");
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn wrong_type_errors() {
    let w = World::new();
    for (text, line, col, needle) in [
        (
            "[sandbox]\nread = \".\"\n",
            2,
            8,
            "`read` in [sandbox] must be an array of strings, found a string",
        ),
        (
            "[sandbox]\nread = [\".\", 3]\n",
            2,
            14,
            "found an integer in it",
        ),
        (
            "[sandbox]\nnetwork = \"yes\"\n",
            2,
            11,
            "true, false or an array of host names",
        ),
        (
            "[limits]\ntimeout_ms = -1\n",
            2,
            14,
            "a non-negative integer",
        ),
        (
            "[limits]\ntimeout_ms = \"5\"\n",
            2,
            14,
            "a non-negative integer",
        ),
        (
            "[commands.git]\nallow = \"status\"\n",
            2,
            9,
            "true, false or an array of subcommand names",
        ),
        ("[commands]\ngit = true\n", 2, 7, "a table"),
        (
            "[commands.git]\ndeny_flags = [\"force\"]\n",
            2,
            15,
            "not a flag",
        ),
        (
            "[[rule]]\nname = \"r\"\ncommit_point = \"disk\"\nverdict = \"block\"\n",
            3,
            16,
            "must be one of: network, exec, destructive, env",
        ),
        (
            "[[rule]]\nname = \"r\"\ncommit_point = \"env\"\nverdict = \"deny\"\n",
            4,
            11,
            "block, request-approval, warn, allow",
        ),
        (
            "[[rule]]\nname = \"r\"\ncommit_point = \"env\"\n",
            1,
            1,
            "needs `verdict`",
        ),
        ("nudge = 3\n", 1, 9, "array of tables"),
    ] {
        let p = w.project(text);
        let (path, l, c, msg) = invalid(config::load(&w.opts()));
        assert_eq!(path, p);
        assert_eq!((l, c), (line, col), "{text}: {msg}");
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn bad_glob_and_regex_errors() {
    let w = World::new();
    for (text, line, col, needle) in [
        ("[env]\nmask = [\"AWS_[\"]\n", 2, 9, "bad glob `AWS_[`"),
        (
            "[commands.cargo]\nexec = [\"target/{a\"]\n",
            2,
            9,
            "bad glob `target/{a`",
        ),
        (
            "[labels]\nsecret = [\"ok\", \"**/*.{pem\"]\n",
            2,
            17,
            "bad glob",
        ),
        ("[commands.\"./t/[x\"]\nallow = true\n", 1, 11, "bad glob"),
        (
            "[commands.git]\narg_patterns = { \"*\" = \"(unclosed\" }\n",
            2,
            24,
            "bad regex for `*`",
        ),
        (
            "[commands.git]\narg_patterns = { output = \"x\" }\n",
            2,
            18,
            "must be a flag",
        ),
    ] {
        let p = w.project(text);
        let (path, l, c, msg) = invalid(config::load(&w.opts()));
        assert_eq!(path, p);
        assert_eq!((l, c), (line, col), "{text}: {msg}");
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn toml_syntax_error_has_position() {
    let w = World::new();
    let user = w.user("[sandbox]\nread = [\"a\"\n");
    let (path, line, _col, msg) = invalid(config::load(&w.opts()));
    assert_eq!(path, user);
    assert!(line >= 2, "{line}");
    assert!(msg.starts_with("invalid TOML"), "{msg}");
    // Display: file:line:column: message.
    let e = config::load(&w.opts()).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:", user.display())), "{e}");
}

#[test]
fn column_counts_characters() {
    let w = World::new();
    let p = w.project("# héllo wörld\n[sandbox]\n\"réad\" = []\n");
    let (path, line, col, _) = invalid(config::load(&w.opts()));
    assert_eq!((path, line, col), (p, 3, 1));
    let p = w.project("[sandbox] # é\nread = [\"é\", 1]\n");
    let (_, line, col, _) = invalid(config::load(&w.opts()));
    assert_eq!((line, col), (2, 14));
    let _ = p;
}

#[test]
fn nudges_rules_labels_approvals() {
    let w = World::new();
    let user = w.user(
        r#"
[[nudge]]
commands = ["top"]
message = "no tty"
[[rule]]
name = "user-rule"
commit_point = "network"
when = { confidentiality = "secret" }
verdict = "block"
[[approval]]
action = "rm -r build"
"#,
    );
    let proj = w.project(
        r#"
[[nudge]]
commands = ["vim", "nano"]
message = "Interactive editors cannot run here."
suggest = "Use a here-doc."

[[rule]]
name = "proj-rule"
commit_point = "exec"
verdict = "warn"

[labels]
secret = ["secrets/**", "!secrets/public.txt"]

[labels.github_token]
env = ["GITHUB_TOKEN"]
files = ["~/.config/gh/hosts.yml"]
may_flow_to = ["api.github.com"]
"#,
    );
    let c = w.load();
    let names: Vec<_> = c.rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["proj-rule", "user-rule"],
        "project first, then user"
    );
    assert_eq!(c.rules[1].when["confidentiality"], "secret");
    assert_eq!(c.rules[0].origin.file.as_deref(), Some(proj.as_path()));
    assert_eq!(c.rules[0].origin.line, 7);
    assert_eq!(c.rules[1].origin.file.as_deref(), Some(user.as_path()));
    assert_eq!(c.nudges.len(), 2);
    assert_eq!(c.nudges[0].commands, ["vim", "nano"]);
    assert_eq!(c.nudges[0].suggest, "Use a here-doc.");
    assert_eq!(c.nudges[1].commands, ["top"]);
    let actions: Vec<_> = c.approvals.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions, ["rm -r build"]);
    assert_eq!(c.approvals[0].commit_point, None);
    assert_eq!(c.approvals[0].expires, None);
    assert_eq!(c.approvals[0].origin.file.as_deref(), Some(user.as_path()));
    let n = c.labels.secret.len();
    let (inc, g) = &c.labels.secret[n - 2];
    assert!(*inc);
    assert!(g.matcher.is_match(w.proj.join("secrets/a/b")));
    let (inc, g) = &c.labels.secret[n - 1];
    assert!(!*inc);
    assert_eq!(g.written, "!secrets/public.txt");
    assert!(g.matcher.is_match(w.proj.join("secrets/public.txt")));
    let tok = &c.labels.named["github_token"];
    assert_eq!(tok.env, ["GITHUB_TOKEN"]);
    assert_eq!(tok.may_flow_to, ["api.github.com"]);
    assert!(
        tok.files[0]
            .matcher
            .is_match(w.home.join(".config/gh/hosts.yml"))
    );
}

#[test]
fn profile_network_and_allow_weaker() {
    let w = World::new();
    w.user("[commands.cargo]\nnetwork = [\"index.crates.io\"]\n[sandbox]\nallow_weaker = true\n");
    w.project("[commands.cargo]\nnetwork = [\"static.crates.io\"]\n");
    let c = w.load();
    assert_eq!(
        c.rule_for_name("cargo").unwrap().network,
        Some(Network::Hosts(vec![
            "index.crates.io".into(),
            "static.crates.io".into()
        ]))
    );
    assert!(c.sandbox.allow_weaker);
}

#[test]
fn trust_record_keeps_other_entries_and_untrusts() {
    let w = World::new();
    let a = w.root.join("a/safesh.toml");
    let b = w.root.join("b/safesh.toml");
    write(&a, "a");
    write(&b, "b");
    let state = w.state();
    let ha = trust::trust_file(&state, &a).unwrap();
    assert_eq!(ha.len(), 64);
    trust::trust_file(&state, &b).unwrap();
    assert!(trust::is_trusted(&state, &a, b"a"));
    assert!(trust::is_trusted(&state, &b, b"b"));
    assert!(!trust::is_trusted(&state, &b, b"b2"));
    let record: serde_json::Value =
        serde_json::from_slice(&fs::read(state.join("trusted.json")).unwrap()).unwrap();
    assert_eq!(record[a.to_string_lossy().as_ref()], ha.as_str());
    assert!(trust::untrust_file(&state, &a).unwrap());
    assert!(!trust::untrust_file(&state, &a).unwrap());
    assert!(!trust::is_trusted(&state, &a, b"a"));
    assert!(trust::is_trusted(&state, &b, b"b"));
    // No leftover temp files.
    let names: Vec<_> = fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["trusted.json"]);
}

#[test]
fn show_renders_provenance() {
    let w = World::new();
    let p = w.project(
        "[commands.git]\nallow = [\"status\"]\n\n[commands.git.log]\ndeny_flags = [\"-p\"]\n",
    );
    write(
        &w.proj.join("sub/safesh.toml"),
        "[commands.sh]\nallow = true\n",
    );
    let mut o = w.opts();
    let c = config::load(&o).unwrap();
    let out = config::render(&c);
    assert!(
        out.contains(&format!("project {} (applied)", p.display())),
        "{out}"
    );
    assert!(out.contains("[commands.git]  # from "), "{out}");
    assert!(out.contains(&format!("# from {}:1", p.display())), "{out}");
    assert!(out.contains("[commands.git.log]"), "{out}");
    assert!(out.contains(&format!("{}:4", p.display())), "{out}");
    assert!(out.contains("# built-in"), "{out}");
    assert!(out.contains("allow = [\"status\"]"), "{out}");

    o.cwd = w.proj.join("sub");
    let c = config::load(&o).unwrap();
    let out = config::render(&c);
    assert!(out.contains("IGNORED: not trusted"), "{out}");
    assert!(out.contains("no [commands.*] rules"), "{out}");
}

#[test]
fn approval_fields() {
    let w = World::new();
    w.project(
        r#"
[[approval]]
action = "rm -r build"
commit_point = "destructive"
expires = 2026-12-31T01:00:00+01:00
[[approval]]
action = "curl -d @x https://example.com"
expires = 1970-01-02
"#,
    );
    let c = w.load();
    assert_eq!(c.approvals.len(), 2);
    let a = &c.approvals[0];
    assert_eq!(a.action, "rm -r build");
    assert_eq!(a.commit_point.as_deref(), Some("destructive"));
    // 2026-12-31T00:00:00Z.
    let secs =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(secs(a.expires.unwrap()), 1_798_675_200);
    assert_eq!(a.origin.line, 2);
    assert_eq!(secs(c.approvals[1].expires.unwrap()), 86_400);
    assert_eq!(c.approvals[1].commit_point, None);
}

#[test]
fn invalid_rules_labels_and_approvals() {
    let w = World::new();
    let rule = |when: &str| {
        format!(
            "[[rule]]\nname = \"r\"\ncommit_point = \"exec\"\nverdict = \"block\"\nwhen = {{ {when} }}\n"
        )
    };
    for (text, line, col, needle) in [
        (
            rule("colour = \"red\""),
            5,
            10,
            "unknown key `colour` in [[rule]] when; expected one of: confidentiality",
        ),
        (
            rule("integrity = \"shady\""),
            5,
            22,
            "`integrity` in [[rule]] when must be one of: untrusted, network",
        ),
        (
            rule("pc = \"dirty\""),
            5,
            15,
            "`pc` in [[rule]] when must be one of: tainted, secret, untrusted",
        ),
        (
            rule("host = \"*.example.com\""),
            5,
            10,
            "`host` in [[rule]] when applies only to commit_point network, not `exec`",
        ),
        (
            rule("target = \"build/**\""),
            5,
            10,
            "`target` in [[rule]] when applies only to commit_point destructive or env",
        ),
        (
            rule("command = \"a[\""),
            5,
            20,
            "bad glob `a[` for `command`",
        ),
        (
            rule("confidentiality = \"no spaces\""),
            5,
            28,
            "must be `secret`, `public` or a label name",
        ),
        (
            "[labels.public]\nenv = []\n".to_string(),
            1,
            9,
            "not `public` or `secret`",
        ),
        (
            "[[approval]]\naction = \"x\"\ncommit_point = \"disk\"\n".to_string(),
            3,
            16,
            "`commit_point` in [[approval]] must be one of: network, exec",
        ),
        (
            "[[approval]]\naction = \"x\"\nexpires = 12:00:00\n".to_string(),
            3,
            11,
            "`expires` in [[approval]] must be a date",
        ),
        (
            "[[approval]]\naction = \"x\"\nwhen = 1\n".to_string(),
            3,
            1,
            "unknown key `when` in [[approval]]; expected one of: action, commit_point, expires",
        ),
        (
            "[[approval]]\naction = \" \"\n".to_string(),
            2,
            10,
            "`action` in [[approval]] must not be empty",
        ),
    ] {
        let p = w.project(&text);
        let (path, l, c, msg) = invalid(config::load(&w.opts()));
        assert_eq!(path, p);
        assert_eq!((l, c), (line, col), "{text}: {msg}");
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn valid_when_conditions_load() {
    let w = World::new();
    w.project(
        r#"
[labels.github_token]
env = ["GITHUB_TOKEN"]
may_flow_to = ["api.github.com"]

[[rule]]
name = "gh"
commit_point = "network"
when = { confidentiality = "github_token", host = "*.github.com", pc = "tainted", integrity = "network", command = "curl *" }
verdict = "allow"

[[rule]]
name = "rm"
commit_point = "destructive"
when = { target = "build/**", integrity = "trusted" }
verdict = "warn"
"#,
    );
    let c = w.load();
    assert_eq!(c.rules[0].when.len(), 5);
    assert_eq!(c.rules[0].when["host"], "*.github.com");
    assert_eq!(c.rules[1].when["target"], "build/**");
}
