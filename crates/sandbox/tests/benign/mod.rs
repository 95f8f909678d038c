//! What must keep working inside the sandbox.
use std::time::{Duration, Instant};

use safesh_sandbox::{Output, Stdin};

use crate::common::*;

#[test]
fn python_prints() {
    let w = World::new();
    let r = go(w.py("print(1)"));
    r.started();
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.out.ends_with("1\n"), "{r:?}");
}

#[test]
fn exit_status_and_stderr() {
    let w = World::new();
    let r = go(w.py("sys.stderr.write('oops\\n'); sys.exit(3)"));
    assert_eq!(r.outcome.status, Some(3), "{r:?}");
    assert_eq!(r.err, "oops\n");
}

#[test]
fn reads_a_read_root() {
    let w = World::new();
    let data = w.base.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("f.txt"), "readable").unwrap();
    let mut s = w.py(&format!(
        "print(read({:?}).decode(), os.listdir({data:?}))\nattempt('write', lambda: write({:?}))",
        data.join("f.txt"),
        data.join("g")
    ));
    s.read.push(data.clone());
    let r = denied(s);
    assert!(r.out.contains("readable ['f.txt']"), "{r:?}");
    assert!(!exists(&data.join("g")));
}

#[test]
fn writes_write_root_and_tmp() {
    let w = World::new();
    let r = go(w.py(
        "import tempfile\nwrite('out.txt', b'w')\nos.makedirs('a/b')\nos.rename('out.txt', 'a/b/moved.txt')\n\
         write('/tmp/t1', b't')\nf = tempfile.NamedTemporaryFile(delete=False); f.write(b'x'); f.close()\n\
         print('TMPDIR', os.environ['TMPDIR'], f.name.startswith(os.environ['TMPDIR']), flush=True)",
    ));
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(exists(&w.root.join("a/b/moved.txt")));
    assert!(exists(&w.tmp.join("t1")));
    assert!(r.out.contains("True"), "{r:?}");
}

#[test]
fn git_version_and_status() {
    let w = World::new();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&w.root)
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::write(w.root.join("file.txt"), "x").unwrap();
    let r = go(w.spec("/usr/bin/git", &["--version"]));
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.out.starts_with("git version"), "{r:?}");
    let mut s = w.spec("/usr/bin/git", &["status", "--porcelain"]);
    s.env.push(("GIT_CONFIG_NOSYSTEM".into(), "1".into()));
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.out.contains("?? file.txt"), "{r:?}");
}

#[test]
fn shebang_script_runs_with_its_interpreter() {
    let w = World::new();
    let script = w.base.path().join("tool.py");
    std::fs::write(&script, "#!/usr/bin/env python3\nprint('from script')\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = w.spec(script.to_str().unwrap(), &[]);
    s.read.push(script.clone());
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert_eq!(r.out, "from script\n");
}

#[test]
fn stdin_bytes_and_reader() {
    let w = World::new();
    let mut s = w.spec("/bin/cat", &[]);
    s.stdin = Stdin::Bytes(b"hello stdin".to_vec());
    let r = go(s);
    assert_eq!(r.out, "hello stdin", "{r:?}");
    let mut s = w.spec("/bin/cat", &[]);
    s.stdin = Stdin::Reader(Box::new(std::io::Cursor::new(vec![b'z'; 300_000])));
    let r = go(s);
    assert_eq!(r.out.len(), 300_000);
    let r = go(w.spec("/bin/cat", &[]));
    assert_eq!(r.out, "", "stdin is /dev/null by default");
    assert_eq!(r.outcome.status, Some(0));
}

#[test]
fn large_output_is_streamed_in_chunks() {
    struct Count(usize, usize);
    impl Output for Count {
        fn stdout(&mut self, d: &[u8]) -> std::io::Result<()> {
            self.0 += d.len();
            self.1 = self.1.max(d.len());
            Ok(())
        }
        fn stderr(&mut self, _: &[u8]) -> std::io::Result<()> {
            Ok(())
        }
    }
    let w = World::new();
    let mut c = Count(0, 0);
    let o = safesh_sandbox::run(
        w.spec("/bin/head", &["-c", "20000000", "/dev/zero"]),
        &mut c,
        &|| false,
    )
    .unwrap();
    assert_eq!(o.status, Some(0));
    assert_eq!(c.0, 20_000_000);
    assert!(c.1 <= 64 * 1024);
}

#[test]
fn broken_sink_kills_the_tree() {
    struct Broken;
    impl Output for Broken {
        fn stdout(&mut self, _: &[u8]) -> std::io::Result<()> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn stderr(&mut self, _: &[u8]) -> std::io::Result<()> {
            Ok(())
        }
    }
    let w = World::new();
    let t = Instant::now();
    let o = safesh_sandbox::run(w.spec("/usr/bin/yes", &[]), &mut Broken, &|| false).unwrap();
    assert!(o.output_closed);
    assert_eq!(o.signal, Some(libc_sigkill()));
    assert!(t.elapsed() < Duration::from_secs(5));
}

fn libc_sigkill() -> i32 {
    9
}

#[test]
fn cancellation_kills_the_tree() {
    let w = World::new();
    let t = Instant::now();
    let mut c = Collect::default();
    let o = safesh_sandbox::run(w.spec("/bin/sleep", &["30"]), &mut c, &|| {
        t.elapsed() > Duration::from_millis(300)
    })
    .unwrap();
    assert!(o.cancelled);
    assert!(t.elapsed() < Duration::from_secs(3));
}

#[test]
fn timeout_reports_and_keeps_partial_output() {
    let w = World::new();
    let mut s = w.py("print('partial', flush=True)\ntime.sleep(30)");
    s.limits.timeout = Duration::from_millis(500);
    s.limits.kill_grace = Duration::from_millis(200);
    let r = go(s);
    assert!(r.outcome.timed_out, "{r:?}");
    assert!(r.out.contains("partial"));
    assert_eq!(r.outcome.signal, Some(15), "SIGTERM ends python: {r:?}");
}

#[test]
fn term_ignored_then_killed() {
    let w = World::new();
    let mut s =
        w.py("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(30)");
    s.limits.timeout = Duration::from_millis(400);
    s.limits.kill_grace = Duration::from_millis(200);
    let t = Instant::now();
    let r = go(s);
    assert!(r.outcome.timed_out);
    assert_eq!(r.outcome.signal, Some(9), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(3));
}

#[test]
fn missing_program_is_a_spawn_error() {
    let w = World::new();
    match try_go(w.spec("/usr/bin/does-not-exist", &[])) {
        Err(safesh_sandbox::SandboxError::Spawn(m)) => assert!(m.contains("exec"), "{m}"),
        other => panic!("{:?}", other.map(|r| r.outcome)),
    }
}

#[test]
fn probe_reports_this_host() {
    let c = safesh_sandbox::probe();
    println!("{c:#?}");
    assert!(c.landlock.available && c.landlock_abi >= 1);
    assert!(c.seccomp.available);
    assert!(c.pid_ns.available && c.mount_ns.available && c.net_ns.available);
}

#[test]
fn only_stdio_fds_are_open() {
    let w = World::new();
    let r =
        go(w.py("print('FDS', sorted(int(f) for f in os.listdir('/proc/self/fd')), flush=True)"));
    // 0, 1, 2 and the fd listdir itself uses.
    assert!(r.out.contains("FDS [0, 1, 2, 3]"), "{r:?}");
}

#[test]
fn concurrent_runs() {
    let w = std::sync::Arc::new(World::new());
    let handles: Vec<_> = (0..6)
        .map(|i| {
            let w = w.clone();
            std::thread::spawn(move || {
                let mut s = w.py(&format!(
                    "sys.stdout.write(sys.stdin.read().upper()); write('f{i}', b'{i}')"
                ));
                s.stdin = Stdin::Reader(Box::new(std::io::Cursor::new(
                    format!("run {i}").into_bytes(),
                )));
                let r = go(s);
                assert_eq!(r.outcome.status, Some(0), "{r:?}");
                assert!(r.out.ends_with(&format!("RUN {i}")), "{r:?}");
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for i in 0..6 {
        assert!(exists(&w.root.join(format!("f{i}"))));
    }
}

#[test]
fn concurrent_placeholders_are_cleaned_up() {
    let w = std::sync::Arc::new(World::new());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let w = w.clone();
            std::thread::spawn(move || {
                let mut s =
                    w.py("time.sleep(0.2)\nattempt('toml', lambda: write('safesh.toml', b'evil'))");
                s.protect = vec![w.root.join("safesh.toml")];
                denied(s);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert!(
        !exists(&w.root.join("safesh.toml")),
        "placeholder left behind"
    );
}

#[test]
fn weaker_sandbox_is_never_silent() {
    // Landlock is available here: allow_weaker changes nothing and adds no warning.
    let w = World::new();
    let mut s = w.py("print(1)");
    s.allow_weaker = true;
    let r = go(s);
    assert!(r.outcome.warnings.is_empty(), "{r:?}");
}

#[test]
fn limits_on_a_benign_program_do_not_get_in_the_way() {
    let w = World::new();
    let mut s = w.py("import subprocess\nprint('ok', flush=True)");
    s.limits.memory_bytes = Some(256 << 20);
    s.limits.processes = Some(64);
    s.limits.file_size_bytes = Some(64 << 20);
    s.limits.cpu_seconds = Some(10);
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.outcome.limits_hit.is_empty(), "{r:?}");
    assert!(r.outcome.warnings.is_empty(), "{r:?}");
}

/// cargo through its rustup proxy, with the profile DESIGN.md sketches for it: read
/// ~/.cargo and ~/.rustup, exec the toolchains, the C compiler driver with its helpers
/// and the linker, and the project's target dir.
fn cargo_spec(w: &World, args: &[&str]) -> Option<safesh_sandbox::Spec> {
    let home = std::env::var("HOME").ok()?;
    let home = std::path::PathBuf::from(home);
    let cargo = home.join(".cargo/bin/cargo");
    if !cargo.exists() {
        return None;
    }
    let mut s = w.spec(cargo.to_str()?, args);
    s.argv[0] = "cargo".into();
    s.env.retain(|(k, _)| k != "HOME" && k != "PATH");
    s.env.push(("HOME".into(), home.display().to_string()));
    s.env.push((
        "PATH".into(),
        format!("{}:/usr/bin:/bin", home.join(".cargo/bin").display()),
    ));
    s.env.push(("CARGO_TERM_COLOR".into(), "never".into()));
    s.read = vec![home.join(".cargo"), home.join(".rustup")];
    // cargo also reads the `.cargo/config.toml` of every directory above the
    // project (this suite's projects live under the repository's target dir).
    s.read.extend(
        w.root
            .ancestors()
            .map(|a| a.join(".cargo"))
            .filter(|c| c.is_dir() && *c != home.join(".cargo")),
    );
    s.write.push(home.join(".cargo/registry"));
    s.exec = vec![
        home.join(".rustup/toolchains"),
        "/usr/bin/cc".into(),
        "/usr/bin/gcc".into(),
        "/usr/bin/ld".into(),
        "/usr/lib/gcc".into(),
        "/usr/libexec/gcc".into(),
        w.root.join("target"),
    ];
    s.limits.timeout = Duration::from_secs(60);
    Some(s)
}

#[test]
fn cargo_version_and_build_with_its_profile() {
    let w = World::new();
    let Some(s) = cargo_spec(&w, &["--version"]) else {
        eprintln!("no cargo here; skipped");
        return;
    };
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.out.starts_with("cargo "), "{r:?}");

    std::fs::create_dir_all(w.root.join("src")).unwrap();
    std::fs::write(
        w.root.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        w.root.join("src/main.rs"),
        "fn main() { println!(\"tiny ran\"); }\n",
    )
    .unwrap();
    let mut s = cargo_spec(&w, &["run", "--offline", "-q"]).unwrap();
    s.limits.memory_bytes = Some(1 << 30);
    s.limits.processes = Some(256);
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(r.out.contains("tiny ran"), "{r:?}");
}

/// As an unprivileged user (a user namespace maps it to uid 0 inside): re-runs
/// `non_root_inner` under `setpriv` as nobody when this suite runs as root.
#[test]
fn works_without_root() {
    // SAFETY-free check of who we are: /proc/self/status.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let root = status
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root || !std::path::Path::new("/usr/bin/setpriv").exists() {
        eprintln!("not root or no setpriv; skipped");
        return;
    }
    let out = std::process::Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "benign::non_root_inner",
            "--ignored",
            "--nocapture",
        ])
        .env("SBX_BASE", "/tmp")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
#[ignore = "run by works_without_root as an unprivileged user"]
fn non_root_inner() {
    let w = World::new();
    let mut s = w.py(&format!(
        "print('UID', os.getuid(), flush=True)\nwrite('out', b'x')\n\
         attempt('sibling', lambda: read({:?}))\n\
         attempt('shell', lambda: os.execv('/bin/sh', ['sh']))",
        w.sibling.join("secret.txt")
    ));
    s.limits.processes = Some(16);
    s.limits.memory_bytes = Some(128 << 20);
    let r = denied(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    assert!(exists(&w.root.join("out")));
    assert!(
        !r.outcome.warnings.is_empty(),
        "fallbacks are reported: {r:?}"
    );
    eprintln!("{r:?}");
}

#[test]
fn network_on_reaches_the_host() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let w = World::new();
    let mut s = w.py(&format!("socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'hi')\nprint('SENT', flush=True)"));
    s.network = safesh_sandbox::Network::On;
    let r = go(s);
    assert_eq!(r.outcome.status, Some(0), "{r:?}");
    let (mut c, _) = l.accept().unwrap();
    let mut buf = [0u8; 2];
    std::io::Read::read_exact(&mut c, &mut buf).unwrap();
    assert_eq!(&buf, b"hi");
}
