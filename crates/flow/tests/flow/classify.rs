use crate::World;
use safesh_flow::Classifier;
use safesh_label::{Atom, Label};
use std::path::Path;

#[test]
fn default_secret_files() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(""));
    for secret in [
        w.file(".env"),
        w.file(".env.local"),
        w.file("sub/dir/.env"),
        w.file("certs/server.pem"),
        w.file("deep/a/b/tls.key"),
        w.file("keys/id_rsa"),
        w.file("id_ed25519"),
        w.file("x/id_ecdsa"),
        w.home_file(".ssh/config"),
        w.home_file(".ssh/keys/deploy"),
        w.home_file(".aws/credentials"),
    ] {
        assert!(
            c.is_secret_path(&secret),
            "{} should be secret",
            secret.display()
        );
    }
    for public in [
        w.file(".env.example"),
        w.file("sub/.env.example"),
        w.file("src/main.rs"),
        w.file("README.md"),
        w.file("keys/id_rsa.pub"),
        w.file("environment"),
        w.home_file(".bashrc"),
        w.home_file(".sshx/config"),
    ] {
        assert!(
            !c.is_secret_path(&public),
            "{} should not be secret",
            public.display()
        );
    }
    // Relative paths are relative to the project.
    assert!(c.is_secret_path(Path::new(".env")));
    assert!(c.is_secret_path(Path::new("sub/../.env")));
    assert!(!c.is_secret_path(Path::new("src/main.rs")));
}

#[test]
fn config_patterns_extend_and_exclude() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        r#"
[labels]
secret = ["secrets/**", "!secrets/public.txt", "!**/fixtures/*.pem", "~/notes/*.txt", "*.sqlite"]
"#,
    ));
    assert!(c.is_secret_path(&w.file("secrets/a/b.txt")));
    assert!(!c.is_secret_path(&w.file("secrets/public.txt")));
    // Anchored at the declaring file's directory: not anywhere.
    assert!(!c.is_secret_path(&w.file("sub/secrets/a.txt")));
    // A later `!` excludes a built-in default.
    assert!(!c.is_secret_path(&w.file("tests/fixtures/test.pem")));
    assert!(c.is_secret_path(&w.file("certs/real.pem")));
    // `~` is the home; `*` does not cross `/`.
    assert!(c.is_secret_path(&w.home_file("notes/diary.txt")));
    assert!(!c.is_secret_path(&w.home_file("notes/old/diary.txt")));
    // A bare name matches at any depth.
    assert!(c.is_secret_path(&w.file("data/db/app.sqlite")));
    // Defaults remain.
    assert!(c.is_secret_path(&w.file(".env")));
}

#[test]
fn symlink_to_a_secret_is_secret() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(""));
    let env = w.file(".env");
    let link = w.proj.join("innocent.txt");
    std::os::unix::fs::symlink(&env, &link).unwrap();
    assert!(c.is_secret_path(&link));
    assert!(c.path_label(&link).is_secret());
    assert!(!c.is_secret_path(&w.file("plain.txt")));
}

#[test]
fn path_labels() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        r#"
[labels.github_token]
files = ["~/.config/gh/hosts.yml"]
env = ["GITHUB_TOKEN"]
may_flow_to = ["api.github.com"]
"#,
    ));
    let env = w.file(".env");
    let l = c.path_label(&env);
    assert!(l.confidentiality.mentions(&Atom::Secret("secret".into())));
    assert!(l.origins.contains(&Atom::File(crate::p(&env).into())));
    assert!(l.has_integrity(&Atom::File(crate::p(&env).into())));

    let plain = w.file("src/lib.rs");
    let l = c.path_label(&plain);
    assert_eq!(l, Label::from_file(crate::p(&plain)));
    assert!(!l.is_secret());

    let hosts = w.home_file(".config/gh/hosts.yml");
    let l = c.path_label(&hosts);
    assert!(
        l.confidentiality
            .mentions(&Atom::Secret("github_token".into()))
    );
    assert!(!l.confidentiality.mentions(&Atom::Secret("secret".into())));
    assert_eq!(c.named_for_path(&hosts), ["github_token"]);
}

#[test]
fn env_labels() {
    let w = World::new();
    let c = Classifier::from_config(&w.config(
        r#"
[labels.github_token]
env = ["GITHUB_TOKEN", "GH_*"]
may_flow_to = ["api.github.com"]
"#,
    ));
    // Named wins over the mask (`*_TOKEN`), so it can be brokered.
    let l = c.env_label("GITHUB_TOKEN").unwrap();
    assert!(
        l.confidentiality
            .mentions(&Atom::Secret("github_token".into()))
    );
    assert!(!l.confidentiality.mentions(&Atom::Secret("secret".into())));
    assert!(l.origins.contains(&Atom::Env("GITHUB_TOKEN".into())));
    assert!(c.env_label("GH_HOST").unwrap().is_secret());
    // Masked by default.
    for masked in [
        "NPM_TOKEN",
        "API_KEY",
        "DB_PASSWORD",
        "AWS_REGION",
        "APP_SECRET",
    ] {
        let l = c.env_label(masked).unwrap();
        assert!(
            l.confidentiality.mentions(&Atom::Secret("secret".into())),
            "{masked}"
        );
    }
    for plain in ["HOME", "PATH", "TOKENS", "KEYBOARD"] {
        assert!(c.env_label(plain).is_none(), "{plain}");
    }
}
