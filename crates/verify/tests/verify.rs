//! The assertion engine over a view like the runtime's: redacted texts, a
//! payload, tags, a context lookup and file reads through a path check.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use safesh_llm::fake::{FakeServer, Reply};
use safesh_llm::{Client, LlmConfig, Outbound};
use safesh_verify::{
    Assertion, FileRead, LlmJudge, Options, TextView, Verification, View, parse_short, validate,
    verify, verify_with,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const SECRET: &str = "sk-live-4f9a8b7c6d5e";

/// A step's result as the model sees it: every text passes through `redact`.
#[derive(Default)]
struct Step {
    stdout: String,
    stderr: String,
    exit: Option<i32>,
    payload: Option<Value>,
    tags: BTreeMap<String, String>,
    context: BTreeMap<String, Value>,
    /// Files inside the roots (raw contents: the read redacts them).
    files: BTreeMap<String, String>,
    intent: Option<String>,
}

fn redact(s: &str) -> String {
    s.replace(SECRET, "[secret]")
}

impl View for Step {
    fn stdout(&self) -> &str {
        &self.stdout
    }
    fn stderr(&self) -> &str {
        &self.stderr
    }
    fn exit_code(&self) -> Option<i32> {
        self.exit
    }
    fn payload(&self) -> Option<&Value> {
        self.payload.as_ref()
    }
    fn tag(&self, k: &str) -> Option<String> {
        self.tags.get(k).cloned()
    }
    fn context(&self, scope: &str, key: &str) -> Result<Option<Value>, String> {
        Ok(self.context.get(&format!("{scope}.{key}")).cloned())
    }
    fn read_file(&self, path: &str) -> FileRead {
        if path.starts_with('/') {
            return FileRead::Refused("PATH_VIOLATION: outside the read roots".into());
        }
        match self.files.get(path) {
            Some(t) => FileRead::Text(redact(t)),
            None => FileRead::Missing,
        }
    }
    fn intent(&self) -> Option<&str> {
        self.intent.as_deref()
    }
    fn redact(&self, text: &str) -> String {
        redact(text)
    }
}

fn step(stdout: &str) -> Step {
    Step {
        stdout: redact(stdout),
        exit: Some(0),
        ..Step::default()
    }
}

fn a(v: Value) -> Assertion {
    serde_json::from_value(v).unwrap()
}

fn each(v: &Verification) -> Vec<bool> {
    v.results.iter().map(|r| r.passed).collect()
}

fn check(view: &dyn View, asserts: Value) -> Verification {
    let list: Vec<Assertion> = serde_json::from_value(asserts).unwrap();
    validate(&list).unwrap();
    verify(view, &list)
}

#[test]
fn todays_assertions_keep_their_results_and_fields() {
    // The server's request shape (`value`, `pattern`) deserializes unchanged.
    let v = check(
        &TextView::new("a\nb\nc\n"),
        json!([
            {"type": "not_empty"}, {"type": "contains", "value": "b"},
            {"type": "count_gte", "value": 3}, {"type": "matches_regex", "value": "^a$"},
            {"type": "count_gte", "value": 4}
        ]),
    );
    assert!(!v.passed);
    assert_eq!(each(&v), [true, true, true, false, false]);
    let out = serde_json::to_value(&v).unwrap();
    assert_eq!(out["results"][0]["type"], "not_empty");
    assert_eq!(out["results"][1]["detail"], "looked for \"b\"");
    assert_eq!(out["results"][4]["detail"], "3 non-empty lines, wanted ≥ 4");
    assert_eq!(out["results"][2]["actual"], "a\nb\nc\n");
    assert!(out.get("warnings").is_none());
    let p = a(json!({"type": "matches_regex", "pattern": "b"}));
    assert_eq!(p.expected, Some(json!("b")));
}

#[test]
fn not_empty_fails_on_empty_text_empty_array_empty_object_and_null() {
    for empty in ["", "  \n\t", "[]", "{}", "null", " [ ] \n"] {
        let v = check(&step(empty), json!([{"type": "not_empty"}]));
        assert!(!v.passed, "{empty:?} must count as empty");
    }
    for full in ["0", "x", "[1]", "{\"a\":1}", "false"] {
        assert!(
            check(&step(full), json!([{"type": "not_empty"}])).passed,
            "{full:?}"
        );
    }
    let mut s = step("");
    s.payload = Some(json!({"items": [], "name": "x"}));
    let v = check(
        &s,
        json!([{"type": "not_empty", "target": "payload.items"}, {"type": "not_empty", "target": "payload.name"}]),
    );
    assert_eq!(each(&v), [false, true]);
}

#[test]
fn count_gte_counts_array_elements_else_non_empty_lines() {
    // One line, three elements.
    let v = check(
        &step("[\"a\",\"b\",\"c\"]"),
        json!([{"type": "count_gte", "expected": 3}]),
    );
    assert!(v.passed, "{v:?}");
    assert_eq!(v.results[0].detail, "3 elements, wanted ≥ 3");
    // Blank lines do not count.
    let v = check(
        &step("a\n\n  \nb\n"),
        json!([{"type": "count_gte", "expected": 3}]),
    );
    assert!(!v.passed);
    assert_eq!(v.results[0].detail, "2 non-empty lines, wanted ≥ 3");
    // A payload array, and a numeric string as the count.
    let mut s = step("");
    s.payload = Some(json!({"prs": [1, 2]}));
    let v = check(
        &s,
        json!([{"type": "count_gte", "target": "payload.prs", "expected": "2"}]),
    );
    assert!(v.passed);
}

#[test]
fn contains_and_regex_on_every_text_target() {
    let mut s = step("built ok\n");
    s.stderr = "warning: unused variable\n".into();
    s.tags.insert("env".into(), "staging".into());
    s.context
        .insert("session.files".into(), json!(["a.rs", "b.rs"]));
    let v = check(
        &s,
        json!([
            {"type": "contains", "target": "stderr", "expected": "warning"},
            {"type": "contains", "target": "stdout", "expected": "warning"},
            {"type": "matches_regex", "target": "meta.tags.env", "expected": "^stag"},
            {"type": "contains", "target": "context.session.files", "expected": "b.rs"},
            {"type": "count_gte", "target": "context.session.files", "expected": 2},
            {"type": "contains", "target": "context.session.missing", "expected": "x"},
            {"type": "contains", "target": "meta.tags.nope", "expected": "x"}
        ]),
    );
    assert_eq!(each(&v), [true, false, true, true, true, false, false]);
    assert_eq!(v.results[5].detail, "context.session.missing is not set");
    assert_eq!(v.results[5].actual, None);
}

#[test]
fn json_schema_validates_the_output_or_the_payload() {
    let schema = json!({"type": "array", "items": {"type": "object", "required": ["title"]}});
    let ok = check(
        &step("[{\"title\": \"fix\"}]"),
        json!([{"type": "json_schema", "expected": schema}]),
    );
    assert!(ok.passed, "{ok:?}");
    let bad = check(
        &step("[{\"name\": \"fix\"}]"),
        json!([{"type": "json_schema", "expected": schema}]),
    );
    assert!(!bad.passed);
    assert!(
        bad.results[0].detail.contains("/0"),
        "{}",
        bad.results[0].detail
    );
    assert!(
        bad.results[0].detail.contains("title"),
        "{}",
        bad.results[0].detail
    );
    let text = check(
        &step("not json"),
        json!([{"type": "json_schema", "expected": schema}]),
    );
    assert!(text.results[0].detail.contains("not JSON"));
    // The schema may be given as a JSON string (the short form's and YAML's way).
    let s = check(
        &step("{\"n\": 3}"),
        json!([{"type": "json_schema", "expected": "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}"}]),
    );
    assert!(s.passed);
}

#[test]
fn a_remote_ref_is_never_fetched() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let list = vec![a(json!({"type": "json_schema",
        "expected": {"$ref": format!("http://127.0.0.1:{port}/schema.json")}}))];
    let e = validate(&list).unwrap_err();
    assert_eq!((e.index, e.field), (0, "expected"));
    assert!(e.message.contains("bad schema"), "{e}");
    assert!(
        listener.accept().is_err(),
        "the schema's $ref reached the network"
    );
    // A local $ref (inside the schema) is fine.
    let local = vec![a(json!({"type": "json_schema", "expected": {
        "$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}}))];
    assert!(verify(&step("3"), &local).passed);
    assert!(!verify(&step("\"3\""), &local).passed);
}

#[test]
fn exit_code_and_files() {
    let mut s = step("");
    s.exit = Some(2);
    s.files
        .insert("out/report.md".into(), "# Report\n## Summary\n".into());
    let v = check(
        &s,
        json!([
            {"type": "exit_code", "expected": 2},
            {"type": "exit_code"},
            {"type": "file_exists", "target": "file:out/report.md"},
            {"type": "file_exists", "expected": "out/missing.md"},
            {"type": "file_contains", "target": "file:out/report.md", "expected": "## Summary"},
            {"type": "file_contains", "target": "file:out/report.md", "expected": "## Details"},
            {"type": "file_exists", "target": "file:/etc/passwd"}
        ]),
    );
    assert_eq!(each(&v), [true, false, true, false, true, false, false]);
    assert_eq!(v.results[1].detail, "exit status 2, wanted 0");
    assert_eq!(v.results[3].detail, "no such file: out/missing.md");
    assert!(
        v.results[6].detail.contains("PATH_VIOLATION"),
        "{}",
        v.results[6].detail
    );
}

#[test]
fn an_assertion_is_no_oracle_on_a_secret() {
    let mut s = step(&format!("token={SECRET}\n"));
    s.files.insert(".env".into(), format!("API_KEY={SECRET}\n"));
    let guesses = json!([
        {"type": "contains", "expected": SECRET},
        {"type": "matches_regex", "expected": "sk-live-4f"},
        {"type": "file_contains", "target": "file:.env", "expected": SECRET},
        {"type": "file_contains", "target": "file:.env", "expected": "sk-live-4"}
    ]);
    let v = check(&s, guesses);
    assert_eq!(each(&v), [false, false, false, false], "{v:?}");
    // `actual` never shows the secret.
    for r in &v.results {
        let actual = serde_json::to_string(&r.actual).unwrap();
        assert!(
            !actual.contains(SECRET),
            "actual shows the secret: {actual}"
        );
    }
    // The detail quotes the caller's own guess as written: redacting a right
    // guess differently from a wrong one would itself be the oracle.
    assert_eq!(v.results[0].detail, format!("looked for {SECRET:?}"));
    let wrong = check(
        &s,
        json!([{"type": "contains", "expected": "sk-live-0000"}]),
    );
    assert_eq!(wrong.results[0].passed, v.results[0].passed);
    assert_eq!(wrong.results[0].actual, v.results[0].actual);
    assert_eq!(wrong.results[0].detail, "looked for \"sk-live-0000\"");
    // The benign neighbours: what the model may see still verifies.
    let v = check(
        &s,
        json!([
            {"type": "contains", "expected": "token="},
            {"type": "file_contains", "target": "file:.env", "expected": "API_KEY="}
        ]),
    );
    assert!(v.passed, "{v:?}");
}

#[test]
fn actual_is_capped_and_redacted_again() {
    /// A view whose text is not pre-redacted: `actual` still is.
    struct Leaky(String);
    impl View for Leaky {
        fn stdout(&self) -> &str {
            &self.0
        }
        fn redact(&self, t: &str) -> String {
            redact(t)
        }
    }
    let long = format!("{SECRET} {}", "x".repeat(5000));
    let v = verify(&Leaky(long), &[Assertion::new("not_empty", None)]);
    let actual = v.results[0].actual.as_ref().unwrap().as_str().unwrap();
    assert!(actual.len() < 300, "{}", actual.len());
    assert!(actual.starts_with("[secret] xxx"), "{actual}");
    assert!(actual.ends_with("(5009 bytes)"), "{actual}");
}

#[test]
fn bad_assertions_are_rejected_before_anything_runs_naming_index_and_field() {
    let cases = [
        (json!({"type": "is_nice"}), "type", "unknown assertion type"),
        (
            json!({"type": "matches_regex", "expected": "(unclosed"}),
            "expected",
            "bad regex",
        ),
        (
            json!({"type": "json_schema", "expected": {"type": "no-such-type"}}),
            "expected",
            "bad schema",
        ),
        (
            json!({"type": "json_schema", "expected": "{nope"}),
            "expected",
            "not JSON",
        ),
        (json!({"type": "contains"}), "expected", "needs `expected`"),
        (
            json!({"type": "contains", "expected": ""}),
            "expected",
            "never fail",
        ),
        (
            json!({"type": "count_gte", "expected": -1}),
            "expected",
            "non-negative",
        ),
        (
            json!({"type": "contains", "target": "context.global.k", "expected": "x"}),
            "target",
            "scope",
        ),
        (
            json!({"type": "exit_code", "target": "stdout"}),
            "target",
            "exit status",
        ),
        (
            json!({"type": "file_contains", "expected": "x"}),
            "target",
            "file:<path>",
        ),
        (
            json!({"type": "llm_judge", "expected": 3}),
            "expected",
            "text",
        ),
    ];
    for (bad, field, says) in cases {
        let list = vec![a(json!({"type": "not_empty"})), a(bad.clone())];
        let e = validate(&list).unwrap_err();
        assert_eq!(e.index, 1, "{bad}");
        assert_eq!(e.field, field, "{bad}: {e}");
        assert!(e.message.contains(says), "{bad}: {e}");
        assert!(
            e.to_string().starts_with(&format!("verify[1].{field}: ")),
            "{e}"
        );
        // Evaluated anyway (a caller that skipped validate): a failure, never a pass.
        let v = verify(&step("x"), &list);
        assert!(
            !v.passed && v.results[1].detail.starts_with("invalid assertion"),
            "{v:?}"
        );
    }
}

#[test]
fn fail_fast_skips_the_rest() {
    let list: Vec<Assertion> = parse_short(&["contains:zzz", "not_empty", "llm_judge"]).unwrap();
    let opts = Options {
        fail_fast: true,
        ..Options::default()
    };
    let v = verify_with(&step("x"), &list, &opts, None);
    assert!(!v.passed);
    assert!(v.results[1].skipped && v.results[2].skipped);
    let v = verify_with(&step("x"), &list, &Options::default(), None);
    assert!(!v.results[1].skipped);
    assert!(v.results[1].passed);
}

#[test]
fn llm_judge_without_an_endpoint_is_unavailable_and_fails_unless_not_required() {
    let list = parse_short(&["not_empty", "llm_judge:mentions a file"]).unwrap();
    let v = verify(&step("a.rs"), &list);
    assert!(!v.passed, "unavailable counts as failed");
    assert!(v.results[1].unavailable);
    assert!(v.results[1].detail.starts_with("unavailable"));
    // The same through the LLM judge built from no endpoint.
    let judge = LlmJudge::from_result(
        Client::new(LlmConfig::new("", "m"), None),
        |_: &Outbound<'_>| Ok(()),
    );
    let v = verify_with(&step("a.rs"), &list, &Options::default(), Some(&judge));
    assert!(!v.passed && v.results[1].unavailable, "{v:?}");
    // Not required: left out of `passed`, reported in warnings — never a silent pass.
    let opts = Options {
        llm_judge_required: false,
        ..Options::default()
    };
    let v = verify_with(&step("a.rs"), &list, &opts, Some(&judge));
    assert!(v.passed, "{v:?}");
    assert!(!v.results[1].passed && v.results[1].unavailable);
    assert_eq!(v.warnings.len(), 1);
    assert!(
        v.warnings[0].contains("verify[1] llm_judge not evaluated"),
        "{:?}",
        v.warnings
    );
    let out = serde_json::to_value(&v).unwrap();
    assert_eq!(out["results"][1]["unavailable"], true);
    // A failing neighbour still fails the whole.
    let list = parse_short(&["contains:zzz", "llm_judge"]).unwrap();
    assert!(!verify_with(&step("a.rs"), &list, &opts, Some(&judge)).passed);
}

#[test]
fn llm_judge_asks_a_real_endpoint_and_the_flow_check_keeps_secrets_home() {
    let srv = FakeServer::start(|r| {
        let user = r.body["messages"][1]["content"].as_str().unwrap_or("");
        let pass = user.contains(".rs") && user.contains("Intent: list sources");
        Reply::Content(format!(
            "```json\n{{\"pass\": {pass}, \"reason\": \"saw it\"}}\n```"
        ))
    })
    .unwrap();
    // The caller's flow check: here, output holding the redaction mark is secret.
    let egress = |o: &Outbound<'_>| {
        if o.content.contains("[secret]") {
            Err("FLOW_VIOLATION: the output is labelled secret".to_string())
        } else {
            Ok(())
        }
    };
    let judge = LlmJudge::new(
        Client::new(LlmConfig::new(&srv.base_url, "m"), None).unwrap(),
        egress,
    );
    let list = parse_short(&["llm_judge:lists Rust files"]).unwrap();
    let mut s = step("src/main.rs\nsrc/lib.rs\n");
    s.intent = Some("list sources".into());
    let v = verify_with(&s, &list, &Options::default(), Some(&judge));
    assert!(v.passed, "{v:?}");
    assert_eq!(v.results[0].detail, "judge: saw it");
    let mut s2 = step("README.md\n");
    s2.intent = Some("list sources".into());
    assert!(!verify_with(&s2, &list, &Options::default(), Some(&judge)).passed);
    assert_eq!(srv.received().len(), 2);
    // A secret output is not sent: the assertion fails, the server sees nothing.
    let mut s3 = step(&format!("src/a.rs {SECRET}\n"));
    s3.intent = Some("list sources".into());
    let v = verify_with(&s3, &list, &Options::default(), Some(&judge));
    assert!(!v.passed);
    assert!(
        v.results[0].detail.contains("not sent"),
        "{}",
        v.results[0].detail
    );
    assert!(
        !v.results[0].unavailable,
        "a refusal is a failure, not 'unavailable'"
    );
    assert_eq!(srv.received().len(), 2);
}

#[test]
fn payload_paths_and_missing_payloads() {
    let mut s = step("");
    s.payload = Some(json!({"items": [{"name": "a"}, {"name": "b"}]}));
    let v = check(
        &s,
        json!([
            {"type": "contains", "target": "payload.items.1.name", "expected": "b"},
            {"type": "count_gte", "target": "payload.items", "expected": 2},
            {"type": "not_empty", "target": "payload.items.5"},
            {"type": "not_empty", "target": "payload.nothing.here"}
        ]),
    );
    assert_eq!(each(&v), [true, true, false, false]);
    assert_eq!(v.results[3].detail, "the payload has no nothing");
    let v = check(
        &step("plain"),
        json!([{"type": "not_empty", "target": "payload"}]),
    );
    assert!(!v.passed);
    assert!(v.results[0].detail.starts_with("no JSON payload"));
}

#[test]
fn failed_results_carry_the_message() {
    let v = check(
        &step("x"),
        json!([{"type": "contains", "expected": "## ", "message": "Report must contain markdown headers"},
               {"type": "contains", "expected": "x", "message": "unused when it passes"}]),
    );
    assert_eq!(
        v.results[0].message.as_deref(),
        Some("Report must contain markdown headers")
    );
    assert_eq!(v.results[1].message, None);
}
