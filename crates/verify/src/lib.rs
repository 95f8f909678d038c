//! Verified execution (agsh's third pillar): assertions on what a step produced.
//!
//! An [`Assertion`] is `{type, target, expected (alias value), message}`. Before
//! anything runs, [`validate`] turns assertions into checked ones (unknown type,
//! bad target, bad regex, bad schema → an [`InvalidAssertion`] naming the index
//! and the field). [`verify`] / [`verify_with`] evaluate them over a [`View`]: the
//! caller's redacted view of the step — exactly what the model sees — so an
//! assertion can never become an oracle on a secret, and each result's `actual`
//! is capped and redacted again by the view.
//!
//! The short text form of the `verify` builtin (`not_empty 'contains:.rs'
//! 'count_gte:3'`) is parsed by [`parse_short`].
//!
//! `llm_judge` asks a [`Judge`] (for the real thing, [`LlmJudge`] over
//! `safesh-llm`); with none configured the result is `unavailable`: a failure,
//! or with `llm_judge_required = false` a warning left out of `passed` — never a
//! silent pass.

mod assertion;
mod engine;
mod judge;
mod short;
mod target;
mod view;

pub use assertion::{Assertion, Checked, InvalidAssertion, Kind, validate};
pub use engine::{AssertionResult, Options, Verification, verify, verify_checked, verify_with};
pub use judge::{Judge, JudgeOutcome, LlmJudge};
pub use short::{ShortFormError, parse_short};
pub use target::Target;
pub use view::{FileRead, TextView, View};
