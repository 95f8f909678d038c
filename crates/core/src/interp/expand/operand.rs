//! The word of `${x:-word}` and `${x:+word}` outside double quotes: bash expands
//! it in place, as part of the surrounding word, so its quoted parts stay whole
//! (`${u:-"a b" c}` is two fields, `a b` and `c`) and its unquoted text is split
//! on IFS like any expansion result.

use super::{Acc, PV};
use crate::interp::{Shell, Stop};
use safesh_label::Label;
use safesh_syntax::word::ParameterExpr;

impl Shell {
    /// For `${x:-word}` / `${x:+word}` (unquoted, not in a here-document): when
    /// the operator picks its word, expands the word into `acc` and returns
    /// `Some(PV::Unset)` (nothing more to add); when it picks the parameter,
    /// returns its value. `None` for every other expression.
    pub(super) fn expand_operand_in_place(
        &mut self,
        e: &ParameterExpr,
        acc: &mut Acc,
    ) -> Result<Option<(PV, Label)>, Stop> {
        let (parameter, indirect, test_type, word, want_missing) = match e {
            ParameterExpr::UseDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => (parameter, indirect, test_type, default_value, true),
            ParameterExpr::UseAlternativeValue {
                parameter,
                indirect,
                test_type,
                alternative_value,
            } => (parameter, indirect, test_type, alternative_value, false),
            _ => return Ok(None),
        };
        let (pv, label) = self.param_value(parameter, *indirect)?;
        let missing = super::is_missing(&pv, test_type);
        if missing != want_missing {
            // `${x:+word}` of a missing x is empty; `${x:-word}` of a set x is x.
            return Ok(Some(if want_missing {
                (pv, label)
            } else {
                (PV::Unset, Label::empty())
            }));
        }
        let raw = word.as_deref().unwrap_or("");
        let pieces = self.words_cached(raw)?;
        let was = std::mem::replace(&mut acc.operand, true);
        let r = self.expand_pieces(&pieces, acc, false);
        acc.operand = was;
        r?;
        Ok(Some((PV::Unset, Label::empty())))
    }
}
