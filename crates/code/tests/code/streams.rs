//! `safesh/streams`: one open reader per file (checked as `cat` checks it),
//! chunk by chunk, whole lines and whole UTF-8 characters across chunks, the
//! file's label joined, and the same walls as `fs.read`.

use crate::support::{Project, stderr, stdout};

/// Lines with multi-byte characters, long enough for several 1 MiB chunks.
fn multibyte_file() -> String {
    (0..60_000)
        .map(|i| {
            let tag = match i % 5 {
                0 => "é",
                1 => "日本語",
                2 => "🦀",
                _ => "plain",
            };
            format!("{i:06} {tag} {}\n", "x".repeat(i % 23))
        })
        .collect()
}

#[test]
fn a_multi_chunk_file_streams_whole_lines_and_characters() {
    let p = Project::new();
    // The first chunk ends inside a 4-byte character (bytes 1048574..1048578).
    let mut big = format!("{}🦀\n", "a".repeat((1 << 20) - 2));
    big.push_str(&multibyte_file());
    big.push_str("last line without newline 🦀");
    assert!(big.len() > 2 << 20, "the file must span several chunks");
    std::fs::write(p.dir.join("big.txt"), &big).unwrap();
    let r = p.run(
        r#"import { src, dest, filter } from "safesh/streams";
let n = 0, chars = 0;
for await (const l of src("big.txt")) { n++; chars += [...l].length; }
const kept = await src("big.txt").pipe(filter((l: string) => l.includes("🦀"))).pipe(dest("crabs.txt"));
console.log(n, chars, kept);"#,
    );
    let lines: Vec<&str> = big.split('\n').collect();
    let chars: usize = lines.iter().map(|l| l.chars().count()).sum();
    let crabs: Vec<&str> = lines.iter().copied().filter(|l| l.contains('🦀')).collect();
    assert_eq!(
        stdout(&r),
        format!("{} {chars} {}\n", lines.len(), crabs.len()),
        "{}",
        stderr(&r)
    );
    let want: String = crabs.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(
        std::fs::read_to_string(p.dir.join("crabs.txt")).unwrap(),
        want
    );
}

#[test]
fn a_streamed_secret_labels_what_the_script_prints() {
    let p = Project::new();
    let r = p.run(
        "import { src } from 'safesh/streams';\nfor await (const l of src('.env')) console.log(l.length);",
    );
    assert_eq!(stdout(&r), "26\n", "{}", stderr(&r));
    assert!(r.outcome.label.is_secret(), "{:?}", r.outcome.label);
    // The benign neighbour: a public file streams public.
    let r = p.run(
        "import { src } from 'safesh/streams';\nfor await (const l of src('public.txt')) console.log(l);",
    );
    assert_eq!(stdout(&r), "hello\nworld\n", "{}", stderr(&r));
    assert!(!r.outcome.label.is_secret(), "{:?}", r.outcome.label);
}

#[test]
fn streaming_outside_the_read_roots_is_refused_like_cat() {
    let p = Project::new();
    let outside = p.dir.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "private\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.dir.join("link.txt")).unwrap();
    for path in ["../outside.txt", outside.to_str().unwrap(), "link.txt"] {
        let r = p.run(&format!(
            "import {{ src }} from 'safesh/streams';\ntry {{ for await (const l of src({path:?})) console.log(l); }} catch (e) {{ console.log('refused', e.code); }}"
        ));
        assert_eq!(
            stdout(&r),
            "refused PATH_VIOLATION\n",
            "{path}: {}",
            stderr(&r)
        );
    }
}

#[test]
fn a_stream_left_early_is_closed_and_opening_many_in_turn_works() {
    let p = Project::new();
    // 100 streams, each left after its first line: the `finally` closes each
    // (more than the open-at-once limit of 64 would be refused otherwise).
    let r = p.run(
        "import { src } from 'safesh/streams';\nlet n = 0;\nfor (let i = 0; i < 100; i++) { for await (const l of src('public.txt')) { n++; break; } }\nconsole.log(n);",
    );
    assert_eq!(stdout(&r), "100\n", "{}", stderr(&r));
    // A FIFO is not a file to stream: an error, not a hang.
    let fifo = p.dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let r = p.run(
        "import { src } from 'safesh/streams';\ntry { for await (const l of src('fifo')) console.log(l); } catch (e) { console.log('error', e.message); }",
    );
    assert!(
        stdout(&r).starts_with("error fifo: not a regular file"),
        "{}{}",
        stdout(&r),
        stderr(&r)
    );
}
