//! `echo`, with bash builtin semantics: `-n`, `-e`, `-E` (combinable, e.g. `-ne`),
//! options end at the first argument that is not one.

use crate::esc::{Mode, expand, has_unicode_escape};
use crate::out::Out;
use safesh_utils::word_bytes::word_to_bytes;
use safesh_utils::{UtilCtx, UtilResult};

/// Runs `echo`.
pub fn echo(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let args: Vec<String> = ctx.args().to_vec();
    let mut newline = true;
    let mut escapes = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.bytes().all(|b| matches!(b, b'n' | b'e' | b'E')) {
            break;
        }
        for b in flags.bytes() {
            match b {
                b'n' => newline = false,
                b'e' => escapes = true,
                _ => escapes = false,
            }
        }
        i += 1;
    }
    let utf8 = escapes
        && args
            .iter()
            .skip(i)
            .any(|a| has_unicode_escape(a.as_bytes()))
        && ctx.env.utf8_locale();
    let mut buf = Vec::new();
    for (k, a) in args.iter().skip(i).enumerate() {
        if k > 0 {
            buf.push(b' ');
        }
        if escapes {
            // A word: escaped bytes print as the bytes they stand for.
            if expand(&word_to_bytes(a), Mode::Echo, utf8, &mut buf).stop {
                newline = false;
                break;
            }
        } else {
            buf.extend_from_slice(&word_to_bytes(a));
        }
    }
    if newline {
        buf.push(b'\n');
    }
    let mut out = Out::new(ctx);
    out.write(&buf);
    Ok(out.finish())
}
