//! safesh-flow: classification, may-flow-to, exchange rules, approvals, control
//! socket and redaction, on real temp trees and real sockets.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use safesh_policy::config::{self, Config, ConfigError, LoadOptions};
use std::fs;
use std::path::{Path, PathBuf};

mod flow {
    pub mod approvals;
    pub mod classify;
    pub mod control;
    pub mod hosts;
    pub mod redact;
    pub mod rules;
    pub mod scan;
}

/// A scratch world: a home, a project and a state dir, never the real HOME.
pub struct World {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub proj: PathBuf,
}

impl World {
    #[allow(clippy::new_without_default)] // a fresh temp world each time
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&proj).unwrap();
        World {
            _tmp: tmp,
            root,
            home,
            proj,
        }
    }

    /// Loads the config with `text` as `--config` (trusted as given), relative
    /// paths relative to the project.
    pub fn try_config(&self, text: &str) -> Result<Config, ConfigError> {
        let file = self.proj.join("flow.toml");
        fs::write(&file, text).unwrap();
        config::load(&LoadOptions {
            cwd: self.proj.clone(),
            home: Some(self.home.clone()),
            xdg_state_home: Some(self.root.join("state")),
            xdg_config_home: Some(self.root.join("xdg-config")),
            config_file: Some(file),
            no_project: false,
        })
    }

    pub fn config(&self, text: &str) -> Config {
        self.try_config(text).unwrap()
    }

    /// Creates a file (and its parents) under the project.
    pub fn file(&self, rel: &str) -> PathBuf {
        let p = self.proj.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "x\n").unwrap();
        p
    }

    pub fn home_file(&self, rel: &str) -> PathBuf {
        let p = self.home.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "x\n").unwrap();
        p
    }
}

pub fn p(s: &Path) -> String {
    s.to_string_lossy().into_owned()
}
