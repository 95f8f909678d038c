//! Background jobs: lifecycle, offsets across the ring boundary, kill, session end.

use crate::{Env, exec};
use safesh_server::service::{
    JobKillParams, JobListParams, JobOutputParams, JobStartParams, SessionEndParams,
    SessionStartParams,
};
use serde_json::json;
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
    assert_eq!(v["in_process"], true);
    v["job_id"].as_str().unwrap().to_string()
}

fn out(id: &str, since: u64, max: Option<u64>) -> JobOutputParams {
    JobOutputParams {
        job_id: id.into(),
        since: Some(since),
        max_bytes: max,
        ..JobOutputParams::default()
    }
}

/// `out` for a job of session `session`.
fn out_in(id: &str, since: u64, session: &str) -> JobOutputParams {
    JobOutputParams {
        session: Some(session.into()),
        ..out(id, since, None)
    }
}

#[test]
fn lifecycle() {
    let env = Env::new();
    let s = env.server();
    let id = start(&s, "echo a; sleep 0.3; echo b; exit 3", None);
    let listed = s.job_list(JobListParams::default());
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
    let listed = s.job_list(JobListParams::default());
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
            ..JobKillParams::default()
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
        ..JobKillParams::default()
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
            ..SessionStartParams::default()
        })
        .unwrap();
    let sid = v["session"].as_str().unwrap().to_string();
    let id = start(&s, "pwd; sleep 30", Some(sid.clone()));
    std::thread::sleep(Duration::from_millis(200));
    s.session_end(SessionEndParams {
        session: sid.clone(),
        ..SessionEndParams::default()
    })
    .unwrap();
    let v = s.job_follow(out_in(&id, 0, &sid)).unwrap();
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

/// Polls `f` (up to 10 s) until it returns `Some`.
fn poll<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..500 {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn job_of(s: &safesh_server::Server, command: &str) -> serde_json::Value {
    job_of_in(s, command, None)
}

/// The job running `command` among the jobs of `session` (none: the sessionless ones).
fn job_of_in(s: &safesh_server::Server, command: &str, session: Option<&str>) -> serde_json::Value {
    let p = JobListParams {
        session: session.map(str::to_string),
        ..JobListParams::default()
    };
    let listed = s.job_list(p);
    let jobs = listed["jobs"].as_array().unwrap().clone();
    jobs.into_iter()
        .find(|j| j["command"] == command)
        .unwrap_or_else(|| panic!("no job {command:?} in {listed:?}"))
}

#[test]
fn a_background_command_in_a_script_becomes_a_job() {
    let env = Env::new();
    let s = env.server();
    // The call returns although its job never ends by itself.
    let v = exec(
        &s,
        json!({"script": "echo before; { echo in-job; sleep 30; } & echo after $!"}),
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let text = v["output"].as_str().unwrap();
    assert!(text.starts_with("before\nafter "), "{v}");
    assert!(!text.contains("in-job"), "the job's output is its own: {v}");
    let j = job_of(&s, "{ echo in-job; sleep 30 } &");
    assert_eq!(j["status"], "running", "{j}");
    assert!(j["session"].is_null());
    assert_eq!(j["in_process"], true);
    let id = j["job_id"].as_str().unwrap().to_string();
    let o = poll(|| {
        let o = s.job_output(out(&id, 0, None)).unwrap();
        (o["data"] == "in-job\n").then_some(o)
    });
    assert!(o.is_some(), "the job's output is readable");
    let v = s
        .job_kill(JobKillParams {
            job_id: id.clone(),
            signal: None,
            ..JobKillParams::default()
        })
        .unwrap();
    assert_eq!(v["status"], "killed");
    assert_eq!(v["exit_code"], 143);
    let v = s.job_output(out(&id, 7, None)).unwrap();
    assert_eq!(
        v["data"], "",
        "no cancellation noise in a killed job's output"
    );
}

#[test]
fn wait_in_the_same_script_still_waits_and_the_job_is_listed_finished() {
    let env = Env::new();
    let s = env.server();
    let v = exec(
        &s,
        json!({"script": "{ echo bg; exit 4; } & wait $!; echo status=$?"}),
    );
    assert_eq!(v["output"], "status=4\n", "{v}");
    let j = job_of(&s, "{ echo bg; exit 4 } &");
    assert_eq!(j["status"], "exited");
    assert_eq!(j["exit_code"], 4);
    let id = j["job_id"].as_str().unwrap().to_string();
    let f = s.job_follow(out(&id, 0, None)).unwrap();
    assert_eq!(f["output"], "bg\n");
}

#[test]
fn ending_a_session_kills_the_jobs_its_scripts_started() {
    let env = Env::new();
    let s = env.server();
    let sid = s.session_start(SessionStartParams::default()).unwrap()["session"]
        .as_str()
        .unwrap()
        .to_string();
    let v = exec(&s, json!({"script": "sleep 30 &", "session": sid}));
    assert_eq!(v["exit_code"], 0, "{v}");
    let j = job_of_in(&s, "sleep 30 &", Some(&sid));
    assert_eq!(j["session"], sid.as_str());
    assert_eq!(j["status"], "running");
    s.session_end(SessionEndParams {
        session: sid.clone(),
        ..SessionEndParams::default()
    })
    .unwrap();
    let v = s
        .job_follow(out_in(j["job_id"].as_str().unwrap(), 0, &sid))
        .unwrap();
    assert_eq!(v["status"], "killed");
}

#[test]
fn a_job_in_a_subshell_is_still_waited_for() {
    let env = Env::new();
    let s = env.server();
    let v = exec(&s, json!({"script": "( echo inner & ); echo outer"}));
    // The request waits for the job; as in bash, the subshell does not, so the
    // two lines may come in either order.
    let mut lines: Vec<&str> = v["output"].as_str().unwrap_or_default().lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["inner", "outer"], "{v}");
    assert_eq!(
        s.job_list(JobListParams::default())["jobs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

/// A server whose config allows `/usr/bin/sleep` (a real external program).
fn server_with_sleep(env: &Env) -> std::sync::Arc<safesh_server::Server> {
    crate::server_with_config(env, "[commands.\"/usr/bin/sleep\"]\nallow = true\n")
}

fn proc_alive(pid: u64) -> bool {
    // A zombie has exited: only a live process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

fn assert_pid_then_gone(s: &safesh_server::Server, id: &str) {
    let pid = poll(|| {
        let j = s.job_output(out(id, 0, None)).unwrap();
        j["pid"].as_u64()
    })
    .expect("the job reports the pid of its external program");
    let j = s.job_output(out(id, 0, None)).unwrap();
    assert_eq!(j["in_process"], false, "{j}");
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert!(proc_alive(pid), "pid {pid} ({comm}) is running");
    let v = s
        .job_kill(JobKillParams {
            job_id: id.into(),
            signal: None,
            ..JobKillParams::default()
        })
        .unwrap();
    assert_eq!(v["status"], "killed");
    assert!(
        poll(|| (!proc_alive(pid)).then_some(())).is_some(),
        "pid {pid} is gone after job_kill"
    );
}

#[test]
fn a_job_running_an_external_reports_its_pid_and_kill_ends_it() {
    let env = Env::new();
    let s = server_with_sleep(&env);
    let v = s
        .job_start(JobStartParams {
            command: Some("/usr/bin/sleep".into()),
            args: Some(vec!["30".into()]),
            ..JobStartParams::default()
        })
        .unwrap();
    let id = v["job_id"].as_str().unwrap().to_string();
    assert_pid_then_gone(&s, &id);
    // The same for `cmd &` in a script.
    let v = exec(&s, json!({"script": "/usr/bin/sleep 30 &"}));
    assert_eq!(v["exit_code"], 0, "{v}");
    let j = job_of(&s, "/usr/bin/sleep 30 &");
    assert_pid_then_gone(&s, j["job_id"].as_str().unwrap());
}

#[test]
fn force_overrides_a_nudge_in_job_start_as_in_exec() {
    let env = Env::new();
    let s = env.server();
    // `sleep 300` is nudged toward job_start itself; force runs it anyway.
    let nudged = s
        .job_start(JobStartParams {
            script: Some("sleep 300".into()),
            ..JobStartParams::default()
        })
        .unwrap();
    let id = nudged["job_id"].as_str().unwrap().to_string();
    let v = s.job_follow(out(&id, 0, None)).unwrap();
    assert_eq!(v["error"]["code"], "NUDGE", "{v}");
    let forced = s
        .job_start(JobStartParams {
            script: Some("sleep 300".into()),
            force: Some(true),
            ..JobStartParams::default()
        })
        .unwrap();
    let id = forced["job_id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(300));
    let listed = s.job_list(JobListParams::default());
    let job = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == id.as_str())
        .cloned()
        .unwrap();
    assert_eq!(job["status"], "running", "{listed}");
    s.job_kill(JobKillParams {
        job_id: id,
        signal: None,
        ..JobKillParams::default()
    })
    .unwrap();
}
