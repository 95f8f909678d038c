//! Observing what a program reads and executes by itself (seccomp user notification,
//! `notify.rs`): exact host paths, in order, before the kernel acts; refused execs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use safesh_sandbox::{Access, AccessKind, Observed, Observer, Output, run};

use crate::common::{PY, World};

/// Records every access; refuses to execute `deny_exec`; remembers, for each
/// access, how many stdout bytes had arrived before it was reported.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<(AccessKind, Option<PathBuf>, usize)>>,
    deny_exec: Option<PathBuf>,
    out_len: Arc<Mutex<usize>>,
}

impl Observer for Recorder {
    fn access(&self, a: Access<'_>) -> bool {
        let before = *self.out_len.lock().unwrap();
        self.seen
            .lock()
            .unwrap()
            .push((a.kind, a.path.map(Path::to_path_buf), before));
        !(a.kind == AccessKind::Exec && a.path.is_some() && a.path == self.deny_exec.as_deref())
    }
}

struct Counting {
    out: Vec<u8>,
    len: Arc<Mutex<usize>>,
}

impl Output for Counting {
    fn stdout(&mut self, d: &[u8]) -> std::io::Result<()> {
        self.out.extend_from_slice(d);
        *self.len.lock().unwrap() += d.len();
        Ok(())
    }
    fn stderr(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

fn observe(w: &World, code: &str, deny_exec: Option<PathBuf>) -> (Arc<Recorder>, String, Observed) {
    let rec = Arc::new(Recorder {
        deny_exec,
        ..Recorder::default()
    });
    let mut spec = w.spec(PY, &["-c", code]);
    spec.argv[0] = "python3".into();
    spec.observer = Some(rec.clone());
    let mut out = Counting {
        out: Vec::new(),
        len: rec.out_len.clone(),
    };
    let o = run(spec, &mut out, &|| false).unwrap();
    (
        rec,
        String::from_utf8_lossy(&out.out).into_owned(),
        o.observed,
    )
}

fn reads(r: &Recorder) -> Vec<PathBuf> {
    r.seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(k, _, _)| *k == AccessKind::Read)
        .filter_map(|(_, p, _)| p.clone())
        .collect()
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}

#[test]
fn a_file_read_by_a_computed_name_is_reported_with_its_host_path() {
    let w = World::new();
    std::fs::write(w.root.join("dl.py"), "print('hi')\n").unwrap();
    let (rec, out, observed) = observe(&w, "print(open('d'+'l.py').read(), end='')", None);
    assert_eq!(out, "print('hi')\n");
    assert_eq!(observed, Observed::Complete);
    assert!(
        reads(&rec).contains(&canon(&w.root.join("dl.py"))),
        "{:?}",
        rec.seen
    );
    // The interpreter's own files are system files: not reported.
    assert!(
        !reads(&rec).iter().any(|p| p.starts_with("/usr")),
        "{:?}",
        rec.seen
    );
}

#[test]
fn a_read_is_reported_before_the_bytes_that_follow_it_are_printed() {
    let w = World::new();
    std::fs::write(w.root.join("data.txt"), "DATA").unwrap();
    let (rec, out, _) = observe(
        &w,
        "import sys\nprint('first', flush=True)\nd=open('data.txt').read()\nprint(d, flush=True)",
        None,
    );
    assert_eq!(out, "first\nDATA\n");
    let seen = rec.seen.lock().unwrap();
    let (_, _, before) = seen
        .iter()
        .find(|(_, p, _)| p.as_deref() == Some(&canon(&w.root.join("data.txt"))))
        .expect("data.txt reported");
    assert!(
        *before <= "first\n".len(),
        "reported after its bytes: {before}"
    );
}

#[test]
fn symlinks_and_renames_report_the_file_behind_them() {
    let w = World::new();
    std::fs::write(w.root.join("dl.sh"), "x").unwrap();
    std::os::unix::fs::symlink(w.root.join("dl.sh"), w.root.join("link")).unwrap();
    let (rec, _, _) = observe(
        &w,
        "open('link').read()\nimport os\nos.rename('dl.sh','moved.sh')\nos.link('moved.sh','hard.sh')",
        None,
    );
    let r = reads(&rec);
    assert!(
        r.contains(&canon(&w.root.join("moved.sh")))
            || r.iter().filter(|p| p.ends_with("dl.sh")).count() >= 2,
        "{r:?}"
    );
    assert!(
        r.iter().filter(|p| p.ends_with("dl.sh")).count() >= 1,
        "{r:?}"
    );
}

#[test]
fn reads_through_proc_self_fd_resolve_to_the_file() {
    let w = World::new();
    std::fs::write(w.root.join("a.txt"), "A").unwrap();
    let (rec, out, _) = observe(
        &w,
        "import os\nfd=os.open('a.txt', os.O_PATH)\nprint(open('/proc/self/fd/%d' % fd).read())",
        None,
    );
    assert_eq!(out, "A\n");
    let r = reads(&rec);
    assert!(
        r.iter().filter(|p| p.ends_with("a.txt")).count() >= 2,
        "{r:?}"
    );
}

#[test]
fn files_in_the_private_tmp_are_reported_at_their_host_path() {
    let w = World::new();
    let (rec, out, _) = observe(
        &w,
        "open('/tmp/t.txt','w').write('T')\nprint(open('/tmp/t.txt').read())",
        None,
    );
    assert_eq!(out, "T\n");
    let r = reads(&rec);
    assert!(r.contains(&canon(&w.tmp).join("t.txt")), "{r:?}");
}

#[test]
fn a_refused_exec_does_not_run() {
    let w = World::new();
    let script = w.root.join("run.sh");
    std::fs::write(&script, "#!/usr/bin/python3\nopen('pwned','w')\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&script).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = w.spec(PY, &["-c", "import subprocess\ntry:\n subprocess.run(['./run.sh'])\nexcept OSError as e:\n print('refused', e.errno)"]);
    spec.exec = vec![script.clone()];
    let rec = Arc::new(Recorder {
        deny_exec: Some(canon(&script)),
        ..Recorder::default()
    });
    spec.observer = Some(rec.clone());
    let mut out = Counting {
        out: Vec::new(),
        len: rec.out_len.clone(),
    };
    run(spec, &mut out, &|| false).unwrap();
    let out = String::from_utf8_lossy(&out.out);
    assert!(out.contains("refused 13"), "{out}");
    assert!(!w.root.join("pwned").exists());
    // The control: allowed, it runs.
    let mut spec = w.spec(
        PY,
        &["-c", "import subprocess\nsubprocess.run(['./run.sh'])"],
    );
    spec.exec = vec![script.clone()];
    spec.observer = Some(Arc::new(Recorder::default()));
    crate::common::go(spec);
    assert!(w.root.join("pwned").exists());
}

#[test]
fn hidden_files_report_nothing() {
    let w = World::new();
    std::fs::write(w.root.join(".env"), "K=v").unwrap();
    std::os::unix::fs::symlink(".env", w.root.join("rel")).unwrap();
    std::os::unix::fs::symlink(w.root.join(".env"), w.root.join("abs")).unwrap();
    let code = "for p in ['.env', 'rel', 'abs', '../project/.env']:\n print(repr(open(p).read()))";
    let mut spec = w.spec(PY, &["-c", code]);
    spec.hide = vec![w.root.join(".env")];
    let rec = Arc::new(Recorder::default());
    spec.observer = Some(rec.clone());
    let r = crate::common::go(spec);
    assert_eq!(r.out, "''\n''\n''\n''\n");
    assert!(reads(&rec).is_empty(), "{:?}", rec.seen);
}

#[test]
fn relative_paths_that_leave_their_directory_are_resolved_exactly() {
    let w = World::new();
    std::fs::create_dir(w.root.join("sub")).unwrap();
    std::fs::write(w.root.join("dl.sh"), "D").unwrap();
    std::os::unix::fs::symlink(w.root.join("dl.sh"), w.root.join("sub/abs")).unwrap();
    let mut spec = w.spec(
        PY,
        &[
            "-c",
            "import os\nos.chdir('sub')\nprint(open('../dl.sh').read() + open('abs').read())",
        ],
    );
    let rec = Arc::new(Recorder::default());
    spec.observer = Some(rec.clone());
    let r = crate::common::go(spec);
    assert_eq!(r.out, "DD\n");
    let n = reads(&rec)
        .iter()
        .filter(|p| **p == canon(&w.root.join("dl.sh")))
        .count();
    assert_eq!(n, 2, "{:?}", rec.seen);
}

#[test]
fn a_missing_file_fails_as_it_would() {
    let w = World::new();
    let (_, out, _) = observe(
        &w,
        "try:\n open('nope')\nexcept FileNotFoundError:\n print('ENOENT')\nopen('new','w').write('n')\nprint(open('new').read())",
        None,
    );
    assert_eq!(out, "ENOENT\nn\n");
}
