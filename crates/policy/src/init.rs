//! `safesh init`: detects which ecosystems a project uses and writes a commented
//! `safesh.toml` that allows their usual tools with safe subcommands and flags, and
//! gives each tool the sandbox profile it needs (cargo reading `~/.cargo`, npm
//! reaching its registry, …).
//!
//! The file written grants nothing until the human trusts it (`safesh trust`): that
//! is the CLI's job, not this module's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The name of a project config file.
pub const FILE_NAME: &str = "safesh.toml";

/// A language or tool a project uses. Languages come with the tool that manages
/// them (`Node` with `Npm`, `Yarn` or `Pnpm`; `Python` with `Pip`, `Uv` or
/// `Poetry`; `Java` with `Maven` or `Gradle`). The order is the order of the
/// sections in the template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ecosystem {
    /// Rust with cargo (`Cargo.toml`).
    Rust,
    /// JavaScript / TypeScript on node (`package.json`).
    Node,
    /// npm (`package-lock.json`, or a `package.json` without any lock file).
    Npm,
    /// Yarn (`yarn.lock`).
    Yarn,
    /// pnpm (`pnpm-lock.yaml`).
    Pnpm,
    /// Go (`go.mod`, `go.work`).
    Go,
    /// Python (`pyproject.toml`, `requirements.txt`, `setup.py`, …).
    Python,
    /// pip (a Python project managed by neither uv nor poetry).
    Pip,
    /// uv (`uv.lock`, or `[tool.uv]` in `pyproject.toml`).
    Uv,
    /// Poetry (`poetry.lock`, or `[tool.poetry]` in `pyproject.toml`).
    Poetry,
    /// Ruby with bundler (`Gemfile`).
    Ruby,
    /// Java on the JVM (`pom.xml`, `build.gradle`).
    Java,
    /// Maven (`pom.xml`).
    Maven,
    /// Gradle (`build.gradle`, `build.gradle.kts`, `settings.gradle`).
    Gradle,
    /// make (`Makefile`).
    Make,
    /// CMake (`CMakeLists.txt`).
    Cmake,
    /// git (`.git`).
    Git,
}

impl Ecosystem {
    /// Every ecosystem, in template order.
    pub const ALL: [Ecosystem; 17] = [
        Ecosystem::Rust,
        Ecosystem::Node,
        Ecosystem::Npm,
        Ecosystem::Yarn,
        Ecosystem::Pnpm,
        Ecosystem::Go,
        Ecosystem::Python,
        Ecosystem::Pip,
        Ecosystem::Uv,
        Ecosystem::Poetry,
        Ecosystem::Ruby,
        Ecosystem::Java,
        Ecosystem::Maven,
        Ecosystem::Gradle,
        Ecosystem::Make,
        Ecosystem::Cmake,
        Ecosystem::Git,
    ];

    /// Its name for humans (`Rust`, `npm`, `CMake`).
    pub fn name(self) -> &'static str {
        match self {
            Ecosystem::Rust => "Rust",
            Ecosystem::Node => "Node",
            Ecosystem::Npm => "npm",
            Ecosystem::Yarn => "Yarn",
            Ecosystem::Pnpm => "pnpm",
            Ecosystem::Go => "Go",
            Ecosystem::Python => "Python",
            Ecosystem::Pip => "pip",
            Ecosystem::Uv => "uv",
            Ecosystem::Poetry => "Poetry",
            Ecosystem::Ruby => "Ruby",
            Ecosystem::Java => "Java",
            Ecosystem::Maven => "Maven",
            Ecosystem::Gradle => "Gradle",
            Ecosystem::Make => "make",
            Ecosystem::Cmake => "CMake",
            Ecosystem::Git => "git",
        }
    }

    /// The command rules this ecosystem contributes.
    fn rules(self) -> &'static [Rule] {
        match self {
            Ecosystem::Rust => RUST,
            Ecosystem::Node => NODE,
            Ecosystem::Npm => NPM,
            Ecosystem::Yarn => YARN,
            Ecosystem::Pnpm => PNPM,
            Ecosystem::Go => GO,
            Ecosystem::Python => PYTHON,
            Ecosystem::Pip => PIP,
            Ecosystem::Uv => UV,
            Ecosystem::Poetry => POETRY,
            Ecosystem::Ruby => RUBY,
            Ecosystem::Java => JAVA,
            Ecosystem::Maven => MAVEN,
            Ecosystem::Gradle => GRADLE,
            Ecosystem::Make => MAKE,
            Ecosystem::Cmake => CMAKE,
            Ecosystem::Git => GIT,
        }
    }

    /// Environment variables its tools read that are safe to pass on.
    fn env(self) -> &'static [&'static str] {
        match self {
            Ecosystem::Rust => &["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"],
            Ecosystem::Node => &["NODE_ENV"],
            Ecosystem::Go => &["GOPATH", "GOCACHE", "GOMODCACHE"],
            Ecosystem::Python => &["VIRTUAL_ENV"],
            Ecosystem::Ruby => &["GEM_HOME", "BUNDLE_PATH"],
            Ecosystem::Java => &["JAVA_HOME"],
            _ => &[],
        }
    }
}

impl std::fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why `safesh init` could not write the file.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A `safesh.toml` is already there and `force` was not given.
    #[error("{path} already exists (use --force to overwrite it)")]
    Exists {
        /// The existing file.
        path: PathBuf,
    },
    /// Reading the project or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Which ecosystems the project in `dir` uses, judged by marker files in `dir`
/// itself (not its parents or children). Sorted, without duplicates.
pub fn detect(dir: &Path) -> Vec<Ecosystem> {
    // `symlink_metadata`: a marker that is a symlink still marks the project.
    let has = |name: &str| dir.join(name).symlink_metadata().is_ok();
    let any = |names: &[&str]| names.iter().any(|n| has(n));
    let mut found = Vec::new();

    if has("Cargo.toml") {
        found.push(Ecosystem::Rust);
    }
    if has("package.json") {
        found.push(Ecosystem::Node);
        let before = found.len();
        if has("pnpm-lock.yaml") {
            found.push(Ecosystem::Pnpm);
        }
        if has("yarn.lock") || has(".yarnrc.yml") {
            found.push(Ecosystem::Yarn);
        }
        // npm is the default package manager when no lock file says otherwise.
        if any(&["package-lock.json", "npm-shrinkwrap.json"]) || found.len() == before {
            found.push(Ecosystem::Npm);
        }
    }
    if any(&["go.mod", "go.work"]) {
        found.push(Ecosystem::Go);
    }
    if any(&[
        "pyproject.toml",
        "requirements.txt",
        "setup.py",
        "setup.cfg",
        "Pipfile",
    ]) {
        found.push(Ecosystem::Python);
        // A pyproject that is unreadable just says nothing about its tool.
        let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap_or_default();
        let before = found.len();
        if has("uv.lock") || pyproject.contains("[tool.uv") {
            found.push(Ecosystem::Uv);
        }
        if has("poetry.lock") || pyproject.contains("[tool.poetry") {
            found.push(Ecosystem::Poetry);
        }
        if found.len() == before {
            found.push(Ecosystem::Pip);
        }
    }
    if has("Gemfile") {
        found.push(Ecosystem::Ruby);
    }
    if has("pom.xml") {
        found.extend([Ecosystem::Java, Ecosystem::Maven]);
    }
    if any(&[
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
    ]) {
        found.extend([Ecosystem::Java, Ecosystem::Gradle]);
    }
    if any(&["Makefile", "makefile", "GNUmakefile"]) {
        found.push(Ecosystem::Make);
    }
    if has("CMakeLists.txt") {
        found.push(Ecosystem::Cmake);
    }
    // `.git` is a directory, or a file in a worktree or submodule.
    if has(".git") {
        found.push(Ecosystem::Git);
    }
    found.sort();
    found.dedup();
    found
}

/// Detects the project in `dir` and writes `dir/safesh.toml`. Refuses to replace an
/// existing file unless `force`. Returns the path written.
pub fn write(dir: &Path, force: bool) -> Result<PathBuf, InitError> {
    let path = dir.join(FILE_NAME);
    let text = template(dir, &detect(dir));
    let io = |source| InitError::Io {
        path: path.clone(),
        source,
    };
    if !force {
        // `create_new`: no window between "does it exist" and writing it.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => InitError::Exists { path: path.clone() },
                _ => io(e),
            })?;
        if let Err(e) = std::io::Write::write_all(&mut f, text.as_bytes()) {
            // A half-written file would make the next `safesh init` refuse.
            let _ = std::fs::remove_file(&path);
            return Err(io(e));
        }
        return Ok(path);
    }
    // Overwriting: write beside it and rename over it, so a symlink named
    // safesh.toml is replaced rather than followed, and no half file is left.
    let tmp = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(path)
}

/// A commented `safesh.toml` for a project in `dir` using `ecosystems` (in any
/// order; duplicates are ignored). The same inputs give the same text. `dir` is
/// only looked at for wrapper scripts (`./gradlew`, `./mvnw`) the project ships.
pub fn template(dir: &Path, ecosystems: &[Ecosystem]) -> String {
    let mut eco = ecosystems.to_vec();
    eco.sort();
    eco.dedup();
    let has = |e: Ecosystem| eco.contains(&e);
    let mut out = String::new();

    header(&mut out, dir, &eco);
    sandbox(&mut out, &eco);
    limits(&mut out, eco.iter().any(|e| *e != Ecosystem::Git));
    env(&mut out, &eco);

    out.push_str(COMMANDS_INTRO);
    if eco.is_empty() {
        out.push_str(NO_COMMANDS);
    }
    let mut seen: Vec<&str> = Vec::new();
    for e in &eco {
        let mut rules: Vec<&Rule> = e.rules().iter().collect();
        // Wrapper scripts the project ships are rules only when they are there.
        if *e == Ecosystem::Maven && dir.join("mvnw").is_file() {
            rules.push(&MVNW);
        }
        if *e == Ecosystem::Gradle && dir.join("gradlew").is_file() {
            rules.push(&GRADLEW);
        }
        // The C toolchain rules come once, with whichever ecosystem needs them.
        if *e == Ecosystem::Cmake && !has(Ecosystem::Make) {
            rules.push(&MAKE_FOR_CMAKE);
        }
        for rule in rules {
            if seen.contains(&rule.key) {
                continue;
            }
            seen.push(rule.key);
            render_rule(&mut out, rule);
        }
    }
    out.push_str(NUDGE_EXAMPLE);
    out
}

fn header(out: &mut String, dir: &Path, eco: &[Ecosystem]) {
    let project = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let detected = if eco.is_empty() {
        "nothing (no Cargo.toml, package.json, go.mod, pyproject.toml, Makefile, …)".to_string()
    } else {
        eco.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(
        out,
        "# safesh.toml for {project}, written by `safesh init`."
    );
    let _ = writeln!(out, "# Detected: {detected}.");
    out.push_str(HEADER);
}

const HEADER: &str = r#"#
# This file grants nothing until you trust it: read it, then run `safesh trust`.
# After every edit (yours or anyone's) it is ignored again until you trust it again,
# so a command cannot widen its own permissions by editing it.
#
# Relative paths are relative to this file's directory; `~` is your home.
# Lists merge with the built-in defaults and ~/.config/safesh/config.toml (union),
# and a deny always beats an allow. `safesh config show` prints the merged result
# with where each rule came from; `safesh check -c 'SCRIPT'` shows what a script
# would be allowed to do without running it; `safesh explain CODE` explains a refusal.
"#;

fn sandbox(out: &mut String, eco: &[Ecosystem]) {
    out.push_str(
        r#"
# ---------------------------------------------------------------------------------
# The sandbox every external program runs in. Built-in utilities (ls, cat, grep,
# sed, …) run inside safesh and obey the same read and write roots.
[sandbox]
# What programs may read. safesh adds the system directories programs need to
# start (/usr, /lib, …); the commands below add their own caches.
read = ["."]
# What programs may create, change or delete. safesh.toml, .git/hooks, .git/config
# and shell rc files stay protected even inside these roots.
write = ["."]
# No network by default: each command below that needs it names its own hosts.
# `true` allows everything; a list (["api.github.com"]) allows only those hosts.
network = false
# The trusted PATH: external programs are found here and only here, whatever PATH
# a script sets. Never add a directory commands can write (./node_modules/.bin,
# .venv/bin): a program planted there would shadow the real one. Use a path rule
# ([commands."./node_modules/.bin/*"]) for those instead.
"#,
    );
    let mut path: Vec<&str> = Vec::new();
    if eco.contains(&Ecosystem::Rust) {
        // rustup's proxies (cargo, rustc, rustfmt) live here.
        path.push("~/.cargo/bin");
    }
    if eco.contains(&Ecosystem::Go) {
        path.push("/usr/local/go/bin");
    }
    path.extend(["/usr/local/bin", "/usr/bin", "/bin"]);
    if eco.contains(&Ecosystem::Node) {
        out.push_str("# If node comes from nvm, volta or fnm, add its bin directory here.\n");
    }
    if eco.contains(&Ecosystem::Ruby) {
        out.push_str("# If ruby comes from rbenv or rvm, add its shims directory here.\n");
    }
    list(out, "path", &path);
}

fn limits(out: &mut String, builds: bool) {
    out.push_str(
        r#"
# ---------------------------------------------------------------------------------
# Limits. Unset keys keep the built-in value shown in the comment.
[limits]
"#,
    );
    if builds {
        out.push_str(
            r#"# Builds and test suites take longer than the 30 s default per program.
timeout_ms = 600000          # per external program (built-in: 30000)
script_timeout_ms = 600000   # per script (built-in: 120000)
"#,
        );
    } else {
        out.push_str(
            r#"# timeout_ms = 30000          # per external program
# script_timeout_ms = 120000  # per script
"#,
        );
    }
    out.push_str(
        r#"# max_timeout_ms = 600000     # caps any timeout a request asks for
# output_bytes = 16384        # what a model sees of one result (the rest is spilled to a file)
# memory_mb = 2048            # per external program
# processes = 256             # per external program and everything it starts
# file_size_mb = 1024         # largest file an external program may write
# loop_iterations = 1000000   # interpreter: also call_depth, commands,
#                             # substitution_depth, brace_expansion, string_bytes,
#                             # script_bytes (default 4194304)
"#,
    );
}

fn env(out: &mut String, eco: &[Ecosystem]) {
    out.push_str(
        r#"
# ---------------------------------------------------------------------------------
# The environment external programs receive: only the allowed variables, and
# never a masked one, even if allowed. Left out on purpose: variables that make a
# tool load or start other code (RUSTFLAGS, GOFLAGS, NODE_OPTIONS, PYTHONPATH,
# JAVA_TOOL_OPTIONS, LD_PRELOAD, …).
[env]
"#,
    );
    let mut allow: Vec<&str> = vec!["HOME", "PATH", "LANG", "LC_ALL", "TERM", "USER", "TMPDIR"];
    for e in eco {
        allow.extend(e.env());
    }
    list(out, "allow", &allow);
    list(
        out,
        "mask",
        &["*_KEY", "*_SECRET", "*_TOKEN", "*_PASSWORD", "AWS_*"],
    );
}

const COMMANDS_INTRO: &str = r#"
# ---------------------------------------------------------------------------------
# External programs. Nothing outside safesh's built-in utilities runs unless a rule
# here allows it. A rule is named by a program name (found on the trusted PATH) or
# by a path or glob ("./target/debug/*") for programs the project builds.
#   allow        true, false, or the subcommands allowed (["build", "test"])
#   deny_flags   refused anywhere in the arguments, in every spelling the program
#                accepts (-rf is -r -f, --force=yes is --force)
#   require_flags, arg_patterns   flags that must be there; regexes arguments must match
#   [commands.NAME.SUB]   a subcommand's own rule, refining the command's
# Each rule may also give the program its own sandbox profile, beyond the roots:
#   read, write  extra paths it may read or change
#   exec         programs it may start (compilers, linkers, what it builds)
#   network      hosts it may reach (replaces [sandbox] network for it)
# Interpreters and build tools run whatever code the project gives them: the
# profile, not the subcommand list, is what contains that code.
"#;

const NO_COMMANDS: &str = r#"#
# No project was recognised, so no program is allowed yet. For example:
# [commands.git]
# allow = ["status", "diff", "log", "show"]
# deny_flags = ["-c", "--exec", "--upload-pack", "--receive-pack"]
"#;

const NUDGE_EXAMPLE: &str = r#"
# ---------------------------------------------------------------------------------
# Nudges: refuse a command with advice (NUDGE); `--force` runs it anyway. Built-in
# nudges already cover interactive editors, pagers and top. For example:
# [[nudge]]
# commands = ["curl", "wget"]
# message = "Downloads are not part of this project's workflow."
# suggest = "Add the dependency with the package manager instead."
"#;

/// `allow = …` of a template rule.
enum Allow {
    All,
    Only(&'static [&'static str]),
}

/// A subcommand rule of a template rule.
struct Sub {
    name: &'static str,
    why: &'static str,
    deny_flags: &'static [&'static str],
}

/// One `[commands.KEY]` of the template.
struct Rule {
    key: &'static str,
    about: &'static str,
    allow: Allow,
    deny_why: &'static str,
    deny_flags: &'static [&'static str],
    read: &'static [&'static str],
    write: &'static [&'static str],
    exec: &'static [&'static str],
    network: &'static [&'static str],
    subs: &'static [Sub],
}

/// A rule with nothing but a key and a comment, to fill in with `..`.
const EMPTY: Rule = Rule {
    key: "",
    about: "",
    allow: Allow::All,
    deny_why: "",
    deny_flags: &[],
    read: &[],
    write: &[],
    exec: &[],
    network: &[],
    subs: &[],
};

const RUST: &[Rule] = &[
    Rule {
        key: "cargo",
        about: "cargo builds, tests and runs the project (build scripts and tests included:\n\
                they are contained by the profile below). Left out: install, uninstall,\n\
                publish, login, owner, yank (they change things outside the project).",
        allow: Allow::Only(&[
            "build",
            "check",
            "test",
            "run",
            "bench",
            "clippy",
            "fmt",
            "doc",
            "tree",
            "metadata",
            "fetch",
            "clean",
            "update",
            "add",
            "remove",
            "generate-lockfile",
            "locate-project",
            "version",
        ]),
        deny_why: "--config can set a runner, linker or alias that starts any program.",
        deny_flags: &["--config"],
        read: &["~/.cargo", "~/.rustup"],
        write: &["~/.cargo/registry", "~/.cargo/git", "target"],
        exec: &[
            "~/.cargo/bin/*",
            "~/.rustup/toolchains/**",
            "/usr/bin/cc",
            "/usr/bin/c++",
            "/usr/bin/ld",
            "/usr/lib/gcc/**",
            "/usr/libexec/gcc/**",
            "target/**",
        ],
        network: &["index.crates.io", "static.crates.io"],
        ..EMPTY
    },
    Rule {
        key: "rustc",
        about: "The Rust compiler, run directly (`rustc --version`, a one-file program).",
        read: &["~/.cargo", "~/.rustup"],
        exec: &[
            "~/.rustup/toolchains/**",
            "/usr/bin/cc",
            "/usr/bin/ld",
            "/usr/lib/gcc/**",
            "/usr/libexec/gcc/**",
        ],
        ..EMPTY
    },
    Rule {
        key: "rustup",
        about: "Only questions: which toolchain is active. Installing toolchains and\n\
                components is left to you.",
        allow: Allow::Only(&["show", "which"]),
        read: &["~/.cargo", "~/.rustup"],
        ..EMPTY
    },
    Rule {
        key: "./target/debug/*",
        about: "Programs the project builds (cargo run, or running them directly).",
        ..EMPTY
    },
    Rule {
        key: "./target/release/*",
        about: "",
        ..EMPTY
    },
];

/// What a node package manager may start: node itself, package scripts (run by
/// /bin/sh inside this sandbox) and the tools the project installs.
const NODE_EXEC: &[&str] = &[
    "/usr/bin/node",
    "/usr/local/bin/node",
    "/bin/sh",
    "node_modules/.bin/*",
];

const NODE: &[Rule] = &[
    Rule {
        key: "node",
        about: "node runs the project's JavaScript (and any script it is given).",
        ..EMPTY
    },
    Rule {
        key: "./node_modules/.bin/*",
        about: "The project's own tools (tsc, eslint, jest, vite, …), installed by its\n\
                package manager. npx is left out: it downloads and runs any package.",
        ..EMPTY
    },
];

const NPM: &[Rule] = &[Rule {
    key: "npm",
    about: "npm installs dependencies and runs package.json scripts. Install scripts\n\
            and `npm run` run through /bin/sh inside this profile.",
    allow: Allow::Only(&[
        "install",
        "ci",
        "test",
        "run",
        "run-script",
        "start",
        "ls",
        "list",
        "outdated",
        "view",
        "audit",
        "explain",
        "why",
        "pack",
    ]),
    deny_why: "-g installs outside the project; --script-shell picks the program that\n\
               runs package scripts.",
    deny_flags: &["-g", "--global", "--location", "--script-shell"],
    read: &["~/.npm", "~/.npmrc"],
    write: &["~/.npm", "node_modules"],
    exec: NODE_EXEC,
    network: &["registry.npmjs.org"],
    ..EMPTY
}];

const YARN: &[Rule] = &[Rule {
    key: "yarn",
    about: "Yarn installs dependencies and runs package.json scripts (through /bin/sh,\n\
            inside this profile). `yarn global` and `yarn dlx` are left out.",
    allow: Allow::Only(&[
        "install", "add", "remove", "run", "test", "build", "list", "info", "why", "outdated",
    ]),
    read: &["~/.yarnrc", "~/.yarnrc.yml", "~/.yarn", "~/.cache/yarn"],
    write: &["~/.yarn/berry", "~/.cache/yarn", "node_modules", ".yarn"],
    exec: NODE_EXEC,
    network: &[
        "registry.yarnpkg.com",
        "repo.yarnpkg.com",
        "registry.npmjs.org",
    ],
    ..EMPTY
}];

const PNPM: &[Rule] = &[Rule {
    key: "pnpm",
    about: "pnpm installs dependencies and runs package.json scripts (through /bin/sh,\n\
            inside this profile). `pnpm dlx` is left out.",
    allow: Allow::Only(&[
        "install", "add", "remove", "run", "test", "list", "ls", "why", "outdated",
    ]),
    deny_why: "-g installs outside the project.",
    deny_flags: &["-g", "--global"],
    read: &["~/.npmrc", "~/.local/share/pnpm", "~/.cache/pnpm"],
    write: &["~/.local/share/pnpm", "~/.cache/pnpm", "node_modules"],
    exec: NODE_EXEC,
    network: &["registry.npmjs.org"],
    ..EMPTY
}];

const GO: &[Rule] = &[
    Rule {
        key: "go",
        about: "go builds, tests and runs the project. Left out: generate (it runs any\n\
                command written in a source comment) and install (it writes ~/go/bin).\n\
                go test and go run start what they build from a temporary directory.",
        allow: Allow::Only(&[
            "build", "test", "run", "vet", "fmt", "mod", "get", "list", "env", "version", "doc",
            "clean", "work",
        ]),
        deny_why: "-toolexec and -exec name a program go starts for every build step or\n\
                   test binary.",
        deny_flags: &["-toolexec", "--toolexec", "-exec", "--exec"],
        read: &[
            "~/go",
            "~/.cache/go-build",
            "~/.config/go",
            "/usr/local/go",
            "/usr/lib/go",
        ],
        write: &["~/go/pkg/mod", "~/.cache/go-build"],
        exec: &[
            "/usr/local/go/**",
            "/usr/lib/go/**",
            "/tmp/go-build*/**",
            "/usr/bin/cc",
            "/usr/bin/ld",
            "/usr/lib/gcc/**",
            "/usr/libexec/gcc/**",
        ],
        network: &["proxy.golang.org", "sum.golang.org"],
        subs: &[Sub {
            name: "env",
            why: "`go env -w` writes Go's own config, changing every later build.",
            deny_flags: &["-w", "-u"],
        }],
    },
    Rule {
        key: "gofmt",
        about: "Formats Go source (gofmt -w rewrites files inside the write roots).",
        ..EMPTY
    },
];

const PY_NET: &[&str] = &["pypi.org", "files.pythonhosted.org"];

const PYTHON: &[Rule] = &[
    Rule {
        key: "python3",
        about: "The interpreter runs the project's Python (and any script it is given).\n\
                Run tests with `python3 -m pytest`, or through the venv rule below.",
        ..EMPTY
    },
    Rule {
        key: "python",
        about: "",
        ..EMPTY
    },
    Rule {
        key: "./.venv/bin/*",
        about: "The project's virtualenv: its python and the tools installed in it\n\
                (pytest, ruff, mypy, …). Not on the trusted PATH on purpose.",
        ..EMPTY
    },
];

const PIP: &[Rule] = &[
    Rule {
        key: "pip",
        about: "pip installs into the active environment (use a .venv).",
        allow: Allow::Only(&["install", "uninstall", "list", "show", "freeze", "check"]),
        deny_why: "--user, --target, --prefix, --root and --break-system-packages install\n\
                   outside the project; the index flags fetch from elsewhere than PyPI.",
        deny_flags: &[
            "--user",
            "--target",
            "-t",
            "--prefix",
            "--root",
            "--break-system-packages",
            "--index-url",
            "-i",
            "--extra-index-url",
        ],
        read: &["~/.cache/pip", "~/.config/pip"],
        write: &["~/.cache/pip", ".venv"],
        network: PY_NET,
        ..EMPTY
    },
    Rule {
        key: "pip3",
        about: "The same as pip.",
        allow: Allow::Only(&["install", "uninstall", "list", "show", "freeze", "check"]),
        deny_flags: &[
            "--user",
            "--target",
            "-t",
            "--prefix",
            "--root",
            "--break-system-packages",
            "--index-url",
            "-i",
            "--extra-index-url",
        ],
        read: &["~/.cache/pip", "~/.config/pip"],
        write: &["~/.cache/pip", ".venv"],
        network: PY_NET,
        ..EMPTY
    },
];

const UV: &[Rule] = &[Rule {
    key: "uv",
    about: "uv manages the project's environment and runs its tools. Left out: tool\n\
            (installs programs for your whole account) and python (downloads interpreters).",
    allow: Allow::Only(&[
        "sync", "run", "lock", "add", "remove", "tree", "venv", "pip", "export",
    ]),
    deny_why: "--system and --break-system-packages install outside the project; the\n\
               index flags fetch from elsewhere than PyPI.",
    deny_flags: &[
        "--system",
        "--break-system-packages",
        "--index",
        "--index-url",
        "--default-index",
        "--extra-index-url",
    ],
    read: &["~/.cache/uv", "~/.local/share/uv", "~/.config/uv"],
    write: &["~/.cache/uv", ".venv"],
    exec: &[
        ".venv/bin/*",
        "~/.local/share/uv/python/**",
        "/usr/bin/python3*",
        "/usr/local/bin/python3*",
    ],
    network: PY_NET,
    ..EMPTY
}];

const POETRY: &[Rule] = &[Rule {
    key: "poetry",
    about: "Poetry manages the project's environment and runs its tools.",
    allow: Allow::Only(&[
        "install", "sync", "run", "lock", "add", "remove", "show", "check", "build",
    ]),
    read: &[
        "~/.cache/pypoetry",
        "~/.config/pypoetry",
        "~/.local/share/pypoetry",
    ],
    write: &["~/.cache/pypoetry", ".venv"],
    exec: &[
        ".venv/bin/*",
        "~/.cache/pypoetry/virtualenvs/**",
        "/usr/bin/python3*",
        "/usr/local/bin/python3*",
    ],
    network: PY_NET,
    ..EMPTY
}];

const RUBY: &[Rule] = &[
    Rule {
        key: "ruby",
        about: "The interpreter runs the project's Ruby (and any script it is given).",
        ..EMPTY
    },
    Rule {
        key: "bundle",
        about: "Bundler installs the project's gems. `bundle exec` is left out: it runs\n\
                any program by name, around this policy.",
        allow: Allow::Only(&[
            "install", "check", "list", "show", "outdated", "update", "lock", "add", "remove",
        ]),
        read: &["~/.bundle", "~/.gem", "~/.local/share/gem"],
        write: &["~/.bundle", "~/.gem", "~/.local/share/gem", "vendor/bundle"],
        // Native extensions are compiled on install.
        exec: &[
            "/usr/bin/ruby*",
            "/usr/local/bin/ruby*",
            "/usr/bin/make",
            "/bin/sh",
            "/usr/bin/cc",
            "/usr/bin/c++",
            "/usr/bin/ld",
            "/usr/lib/gcc/**",
            "/usr/libexec/gcc/**",
        ],
        network: &["rubygems.org", "index.rubygems.org"],
        ..EMPTY
    },
    Rule {
        key: "rake",
        about: "Runs the Rakefile's tasks (Ruby code, contained by the sandbox).",
        ..EMPTY
    },
];

const JAVA: &[Rule] = &[
    Rule {
        key: "java",
        about: "The JVM and the compiler.",
        ..EMPTY
    },
    Rule {
        key: "javac",
        about: "",
        ..EMPTY
    },
];

const MAVEN_PHASES: &[&str] = &[
    "clean",
    "validate",
    "compile",
    "test",
    "package",
    "verify",
    "install",
    "dependency:tree",
    "dependency:resolve",
];
const MAVEN_NET: &[&str] = &["repo.maven.apache.org", "repo1.maven.org"];

const MAVEN: &[Rule] = &[Rule {
    key: "mvn",
    about: "Maven lifecycle phases (`deploy` and the exec plugin are left out).",
    allow: Allow::Only(MAVEN_PHASES),
    deny_why: "A settings file can point Maven at other repositories and proxies.",
    deny_flags: &["-s", "--settings", "-gs", "--global-settings"],
    read: &["~/.m2"],
    write: &["~/.m2/repository", "target"],
    exec: &["/usr/lib/jvm/**"],
    network: MAVEN_NET,
    ..EMPTY
}];

const MVNW: Rule = Rule {
    key: "./mvnw",
    about: "The project's Maven wrapper: the same as mvn.",
    allow: Allow::Only(MAVEN_PHASES),
    deny_flags: &["-s", "--settings", "-gs", "--global-settings"],
    read: &["~/.m2"],
    write: &["~/.m2", "target"],
    exec: &["/usr/lib/jvm/**", "/bin/sh"],
    network: MAVEN_NET,
    ..EMPTY
};

const GRADLE_TASKS: &[&str] = &[
    "build",
    "assemble",
    "check",
    "test",
    "clean",
    "dependencies",
    "tasks",
    "projects",
];
const GRADLE_NET: &[&str] = &[
    "services.gradle.org",
    "downloads.gradle.org",
    "plugins.gradle.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
];

const GRADLE: &[Rule] = &[Rule {
    key: "gradle",
    about: "Gradle tasks (`publish` and custom tasks are left out: list yours).",
    allow: Allow::Only(GRADLE_TASKS),
    deny_why: "An init script runs before the build, from outside the project.",
    deny_flags: &["-I", "--init-script"],
    read: &["~/.gradle"],
    write: &["~/.gradle", ".gradle", "build"],
    exec: &["/usr/lib/jvm/**", "~/.gradle/**"],
    network: GRADLE_NET,
    ..EMPTY
}];

const GRADLEW: Rule = Rule {
    key: "./gradlew",
    about: "The project's Gradle wrapper: the same as gradle.",
    allow: Allow::Only(GRADLE_TASKS),
    deny_flags: &["-I", "--init-script"],
    read: &["~/.gradle"],
    write: &["~/.gradle", ".gradle", "build"],
    exec: &["/usr/lib/jvm/**", "~/.gradle/**", "/bin/sh"],
    network: GRADLE_NET,
    ..EMPTY
};

const MAKE_EXEC: &[&str] = &[
    "/bin/sh",
    "/usr/bin/make",
    "/usr/bin/cc",
    "/usr/bin/c++",
    "/usr/bin/ld",
    "/usr/lib/gcc/**",
    "/usr/libexec/gcc/**",
];

const MAKE: &[Rule] = &[Rule {
    key: "make",
    about: "make runs each recipe line with /bin/sh, inside this profile: add to exec\n\
            the programs your recipes run, or list the targets you allow instead of\n\
            true (allow = [\"build\", \"test\"]).",
    deny_why: "--eval runs makefile text given on the command line.",
    deny_flags: &["--eval", "-E"],
    exec: MAKE_EXEC,
    ..EMPTY
}];

/// make as CMake's default generator uses it, when the project has no Makefile.
const MAKE_FOR_CMAKE: Rule = Rule {
    key: "make",
    about: "make, as CMake's default generator runs it (cmake --build).",
    deny_why: "--eval runs makefile text given on the command line.",
    deny_flags: &["--eval", "-E"],
    exec: MAKE_EXEC,
    ..EMPTY
};

const CMAKE: &[Rule] = &[
    Rule {
        key: "cmake",
        about: "CMake configures and builds the project (cmake -S . -B build; cmake --build build).",
        deny_why: "-P runs a CMake script, which can start any program.",
        deny_flags: &["-P"],
        exec: &[
            "/bin/sh",
            "/usr/bin/make",
            "/usr/bin/ninja",
            "/usr/bin/cc",
            "/usr/bin/c++",
            "/usr/bin/ld",
            "/usr/lib/gcc/**",
            "/usr/libexec/gcc/**",
            "build/**",
        ],
        ..EMPTY
    },
    Rule {
        key: "ctest",
        about: "Runs the tests CMake built.",
        exec: &["/bin/sh", "build/**"],
        ..EMPTY
    },
    Rule {
        key: "./build/*",
        about: "Programs the project builds into build/.",
        ..EMPTY
    },
];

const GIT: &[Rule] = &[Rule {
    key: "git",
    about: "Local git work. Left out: fetch, pull, push and clone (add them with\n\
            network = [\"github.com\"]), config, reset, clean and rebase. checkout,\n\
            switch, restore and stash can discard uncommitted changes: remove them if\n\
            that is too much. safesh also refuses, whatever this says, git config keys\n\
            that run commands (core.pager, core.hooksPath, alias.*, …).",
    allow: Allow::Only(&[
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
    ]),
    deny_why: "-c sets config (a pager or hook that runs any program) for one command;\n\
               --exec, --upload-pack and --receive-pack name programs git starts.",
    deny_flags: &["-c", "--exec", "--upload-pack", "--receive-pack"],
    read: &["~/.gitconfig", "~/.config/git"],
    exec: &["/usr/lib/git-core/**", "/usr/libexec/git-core/**"],
    subs: &[Sub {
        name: "branch",
        why: "Deleting an unmerged branch or moving one by force loses commits.",
        deny_flags: &["-D", "-f", "--force"],
    }],
    ..EMPTY
}];

fn render_rule(out: &mut String, r: &Rule) {
    out.push('\n');
    comment(out, r.about);
    let _ = writeln!(out, "[commands.{}]", key(r.key));
    match r.allow {
        Allow::All => out.push_str("allow = true\n"),
        Allow::Only(subs) => list(out, "allow", subs),
    }
    if !r.deny_flags.is_empty() {
        comment(out, r.deny_why);
        list(out, "deny_flags", r.deny_flags);
    }
    for (name, items) in [
        ("read", r.read),
        ("write", r.write),
        ("exec", r.exec),
        ("network", r.network),
    ] {
        if !items.is_empty() {
            list(out, name, items);
        }
    }
    for s in r.subs {
        out.push('\n');
        comment(out, s.why);
        let _ = writeln!(out, "[commands.{}.{}]", key(r.key), key(s.name));
        list(out, "deny_flags", s.deny_flags);
    }
}

/// Writes `text` as `#` comment lines (nothing for an empty text).
fn comment(out: &mut String, text: &str) {
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let _ = writeln!(out, "# {}", line.trim());
    }
}

/// Writes `name = ["a", "b"]`, filling lines of at most 88 columns when it does
/// not fit on one.
fn list(out: &mut String, name: &str, items: &[&str]) {
    const WIDTH: usize = 88;
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    let one_line = format!("{name} = [{}]", quoted.join(", "));
    if one_line.len() <= WIDTH {
        out.push_str(&one_line);
        out.push('\n');
        return;
    }
    let _ = write!(out, "{name} = [");
    let mut line = String::new();
    for q in quoted {
        if !line.is_empty() && 4 + line.len() + 1 + q.len() + 1 > WIDTH {
            let _ = write!(out, "\n    {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&q);
        line.push(',');
    }
    let _ = write!(out, "\n    {line}\n]\n");
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04X}", u32::from(c));
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A TOML key: bare when it can be, quoted otherwise (`"./target/debug/*"`).
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_string() } else { quote(k) }
}
