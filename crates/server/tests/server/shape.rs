//! Output shaping: cap with head and tail, spill file, binary, invalid UTF-8, lines.

use crate::{Env, exec};
use safesh_core::StreamKind;
use safesh_server::shape::{Capture, OutputMode, ShapeConfig};
use serde_json::json;
use std::time::Duration;

fn capture(mode: OutputMode, dir: &std::path::Path) -> Capture {
    Capture::new(
        mode,
        ShapeConfig {
            cap: 16384,
            spill_dir: dir.join("spill"),
            retention: Duration::from_secs(24 * 3600),
        },
    )
}

fn outcome() -> safesh_core::ExecOutcome {
    safesh_core::ExecOutcome {
        exit_code: 0,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_total: 0,
        stderr_total: 0,
        truncated: false,
        label: safesh_label::Label::empty(),
        status_label: safesh_label::Label::empty(),
        error_label: safesh_label::Label::empty(),
        warnings: Vec::new(),
        error: None,
        duration_ms: 1,
    }
}

fn numbered(n: usize) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("line {i}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn small_output_is_whole() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Merged, d.path());
    c.push(StreamKind::Stdout, b"a\n");
    c.push(StreamKind::Stderr, b"b");
    let v = c.result(&outcome());
    assert_eq!(v["output"], "a\nb");
    assert_eq!(v["truncated"], false);
    assert_eq!(v["total_bytes"], 3);
    assert_eq!(v["total_lines"], 2);
    assert!(v["log_path"].is_null());
    assert!(
        !d.path().join("spill").exists(),
        "no spill file under the cap"
    );
}

#[test]
fn capped_output_keeps_head_tail_and_spills_every_byte() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Merged, d.path());
    let data = numbered(20000);
    for chunk in data.chunks(777) {
        c.push(StreamKind::Stdout, chunk);
    }
    let v = c.result(&outcome());
    let out = v["output"].as_str().unwrap();
    assert_eq!(v["truncated"], true);
    assert_eq!(v["total_bytes"], data.len());
    assert_eq!(v["total_lines"], 20000);
    assert!(out.starts_with(std::str::from_utf8(&data[..1024]).unwrap()));
    assert!(out.ends_with(std::str::from_utf8(&data[data.len() - 1024..]).unwrap()));
    assert!(out.contains("bytes omitted"), "{out}");
    assert!(
        out.len() < 4096,
        "the shaped output stays small: {}",
        out.len()
    );
    let path = v["log_path"].as_str().unwrap();
    assert_eq!(
        std::fs::read(path).unwrap(),
        data,
        "the spill file holds every byte"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn separate_mode_shapes_each_stream() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Separate, d.path());
    c.push(StreamKind::Stdout, b"out\n");
    c.push(StreamKind::Stderr, b"err\n");
    let v = c.result(&outcome());
    assert_eq!(v["stdout"], "out\n");
    assert_eq!(v["stderr"], "err\n");
    assert!(v.get("output").is_none());
}

#[test]
fn stdout_mode_drops_stderr_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Stdout, d.path());
    c.push(StreamKind::Stdout, b"out\n");
    c.push(StreamKind::Stderr, b"err\n");
    let v = c.result(&outcome());
    assert_eq!(v["stdout"], "out\n");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("stderr (4 bytes) not shown")
    );
}

#[test]
fn binary_output_is_described() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Merged, d.path());
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec();
    png.extend(std::iter::repeat_n(0u8, 100));
    c.push(StreamKind::Stdout, &png);
    let v = c.result(&outcome());
    let out = v["output"].as_str().unwrap();
    let log = v["log_path"].as_str().expect("binary output is saved");
    assert_eq!(
        out,
        format!(
            "<binary: {} bytes, looks like PNG; full output in {log}>",
            png.len()
        )
    );
    assert_eq!(std::fs::read(log).unwrap(), png);
    let c = capture(OutputMode::Merged, d.path());
    c.push(StreamKind::Stdout, b"abc\x00def");
    assert!(
        c.result(&outcome())["output"]
            .as_str()
            .unwrap()
            .starts_with("<binary: 7 bytes")
    );
}

#[test]
fn invalid_utf8_is_replaced_with_a_note() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Merged, d.path());
    c.push(StreamKind::Stdout, b"caf\xe9 ok\n");
    let v = c.result(&outcome());
    assert_eq!(v["output"], "caf\u{FFFD} ok\n");
    assert!(v["warnings"][0].as_str().unwrap().contains("invalid UTF-8"));
}

#[test]
fn cutting_at_the_cap_does_not_split_characters() {
    let d = tempfile::tempdir().unwrap();
    let c = capture(OutputMode::Merged, d.path());
    let data = "é".repeat(20000);
    c.push(StreamKind::Stdout, b"x");
    c.push(StreamKind::Stdout, data.as_bytes());
    let v = c.result(&outcome());
    assert_eq!(v["truncated"], true);
    assert_eq!(v["warnings"], json!([]), "no spurious invalid-UTF-8 note");
    assert!(!v["output"].as_str().unwrap().contains('\u{FFFD}'));
}

#[test]
fn line_counts() {
    let d = tempfile::tempdir().unwrap();
    for (data, lines) in [
        (&b""[..], 0),
        (b"a", 1),
        (b"a\n", 1),
        (b"a\nb", 2),
        (b"\n\n", 2),
    ] {
        let c = capture(OutputMode::Merged, d.path());
        c.push(StreamKind::Stdout, data);
        assert_eq!(c.result(&outcome())["total_lines"], lines, "{data:?}");
    }
}

#[test]
fn old_spill_files_are_removed_when_a_new_one_is_written() {
    let d = tempfile::tempdir().unwrap();
    let spill = d.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    let old = spill.join("old.log");
    let fresh = spill.join("fresh.log");
    std::fs::write(&old, b"x").unwrap();
    std::fs::write(&fresh, b"y").unwrap();
    let f = std::fs::File::options().write(true).open(&old).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(48 * 3600))
        .unwrap();
    drop(f);
    let c = capture(OutputMode::Merged, d.path());
    c.push(StreamKind::Stdout, &numbered(5000));
    let v = c.result(&outcome());
    assert!(!old.exists(), "expired spill file removed");
    assert!(fresh.exists(), "recent spill file kept");
    assert!(std::path::Path::new(v["log_path"].as_str().unwrap()).exists());
}

#[test]
fn exec_spills_a_real_commands_output() {
    let env = Env::new();
    let s = env.server();
    let v = exec(&s, json!({"script": "seq 1 50000"}));
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["truncated"], true);
    let expected: String = (1..=50000).map(|i| format!("{i}\n")).collect();
    assert_eq!(v["total_bytes"], expected.len());
    assert_eq!(v["total_lines"], 50000);
    let log = std::fs::read_to_string(v["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log, expected);
    let label = std::path::Path::new(v["log_path"].as_str().unwrap()).with_extension("label.json");
    let label: serde_json::Value = serde_json::from_slice(&std::fs::read(label).unwrap()).unwrap();
    assert_eq!(label, v["label"], "the spill file keeps the output's label");
    assert!(
        v["log_path"]
            .as_str()
            .unwrap()
            .starts_with(env.settings.state_dir.to_str().unwrap())
    );
}

// ---- redaction of output the model may not see ----

use safesh_label::Label;
use safesh_server::shape::Redaction;

const SECRET: &str = "hunter2-TOPSECRET-value";

/// A capture with a small cap and redaction decided by the built-in config
/// (`.env` is secret) of `env`'s project.
fn redacting(mode: OutputMode, env: &Env) -> Capture {
    Capture::new(
        mode,
        ShapeConfig {
            cap: 4096,
            spill_dir: env.settings.spill_dir(),
            retention: Duration::from_secs(24 * 3600),
        },
    )
    .with_redaction(Redaction::from_config(env.settings.policy.config()))
}

/// The label of bytes read from `.env` in the project.
fn dotenv_label(env: &Env) -> Label {
    let classifier = safesh_flow::Classifier::from_config(env.settings.policy.config());
    classifier.path_label(&env.proj().join(".env"))
}

/// Every byte of every file under `dir` (none when it does not exist).
fn all_files(dir: &std::path::Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        s.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
    }
    s
}

#[test]
fn secret_file_output_is_replaced_by_a_placeholder() {
    let env = Env::new();
    let label = dotenv_label(&env);
    assert!(label.is_secret(), "the built-in config makes .env secret");
    let c = redacting(OutputMode::Merged, &env);
    c.push_labeled(
        StreamKind::Stdout,
        format!("A={SECRET}\nB=2\n").as_bytes(),
        &label,
    );
    let mut o = outcome();
    o.label = label;
    let v = c.result(&o);
    assert_eq!(v["output"], "[redacted: up to 2 lines, secret(.env)]");
    assert!(!v.to_string().contains(SECRET), "{v}");
    assert_eq!(v["total_lines"], 2);
    assert!(v["log_path"].is_null());
    // The label summary stays on the result.
    assert_eq!(v["label"]["secrets"], json!(["secret:secret"]));
}

#[test]
fn public_output_is_untouched_and_its_spill_file_kept() {
    let env = Env::new();
    let c = redacting(OutputMode::Merged, &env);
    let public = Label::from_file(env.proj().join("notes.txt").to_string_lossy().into_owned());
    let data = numbered(600);
    c.push_labeled(StreamKind::Stdout, &data, &public);
    let v = c.result(&outcome());
    assert_eq!(v["truncated"], true);
    let log = v["log_path"].as_str().expect("a spill file past the cap");
    assert_eq!(std::fs::read(log).unwrap(), data);
    assert!(v["output"].as_str().unwrap().starts_with("line 1\n"));
}

#[test]
fn a_secret_past_the_cap_leaves_no_spill_file_in_clear() {
    let env = Env::new();
    let c = redacting(OutputMode::Merged, &env);
    // Public output passes the cap first (a spill file is opened), then a secret.
    c.push(StreamKind::Stdout, &numbered(500));
    let spill = env.settings.spill_dir();
    assert!(!all_files(&spill).is_empty(), "the public part was spilled");
    let secret_lines: String = (0..50).map(|i| format!("{SECRET}-{i}\n")).collect();
    c.push_labeled(
        StreamKind::Stdout,
        secret_lines.as_bytes(),
        &dotenv_label(&env),
    );
    let v = c.result(&outcome());
    // Only the secret chunk is hidden (50 lines, said as up to 64); the public
    // lines before it stay, head and tail, with their spill file.
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("line 1\n"), "{v}");
    assert!(
        out.ends_with("line 500\n[redacted: up to 64 lines, secret(.env)]"),
        "{v}"
    );
    assert_eq!(v["total_lines"], 564, "{v}");
    let log = v["log_path"]
        .as_str()
        .expect("the public part's spill file");
    assert!(!std::fs::read_to_string(log).unwrap().contains(SECRET));
    assert!(!v.to_string().contains(SECRET));
    assert!(
        !all_files(&spill).contains(SECRET),
        "a spill file holds the secret in clear"
    );
}

#[test]
fn separate_mode_redacts_each_stream_on_its_own() {
    let env = Env::new();
    let c = redacting(OutputMode::Separate, &env);
    c.push_labeled(
        StreamKind::Stdout,
        format!("{SECRET}\n").as_bytes(),
        &dotenv_label(&env),
    );
    c.push(StreamKind::Stderr, b"warning: public\n");
    let v = c.result(&outcome());
    assert_eq!(v["stdout"], "[redacted: 1 line, secret(.env)]");
    assert_eq!(v["stderr"], "warning: public\n");
}

#[test]
fn fixed_format_public_output_of_a_secret_passes() {
    // A count core labels public (wc -l .env) is shown as is.
    let env = Env::new();
    let c = redacting(OutputMode::Merged, &env);
    c.push_labeled(StreamKind::Stdout, b"2\n", &Label::empty());
    let v = c.result(&outcome());
    assert_eq!(v["output"], "2\n");
}

#[test]
fn redaction_off_in_config_shows_the_secret() {
    let env = Env::new();
    let cfg = env.dir.path().join("redact-off.toml");
    std::fs::write(&cfg, "[labels]\nredact = false\n").unwrap();
    let opts = safesh_policy::config::LoadOptions {
        config_file: Some(cfg),
        cwd: env.proj(),
        home: None,
        xdg_state_home: Some(env.dir.path().join("state")),
        xdg_config_home: Some(env.dir.path().join("no-config")),
        no_project: true,
    };
    let config = safesh_policy::config::load(&opts).unwrap();
    assert!(!config.labels.redacts());
    assert!(Redaction::from_config(&config).is_none());
    let c = capture(OutputMode::Merged, env.dir.path()).with_redaction(None);
    c.push_labeled(StreamKind::Stdout, SECRET.as_bytes(), &dotenv_label(&env));
    assert_eq!(c.result(&outcome())["output"], SECRET);
}

#[test]
fn a_bad_redact_value_is_a_config_error_with_its_position() {
    let env = Env::new();
    let cfg = env.dir.path().join("bad.toml");
    std::fs::write(&cfg, "[labels]\nredact = \"no\"\n").unwrap();
    let opts = safesh_policy::config::LoadOptions {
        config_file: Some(cfg),
        cwd: env.proj(),
        home: None,
        xdg_state_home: Some(env.dir.path().join("state")),
        xdg_config_home: Some(env.dir.path().join("no-config")),
        no_project: true,
    };
    let e = safesh_policy::config::load(&opts).unwrap_err().to_string();
    assert!(e.contains("bad.toml:2:"), "{e}");
    assert!(e.contains("redact"), "{e}");
}

#[test]
fn exec_and_jobs_redact_a_secret_file_end_to_end() {
    use safesh_server::service::{JobOutputParams, JobStartParams};
    let env = Env::new();
    std::fs::write(env.proj().join(".env"), format!("TOKEN={SECRET}\n")).unwrap();
    let s = env.server();
    let dotenv = env.proj().join(".env");
    let dotenv = dotenv.to_str().unwrap();
    // exec (MCP `exec`, JSON-RPC `execute`).
    let v = exec(
        &s,
        json!({"script": format!("cat {dotenv}; echo public >&2"), "output_mode": "separate"}),
    );
    assert_eq!(v["stdout"], "[redacted: 1 line, secret(.env)]", "{v}");
    assert_eq!(v["stderr"], "public\n", "{v}");
    // A count of a secret is as secret (it is a channel).
    let v = exec(&s, json!({"script": format!("wc -l < {dotenv}")}));
    assert_eq!(v["output"], "[redacted: 1 line, secret(.env)]", "{v}");
    // Only the secret part of an output is hidden.
    let v = exec(
        &s,
        json!({"script": format!("seq 3; cat {dotenv}; echo done")}),
    );
    assert_eq!(
        v["output"], "1\n2\n3\n[redacted: 1 line, secret(.env)]\ndone\n",
        "{v}"
    );
    // A background job: output, final result and its log file.
    let started = s
        .job_start(JobStartParams {
            script: Some(format!("echo before; cat {dotenv}")),
            ..JobStartParams::default()
        })
        .unwrap();
    let id = started["job_id"].as_str().unwrap().to_string();
    let params = |since| JobOutputParams {
        job_id: id.clone(),
        since: Some(since),
        max_bytes: None,
        ..JobOutputParams::default()
    };
    // Only the secret part is hidden, by one marker in place (no size).
    let done = s.job_follow(params(0)).unwrap();
    assert_eq!(
        done["output"], "before\n[redacted: secret(.env)]\n",
        "{done}"
    );
    let polled = s.job_output(params(0)).unwrap();
    assert_eq!(
        polled["data"], "before\n[redacted: secret(.env)]\n",
        "{polled}"
    );
    let log = done["log_path"].as_str().unwrap();
    assert!(!std::fs::read_to_string(log).unwrap().contains(SECRET));
    assert!(!all_files(&env.settings.spill_dir()).contains(SECRET));
}
