//! Issue 15 item 7: bytes that are not UTF-8 are data, losslessly, where words
//! meet external programs: a globbed name reaches a program's argv and
//! environment as its bytes, and what a program prints or creates comes back as
//! words that name the same files. (The in-process side is differential against
//! bash in `tests/cases/bytes_names.cases`.)
//!
//! python3 prints what it received with `repr` of bytes, so the check does not
//! depend on how stdout is decoded here.

use crate::policy_support::Project;

fn project() -> Project {
    Project::with_extra(
        "[commands.python3]\nallow = true\n\n[commands.\"/usr/bin/python3\"]\nallow = true\n\n\
         [env]\nallow = [\"PATH\", \"HOME\", \"LC_ALL\", \"N\"]",
    )
}

const ARGV: &str = "python3 -c 'import sys, os; print([os.fsencode(a) for a in sys.argv[1:]])'";

#[test]
fn a_globbed_name_that_is_not_utf8_reaches_an_external_program_as_its_bytes() {
    let p = project();
    let r = p.run(&format!(
        "mkdir w; cd w; touch $'a\\xffb' plain; for f in *; do {ARGV} \"$f\" \"${{f%b}}\"; done"
    ));
    r.assert_ok_with("[b'a\\xffb', b'a\\xff']\n[b'plain', b'plain']\n");
}

#[test]
fn a_variable_that_is_not_utf8_reaches_an_external_environment_as_its_bytes() {
    let p = project();
    let r = p.run("export N=$'x\\xfe'; python3 -c 'import os; print(os.environb[b\"N\"])'");
    r.assert_ok_with("b'x\\xfe'\n");
}

#[test]
fn names_an_external_program_creates_or_prints_are_words_for_the_same_files() {
    let p = project();
    let r = p.run(
        "mkdir w; cd w; python3 -c 'open(b\"c\\xfed\", \"w\").write(\"data\\n\")'; \
         for f in c*; do cat \"$f\"; mv \"$f\" \"$f.old\"; done; \
         f=$(python3 -c 'import os, sys; sys.stdout.buffer.write([n for n in os.listdir(b\".\") if n[:1] == b\"c\"][0])'); \
         [ -e \"$f\" ] && echo exists; case $f in *.old) echo renamed;; esac; \
         ls | wc -l",
    );
    r.assert_ok_with("data\nexists\nrenamed\n1\n");
    let names: Vec<Vec<u8>> = std::fs::read_dir(p.dir.join("w"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_encoded_bytes())
        .collect();
    assert_eq!(names, vec![b"c\xfed.old".to_vec()]);
}

/// The JSON faces carry UTF-8 text: a listing holding a name that is not
/// UTF-8 shows U+FFFD for the byte, says so in `warnings`, and is not taken
/// for binary output (one stray byte is a text).
#[test]
fn the_json_result_of_a_listing_with_a_name_that_is_not_utf8_warns_and_stays_text() {
    use std::os::unix::ffi::OsStrExt;
    let p = project();
    std::fs::create_dir(p.dir.join("w")).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"a\xffb");
    std::fs::write(p.dir.join("w").join(name), "").unwrap();
    let (r, v) = p.run_json("cd w; ls; echo ok");
    assert_eq!(r.status, 0, "{}", r.dump());
    assert_eq!(v["stdout"], "a\u{FFFD}b\nok\n", "{v}");
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(
        v["warnings"].as_array().is_some_and(|w| w
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains("invalid UTF-8")))),
        "{v}"
    );
    assert!(v.get("binary").is_none_or(|b| b.is_null()), "{v}");
}

/// A refusal naming a path that is not UTF-8 spells its bytes `\xNN` in the
/// message and details (never the private code points that hold them in a
/// word), on stderr and in the JSON error alike.
#[test]
fn a_refusal_naming_a_path_that_is_not_utf8_spells_the_byte_as_hex() {
    let p = project();
    let (r, v) = p.run_json(&format!("cat {}/x$'\\xff'y", p.outside.display()));
    assert_eq!(v["error"]["code"], "PATH_VIOLATION", "{}", r.dump());
    let want = format!("{}/x\\xffy", p.outside.display());
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&want)),
        "{v}"
    );
    assert_eq!(v["error"]["details"]["path"], want.as_str(), "{v}");
    assert!(
        v["stderr"].as_str().is_some_and(|m| m.contains(&want)),
        "{v}"
    );
}

/// A script file or a script on stdin holding a byte that is not UTF-8 runs,
/// and the byte is data as in bash (`echo a<FF>b` prints it back), instead of
/// failing to read as text.
#[test]
fn a_script_file_or_stdin_with_a_byte_that_is_not_utf8_runs_with_it_as_data() {
    use std::io::Write;
    let p = project();
    std::fs::write(p.dir.join("s.sh"), b"echo a\xffb\n").unwrap();
    let run = |args: &[&str], stdin: Option<&[u8]>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_safesh"));
        c.current_dir(&p.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &p.home)
            .arg("--config")
            .arg(&p.config)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or(b"")).unwrap();
        drop(input);
        child.wait_with_output().unwrap()
    };
    let out = run(&["s.sh"], None);
    assert_eq!(
        out.stdout,
        b"a\xffb\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[], Some(b"echo c\xfed\n"));
    assert_eq!(
        out.stdout,
        b"c\xfed\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
