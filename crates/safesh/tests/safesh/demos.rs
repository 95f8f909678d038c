//! The demos under examples/demo/ (issue 19), each run end to end by its own
//! `run.sh` with the built binary: they must pass (each checks what it did and
//! exits non-zero when something is off).

use std::path::PathBuf;
use std::process::Command;

fn demo(name: &str) {
    let dir: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "examples",
        "demo",
        name,
    ]
    .iter()
    .collect();
    let out = Command::new("sh")
        .arg(dir.join("run.sh"))
        .env("SAFESH", env!("CARGO_BIN_EXE_safesh"))
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .output()
        .expect("run the demo");
    let text = format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "demo {name} failed:\n{text}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("passed"),
        "{text}"
    );
}

#[test]
fn demo_01_basic_pipeline() {
    demo("01-basic-pipeline");
}

#[test]
fn demo_03_verified_transform_rolls_back_a_failed_criterion() {
    demo("03-verified-transform");
}

#[test]
fn demo_02_github_report_against_the_local_fake_api() {
    demo("02-github-report");
}

#[test]
fn demo_04_agent_autonomy_plan_approve_run_rollback_retry() {
    demo("04-agent-autonomy");
}
