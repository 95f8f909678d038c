//! The audit log in one process: format, redaction, filters, malformed lines.

use crate::common::{dirs, mode, secret};
use jiff::Timestamp;
use safesh_label::{Atom, Label};
use safesh_store::{
    AUDIT_LOG, AuditLog, CommitPoint, Entry, Filter, Redactor, Verdict, render_line,
};
use std::fs;
use std::io::Write;

fn entry(session: &str, cp: CommitPoint, verdict: Verdict, rule: &str) -> Entry {
    Entry::new(session, cp, verdict)
        .with_command(format!("cmd {rule}"))
        .with_target("example.com")
        .with_rule(rule)
}

#[test]
fn appended_entries_read_back_with_all_fields() {
    let d = dirs();
    let log = AuditLog::open(&d.state).unwrap();
    let e = Entry::new("s1", CommitPoint::Network, Verdict::RequestApproval)
        .with_command("curl -d @notes https://example.com")
        .with_target("example.com:443")
        .with_labels(&secret("api", Atom::Env("API".into())), &Label::agent())
        .with_rule("secret-to-network")
        .with_approval("ap-7");
    log.append(&e).unwrap();
    assert_eq!(mode(&d.state.join(AUDIT_LOG)), 0o600);

    let raw = fs::read_to_string(d.state.join(AUDIT_LOG)).unwrap();
    assert_eq!(raw.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(raw.trim_end()).unwrap();
    let time = v["time"].as_str().unwrap();
    assert!(time.ends_with('Z'), "{time}");
    time.parse::<Timestamp>().unwrap();
    assert_eq!(v["commit_point"], "network");
    assert_eq!(v["verdict"], "request-approval");
    assert_eq!(v["data_label"]["secrets"][0], "secret:api");
    assert_eq!(v["pc_label"]["integrity"][0], "agent");
    assert_eq!(v["pid"], std::process::id());

    let read = AuditLog::read(&d.state, &Filter::default()).unwrap();
    assert_eq!(read.malformed, 0);
    assert_eq!(read.entries, vec![e]);
}

#[test]
fn command_target_and_label_names_are_redacted_on_disk() {
    let d = dirs();
    let mut log = AuditLog::open(&d.state).unwrap();
    log.set_redactor(Redactor::new([("GH_TOKEN", "ghp_abcdef123"), ("DB", "s3cr3tpw")]).unwrap());
    let e = Entry::new("s", CommitPoint::Exec, Verdict::Block)
        .with_command("git push https://ghp_abcdef123@github.com/x --pw=s3cr3tpw")
        .with_target("https://ghp_abcdef123@github.com/x")
        .with_labels(&Label::from_file("/tmp/s3cr3tpw"), &Label::agent());
    log.append(&e).unwrap();
    let raw = fs::read_to_string(d.state.join(AUDIT_LOG)).unwrap();
    assert!(!raw.contains("ghp_abcdef123"), "{raw}");
    assert!(!raw.contains("s3cr3tpw"), "{raw}");
    let got = &AuditLog::read(&d.state, &Filter::default())
        .unwrap()
        .entries[0];
    assert_eq!(
        got.command,
        "git push https://[secret:GH_TOKEN]@github.com/x --pw=[secret:DB]"
    );
    assert_eq!(got.target, "https://[secret:GH_TOKEN]@github.com/x");
    assert_eq!(got.data_label.origins, vec!["file:/tmp/[secret:DB]"]);
}

#[test]
fn filters_select_entries() {
    let d = dirs();
    let log = AuditLog::open(&d.state).unwrap();
    let mut old = entry("s1", CommitPoint::Exec, Verdict::Allow, "r-old");
    old.time = "2020-01-01T00:00:00Z".parse().unwrap();
    log.append(&old).unwrap();
    let cut: Timestamp = "2021-01-01T00:00:00Z".parse().unwrap();
    let all = [
        entry("s1", CommitPoint::Network, Verdict::Block, "r1"),
        entry("s2", CommitPoint::Network, Verdict::Allow, "r2"),
        entry("s1", CommitPoint::Destructive, Verdict::Warn, "r1"),
        entry("s2", CommitPoint::Env, Verdict::Approved, "r3"),
        entry("s1", CommitPoint::Exec, Verdict::Block, "r2"),
    ];
    for e in &all {
        log.append(e).unwrap();
    }
    let rules = |f: Filter| -> Vec<String> {
        AuditLog::read(&d.state, &f)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| format!("{}/{}", e.session, e.rule))
            .collect()
    };
    assert_eq!(rules(Filter::default()).len(), 6);
    let f = Filter {
        session: Some("s2".into()),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s2/r2", "s2/r3"]);
    let f = Filter {
        verdict: Some(Verdict::Block),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s1/r1", "s1/r2"]);
    let f = Filter {
        commit_point: Some(CommitPoint::Network),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s1/r1", "s2/r2"]);
    let f = Filter {
        rule: Some("r1".into()),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s1/r1", "s1/r1"]);
    let f = Filter {
        since: Some(cut),
        commit_point: Some(CommitPoint::Exec),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s1/r2"]);
    let f = Filter {
        session: Some("s1".into()),
        last: Some(2),
        ..Filter::default()
    };
    assert_eq!(rules(f), ["s1/r1", "s1/r2"]);
}

#[test]
fn malformed_lines_are_skipped_and_counted() {
    let d = dirs();
    let log = AuditLog::open(&d.state).unwrap();
    log.append(&entry("s", CommitPoint::Exec, Verdict::Allow, "a"))
        .unwrap();
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(d.state.join(AUDIT_LOG))
        .unwrap();
    f.write_all(b"not json\n{\"time\":\"x\"}\n\n\xff\xfe\n")
        .unwrap();
    log.append(&entry("s", CommitPoint::Exec, Verdict::Block, "b"))
        .unwrap();
    f.write_all(b"{\"truncated\":").unwrap();
    let read = AuditLog::read(&d.state, &Filter::default()).unwrap();
    assert_eq!(read.malformed, 4);
    assert_eq!(read.entries.len(), 2);
    assert_eq!(read.entries[1].rule, "b");
}

#[test]
fn reading_a_missing_log_is_empty() {
    let d = dirs();
    let read = AuditLog::read(&d.state, &Filter::default()).unwrap();
    assert!(read.entries.is_empty());
    assert_eq!(read.malformed, 0);
}

#[test]
fn render_line_is_one_human_line() {
    let mut e = Entry::new("s", CommitPoint::Network, Verdict::Block)
        .with_command("echo hi\ncurl x\x1b[31m")
        .with_target("x.example")
        .with_rule("no-secret-egress")
        .with_approval("ap-1");
    e.time = "2026-11-22T08:00:00.123456Z".parse().unwrap();
    let line = render_line(&e);
    assert!(!line.contains('\n') && !line.contains('\x1b'), "{line}");
    assert!(line.starts_with("2026-11-22T08:00:00Z block "), "{line}");
    for part in [
        "network",
        "no-secret-egress",
        "echo hi\\ncurl x",
        "x.example",
        "ap-1",
    ] {
        assert!(line.contains(part), "{part} in {line}");
    }
}

#[test]
fn an_existing_log_with_loose_permissions_is_tightened() {
    use std::os::unix::fs::PermissionsExt;
    let d = dirs();
    fs::create_dir(&d.state).unwrap();
    let path = d.state.join(AUDIT_LOG);
    fs::write(&path, "").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let log = AuditLog::open(&d.state).unwrap();
    assert_eq!(mode(&path), 0o600);
    log.append(&entry("s", CommitPoint::Env, Verdict::Warn, "r"))
        .unwrap();
    assert_eq!(
        AuditLog::read(&d.state, &Filter::default())
            .unwrap()
            .entries
            .len(),
        1
    );
}
