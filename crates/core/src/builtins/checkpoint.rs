//! `checkpoint save [NAME] | restore NAME | list | diff A [B] | delete NAME`
//! (each with `--json`): checkpoints of the write roots ([`crate::checkpoints`]).

use super::{args_label, out};
use crate::checkpoints::{CheckpointFailure, CheckpointOp};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell, Stop};
use serde_json::Value;

const USAGE: &str =
    "usage: checkpoint save [NAME] | restore NAME | list | diff A [B] | delete NAME  [--json]";

pub(super) fn checkpoint(sh: &mut Shell, argv: &[Field]) -> Exec {
    let json = argv.iter().any(|f| f.text == "--json");
    let words: Vec<&Field> = argv[1..].iter().filter(|f| f.text != "--json").collect();
    let text = |i: usize| words.get(i).map(|f| f.text.clone());
    let op = match (text(0).as_deref(), words.len()) {
        (Some("save"), 1) => Some(CheckpointOp::Save(None)),
        (Some("save"), 2) => Some(CheckpointOp::Save(text(1))),
        (Some("restore"), 2) => text(1).map(CheckpointOp::Restore),
        (Some("list"), 1) => Some(CheckpointOp::List),
        (Some("diff"), 2 | 3) => text(1).map(|a| CheckpointOp::Diff(a, text(2))),
        (Some("delete"), 2) => text(1).map(CheckpointOp::Delete),
        _ => None,
    };
    let Some(op) = op else {
        sh.diag(format!("checkpoint: {USAGE}"));
        sh.set_status(2);
        return Ok(());
    };
    let label = args_label(sh, argv);
    let result = match sh.checkpoint_op(&op, &label) {
        Ok(v) => v,
        Err(CheckpointFailure::Invalid(m)) => {
            sh.diag(format!("checkpoint: {m}"));
            sh.set_status(1);
            return Ok(());
        }
        Err(CheckpointFailure::Refused(r)) => return Err(Stop::Refused(r)),
    };
    // Paths are names: a listing carries every name label (a removed file's
    // name can no longer be looked up by its entry).
    let label = match (&op, sh.names()) {
        (CheckpointOp::Diff(..) | CheckpointOp::Restore(_), Some(names)) => {
            names.values().fold(label, |l, n| l.join(n))
        }
        _ => label,
    };
    let shown = if json {
        format!("{result}\n")
    } else {
        human(&op, &result, &sh.cwd)
    };
    out(sh, &shown, &label);
    sh.set_status(0);
    Ok(())
}

fn human(op: &CheckpointOp, v: &Value, cwd: &std::path::Path) -> String {
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    let rel = |p: &Value| {
        let p = std::path::Path::new(p.as_str().unwrap_or_default());
        p.strip_prefix(cwd).unwrap_or(p).display().to_string()
    };
    let paths = |k: &str| v[k].as_array().cloned().unwrap_or_default();
    match op {
        CheckpointOp::Save(_) => format!(
            "saved checkpoint {}: {} files, {} bytes ({} read, the rest unchanged){}\n",
            v["name"].as_str().unwrap_or_default(),
            n("files"),
            n("bytes"),
            n("files_read"),
            if v["replaced"] == Value::Bool(true) {
                "; replaced the one of that name"
            } else {
                ""
            }
        ),
        CheckpointOp::Restore(name) => {
            let mut s = format!(
                "restored checkpoint {name}: {} written, {} removed, {} unchanged\n",
                paths("written").len(),
                paths("removed").len(),
                n("unchanged")
            );
            for p in paths("written") {
                s.push_str(&format!("W {}\n", rel(&p)));
            }
            for p in paths("removed") {
                s.push_str(&format!("D {}\n", rel(&p)));
            }
            s
        }
        CheckpointOp::List => {
            let mut s = String::new();
            for c in v.as_array().into_iter().flatten() {
                s.push_str(&format!(
                    "{}\t{}\t{} files\t{} bytes\n",
                    c["name"].as_str().unwrap_or_default(),
                    utc(c["created_unix_ms"].as_u64().unwrap_or(0)),
                    c["files"].as_u64().unwrap_or(0),
                    c["bytes"].as_u64().unwrap_or(0)
                ));
            }
            s
        }
        CheckpointOp::Diff(..) => {
            let mut s = String::new();
            for (k, tag) in [("added", "A"), ("removed", "D"), ("modified", "M")] {
                for p in paths(k) {
                    s.push_str(&format!("{tag} {}\n", rel(&p)));
                }
            }
            s
        }
        CheckpointOp::Delete(name) => format!("deleted checkpoint {name}\n"),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for ms since the epoch (civil-from-days).
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_like_date() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(1_795_620_684_863), "2026-11-25T15:31:24Z");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
