//! `policy [CMD...]`: what the policy allows (roots, network, programs), or, with
//! a command line, the pre-run decision for it without running anything (the
//! same pass `safesh check` and every script go through: `precheck.rs`).
//! `config`: the configuration in force, as `safesh config show` prints it.

use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use crate::precheck::{Checked, Verdict};
use safesh_policy::config::{Allow, Network};

fn no_policy(sh: &mut Shell, name: &str) -> Exec {
    sh.diag(format!(
        "{name}: this shell runs without a policy (a library session): builtins and utilities only, nothing external"
    ));
    sh.set_status(1);
    Ok(())
}

fn paths(list: &[std::path::PathBuf]) -> String {
    if list.is_empty() {
        return "(none)".into();
    }
    list.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn summary(policy: &safesh_policy::Policy) -> String {
    let c = policy.config();
    let network = match &c.sandbox.network {
        Network::Off => "off (no program may connect; curl/wget are refused)".to_string(),
        Network::On => "on (any host)".to_string(),
        Network::Hosts(h) => format!("only these hosts: {}", h.join(", ")),
    };
    let mut programs: Vec<String> = c
        .commands
        .iter()
        .filter_map(|r| match &r.allow {
            Some(Allow::All) => Some(r.key.clone()),
            Some(Allow::Subcommands(s)) => Some(format!("{} ({})", r.key, s.join(" "))),
            _ => None,
        })
        .collect();
    programs.sort();
    let denied: Vec<&str> = c
        .commands
        .iter()
        .filter(|r| matches!(r.allow, Some(Allow::Deny)))
        .map(|r| r.key.as_str())
        .collect();
    let mut s = String::new();
    s.push_str(&format!("read roots:   {}\n", paths(policy.read_roots())));
    s.push_str(&format!("write roots:  {}\n", paths(policy.write_roots())));
    s.push_str(&format!("network:      {network}\n"));
    s.push_str(&format!(
        "programs:     {}\n",
        if programs.is_empty() {
            "(none: only builtins and utilities run)".to_string()
        } else {
            programs.join(", ")
        }
    ));
    if !denied.is_empty() {
        s.push_str(&format!("denied:       {}\n", denied.join(", ")));
    }
    s.push_str(
        "in-process:   every builtin and utility (`help` lists them), checked against the roots\n\
         never:        shells, privilege tools, safesh itself (the blocklist)\n\
         `policy CMD` shows the decision for a command line; `config` shows every setting and its source.\n",
    );
    s
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::RunTime => "run_time",
        Verdict::NotFound => "not_found",
        Verdict::Refuse(_) => "refuse",
    }
}

/// One command's decision, as `safesh check` prints it.
fn entry(c: &Checked) -> String {
    let head = format!("{:<9} {}", verdict_name(&c.verdict), c.text);
    match &c.verdict {
        Verdict::Refuse(r) => {
            let mut s = format!("{head}\n          {}: {}", r.code, r.message);
            if let Some(sug) = &r.suggestion {
                s.push_str(&format!("\n          suggestion: {sug}"));
            }
            s
        }
        Verdict::Allow => match &c.program {
            Some(p) => format!("{head}  ({p})"),
            None => head,
        },
        Verdict::RunTime => format!("{head}  (decided when reached)"),
        Verdict::NotFound => format!("{head}  (no such command: 127 when run)"),
    }
}

/// `policy [CMD...]`.
pub(super) fn policy(sh: &mut Shell, argv: &[Field]) -> Exec {
    let Some(policy) = sh.shared.policy.clone() else {
        return no_policy(sh, "policy");
    };
    let label = args_label(sh, argv);
    if argv.len() < 2 {
        let text = summary(&policy);
        out(sh, &text, &label);
        sh.set_status(0);
        return Ok(());
    }
    // The words are the command line to judge: `policy git push` or `policy 'a | b'`.
    let line = argv[1..]
        .iter()
        .map(|f| f.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let parsed = match sh.parse_budgeted(&line) {
        Ok(p) => p,
        Err(r) => {
            let text = format!("refuse    {line}\n          {}: {}\n", r.code, r.message);
            out(sh, &text, &label);
            sh.set_status(1);
            return Ok(());
        }
    };
    let checked = sh.check_program(&parsed.program, false);
    let allowed = !checked
        .iter()
        .any(|c| matches!(c.verdict, Verdict::Refuse(_)));
    let mut text: String = checked.iter().map(|c| entry(c) + "\n").collect();
    text.push_str(if allowed {
        "=> allowed (nothing was run; commands marked run_time are decided when reached)\n"
    } else {
        "=> refused: nothing in this command line would run\n"
    });
    out(sh, &text, &label);
    sh.set_status(if allowed { 0 } else { 1 });
    Ok(())
}

/// `config`: the merged configuration with provenance (`safesh config show`).
pub(super) fn config(sh: &mut Shell, argv: &[Field]) -> Exec {
    let Some(policy) = sh.shared.policy.clone() else {
        return no_policy(sh, "config");
    };
    if argv.len() > 2 || argv.get(1).is_some_and(|a| a.text != "show") {
        sh.diag("config: usage: config [show] (to change settings, edit safesh.toml and run `safesh trust`)");
        sh.set_status(2);
        return Ok(());
    }
    let label = args_label(sh, argv);
    let text = safesh_policy::config::render(policy.config());
    out(sh, &text, &label);
    sh.set_status(0);
    Ok(())
}
