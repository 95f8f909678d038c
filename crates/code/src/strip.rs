//! TypeScript → JavaScript by type stripping (`swc_ts_fast_strip`, strip-only
//! mode, the one Node's `--experimental-strip-types` uses): every type is
//! replaced by whitespace, so each line and column of the JavaScript is the
//! user's own and engine errors and stack traces point into the user's source.
//! Types are not checked (a type error is not a run error). TypeScript that is
//! not erasable (`enum`, `namespace` with values, parameter properties) is a
//! `PARSE_ERROR` saying so, at its position.

use safesh_core::error::Refusal;
use std::sync::{Arc, Mutex};
use swc_common::errors::{DiagnosticBuilder, Emitter, HANDLER, Handler};
use swc_common::{SourceMap, sync::Lrc};
use swc_ts_fast_strip::{Mode, Options, operate};

/// The first diagnostic: its message and where (byte position).
type First = Arc<Mutex<Option<(String, Option<swc_common::BytePos>)>>>;

struct FirstError(First);

impl Emitter for FirstError {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let Ok(mut first) = self.0.lock() else {
            return;
        };
        if first.is_none() {
            let pos = db.span.primary_span().map(|s| s.lo);
            *first = Some((db.message(), pos));
        }
    }
}

/// The JavaScript of `source` (positions kept), or `PARSE_ERROR` at the first
/// error's line and column.
pub(crate) fn strip_types(source: &str) -> Result<String, Refusal> {
    strip_types_in(source, None)
}

/// [`strip_types`] for the module `file` (its name goes in the error).
pub(crate) fn strip_types_in(source: &str, file: Option<&str>) -> Result<String, Refusal> {
    let cm: Lrc<SourceMap> = Default::default();
    let first: First = Arc::default();
    let handler = Handler::with_emitter(true, false, Box::new(FirstError(first.clone())));
    let options = Options {
        module: Some(true),
        filename: None,
        mode: Mode::StripOnly,
        ..Default::default()
    };
    let result = HANDLER.set(&handler, || {
        operate(&cm, &handler, source.to_string(), options)
    });
    match result {
        Ok(out) => Ok(out.code),
        Err(e) => {
            let found = first.lock().ok().and_then(|mut f| f.take());
            let (message, at) = match found {
                Some((m, Some(pos))) => {
                    let loc = cm.lookup_char_pos(pos);
                    (m, Some((loc.line, loc.col_display + 1)))
                }
                Some((m, None)) => (m, None),
                None => (e.message, None),
            };
            Err(crate::parse_error_in(
                &format!("TypeScript: {message}"),
                file,
                at,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_become_spaces_and_positions_stay() {
        let ts = "let a: number = 1;\nfunction f<T>(x: T): T { return x }\nconsole.log(f(a))\n";
        let js = strip_types(ts).unwrap_or_default();
        assert_eq!(js.lines().count(), 3);
        for (a, b) in ts.lines().zip(js.lines()) {
            assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        }
        assert!(js.starts_with("let a         = 1;"));
    }

    #[test]
    fn a_syntax_error_has_line_and_column() {
        let r = strip_types("let a = 1;\nlet b: = 2;\n").err();
        let loc = r
            .and_then(|r| r.details.location.clone())
            .unwrap_or_default();
        assert!(loc.starts_with("line 2, column "), "{loc}");
    }

    #[test]
    fn enums_are_not_erasable() {
        let r = strip_types("enum E { A }\n").err();
        assert!(r.is_some_and(|r| r.code == safesh_core::error::ErrorCode::ParseError));
    }
}
