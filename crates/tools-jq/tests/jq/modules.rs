//! jq modules (`import`, `include`, data imports, `-L`, `search` metadata,
//! `modulemeta`) against jq 1.6 in a directory of module files, and the
//! wall: a module is read through the host's check like any file.

use crate::check_in;
use safesh_utils::testing::{Event, RecordingHost, TestHost, run_util_on};
use safesh_utils::{Host, Interrupt, UtilResult};
use std::io::{Read, Write};
use std::path::Path;

/// A tree of modules: `m.jq` in the top directory, `lib/` with a module, a
/// `dir/dir.jq` and `pkg/jq/main.jq` module, data files, and `sub/` whose
/// module imports with a relative `search`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        ("m.jq", "def x: \"top\";"),
        (
            "lib/l.jq",
            "module {version: 2, tags: [\"a\"]};\ndef x: \"lib\"; def twice(f): f, f;",
        ),
        ("lib/dir/dir.jq", "def d: \"dir/dir.jq\";"),
        ("lib/pkg/jq/main.jq", "def p: \"pkg main\";"),
        ("lib/data.json", "{\"a\":1}\n[2]"),
        (
            "sub/s.jq",
            "import \"n\" as n {search: \"./\"};\nimport \"l\" as l;\nimport \"data\" as $d;\ndef y: [n::z, l::x, $d::d];",
        ),
        ("sub/n.jq", "def z: \"sub\";"),
        ("lib/t0.jq", "def s0: 0; def s1: 0;"),
        ("lib/t1.jq", "def s1: 1; def s2: 1;"),
        (
            "lib/t2.jq",
            "import \"t0\" as u; import \"t1\" as u; def s: [u::s0, u::s1, u::s2];",
        ),
    ];
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

#[test]
fn imports_resolve_like_jq_1_6() {
    let dir = tree();
    let cases: &[&[&str]] = &[
        &["-nc", "import \"m\" as m; m::x"],
        &["-nc", "include \"m\"; x"],
        &["-nc", "-L", "lib", "import \"l\" as l; [l::x, l::twice(1)]"],
        &["-nc", "-Llib", "import \"dir\" as d; d::d"],
        &["-nc", "-L", "lib", "import \"pkg\" as p; p::p"],
        &["-nc", "-L", "lib", "import \"data\" as $d; $d, $d::d"],
        &["-nc", "-L", "lib", "import \"sub/s\" as s; s::y"],
        &[
            "-nc",
            "-L",
            "lib",
            "import \"n\" as n {search: \"sub\"}; n::z",
        ],
        &["-nc", "-L", "lib", "\"l\", \"sub/s\" | modulemeta"],
        // Imports sharing an alias: the first one defining a name wins.
        &[
            "-nc",
            "-L",
            "lib",
            "import \"t0\" as t; import \"t1\" as t; [t::s0, t::s1, t::s2]",
        ],
        &[
            "-nc",
            "-L",
            "lib",
            "import \"t1\" as t; import \"t0\" as t; [t::s0, t::s1, t::s2]",
        ],
        &["-nc", "-L", "lib", "import \"t2\" as t; t::s"],
        &[
            "-nc",
            "-L",
            "lib",
            "import \"t0\" as t; import \"t1\" as t; \"t::s0\", t::nope",
        ],
        &["-nc", "-L", "lib", "-L", "/nonexistent", "get_search_list"],
        // Neighbours that fail: a missing module, `search` replacing -L,
        // a data import of a module; `..` in a module path works, an
        // absolute path is not found.
        &["-nc", "import \"nope\" as n; 1"],
        &[
            "-nc",
            "-L",
            "lib",
            "import \"l\" as n {search: \"sub\"}; n::x",
        ],
        &["-nc", "-L", "lib", "include \"data\"; 1"],
        &["-nc", "-L", "lib", "import \"../m\" as m; m::x"],
        &["-nc", "-L", "lib", "import \"/etc/passwd\" as m; 1"],
        &["-nc", "import \"m\" as m; m::nope"],
        &["-nc", "module {a: .}; 1"],
        &["-nc", "include \"m\" 1; 1"],
    ];
    for args in cases {
        check_in(args, "", dir.path());
    }
}

/// A host that refuses to read anything under `denied`.
struct DenyUnder {
    inner: TestHost,
    denied: std::path::PathBuf,
}

impl Host for DenyUnder {
    fn check_read(&self, path: &Path) -> std::io::Result<()> {
        if path.starts_with(&self.denied) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "refused by policy",
            ));
        }
        Ok(())
    }
    fn check_write(&self, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn run(
        &self,
        argv: &[String],
        cwd: &Path,
        stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> UtilResult {
        self.inner.run(argv, cwd, stdin, stdout, stderr)
    }
    fn cancelled(&self) -> bool {
        false
    }
    fn sleep(&self, d: std::time::Duration) -> Result<(), Interrupt> {
        self.inner.sleep(d)
    }
    fn command_kind(&self, name: &str) -> Option<&'static str> {
        self.inner.command_kind(name)
    }
    fn egress(&self, _r: &safesh_utils::Egress<'_>) -> Result<(), Interrupt> {
        Ok(())
    }
}

#[test]
fn module_outside_policy_is_refused_like_cat() {
    let dir = tree();
    let denied = std::fs::canonicalize(dir.path().join("lib")).expect("canon");
    let host = DenyUnder {
        inner: TestHost {
            table: Vec::new(),
            env: Default::default(),
        },
        denied,
    };
    let jq = safesh_tools_jq::UTILS[0].1;
    for prog in [
        "import \"l\" as l; l::x",
        "import \"data\" as $d; $d",
        "\"l\" | modulemeta",
    ] {
        let (_, out) = run_util_on(
            jq,
            &["jq", "-nc", "-L", "lib", prog],
            b"",
            dir.path(),
            &host,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status, 0, "{prog}");
        assert!(out.stdout.is_empty(), "{prog}: {:?}", out.out());
        // Worded like `cat` on a refused file: the path and the reason.
        assert!(
            err.contains("lib/") && err.contains("Permission denied"),
            "{prog}: {err}"
        );
    }
    // Benign neighbour: a module in an allowed directory is read.
    let (_, out) = run_util_on(
        jq,
        &["jq", "-nc", "import \"m\" as m; m::x"],
        b"",
        dir.path(),
        &host,
    );
    assert_eq!(out.out(), "\"top\"\n");
}

#[test]
fn module_reads_are_recorded_by_the_host() {
    let dir = tree();
    let host = RecordingHost::new(false);
    let jq = safesh_tools_jq::UTILS[0].1;
    let (_, out) = run_util_on(
        jq,
        &[
            "jq",
            "-nc",
            "-L",
            "lib",
            "import \"data\" as $d; import \"l\" as l; [$d, l::x]",
        ],
        b"",
        dir.path(),
        &host,
    );
    assert_eq!(out.out(), "[[{\"a\":1},[2]],\"lib\"]\n");
    let lib = std::fs::canonicalize(dir.path().join("lib")).expect("canon");
    let reads: Vec<_> = host
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Read(p) => Some(p),
            _ => None,
        })
        .collect();
    for f in ["l.jq", "data.json"] {
        assert!(reads.contains(&lib.join(f)), "{f} not checked: {reads:?}");
    }
}
