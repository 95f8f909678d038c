//! Issue 15: no crash or hang from a short input. Each input once aborted or hung
//! the process (and with it `safesh rpc`/`safesh mcp`); now it fails with a clear
//! error, bash's answer where bash has one, and the server answers the next
//! request. Run: `cargo test -p safesh --test safesh hardening`.

use crate::faces::{Home, RpcProc};
use serde_json::json;

/// Runs `script` with `safesh -c` and returns (status, stdout, stderr).
fn run(home: &Home, args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = home.command(&[]).args(args).output().expect("safesh runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run_c(home: &Home, script: &str) -> (i32, String, String) {
    run(home, &["-c".as_ref(), script.as_ref()])
}

#[test]
fn huge_widths_are_refused_with_a_clear_error_and_the_server_goes_on() {
    let home = Home::new();
    let mut rpc = RpcProc::start(&home);
    let inputs = [
        (
            "printf '%999999999999d\\n' 1",
            "field width is over the limit",
        ),
        (
            "printf '%-999999999999s\\n' x",
            "field width is over the limit",
        ),
        (
            "printf '%.999999999999f\\n' 1",
            "precision is over the limit",
        ),
        (
            "printf '%*d' 999999999999 1",
            "field width is over the limit",
        ),
        ("nl -w 999999999999 /dev/null", "over the limit"),
        ("date +%999999999999Y", "over the limit"),
    ];
    for (id, (script, want)) in (1u64..).zip(inputs) {
        let r = rpc.call(id, "execute", json!({"script": script}));
        let out = r["result"]["output"].as_str().unwrap_or_default();
        assert!(out.contains(want), "{script}: {r}");
        assert_ne!(r["result"]["exit_code"], 0, "{script}: {r}");
        // The server is alive and answers the next request.
        let r = rpc.call(id + 100, "execute", json!({"script": "echo alive"}));
        assert_eq!(r["result"]["output"], "alive\n", "after {script}: {r}");
    }
    // Widths within the limit still work.
    let (status, out, _) = run_c(
        &home,
        "printf '%5d|%.3f|%-3s|\\n' 42 3.14159 a; date -d @0 -u +%6Y",
    );
    assert_eq!(status, 0);
    assert_eq!(out, "   42|3.142|a  |\n001970\n");
}

#[test]
fn a_brace_range_at_the_end_of_i64_stops_like_bash() {
    let home = Home::new();
    let (status, out, err) = run_c(&home, "echo {9223372036854775806..9223372036854775807}");
    assert_eq!(
        (status, out.as_str()),
        (0, "9223372036854775806 9223372036854775807\n"),
        "{err}"
    );
    let (status, out, _) = run_c(
        &home,
        "echo {9223372036854775807..9223372036854775806} {-9223372036854775806..-9223372036854775807} x",
    );
    assert_eq!(status, 0);
    assert_eq!(
        out,
        "9223372036854775807 9223372036854775806 -9223372036854775806 -9223372036854775807 x\n"
    );
    // Past the brace limit: a limit refusal, not a hang.
    let (status, _, err) = run_c(&home, "echo {-9223372036854775807..9223372036854775807}");
    assert_eq!(status, 125, "{err}");
    assert!(err.contains("LIMIT_EXCEEDED"), "{err}");
}

#[test]
fn nested_subscripts_evaluate_in_linear_time_like_bash() {
    let home = Home::new();
    let mut deep = "1".to_string();
    for _ in 0..40 {
        deep = format!("a[{deep}]");
    }
    for script in [
        format!("echo $(({deep}))"),
        format!("if false; then echo $(({deep})); fi; echo ok"),
        format!("x='{deep}'; echo $((x))"),
        "a=(5 6 7); i=1; echo $((a[a[i-1]-4])) $((a[1]+a[a[0]-5]))".to_string(),
        "a=(1 2 3); ((a[a[0]]+=5)); echo ${a[@]}".to_string(),
        "a=(3 -1 2); echo $((a[1+a[2]-1] * 2))".to_string(),
    ] {
        let want = std::process::Command::new("bash")
            .args(["-c", &script])
            .output()
            .unwrap();
        let (status, out, err) = run_c(&home, &script);
        assert_eq!(
            out,
            String::from_utf8_lossy(&want.stdout),
            "{script}: {err}"
        );
        assert_eq!(Some(status), want.status.code(), "{script}: {err}");
    }
}

#[test]
fn bytes_that_are_not_utf8_in_arguments_and_environment_do_not_panic() {
    use std::os::unix::ffi::OsStrExt;
    let home = Home::new();
    let script = std::ffi::OsStr::from_bytes(b"echo \xff; echo after");
    let (status, out, err) = run(&home, &["-c".as_ref(), script]);
    assert_eq!(status, 0, "{err}");
    assert!(out.ends_with("after\n"), "{out}");
    assert!(!err.contains("panicked"), "{err}");
    // Issue 15 item 7: the bytes are data, losslessly (no U+FFFD): in the
    // script, in a positional argument, in the environment.
    let out = home
        .command(&[])
        .args(["-c".as_ref(), script])
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"\xff\nafter\n");
    let out = home
        .command(&[])
        .args([
            "-c".as_ref(),
            std::ffi::OsStr::new("printf '[%s]' \"$1\" \"${#1}\""),
            "_".as_ref(),
            std::ffi::OsStr::from_bytes(b"a\xfe"),
        ])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"[a\xfe][2]");
    // A variable in safesh's own environment.
    let out = home
        .command(&["-c", "echo \"[$FOO]\"; echo ok"])
        .env("FOO", std::ffi::OsStr::from_bytes(b"a\xffb"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"[a\xffb]\nok\n");
}

#[test]
fn rough_edges_help_version_ls_dotdot_which() {
    let home = Home::new();
    for flag in ["--help", "--version"] {
        let out = home.command(&[flag]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}");
        assert!(!out.stdout.is_empty(), "{flag}: printed on stdout");
    }
    // `..` of the project root is listed, not a PATH_VIOLATION.
    std::fs::write(home.proj().join("f.txt"), "x").unwrap();
    let (status, out, err) = run_c(&home, "ls -a; ls -la | wc -l");
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with(".\n..\nf.txt\n"), "{out}");
    // `which` looks along PATH; entries outside the roots are skipped, the
    // trusted PATH ([sandbox] path) is searched.
    let out = home
        .command(&["-c", "which cat; which no-such-program-x; echo rc=$?"])
        .env("PATH", "/nonexistent/bin:/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text,
        "/usr/bin/cat\nrc=1\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn in_process_work_stopped_by_the_timeout_reports_timeout() {
    let home = Home::new();
    for script in [
        "yes | wc -l",
        "cat /dev/zero > /dev/null",
        "awk 'BEGIN { while (1) {} }'",
        "seq 1 100000000000 | sort -n | tail -1",
    ] {
        let (status, _, err) = run(
            &home,
            &[
                "--timeout-ms".as_ref(),
                "500".as_ref(),
                "-c".as_ref(),
                script.as_ref(),
            ],
        );
        assert_eq!(status, 124, "{script}: {err}");
        assert!(err.contains("safesh: TIMEOUT:"), "{script}: {err}");
        let mut rpc = RpcProc::start(&home);
        let r = rpc.call(1, "execute", json!({"script": script, "timeout_ms": 500}));
        assert_eq!(r["result"]["exit_code"], 124, "{script}: {r}");
        assert_eq!(r["result"]["error"]["code"], "TIMEOUT", "{script}: {r}");
    }
}

#[test]
fn type_says_an_in_process_utility_runs_in_process() {
    let home = Home::new();
    let (status, out, err) = run_c(&home, "type grep; type -t grep; type cd");
    assert_eq!(status, 0, "{err}");
    let mut lines = out.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("grep is a safesh utility (runs in-process"),
        "{out}"
    );
    // `type -t` stays bash's answer for scripts that test for a program.
    assert_eq!(lines.next(), Some("file"), "{out}");
    assert_eq!(lines.next(), Some("cd is a shell builtin"), "{out}");
}

#[test]
fn variables_a_program_does_not_get_are_named_in_warnings() {
    let a = crate::flow_support::Arena::new().env("GITHUB_TOKEN", "ghp_test123");
    let (r, v) = a.run_json(
        r#"export MYVAR=1; API_TOKEN=x python3 -c 'import os; print(os.environ.get("MYVAR"))'"#,
    );
    assert_eq!(v["stdout"], "None\n", "{}", r.dump());
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(String::from))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w == "MYVAR was not passed to python3: [env] allow does not list it"),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("API_TOKEN was not passed to python3: it is masked")),
        "{warnings:?}"
    );
    // Inherited variables the config filters on purpose are not repeated.
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains("GITHUB_TOKEN") || w.contains("HOME")),
        "{warnings:?}"
    );
    // Benign: a program given only allowed variables gets no warning.
    let (_, v) = a.run_json("python3 -c 'print(1)'");
    assert_eq!(v["warnings"], serde_json::json!([]));
}

#[test]
fn check_refuses_a_host_off_the_network_list_and_places_nested_commands() {
    let a = crate::flow_support::Arena::new();
    let script = "echo a\nx=$(curl -s http://evil.example/x)\ncurl -s {URL}/ok\nwget -q http://evil.example/\ny=1 z=$(echo hi)\n";
    let r = a.run_args(&["check", "-c", &a.script(script)]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("line   2  refuse    curl")),
        "{}",
        r.dump()
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("line   3  allow     curl")),
        "{}",
        r.dump()
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("line   4  refuse    wget")),
        "{}",
        r.dump()
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("line   5  allow     echo hi")),
        "{}",
        r.dump()
    );
    assert_eq!(r.status, 1, "{}", r.dump());
    // When run, the refusal is decided before anything starts: no stage of the
    // pipeline runs, nothing connects.
    let r = a.run("touch before; curl -s http://evil.example/ | tee got.txt");
    assert_eq!(r.status, 126, "{}", r.dump());
    assert!(
        r.stderr.contains("evil.example is not on the network list"),
        "{}",
        r.dump()
    );
    assert!(!a.exists("before") && !a.exists("got.txt"), "{}", r.dump());
    // Benign: the allowed host, and a URL known only at run time.
    a.run("curl -s {URL}/ok").assert_ok_with("ok");
    a.run("u={URL}/ok; curl -s \"$u\"").assert_ok_with("ok");
}

#[test]
fn the_tmpdir_suggestion_is_for_new_scratch_files_only() {
    let home = Home::new();
    let existing = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let path = existing.path().display().to_string();
    let (status, _, err) = run_c(&home, &format!("cat {path}"));
    assert_eq!(status, 126, "{err}");
    assert!(err.contains("[sandbox] read"), "{err}");
    let (status, _, err) = run_c(&home, "echo x > /tmp/safesh-new-scratch-file-xyz");
    assert_eq!(status, 126, "{err}");
    assert!(err.contains("instead of /tmp"), "{err}");
    assert!(!std::path::Path::new("/tmp/safesh-new-scratch-file-xyz").exists());
}

#[test]
fn naming_the_config_to_a_program_is_a_read_and_it_stays_read_only() {
    let a = crate::flow_support::Arena::with_extra("[commands.git]\nallow = true");
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(&a.dir)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "safesh.toml"]);
    git(&["commit", "-qm", "config"]);
    let before = std::fs::read(&a.config).unwrap();
    let r = a.run("git diff --stat safesh.toml; git log --format=%s -- safesh.toml");
    r.assert_ok_with("config\n");
    // The attack neighbour: a program told to write it cannot.
    let r = a.run(r#"python3 -c 'import sys; open(sys.argv[1], "a").write("x")' safesh.toml"#);
    assert_ne!(r.status, 0, "{}", r.dump());
    assert_eq!(std::fs::read(&a.config).unwrap(), before, "{}", r.dump());
    // A protected path a program would create is still refused by name.
    let r = a.run("git diff --output=.git/hooks/pre-commit");
    assert_eq!(r.status, 126, "{}", r.dump());
    assert!(!a.dir.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_symlinked_home_holding_the_project_runs_programs() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    let link = tmp.path().join("home");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    std::fs::write(
        link.join("safesh.toml"),
        "[sandbox]\nread = [\".\"]\nwrite = [\".\", \"~/.cache\"]\n[commands.python3]\nallow = true\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_safesh"))
        .args(["--config", "safesh.toml", "-c"])
        .arg("python3 -c 'print(6*7)'; ls ~/ | grep -c safesh.toml")
        .current_dir(&link)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &link)
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n1\n", "{err}");
    assert!(!err.contains("mount step"), "{err}");
}

#[test]
fn a_program_may_start_the_allowed_programs_without_argument_rules() {
    let a = crate::flow_support::Arena::with_extra(
        "[commands.make]\nallow = true\n\n[commands.git]\nallow = true\ndeny_flags = [\"--exec-path\"]",
    );
    a.write("Makefile", "all:\n\tpython3 -V\n");
    let r = a.run("make -s");
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(r.stdout.starts_with("Python 3"), "{}", r.dump());
    // An argv-restricted program is started only through safesh (its rule is
    // checked there), and a program the config does not allow not at all.
    let spawn = |prog: &str| {
        format!(
            "python3 -c 'import subprocess,sys\ntry:\n subprocess.run([\"{prog}\",\"--version\"],capture_output=True); print(\"ran\")\nexcept PermissionError: print(\"denied\")'"
        )
    };
    a.run(&spawn("git")).assert_ok_with("denied\n");
    a.run(&spawn("perl")).assert_ok_with("denied\n");
}

#[test]
fn a_user_config_commands_could_write_grants_nothing() {
    // Item 0c: with XDG_CONFIG_HOME inside the project (a write root), a script
    // writes `…/safesh/config.toml` granting `write = ["/outside"]`; the next run
    // must not apply it.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (proj, outside, state) = (root.join("proj"), root.join("outside"), root.join("state"));
    for d in [&proj, &outside, &state] {
        std::fs::create_dir(d).unwrap();
    }
    let xdg = proj.join("xdg");
    let run = |script: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_safesh"))
            .args(["-c", script])
            .current_dir(&proj)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &root)
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CONFIG_HOME", &xdg)
            .output()
            .unwrap()
    };
    let plant = format!(
        "mkdir -p xdg/safesh && printf '[sandbox]\\nwrite = [\"{}\"]\\n' > xdg/safesh/config.toml",
        outside.display()
    );
    let out = run(&plant);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&format!("echo pwned > {}/x.txt", outside.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{err}");
    assert!(
        !outside.join("x.txt").exists(),
        "the planted user config applied: {err}"
    );
    assert!(err.contains("inside the write root"), "{err}");
    // Benign: the same user config outside every write root applies.
    let xdg2 = root.join("xdg2");
    std::fs::create_dir_all(xdg2.join("safesh")).unwrap();
    std::fs::write(
        xdg2.join("safesh/config.toml"),
        format!("[sandbox]\nwrite = [\"{}\"]\n", outside.display()),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_safesh"))
        .args(["-c", &format!("echo ok > {}/y.txt", outside.display())])
        .current_dir(&proj)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &root)
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", &xdg2)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(outside.join("y.txt").exists());
}

/// brush-parser panics on a descriptor number past `i32`; the binary catches
/// the unwind (its unwinder is linked in statically: build.rs) and answers a
/// parse error, as a server must — never an abort.
#[test]
fn a_parser_panic_is_caught_in_the_shipped_binary() {
    let home = Home::new();
    let (code, _, err) = run_c(&home, "echo 99999999999999999999999>f");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("PARSE_ERROR"), "{err}");
    assert!(err.contains("could not handle"), "{err}");
    // A server answers it as a parse error and goes on.
    let mut rpc = RpcProc::start(&home);
    let r = rpc.call(
        1,
        "execute",
        json!({"script": "echo 99999999999999999999999>f"}),
    );
    assert!(r.to_string().contains("could not handle"), "{r}");
    let r = rpc.call(2, "execute", json!({"script": "echo alive"}));
    assert_eq!(r["result"]["output"], "alive\n", "{r}");
}

/// A dynamically linked binary forwards the math functions to libm.so.6,
/// opened on first use (`src/lazy_libm.rs`): a start that computes nothing does
/// not load it (the dynamic loader's own trace says which libraries it opens).
/// A statically linked one (x86_64 glibc, .cargo/config.toml) has libm inside
/// and loads nothing. Either way math gives glibc's results bit for bit, as awk
/// and jq on this machine print them.
#[test]
fn the_math_library_is_loaded_only_when_math_is_used() {
    let home = Home::new();
    let traced = |script: &str| {
        let out = home
            .command(&[])
            .env("LD_DEBUG", "libs")
            .args(["-c", script])
            .output()
            .expect("safesh runs");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dynamic = has_interpreter(std::path::Path::new(env!("CARGO_BIN_EXE_safesh")));
    let (_, trace) = traced("true");
    if dynamic {
        assert!(
            trace.contains("libc.so.6"),
            "LD_DEBUG traced nothing: {trace}"
        );
        assert!(!trace.contains("libm.so"), "libm loaded at start: {trace}");
    } else {
        assert!(!trace.contains(".so"), "a static binary loaded: {trace}");
    }

    let awk = "BEGIN { print sin(1), cos(2), exp(3), log(7), atan2(1, 3), 2 ^ 0.5; printf \"%.17g %.17g\\n\", exp(1), sin(1e22) }";
    let jq = "[1|sin, (2|cos), (0.5|asin), (3|log2), (1e-10|log1p), pow(2; 0.5), (8|cbrt), (3|frexp), (2.5|modf)]";
    let (out, trace) = traced(&format!("awk '{awk}'; jq -nc '{jq}'"));
    if dynamic {
        assert!(
            trace.contains("libm.so.6"),
            "math ran without libm: {trace}"
        );
    } else {
        assert!(!trace.contains(".so"), "a static binary loaded: {trace}");
    }
    let oracle = |program: &str, args: &[&str]| {
        let out = std::process::Command::new(program)
            .args(args)
            .output()
            .expect("the oracle runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let want = oracle("awk", &[awk]) + &oracle("jq", &["-nc", jq]);
    assert_eq!(out, want);
}

/// True when the ELF executable at `path` names a program interpreter
/// (`PT_INTERP`: it is linked dynamically).
fn has_interpreter(path: &std::path::Path) -> bool {
    let elf = std::fs::read(path).expect("the binary reads");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().expect("8 bytes")) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().expect("4 bytes")) == 3
    })
}
