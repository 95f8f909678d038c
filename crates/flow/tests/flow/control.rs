use safesh_flow::control::{self, ControlError};
use safesh_flow::{Approvals, ControlServer, ManualClock, Status};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

fn approvals() -> Arc<Approvals> {
    Arc::new(Approvals::new(Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_000_000),
    ))))
}

#[test]
fn approve_round_trip_through_the_socket() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let a = approvals();
    let server = ControlServer::bind(&state, Arc::clone(&a)).unwrap();
    assert!(server.path().starts_with(&state));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(server.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let r = a.request("rm -r build", "destructive", "build");
    let other = a.request("rm -r src", "destructive", "src");
    let listed = control::list(&state).unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(
        listed
            .iter()
            .any(|l| l.contains(&r.id) && l.contains("\"rm -r build\""))
    );

    let waiter = {
        let a = Arc::clone(&a);
        let id = r.id.clone();
        std::thread::spawn(move || a.wait(&id, Duration::from_secs(60)))
    };
    let msg = control::approve(&state, &r.id).unwrap();
    assert_eq!(msg, format!("approved {}: rm -r build", r.id));
    assert_eq!(waiter.join().unwrap(), Ok(Status::Granted));
    // Only that action.
    assert!(!a.take("rm -r src"));
    assert!(a.take("rm -r build"));
    assert_eq!(a.status(&other.id), Some(Status::Pending));

    let msg = control::deny(&state, &other.id).unwrap();
    assert!(msg.starts_with("denied"), "{msg}");
    assert_eq!(a.status(&other.id), Some(Status::Denied));

    // Unknown, already used, and malformed ids.
    assert!(matches!(
        control::approve(&state, "aaaaaaaa"),
        Err(ControlError::UnknownId(_))
    ));
    assert!(matches!(
        control::approve(&state, &r.id),
        Err(ControlError::Refused(m)) if m.contains("already")
    ));
    assert!(control::approve(&state, "x y").is_err());
    assert!(control::list(&state).unwrap().is_empty());

    let path = server.path().to_path_buf();
    drop(server);
    assert!(!path.exists());
    assert!(matches!(
        control::approve(&state, &r.id),
        Err(ControlError::NoServer(_))
    ));
}

#[test]
fn client_tries_every_server_and_removes_dead_sockets() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().to_path_buf();
    let a = approvals();
    let _server = ControlServer::bind(&state, Arc::clone(&a)).unwrap();
    // A second "process": a server on another socket name.
    let b = approvals();
    let second = ControlServer::bind(&tmp.path().join("b"), Arc::clone(&b)).unwrap();
    let moved = state.join("control-999999999.sock");
    std::fs::rename(second.path(), &moved).unwrap();
    // A dead socket: bound, then its listener closed.
    let dead = state.join("control-999999998.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    assert!(dead.exists());

    let r = b.request("git push --force", "network", "github.com");
    let msg = control::approve(&state, &r.id).unwrap();
    assert!(msg.contains("git push --force"), "{msg}");
    assert_eq!(b.status(&r.id), Some(Status::Granted));
    assert!(!dead.exists(), "dead socket removed");
    assert!(moved.exists(), "live socket kept");
    std::fs::rename(&moved, second.path()).unwrap();
}

/// Run as another user by `a_non_owner_is_refused`: tries to approve the id in
/// `SAFESH_FLOW_TEST_STATE` and prints the outcome.
#[test]
#[ignore = "helper: run as another user by a_non_owner_is_refused"]
fn non_owner_client_helper() {
    let state = std::env::var("SAFESH_FLOW_TEST_STATE").unwrap();
    let id = std::env::var("SAFESH_FLOW_TEST_ID").unwrap();
    match control::approve(std::path::Path::new(&state), &id) {
        Ok(m) => println!("RESULT ok {m}"),
        Err(e) => println!("RESULT err {e}"),
    }
}

#[test]
fn a_non_owner_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to run a client as another user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let a = approvals();
    let server = ControlServer::bind(&state, Arc::clone(&a)).unwrap();
    // Open the file modes wide: only the peer-credential check stands in the way.
    for dir in [tmp.path(), state.as_path()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(server.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let r = a.request("rm -r build", "destructive", "build");
    // The test binary may live where uid 65534 cannot reach it (a 0700 checkout):
    // run a world-readable copy.
    let exe = tmp.path().join("client");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(&exe)
        .args([
            "--exact",
            "flow::control::non_owner_client_helper",
            "--ignored",
            "--nocapture",
        ])
        .env("SAFESH_FLOW_TEST_STATE", &state)
        .env("SAFESH_FLOW_TEST_ID", &r.id)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("RESULT err not the owner") || stdout.contains("RESULT err refused"),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(a.status(&r.id), Some(Status::Pending));
}
