//! The sandbox test suite: benign programs, the escape suite, timings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod benign;
mod common;
mod escape;
mod reads;
mod timing;
