//! A project in a temp dir and a session over it with a policy.

use safesh_code::{CodeRequest, CodeRun, Language};
use safesh_core::{Limits, OutputTarget, Session, SessionOptions};
use std::path::{Path, PathBuf};

pub const CONFIG: &str = r#"
[sandbox]
read = ["."]
write = ["."]
path = ["/usr/bin", "/bin"]
[labels]
secret = [".env"]
"#;

/// A temp project: `.env` (secret), `public.txt`.
pub struct Project {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        Project::with_config("")
    }

    pub fn with_config(extra: &str) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("p");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("c.toml"), format!("{CONFIG}\n{extra}\n")).unwrap();
        std::fs::write(dir.join(".env"), "API_KEY=sk-live-0123456789\n").unwrap();
        std::fs::write(dir.join("public.txt"), "hello\nworld\n").unwrap();
        Project { _tmp: tmp, dir }
    }

    pub fn session(&self) -> Session {
        session_in(&self.dir)
    }

    /// Runs TypeScript `src` in a fresh session.
    pub fn run(&self, src: &str) -> CodeRun {
        run_in(self.session(), src, None)
    }
}

pub fn session_in(dir: &Path) -> Session {
    let config = safesh_policy::config::load(&safesh_policy::config::LoadOptions {
        config_file: Some(dir.join("c.toml")),
        cwd: dir.to_path_buf(),
        home: Some(dir.to_path_buf()),
        xdg_state_home: Some(dir.join(".state")),
        xdg_config_home: Some(dir.join(".xdg-config")),
        no_project: true,
    })
    .unwrap();
    Session::new(SessionOptions {
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        limits: Limits::default(),
        arg0: "safesh".into(),
        args: Vec::new(),
        write_roots: None,
        on_calling_thread: true,
        policy: Some(safesh_policy::Policy::new(config)),
    })
}

/// Runs TypeScript `src` in `session`, output captured.
pub fn run_in(session: Session, src: &str, vars: Option<(String, safesh_label::Label)>) -> CodeRun {
    safesh_code::run(
        session,
        CodeRequest {
            source: src.to_string(),
            language: Language::TypeScript,
            name: "main.ts".into(),
            timeout_ms: Some(20_000),
            input: None,
            vars,
        },
        OutputTarget::Separate { cap: 1 << 20 },
    )
}

pub fn stdout(r: &CodeRun) -> String {
    String::from_utf8_lossy(&r.outcome.stdout).into_owned()
}

pub fn stderr(r: &CodeRun) -> String {
    String::from_utf8_lossy(&r.outcome.stderr).into_owned()
}

pub fn code(r: &CodeRun) -> Option<&'static str> {
    r.outcome.error.as_ref().map(|e| e.code.as_str())
}
