use safesh_utils::UtilCtx;
use safesh_utils::testing::{TestHost, run_real};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// A stdout that takes `limit` bytes, then fails like a closed pipe.
struct Limited {
    data: Vec<u8>,
    limit: usize,
}

impl Write for Limited {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.data.len() >= self.limit {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        let n = b.len().min(self.limit - self.data.len());
        self.data.extend_from_slice(&b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn ours(argv: &[&str], limit: usize) -> (Vec<u8>, i32) {
    let host = TestHost {
        table: Vec::new(),
        env: BTreeMap::new(),
    };
    let mut out = Limited {
        data: Vec::new(),
        limit,
    };
    let mut err = Vec::new();
    let mut input: &[u8] = b"";
    let d = tempfile::tempdir().unwrap();
    let mut ctx = UtilCtx {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: d.path().to_path_buf(),
        env: safesh_utils::Env::new(&host.env, &host),
        stdin: &mut input,
        stdout: &mut out,
        stderr: &mut err,
        host: &host,
    };
    let status = crate::util("yes")(&mut ctx).unwrap();
    (out.data, status)
}

fn check(args: &[&str], limit: usize) {
    let mut argv = vec!["yes"];
    argv.extend_from_slice(args);
    let (data, status) = ours(&argv, limit);
    assert_eq!(status, 141, "{argv:?}");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!("yes {} | head -c {limit}", quoted.join(" "));
    let d = tempfile::tempdir().unwrap();
    let real = run_real(&["bash", "-c", &script], b"", d.path());
    assert_eq!(data, real.stdout, "{argv:?}");
}

#[test]
fn repeats_until_broken_pipe() {
    check(&[], 10);
    check(&[], 100_000);
    check(&["a"], 7);
    check(&["a", "b c"], 1000);
    check(&["--", "x"], 50);
    check(&["-", "z"], 50);
    check(&["long line of text"], 70_001);
    check(&[""], 5);
}

#[test]
fn bad_option() {
    let d = tempfile::tempdir().unwrap();
    for argv in [&["yes", "-n"][..], &["yes", "--bogus"]] {
        let o = safesh_utils::testing::run_util(crate::util("yes"), argv, b"", d.path(), &[]);
        let r = run_real(argv, b"", d.path());
        assert_eq!((o.status, o.stdout), (r.status, r.stdout));
    }
}
