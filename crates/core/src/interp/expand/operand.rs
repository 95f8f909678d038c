//! The word of `${x:-word}` and `${x:+word}` outside double quotes: bash expands
//! it in place, as part of the surrounding word, so its quoted parts stay whole
//! (`${u:-"a b" c}` is two fields, `a b` and `c`) and its unquoted text is split
//! on IFS like any expansion result.

use super::{Acc, PV};
use crate::interp::{Shell, Stop};
use safesh_label::Label;
use safesh_syntax::word::ParameterExpr;

/// The operator of `${x:-word}` / `${x:+word}`, or None for another expression.
struct Operand<'e> {
    parameter: &'e safesh_syntax::word::Parameter,
    indirect: bool,
    test_type: &'e safesh_syntax::word::ParameterTestType,
    word: &'e str,
    /// True for `:-`/`-` (the word replaces a missing value), false for `:+`/`+`.
    default: bool,
}

fn operand(e: &ParameterExpr) -> Option<Operand<'_>> {
    match e {
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value,
        } => Some(Operand {
            parameter,
            indirect: *indirect,
            test_type,
            word: default_value.as_deref().unwrap_or(""),
            default: true,
        }),
        ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            test_type,
            alternative_value,
        } => Some(Operand {
            parameter,
            indirect: *indirect,
            test_type,
            word: alternative_value.as_deref().unwrap_or(""),
            default: false,
        }),
        _ => None,
    }
}

impl Shell {
    /// Whether the operator picks its word; otherwise the parameter's value to
    /// use (`${x:+w}` of a missing x: nothing).
    fn pick_operand(&mut self, op: &Operand<'_>) -> Result<Result<(), (PV, Label)>, Stop> {
        let (pv, label) = self.param_value(op.parameter, op.indirect)?;
        let missing = super::is_missing(&pv, op.test_type);
        if missing == op.default {
            return Ok(Ok(()));
        }
        use safesh_syntax::word::{Parameter as P, SpecialParameter as S};
        Ok(Err(if op.default {
            (pv, label)
        } else if matches!(
            op.parameter,
            P::NamedWithAllIndices {
                concatenate: false,
                ..
            } | P::Special(S::AllPositionalParameters { concatenate: false })
        ) {
            // `"${a[@]:+w}"` of an empty array is no word at all, like `"${a[@]}"`.
            (PV::Many(Vec::new(), false), Label::empty())
        } else {
            (PV::Unset, Label::empty())
        }))
    }

    /// Inside double quotes, a word holding `"${a[@]}"` or `"$@"`
    /// (`"${u[@]:-${d[@]}}"`) keeps its elements apart, as bash does; other
    /// quoted words are one string (see `expand_operand`). `None`: not such a
    /// word, expand as usual.
    pub(super) fn expand_quoted_operand_in_place(
        &mut self,
        e: &ParameterExpr,
        acc: &mut Acc,
    ) -> Result<Option<(PV, Label)>, Stop> {
        let Some(op) = operand(e) else {
            return Ok(None);
        };
        if !(op.word.contains("[@]") || op.word.contains("$@") || op.word.contains("${@")) {
            return Ok(None);
        }
        if let Err(value) = self.pick_operand(&op)? {
            return Ok(Some(value));
        }
        // The word as double-quoted text: inner `"…"` become empty quotes
        // around unquoted text, which is still quoted here.
        let pieces = self.words_cached(&format!("\"{}\"", op.word))?;
        for p in pieces.iter() {
            match &p.piece {
                safesh_syntax::WordPiece::DoubleQuotedSequence(inner) => {
                    self.expand_quoted(inner, acc)?
                }
                _ => self.expand_quoted(std::slice::from_ref(p), acc)?,
            }
        }
        Ok(Some((PV::Unset, Label::empty())))
    }

    /// For `${x:-word}` / `${x:+word}` (unquoted, not in a here-document): when
    /// the operator picks its word, expands the word into `acc` and returns
    /// `Some(PV::Unset)` (nothing more to add); when it picks the parameter,
    /// returns its value. `None` for every other expression.
    pub(super) fn expand_operand_in_place(
        &mut self,
        e: &ParameterExpr,
        acc: &mut Acc,
    ) -> Result<Option<(PV, Label)>, Stop> {
        let Some(op) = operand(e) else {
            return Ok(None);
        };
        if let Err(value) = self.pick_operand(&op)? {
            return Ok(Some(value));
        }
        let pieces = self.words_cached(op.word)?;
        let was = std::mem::replace(&mut acc.operand, true);
        let r = self.expand_pieces(&pieces, acc, false);
        acc.operand = was;
        r?;
        Ok(Some((PV::Unset, Label::empty())))
    }
}
