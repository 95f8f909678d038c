//! The scan for secret files an external program must not see.

use crate::World;
use safesh_flow::{Classifier, SecretScan};
use std::path::PathBuf;

fn world() -> (World, Classifier) {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        "[labels]\nsecret = [\"!fixtures/public.pem\"]\n[labels.deploy]\nfiles = [\"deploy/token.txt\"]\n",
    ));
    for f in [
        ".env",
        "a/b/c/.env",
        "a/key.pem",
        "fixtures/public.pem",
        "deploy/token.txt",
        "d/readme",
        ".git/.env",
    ] {
        w.file(f);
    }
    (w, c)
}

fn under(w: &World, files: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = files.iter().map(|f| w.proj.join(f)).collect();
    v.sort();
    v
}

#[test]
fn finds_secret_and_named_files_at_any_depth_but_not_in_git_or_excluded() {
    let (w, c) = world();
    let s = SecretScan::new().scan(&c, std::slice::from_ref(&w.proj));
    assert_eq!(
        s.secrets,
        under(&w, &[".env", "a/b/c/.env", "a/key.pem", "deploy/token.txt"])
    );
    assert!(s.complete);
}

#[test]
fn a_repeat_scan_sees_new_and_removed_secrets() {
    let (w, c) = world();
    let mut scan = SecretScan::new();
    scan.scan(&c, std::slice::from_ref(&w.proj));
    w.file("d/e/.env");
    std::fs::remove_file(w.proj.join("a/key.pem")).unwrap();
    let s = scan.scan(&c, std::slice::from_ref(&w.proj));
    assert_eq!(
        s.secrets,
        under(&w, &[".env", "a/b/c/.env", "d/e/.env", "deploy/token.txt"])
    );
}

#[test]
fn a_cached_directory_is_read_again_once_it_changes() {
    let (w, c) = world();
    let mut scan = SecretScan::new();
    scan.scan(&c, std::slice::from_ref(&w.proj));
    // Past the racy window, the cached listing is reused until the dir changes.
    std::thread::sleep(safesh_flow::scan::RACY + std::time::Duration::from_millis(100));
    scan.scan(&c, std::slice::from_ref(&w.proj));
    w.file("d/id_rsa");
    let s = scan.scan(&c, std::slice::from_ref(&w.proj));
    assert!(s.secrets.contains(&w.proj.join("d/id_rsa")), "{s:?}");
}

#[test]
fn a_symlink_to_a_secret_counts() {
    let (w, c) = world();
    std::os::unix::fs::symlink(w.proj.join(".env"), w.proj.join("d/innocent")).unwrap();
    let s = SecretScan::new().scan(&c, std::slice::from_ref(&w.proj));
    assert!(s.secrets.contains(&w.proj.join("d/innocent")), "{s:?}");
}
