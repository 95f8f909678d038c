//! Background jobs: lifecycle, offsets across the ring boundary, kill, session end.

use crate::Env;
use safesh_server::service::{
    JobKillParams, JobOutputParams, JobStartParams, SessionEndParams, SessionStartParams,
};
use std::time::{Duration, Instant};

fn start(s: &safesh_server::Server, script: &str, session: Option<String>) -> String {
    let v = s
        .job_start(JobStartParams {
            script: Some(script.into()),
            session,
            ..JobStartParams::default()
        })
        .unwrap();
    assert!(v["pid"].is_null());
    v["job_id"].as_str().unwrap().to_string()
}

fn out(id: &str, since: u64, max: Option<u64>) -> JobOutputParams {
    JobOutputParams {
        job_id: id.into(),
        since: Some(since),
        max_bytes: max,
        timeout_ms: None,
    }
}

#[test]
fn lifecycle() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, "echo a; sleep 0.3; echo b; exit 3", None);
    let listed = s.job_list();
    assert_eq!(listed["jobs"][0]["job_id"], id.as_str());
    assert_eq!(listed["jobs"][0]["status"], "running");
    let v = s.job_follow(out(&id, 0, None)).unwrap();
    assert_eq!(v["status"], "exited");
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["output"], "a\nb\n");
    assert_eq!(v["next_offset"], 4);
    let v = s.job_output(out(&id, 2, None)).unwrap();
    assert_eq!(v["data"], "b\n");
    assert_eq!(v["next_offset"], 4);
    let listed = s.job_list();
    assert_eq!(listed["jobs"][0]["exit_code"], 3);
    assert!(listed["jobs"][0]["runtime_ms"].as_u64().unwrap() >= 250);
    assert_eq!(
        listed["jobs"][0]["command"],
        "echo a; sleep 0.3; echo b; exit 3"
    );
}

#[test]
fn offsets_work_across_the_ring_boundary() {
    let mut env = Env::new();
    env.settings.job_ring = 64;
    let s = env.server();
    let id = start(&s, "seq 1 3000", None);
    s.job_follow(out(&id, 0, None)).unwrap();
    let expected: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    let mut got = String::new();
    let mut off = 0;
    loop {
        let v = s.job_output(out(&id, off, Some(1000))).unwrap();
        got.push_str(v["data"].as_str().unwrap());
        let next = v["next_offset"].as_u64().unwrap();
        if next == off {
            break;
        }
        off = next;
    }
    assert_eq!(
        got, expected,
        "bytes older than the ring come from the log file"
    );
    let tail = s
        .job_output(out(&id, expected.len() as u64 - 10, None))
        .unwrap();
    assert_eq!(tail["data"], &expected[expected.len() - 10..]);
    let log = std::fs::read_to_string(tail["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log, expected);
}

#[test]
fn kill_stops_a_job() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, "echo started; sleep 30", None);
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let v = s
        .job_kill(JobKillParams {
            job_id: id.clone(),
            signal: Some("kill".into()),
        })
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(v["status"], "killed");
    assert_eq!(v["signal"], "SIGKILL");
    assert_eq!(v["exit_code"], 137);
    let o = s.job_output(out(&id, 0, None)).unwrap();
    assert_eq!(o["data"], "started\n");
    let bad = s.job_kill(JobKillParams {
        job_id: id,
        signal: Some("NOPE".into()),
    });
    assert!(bad.is_err());
}

#[test]
fn ending_a_session_kills_its_jobs_and_jobs_copy_its_cwd() {
    let env = Env::new();
    let s = env.server();
    let v = s
        .session_start(SessionStartParams {
            cwd: Some(env.proj().join("sub").to_string_lossy().into_owned()),
            env: None,
        })
        .unwrap();
    let sid = v["session"].as_str().unwrap().to_string();
    let id = start(&s, "pwd; sleep 30", Some(sid.clone()));
    std::thread::sleep(Duration::from_millis(200));
    s.session_end(SessionEndParams { session: sid }).unwrap();
    let v = s.job_follow(out(&id, 0, None)).unwrap();
    assert_eq!(v["status"], "killed");
    assert_eq!(
        v["output"],
        format!("{}/sub\n", env.proj().display()).as_str()
    );
}

#[test]
fn unknown_job_is_an_error() {
    let env = Env::new();
    let s = env.server();
    assert!(s.job_output(out("job-nope", 0, None)).is_err());
}
