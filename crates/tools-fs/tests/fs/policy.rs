//! The host's path checks reach the file tools: a refused write leaves the file
//! alone and is reported like any permission error.

use safesh_utils::{Host, Interrupt, UtilCtx, UtilResult};
use std::io::{Read, Write};
use std::path::Path;

/// Allows everything except writes under any path containing "protected".
struct Guard;

impl Host for Guard {
    fn check_read(&self, _p: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn check_write(&self, p: &Path) -> std::io::Result<()> {
        if p.to_string_lossy().contains("protected") {
            return Err(std::io::ErrorKind::PermissionDenied.into());
        }
        Ok(())
    }
    fn run(
        &self,
        _a: &[String],
        _c: &Path,
        _i: &mut dyn Read,
        _o: &mut dyn Write,
        _e: &mut dyn Write,
    ) -> UtilResult {
        Err(Interrupt("refused by policy".into()))
    }
    fn cancelled(&self) -> bool {
        false
    }
    fn sleep(&self, _d: std::time::Duration) -> Result<(), Interrupt> {
        Err(Interrupt("cancelled".into()))
    }
    /// Every program exists; running one is what the policy refuses.
    fn command_kind(&self, _n: &str) -> Option<&'static str> {
        Some("program")
    }
}

fn run(argv: &[&str], dir: &Path, stdin: &[u8]) -> (UtilResult, String) {
    let env = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut input = stdin;
    let r = {
        let mut ctx = UtilCtx {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: dir.to_path_buf(),
            env: safesh_utils::Env::new(&env, &Guard),
            stdin: &mut input,
            stdout: &mut out,
            stderr: &mut err,
            host: &Guard,
        };
        super::harness::util(argv[0])(&mut ctx)
    };
    (r, String::from_utf8_lossy(&err).into_owned())
}

#[test]
fn refused_writes_change_nothing() {
    let t = super::harness::setup("mkdir protected; echo x > protected/f; echo y > ok");
    let p = t.path();
    let (r, err) = run(&["rm", "-rf", "protected"], p, b"");
    assert_eq!(r.ok(), Some(1));
    assert!(err.contains("Permission denied"), "{err}");
    assert!(p.join("protected/f").exists());
    let (r, _) = run(&["find", ".", "-name", "f", "-delete"], p, b"");
    assert_eq!(r.ok(), Some(1));
    assert!(p.join("protected/f").exists());
    let (r, _) = run(&["cp", "ok", "protected/g"], p, b"");
    assert_eq!(r.ok(), Some(1));
    assert!(!p.join("protected/g").exists());
    let (r, _) = run(&["mv", "ok", "protected/"], p, b"");
    assert_eq!(r.ok(), Some(1));
    assert!(p.join("ok").exists());
    let (r, _) = run(&["touch", "protected/new"], p, b"");
    assert_eq!(r.ok(), Some(1));
    let (r, _) = run(&["chmod", "000", "protected/f"], p, b"");
    assert_eq!(r.ok(), Some(1));
    let (r, _) = run(&["mkdir", "-p", "protected/x/y"], p, b"");
    assert_eq!(r.ok(), Some(1));
    assert!(!p.join("protected/x").exists());
    let (r, _) = run(&["ln", "-s", "ok", "protected/l"], p, b"");
    assert_eq!(r.ok(), Some(1));
    let (r, _) = run(&["tee", "protected/t"], p, b"data");
    assert_eq!(r.ok(), Some(1));
    assert!(!p.join("protected/t").exists());
}

#[test]
fn refused_inner_commands_interrupt() {
    let t = super::harness::fixture();
    let (r, _) = run(&["xargs", "echo"], t.path(), b"a b\n");
    assert!(r.is_err());
    let (r, _) = run(
        &["find", ".", "-name", "a", "-exec", "echo", "{}", ";"],
        t.path(),
        b"",
    );
    assert!(r.is_err());
    let (r, _) = run(
        &["find", ".", "-name", "a", "-exec", "echo", "{}", "+"],
        t.path(),
        b"",
    );
    assert!(r.is_err());
    let (r, _) = run(&["sleep", "10"], t.path(), b"");
    assert!(r.is_err());
}
