//! `[tasks]`: each form, errors with their position, layers and trust.

use crate::config::{World, invalid};
use safesh_policy::config::{self, trust};
use safesh_tasks::TaskDef;

#[test]
fn every_task_form_parses() {
    let w = World::new();
    w.project(
        r#"[tasks]
lint = "cargo clippy -q"
all = "[lint, [-s, test]]"
bracket = "[ -f x ] && make"
test = { cmd = "cargo test", args = ["-q", "it's"], env = { CI = "1" }, cwd = "sub", description = "tests" }
ci = { serial = ["lint", "test"], description = "what CI runs" }
dev = { parallel = ["lint", "test"] }
"#,
    );
    let c = w.load();
    let t = &c.tasks;
    assert_eq!(t["lint"].def, TaskDef::Script("cargo clippy -q".into()));
    assert!(matches!(t["all"].def, TaskDef::Xrun(_)));
    assert_eq!(t["bracket"].def, TaskDef::Script("[ -f x ] && make".into()));
    let TaskDef::Cmd(cmd) = &t["test"].def else {
        panic!("test is not a cmd task: {:?}", t["test"].def);
    };
    assert_eq!(cmd.args, ["-q", "it's"]);
    assert_eq!(cmd.env, [("CI".to_string(), "1".to_string())]);
    // cwd is resolved against the config file's directory.
    assert_eq!(cmd.cwd.as_deref(), w.proj_path("sub").to_str());
    assert_eq!(t["test"].description.as_deref(), Some("tests"));
    assert_eq!(
        t["ci"].def,
        TaskDef::Serial(vec!["lint".into(), "test".into()])
    );
    assert_eq!(
        t["dev"].def,
        TaskDef::Parallel(vec!["lint".into(), "test".into()])
    );
    assert!(
        t["ci"].origin.ends_with("safesh.toml:6"),
        "{}",
        t["ci"].origin
    );
}

#[test]
fn bad_tasks_are_errors_at_their_position() {
    for (text, line, col, needle) in [
        ("[tasks]\nx = 3\n", 2, 5, "must be a string"),
        (
            "[tasks]\nx = { cmd = \"a\", serial = [\"b\"] }\n",
            2,
            5,
            "give one",
        ),
        (
            "[tasks]\nx = { serial = [\"b\"], parallel = [\"c\"] }\n",
            2,
            23,
            "both",
        ),
        (
            "[tasks]\nx = { serial = [\"ok\", \"not a name\"] }\n",
            2,
            23,
            "not a task name",
        ),
        ("[tasks]\nx = { serial = [] }\n", 2, 16, "is empty"),
        (
            "[tasks]\nx = { description = \"d\" }\n",
            2,
            5,
            "needs `cmd`",
        ),
        (
            "[tasks]\nx = { serial = [\"a\"], env = { A = \"1\" } }\n",
            2,
            23,
            "need `cmd`",
        ),
        (
            "[tasks]\nx = { cmd = \"a\", env = { \"A-B\" = \"1\" } }\n",
            2,
            26,
            "not a variable name",
        ),
        (
            "[tasks]\nx = { cmd = \"a\", when = 1 }\n",
            2,
            18,
            "unknown key `when`",
        ),
        ("[tasks]\n\"-x\" = \"echo\"\n", 2, 1, "not a task name"),
    ] {
        let w = World::new();
        w.project(text);
        let (_, l, c, msg) = invalid(config::load(&w.opts()));
        assert!(msg.contains(needle), "{text}: {msg}");
        assert_eq!((l, c), (line, col), "{text}: {msg}");
    }
}

#[test]
fn the_project_replaces_a_user_task_of_the_same_name() {
    let w = World::new();
    w.user("[tasks]\nmine = \"echo user\"\nshared = \"echo user\"\n");
    w.project("[tasks]\nshared = \"echo project\"\n");
    let c = w.load();
    assert_eq!(c.tasks["mine"].def, TaskDef::Script("echo user".into()));
    assert_eq!(
        c.tasks["shared"].def,
        TaskDef::Script("echo project".into())
    );
}

#[test]
fn an_untrusted_project_adds_no_tasks() {
    let w = World::new();
    let p = w.project("[tasks]\nplanted = \"touch pwned\"\n");
    trust::untrust_file(&w.state(), &p).unwrap();
    let c = w.load();
    assert!(c.tasks.is_empty(), "{:?}", c.tasks);
    // Control: trusted, it is there.
    trust::trust_file(&w.state(), &p).unwrap();
    assert!(w.load().tasks.contains_key("planted"));
}
