use crate::World;
use safesh_flow::Classifier;
use safesh_label::Label;

#[test]
fn redaction() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        r#"
[labels.github_token]
env = ["GITHUB_TOKEN"]
may_flow_to = ["api.github.com"]
[labels.build_id]
env = ["BUILD_ID"]
may_flow_to = ["model"]
"#,
    ));
    // Public output is shown.
    assert_eq!(c.redaction_summary(&Label::agent(), 3), None);
    let plain = w.file("src/main.rs");
    assert_eq!(c.redaction_summary(&c.path_label(&plain), 3), None);
    assert_eq!(
        c.redaction_summary(&Label::from_network("example.org"), 3),
        None
    );
    // Secret files are not; the placeholder names the file.
    let env = w.file(".env");
    assert_eq!(
        c.redaction_summary(&c.path_label(&env), 3).unwrap(),
        "[redacted: up to 4 lines, secret(.env)]"
    );
    // Only the secret origins are named: not the public file joined in, not a
    // path built from data.
    let joined = c
        .path_label(&env)
        .join(&c.path_label(&plain))
        .join(&Label::from_file("/proj/API_KEY=sk-live-0123"));
    assert_eq!(
        c.redaction_summary(&joined, 1).unwrap(),
        "[redacted: 1 line, secret(.env)]"
    );
    let key = w.home_file(".ssh/id_rsa");
    assert_eq!(
        c.redaction_summary(&c.path_label(&key).join(&Label::agent()), 1)
            .unwrap(),
        "[redacted: 1 line, secret(~/.ssh/id_rsa)]"
    );
    // A named label is not shown unless it may flow to "model".
    let tok = c.env_label("GITHUB_TOKEN").unwrap();
    assert_eq!(
        c.redaction_summary(&tok, 2).unwrap(),
        "[redacted: up to 2 lines, github_token($GITHUB_TOKEN)]"
    );
    let id = c.env_label("BUILD_ID").unwrap();
    assert_eq!(c.redaction_summary(&id, 2), None);
    // Joined with a secret, it is redacted again.
    assert!(
        c.redaction_summary(&id.join(&c.path_label(&env)), 2)
            .is_some()
    );
}
