//! In-process utilities: line and text filters (cat, head, tail, wc, sort, uniq,
//! cut, tr, paste, tac, rev, nl, fold, expand, unexpand, column, join), faithful to GNU coreutils in the C locale.

use safesh_utils::UtilFn;

mod cat;
mod column;
mod common;
mod cut;
mod expand;
mod fold;
mod head;
mod join;
mod nl;
mod paste;
mod rev;
mod sort;
mod tac;
mod tail;
mod tr;
mod unexpand;
mod uniq;
mod wc;

/// The utilities of this crate, by name (sorted).
pub static UTILS: &[(&str, UtilFn)] = &[
    ("cat", cat::cat),
    ("column", column::column),
    ("cut", cut::cut),
    ("expand", expand::expand),
    ("fold", fold::fold),
    ("head", head::head),
    ("join", join::join),
    ("nl", nl::nl),
    ("paste", paste::paste),
    ("rev", rev::rev),
    ("sort", sort::sort),
    ("tac", tac::tac),
    ("tail", tail::tail),
    ("tr", tr::tr),
    ("unexpand", unexpand::unexpand),
    ("uniq", uniq::uniq),
    ("wc", wc::wc),
];
