//! Sessions: persistence, isolation, limits, expiry, timeouts, input, verify.

use crate::{Env, exec};
use safesh_server::ServerError;
use safesh_server::service::{SessionEndParams, SessionStartParams, SessionUpdateParams};
use serde_json::json;
use std::time::{Duration, Instant};

fn start(s: &safesh_server::Server, cwd: Option<&std::path::Path>) -> String {
    let v = s
        .session_start(SessionStartParams {
            cwd: cwd.map(|c| c.to_string_lossy().into_owned()),
            env: None,
            ..SessionStartParams::default()
        })
        .unwrap();
    v["session"].as_str().unwrap().to_string()
}

#[test]
fn state_persists_between_calls() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, Some(&env.proj()));
    let v = exec(
        &s,
        json!({"script": "x=5; f() { echo fn$1; }; cd sub; export E=e1", "session": id}),
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = exec(
        &s,
        json!({"script": "echo $x; f 1; pwd; echo $E", "session": id}),
    );
    let want = format!("5\nfn1\n{}/sub\ne1\n", env.proj().display());
    assert_eq!(v["output"], want.as_str());
    assert_eq!(v["session"], id.as_str());
}

#[test]
fn sessions_are_isolated_and_one_offs_are_fresh() {
    let env = Env::new();
    let s = env.server();
    let a = start(&s, None);
    let b = start(&s, None);
    exec(&s, json!({"script": "x=A", "session": a}));
    exec(&s, json!({"script": "x=B", "session": b}));
    assert_eq!(
        exec(&s, json!({"script": "echo $x", "session": a}))["output"],
        "A\n"
    );
    assert_eq!(
        exec(&s, json!({"script": "echo $x", "session": b}))["output"],
        "B\n"
    );
    exec(&s, json!({"script": "y=1"}));
    assert_eq!(
        exec(&s, json!({"script": "echo ${y:-unset}"}))["output"],
        "unset\n"
    );
}

#[test]
fn update_changes_cwd_and_env() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, Some(&env.proj()));
    let mut e = std::collections::BTreeMap::new();
    e.insert("GREETING".to_string(), "hello".to_string());
    s.session_update(SessionUpdateParams {
        session: id.clone(),
        cwd: Some(env.proj().join("sub").to_string_lossy().into_owned()),
        env: Some(e),
        ..SessionUpdateParams::default()
    })
    .unwrap();
    let v = exec(&s, json!({"script": "pwd; echo $GREETING", "session": id}));
    assert_eq!(
        v["output"],
        format!("{}/sub\nhello\n", env.proj().display()).as_str()
    );
    let bad = s.session_update(SessionUpdateParams {
        session: id,
        cwd: Some("/no/such/dir".into()),
        env: None,
        ..SessionUpdateParams::default()
    });
    assert!(matches!(bad, Err(ServerError::BadParams(_))));
}

#[test]
fn end_removes_the_session_and_its_temp_dir() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, None);
    let tmp = exec(&s, json!({"script": "echo $TMPDIR", "session": id}))["output"]
        .as_str()
        .unwrap()
        .trim()
        .to_string();
    assert!(std::path::Path::new(&tmp).is_dir());
    s.session_end(SessionEndParams {
        session: id.clone(),
        ..SessionEndParams::default()
    })
    .unwrap();
    assert!(
        !std::path::Path::new(&tmp).exists(),
        "temp dir removed with the session"
    );
    let r = s.exec(
        &crate::params(json!({"script": "true", "session": id})),
        &|_| {},
    );
    assert!(matches!(r, Err(ServerError::UnknownSession(_))));
}

#[test]
fn live_sessions_are_limited() {
    let mut env = Env::new();
    env.settings.max_sessions = 2;
    let s = env.server();
    start(&s, None);
    let b = start(&s, None);
    let r = s.session_start(SessionStartParams::default());
    let err = r.unwrap_err();
    assert!(matches!(err, ServerError::TooManySessions(2)));
    assert!(err.to_string().contains("session_end"), "{err}");
    s.session_end(SessionEndParams {
        session: b,
        ..SessionEndParams::default()
    })
    .unwrap();
    start(&s, None);
}

#[test]
fn idle_sessions_expire() {
    let mut env = Env::new();
    env.settings.idle = Duration::from_millis(100);
    let s = env.server();
    let id = start(&s, None);
    exec(&s, json!({"script": "sleep 30 &", "session": id}));
    std::thread::sleep(Duration::from_millis(250));
    let r = s.exec(
        &crate::params(json!({"script": "true", "session": id})),
        &|_| {},
    );
    assert!(matches!(r, Err(ServerError::UnknownSession(_))), "{r:?}");
    assert!(s.sessions.is_empty());
    // Its job ended with it.
    let mine = safesh_server::service::JobListParams {
        session: Some(id.clone()),
        ..Default::default()
    };
    let job = s.job_list(mine)["jobs"][0]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let v = s
        .job_follow(safesh_server::service::JobOutputParams {
            job_id: job,
            since: None,
            max_bytes: None,
            timeout_ms: Some(10_000),
            session: Some(id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(v["status"], "killed", "{v}");
}

#[test]
fn timeout_stops_the_request() {
    let env = Env::new();
    let s = env.server();
    let t = Instant::now();
    let v = exec(
        &s,
        json!({"script": "echo before; sleep 20; echo after", "timeout_ms": 300}),
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(v["exit_code"], 124);
    assert_eq!(v["error"]["code"], "TIMEOUT");
    assert_eq!(v["error"]["details"]["rule"], "timeout_ms");
    assert_eq!(v["error"]["details"]["reason"], "timeout");
    assert_eq!(v["stopped"], "timeout");
    assert!(
        v["output"].as_str().unwrap().starts_with("before\n"),
        "partial output kept: {v}"
    );
}

#[test]
fn a_cancelled_request_says_so_and_is_not_a_timeout() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, None);
    let slot: std::sync::Arc<std::sync::Mutex<Option<safesh_core::Interrupter>>> =
        Default::default();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s2, slot2, done2, id2) = (s.clone(), slot.clone(), done.clone(), id.clone());
    let h = std::thread::spawn(move || {
        let p =
            crate::params(json!({"script": "echo before; sleep 30; echo after", "session": id2}));
        let v = s2
            .exec(&p, &move |i| *slot2.lock().unwrap() = Some(i))
            .unwrap();
        done2.store(true, std::sync::atomic::Ordering::SeqCst);
        v
    });
    // Like the MCP face: interrupt until the request has ended (an interrupt
    // before it started would be cleared by it).
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        if let Some(i) = slot.lock().unwrap().as_ref() {
            i.interrupt();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let v = h.join().unwrap();
    assert_eq!(v["error"]["code"], "EXECUTION_ERROR", "{v}");
    assert_eq!(v["error"]["details"]["rule"], "cancelled");
    assert_eq!(v["error"]["details"]["reason"], "cancelled");
    assert_eq!(v["stopped"], "cancelled");
    assert!(!v["output"].as_str().unwrap().contains("after"), "{v}");
    // The session works on afterwards, with no leftover interrupt.
    let v = exec(&s, json!({"script": "echo again", "session": id}));
    assert_eq!(v["output"], "again\n", "{v}");
    assert!(v.get("stopped").is_none());
}

#[test]
fn fresh_calls_reuse_only_an_empty_temp_dir() {
    let env = Env::new();
    let s = env.server();
    let v = exec(
        &s,
        json!({"script": "echo secret > $TMPDIR/f; echo $TMPDIR"}),
    );
    let first = v["output"].as_str().unwrap().trim().to_string();
    for _ in 0..3 {
        let v = exec(&s, json!({"script": "ls -A $TMPDIR; echo $TMPDIR"}));
        let out = v["output"].as_str().unwrap();
        assert_eq!(out.lines().count(), 1, "an empty temp dir: {v}");
        assert_ne!(out.trim(), first, "a used temp dir is not handed on");
    }
    assert!(
        !std::path::Path::new(&first).exists(),
        "the used temp dir was removed"
    );
}

#[test]
fn input_feeds_stdin_and_modes_select_streams() {
    let env = Env::new();
    let s = env.server();
    let v = exec(
        &s,
        json!({"script": "cat; echo err >&2", "input": "hello\n", "output_mode": "separate"}),
    );
    assert_eq!(v["stdout"], "hello\n");
    assert_eq!(v["stderr"], "err\n");
    let v = exec(
        &s,
        json!({"command": "printf", "args": ["%s|", "a b", "$x", "'q'"]}),
    );
    assert_eq!(v["output"], "a b|$x|'q'|");
}

#[test]
fn refusal_is_in_the_result() {
    let env = Env::new();
    let s = env.server();
    let v = exec(&s, json!({"script": "echo hi; sudo ls"}));
    assert_eq!(v["exit_code"], 126);
    assert_eq!(v["error"]["code"], "BLOCKED");
    assert!(v["error"]["suggestion"].is_string());
}

#[test]
fn intent_is_echoed_and_assertions_checked() {
    let env = Env::new();
    let s = env.server();
    let v = exec(
        &s,
        json!({"script": "printf 'a\\nb\\nc\\n'", "intent": "list things", "verify": [
            {"type": "not_empty"}, {"type": "contains", "value": "b"},
            {"type": "count_gte", "value": 3}, {"type": "matches_regex", "value": "^a$"},
            {"type": "count_gte", "value": 4}
        ]}),
    );
    assert_eq!(v["intent"], "list things");
    let r = &v["verification"];
    assert_eq!(r["passed"], false);
    let each: Vec<bool> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(each, [true, true, true, false, false]);
    // The command succeeded, its verification failed.
    assert_eq!(v["exit_code"], 1, "{v}");
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED", "{v}");
    assert_eq!(r["results"][4]["actual"], "a\nb\nc\n", "{v}");
}

#[test]
fn a_longer_timeout_ms_overrides_the_request_limit() {
    let mut env = Env::new();
    env.settings.limits.script_timeout_ms = 200;
    let s = env.server();
    let v = exec(&s, json!({"script": "sleep 0.5; echo ok"}));
    assert_eq!(
        v["error"]["code"], "TIMEOUT",
        "the config's limit applies: {v}"
    );
    let v = exec(
        &s,
        json!({"script": "sleep 0.5; echo ok", "timeout_ms": 3000}),
    );
    assert_eq!(v["output"], "ok\n", "{v}");
    env.settings.max_timeout_ms = 100;
    let s = env.server();
    let t = Instant::now();
    let v = exec(&s, json!({"script": "sleep 5", "timeout_ms": 60000}));
    assert_eq!(v["exit_code"], 124);
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "timeout_ms is capped by max_timeout_ms"
    );
}

#[test]
fn a_session_cannot_start_or_move_outside_the_read_roots() {
    let env = Env::new();
    let s = env.server();
    let outside = tempfile::tempdir().unwrap();
    let bad = s.session_start(SessionStartParams {
        cwd: Some(outside.path().to_string_lossy().into_owned()),
        env: None,
        conn: String::new(),
    });
    match bad {
        Err(ServerError::BadParams(m)) => assert!(m.contains("outside the read roots"), "{m}"),
        other => panic!("expected INVALID_PARAMS, got {other:?}"),
    }
    let id = start(&s, Some(&env.proj()));
    let bad = s.session_update(SessionUpdateParams {
        session: id,
        cwd: Some(outside.path().to_string_lossy().into_owned()),
        env: None,
        conn: String::new(),
    });
    assert!(matches!(bad, Err(ServerError::BadParams(_))), "{bad:?}");
}

/// Issue 15 item 8: a cancel reaches a request still parsing (and pre-checking)
/// a huge script: it ends as cancelled without running any of it, instead of
/// holding a core until the parse is done, and the session works on.
#[test]
fn a_cancelled_request_stops_while_parsing_a_huge_script() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, None);
    // ~3 MB that takes seconds to parse; nothing in it would print before the end.
    let script = format!(
        "if false; then\n{}fi\necho after\n",
        "echo a\n".repeat(420_000)
    );
    let slot: std::sync::Arc<std::sync::Mutex<Option<safesh_core::Interrupter>>> =
        Default::default();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s2, slot2, done2, id2) = (s.clone(), slot.clone(), done.clone(), id.clone());
    let h = std::thread::spawn(move || {
        let p = crate::params(json!({"script": script, "session": id2}));
        let v = s2
            .exec(&p, &move |i| *slot2.lock().unwrap() = Some(i))
            .unwrap();
        done2.store(true, std::sync::atomic::Ordering::SeqCst);
        v
    });
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        if let Some(i) = slot.lock().unwrap().as_ref() {
            i.interrupt();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let v = h.join().unwrap();
    assert_eq!(v["error"]["details"]["rule"], "cancelled", "{v}");
    assert!(!v["output"].as_str().unwrap_or("").contains("after"), "{v}");
    // Benign control: the session works on.
    let v = exec(&s, json!({"script": "echo again", "session": id}));
    assert_eq!(v["output"], "again\n", "{v}");
}
