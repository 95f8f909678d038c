//! The cost of observing reads (seccomp user notification): the same programs
//! through the sandbox without an observer and with one that records every path.
//!
//! `cargo run --release -p safesh-sandbox --example read_bench [ITERATIONS]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use safesh_sandbox::{Access, Limits, Network, Observer, Output, Spec, Stdin, run};

struct Sink;
impl Output for Sink {
    fn stdout(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
    fn stderr(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Default)]
struct Record(Mutex<Vec<Option<PathBuf>>>);
impl Observer for Record {
    fn access(&self, a: Access<'_>) -> bool {
        self.0.lock().unwrap().push(a.path.map(|p| p.to_path_buf()));
        true
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("many")).unwrap();
    for i in 0..2000 {
        std::fs::write(proj.join("many").join(format!("f{i}")), format!("{i}\n")).unwrap();
    }
    let tmp = dir.path().join("tmp");
    let spec = |code: &str, observe: bool| Spec {
        program: PathBuf::from("/usr/bin/python3"),
        argv: vec!["python3".into(), "-c".into(), code.into()],
        cwd: proj.clone(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        read: vec![],
        write: vec![proj.clone()],
        exec: vec![],
        protect: vec![],
        hide: vec![],
        tmp_dir: tmp.clone(),
        network: Network::Off,
        limits: Limits::default(),
        stdin: Stdin::Null,
        allow_weaker: false,
        on_start: None,
        observer: observe.then(|| Arc::new(Record::default()) as Arc<dyn Observer>),
    };
    let read_many = "import os\nfor f in os.listdir('many'):\n open('many/'+f).read()";
    for (name, code) in [
        ("python3 -c pass", "pass"),
        ("python3 reads 2000 files", read_many),
    ] {
        for observe in [false, true] {
            let t: Vec<Duration> = (0..n)
                .map(|_| {
                    let t = Instant::now();
                    run(spec(code, observe), &mut Sink, &|| false).unwrap();
                    t.elapsed()
                })
                .collect();
            println!("{name:28} observer={observe:5}  median {:?}", median(t));
        }
    }
}
