use crate::same_bash;

#[test]
fn plain_and_options() {
    for argv in [
        &["echo"][..],
        &["echo", "a", "b  c"],
        &["echo", "-n", "x"],
        &["echo", "-n"],
        &["echo", "-nx", "y"],
        &["echo", "-", "a"],
        &["echo", "--", "a"],
        &["echo", "-e", "a\\tb\\n"],
        &["echo", "-E", "a\\tb"],
        &["echo", "-ne", "x\\n"],
        &["echo", "-eE", "\\t"],
        &["echo", "-Ee", "\\t"],
        &["echo", "-n", "-e", "q\\n", "-n"],
        &["echo", "a", "-n"],
        &["echo", "héllo"],
    ] {
        same_bash(argv, b"");
    }
}

#[test]
fn escapes() {
    for s in [
        "\\101|\\0101|\\x41|\\x4|\\xg",
        "a\\cb",
        "\\a\\b\\e\\E\\f\\r\\v\\\\",
        "\\u263a\\u41\\U0001F600",
        "\\q\\\"\\'",
        "\\0\\08\\0777",
        "trailing\\",
    ] {
        same_bash(&["echo", "-e", s], b"");
        same_bash(&["echo", "-e", s, "more"], b"");
    }
}
