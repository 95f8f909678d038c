//! `sleep`: wait for a sum of time intervals, through the host (cancellable).

use crate::common::usage;
use safesh_utils::{UtilCtx, UtilResult};
use std::time::Duration;

/// Parses one interval (`1.5`, `2m`, `1e1`, `inf`) into seconds.
fn interval(s: &str) -> Option<f64> {
    let (num, mult) = match s.as_bytes().last() {
        Some(b's') => (&s[..s.len() - 1], 1.0),
        Some(b'm') => (&s[..s.len() - 1], 60.0),
        Some(b'h') => (&s[..s.len() - 1], 3600.0),
        Some(b'd') => (&s[..s.len() - 1], 86400.0),
        _ => (s, 1.0),
    };
    if num.is_empty() || num.starts_with('+') && num.len() == 1 {
        return None;
    }
    let ok_chars = num
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'));
    let v: f64 = if ok_chars {
        num.parse().ok()?
    } else if num.eq_ignore_ascii_case("inf") || num.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else {
        return None;
    };
    if v.is_nan() || v < 0.0 {
        return None;
    }
    Some(v * mult)
}

/// Runs `sleep`.
pub fn sleep(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let args: Vec<String> = ctx.args().to_vec();
    let mut operands = Vec::new();
    let mut only_operands = false;
    for a in &args {
        if !only_operands && a == "--" {
            only_operands = true;
        } else if !only_operands && a.starts_with('-') && a.len() > 1 && interval(a).is_none() {
            let msg = if a.starts_with("--") {
                format!("unrecognized option '{a}'")
            } else {
                format!("invalid option -- '{}'", a.chars().nth(1).unwrap_or('-'))
            };
            return Ok(usage(ctx, &msg, 1));
        } else {
            operands.push(a.clone());
        }
    }
    if operands.is_empty() {
        return Ok(usage(ctx, "missing operand", 1));
    }
    let mut total = 0.0f64;
    let mut bad = false;
    for a in &operands {
        match interval(a) {
            Some(v) => total += v,
            None => {
                ctx.warn(format_args!("invalid time interval '{a}'"));
                bad = true;
            }
        }
    }
    if bad {
        let name = ctx.name().to_string();
        let _ = writeln_err(ctx, &name);
        return Ok(1);
    }
    // Cap at about a century: Duration cannot hold infinity.
    let secs = total.min(3.15e9);
    ctx.host.sleep(Duration::from_secs_f64(secs))?;
    Ok(0)
}

fn writeln_err(ctx: &mut UtilCtx<'_>, name: &str) -> std::io::Result<()> {
    writeln!(ctx.stderr, "Try '{name} --help' for more information.")
}
