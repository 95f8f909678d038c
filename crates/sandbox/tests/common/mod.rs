//! Helpers for the sandbox tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use safesh_sandbox::{Limits, Network, Outcome, Output, SandboxError, Spec, Stdin, run};

pub const PY: &str = "/usr/bin/python3";
pub const MARK: &str = "STARTED";

#[derive(Default)]
pub struct Collect {
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

impl Output for Collect {
    fn stdout(&mut self, d: &[u8]) -> std::io::Result<()> {
        self.out.extend_from_slice(d);
        Ok(())
    }
    fn stderr(&mut self, d: &[u8]) -> std::io::Result<()> {
        self.err.extend_from_slice(d);
        Ok(())
    }
}

/// A project dir (write root), a sibling dir (outside), a tmp dir.
pub struct World {
    pub base: tempfile::TempDir,
    pub root: PathBuf,
    pub sibling: PathBuf,
    pub tmp: PathBuf,
}

impl World {
    pub fn new() -> World {
        // Outside /tmp: the sandbox mounts a private /tmp over it.
        let base_dir =
            std::env::var("SBX_BASE").unwrap_or_else(|_| env!("CARGO_TARGET_TMPDIR").to_string());
        let base = tempfile::Builder::new()
            .prefix("sbx")
            .tempdir_in(base_dir)
            .unwrap();
        let root = base.path().join("project");
        let sibling = base.path().join("sibling");
        let tmp = base.path().join("tmp");
        for d in [&root, &sibling, &tmp] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(sibling.join("secret.txt"), "sibling-secret").unwrap();
        World {
            base,
            root,
            sibling,
            tmp,
        }
    }

    pub fn spec(&self, program: &str, args: &[&str]) -> Spec {
        let mut argv = vec![program.to_string()];
        argv.extend(args.iter().map(|s| s.to_string()));
        Spec {
            program: PathBuf::from(program),
            argv,
            cwd: self.root.clone(),
            env: vec![
                ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
                ("HOME".into(), self.root.display().to_string()),
                ("LANG".into(), "C.UTF-8".into()),
            ],
            read: vec![],
            write: vec![self.root.clone()],
            exec: vec![],
            protect: vec![],
            hide: vec![],
            tmp_dir: self.tmp.clone(),
            network: Network::Off,
            limits: Limits {
                timeout: Duration::from_secs(10),
                kill_grace: Duration::from_millis(500),
                ..Limits::default()
            },
            stdin: Stdin::Null,
            allow_weaker: false,
            on_start: None,
            observer: None,
        }
    }

    pub fn py(&self, code: &str) -> Spec {
        let code = format!("print({MARK:?}, flush=True)\n{PRELUDE}\n{code}");
        let mut s = self.spec(PY, &["-c", &code]);
        s.argv[0] = "python3".into();
        s
    }
}

/// Python helpers for attacks: `attempt(name, fn)` prints ESCAPED or DENIED.
pub const PRELUDE: &str = r#"
import ctypes, os, sys, socket, time
libc = ctypes.CDLL(None, use_errno=True)
def chk(r):
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def attempt(name, f):
    try:
        r = f()
        print("ESCAPED", name, repr(r)[:100], flush=True)
    except BaseException as e:
        print("DENIED", name, type(e).__name__, e, flush=True)
def read(p):
    with open(p, 'rb') as f:
        return f.read()
def leak(p):
    d = read(p)
    if d:
        return d
    raise PermissionError('masked: reads as empty')
def write(p, data=b'x'):
    with open(p, 'wb') as f:
        f.write(data)
    return 'written'
"#;

/// Runs an attack and asserts it started, was denied at least once, and never escaped.
pub fn denied(spec: Spec) -> Ran {
    let r = go(spec);
    r.started();
    if std::env::var("SANDBOX_SHOW").is_ok() {
        eprintln!("{r:?}");
    }
    assert!(!r.out.contains("ESCAPED"), "an attempt escaped: {r:?}");
    assert!(r.out.contains("DENIED"), "nothing was attempted: {r:?}");
    r
}

pub struct Ran {
    pub outcome: Outcome,
    pub out: String,
    pub err: String,
}

impl Ran {
    pub fn started(&self) -> &Self {
        assert!(self.out.contains(MARK), "program did not start: {self:?}");
        self
    }
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.outcome, self.out, self.err
        )
    }
}

pub fn go(spec: Spec) -> Ran {
    try_go(spec).unwrap()
}

pub fn try_go(spec: Spec) -> Result<Ran, SandboxError> {
    let mut c = Collect::default();
    let outcome = run(spec, &mut c, &|| false)?;
    Ok(Ran {
        outcome,
        out: String::from_utf8_lossy(&c.out).into_owned(),
        err: String::from_utf8_lossy(&c.err).into_owned(),
    })
}

pub fn exists(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}
