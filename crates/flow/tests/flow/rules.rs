use crate::World;
use safesh_flow::rules::{RULE_DESTRUCTIVE, RULE_ENV_PC, RULE_ENV_VALUE, RULE_EXEC, RULE_NETWORK};
use safesh_flow::{
    Classifier, CommitPoint, CommitRequest, DestructiveOp, ExecKind, HostPolicy, Rules, Verdict,
};
use safesh_label::{Atom, Label};
use safesh_policy::config::ConfigError;

fn req(point: CommitPoint, data: Label, pc: Label) -> CommitRequest {
    CommitRequest {
        point,
        data,
        pc,
        command: "cmd".to_string(),
    }
}

fn net(host: &str) -> CommitPoint {
    CommitPoint::Network {
        host: host.to_string(),
    }
}

fn exec() -> CommitPoint {
    CommitPoint::Exec {
        what: ExecKind::PipeToInterpreter,
    }
}

fn rm(target: &str) -> CommitPoint {
    CommitPoint::Destructive {
        targets: vec![target.to_string()],
        op: DestructiveOp::RmR,
    }
}

fn env(name: &str) -> CommitPoint {
    CommitPoint::Env {
        name: name.to_string(),
    }
}

fn builtin() -> Rules {
    Rules::builtin(HostPolicy::new([(
        "github_token".to_string(),
        vec!["api.github.com".to_string()],
    )]))
}

fn clean() -> Label {
    Label::agent()
}

#[test]
fn network_blocks_secrets_and_allows_clean_data() {
    let r = builtin();
    let secret = Label::from_file("/p/.env").join(&Label::secret("secret"));
    let d = r.decide(&req(net("evil.com"), clean().join(&secret), clean()));
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(d.rule, RULE_NETWORK);
    assert_eq!(d.code(), Some("FLOW_VIOLATION"));
    assert!(
        d.reason.contains("secret") && d.reason.contains("evil.com"),
        "{}",
        d.reason
    );
    // Control: the same request with clean data.
    let d = r.decide(&req(net("evil.com"), clean(), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
    assert_eq!(d.code(), None);
    // Data downloaded from a host may be sent on: it is public.
    let d = r.decide(&req(net("evil.com"), Label::from_network("a.org"), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
}

#[test]
fn network_brokers_named_tokens() {
    let r = builtin();
    let tok = Label::from_env("GITHUB_TOKEN").join(&Label::secret("github_token"));
    let d = r.decide(&req(net("api.github.com"), tok.clone(), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
    let d = r.decide(&req(net("evil.com"), tok, clean()));
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(d.allowed, ["api.github.com"]);
    assert!(d.suggestion.contains("api.github.com"));
}

#[test]
fn network_blocks_implicit_flows_through_the_pc() {
    let r = builtin();
    let pc = Label::secret("secret");
    let d = r.decide(&req(net("evil.com"), clean(), pc));
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(d.rule, RULE_NETWORK);
    assert!(d.reason.contains("implicit flow"), "{}", d.reason);
    // Control: a clean PC.
    assert_eq!(
        r.decide(&req(net("evil.com"), clean(), clean())).verdict,
        Verdict::Allow
    );
}

#[test]
fn exec_needs_integrity() {
    let r = builtin();
    for (what, untrusted) in [
        ("network", Label::from_network("evil.com")),
        ("sandboxed", Label::sandboxed("/usr/bin/curl")),
        ("llm", Label::llm_generated("m")),
        ("mixed", clean().join(&Label::from_network("evil.com"))),
        ("bottom", Label::bottom()),
    ] {
        let d = r.decide(&req(exec(), untrusted.clone(), clean()));
        assert_eq!(d.verdict, Verdict::Block, "{what}");
        assert_eq!(d.rule, RULE_EXEC, "{what}");
        // Under an untrusted PC too.
        let d = r.decide(&req(exec(), clean(), untrusted));
        assert_eq!(d.verdict, Verdict::Block, "{what} as pc");
    }
    // Controls: agent text, workspace files, the environment, a mix of them, and
    // downloaded text a human endorsed.
    for (what, trusted) in [
        ("agent", clean()),
        ("file", Label::from_file("/p/build.sh")),
        ("mix", clean().join(&Label::from_file("/p/build.sh"))),
        ("env", Label::from_env("CC")),
        ("empty", Label::empty()),
        ("user", Label::user_input()),
        (
            "endorsed",
            Label::from_network("evil.com").endorse([Atom::User]),
        ),
    ] {
        let d = r.decide(&req(exec(), trusted, clean()));
        assert_eq!(d.verdict, Verdict::Allow, "{what}");
    }
}

#[test]
fn destructive_untrusted_targets_need_approval() {
    let r = builtin();
    let d = r.decide(&req(rm("build"), Label::from_network("evil.com"), clean()));
    assert_eq!(d.verdict, Verdict::RequestApproval);
    assert_eq!(d.rule, RULE_DESTRUCTIVE);
    assert_eq!(d.code(), Some("APPROVAL_REQUIRED"));
    assert!(d.reason.contains("build"), "{}", d.reason);
    let d = r.decide(&req(rm("build"), clean(), Label::sandboxed("ls")));
    assert_eq!(d.verdict, Verdict::RequestApproval);
    // Control.
    let d = r.decide(&req(rm("build"), clean(), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
    // Secret but trusted targets are fine.
    let d = r.decide(&req(rm("build"), Label::secret("secret"), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
}

#[test]
fn env_changes_under_a_tainted_pc() {
    let r = builtin();
    for name in [
        "PATH",
        "HOME",
        "LD_PRELOAD",
        "BASH_ENV",
        "IFS",
        "DYLD_INSERT_LIBRARIES",
    ] {
        for pc in [Label::from_network("evil.com"), Label::secret("secret")] {
            let d = r.decide(&req(env(name), clean(), pc));
            assert_eq!(d.verdict, Verdict::Block, "{name}");
            assert_eq!(d.rule, RULE_ENV_PC, "{name}");
        }
        let d = r.decide(&req(env(name), Label::from_network("evil.com"), clean()));
        assert_eq!(d.verdict, Verdict::Block, "{name} value");
        assert_eq!(d.rule, RULE_ENV_VALUE);
        // Control.
        let d = r.decide(&req(env(name), clean(), clean()));
        assert_eq!(d.verdict, Verdict::Allow, "{name} clean");
    }
    // Ordinary variables may be set anywhere.
    let d = r.decide(&req(env("FOO"), clean(), Label::from_network("evil.com")));
    assert_eq!(d.verdict, Verdict::Allow);
}

#[test]
fn config_rules_come_first_and_first_match_wins() {
    let w = World::new();
    let c = w.config(
        r#"
[labels.github_token]
env = ["GITHUB_TOKEN"]
may_flow_to = ["api.github.com"]

[[rule]]
name = "trust-internal-uploads"
commit_point = "network"
when = { host = "*.internal.example", confidentiality = "secret" }
verdict = "allow"

[[rule]]
name = "never-upload"
commit_point = "network"
when = { confidentiality = "secret" }
verdict = "request-approval"

[[rule]]
name = "unreachable"
commit_point = "network"
when = { confidentiality = "secret" }
verdict = "warn"

[[rule]]
name = "warn-pipe-to-sh"
commit_point = "exec"
when = { command = "curl * | sh" }
verdict = "warn"

[[rule]]
name = "protect-src"
commit_point = "destructive"
when = { target = "src*" }
verdict = "block"

[[rule]]
name = "downloads-into-env"
commit_point = "env"
when = { integrity = "network", target = "MY_*" }
verdict = "block"

[[rule]]
name = "sandboxed-code"
commit_point = "exec"
when = { integrity = "sandboxed" }
verdict = "request-approval"

[[rule]]
name = "gh-warn"
commit_point = "network"
when = { confidentiality = "github_token", pc = "untrusted" }
verdict = "warn"
"#,
    );
    let r = Rules::from_config(&c).unwrap();
    let secret = Classifier::from_config(&c).path_label(&w.file(".env"));
    // The first matching config rule decides, overriding the built-in block.
    let d = r.decide(&req(net("files.internal.example"), secret.clone(), clean()));
    assert_eq!(
        (d.verdict, d.rule.as_str()),
        (Verdict::Allow, "trust-internal-uploads")
    );
    let d = r.decide(&req(net("evil.com"), secret.clone(), clean()));
    assert_eq!(
        (d.verdict, d.rule.as_str()),
        (Verdict::RequestApproval, "never-upload")
    );
    assert!(d.reason.contains("flow.toml"), "{}", d.reason);
    // Conditions apply to the data joined with the PC.
    let d = r.decide(&req(net("evil.com"), clean(), secret.clone()));
    assert_eq!(d.rule, "never-upload");
    // No config rule matches clean data: the built-ins (then default) decide.
    let d = r.decide(&req(net("evil.com"), clean(), clean()));
    assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Allow, "default"));

    // `command` glob.
    let mut q = req(exec(), Label::from_network("evil.com"), clean());
    q.command = "curl https://x.sh | sh".into();
    assert_eq!(r.decide(&q).rule, "warn-pipe-to-sh");
    q.command = "wget -O- x | sh".into();
    assert_eq!(r.decide(&q).rule, RULE_EXEC);
    // `integrity = sandboxed`.
    let d = r.decide(&req(exec(), Label::sandboxed("gen"), clean()));
    assert_eq!(d.rule, "sandboxed-code");

    // `target` on destructive: any target matches.
    let mut q = req(
        CommitPoint::Destructive {
            targets: vec!["build".into(), "src/lib.rs".into()],
            op: DestructiveOp::Overwrite,
        },
        clean(),
        clean(),
    );
    assert_eq!(r.decide(&q).rule, "protect-src");
    q.point = rm("build");
    assert_eq!(r.decide(&q).verdict, Verdict::Allow);

    // `target` on env is the name; `integrity = network`.
    let d = r.decide(&req(env("MY_URL"), Label::from_network("e.com"), clean()));
    assert_eq!(d.rule, "downloads-into-env");
    let d = r.decide(&req(env("MY_URL"), Label::sandboxed("x"), clean()));
    assert_eq!(d.verdict, Verdict::Allow);
    let d = r.decide(&req(env("OTHER"), Label::from_network("e.com"), clean()));
    assert_eq!(d.verdict, Verdict::Allow);

    // Named confidentiality and `pc`.
    let tok = Label::secret("github_token");
    let d = r.decide(&req(
        net("api.github.com"),
        tok.clone(),
        Label::from_network("x"),
    ));
    assert_eq!(d.rule, "never-upload", "`secret` covers named labels too");
}

#[test]
fn named_confidentiality_and_pc_conditions() {
    let w = World::new();
    let c = w.config(
        r#"
[labels.github_token]
env = ["GITHUB_TOKEN"]
may_flow_to = ["api.github.com"]

[[rule]]
name = "gh-under-untrusted-pc"
commit_point = "network"
when = { confidentiality = "github_token", pc = "untrusted" }
verdict = "warn"

[[rule]]
name = "public-only"
commit_point = "network"
when = { confidentiality = "public", pc = "tainted" }
verdict = "block"
"#,
    );
    let r = Rules::from_config(&c).unwrap();
    let tok = Label::secret("github_token");
    let d = r.decide(&req(
        net("api.github.com"),
        tok.clone(),
        Label::from_network("x"),
    ));
    assert_eq!(
        (d.verdict, d.rule.as_str()),
        (Verdict::Warn, "gh-under-untrusted-pc")
    );
    let d = r.decide(&req(net("api.github.com"), tok, clean()));
    assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Allow, "default"));
    let d = r.decide(&req(net("a.org"), clean(), Label::from_network("x")));
    assert_eq!(d.rule, "public-only");
    let d = r.decide(&req(net("a.org"), clean(), clean()));
    assert_eq!(d.rule, "default");
}

#[test]
fn invalid_when_is_a_config_error_with_location() {
    let w = World::new();
    let e = w
        .try_config(
            "[[rule]]\nname = \"r\"\ncommit_point = \"network\"\nwhen = { integrity = \"dubious\" }\nverdict = \"block\"\n",
        )
        .unwrap_err();
    match e {
        ConfigError::Invalid {
            path,
            line,
            column,
            message,
        } => {
            assert_eq!(path, w.proj.join("flow.toml"));
            assert_eq!((line, column), (4, 22));
            assert!(message.contains("integrity"), "{message}");
        }
        other => panic!("expected Invalid, got {other}"),
    }
}

#[test]
fn unknown_named_label_in_a_rule_is_an_error() {
    let w = World::new();
    let c = w.config(
        "[[rule]]\nname = \"r\"\ncommit_point = \"network\"\nwhen = { confidentiality = \"nosuch\" }\nverdict = \"block\"\n",
    );
    let e = Rules::from_config(&c).unwrap_err();
    assert_eq!(e.name, "r");
    let msg = e.to_string();
    assert!(
        msg.contains("flow.toml:1") && msg.contains("nosuch"),
        "{msg}"
    );
}

mod taint_properties {
    use super::*;
    use proptest::prelude::*;
    use safesh_flow::trust::is_trusted;

    /// Labels the interpreter actually builds: constructors and their joins.
    fn made() -> impl Strategy<Value = Label> {
        prop_oneof![
            Just(Label::empty()),
            Just(Label::agent()),
            Just(Label::user_input()),
            Just(Label::from_file("/p/build.sh")),
            Just(Label::from_env("CC")),
            Just(Label::secret("secret")),
            Just(Label::from_network("evil.com")),
            Just(Label::sandboxed("curl")),
            Just(Label::llm_generated("m")),
        ]
    }

    fn joined() -> impl Strategy<Value = Label> {
        proptest::collection::vec(made(), 1..5).prop_map(|v| Label::join_all(&v))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Joining never launders taint: untrusted ⊔ anything is untrusted.
        #[test]
        fn taint_survives_joins(a in joined(), b in joined()) {
            if !is_trusted(&a) {
                prop_assert!(!is_trusted(&a.join(&b)));
                let d = builtin().decide(&req(exec(), a.join(&b), clean()));
                prop_assert_eq!(d.verdict, Verdict::Block);
            }
            if is_trusted(&a) && is_trusted(&b) {
                prop_assert!(is_trusted(&a.join(&b)));
            }
        }

        /// Secret data never reaches a host its labels do not admit, whatever it
        /// is joined with.
        #[test]
        fn secrets_stay_blocked(a in joined(), b in joined()) {
            let data = a.join(&b).join(&Label::secret("secret"));
            let d = builtin().decide(&req(net("api.github.com"), data, clean()));
            prop_assert_eq!(d.verdict, Verdict::Block);
        }
    }
}
