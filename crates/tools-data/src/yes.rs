//! `yes`: repeats its arguments (or `y`) until the reader goes away or the script
//! is cancelled.

use safesh_utils::{UtilCtx, UtilResult};

/// Runs `yes`.
pub fn yes(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let mut args: &[String] = ctx.args();
    if args.first().is_some_and(|a| a == "--") {
        args = &args[1..];
    } else if let Some(a) = args.iter().find(|a| a.len() > 1 && a.starts_with('-')) {
        // GNU yes takes only --help/--version; anything else dash-led is an error.
        let msg = match a.strip_prefix("--") {
            Some(_) => format!("unrecognized option '{a}'"),
            None => format!("invalid option -- '{}'", a.chars().nth(1).unwrap_or('-')),
        };
        ctx.warn(msg);
        ctx.warn("Try 'yes --help' for more information.");
        return Ok(1);
    }
    let mut line = if args.is_empty() {
        "y".to_string()
    } else {
        args.join(" ")
    }
    .into_bytes();
    line.push(b'\n');
    // Fill a buffer with whole copies of the line so each write is large.
    let copies = (16 * 1024 / line.len()).max(1);
    let buf = line.repeat(copies);
    loop {
        if ctx.host.cancelled() {
            return Ok(130);
        }
        if let Err(e) = ctx.stdout.write_all(&buf).and_then(|_| ctx.stdout.flush()) {
            return Ok(ctx.write_failed(&e));
        }
    }
}
