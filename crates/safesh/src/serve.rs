//! `safesh mcp` and `safesh rpc`: the model-facing servers (crates/server).

/// Runs a server face; returns the exit status.
pub fn run(name: &str, _args: &[String], _config: Option<&str>) -> i32 {
    eprintln!("safesh: {name}: not available in this build yet");
    2
}
