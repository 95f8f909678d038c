//! Project specs on the command line (issue 19): `safesh spec validate`,
//! `safesh spec plan` with each step's risk from the real policy (the same pass
//! as `safesh check`, which now shows the risk too), allowed_commands that only
//! narrow, params that cannot inject, and `safesh init --template`.

use crate::policy_support::{PWNED, Project};
use serde_json::Value;

const HEAD: &str =
    "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: demo\ngoal: tidy the notes\n";

fn spec(p: &Project, rest: &str) {
    p.write("project.agsh.yaml", &format!("{HEAD}{rest}"));
}

fn plan_json(p: &Project, extra: &[&str]) -> (crate::policy_support::Run, Value) {
    let mut args = vec!["spec", "plan", "project.agsh.yaml", "--json"];
    args.extend_from_slice(extra);
    let r = p.run_args(&args);
    let v = r.json();
    (r, v)
}

fn risks(v: &Value) -> Vec<String> {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["risk"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn spec_plan_decides_each_step_with_the_real_policy_and_runs_nothing() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - command: cat\n    args: [notes.txt]\n  - command: mkdir\n    args: [-p, out]\n  - script: grep alpha notes.txt > out/a.txt\n  - command: rm\n    args: [notes.txt]\n  - command: git\n    args: [status]\n",
    );
    let (r, v) = plan_json(&p, &[]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert_eq!(
        risks(&v),
        ["read-only", "write", "write", "destructive", "read-only"],
        "{}",
        r.dump()
    );
    let cps: Vec<bool> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["checkpoint_before"] == true)
        .collect();
    assert_eq!(cps, [false, true, true, true, false]);
    assert_eq!(v["steps"][0]["script"], "'cat' 'notes.txt'");
    assert_eq!(
        v["risk_summary"],
        "5 steps: 2 read-only, 2 write, 1 destructive; checkpoint before 3"
    );
    assert_eq!(v["hash"].as_str().unwrap().len(), 64);
    assert!(!p.path("out").exists(), "plan ran mkdir:\n{}", r.dump());
    assert!(p.path("notes.txt").exists(), "plan ran rm:\n{}", r.dump());
    // The text form says the same.
    let t = p.run_args(&["spec", "plan", "project.agsh.yaml"]);
    assert_eq!(t.status, 0, "{}", t.dump());
    assert!(t.stdout.contains("  4. [destructive]"), "{}", t.dump());
    assert!(
        t.stdout.contains("       $ 'rm' 'notes.txt'"),
        "{}",
        t.dump()
    );
    assert!(
        t.stdout.contains("=> planned (nothing ran)"),
        "{}",
        t.dump()
    );
}

#[test]
fn a_step_the_policy_refuses_is_refused_in_the_plan() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - command: git\n    args: [push]\n  - script: sudo ls\n  - command: cat\n    args: [notes.txt]\n",
    );
    let (r, v) = plan_json(&p, &[]);
    assert_eq!(
        r.status,
        126,
        "a refused plan exits 126 (PLAN_REFUSED):\n{}",
        r.dump()
    );
    assert_eq!(v["refused"], true);
    assert_eq!(risks(&v), ["refused", "refused", "read-only"]);
    assert_eq!(v["steps"][0]["refusal"]["code"], "COMMAND_NOT_WHITELISTED");
    assert_eq!(v["steps"][1]["refusal"]["code"], "BLOCKED");
    assert!(
        v["steps"][1]["refusal"]["suggestion"].is_string(),
        "{}",
        r.dump()
    );
}

#[test]
fn allowed_commands_only_narrows_the_policy() {
    let p = Project::new();
    spec(
        &p,
        "allowed_commands: [cat, 'git']\nsteps:\n  - command: cat\n    args: [notes.txt]\n  - script: grep alpha notes.txt | wc -l\n  - command: git\n    args: [push]\n",
    );
    let (r, v) = plan_json(&p, &[]);
    assert_eq!(r.status, 126, "{}", r.dump());
    assert_eq!(
        risks(&v),
        ["read-only", "refused", "refused"],
        "{}",
        r.dump()
    );
    let narrowed = &v["steps"][1]["refusal"];
    assert_eq!(narrowed["code"], "COMMAND_NOT_WHITELISTED");
    assert_eq!(narrowed["details"]["rule"], "spec.allowed_commands");
    assert_eq!(narrowed["details"]["command"], "grep");
    // Listed, but the policy still refuses it: the list never widens.
    let policy = &v["steps"][2]["refusal"];
    assert_eq!(policy["code"], "COMMAND_NOT_WHITELISTED");
    assert_ne!(
        policy["details"]["rule"],
        "spec.allowed_commands",
        "{}",
        r.dump()
    );
    let t = p.run_args(&["spec", "plan", "project.agsh.yaml"]);
    assert!(
        t.stdout
            .contains("COMMAND_NOT_WHITELISTED: grep is not in the spec's allowed_commands"),
        "{}",
        t.dump()
    );
}

#[test]
fn a_param_cannot_inject_through_the_command_line() {
    let p = Project::new();
    spec(
        &p,
        "params:\n  - name: x\nsteps:\n  - script: printf '%s\\n' {{x}}\n",
    );
    for value in [
        "$(touch pwned)",
        "'; touch pwned; '",
        "`touch pwned`",
        "a\ntouch pwned",
    ] {
        let (r, v) = plan_json(&p, &["--param", &format!("x={value}")]);
        assert_eq!(r.status, 0, "{}", r.dump());
        let script = v["steps"][0]["script"].as_str().unwrap().to_string();
        assert_eq!(
            v["steps"][0]["commands"],
            serde_json::json!(["printf"]),
            "{}",
            r.dump()
        );
        assert_eq!(v["steps"][0]["risk"], "read-only", "{}", r.dump());
        // The planned script, run by safesh itself, prints the value as data.
        let run = p.run(&script);
        assert_eq!(run.stdout, format!("{value}\n"), "{}", run.dump());
        p.assert_absent(PWNED, &run);
    }
    let r = p.run_args(&["spec", "plan", "project.agsh.yaml"]);
    assert_eq!(r.status, 2, "{}", r.dump());
    assert!(
        r.stderr
            .contains("params.x: the param x has no default: give it with --param x=VALUE"),
        "{}",
        r.dump()
    );
    let r = p.run_args(&["spec", "plan", "project.agsh.yaml", "--param", "novalue"]);
    assert_eq!(r.status, 2, "{}", r.dump());
}

#[test]
fn bad_specs_get_file_line_column_and_the_field() {
    let p = Project::new();
    spec(
        &p,
        "steps:\n  - command: ls\n    verify:\n      - type: matches_regex\n        expected: '(x'\n",
    );
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml"]);
    assert_eq!(r.status, 2, "{}", r.dump());
    assert!(
        r.stderr.starts_with(
            "safesh: INVALID_SPEC: project.agsh.yaml:10:9: steps[0].verify[0].expected: bad regex"
        ),
        "{}",
        r.dump()
    );
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml", "--json"]);
    let v = r.json();
    assert_eq!(v["valid"], false);
    assert_eq!(v["error"]["line"], 10);
    assert_eq!(v["error"]["path"], "steps[0].verify[0].expected");
    // Wrong type, YAML syntax, a missing field.
    p.write(
        "project.agsh.yaml",
        &format!("{HEAD}steps:\n  - command: ls\n    checkpoint_before: maybe\n"),
    );
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml"]);
    assert!(r.stderr.contains("project.agsh.yaml:8:"), "{}", r.dump());
    assert!(
        r.stderr
            .contains("steps[0].checkpoint_before: invalid type"),
        "{}",
        r.dump()
    );
    p.write("project.agsh.yaml", "apiVersion: agsh/v1\nkind: [\n");
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml"]);
    assert_eq!(r.status, 2, "{}", r.dump());
    assert!(
        r.stderr
            .starts_with("safesh: INVALID_SPEC: project.agsh.yaml:"),
        "{}",
        r.dump()
    );
    p.write(
        "project.agsh.yaml",
        "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: x\n",
    );
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml"]);
    assert!(r.stderr.contains("missing field `goal`"), "{}", r.dump());
    // The benign neighbour.
    spec(&p, "steps:\n  - command: ls\n");
    let r = p.run_args(&["spec", "validate", "project.agsh.yaml"]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(
        r.stdout.contains("valid spec \"demo\": 1 step(s)"),
        "{}",
        r.dump()
    );
}

#[test]
fn check_reports_the_risk_of_each_command_and_of_the_script() {
    let p = Project::new();
    let (r, v) =
        p.check_json("cat notes.txt\ngit status\nmkdir -p out\nrm -f notes.txt\necho x > y.txt");
    let each: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["risk"].as_str().unwrap())
        .collect();
    assert_eq!(
        each,
        [
            "read-only",
            "read-only",
            "write",
            "destructive",
            "read-only"
        ],
        "{}",
        r.dump()
    );
    assert_eq!(v["risk"], "destructive", "{}", r.dump());
    assert_eq!(v["writes"], serde_json::json!(["y.txt"]), "{}", r.dump());
    let (r, v) = p.check_json("grep alpha notes.txt > out.txt");
    assert_eq!(v["risk"], "write", "a redirection writes:\n{}", r.dump());
    let (_, v) = p.check_json("grep alpha notes.txt | wc -l");
    assert_eq!(v["risk"], "read-only");
    let (_, v) = p.check_json("sudo ls");
    assert_eq!(v["risk"], "refused");
    let t = p.check("rm -f notes.txt");
    assert!(
        t.stdout
            .lines()
            .next()
            .unwrap_or("")
            .ends_with("[destructive]"),
        "{}",
        t.dump()
    );
    assert!(t.stdout.contains("(risk: destructive)"), "{}", t.dump());
    assert!(p.path("notes.txt").exists());
}

#[test]
fn init_template_writes_only_the_spec() {
    let p = Project::new();
    let fresh = p.root.join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    let dir = fresh.to_str().unwrap();
    let r = p.run_args(&["init", "--template=code-review", dir]);
    assert_eq!(r.status, 0, "{}", r.dump());
    let names: Vec<String> = std::fs::read_dir(&fresh)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["project.agsh.yaml"], "{}", r.dump());
    let r = p.run_args(&["spec", "validate", &format!("{dir}/project.agsh.yaml")]);
    assert_eq!(r.status, 0, "{}", r.dump());
    // No overwrite without --force.
    let r = p.run_args(&["init", "--template=research", dir]);
    assert_eq!(r.status, 1, "{}", r.dump());
    assert!(r.stderr.contains("exists (use --force"), "{}", r.dump());
    let r = p.run_args(&["init", "--template=research", "--force", dir]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(
        std::fs::read_to_string(fresh.join("project.agsh.yaml"))
            .unwrap()
            .contains("name: \"research\"")
    );
    // Unknown names list what exists; a user template is found in ~/.config.
    let r = p.run_args(&["init", "--template=nope", dir]);
    assert_eq!(r.status, 2, "{}", r.dump());
    assert!(
        r.stderr
            .contains("templates: code-review, weekly-report, deploy-pipeline, research"),
        "{}",
        r.dump()
    );
    let t = p.home.join(".config/safesh/templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("mine.yaml"), format!("{HEAD}# mine\n")).unwrap();
    let r = p.run_args(&["init", "--template", "mine", "--force", dir]);
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(
        std::fs::read_to_string(fresh.join("project.agsh.yaml"))
            .unwrap()
            .contains("# mine")
    );
    // A broken user template writes nothing.
    std::fs::write(t.join("broken.yaml"), "kind: [\n").unwrap();
    std::fs::remove_file(fresh.join("project.agsh.yaml")).unwrap();
    let r = p.run_args(&["init", "--template=broken", dir]);
    assert_eq!(r.status, 1, "{}", r.dump());
    assert!(!fresh.join("project.agsh.yaml").exists());
}
