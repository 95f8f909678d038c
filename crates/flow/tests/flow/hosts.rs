use crate::World;
use safesh_flow::{Classifier, HostPattern, HostPolicy};
use safesh_label::{Atom, Clause, Confidentiality, Integrity, Label};
use std::collections::BTreeSet;

fn policy() -> HostPolicy {
    HostPolicy::new([
        (
            "github_token".to_string(),
            vec!["api.github.com".to_string()],
        ),
        ("corp".to_string(), vec!["*.corp.example".to_string()]),
    ])
}

#[test]
fn host_patterns() {
    let exact = HostPattern::new("api.github.com");
    assert!(exact.matches("api.github.com"));
    assert!(exact.matches("API.GitHub.com."));
    assert!(exact.matches("api.github.com:443"));
    assert!(!exact.matches("github.com"));
    assert!(!exact.matches("evil-api.github.com"));
    assert!(!exact.matches("api.github.com.evil.net"));
    let wild = HostPattern::new("*.corp.example");
    assert!(wild.matches("git.corp.example"));
    assert!(wild.matches("a.b.corp.example"));
    assert!(!wild.matches("corp.example"));
    assert!(!wild.matches("evilcorp.example"));
    assert!(!wild.matches(".corp.example"));
}

#[test]
fn flows_to_host_matrix() {
    let h = policy();
    let public = Label::agent();
    let secret = Label::secret("secret");
    let gh = Label::secret("github_token");
    let corp = Label::secret("corp");
    let from_net = Label::from_network("example.org");
    let cases: &[(&Label, &str, bool)] = &[
        (&public, "evil.com", true),
        (&public, "api.github.com", true),
        (&from_net, "evil.com", true),
        (&secret, "evil.com", false),
        (&secret, "api.github.com", false),
        (&gh, "api.github.com", true),
        (&gh, "evil.com", false),
        (&gh, "uploads.github.com", false),
        (&corp, "git.corp.example", true),
        (&corp, "api.github.com", false),
    ];
    for (label, host, ok) in cases {
        assert_eq!(
            h.flows_to_host(label, host).is_ok(),
            *ok,
            "{label:?} -> {host}"
        );
    }
    // Joins: every clause must admit the host.
    let both = gh.join(&corp);
    assert!(h.flows_to_host(&both, "api.github.com").is_err());
    assert!(h.flows_to_host(&both, "git.corp.example").is_err());
    // Network data joined with a secret is secret.
    assert!(
        h.flows_to_host(&from_net.join(&secret), "example.org")
            .is_err()
    );
    // A clause that allows either label admits the hosts of both.
    let either = Label::new(
        Confidentiality(BTreeSet::from([Clause::any_of([
            Atom::Secret("github_token".into()),
            Atom::Secret("corp".into()),
        ])])),
        Integrity::Top,
        safesh_label::AtomSet::new(),
    );
    assert!(h.flows_to_host(&either, "api.github.com").is_ok());
    assert!(h.flows_to_host(&either, "git.corp.example").is_ok());
    assert!(h.flows_to_host(&either, "evil.com").is_err());
}

#[test]
fn denial_names_the_blocking_atom() {
    let h = policy();
    let e = h
        .flows_to_host(&Label::secret("github_token"), "evil.com")
        .unwrap_err();
    assert_eq!(e.label, "github_token");
    assert_eq!(e.atom, "secret:github_token");
    assert_eq!(e.allowed, ["api.github.com"]);
    assert_eq!(e.host, "evil.com");
    let msg = e.to_string();
    assert!(
        msg.contains("github_token") && msg.contains("api.github.com") && msg.contains("evil.com"),
        "{msg}"
    );

    let data = Label::secret("github_token").join(&Label::secret("secret"));
    let e = h.flows_to_host(&data, "api.github.com").unwrap_err();
    assert_eq!(e.label, "secret");
    assert!(e.allowed.is_empty());
}

#[test]
fn classifier_uses_config_may_flow_to() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        "[labels.github_token]\nenv = [\"GITHUB_TOKEN\"]\nmay_flow_to = [\"api.github.com\"]\n",
    ));
    let tok = c.env_label("GITHUB_TOKEN").unwrap();
    assert!(c.flows_to_host(&tok, "api.github.com").is_ok());
    assert!(c.flows_to_host(&tok, "evil.com").is_err());
    let key = c.env_label("OPENAI_API_KEY").unwrap();
    assert!(c.flows_to_host(&key, "api.openai.com").is_err());
}
