//! The client against a local OpenAI-compatible server on 127.0.0.1: real HTTP,
//! real chat-completions JSON, errors mapped to clear messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use safesh_llm::fake::{FakeServer, Reply};
use safesh_llm::{Client, JudgeQuestion, LlmConfig, LlmError, Outbound, allow_all};
use std::time::Duration;

fn question(output: &str) -> JudgeQuestion {
    JudgeQuestion {
        intent: Some("list the Rust files".into()),
        criterion: "mentions at least one .rs file".into(),
        output: output.into(),
    }
}

#[test]
fn judge_sends_intent_criterion_and_output_and_reads_the_verdict() {
    let srv = FakeServer::start(|r| {
        let user = r.body["messages"][1]["content"].as_str().unwrap_or("");
        let pass = user.contains("main.rs");
        Reply::Content(format!("{{\"pass\": {pass}, \"reason\": \"checked\"}}"))
    })
    .unwrap();
    let cfg = LlmConfig::new(&srv.base_url, "judge-model");
    let client = Client::new(cfg, Some("sk-test".into())).unwrap();
    let v = client
        .judge(&question("src/main.rs\n"), &allow_all)
        .unwrap();
    assert!(v.pass);
    assert_eq!(v.reason, "checked");
    let v = client.judge(&question("README.md\n"), &allow_all).unwrap();
    assert!(!v.pass);
    let got = srv.received();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(got[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(got[0].body["model"], "judge-model");
    assert_eq!(got[0].body["response_format"]["type"], "json_object");
    let user = got[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("list the Rust files"), "{user}");
    assert!(user.contains("mentions at least one .rs file"), "{user}");
}

#[test]
fn without_a_key_no_authorization_header_is_sent() {
    let srv = FakeServer::start(|_| Reply::Content("{\"pass\": true}".into())).unwrap();
    let client = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    client.judge(&question("x"), &allow_all).unwrap();
    assert_eq!(srv.received()[0].authorization, None);
}

#[test]
fn a_missing_key_variable_is_a_clear_error() {
    let mut cfg = LlmConfig::new("http://127.0.0.1:9/v1", "m");
    cfg.api_key_env = Some("SAFESH_LLM_TEST_SURELY_UNSET".into());
    let e = Client::from_env(cfg).unwrap_err();
    assert_eq!(
        e,
        LlmError::MissingKey {
            env: "SAFESH_LLM_TEST_SURELY_UNSET".into()
        }
    );
    assert!(e.to_string().contains("api_key_env"));
}

#[test]
fn the_egress_hook_sees_the_text_and_a_refusal_sends_nothing() {
    let srv = FakeServer::start(|_| Reply::Content("{\"pass\": true}".into())).unwrap();
    let client = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    let refuse = |o: &Outbound<'_>| {
        assert_eq!(o.host, "127.0.0.1");
        if o.content.contains("SECRET-VALUE") {
            Err("the output is labelled secret".to_string())
        } else {
            Ok(())
        }
    };
    let e = client
        .judge(&question("token SECRET-VALUE"), &refuse)
        .unwrap_err();
    assert!(
        matches!(e, LlmError::Refused(ref m) if m.contains("secret")),
        "{e}"
    );
    assert!(srv.received().is_empty(), "nothing may reach the server");
    // The benign neighbour goes through the same hook.
    assert!(client.judge(&question("main.rs"), &refuse).unwrap().pass);
    assert_eq!(srv.received().len(), 1);
}

#[test]
fn http_401_and_500_are_mapped_to_clear_errors() {
    let srv = FakeServer::start(|r| {
        if r.authorization.is_none() {
            Reply::Raw(
                401,
                r#"{"error":{"message":"Incorrect API key provided"}}"#.into(),
            )
        } else {
            Reply::Raw(500, "upstream exploded".into())
        }
    })
    .unwrap();
    let anon = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    let e = anon.judge(&question("x"), &allow_all).unwrap_err();
    assert!(
        matches!(e, LlmError::Unauthorized { status: 401, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("Incorrect API key"), "{e}");
    let keyed = Client::new(LlmConfig::new(&srv.base_url, "m"), Some("k".into())).unwrap();
    let e = keyed.judge(&question("x"), &allow_all).unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 500, .. }), "{e}");
    assert!(e.to_string().contains("upstream exploded"), "{e}");
}

#[test]
fn a_slow_server_times_out() {
    let srv =
        FakeServer::start(|_| Reply::Slow(Duration::from_millis(1500), "{\"pass\": true}".into()))
            .unwrap();
    let mut cfg = LlmConfig::new(&srv.base_url, "m");
    cfg.timeout_ms = 200;
    let client = Client::new(cfg, None).unwrap();
    let e = client.judge(&question("x"), &allow_all).unwrap_err();
    assert_eq!(e, LlmError::Timeout { ms: 200 });
}

#[test]
fn nothing_listening_is_a_connect_error() {
    // Bind then drop: the port is (almost surely) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Client::new(
        LlmConfig::new(format!("http://127.0.0.1:{port}/v1"), "m"),
        None,
    )
    .unwrap();
    let e = client.judge(&question("x"), &allow_all).unwrap_err();
    assert!(matches!(e, LlmError::Connect(_)), "{e}");
}

#[test]
fn a_reply_without_a_verdict_never_passes() {
    let srv = FakeServer::start(|_| Reply::Content("Looks great to me!".into())).unwrap();
    let client = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    let e = client.judge(&question("x"), &allow_all).unwrap_err();
    assert!(matches!(e, LlmError::BadReply(_)), "{e}");
    let srv = FakeServer::start(|_| Reply::Raw(200, "<html>proxy login</html>".into())).unwrap();
    let client = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    assert!(matches!(
        client.judge(&question("x"), &allow_all),
        Err(LlmError::BadReply(_))
    ));
}

#[test]
fn redirects_are_not_followed() {
    let srv = FakeServer::start(|_| Reply::Raw(302, String::new())).unwrap();
    let client = Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap();
    let e = client.judge(&question("x"), &allow_all).unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 302, .. }), "{e}");
}

#[test]
fn no_endpoint_is_not_configured() {
    assert_eq!(
        Client::new(LlmConfig::new("", "m"), None).unwrap_err(),
        LlmError::NotConfigured
    );
}
