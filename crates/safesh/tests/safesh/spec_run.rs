//! Running project specs (issue 19): `safesh spec run` and JSON-RPC
//! `project.*` with the real binary — steps through the pipeline, output and
//! success criteria, rollback, allowed_commands enforced at every dispatch
//! (names computed at run time too), a spec that cannot widen the policy, and
//! plan approvals bound to the plan's hash, single use, granted by a human with
//! `safesh approve ID`.

use crate::policy_support::{ACCEPTANCE_CONFIG, PWNED, Project};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const HEAD: &str =
    "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: demo\ngoal: tidy the notes\n";

fn spec(p: &Project, rest: &str) {
    p.write("project.agsh.yaml", &format!("{HEAD}{rest}"));
}

fn run_json(p: &Project, extra: &[&str]) -> (crate::policy_support::Run, Value) {
    let mut args = vec!["spec", "run", "project.agsh.yaml", "--json"];
    args.extend_from_slice(extra);
    let r = p.run_args(&args);
    let v = r.json();
    (r, v)
}

/// A spec the human trusted (`safesh trust`), under `approval_mode = "never"`:
/// it runs unasked, so a test sees what the run itself does.
fn trusted_spec(p: &Project, rest: &str) {
    spec(p, rest);
    let t = p.run_args(&["trust", "project.agsh.yaml"]);
    assert_eq!(t.status, 0, "{}", t.dump());
}

fn with_mode(mode: &str) -> Project {
    Project::with_config(&format!(
        "{ACCEPTANCE_CONFIG}\n[spec]\napproval_mode = \"{mode}\"\n"
    ))
}

#[test]
fn spec_run_runs_the_steps_writes_the_output_and_checks_the_criteria() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - command: grep\n    args: [alpha, notes.txt]\n    verify:\n      - type: count_gte\n        expected: 2\n  - script: sort -r\nsuccess_criteria:\n  - type: contains\n    target: output\n    expected: alpha four\noutput:\n  path: out.txt\n",
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert_eq!(v["passed"], true, "{}", r.dump());
    assert_eq!(
        std::fs::read_to_string(p.path("out.txt")).unwrap(),
        "alpha one\nalpha four\n"
    );
    assert_eq!(v["success_criteria"]["passed"], true, "{}", r.dump());
    assert_eq!(v["pipeline"]["completed"], 2, "{}", r.dump());
    // The text report says the same.
    let t = p.run_args(&["spec", "run", "project.agsh.yaml"]);
    assert_eq!(t.status, 0, "{}", t.dump());
    assert!(t.stdout.contains("=> passed"), "{}", t.dump());
}

#[test]
fn a_failed_success_criterion_fails_the_run_and_rolls_back() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - script: mkdir -p out && grep alpha notes.txt > out/a.txt\n  - script: cat out/a.txt\nsuccess_criteria:\n  - type: count_gte\n    target: output\n    expected: 10\n",
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(r.status, 1, "{}", r.dump());
    assert_eq!(v["passed"], false, "{}", r.dump());
    assert_eq!(v["error"]["code"], "VERIFICATION_FAILED", "{}", r.dump());
    assert_eq!(v["rolled_back"], true, "{}", r.dump());
    p.assert_absent("out/a.txt", &r);
    // The benign neighbour: the same spec with a criterion that holds keeps it.
    spec(
        &p,
        "steps:\n  - script: mkdir -p out && grep alpha notes.txt > out/a.txt\n  - script: cat out/a.txt\nsuccess_criteria:\n  - type: count_gte\n    target: output\n    expected: 2\n",
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(v["passed"], true, "{}", r.dump());
    p.assert_present("out/a.txt", &r);
}

#[test]
fn a_command_name_computed_at_run_time_outside_allowed_commands_is_refused_at_dispatch() {
    let p = with_mode("never");
    for attack in [
        "c=rm; $c notes.txt",
        "c=r; ${c}m notes.txt",
        "echo notes.txt | xargs rm",
        "find . -name notes.txt -exec rm {} \\;",
        "eval 'r''m notes.txt'",
    ] {
        trusted_spec(
            &p,
            &format!(
                "allowed_commands: [echo, cat, xargs, find, eval]\nsteps:\n  - script: {}\n",
                serde_json::to_string(attack).unwrap()
            ),
        );
        let (r, v) = run_json(&p, &[]);
        assert_eq!(r.status, 1, "{attack}: {}", r.dump());
        assert!(
            p.path("notes.txt").exists(),
            "{attack} removed notes.txt: {}",
            r.dump()
        );
        let step = &v["pipeline"]["steps"][0];
        let err = if step["error"].is_object() {
            &step["error"]
        } else {
            &v["plan"]["steps"][0]["refusal"]
        };
        assert_eq!(
            err["code"],
            "COMMAND_NOT_WHITELISTED",
            "{attack}: {}",
            r.dump()
        );
        assert_eq!(
            err["details"]["rule"],
            "spec.allowed_commands",
            "{attack}: {}",
            r.dump()
        );
    }
    // The benign neighbour: a computed name inside the list runs.
    trusted_spec(
        &p,
        "allowed_commands: [cat]\nsteps:\n  - script: \"c=cat; $c notes.txt\"\n",
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(v["passed"], true, "{}", r.dump());
    assert!(
        v["pipeline"]["steps"][0]["output"]
            .as_str()
            .unwrap()
            .contains("gamma three"),
        "{}",
        r.dump()
    );
}

#[test]
fn a_spec_cannot_widen_the_policy() {
    let p = with_mode("never");
    // `*` lets every name through the spec's list; the policy still decides.
    trusted_spec(
        &p,
        &format!(
            "allowed_commands: ['*']\nsteps:\n  - script: \"c=perl; $c -e 'open F, \\\">{PWNED}\\\"'\"\n"
        ),
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(r.status, 1, "{}", r.dump());
    p.assert_absent(PWNED, &r);
    let err = &v["pipeline"]["steps"][0]["error"];
    assert_eq!(err["code"], "COMMAND_NOT_WHITELISTED", "{}", r.dump());
    assert_ne!(
        err["details"]["rule"],
        "spec.allowed_commands",
        "the policy refused it, not the spec: {}",
        r.dump()
    );
    // A step the policy refuses outright is refused in the plan: nothing runs.
    trusted_spec(
        &p,
        &format!(
            "allowed_commands: ['*']\nsteps:\n  - script: touch {PWNED}\n  - script: git push\n"
        ),
    );
    let (r, v) = run_json(&p, &[]);
    assert_eq!(r.status, 126, "{}", r.dump());
    assert_eq!(v["ran"], false, "{}", r.dump());
    assert_eq!(v["error"]["code"], "PLAN_REFUSED", "{}", r.dump());
    p.assert_absent(PWNED, &r);
}

/// The approval id of a run that needs one.
fn approval_id(r: &crate::policy_support::Run, v: &Value) -> String {
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{}", r.dump());
    assert_eq!(v["ran"], false, "{}", r.dump());
    v["approval_id"].as_str().unwrap().to_string()
}

#[test]
fn a_plan_approval_is_a_humans_bound_to_the_plan_hash_and_single_use() {
    let p = with_mode("plan");
    spec(
        &p,
        "params:\n  - name: word\n    default: alpha\nsteps:\n  - script: grep -- {{word}} notes.txt > found.txt\n",
    );
    let (r, v) = run_json(&p, &[]);
    let id = approval_id(&r, &v);
    p.assert_absent("found.txt", &r);
    // The human approves (a channel the model cannot drive).
    let a = p.run_args(&["approve", &id]);
    assert_eq!(a.status, 0, "{}", a.dump());
    // Other params: another plan, so the approval does not cover it.
    let (r, v) = run_json(&p, &["--param", "word=beta"]);
    approval_id(&r, &v);
    p.assert_absent("found.txt", &r);
    // The approved plan runs, once.
    let (r, v) = run_json(&p, &[]);
    assert_eq!(v["passed"], true, "{}", r.dump());
    p.assert_present("found.txt", &r);
    let (r, v) = run_json(&p, &[]);
    approval_id(&r, &v);
    // An edit of the spec after approval voids it.
    let (r, v) = run_json(&p, &[]);
    let id = approval_id(&r, &v);
    assert_eq!(p.run_args(&["approve", &id]).status, 0);
    spec(
        &p,
        "params:\n  - name: word\n    default: alpha\nsteps:\n  - script: grep -- {{word}} notes.txt > found2.txt\n",
    );
    let (r, v) = run_json(&p, &[]);
    approval_id(&r, &v);
    p.assert_absent("found2.txt", &r);
}

#[test]
fn approval_mode_destructive_asks_only_for_destructive_plans_and_never_needs_trust() {
    let p = Project::new();
    // Default mode (destructive): a write runs unasked, a delete needs a human.
    spec(&p, "steps:\n  - script: grep alpha notes.txt > a.txt\n");
    let (r, v) = run_json(&p, &[]);
    assert_eq!(v["passed"], true, "{}", r.dump());
    spec(&p, "steps:\n  - command: rm\n    args: [a.txt]\n");
    let (r, v) = run_json(&p, &[]);
    approval_id(&r, &v);
    p.assert_present("a.txt", &r);
    // `never` without trust is `plan`; trusted like a config, it runs unasked.
    let p = with_mode("never");
    spec(&p, "steps:\n  - script: grep alpha notes.txt > a.txt\n");
    let (r, v) = run_json(&p, &[]);
    approval_id(&r, &v);
    let t = p.run_args(&["trust", "project.agsh.yaml"]);
    assert_eq!(t.status, 0, "{}", t.dump());
    let (r, v) = run_json(&p, &[]);
    assert_eq!(v["passed"], true, "{}", r.dump());
    // An edited spec is no longer trusted.
    spec(&p, "steps:\n  - script: grep beta notes.txt > b.txt\n");
    let (r, v) = run_json(&p, &[]);
    approval_id(&r, &v);
    p.assert_absent("b.txt", &r);
}

#[test]
fn a_bad_approval_mode_is_a_config_error() {
    let p = with_mode("sometimes");
    let r = p.run_args(&["config", "show"]);
    assert_ne!(r.status, 0, "{}", r.dump());
    assert!(r.stderr.contains("approval_mode"), "{}", r.dump());
    let p = with_mode("always");
    let r = p.run_args(&["config", "show"]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(
        r.stdout.contains("[spec]\napproval_mode = \"always\""),
        "{}",
        r.dump()
    );
}

/// A `safesh rpc` to talk to request by request.
struct Rpc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start(p: &Project) -> Rpc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_safesh"))
            .arg("--config")
            .arg(&p.config)
            .arg("rpc")
            .current_dir(&p.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("HOME", &p.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start safesh rpc");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Rpc {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.next += 1;
        writeln!(self.stdin, "{req}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        v
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn project_methods_over_json_rpc_plan_approve_by_a_human_and_run() {
    let p = with_mode("plan");
    spec(
        &p,
        "constraints: [only the notes]\nallowed_commands: [grep]\nsteps:\n  - script: grep alpha notes.txt > a.txt\n",
    );
    let mut rpc = Rpc::start(&p);
    let v = rpc.call("project.validate", json!({"path": "project.agsh.yaml"}));
    assert_eq!(v["result"]["valid"], true, "{v}");
    let v = rpc.call(
        "project.validate",
        json!({"spec": "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta: {name: x}\n"}),
    );
    assert_eq!(v["result"]["valid"], false, "{v}");
    assert!(
        v["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("goal"),
        "{v}"
    );
    // Loading sets the project scope's goal and constraints.
    let v = rpc.call("project.load", json!({"path": "project.agsh.yaml"}));
    assert_eq!(v["result"]["loaded"], true, "{v}");
    let v = rpc.call("context.get", json!({"scope": "project", "key": "goal"}));
    assert_eq!(v["result"]["value"], "tidy the notes", "{v}");
    // The agent submits its own steps: one outside allowed_commands is refused in the plan.
    let v = rpc.call(
        "project.plan",
        json!({"path": "project.agsh.yaml", "steps": [{"script": "rm notes.txt"}]}),
    );
    assert_eq!(v["result"]["planned"], false, "{v}");
    assert_eq!(
        v["result"]["plan"]["steps"][0]["refusal"]["details"]["rule"], "spec.allowed_commands",
        "{v}"
    );
    let v = rpc.call("project.plan", json!({"path": "project.agsh.yaml"}));
    assert_eq!(v["result"]["planned"], true, "{v}");
    assert_eq!(v["result"]["needs_approval"], true, "{v}");
    let hash = v["result"]["plan"]["hash"].as_str().unwrap().to_string();
    // Running it unapproved: APPROVAL_REQUIRED, nothing ran.
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    assert!(!p.path("a.txt").exists());
    // project.approve has no human channel here: the id for `safesh approve`.
    let v = rpc.call("project.approve", json!({"hash": hash}));
    assert_eq!(v["result"]["approved"], false, "{v}");
    let id = v["result"]["approval_id"].as_str().unwrap().to_string();
    let a = p.run_args(&["approve", &id]);
    assert_eq!(a.status, 0, "{}", a.dump());
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["passed"], true, "{v}");
    assert!(p.path("a.txt").exists());
    // Single use.
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    // A rejected plan does not run, whoever approves it.
    let v = rpc.call(
        "project.reject",
        json!({"hash": hash, "feedback": "too broad"}),
    );
    assert_eq!(v["result"]["rejected"], true, "{v}");
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["error"]["code"], "PLAN_REJECTED", "{v}");
    // init writes only the spec.
    std::fs::create_dir(p.path("new")).unwrap();
    let v = rpc.call(
        "project.init",
        json!({"template": "code-review", "dir": p.path("new")}),
    );
    assert!(v["result"]["written"].is_string(), "{v}");
    assert_eq!(std::fs::read_dir(p.path("new")).unwrap().count(), 1);
}

#[test]
fn a_plan_approval_never_covers_a_steps_own_flow_approval() {
    use crate::flow_support::Arena;
    let a = Arena::new();
    a.write("keep1.txt", "one\n");
    a.write("keep2.txt", "two\n");
    // `rm` of names downloaded from the network: the flow rules want a human.
    let step = a.script("rm $(curl -s {URL}/list.txt) && echo removed");
    a.write(
        "project.agsh.yaml",
        &format!(
            "{HEAD}steps:\n  - script: {}\n",
            serde_json::to_string(&step).unwrap()
        ),
    );
    let run = || {
        let r = a.run_args(&["spec", "run", "project.agsh.yaml", "--json"]);
        let v = r.json();
        (r, v)
    };
    // The plan (destructive) needs the human's approval first.
    let (r, v) = run();
    let plan_id = approval_id(&r, &v);
    assert_eq!(a.run_args(&["approve", &plan_id]).status, 0);
    // Approved, it runs; the step still asks for its own approval, and nothing is removed.
    let (r, v) = run();
    assert_eq!(v["ran"], true, "{}", r.dump());
    assert_eq!(v["passed"], false, "{}", r.dump());
    let step = &v["pipeline"]["steps"][0];
    assert_eq!(step["error"]["code"], "APPROVAL_REQUIRED", "{}", r.dump());
    assert_ne!(
        step["error"]["details"]["approval_id"],
        plan_id,
        "{}",
        r.dump()
    );
    assert!(
        a.exists("keep1.txt") && a.exists("keep2.txt"),
        "{}",
        r.dump()
    );
}

#[test]
fn the_plan_builtin_shows_the_same_plan_as_spec_plan_and_reads_through_the_roots() {
    let p = Project::new();
    spec(
        &p,
        "params:\n  - name: word\n    default: alpha\nsteps:\n  - script: grep -- {{word}} notes.txt > found.txt\n",
    );
    let cli = p.run_args(&[
        "spec",
        "plan",
        "project.agsh.yaml",
        "--json",
        "--param",
        "word=beta",
    ]);
    let builtin = p.run("plan project.agsh.yaml --param word=beta --json");
    assert_eq!(builtin.status, 0, "{}", builtin.dump());
    assert_eq!(
        cli.json()["hash"],
        builtin.json()["hash"],
        "{}",
        builtin.dump()
    );
    p.assert_absent("found.txt", &builtin);
    let text = p.run("plan project.agsh.yaml");
    assert!(
        text.stdout.contains("=> planned (nothing ran)"),
        "{}",
        text.dump()
    );
    assert!(
        text.stdout.contains("$ grep -- 'alpha' notes.txt"),
        "{}",
        text.dump()
    );
    // A spec outside the read roots is not read.
    std::fs::write(p.outside.join("project.agsh.yaml"), HEAD).unwrap();
    let r = p.run(&format!(
        "plan {}",
        p.outside.join("project.agsh.yaml").display()
    ));
    assert_ne!(r.status, 0, "{}", r.dump());
    assert!(
        r.stderr.contains("PATH_VIOLATION") || r.stdout.contains("PATH_VIOLATION"),
        "{}",
        r.dump()
    );
}

#[test]
fn mcp_project_tools_with_the_python_sdk_and_elicitation() {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "note: /usr/bin/python3 cannot import `mcp` (scripts/test.sh installs it): skipped"
        );
        return;
    }
    let p = with_mode("plan");
    spec(&p, "steps:\n  - script: grep alpha notes.txt > found.txt\n");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_project.py");
    let out = Command::new("/usr/bin/python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_safesh"))
        .arg(&p.config)
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .env("XDG_CONFIG_HOME", p.root.join("no-config"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "python MCP client failed ({}):\n{stdout}\n{}",
        out.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
}

#[test]
fn a_platform_commands_risk_is_the_registrys_declared_risk() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - command: fs:list\n    args: [.]\n  - command: fs:mkdir\n    args: [out]\n  - command: fs:write\n    args: {path: out/a.txt}\n  - command: github:pr:list\n    args: {repo: octo/demo}\n",
    );
    let r = p.run_args(&["spec", "plan", "project.agsh.yaml", "--json"]);
    let v = r.json();
    let risks: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["risk"].as_str().unwrap())
        .collect();
    // fs:write declares itself destructive (it may replace a file) although its
    // verb says "write"; github reaches the network although it only reads.
    assert_eq!(
        risks,
        ["read-only", "write", "destructive", "network"],
        "{}",
        r.dump()
    );
}

/// The file a plan is kept in, found under the project's temp tree.
fn kept_file(p: &Project, hash: &str) -> Option<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let path = e.path();
            if path.file_name().is_some_and(|n| n == name)
                && path.parent().is_some_and(|d| d.ends_with("plans"))
            {
                return Some(path);
            }
            if e.file_type().is_ok_and(|t| t.is_dir())
                && let Some(f) = walk(&path, name)
            {
                return Some(f);
            }
        }
        None
    }
    walk(p.home.parent()?, &format!("{hash}.json"))
}

#[test]
fn a_plan_made_over_json_rpc_is_approved_from_another_process_and_survives_a_restart() {
    use std::os::unix::fs::PermissionsExt as _;
    let p = with_mode("plan");
    spec(&p, "steps:\n  - script: grep alpha notes.txt > a.txt\n");
    let hash = {
        let mut rpc = Rpc::start(&p);
        let v = rpc.call("project.plan", json!({"path": "project.agsh.yaml"}));
        assert_eq!(v["result"]["needs_approval"], true, "{v}");
        v["result"]["plan"]["hash"].as_str().unwrap().to_string()
        // The server process ends here.
    };
    // Kept in the state dir, private.
    let file = kept_file(&p, &hash).expect("the plan is kept in the state dir");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    // Another process (the CLI) finds it: no terminal here, so the id.
    let r = p.run_args(&["spec", "approve", &hash, "--json"]);
    assert_eq!(r.status, 1, "{}", r.dump());
    let v = r.json();
    assert_eq!(v["approved"], false, "{}", r.dump());
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{}", r.dump());
    let id = v["approval_id"].as_str().unwrap().to_string();
    assert!(!p.path("a.txt").exists());
    assert_eq!(p.run_args(&["approve", &id]).status, 0);
    // A restarted server runs the approved plan by its hash, once.
    let mut rpc = Rpc::start(&p);
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["passed"], true, "{v}");
    assert!(p.path("a.txt").exists());
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    // A hash nothing was planned for, or not a hash at all.
    let r = p.run_args(&["spec", "approve", &"0".repeat(64)]);
    assert_eq!(r.status, 1, "{}", r.dump());
    assert!(r.stderr.contains("no plan"), "{}", r.dump());
    let r = p.run_args(&["spec", "approve", "../../etc/passwd"]);
    assert_eq!(r.status, 2, "{}", r.dump());
    // An edit of the spec since the plan: PLAN_CHANGED, from any process.
    spec(&p, "steps:\n  - script: grep alpha notes.txt > b.txt\n");
    let r = p.run_args(&["spec", "approve", &hash, "--json"]);
    assert_eq!(r.json()["error"]["code"], "PLAN_CHANGED", "{}", r.dump());
    let v = rpc.call("project.run", json!({"hash": hash}));
    assert_eq!(v["result"]["error"]["code"], "PLAN_CHANGED", "{v}");
    assert!(!p.path("b.txt").exists());
    // A plan rejected over JSON-RPC is rejected for the CLI too.
    let v = rpc.call("project.plan", json!({"path": "project.agsh.yaml"}));
    let hash2 = v["result"]["plan"]["hash"].as_str().unwrap().to_string();
    let v = rpc.call("project.reject", json!({"hash": hash2, "feedback": "no"}));
    assert_eq!(v["result"]["rejected"], true, "{v}");
    let r = p.run_args(&["spec", "approve", &hash2, "--json"]);
    assert_eq!(r.json()["error"]["code"], "PLAN_REJECTED", "{}", r.dump());
}

#[test]
fn the_plan_codes_are_explained_with_their_status() {
    let p = Project::new();
    for (code, status) in [
        ("INVALID_SPEC", 2),
        ("PLAN_REFUSED", 126),
        ("PLAN_CHANGED", 126),
        ("PLAN_REJECTED", 126),
    ] {
        let r = p.run_args(&["explain", code]);
        assert_eq!(r.status, 0, "{}", r.dump());
        assert!(
            r.stdout.contains(&format!("Exit status: {status}\n")),
            "{}",
            r.dump()
        );
    }
    // The faces say the same code: a spec that does not load.
    spec(&p, "steps: [\n");
    let (r, v) = run_json(&p, &[]);
    assert_eq!(r.status, 2, "{}", r.dump());
    assert_eq!(v["error"]["code"], "INVALID_SPEC", "{}", r.dump());
}
