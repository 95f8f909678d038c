//! Reading, validating and merging the config layers.

use super::Config;
use std::path::{Path, PathBuf};

/// What `load` needs to know about the caller's world.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The working directory (where the project search starts, and what `.` means
    /// for the built-in defaults).
    pub cwd: PathBuf,
    /// `$HOME`; `None` disables the user layer and `~`.
    pub home: Option<PathBuf>,
    /// `$XDG_STATE_HOME` if set (else `~/.local/state`).
    pub xdg_state_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` if set (else `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// `--config FILE`: used as the project file, trusted as given.
    pub config_file: Option<PathBuf>,
    /// Skip the project search (tests, `--no-project-config`).
    pub no_project: bool,
}

/// A config that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Bad content: unknown key, wrong type, bad glob or regex.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

/// Loads and merges every layer.
pub fn load(opts: &LoadOptions) -> Result<Config, ConfigError> {
    let _ = Path::new("");
    todo_defaults(opts)
}

fn todo_defaults(opts: &LoadOptions) -> Result<Config, ConfigError> {
    Ok(super::schema::builtin(opts))
}
