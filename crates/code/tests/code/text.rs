//! safesh:text, differentially against the GNU tools where there is one.

use crate::support::{Project, stderr, stdout};
use std::process::Command;

fn gnu(script: &str, dir: &std::path::Path) -> String {
    let o = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn head_tail_sort_uniq_count_match_gnu() {
    let p = Project::new();
    let data = "b\na\na\nc\n10\n9\nb\n\n  x y\n";
    std::fs::write(p.dir.join("d.txt"), data).unwrap();
    let r = p.run(
        r#"const d = await fs.read("d.txt");
const c = text.count(d);
console.log(JSON.stringify([text.head(d, 3), text.tail(d, 2), text.sort(d), text.uniq(d), text.sort(d, { numeric: true }), `${c.lines} ${c.words} ${c.bytes}`]));"#,
    );
    let got: Vec<String> =
        serde_json::from_str(stdout(&r).trim()).unwrap_or_else(|_| panic!("{}", stderr(&r)));
    let want = [
        gnu("head -n 3 d.txt", &p.dir),
        gnu("tail -n 2 d.txt", &p.dir),
        gnu("sort d.txt", &p.dir),
        gnu("uniq d.txt", &p.dir),
        gnu("sort -n d.txt", &p.dir),
        gnu("wc -l -w -c < d.txt | awk '{print $1, $2, $3}'", &p.dir)
            .trim_end()
            .to_string(),
    ];
    assert_eq!(got[..5], want[..5]);
    assert_eq!(got[5], want[5]);
}

#[test]
fn diff_matches_gnu_diff_u_hunks() {
    let p = Project::new();
    let a: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    let b = a
        .replace("l3\n", "L3\n")
        .replace("l20\n", "")
        .replace("l29\n", "l29\nnew\n");
    std::fs::write(p.dir.join("a.txt"), &a).unwrap();
    std::fs::write(p.dir.join("b.txt"), &b).unwrap();
    let r = p.run(
        r#"console.log(JSON.stringify(text.diff(await fs.read("a.txt"), await fs.read("b.txt"))))"#,
    );
    let got: String =
        serde_json::from_str(stdout(&r).trim()).unwrap_or_else(|_| panic!("{}", stderr(&r)));
    let want = gnu("diff -u a.txt b.txt | tail -n +3", &p.dir);
    let got_hunks: String = got.lines().skip(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(got_hunks, want);
}

#[test]
fn grep_returns_line_numbers_and_groups() {
    let p = Project::new();
    let r =
        p.run(r#"console.log(JSON.stringify(text.grep(/(?<k>w\w+)/, "hello\nworld\nwide\n")))"#);
    assert_eq!(
        stdout(&r),
        "[{\"line\":2,\"text\":\"world\",\"match\":\"world\",\"groups\":{\"k\":\"world\"}},{\"line\":3,\"text\":\"wide\",\"match\":\"wide\",\"groups\":{\"k\":\"wide\"}}]\n",
        "{}",
        stderr(&r)
    );
}
