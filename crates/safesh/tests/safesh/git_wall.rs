//! Issue 15, items 2 and 3: attacks on the human through git and through shell
//! start-up files, and the dynamic loader as a way around the exec allowlist.
//!
//! Each attack is tried both ways a script can write — in-process (refused with
//! `PATH_VIOLATION` before anything is written) and through an allowed external
//! program (`python3`, inside the sandbox: the file is reverted after the run
//! and the result's `warnings` say so) — and then proven harmless the way the
//! human would meet it: a real `git status` / `git config` run by the test
//! itself afterwards, with a fake `core.fsmonitor` program that leaves a marker
//! file when git runs it. A positive control plants the same files by hand and
//! shows the marker does appear, so the check can see an attack.

use crate::policy_support::{Project, Run, collect};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// git, python3 and a loader-copying python3 (its `bin/` may hold programs it runs).
const CONFIG: &str = r#"[sandbox]
read = ["."]
write = ["."]
network = false

[commands.git]
allow = true

[commands.python3]
allow = true
exec = ["bin"]
"#;

/// The dynamic loader of this host (x86-64 glibc).
const LOADER: &str = "/lib64/ld-linux-x86-64.so.2";

fn project() -> Project {
    let p = Project::with_config(CONFIG);
    // The fake fsmonitor: git runs it as a hook program; it leaves a marker.
    let mon = p.outside.join("fsmonitor");
    std::fs::write(
        &mon,
        format!(
            "#!/bin/sh\ntouch '{}'\n",
            p.outside.join("MARKER").display()
        ),
    )
    .expect("fsmonitor");
    std::fs::set_permissions(&mon, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    p
}

fn monitor(p: &Project) -> String {
    p.outside.join("fsmonitor").display().to_string()
}

fn marker(p: &Project) -> PathBuf {
    p.outside.join("MARKER")
}

/// git as the human runs it, later, outside safesh.
fn human_git(p: &Project, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &p.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "h")
        .env("GIT_AUTHOR_EMAIL", "h@example.com")
        .env("GIT_COMMITTER_NAME", "h")
        .env("GIT_COMMITTER_EMAIL", "h@example.com")
        .stdin(Stdio::null())
        .output()
        .expect("run git")
}

/// The human's repository in the project, with one commit.
fn human_repo(p: &Project) {
    for args in [
        &["init", "-q"][..],
        &["add", "notes.txt"],
        &["commit", "-qm", "start"],
    ] {
        let o = human_git(p, &p.dir, args);
        assert!(o.status.success(), "git {args:?}: {o:?}");
    }
}

/// A python3 program written by the human (the test), run by the agent.
fn python(p: &Project, name: &str, code: &str) -> String {
    p.write(name, code);
    format!("python3 {name}")
}

fn warnings(v: &serde_json::Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn assert_warned(v: &serde_json::Value, r: &Run, what: &[&str]) {
    let w = warnings(v);
    for name in what {
        // The file, or the new directory holding it (`removed .config/git`).
        let named = |l: &String| {
            Path::new(name)
                .ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .any(|a| l.contains(&format!(" {} ", a.display())))
        };
        assert!(
            w.iter().any(named),
            "no warning about {name}: {w:?}\n{}",
            r.dump()
        );
    }
}

fn assert_gone(p: &Project, rels: &[&str], r: &Run) {
    for rel in rels {
        assert!(
            p.path(rel).symlink_metadata().is_err(),
            "{rel} is still there:\n{}",
            r.dump()
        );
    }
}

fn plant_commondir_py(p: &Project) -> String {
    let evil = p.path("evil");
    python(
        p,
        "plant_commondir.py",
        &format!(
            "import os\n\
             os.makedirs('evil/objects', exist_ok=True)\n\
             os.makedirs('evil/refs', exist_ok=True)\n\
             open('evil/config', 'w').write('[core]\\n\\tfsmonitor = {mon}\\n')\n\
             open('.git/commondir', 'w').write('{evil}\\n')\n",
            mon = monitor(p),
            evil = evil.display()
        ),
    )
}

#[test]
fn planted_commondir_makes_the_humans_git_status_run_nothing() {
    // Positive control: planted by hand, the human's `git status` runs it.
    let control = project();
    human_repo(&control);
    plant_commondir_py(&control);
    let o = Command::new("python3")
        .arg("plant_commondir.py")
        .current_dir(&control.dir)
        .output()
        .expect("python3");
    assert!(o.status.success(), "{o:?}");
    let _ = human_git(&control, &control.dir, &["status", "--short"]);
    assert!(
        marker(&control).exists(),
        "the control plant did not make git run the fsmonitor: the test cannot see the attack"
    );

    let p = project();
    human_repo(&p);
    // In-process: refused before anything is written.
    let evil = p.path("evil").display().to_string();
    let r = p.run(&format!("echo {evil} > .git/commondir"));
    r.assert_refused("PATH_VIOLATION");
    assert!(r.stderr.contains(".git/commondir"), "{}", r.dump());
    p.assert_absent(".git/commondir", &r);

    // Through python3 in the sandbox: reverted after the run, and said.
    let (r, v) = p.run_json(&plant_commondir_py(&p));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert_warned(&v, &r, &[".git/commondir"]);
    assert_gone(&p, &[".git/commondir"], &r);
    let o = human_git(&p, &p.dir, &["status", "--short"]);
    assert!(o.status.success(), "git status: {o:?}");
    assert!(
        !marker(&p).exists(),
        "the human's git status ran the planted fsmonitor"
    );
}

#[test]
fn benign_python3_writes_ordinary_files_and_git_status_stays_clean() {
    let p = project();
    human_repo(&p);
    let (r, v) = p.run_json(&python(
        &p,
        "ordinary.py",
        "import os\n\
         os.makedirs('evil/objects', exist_ok=True)\n\
         open('out.txt', 'w').write('ok\\n')\n\
         os.makedirs('config', exist_ok=True)\n\
         open('config/app.toml', 'w').write('x = 1\\n')\n\
         open('.gitattributes', 'w').write('*.txt text\\n')\n\
         open('.git/description', 'w').write('mine\\n')\n",
    ));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert!(warnings(&v).is_empty(), "{}", r.dump());
    for f in [
        "out.txt",
        "config/app.toml",
        ".gitattributes",
        "evil/objects",
    ] {
        p.assert_present(f, &r);
    }
    let o = human_git(&p, &p.dir, &["status", "--short"]);
    assert!(o.status.success(), "git status: {o:?}");
    assert!(!marker(&p).exists());
}

#[test]
fn planted_bare_repository_config_is_not_read_by_git() {
    let plant = |p: &Project| {
        python(
            p,
            "plant_bare.py",
            &format!(
                "import os\n\
                 os.makedirs('evil/objects', exist_ok=True)\n\
                 os.makedirs('evil/refs', exist_ok=True)\n\
                 open('evil/HEAD', 'w').write('ref: refs/heads/main\\n')\n\
                 open('evil/config', 'w').write('[core]\\n\\tfsmonitor = {}\\n\\tbare = false\\n')\n",
                monitor(p)
            ),
        )
    };
    // Positive control: the human's git, in `evil`, takes it for a repository
    // and reads the planted key.
    let control = project();
    plant(&control);
    let o = Command::new("python3")
        .arg("plant_bare.py")
        .current_dir(&control.dir)
        .output()
        .expect("python3");
    assert!(o.status.success(), "{o:?}");
    let o = human_git(
        &control,
        &control.path("evil"),
        &["config", "core.fsmonitor"],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        monitor(&control),
        "control: git did not read the planted config"
    );

    let p = project();
    let (r, v) = p.run_json(&plant(&p));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert_warned(&v, &r, &["evil/config"]);
    assert_gone(&p, &["evil/config"], &r);
    let o = human_git(&p, &p.path("evil"), &["config", "core.fsmonitor"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("fsmonitor"),
        "git still reads the planted key: {o:?}"
    );

    // In-process, in either order: the config in a repository, or the HEAD
    // that would make a directory holding a config one.
    let r = p.run("mkdir -p e1/objects e1/refs && echo 'ref: refs/heads/main' > e1/HEAD && echo '[core]' > e1/config");
    r.assert_refused("PATH_VIOLATION");
    p.assert_absent("e1/config", &r);
    let r = p.run("mkdir -p e2/objects e2/refs && echo '[core]' > e2/config && echo 'ref: refs/heads/main' > e2/HEAD");
    r.assert_refused("PATH_VIOLATION");
    p.assert_absent("e2/HEAD", &r);
    // Control: an ordinary `config` file in an ordinary directory.
    p.run("mkdir -p settings && echo 'a = 1' > settings/config && cat settings/config")
        .assert_ok_with("a = 1\n");
}

/// Everything else git reads as configuration or runs.
const GIT_PLANTS: &[&str] = &[
    ".git/modules/sub/hooks/post-checkout",
    ".git/modules/sub/config",
    ".git/config.worktree",
    ".git/objects/info/alternates",
    ".git/info/attributes",
    ".git/worktrees/w/gitdir",
    ".git/worktrees/w/commondir",
    ".git/rebase-merge/git-rebase-todo",
    "sub/.git",
    ".gitmodules",
];

#[test]
fn modules_hooks_worktrees_and_alternates_cannot_be_planted() {
    let p = project();
    human_repo(&p);
    // In-process: each refused.
    for rel in GIT_PLANTS {
        let dir = Path::new(rel)
            .parent()
            .map(|d| d.display().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".into());
        let r = p.run(&format!("mkdir -p {dir} && echo x > {rel}"));
        r.assert_refused("PATH_VIOLATION");
        p.assert_absent(rel, &r);
    }
    // A filter driver line in .gitattributes.
    let r = p.run("echo '*.c filter=evil' > .gitattributes");
    r.assert_refused("PATH_VIOLATION");

    // Through python3: what exists is read-only (`.git/info`, `.git/objects/info`
    // after `git init`); what it creates is reverted and said.
    let mut code = format!(
        "import os\n\
         def w(rel, text):\n\
         \x20   try:\n\
         \x20       os.makedirs(os.path.dirname(rel) or '.', exist_ok=True)\n\
         \x20       open(rel, 'w').write(text)\n\
         \x20       os.chmod(rel, 0o755)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', rel)\n\
         hook = '#!/bin/sh\\ntouch {}\\n'\n",
        marker(&p).display()
    );
    for rel in GIT_PLANTS {
        code.push_str(&format!("w('{rel}', hook)\n"));
    }
    code.push_str("w('.gitattributes', '*.c filter=evil\\n')\n");
    let (r, v) = p.run_json(&python(&p, "plant_git.py", &code));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    let refused: Vec<&str> = GIT_PLANTS
        .iter()
        .copied()
        .filter(|rel| r.stdout.contains(&format!("refused {rel}")))
        .collect();
    assert_eq!(
        refused,
        [".git/objects/info/alternates", ".git/info/attributes"],
        "{}",
        r.dump()
    );
    let created: Vec<&str> = GIT_PLANTS
        .iter()
        .copied()
        .filter(|rel| !refused.contains(rel))
        .collect();
    assert_warned(&v, &r, &created);
    assert_warned(&v, &r, &[".gitattributes"]);
    assert_gone(&p, &created, &r);
    assert_gone(&p, &[".gitattributes"], &r);
    assert!(!p.path(".git/info/attributes").exists());
    let o = human_git(&p, &p.dir, &["status", "--short"]);
    assert!(o.status.success(), "git status: {o:?}");
    assert!(!marker(&p).exists(), "a planted file ran");
}

/// Shell start-up files anywhere in the project.
const RC_PLANTS: &[&str] = &[".bashrc", ".envrc", "sub/.envrc", "sub/.profile"];

#[test]
fn python3_cannot_plant_shell_startup_files() {
    let p = project();
    p.write(".zshrc", "# the human's\n");
    let mut code = String::from("import os\nos.makedirs('sub', exist_ok=True)\n");
    for rel in RC_PLANTS {
        code.push_str(&format!("open('{rel}', 'w').write('touch pwned\\n')\n"));
    }
    code.push_str(
        "try:\n    open('.zshrc', 'a').write('touch pwned\\n')\nexcept OSError:\n    pass\n\
         open('out.txt', 'w').write('ok\\n')\n",
    );
    let (r, v) = p.run_json(&python(&p, "plant_rc.py", &code));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert_warned(&v, &r, RC_PLANTS);
    assert_gone(&p, RC_PLANTS, &r);
    assert_eq!(
        std::fs::read_to_string(p.path(".zshrc")).ok().as_deref(),
        Some("# the human's\n"),
        "{}",
        r.dump()
    );
    // Control: the ordinary file it wrote stays.
    assert_eq!(
        std::fs::read_to_string(p.path("out.txt")).ok().as_deref(),
        Some("ok\n")
    );
    // The same names in-process: the same list.
    for rel in RC_PLANTS {
        let r = p.run(&format!("mkdir -p sub && echo x > {rel}"));
        r.assert_refused("PATH_VIOLATION");
    }
}

/// User configuration under `$HOME`, with the project at `$HOME`.
const HOME_PLANTS: &[&str] = &[
    ".bash_aliases",
    ".bash_login",
    ".bash_logout",
    ".zprofile",
    ".zlogin",
    ".inputrc",
    ".xprofile",
    ".config/git/config",
    ".config/fish/config.fish",
    ".config/autostart/x.desktop",
];

/// `safesh --json -c SCRIPT` with `HOME` the project itself.
fn run_at_home(p: &Project, script: &str) -> (Run, serde_json::Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_safesh"));
    cmd.arg("--config")
        .arg(&p.config)
        .args(["--json", "-c", script])
        .current_dir(&p.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", &p.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let r = collect(cmd, script.to_string());
    let v = r.json();
    (r, v)
}

#[test]
fn with_the_project_at_home_python3_cannot_plant_user_configuration() {
    let p = project();
    // A home has a `.config` (without one, safesh's own `.config/safesh` is kept
    // from being created by a placeholder for `.config`).
    std::fs::create_dir(p.path(".config")).expect("mkdir .config");
    let mut code = String::from("import os\n");
    for rel in HOME_PLANTS.iter().chain(&[".config/myapp/settings.json"]) {
        code.push_str(&format!(
            "os.makedirs(os.path.dirname('{rel}') or '.', exist_ok=True)\n\
             open('{rel}', 'w').write('x\\n')\n"
        ));
    }
    let (r, v) = run_at_home(&p, &python(&p, "plant_home.py", &code));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert_warned(&v, &r, HOME_PLANTS);
    assert_gone(&p, HOME_PLANTS, &r);
    // Control: an application's own settings stay.
    p.assert_present(".config/myapp/settings.json", &r);
    // In-process, the same list.
    for rel in HOME_PLANTS {
        let dir = Path::new(rel)
            .parent()
            .map(|d| d.display().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".into());
        let (r, v) = run_at_home(&p, &format!("mkdir -p {dir}; echo x > {rel}"));
        assert_eq!(v["error"]["code"], "PATH_VIOLATION", "{rel}: {}", r.dump());
    }
}

#[test]
fn the_dynamic_loader_runs_no_program() {
    if !Path::new(LOADER).exists() {
        return; // another architecture
    }
    let p = project();
    // In-process: the loader is not a program, whatever the config says.
    let r = p.run(&format!("{LOADER} /usr/bin/id"));
    r.assert_refused("BLOCKED");
    assert!(!r.stdout.contains("uid="), "{}", r.dump());
    let allowing = Project::with_config(&format!(
        "{CONFIG}\n[commands.\"ld-linux-x86-64.so.2\"]\nallow = true\n"
    ));
    let r = allowing.run(&format!("{LOADER} /usr/bin/perl -e 'print qq(perl-ran)'"));
    r.assert_refused("BLOCKED");
    assert!(!r.stdout.contains("perl-ran"), "{}", r.dump());

    // Inside the sandbox: an allowed python3 exec'ing the loader on perl / id.
    for (target, extra, seen) in [
        ("/usr/bin/perl", ", '-e', 'print qq(perl-ran)'", "perl-ran"),
        ("/usr/bin/id", "", "uid="),
    ] {
        let r = p.run(&python(
            &p,
            "via_loader.py",
            &format!("import os\nos.execv('{LOADER}', ['ld.so', '{target}'{extra}])\n"),
        ));
        r.assert_refused("BLOCKED");
        assert!(!r.stdout.contains(seen), "{}", r.dump());
    }
    // A copy of the loader under another name, in a directory python3 may
    // execute from.
    let r = p.run(&python(
        &p,
        "copy_loader.py",
        &format!(
            "import os, shutil\nos.makedirs('bin', exist_ok=True)\n\
             shutil.copy('{LOADER}', 'bin/tool')\nos.chmod('bin/tool', 0o755)\n\
             os.execv('bin/tool', ['tool', '/usr/bin/id'])\n"
        ),
    ));
    r.assert_refused("BLOCKED");
    assert!(!r.stdout.contains("uid="), "{}", r.dump());

    // Control: python3 exec'ing an allowed program (itself) works.
    p.run(&python(
        &p,
        "reexec.py",
        "import os, sys\n\
         if len(sys.argv) > 1:\n    print('py-ran')\n\
         else:\n    os.execv(sys.executable, [sys.executable, sys.argv[0], 'again'])\n",
    ))
    .assert_ok_with("py-ran\n");
}

#[test]
fn benign_git_workflow_works_and_reads_of_another_repository_are_not_writes() {
    let p = project();
    let id = "-c user.name=a -c user.email=a@example.com";
    let r = p.run(&format!(
        "git init -q w && cd w && echo a > a.txt && git add a.txt && git {id} commit -qm one \
         && git branch feature && git checkout -q feature && echo b >> a.txt \
         && git {id} commit -qam two && git log --oneline | wc -l"
    ));
    r.assert_ok_with("2\n");
    // What git init wrote is git's own.
    for f in [
        "w/.git/config",
        "w/.git/hooks",
        "w/.git/HEAD",
        "w/.git/info/exclude",
    ] {
        p.assert_present(f, &r);
    }
    // A read of another repository by --git-dir.
    let other = p.path("w/.git").display().to_string();
    let r = p.run(&format!("git --git-dir={other} log --oneline | wc -l"));
    r.assert_ok_with("2\n");
    let o = human_git(&p, &p.path("w"), &["status", "--short"]);
    assert!(o.status.success(), "git status: {o:?}");
    assert!(!marker(&p).exists());
}

#[test]
fn git_checking_out_a_crafted_envrc_has_it_removed() {
    // git may write its own files, but a start-up file git checks out from a
    // commit the agent crafted (plumbing, no in-process write of `.envrc`) is
    // still a start-up file.
    let p = project();
    let id = "-c user.name=a -c user.email=a@example.com";
    let (r, v) = p.run_json(&format!(
        "git init -q -b main w && cd w && echo a > a.txt && git add a.txt && git {id} commit -qm one \
         && blob=$(printf 'touch pwned\\n' | git hash-object -w --stdin) \
         && git update-index --add --cacheinfo \"100644,$blob,.envrc\" \
         && git {id} commit -qm two && git branch -q old HEAD~1 && git switch -q old \
         && git switch -q - && echo done"
    ));
    assert_eq!(v["exit_code"], 0, "{}", r.dump());
    assert_warned(&v, &r, &["w/.envrc"]);
    assert_gone(&p, &["w/.envrc"], &r);
    // Control: the ordinary file git checked out and its repository stay.
    for f in ["w/a.txt", "w/.git/config", "w/.git/HEAD"] {
        p.assert_present(f, &r);
    }
}
