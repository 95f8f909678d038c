//! `plan FILE [--param NAME=VALUE]... [--json]`: the plan of a project spec
//! (what `safesh spec plan` shows), decided by this shell's policy in its
//! working directory. It runs nothing. The file is read like `source` reads
//! one (the read roots, its label: the plan printed carries it).

use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell};
use safesh_spec::{Assessment, RiskOracle};
use std::collections::BTreeMap;

const USAGE: &str = "usage: plan FILE [--param NAME=VALUE]... [--json]";

/// Decides steps with this shell's pre-run pass (the same as `safesh check`).
struct ShellOracle<'a> {
    sh: &'a Shell,
}

impl RiskOracle for ShellOracle<'_> {
    fn assess(&self, script: &str) -> Assessment {
        crate::risk::assessment(self.sh.parse_budgeted(script).map(|parsed| {
            let (checked, writes) = self.sh.check_program_with_writes(&parsed.program, false);
            crate::risk::script_risk(checked, writes, &self.sh.cwd)
        }))
    }
}

fn usage(sh: &mut Shell, what: &str) -> Exec {
    sh.diag(format!("plan: {what}; {USAGE}"));
    sh.set_status(2);
    Ok(())
}

pub(super) fn plan(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut label = args_label(sh, argv);
    let mut file = None;
    let mut json = false;
    let mut given = BTreeMap::new();
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        match a.text.as_str() {
            "--json" => json = true,
            "--param" => {
                let Some(v) = it.next() else {
                    return usage(sh, "--param needs NAME=VALUE");
                };
                match safesh_spec::parse_assignment(&v.text) {
                    Ok((k, v)) => {
                        given.insert(k, v);
                    }
                    Err(m) => return usage(sh, &m),
                }
            }
            t if t.starts_with('-') && t.len() > 1 => {
                return usage(sh, &format!("unknown option {t}"));
            }
            t if file.is_none() => file = Some(t.to_string()),
            _ => return usage(sh, "one FILE only"),
        }
    }
    let Some(file) = file else {
        return usage(sh, "which spec? (e.g. plan project.agsh.yaml)");
    };
    let (text, file_label) = match super::flow::read_source(sh, &file) {
        Ok(read) => read,
        Err(super::flow::SourceError::Refused(r)) => return Err(r.into()),
        Err(super::flow::SourceError::Io(e)) => {
            sh.diag(format!("plan: {file}: {}", safesh_utils::io_error_text(&e)));
            sh.set_status(1);
            return Ok(());
        }
    };
    label = label.join(&file_label);
    let spec = match safesh_spec::parse(&text, &file) {
        Ok(s) => s,
        Err(e) => {
            sh.diag(format!("plan: {e}"));
            sh.set_status(1);
            return Ok(());
        }
    };
    let plan = {
        let oracle = ShellOracle { sh };
        safesh_spec::plan(&spec, &file, &given, &safesh_spec::today_utc(), &oracle)
    };
    let plan = match plan {
        Ok(p) => p,
        Err(e) => {
            sh.diag(format!("plan: {e}"));
            sh.set_status(1);
            return Ok(());
        }
    };
    let text = if json {
        format!("{}\n", serde_json::to_value(&plan).unwrap_or_default())
    } else {
        safesh_spec::render(&plan)
    };
    if !out(sh, &text, &label) {
        sh.set_status(141);
        return Ok(());
    }
    sh.set_status(if plan.refused { 1 } else { 0 });
    Ok(())
}
