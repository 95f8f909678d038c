//! The file format of `safesh.toml`.

use super::*;

/// The built-in defaults.
pub(crate) fn builtin(opts: &super::LoadOptions) -> Config {
    let entry = |p: &str| PathEntry {
        path: PathBuf::from(p),
        written: p.to_string(),
        origin: Origin::builtin(),
    };
    let base = opts.cwd.clone();
    Config {
        sources: Vec::new(),
        warnings: Vec::new(),
        base_dir: base.clone(),
        home: opts.home.clone(),
        state_dir: None,
        sandbox: Sandbox {
            read: vec![PathEntry { path: base.clone(), written: ".".into(), origin: Origin::builtin() }],
            write: vec![PathEntry { path: base, written: ".".into(), origin: Origin::builtin() }],
            network: Network::Off,
            path: vec![entry("/usr/local/bin"), entry("/usr/bin"), entry("/bin")],
            allow_weaker: false,
        },
        limits: Limits::default(),
        env: Env::default(),
        commands: Vec::new(),
        nudges: Vec::new(),
        labels: Labels::default(),
        rules: Vec::new(),
        approvals: Vec::new(),
        mcp_token_file: None,
    }
}
